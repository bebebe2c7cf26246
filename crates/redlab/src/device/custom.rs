//! Custom combines (an expression in `a` and `b`) along axes and over segments on a
//! [`Device`]: every output folded in the canonical order of its own mapped values, so
//! its bits are those of the whole-array reduction of those elements alone, on every
//! backend. OpenCL and CUDA devices compile map and combine into the segment kernels
//! where the map does not read `i` ([`redlab_kernels::mapped::custom_on_device`]); the
//! CPU, groups of devices and maps that read `i` fold on the host
//! ([`redlab_expr::custom_outputs`]).

use std::time::Instant;

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Value};
use redlab_expr::Reduction;

use super::{Device, Kind};
use crate::Error;

impl Device {
    /// [`Device::reduce_mapped_outputs_timed`] for a custom combine: one value per
    /// output before `post`, with the seconds of each kernel launch (one host span where
    /// the host folds).
    pub(super) fn custom_outputs_timed(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        if self.maps_outputs_on_device(reduction) {
            let computed = match &self.kind {
                #[cfg(feature = "opencl")]
                Kind::OpenCl(device) => {
                    Some(device.compute_mapped_outputs(reduction, inputs, selection)?)
                }
                #[cfg(feature = "cuda")]
                Kind::Cuda(device) => {
                    Some(device.compute_mapped_outputs(reduction, inputs, selection)?)
                }
                _ => None,
            };
            if let Some((values, passes)) = computed {
                return Ok((
                    empty_outputs_hold_identity(reduction, selection, values),
                    passes,
                ));
            }
        }
        let start = Instant::now();
        let values = match &self.kind {
            Kind::Cpu(cpu) => cpu.custom_outputs(reduction, inputs, selection)?,
            _ => redlab_expr::custom_outputs::custom_outputs(reduction, inputs, selection)?,
        };
        Ok((values, vec![start.elapsed().as_secs_f64()]))
    }

    /// How [`Device::custom_outputs_timed`] runs `selection` of `reduction` here.
    pub(super) fn explain_custom_outputs(
        &self,
        reduction: &Reduction,
        selection: Selection<'_>,
    ) -> String {
        #[cfg(any(feature = "opencl", feature = "cuda"))]
        if self.maps_outputs_on_device(reduction) {
            let plan = redlab_kernels::mapped::custom_problem(reduction).map(|problem| {
                redlab_kernels::segments::SegmentJob::new(selection).map(|job| {
                    job.for_device(self.max_work_group())
                        .for_custom(
                            &problem,
                            redlab_kernels::mapped::custom_loads_words(reduction),
                        )
                        .explain()
                        .to_string()
                })
            });
            return match plan {
                Ok(Some(plan)) => format!(
                    "map and combine compiled into the segment kernels, each element mapped \
                     as it is read and every lane started from the identity; {plan}"
                ),
                Ok(None) => "the outputs' elements do not step evenly through the buffer: \
                             gathered into rows on the host, then mapped and combined as \
                             segments"
                    .into(),
                Err(e) => e,
            };
        }
        let _ = selection;
        let why = if redlab_expr::codegen::uses_index(&reduction.map) {
            " (the map reads `i`)"
        } else {
            ""
        };
        format!(
            "every element mapped on the host{why}, then each output folded there in the \
             canonical order (lanes started from the identity, the halving fold, the tile tree)"
        )
    }
}

/// The device's values with each empty output's replaced by the combine's identity, the
/// value over nothing (the kernels leave the stand-in sum's there).
pub(super) fn empty_outputs_hold_identity(
    reduction: &Reduction,
    selection: Selection<'_>,
    mut values: Vec<Value>,
) -> Vec<Value> {
    let Some((_, identity, acc)) = reduction.custom() else {
        return values;
    };
    let nothing = Value::Scalar(redlab_expr::eval::to_scalar(identity, acc.dtype()));
    for (k, value) in values.iter_mut().enumerate() {
        let empty = match selection {
            Selection::Axes(plan) => plan.segment_len() == 0,
            Selection::Ranges(ranges) => ranges[k].is_empty(),
        };
        if empty {
            *value = nothing;
        }
    }
    values
}
