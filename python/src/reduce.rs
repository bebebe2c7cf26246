//! The reductions Python calls: over host arrays by address, over DLPack tensors (host
//! or CUDA; on CUDA enqueued on the caller's stream where the result needs no host
//! step), and user-defined map/combine reductions. Every call releases the interpreter
//! lock while it computes.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use redlab::segmented::Selection;
use redlab::shape::AxisPlan;
use redlab::{ArrayRef, DType, Device, Op, Packed, Reduction, Value};
use redlab_kernels::segments::SegmentJob;

use crate::devices;
use crate::dlpack::{self, Place};
use crate::errors;
use crate::host::HostView;
use crate::outputs;
use crate::what::{dtype, What};
use redlab_cuda::Landing;

/// Inputs from this many bytes on are reduced with the interpreter lock released. Below
/// it, a reduction takes less time than handing the lock to another thread and back
/// (numpy draws the same line, at 500 elements).
pub(crate) const RELEASE_FROM_BYTES: usize = 4096;

/// What a computation gave, before it becomes Python objects.
pub(crate) enum Computed {
    /// One value for the whole array.
    Scalar(Value),
    /// One value per output, with the outputs' shape and the type of no outputs.
    Array(Vec<Value>, Vec<usize>, &'static str),
    /// The outputs as one typed array, with their shape.
    Packed(Packed, Vec<usize>),
}

pub(crate) fn to_python(py: Python<'_>, computed: Computed, what: &str) -> PyResult<PyObject> {
    match computed {
        Computed::Scalar(v) => outputs::scalar(py, v, what),
        Computed::Array(values, dims, empty) => outputs::array(py, &values, dims, empty, what),
        Computed::Packed(packed, dims) => outputs::packed(py, packed, dims),
    }
}

pub(crate) fn lib(e: redlab::Error) -> PyErr {
    errors::from_redlab(&e)
}

/// The result type of an operator with no outputs to take it from (numpy's rules).
fn op_dtype(problem: &redlab::Problem) -> &'static str {
    match problem.op {
        Op::ArgMin | Op::ArgMax => "i64",
        _ => problem.acc.name(),
    }
}

/// The result type of a statistic, from its value over nothing.
fn stat_dtype(reduction: &Reduction, input: DType) -> &'static str {
    let empty = ArrayRef::from_bytes(input, crate::host::empty_bytes()).ok();
    let value = empty.and_then(|e| {
        Device::open("cpu", Some(1))
            .ok()?
            .reduce_mapped(reduction, &[e])
            .ok()
    });
    match value.map(|o| o.value) {
        Some(Value::Scalar(s)) => s.dtype().name(),
        _ => "f64",
    }
}

pub(crate) fn axis_plan(
    view: &HostView,
    axes: Option<&[isize]>,
    keepdims: bool,
) -> PyResult<AxisPlan> {
    AxisPlan::new(view.layout.clone(), axes, keepdims).map_err(|e| errors::from_core(&e))
}

/// Whether the call reduces everything to one value without a shape to keep.
pub(crate) fn whole(axes: &Option<Vec<isize>>, keepdims: bool) -> bool {
    axes.is_none() && !keepdims
}

/// Reduces a host view on `device`.
fn compute_view(
    device: &Device,
    what: &What,
    view: &HostView,
    axes: Option<Vec<isize>>,
    keepdims: bool,
) -> PyResult<Computed> {
    // SAFETY: the Python caller holds the array for the whole call.
    let data = unsafe { view.bytes()? };
    let all = whole(&axes, keepdims);
    match what {
        What::Op(op, acc) => {
            let problem = What::problem(*op, view.dtype, *acc)?;
            if all && view.flat {
                return Ok(Computed::Scalar(
                    device.reduce(&problem, data).map_err(lib)?.value,
                ));
            }
            let plan = axis_plan(view, axes.as_deref(), keepdims)?;
            if every_output_has_a_value(&problem, &plan) {
                // The typed array, without a value per output.
                let (packed, _) = device
                    .reduce_outputs_packed(&problem, data, Selection::Axes(&plan))
                    .map_err(lib)?;
                return Ok(shaped_packed(packed, &plan, all));
            }
            let (values, _) = device
                .reduce_outputs(&problem, data, Selection::Axes(&plan))
                .map_err(lib)?;
            Ok(shaped(values, &plan, all, op_dtype(&problem)))
        }
        What::Stat(name) => {
            let reduction = What::statistic(name, view.dtype)?;
            if all && view.flat {
                let value = device
                    .reduce_mapped(&reduction, &[data])
                    .map_err(lib)?
                    .value;
                return Ok(Computed::Scalar(value));
            }
            stat_outputs(device, &reduction, data, view, axes, keepdims)
        }
        What::Multi(stat) => multi(device, *stat, data, view, axes, keepdims),
    }
}

/// A several-number statistic over host data, on `device`.
fn multi(
    device: &Device,
    stat: redlab::Statistic,
    data: ArrayRef<'_>,
    view: &HostView,
    axes: Option<Vec<isize>>,
    keepdims: bool,
) -> PyResult<Computed> {
    let plan = axis_plan(view, axes.as_deref(), keepdims)?;
    let all = whole(&axes, keepdims);
    if let Some(packed) = device.statistic_packed(stat, data, Selection::Axes(&plan)) {
        return Ok(shaped_packed(packed.map_err(lib)?, &plan, all));
    }
    let values = device
        .statistic(stat, data, Selection::Axes(&plan))
        .map_err(lib)?;
    Ok(shaped(
        values,
        &plan,
        all,
        stat.result_dtype(view.dtype).name(),
    ))
}

/// A statistic of host data along `axes`: the map on the host, the outputs on `device`,
/// then `post` per output over its element count.
fn stat_outputs(
    device: &Device,
    reduction: &Reduction,
    data: ArrayRef<'_>,
    view: &HostView,
    axes: Option<Vec<isize>>,
    keepdims: bool,
) -> PyResult<Computed> {
    let plan = axis_plan(view, axes.as_deref(), keepdims)?;
    let values = device
        .reduce_mapped_outputs(reduction, &[data], Selection::Axes(&plan))
        .map_err(lib)?;
    let n = plan.segment_len();
    let values = values.into_iter().map(|v| reduction.finish(v, n)).collect();
    let all = whole(&axes, keepdims);
    Ok(shaped(
        values,
        &plan,
        all,
        stat_dtype(reduction, view.dtype),
    ))
}

/// Whether every output of `plan` has a value: operators with an identity always, min,
/// max, argmin and argmax where the reduced axes are not empty (else numpy raises, with
/// the message the value path gives).
fn every_output_has_a_value(problem: &redlab::Problem, plan: &AxisPlan) -> bool {
    !problem.op.needs_elements() || plan.segment_len() > 0
}

/// The typed results: one scalar where everything was reduced, else the array.
fn shaped_packed(packed: Packed, plan: &AxisPlan, all: bool) -> Computed {
    match (all, packed.scalar(0)) {
        (true, Some(s)) if packed.len() == 1 => Computed::Scalar(Value::Scalar(s)),
        _ => Computed::Packed(packed, plan.out_dims()),
    }
}

pub(crate) fn shaped(
    values: Vec<Value>,
    plan: &AxisPlan,
    all: bool,
    empty: &'static str,
) -> Computed {
    match (all, values.len()) {
        (true, 1) => Computed::Scalar(values.into_iter().next().unwrap_or(Value::Empty)),
        _ => Computed::Array(values, plan.out_dims(), empty),
    }
}

/// `op` or statistic `name` over the host array at `address` (numpy's array interface:
/// `strides` in bytes, `None` for C order), along `axes` (`None`: all) on `device`.
#[pyfunction]
#[pyo3(signature = (kind, name, address, element, dims, strides, axes, keepdims, acc, device, ddof=0.0))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn reduce_host(
    py: Python<'_>,
    kind: &str,
    name: &str,
    address: usize,
    element: &str,
    dims: Vec<usize>,
    strides: Option<Vec<isize>>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    acc: Option<&str>,
    device: &str,
    ddof: f64,
) -> PyResult<PyObject> {
    let what = What::parse(kind, name, acc, ddof)?;
    let view = HostView::new(address, dtype(element)?, dims, strides)?;
    let device = devices::device(device)?;
    let computed = py.allow_threads(|| compute_view(&device, &what, &view, axes, keepdims))?;
    to_python(py, computed, What::label(name))
}

/// `op` or statistic `name` over any object with the buffer protocol (numpy arrays
/// first of all), read in place; `None` when its buffer cannot be read natively (the
/// Python side then takes the copying path).
#[pyfunction]
#[pyo3(signature = (kind, name, obj, axes, keepdims, acc, device, ddof=0.0))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn reduce_buffer(
    py: Python<'_>,
    kind: &str,
    name: &str,
    obj: &Bound<'_, PyAny>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    acc: Option<&str>,
    device: &str,
    ddof: f64,
) -> PyResult<Option<PyObject>> {
    let what = What::parse(kind, name, acc, ddof)?;
    let Some(held) = crate::buffer::open(obj) else {
        return Ok(None);
    };
    let device = devices::device(device)?;
    let view = &held.view;
    let work = || compute_view(&device, &what, view, axes, keepdims);
    let computed = if view.span() >= RELEASE_FROM_BYTES {
        py.allow_threads(work)?
    } else {
        work()?
    };
    drop(held);
    to_python(py, computed, What::label(name)).map(Some)
}

/// When a CUDA tensor's reduction by `op` can be enqueued on the caller's stream: the
/// result type and how many elements of it the result buffer the caller allocates must
/// hold (the kernel's whole output; the result is element 0). `None` otherwise.
#[pyfunction]
#[pyo3(signature = (kind, name, element, acc, ordinal))]
pub fn enqueue_dtype(
    kind: &str,
    name: &str,
    element: &str,
    acc: Option<&str>,
    ordinal: usize,
) -> PyResult<Option<(&'static str, usize)>> {
    let Some((device, problem)) = cuda_operator(kind, name, element, acc, ordinal)? else {
        return Ok(None);
    };
    Ok(device.cuda().and_then(|cuda| {
        cuda.enqueue_result_bytes(&problem)?;
        let result = cuda.enqueue_output_type(&problem)?;
        // A buffer for the kernel's whole output where its first partial is the result
        // itself; room for the result alone where it is stored converted (an index,
        // the float of an order key).
        let elements = match redlab_kernels::codec::Codec::new(&problem).raw_result_bytes() {
            Some(_) => cuda.landing_bytes(&problem).div_ceil(result.size_bytes()),
            None => 1,
        };
        Some((result.name(), elements))
    }))
}

/// The CUDA device `ordinal` and the problem of operator `name` over `element`, or
/// `None` for statistics.
fn cuda_operator(
    kind: &str,
    name: &str,
    element: &str,
    acc: Option<&str>,
    ordinal: usize,
) -> PyResult<Option<(std::sync::Arc<Device>, redlab::Problem)>> {
    let What::Op(op, acc) = What::parse(kind, name, acc, 0.0)? else {
        return Ok(None);
    };
    let problem = What::problem(op, dtype(element)?, acc)?;
    Ok(Some((devices::cuda(ordinal)?, problem)))
}

/// When a CUDA tensor's reduction by `op` along axes can be enqueued on the caller's
/// stream with its results written into an array the caller allocates: that array's
/// element type (one element per output). `None` otherwise.
#[pyfunction]
#[pyo3(signature = (name, element, acc, ordinal))]
pub fn enqueue_axis_dtype(
    name: &str,
    element: &str,
    acc: Option<&str>,
    ordinal: usize,
) -> PyResult<Option<&'static str>> {
    let Some((device, problem)) = cuda_operator("op", name, element, acc, ordinal)? else {
        return Ok(None);
    };
    Ok(device
        .cuda()
        .and_then(|cuda| cuda.enqueue_output_type(&problem))
        .map(|dtype| dtype.name()))
}

/// Where an enqueued result `width` bytes wide
/// ([`redlab_cuda::CudaDevice::enqueue_result_bytes`], `None` where the kernel cannot
/// store it) goes: with room for the result alone, the kernel stores it there and keeps
/// its roots and ticket in redlab's scratch for the stream (one launch); otherwise the
/// buffer is the kernel's whole output (results that are the final partial's bytes).
fn landing(width: Option<usize>, result: u64, result_bytes: usize) -> Landing {
    if Some(result_bytes) == width {
        Landing::Result(result)
    } else {
        Landing::Buffer {
            address: result,
            bytes: result_bytes,
        }
    }
}

/// Enqueues `op` over the `n` contiguous elements at device address `address` of CUDA
/// device `ordinal` on the caller's `stream`, into the `result_bytes` bytes at `result`:
/// exactly the result's bytes (one launch), or a buffer sized by [`enqueue_dtype`] whose
/// first element is the result. The fast path for
/// framework tensors whose address and layout are read from the tensor itself; it
/// reads the same memory as DLPack would.
#[pyfunction]
#[pyo3(signature = (name, element, acc, address, n, ordinal, stream, result, result_bytes))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn enqueue_pointer(
    py: Python<'_>,
    name: &str,
    element: &str,
    acc: Option<&str>,
    address: u64,
    n: usize,
    ordinal: usize,
    stream: u64,
    result: u64,
    result_bytes: usize,
) -> PyResult<()> {
    let What::Op(op, acc) = What::parse("op", name, acc, 0.0)? else {
        return Err(PyValueError::new_err("only operators are enqueued"));
    };
    let problem = What::problem(op, dtype(element)?, acc)?;
    let device = devices::cuda(ordinal)?;
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    let landing = landing(cuda.enqueue_result_bytes(&problem), result, result_bytes);
    // SAFETY: the caller passes a live tensor of this device, its element count, a
    // result tensor of the right type, and its current stream on that device.
    py.allow_threads(|| unsafe { cuda.enqueue_reduce(&problem, address, n, stream, landing) })
        .map_err(errors::device)
}

/// `op` or statistic `name` over a DLPack tensor. Host tensors are read in place; CUDA
/// tensors on the caller's `stream`: with `result` (the address of a buffer of
/// `result_bytes` bytes: for a whole-array reduction of [`enqueue_dtype`]'s type, the
/// kernel's whole output or the result alone, else of [`enqueue_axis_dtype`]'s type,
/// one element per output; for statistics of
/// [`crate::stream_stats::enqueue_stat_dtype`]'s) the reduction is enqueued into it and
/// `None` returned where
/// the problem and shape allow; otherwise the call waits for the stream and returns the
/// values.
#[pyfunction]
#[pyo3(signature = (kind, name, capsule, axes, keepdims, acc, stream, result, result_bytes, ddof=0.0))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn reduce_dlpack(
    py: Python<'_>,
    kind: &str,
    name: &str,
    capsule: &Bound<'_, PyAny>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    acc: Option<&str>,
    stream: u64,
    result: Option<u64>,
    result_bytes: usize,
    ddof: f64,
) -> PyResult<Option<PyObject>> {
    let what = What::parse(kind, name, acc, ddof)?;
    let tensor = dlpack::read(capsule)?;
    let view = HostView::new(
        tensor.address as usize,
        tensor.dtype,
        tensor.dims,
        tensor.byte_strides,
    )?;
    let ordinal = match tensor.place {
        Place::Host => {
            let device = devices::device("cpu")?;
            let computed =
                py.allow_threads(|| compute_view(&device, &what, &view, axes, keepdims))?;
            return to_python(py, computed, What::label(name)).map(Some);
        }
        Place::Cuda(ordinal) => ordinal,
    };
    let device = devices::device(&format!("cuda:{ordinal}"))?;
    if let (Some(result), What::Op(op, acc)) = (result, &what) {
        let problem = What::problem(*op, view.dtype, *acc)?;
        let cuda = device
            .cuda()
            .ok_or_else(|| errors::device("not a CUDA device"))?;
        let width = cuda.enqueue_result_bytes(&problem);
        // The production kernel loads 16-byte words: a flat view that starts off such a
        // boundary (`a[1:]`) takes the segment kernels below.
        let one_launch = view.flat && whole(&axes, keepdims) && view.start() % 16 == 0;
        if let (Some(width), true) = (width, one_launch) {
            let start = view.start() as u64;
            let landing = landing(Some(width), result, result_bytes);
            // SAFETY: the tensor lives on this device (DLPack says so) and the caller
            // keeps it and `result` alive; `stream` is the caller's stream of that device.
            let enqueued = py.allow_threads(|| unsafe {
                cuda.enqueue_reduce(&problem, start, view.count(), stream, landing)
            });
            // Skipped: an empty input whose operator has no identity (argmax of
            // nothing), which the paths below report as numpy does.
            if crate::stream_stats::enqueued(enqueued)? {
                return Ok(None);
            }
        }
        // Along axes, and whole arrays whose one result the segment kernels store
        // (views that are not flat or start off a 16-byte boundary, empty inputs).
        let enqueued = py.allow_threads(|| {
            enqueue_axis(
                &device,
                &problem,
                &view,
                &axes,
                keepdims,
                stream,
                result,
                result_bytes,
            )
        })?;
        if enqueued {
            return Ok(None);
        }
    }
    if let (Some(result), What::Stat(name)) = (result, &what) {
        // Statistics: the segment kernels map, reduce and `post` in place.
        let enqueued = py.allow_threads(|| {
            crate::stream_stats::enqueue_stat(
                &device,
                name,
                &view,
                axes.as_deref(),
                keepdims,
                stream,
                (result, result_bytes),
            )
        })?;
        if enqueued {
            return Ok(None);
        }
    }
    let computed =
        py.allow_threads(|| compute_on_cuda(&device, &what, &view, axes, keepdims, stream))?;
    to_python(py, computed, What::label(name)).map(Some)
}

/// Enqueues `op` along `axes` of the CUDA tensor at device address `address` (dims and
/// element strides as the framework reports them) on the caller's `stream`, into the
/// `result_bytes` bytes at `result` ([`enqueue_axis_dtype`]'s type, one element per
/// output). `false` where the shape or problem does not qualify: the caller then takes
/// the DLPack path. The fast path for torch tensors, whose layout and stream are read
/// from the tensor itself (a DLPack capsule cost 13–20 µs per call on the H200).
#[pyfunction]
#[pyo3(signature = (name, element, acc, address, dims, strides, axes, keepdims, ordinal, stream, result, result_bytes))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn enqueue_axis_pointer(
    py: Python<'_>,
    name: &str,
    element: &str,
    acc: Option<&str>,
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
    let What::Op(op, acc) = What::parse("op", name, acc, 0.0)? else {
        return Ok(false);
    };
    let element = dtype(element)?;
    let problem = What::problem(op, element, acc)?;
    let view = HostView::from_element_strides(address as usize, element, dims, &strides)?;
    let device = devices::cuda(ordinal)?;
    py.allow_threads(|| {
        enqueue_axis(
            &device,
            &problem,
            &view,
            &axes,
            keepdims,
            stream,
            result,
            result_bytes,
        )
    })
}

/// Enqueues `problem` along `axes` of a CUDA tensor on the caller's `stream`, every
/// output written into the caller's array of `result_bytes` bytes at `result`, with no
/// wait and nothing read back. `false` where the shape or problem does not qualify
/// (outputs that do not step evenly, results decoded on the host, empty outputs): the
/// caller then takes the waiting path.
#[allow(clippy::too_many_arguments)] // the call's own arguments, passed through
fn enqueue_axis(
    device: &Device,
    problem: &redlab::Problem,
    view: &HostView,
    axes: &Option<Vec<isize>>,
    keepdims: bool,
    stream: u64,
    result: u64,
    result_bytes: usize,
) -> PyResult<bool> {
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    let plan_job = |job: SegmentJob| job.for_problem(problem);
    enqueue_job(
        cuda,
        view,
        (axes.as_deref(), keepdims),
        plan_job,
        |start, job| {
            // SAFETY: the tensor lives on this device (DLPack or the framework says so) and
            // the caller keeps it and `result` (sized for the plan's outputs, checked)
            // alive; `stream` is the caller's stream of that device.
            unsafe { cuda.enqueue_outputs(problem, start, job, stream, result, result_bytes) }
        },
    )
}

/// Plans the job along `axes` of `view` for `cuda` (`plan_job` picks the kernels) and
/// hands it and the view's first address to `enqueue`. `false` where the outputs do not
/// step evenly through the view or the enqueue skips the job: the caller then takes the
/// waiting path.
pub fn enqueue_job(
    cuda: &redlab_cuda::CudaDevice,
    view: &HostView,
    (axes, keepdims): (Option<&[isize]>, bool),
    plan_job: impl FnOnce(SegmentJob) -> SegmentJob,
    enqueue: impl FnOnce(u64, &SegmentJob) -> Result<(), redlab_kernels::RunError>,
) -> PyResult<bool> {
    let plan = axis_plan(view, axes, keepdims)?;
    let Some(job) = SegmentJob::new(Selection::Axes(&plan)) else {
        return Ok(false);
    };
    let job = plan_job(job.for_device(cuda.capabilities().max_work_group));
    crate::stream_stats::enqueued(enqueue(view.start() as u64, &job))
}

/// The waiting path for CUDA tensors: after the caller's stream, on redlab's stream.
fn compute_on_cuda(
    device: &Device,
    what: &What,
    view: &HostView,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    stream: u64,
) -> PyResult<Computed> {
    let cuda = device
        .cuda()
        .ok_or_else(|| errors::device("not a CUDA device"))?;
    // SAFETY: the caller's stream on this device.
    unsafe { cuda.synchronize_stream(stream) }.map_err(errors::device)?;
    // Device inputs start on 16-byte boundaries: a view starting inside its allocation
    // (`t[:, 1:]`) is read from the boundary below, its elements at an offset.
    let view = &view.aligned_down(16);
    let elements = view.span() / view.dtype.size_bytes();
    // SAFETY: the span lies in the tensor's device memory, alive for the call.
    let mut input = unsafe { cuda.device_resident(view.start() as u64, elements, view.dtype) }
        .map_err(errors::device)?;
    let all = whole(&axes, keepdims);
    match what {
        What::Op(op, acc) => {
            let problem = What::problem(*op, view.dtype, *acc)?;
            if all && view.flat {
                let choice = cuda.auto(&problem, elements);
                let run = cuda
                    .run(&choice.variant, &problem, &input, &choice.param_pairs())
                    .map_err(errors::device)?;
                return Ok(Computed::Scalar(run.value));
            }
            let plan = axis_plan(view, axes.as_deref(), keepdims)?;
            if let Some(job) = SegmentJob::new(Selection::Axes(&plan)) {
                let job = job
                    .for_device(cuda.capabilities().max_work_group)
                    .for_problem(&problem);
                let results = cuda
                    .segment_results(&problem, &input, &job)
                    .map_err(errors::device)?;
                if every_output_has_a_value(&problem, &plan) {
                    // The typed array, straight from the device's accumulators.
                    let (packed, _) = results.packed().map_err(|e| errors::from_core(&e))?;
                    return Ok(shaped_packed(packed, &plan, all));
                }
                let (values, _) = results.values().map_err(errors::device)?;
                return Ok(shaped(values, &plan, all, op_dtype(&problem)));
            }
            // Outputs that do not step evenly: gathered on the host, as for host arrays.
            let bytes = cuda.download(&input).map_err(errors::device)?;
            let host =
                ArrayRef::from_bytes(view.dtype, &bytes).map_err(|e| errors::from_core(&e))?;
            let (values, _) = device
                .reduce_outputs(&problem, host, Selection::Axes(&plan))
                .map_err(lib)?;
            Ok(shaped(values, &plan, all, op_dtype(&problem)))
        }
        What::Stat(name) => {
            let reduction = What::statistic(name, view.dtype)?;
            if all && view.flat && view.start() % 16 == 0 {
                // One input is its own packed buffer.
                input.dtype = DType::U8;
                let outcome = cuda
                    .run_mapped(&reduction, &input)
                    .map_err(|e| errors::from_core(&e))?;
                return Ok(Computed::Scalar(outcome.value));
            }
            let plan = axis_plan(view, axes.as_deref(), keepdims)?;
            // Integer maps of 2- or 4-byte integer words map on the host where guarded
            // (`redlab_kernels::mapped::maps_integer_words` says why).
            let in_kernels = redlab_kernels::mapped::maps_on_device(&reduction)
                && !redlab_kernels::mapped::guarded_on_cuda(&reduction);
            if let (Some(problem), Some(job), true) = (
                reduction.problem(),
                SegmentJob::new(Selection::Axes(&plan)),
                in_kernels,
            ) {
                // In place: the segment kernels map each element of the tensor as they
                // read it, then `post` per output over its element count.
                let job = job
                    .for_device(cuda.capabilities().max_work_group)
                    .for_mapped(problem, redlab_kernels::mapped::reads_words(&reduction));
                let (values, _) = cuda
                    .mapped_segment_results(&reduction, &input, &job)
                    .and_then(|r| r.values())
                    .map_err(errors::device)?;
                let n = plan.segment_len();
                let values = values.into_iter().map(|v| reduction.finish(v, n)).collect();
                return Ok(shaped(
                    values,
                    &plan,
                    all,
                    stat_dtype(&reduction, view.dtype),
                ));
            }
            let bytes = cuda.download(&input).map_err(errors::device)?;
            let host =
                ArrayRef::from_bytes(view.dtype, &bytes).map_err(|e| errors::from_core(&e))?;
            stat_outputs(device, &reduction, host, view, axes, keepdims)
        }
        What::Multi(stat) => {
            // On the GPU, in place, where the outputs step evenly through the tensor.
            let plan = axis_plan(view, axes.as_deref(), keepdims)?;
            let tiles = redlab_kernels::statistics::TilePlan::in_place(Selection::Axes(&plan));
            if let (Some(kind), Some(tiles)) = (redlab::state_kind(*stat), tiles) {
                let (states, _) = cuda
                    .statistic_tiles_resident(kind, &input, &tiles)
                    .map_err(errors::device)?;
                let values = tiles
                    .outputs
                    .iter()
                    .map(|r| redlab::finish_tiles(*stat, view.dtype, &states[r.clone()]))
                    .collect::<Result<Vec<Value>, _>>()
                    .map_err(|e| errors::from_core(&e))?;
                return Ok(shaped(
                    values,
                    &plan,
                    all,
                    stat.result_dtype(view.dtype).name(),
                ));
            }
            // Outputs that do not step evenly: on the CPU, from a host copy
            // of the tensor's span.
            let bytes = cuda.download(&input).map_err(errors::device)?;
            let host =
                ArrayRef::from_bytes(view.dtype, &bytes).map_err(|e| errors::from_core(&e))?;
            multi(&*devices::device("cpu")?, *stat, host, view, axes, keepdims)
        }
    }
}

/// A user-defined reduction (`map`, `combine`, optional `identity`, `post`, `acc`) over
/// C-contiguous host arrays of one shape, along `axes` (`None`: all) on `device`.
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc, inputs, dims, axes, keepdims, device))]
#[allow(clippy::too_many_arguments)]
pub fn reduce_mapped(
    py: Python<'_>,
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    inputs: Vec<(usize, String)>,
    dims: Vec<usize>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    device: &str,
) -> PyResult<PyObject> {
    let views = inputs
        .iter()
        .map(|(address, element)| HostView::new(*address, dtype(element)?, dims.clone(), None))
        .collect::<PyResult<Vec<_>>>()?;
    let types: Vec<DType> = views.iter().map(|v| v.dtype).collect();
    let reduction = crate::what::build_reduction(map, combine, identity, post, acc, &types)?;
    let device = devices::device(device)?;
    // SAFETY: the Python caller holds every input for the whole call.
    let computed = py.allow_threads(|| unsafe {
        compute_mapped(&device, &reduction, &views, axes.as_deref(), keepdims)
    })?;
    to_python(py, computed, "reduce")
}

/// A user-defined reduction over `views` (one per input the map names, one shape) along
/// `axes` (`None` without `keepdims`: everything, to one value).
///
/// # Safety
/// Every array `views` describe must stay alive and unchanged for the call.
pub(crate) unsafe fn compute_mapped(
    device: &Device,
    reduction: &Reduction,
    views: &[HostView],
    axes: Option<&[isize]>,
    keepdims: bool,
) -> PyResult<Computed> {
    let data = views
        .iter()
        .map(|v| unsafe { v.bytes() })
        .collect::<PyResult<Vec<_>>>()?;
    if axes.is_none() && !keepdims {
        let value = device.reduce_mapped(reduction, &data).map_err(lib)?.value;
        return Ok(Computed::Scalar(value));
    }
    let view = views
        .first()
        .ok_or_else(|| PyValueError::new_err("a reduction needs at least one input"))?;
    let plan = axis_plan(view, axes, keepdims)?;
    let values = device
        .reduce_mapped_outputs(reduction, &data, Selection::Axes(&plan))
        .map_err(lib)?;
    let n = plan.segment_len();
    let values = values.into_iter().map(|v| reduction.finish(v, n)).collect();
    Ok(shaped(values, &plan, false, "f64"))
}
