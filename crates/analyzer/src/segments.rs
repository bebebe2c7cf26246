//! The many-output kernels (`segments.cl`: axis and segmented reductions) in the
//! simulator, through the same job description and launches as the GPU backends
//! ([`redlab_kernels::segments`]): each launch is analyzed like any pass, and the values
//! come back for checking against the reference. User-defined maps run compiled into the
//! same kernels, as the devices run them (several inputs packed into one buffer).

use std::rc::Rc;

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Problem, Value};
use redlab_expr::Reduction;
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::mapped_segments::prepare_mapped;
use redlab_kernels::segments::{run_segments, SegmentJob, SegmentKernels, ENTRY_POINTS};

use crate::variant::{Pass, SimKernel, SimLauncher, VariantOptions};
use crate::{compile, project_headers, AnalyzeError};

/// What one analyzed run of the segment kernels gives.
#[derive(Debug, Clone)]
pub struct SegmentsRun {
    /// Which kernel the job chose, and why.
    pub strategy: String,
    /// One value per output.
    pub values: Vec<Value>,
    /// Every launch, analyzed.
    pub passes: Vec<Pass>,
}

/// Runs the outputs of `selection` over `data` in the simulator. `None` when the outputs
/// do not step evenly (the backends gather those into rows on the host first).
pub fn run(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    opts: &VariantOptions,
) -> Result<Option<SegmentsRun>, AnalyzeError> {
    let Some(job) = SegmentJob::new(selection).map(|j| j.for_problem(problem)) else {
        return Ok(None);
    };
    let text = assembly::assemble_segments(problem, &[], Target::OpenCl)
        .map_err(AnalyzeError::Usage)?
        .source;
    launch(
        &format!("segments ({problem})"),
        &text,
        problem,
        data,
        &job,
        opts,
    )
    .map(Some)
}

/// [`run`] for a user-defined reduction: the segment kernels with the map compiled in,
/// the text, plan and input bytes the OpenCL and CUDA backends use
/// ([`redlab_kernels::mapped_segments::prepare_mapped`]: one input raw, several packed).
/// The values are the mapped problem's, before any `post` (which the axis paths do not
/// take). `None` when the outputs do not step evenly (the backends gather those first).
pub fn run_mapped(
    reduction: &Reduction,
    inputs: &[ArrayRef<'_>],
    selection: Selection<'_>,
    opts: &VariantOptions,
) -> Result<Option<SegmentsRun>, AnalyzeError> {
    if SegmentJob::new(selection).is_none() {
        return Ok(None);
    }
    let device = (MAX_WORK_GROUP, Target::OpenCl);
    let launched = prepare_mapped(
        reduction,
        inputs,
        selection,
        device,
        |problem, assembled, job, rows| {
            let name = format!("segments ({problem} of {})", reduction.describe());
            Ok(launch(&name, &assembled.source, problem, rows, job, opts))
        },
    )
    .map_err(|e| AnalyzeError::Usage(e.to_string()))?;
    launched.map(Some)
}

/// The work-group limit the mapped jobs are planned for: that of the GPUs measured, and
/// the largest group the kernels ask for.
pub(crate) const MAX_WORK_GROUP: usize = 1024;

/// Compiles `text` and runs `job`'s launches over `data`, each analyzed.
fn launch(
    name: &str,
    text: &str,
    problem: &Problem,
    data: ArrayRef<'_>,
    job: &SegmentJob,
    opts: &VariantOptions,
) -> Result<SegmentsRun, AnalyzeError> {
    let usage = AnalyzeError::Usage;
    let compiled = Rc::new(compile(name, text, &opts.defines, &project_headers)?);
    let launcher = SimLauncher::new(opts.config.clone());
    let bytes = data.bytes();
    let input = launcher.upload(bytes, 16)?;
    let kernel = |name: &'static str| SimKernel {
        compiled: compiled.clone(),
        name,
    };
    let (short_rows, short_rows_wide, row_tiles, column_tiles, tree) = (
        kernel(ENTRY_POINTS[0]),
        kernel(ENTRY_POINTS[1]),
        kernel(ENTRY_POINTS[2]),
        kernel(ENTRY_POINTS[3]),
        kernel(ENTRY_POINTS[4]),
    );
    let (column_words, column_finish) = (kernel(ENTRY_POINTS[5]), kernel(ENTRY_POINTS[6]));
    let (word_rows, row_whole) = (kernel(ENTRY_POINTS[7]), kernel(ENTRY_POINTS[8]));
    let kernels = SegmentKernels {
        short_rows: &short_rows,
        short_rows_wide: &short_rows_wide,
        row_tiles: &row_tiles,
        column_tiles: &column_tiles,
        tree: &tree,
        column_words: &column_words,
        column_finish: &column_finish,
        word_rows: &word_rows,
        row_whole: &row_whole,
    };
    let result = run_segments(&launcher, &kernels, problem, &input, job);
    if let Some(e) = launcher.failure.borrow_mut().take() {
        return Err(e);
    }
    let (values, _) = result.map_err(|e| usage(format!("segments: {e}")))?;
    Ok(SegmentsRun {
        strategy: job.explain().to_string(),
        values,
        passes: launcher.passes.into_inner(),
    })
}
