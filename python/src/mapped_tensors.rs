//! User-defined reductions over CUDA tensors read where they lie (DLPack capsules, one
//! per input the map names): one input is its own packed buffer; several are read
//! through a table of their addresses ([`redlab_cuda::CudaDevice::address_inputs`]), so
//! a dot product of two torch tensors copies neither. Inputs the kernels cannot read in
//! place (host tensors, starts off a 16-byte boundary, differing layouts, a map over
//! `i` along axes) get `None`, and the Python side copies them to the host as before.
//!
//! Whole contiguous tensors take the stream path first ([`enqueue_tensors_whole`]): one
//! launch on the caller's stream that stores the result in a tensor the caller made,
//! with nothing waited for, as `redlab.sum` does for one tensor. Along axes, the segment
//! kernels store every output in the caller's tensor the same way
//! ([`enqueue_tensors_axes`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use redlab::segmented::Selection;
use redlab::DType;
use redlab_cuda::StreamMapped;
use redlab_kernels::mapped::{loads_words, maps_inputs_on_device};
use redlab_kernels::mapped_addressed::ADDRESS_ALIGN;
use redlab_kernels::segments::SegmentJob;

use crate::devices;
use crate::dlpack::{self, Place};
use crate::errors;
use crate::host::HostView;
use crate::reduce::{axis_plan, shaped, to_python, whole, Computed};

/// A user-defined reduction (`map`, `combine`, optional `identity`, `post`, `acc`) over
/// the CUDA tensors of `capsules`, along `axes` (`None`: all), after the caller's
/// `stream`. `None` where the tensors cannot be read in place.
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc, capsules, axes, keepdims, stream))]
#[allow(clippy::too_many_arguments)]
pub fn reduce_mapped_dlpack(
    py: Python<'_>,
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    capsules: Vec<Bound<'_, PyAny>>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    stream: u64,
) -> PyResult<Option<PyObject>> {
    let mut views = Vec::with_capacity(capsules.len());
    let mut ordinal = None;
    for (k, capsule) in capsules.iter().enumerate() {
        let tensor = dlpack::read(capsule)?;
        let Place::Cuda(this) = tensor.place else {
            return Ok(None);
        };
        if ordinal.is_some_and(|o| o != this) {
            return Err(PyValueError::new_err(format!(
                "input {k} is on cuda:{this}, input 0 on cuda:{}",
                ordinal.unwrap_or(0)
            )));
        }
        ordinal = Some(this);
        views.push(HostView::new(
            tensor.address as usize,
            tensor.dtype,
            tensor.dims,
            tensor.byte_strides,
        )?);
    }
    let (Some(ordinal), Some(first)) = (ordinal, views.first()) else {
        return Ok(None);
    };
    let reduction = crate::what::reduction_over_views(map, combine, identity, post, acc, &views)?;
    // Every input read with the same element offsets from a 16-byte boundary.
    let in_place = first.count() > 0
        && views.iter().all(|v| {
            v.start() as u64 % ADDRESS_ALIGN == 0
                && v.layout.strides == first.layout.strides
                && v.layout.offset == first.layout.offset
        });
    if !in_place {
        return Ok(None);
    }
    let device = devices::device(&format!("cuda:{ordinal}"))?;
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    let all = whole(&axes, keepdims);
    let computed = py.allow_threads(|| -> PyResult<Option<Computed>> {
        // SAFETY: the caller's stream on this device.
        unsafe { cuda.synchronize_stream(stream) }.map_err(errors::device)?;
        let n = first.count();
        let inputs: Vec<(u64, DType)> = views.iter().map(|v| (v.start() as u64, v.dtype)).collect();
        if all && first.flat {
            let outcome = if let [(address, dtype)] = inputs[..] {
                // One input is its own packed buffer.
                // SAFETY: the tensor's n elements lie at `address` on this device, and
                // the caller holds it for the call.
                let mut input =
                    unsafe { cuda.device_resident(address, n, dtype) }.map_err(errors::device)?;
                input.dtype = DType::U8;
                cuda.run_mapped(&reduction, &input)
            } else {
                // SAFETY: as above, for each input.
                let table = unsafe { cuda.address_inputs(&reduction, &inputs, n) }
                    .map_err(|e| errors::from_core(&e))?;
                cuda.run_mapped_addressed(&reduction, &table)
            };
            let outcome = outcome.map_err(|e| errors::from_core(&e))?;
            return Ok(Some(Computed::Scalar(outcome.value)));
        }
        // Along axes: several inputs through the segment kernels, where the outputs
        // step evenly through the tensors (one input takes the statistics' path).
        let Some(problem) = reduction.problem() else {
            return Ok(None);
        };
        if inputs.len() < 2 || !maps_inputs_on_device(&reduction) {
            return Ok(None);
        }
        let plan = axis_plan(first, axes.as_deref(), keepdims)?;
        let Some(job) = SegmentJob::new(Selection::Axes(&plan)) else {
            return Ok(None);
        };
        let job = job
            .for_device(cuda.capabilities().max_work_group)
            .for_mapped(problem, loads_words(&reduction));
        // SAFETY: the tensors' spans lie at their addresses, held for the call.
        let table = unsafe { cuda.address_inputs(&reduction, &inputs, first.span()) }
            .map_err(|e| errors::from_core(&e))?;
        let (values, _) = cuda
            .mapped_segment_results_addressed(&reduction, &table, &job)
            .and_then(|r| r.values())
            .map_err(errors::device)?;
        let n = plan.segment_len();
        let values = values.into_iter().map(|v| reduction.finish(v, n)).collect();
        Ok(Some(shaped(values, &plan, all, "f64")))
    })?;
    computed.map(|c| to_python(py, c, "reduce")).transpose()
}

/// Reductions prepared for the stream path, by their fields and input types.
type Prepared = Mutex<HashMap<(String, Vec<DType>), Option<Arc<StreamMapped>>>>;

/// Prepared reductions kept before the table starts over.
const PREPARED_KEYS: usize = 256;

/// The fields of a user-defined reduction, as [`crate::what::build_reduction`] takes them.
type Fields<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

/// The reduction of `fields` over inputs of `types`, prepared for
/// [`redlab_cuda::CudaDevice::enqueue_addressed_whole`] once (parsed, its result type and
/// kernel key worked out), as a call must cost microseconds. `None` where the result
/// needs the host.
fn prepared(fields: Fields<'_>, types: &[DType]) -> PyResult<Option<Arc<StreamMapped>>> {
    static PREPARED: OnceLock<Prepared> = OnceLock::new();
    let table = PREPARED.get_or_init(Default::default);
    let (map, combine, identity, post, acc) = fields;
    let key = (
        crate::what::fields_text(map, combine, identity, post, acc),
        types.to_vec(),
    );
    if let Some(found) = table.lock().ok().and_then(|t| t.get(&key).cloned()) {
        return Ok(found);
    }
    let reduction = crate::what::build_reduction(map, combine, identity, post, acc, types)?;
    let prepared = StreamMapped::addressed(&reduction).map(Arc::new);
    if let Ok(mut t) = table.lock() {
        if t.len() >= PREPARED_KEYS {
            t.clear();
        }
        t.insert(key, prepared.clone());
    }
    Ok(prepared)
}

fn types(elements: &[String]) -> PyResult<Vec<DType>> {
    elements.iter().map(|e| crate::what::dtype(e)).collect()
}

/// When a reduction of whole CUDA tensors of `elements` (one type per input) on device
/// `ordinal` can be enqueued on the caller's stream: the type of its one result. `None`
/// otherwise (one input, a custom combine, a result that needs the host).
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc, elements, ordinal))]
pub fn enqueue_tensors_dtype(
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    elements: Vec<String>,
    ordinal: usize,
) -> PyResult<Option<&'static str>> {
    let prepared = prepared((map, combine, identity, post, acc), &types(&elements)?)?;
    let device = devices::cuda(ordinal)?;
    Ok(prepared
        .filter(|_| device.cuda().is_some())
        .map(|p| p.dtype().name()))
}

/// Enqueues the reduction over `inputs` (the device address and type of each whole
/// contiguous tensor, `n` elements apiece) on the caller's `stream`, into the one
/// result at `result` ([`enqueue_tensors_dtype`]'s type, `result_bytes` bytes). `false`
/// where that does not apply: the caller then takes [`reduce_mapped_dlpack`].
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc, inputs, n, ordinal, stream, result, result_bytes))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn enqueue_tensors_whole(
    py: Python<'_>,
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    inputs: Vec<(u64, String)>,
    n: usize,
    ordinal: usize,
    stream: u64,
    result: u64,
    result_bytes: usize,
) -> PyResult<bool> {
    let inputs = inputs
        .into_iter()
        .map(|(address, element)| Ok((address, crate::what::dtype(&element)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let types: Vec<DType> = inputs.iter().map(|(_, d)| *d).collect();
    let Some(prepared) = prepared((map, combine, identity, post, acc), &types)? else {
        return Ok(false);
    };
    let device = devices::cuda(ordinal)?;
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    // SAFETY: the caller passes live contiguous tensors of this device with `n` elements
    // each, a result tensor of `result_bytes` bytes, and its current stream.
    let enqueued = py.allow_threads(|| unsafe {
        cuda.enqueue_addressed_whole(&prepared, &inputs, n, stream, (result, result_bytes))
    });
    crate::stream_stats::enqueued(enqueued)
}

/// Enqueues the reduction along `axes` (`None`: all) of `inputs` (the device address and
/// type of each tensor; all of shape `dims` and element strides `strides`) on the
/// caller's `stream`, into the `result_bytes` bytes at `result` ([`enqueue_tensors_dtype`]'s
/// type, one element per output). `false` where that does not apply (a map reading `i`,
/// views off a 16-byte boundary, outputs that do not step evenly or hold no elements):
/// the caller then takes [`reduce_mapped_dlpack`].
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc, inputs, dims, strides, axes, keepdims, ordinal, stream, result, result_bytes))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn enqueue_tensors_axes(
    py: Python<'_>,
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    inputs: Vec<(u64, String)>,
    dims: Vec<usize>,
    strides: Vec<isize>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    ordinal: usize,
    stream: u64,
    result: u64,
    result_bytes: usize,
) -> PyResult<bool> {
    let views = inputs
        .iter()
        .map(|(address, element)| {
            HostView::from_element_strides(
                *address as usize,
                crate::what::dtype(element)?,
                dims.clone(),
                &strides,
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    let types: Vec<DType> = views.iter().map(|v| v.dtype).collect();
    let Some(prepared) = prepared((map, combine, identity, post, acc), &types)? else {
        return Ok(false);
    };
    let Some(first) = views.first() else {
        return Ok(false);
    };
    if first.count() == 0 || views.iter().any(|v| v.start() as u64 % ADDRESS_ALIGN != 0) {
        return Ok(false);
    }
    let device = devices::cuda(ordinal)?;
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    let starts: Vec<(u64, DType)> = views.iter().map(|v| (v.start() as u64, v.dtype)).collect();
    py.allow_threads(|| {
        crate::reduce::enqueue_job(
            cuda,
            first,
            (axes.as_deref(), keepdims),
            |job| job.for_mapped(prepared.problem(), prepared.loads_words()),
            // SAFETY: the caller passes live tensors of this device described by `dims`
            // and `strides`, a result tensor of `result_bytes` bytes, and its current
            // stream. Every input is read at its own start, not the first view's.
            |_, job| unsafe {
                cuda.enqueue_addressed_outputs(
                    &prepared,
                    &starts,
                    job,
                    stream,
                    (result, result_bytes),
                )
            },
        )
    })
}
