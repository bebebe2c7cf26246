//! Statistics of CUDA tensors (mean, the norms, nansum, any/all, count_nonzero) enqueued
//! on the caller's stream: the segment kernels read the tensor in place, map each
//! element as they load it and store every output's result after `post` into an array
//! the caller allocated, with no wait and nothing read back
//! ([`redlab_cuda::CudaDevice::enqueue_mapped_outputs`]). Whole contiguous arrays take
//! one launch of the production kernel instead, which applies `post` itself
//! ([`redlab_cuda::CudaDevice::enqueue_mapped_whole`]; same bits).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use redlab::DType;
use redlab_cuda::StreamMapped;

use crate::devices;
use crate::errors;
use crate::host::HostView;
use crate::reduce::enqueue_job;
use crate::what::{dtype, What};

/// Entries the table of prepared statistics keeps at most.
const PREPARED_KEYS: usize = 1024;

/// Statistics prepared for the stream path, by name and input type.
type Prepared = Mutex<HashMap<(String, DType), Option<Arc<StreamMapped>>>>;

/// Statistic `name` over `input` prepared for the stream path (parsed, checked, its
/// result type and kernels' key worked out) once, as a call must cost microseconds.
/// `None` where its results need the host.
fn statistic(name: &str, input: DType) -> PyResult<Option<Arc<StreamMapped>>> {
    static PREPARED: OnceLock<Prepared> = OnceLock::new();
    let table = PREPARED.get_or_init(Default::default);
    let key = (name.to_string(), input);
    if let Some(prepared) = table.lock().ok().and_then(|t| t.get(&key).cloned()) {
        return Ok(prepared);
    }
    let prepared = StreamMapped::new(&*What::statistic(name, input)?).map(Arc::new);
    if let Ok(mut t) = table.lock() {
        // User-defined reductions come under keys of their own: a program that builds
        // them as it goes empties the table now and then rather than growing it without
        // end (a later call of a dropped key prepares it again).
        if t.len() >= PREPARED_KEYS {
            t.clear();
        }
        t.insert(key, prepared.clone());
    }
    Ok(prepared)
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
    let prepared = statistic(name, dtype(element)?)?;
    let device = devices::cuda(ordinal)?;
    Ok(prepared
        .filter(|_| device.cuda().is_some())
        .map(|p| p.dtype().name()))
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
    let view = HostView::from_element_strides(address as usize, dtype(element)?, dims, &strides)?;
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

/// Enqueues statistic `name` over the whole contiguous CUDA tensor of `n` elements at
/// device address `address` on the caller's `stream`, into the one result at `result`
/// ([`enqueue_stat_dtype`]'s type, `result_bytes` bytes): one launch of the production
/// kernel, which applies `post` itself. `false` where that does not apply (the caller
/// then takes [`enqueue_stat_pointer`]). The fast path for whole torch tensors: no
/// shape or strides to convert.
#[pyfunction]
#[pyo3(signature = (name, element, address, n, ordinal, stream, result, result_bytes))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn enqueue_stat_whole(
    py: Python<'_>,
    name: &str,
    element: &str,
    address: u64,
    n: usize,
    ordinal: usize,
    stream: u64,
    result: u64,
    result_bytes: usize,
) -> PyResult<bool> {
    let Some(prepared) = statistic(name, dtype(element)?)? else {
        return Ok(false);
    };
    let device = devices::cuda(ordinal)?;
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    // SAFETY: the caller passes a live contiguous tensor of this device with `n`
    // elements, a result tensor of `result_bytes` bytes, and its current stream.
    let whole = py.allow_threads(|| unsafe {
        cuda.enqueue_mapped_whole(&prepared, address, n, stream, (result, result_bytes))
    });
    enqueued(whole)
}

/// Whether an enqueue happened: `false` where it was skipped (another path applies).
pub fn enqueued(outcome: Result<(), redlab_kernels::RunError>) -> PyResult<bool> {
    match outcome {
        Ok(()) => Ok(true),
        Err(redlab_kernels::RunError::Skipped(_)) => Ok(false),
        Err(e) => Err(errors::device(e)),
    }
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
    let Some(prepared) = statistic(name, view.dtype)? else {
        return Ok(false);
    };
    if axes.is_none() && view.flat {
        // SAFETY: as below; a flat view's elements are the `count` from its start.
        let whole = unsafe {
            cuda.enqueue_mapped_whole(
                &prepared,
                view.start() as u64,
                view.count(),
                stream,
                (result, result_bytes),
            )
        };
        if enqueued(whole)? {
            return Ok(true);
        }
    }
    let plan_job = |job: redlab_kernels::segments::SegmentJob| {
        job.for_mapped(prepared.problem(), prepared.reads_words())
    };
    enqueue_job(cuda, view, (axes, keepdims), plan_job, |start, job| {
        // SAFETY: the tensor lives on this device and the caller keeps it and `result`
        // (sized for the plan's outputs, checked) alive; `stream` is the caller's
        // stream of that device.
        unsafe { cuda.enqueue_mapped_outputs(&prepared, start, job, stream, result, result_bytes) }
    })
}
