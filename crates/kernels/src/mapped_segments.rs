//! User-defined reductions along axes and over segments on a device, from host inputs:
//! the program, the job and the bytes to upload, for one input or several. One input is
//! read raw (its words where the map reads words, [`mapped::segments`]); several are
//! packed into one buffer as the production kernel reads them ([`mapped::pack`],
//! [`mapped::segments_packed`]), each gathered into rows first where the outputs'
//! elements do not step evenly. Either way every output reduces its mapped values in
//! its own canonical order, as the host does after mapping every element. A custom
//! combine takes the same kernels with the combine compiled in, planned for the canonical
//! order ([`SegmentJob::for_custom`]).

use redlab_core::segmented::{gather_rows, Selection};
use redlab_core::{ArrayRef, DType, Error, Problem};
use redlab_expr::{host, Reduction};

use crate::assembly::{Assembled, Target};
use crate::mapped;
use crate::segments::{prepare, Reading, SegmentJob};

/// Runs `run` with the problem over mapped values, the program, the job and the input to
/// upload for the outputs of `selection` of `reduction` over `inputs`, on a device of
/// `target` whose work-groups hold at most `max_work_group` work-items.
pub fn prepare_mapped<T>(
    reduction: &Reduction,
    inputs: &[ArrayRef<'_>],
    selection: Selection<'_>,
    (max_work_group, target): (usize, Target),
    run: impl FnOnce(&Problem, &Assembled, &SegmentJob, ArrayRef<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    if let [data] = inputs {
        mapped::check_raw_input(reduction, data).map_err(Error::Shape)?;
        let (problem, assembled) = mapped::segments(reduction, target).map_err(Error::Shape)?;
        let reading = Reading {
            max_work_group,
            words: mapped::loads_words(reduction) || mapped::custom_loads_words(reduction),
            custom: mapped::custom_on_device(reduction),
        };
        return prepare(&problem, *data, selection, reading, |job, rows| {
            run(&problem, &assembled, job, rows)
        });
    }
    host::check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
    // Where the outputs step evenly, every input is read where it lies; else each is
    // gathered into the same rows (the inputs share one shape, so one set of ranges).
    let (job, gathered) = match SegmentJob::new(selection) {
        Some(job) => (job, None),
        None => {
            let mut ranges = Vec::new();
            let mut rows = Vec::with_capacity(inputs.len());
            for input in inputs {
                let (bytes, these) = gather_rows(*input, selection)?;
                ranges = these;
                rows.push((input.dtype(), bytes));
            }
            let job = SegmentJob::new(Selection::Ranges(&ranges))
                .ok_or_else(|| Error::Shape("gathered rows do not touch".into()))?;
            (job, Some(rows))
        }
    };
    let gathered_views = gathered
        .as_ref()
        .map(|rows| {
            rows.iter()
                .map(|(dtype, bytes)| ArrayRef::from_bytes(*dtype, bytes))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let read = gathered_views.as_deref().unwrap_or(inputs);
    let (problem, assembled) = mapped::segments_packed(reduction, target).map_err(Error::Shape)?;
    let job = job.for_device(max_work_group);
    let job = if mapped::custom_on_device(reduction) {
        job.for_custom(&problem, mapped::custom_loads_words(reduction))
    } else {
        job.for_mapped(&problem, mapped::loads_words(reduction))
    };
    let packed = mapped::pack_for_segments(reduction, read);
    run(
        &problem,
        &assembled,
        &job,
        ArrayRef::from_bytes(DType::U8, &packed)?,
    )
}
