//! Statistics of CUDA tensors (mean, the norms, nansum, any/all, count_nonzero) enqueued
//! on the caller's stream: the segment kernels read the tensor in place, map each
//! element as they load it and store every output's result after `post` into an array
//! the caller allocated, with no wait and nothing read back
//! ([`redlab_cuda::CudaDevice::enqueue_mapped_outputs`]). Whole arrays are one output.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use redlab::segmented::Selection;
use redlab::shape::AxisPlan;
use redlab::{DType, Reduction};
use redlab_kernels::segments::SegmentJob;

use crate::devices;
use crate::errors;
use crate::host::HostView;
use crate::what::{dtype, What};

/// Built statistics by name and input type.
type Built = Mutex<HashMap<(String, DType), Arc<Reduction>>>;

/// Statistics' reductions by name and input type: built (parsed and checked) once, as a
/// call must cost microseconds.
fn statistic(name: &str, input: DType) -> PyResult<Arc<Reduction>> {
    static BUILT: OnceLock<Built> = OnceLock::new();
    let table = BUILT.get_or_init(Default::default);
    let key = (name.to_string(), input);
    if let Some(r) = table.lock().ok().and_then(|t| t.get(&key).cloned()) {
        return Ok(r);
    }
    let reduction = Arc::new(What::statistic(name, input)?);
    if let Ok(mut t) = table.lock() {
        t.insert(key, reduction.clone());
    }
    Ok(reduction)
}

/// When statistic `name` of a CUDA tensor of `element` can be enqueued on the caller's
/// stream: the element type of the result array to allocate (one element per output).
/// `None` otherwise (the waiting path then runs).
#[pyfunction]
#[pyo3(signature = (name, element, ordinal))]
pub fn enqueue_stat_dtype(
    name: &str,
    element: &str,
    ordinal: usize,
) -> PyResult<Option<&'static str>> {
    let reduction = statistic(name, dtype(element)?)?;
    let device = devices::cuda(ordinal)?;
    Ok(device
        .cuda()
        .and_then(|cuda| cuda.enqueue_mapped_output_type(&reduction))
        .map(|d| d.name()))
}

/// Enqueues statistic `name` along `axes` (`None`: all) of the CUDA tensor at device
/// address `address` (dims and element strides as the framework reports them) on the
/// caller's `stream`, into the `result_bytes` bytes at `result` ([`enqueue_stat_dtype`]'s
/// type, one element per output). `false` where the shape does not qualify: the caller
/// then takes the DLPack path. The fast path for torch tensors.
#[pyfunction]
#[pyo3(signature = (name, element, address, dims, strides, axes, keepdims, ordinal, stream, result, result_bytes))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn enqueue_stat_pointer(
    py: Python<'_>,
    name: &str,
    element: &str,
    address: u64,
    dims: Vec<usize>,
    strides: Vec<isize>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    ordinal: usize,
    stream: u64,
    result: u64,
    result_bytes: usize,
) -> PyResult<bool> {
    let element = dtype(element)?;
    let size = element.size_bytes() as isize;
    let byte_strides = strides.iter().map(|s| s * size).collect();
    let view = HostView::new(address as usize, element, dims, Some(byte_strides))?;
    let device = devices::cuda(ordinal)?;
    py.allow_threads(|| {
        enqueue_stat(
            &device,
            name,
            &view,
            axes.as_deref(),
            keepdims,
            stream,
            (result, result_bytes),
        )
    })
}

/// Enqueues statistic `name` along `axes` of the CUDA tensor `view` on `stream` into the
/// caller's result array. `false` where the statistic or shape does not qualify
/// (results that need the host, outputs that do not step evenly or have no elements).
pub fn enqueue_stat(
    device: &redlab::Device,
    name: &str,
    view: &HostView,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: u64,
    (result, result_bytes): (u64, usize),
) -> PyResult<bool> {
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    let reduction = statistic(name, view.dtype)?;
    let Some(problem) = reduction.problem() else {
        return Ok(false);
    };
    let plan =
        AxisPlan::new(view.layout.clone(), axes, keepdims).map_err(|e| errors::from_core(&e))?;
    let Some(job) = SegmentJob::new(Selection::Axes(&plan)) else {
        return Ok(false);
    };
    let job = job
        .for_device(cuda.capabilities().max_work_group)
        .for_mapped(problem);
    let start = view.start() as u64;
    // SAFETY: the tensor lives on this device and the caller keeps it and `result`
    // (sized for the plan's outputs, checked) alive; `stream` is the caller's stream of
    // that device.
    match unsafe {
        cuda.enqueue_mapped_outputs(&reduction, start, &job, stream, result, result_bytes)
    } {
        Ok(()) => Ok(true),
        Err(redlab_kernels::RunError::Skipped(_)) => Ok(false),
        Err(e) => Err(errors::device(e)),
    }
}
