//! The CUDA backend of redlab: the driver and NVRTC loaded at run time
//! ([`discovery`], [`compile`]), the kernel library's OpenCL C files compiled through a
//! translation prelude with a per-device module cache (`modules`), and every variant's
//! passes timed with CUDA events ([`memory`]) by the pass driver shared with OpenCL.
//!
//! ```no_run
//! use redlab_core::{ArrayRef, Backend, DType, Op, Problem};
//! use redlab_cuda::CudaDevice;
//!
//! let device = CudaDevice::open(0)?;
//! let problem = Problem::new(Op::Sum, DType::F32, None)?;
//! let outcome = device.reduce(&problem, ArrayRef::from_slice(&[1.0f32, 2.0, 3.0]))?;
//! # Ok::<(), redlab_core::Error>(())
//! ```

pub mod check;
pub mod compile;
pub mod discovery;
mod dynamic_shared;
mod generate;
pub mod graph;
mod graph_segments;
pub mod kernel_cache;
mod mapped;
mod mapped_addressed;
pub mod memory;
mod modules;
pub mod nccl;
pub mod roof;
mod segment_modules;
pub mod staging;
mod statistics;
mod stream_call;
mod stream_outputs;
mod stream_whole;

pub use stream_call::Landing;
pub use stream_outputs::StreamMapped;

use std::sync::Mutex;

use cudarc::driver::{result, sys};
use redlab_core::segmented::Selection;
use redlab_core::{
    ArrayRef, Backend, DType, DeviceInfo, Error, Outcome, Packed, Problem, Repeated, Value,
};
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::driver::{self as kernel_driver, Plan};
use redlab_kernels::segments::{
    launch_segments, prepare, Reading, SegmentJob, SegmentKernels, SegmentResults,
};
use redlab_kernels::{Capabilities, Variant};

pub use discovery::Query;
pub use memory::DeviceBuffer;
pub use redlab_kernels::generate::GeneratedParts;
pub use redlab_kernels::{Run, RunError};

use memory::{cu, Timeline};
use modules::ModuleCache;

/// An input on the device: uploaded by redlab, or the caller's own memory.
pub struct DeviceInput {
    pub(crate) buffer: Option<DeviceBuffer>,
    /// Elements.
    pub len: usize,
    /// Element type.
    pub dtype: DType,
    /// Host→device seconds of the upload (0 for device-resident inputs).
    pub upload_s: f64,
}

impl DeviceInput {
    /// The device address of the data (`None` for an empty input).
    pub fn device_ptr(&self) -> Option<u64> {
        self.buffer.as_ref().map(DeviceBuffer::device_ptr)
    }
}

/// One CUDA device, ready to run variants.
pub struct CudaDevice {
    query: Query,
    device: sys::CUdevice,
    /// Destroyed by hand in `Drop`, before the context it lives in is released.
    timeline: std::mem::ManuallyDrop<Timeline>,
    caps: Capabilities,
    info: DeviceInfo,
    modules: ModuleCache,
    /// One run at a time per device: the events and the stream are shared.
    running: Mutex<()>,
    /// The `auto` strategy's lookups for this device.
    auto: redlab_tune::Auto,
    /// Pinned staging buffers of staged uploads, made on first use.
    staging: Mutex<Option<staging::Ring>>,
    /// The read roof's configuration, calibrated on first use.
    roof: std::sync::OnceLock<Result<roof::RoofChoice, String>>,
    /// Scratch of reductions enqueued on callers' streams (`stream_call`).
    stream_scratch: Mutex<stream_call::StreamScratch>,
    /// Launches of the stream path, planned once per problem and length (`stream_call`).
    stream_launches: Mutex<stream_call::StreamLaunches>,
    /// Axis and segment kernels of the stream path, built once per problem
    /// (`stream_outputs`).
    output_functions: Mutex<stream_outputs::OutputFunctions>,
    /// Headers and scratch of axis and segment jobs on callers' streams.
    output_scratch: Mutex<stream_outputs::OutputScratch>,
    /// Whole-array mapped reductions of the stream path, planned once per reduction and
    /// length (`stream_whole`).
    whole_launches: Mutex<stream_whole::WholeLaunches>,
    /// Tables of input addresses already on the device, by their bytes
    /// (`mapped_addressed`).
    address_tables: Mutex<mapped_addressed::AddressTables>,
}

// SAFETY: driver handles may be used from any thread once the context is made current,
// which every entry point does; runs are serialized by `running`.
unsafe impl Send for CudaDevice {}
unsafe impl Sync for CudaDevice {}

fn backend_error(message: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: "cuda".into(),
        message: message.to_string(),
    }
}

/// Every CUDA device as `redlab devices` shows it, or why there are none.
pub fn list() -> Result<Vec<DeviceInfo>, String> {
    discovery::list()
}

impl CudaDevice {
    /// Opens `cuda:ordinal`.
    pub fn open(ordinal: usize) -> Result<CudaDevice, Error> {
        let count = discovery::count().map_err(backend_error)?;
        if ordinal >= count {
            return Err(backend_error(format!(
                "no device cuda:{ordinal} (this machine has {count})"
            )));
        }
        let query = discovery::query(ordinal).map_err(backend_error)?;
        let device = result::device::get(ordinal as i32)
            .map_err(cu("cuDeviceGet"))
            .map_err(backend_error)?;
        // SAFETY: a valid device; the primary context is released on drop.
        let ctx = unsafe { result::primary_ctx::retain(device) }
            .map_err(cu("cuDevicePrimaryCtxRetain"))
            .map_err(backend_error)?;
        let timeline = std::mem::ManuallyDrop::new(Timeline::new(ctx).map_err(backend_error)?);
        let caps = discovery::capabilities(&query);
        let info = discovery::describe(&query);
        let auto = redlab_tune::Auto::new(&info);
        Ok(CudaDevice {
            query,
            device,
            timeline,
            caps,
            info,
            modules: ModuleCache::default(),
            running: Mutex::new(()),
            auto,
            staging: Mutex::new(None),
            roof: std::sync::OnceLock::new(),
            stream_scratch: Mutex::new(Default::default()),
            stream_launches: Mutex::new(Default::default()),
            output_functions: Mutex::new(Default::default()),
            output_scratch: Mutex::new(Default::default()),
            whole_launches: Mutex::new(Default::default()),
            address_tables: Mutex::new(Default::default()),
        })
    }

    /// What the driver says about the device.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// What the kernel library may assume here.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The `auto` strategy's choice for `problem` over `n` elements here, with its reasons.
    pub fn auto(&self, problem: &Problem, n: usize) -> redlab_tune::Choice {
        self.auto.choose(&self.caps, problem, n)
    }

    /// Free and total device memory, bytes.
    pub fn memory(&self) -> Result<(usize, usize), RunError> {
        self.timeline.bind()?;
        result::mem_get_info().map_err(cu("cuMemGetInfo"))
    }

    /// Copies `data` to the device (timed). An input larger than the free device memory
    /// is refused with both sizes, before anything is allocated.
    pub fn upload(&self, data: ArrayRef<'_>) -> Result<DeviceInput, RunError> {
        let bytes = data.bytes();
        let dtype = data.dtype();
        if bytes.is_empty() {
            return Ok(DeviceInput {
                buffer: None,
                len: 0,
                dtype,
                upload_s: 0.0,
            });
        }
        self.check_fits(bytes.len())?;
        let buffer = DeviceBuffer::alloc(self.timeline.ctx, bytes.len())?;
        let upload_s = self.timeline.write(&buffer, bytes)?;
        Ok(DeviceInput {
            buffer: Some(buffer),
            len: data.len(),
            dtype,
            upload_s,
        })
    }

    /// Wraps an array already on this device, so it can be reduced without a copy. The
    /// address must be 16-byte aligned (the kernels load whole 16-byte words), as every
    /// cudaMalloc/cuMemAlloc allocation is.
    ///
    /// # Safety
    /// `ptr` must be device memory of this device's primary context holding `len`
    /// elements of `dtype`, alive and unchanged while the returned input is used.
    pub unsafe fn device_resident(
        &self,
        ptr: u64,
        len: usize,
        dtype: DType,
    ) -> Result<DeviceInput, RunError> {
        if len > 0 && ptr % 16 != 0 {
            return Err(RunError::Device(format!(
                "device-resident inputs must be 16-byte aligned (address {ptr:#x})"
            )));
        }
        let bytes = len * dtype.size_bytes();
        Ok(DeviceInput {
            // SAFETY: the caller's promise above.
            buffer: (len > 0)
                .then(|| unsafe { DeviceBuffer::borrowed(self.timeline.ctx, ptr, bytes) }),
            len,
            dtype,
            upload_s: 0.0,
        })
    }

    /// The functions `names` of `variant` built for `problem` (FIRST_PASS or not).
    /// `decls` replaces section 2 (a user-defined map's declarations).
    fn functions(
        &self,
        variant: &Variant,
        problem: &Problem,
        decls: Option<&str>,
        params: &[(&str, u32)],
        first_pass: bool,
        names: &[&str],
    ) -> Result<Vec<sys::CUfunction>, RunError> {
        // What the source is assembled from: a call that built it once finds its
        // functions without assembling it again.
        let arch = self.query.arch();
        let key = format!(
            "{arch}\n{}\n{problem:?}\n{params:?}\n{first_pass}\n{names:?}\n{}",
            variant.name,
            decls.unwrap_or("")
        );
        self.modules.memoized(&key, || {
            let assembled = match decls {
                None => assembly::assemble(variant, problem, params, &[], Target::Cuda, first_pass),
                Some(d) => assembly::assemble_with(
                    variant,
                    problem,
                    d,
                    params,
                    &[],
                    Target::Cuda,
                    first_pass,
                ),
            }
            .map_err(RunError::Device)?;
            self.modules.functions(&assembled.source, &arch, names)
        })
    }

    /// Runs `variant` over a device input. `params` overrides parameter defaults.
    pub fn run(
        &self,
        variant: &Variant,
        problem: &Problem,
        input: &DeviceInput,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError> {
        self.run_with(variant, problem, None, input, params)
    }

    /// [`CudaDevice::run`] with section 2 of the source given (`decls`: a user-defined
    /// map's declarations, whose input is the packed buffer of every input array).
    pub fn run_with(
        &self,
        variant: &Variant,
        problem: &Problem,
        decls: Option<&str>,
        input: &DeviceInput,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError> {
        if decls.is_none() && input.dtype != problem.dtype {
            return Err(RunError::Device(format!(
                "the input holds {}, the problem reduces {}",
                input.dtype, problem.dtype
            )));
        }
        let params = &kernel_driver::launch_params(variant, problem, &self.caps, params, input.len);
        let wg = match kernel_driver::plan(variant, problem, &self.caps, params, input.len)? {
            Plan::Empty(run) => return Ok(run),
            Plan::Launch { wg } => wg,
        };
        let Some(source) = input.buffer.as_ref() else {
            return Err(RunError::Device("empty input reached the device".into()));
        };
        // Builds first (they may take a while and need no exclusive use of the stream).
        self.timeline.bind()?;
        let entries = kernel_driver::entry_points(variant);
        let mut names = vec![entries.first];
        if let (Some(later), false) = (entries.later, entries.later_rebuilt) {
            names.push(later);
        }
        let first_functions = self.functions(variant, problem, decls, params, true, &names)?;
        let first = first_functions[0];
        let later = match (entries.later, entries.later_rebuilt) {
            (Some(name), true) => {
                Some(self.functions(variant, problem, decls, params, false, &[name])?[0])
            }
            (Some(_), false) => first_functions.get(1).copied(),
            (None, _) => None,
        };
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        self.timeline.bind()?;
        kernel_driver::run_passes(
            &*self.timeline,
            &self.caps,
            variant,
            problem,
            &first,
            later.as_ref(),
            source,
            input.len,
            wg,
            params,
        )
    }

    /// One result per output of `selection` (axis outputs or segments), each the
    /// canonical reduction of its own elements, with the seconds of each launch (see
    /// `segments.cl`; [`SegmentJob::explain`] says which kernel a shape gets). Outputs
    /// whose elements do not step evenly are gathered into rows on the host first.
    pub fn compute_outputs(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        self.outputs_results(problem, data, selection)?
            .values()
            .map_err(backend_error)
    }

    /// [`Self::compute_outputs`] as one typed array ([`SegmentResults::packed`]).
    pub fn compute_outputs_packed(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<(Packed, Vec<f64>), Error> {
        self.outputs_results(problem, data, selection)?.packed()
    }

    /// [`Self::compute_outputs_packed`] timed in the steady state: `calls` back-to-back
    /// calls captured in one CUDA graph and replayed; the seconds are one call's share
    /// of the replay (the results are the last call's, the same as every call's).
    pub fn compute_outputs_packed_graph(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<(Packed, f64), Error> {
        let (packed, seconds) = self
            .outputs_results_timed(problem, data, selection, Some(calls))?
            .packed()?;
        Ok((packed, seconds.iter().sum()))
    }

    /// [`Self::compute_outputs`] `calls` times over one upload of the input, as a caller
    /// whose data stays on the device runs it: the first call's values, every call's
    /// seconds (the sum of its passes), and whether every call gave the first one's bits.
    /// Timing each call right after its own upload would time the upload's aftermath
    /// too: on the H200 an f32 sum of 8192×8192 columns took 76.8 µs a call over a
    /// resident input and 108.9 µs after a pageable upload of it
    /// (results/h200-resident-per-call).
    pub fn compute_outputs_repeated(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<Repeated, Error> {
        problem.check_input(&data)?;
        let device = Reading::plain(self.caps.max_work_group);
        prepare(problem, data, selection, device, |job, rows| {
            let input = self.upload(rows).map_err(backend_error)?;
            let mut repeated = Repeated {
                values: Vec::new(),
                seconds: Vec::with_capacity(calls.max(1)),
                agree: true,
            };
            for call in 0..calls.max(1) {
                let (values, passes) = self
                    .segment_results_timed(problem, &input, job, None)
                    .and_then(SegmentResults::values)
                    .map_err(backend_error)?;
                repeated.seconds.push(passes.iter().sum());
                if call == 0 {
                    repeated.values = values;
                } else if !Value::all_same(&values, &repeated.values) {
                    repeated.agree = false;
                }
            }
            Ok(repeated)
        })
    }

    fn outputs_results(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<SegmentResults, Error> {
        self.outputs_results_timed(problem, data, selection, None)
    }

    fn outputs_results_timed(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        graph_calls: Option<usize>,
    ) -> Result<SegmentResults, Error> {
        problem.check_input(&data)?;
        let device = Reading::plain(self.caps.max_work_group);
        prepare(problem, data, selection, device, |job, rows| {
            let input = self.upload(rows).map_err(backend_error)?;
            self.segment_results_timed(problem, &input, job, graph_calls)
                .map_err(backend_error)
        })
    }

    /// Runs `job` over a device input (uploaded, or the caller's device memory).
    pub fn run_segments(
        &self,
        problem: &Problem,
        input: &DeviceInput,
        job: &SegmentJob,
    ) -> Result<(Vec<Value>, Vec<f64>), RunError> {
        self.segment_results(problem, input, job)?.values()
    }

    /// What the kernels of `job` wrote over a device input, for
    /// [`SegmentResults::values`] or [`SegmentResults::packed`].
    pub fn segment_results(
        &self,
        problem: &Problem,
        input: &DeviceInput,
        job: &SegmentJob,
    ) -> Result<SegmentResults, RunError> {
        self.segment_results_timed(problem, input, job, None)
    }

    /// [`Self::segment_results`], with the launches timed one call at a time (`None`)
    /// or as `Some(calls)` back-to-back calls replayed in a CUDA graph
    /// ([`graph_segments`]).
    fn segment_results_timed(
        &self,
        problem: &Problem,
        input: &DeviceInput,
        job: &SegmentJob,
        graph_calls: Option<usize>,
    ) -> Result<SegmentResults, RunError> {
        if input.dtype != problem.dtype {
            return Err(RunError::Device(format!(
                "the input holds {}, the problem reduces {}",
                input.dtype, problem.dtype
            )));
        }
        let assembled =
            assembly::assemble_segments(problem, &[], Target::Cuda).map_err(RunError::Device)?;
        self.segments_built(&assembled.source, problem, input, job, graph_calls)
    }

    /// Runs `job` with the segment kernels built from `source` (plain, or reading
    /// through a map: [`Self::mapped_segment_results`]) for `problem`, the problem over
    /// the values they reduce.
    fn segments_built(
        &self,
        source: &str,
        problem: &Problem,
        input: &DeviceInput,
        job: &SegmentJob,
        graph_calls: Option<usize>,
    ) -> Result<SegmentResults, RunError> {
        self.timeline.bind()?;
        let f = segment_modules::segment_functions(
            &self.modules,
            source,
            &self.query.arch(),
            job.launches_column_words(),
        )?;
        let kernels = SegmentKernels {
            short_rows: &f[0],
            short_rows_wide: &f[1],
            row_tiles: &f[2],
            column_tiles: &f[3],
            tree: &f[4],
            column_words: &f[5],
            column_finish: &f[6],
            word_rows: &f[7],
            row_whole: &f[8],
        };
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        self.timeline.bind()?;
        // An empty input still needs a buffer to name (no kernel reads it).
        let placeholder;
        let source = match input.buffer.as_ref() {
            Some(buffer) => buffer,
            None => {
                placeholder = DeviceBuffer::alloc(self.timeline.ctx, 16)?;
                &placeholder
            }
        };
        match graph_calls {
            None => launch_segments(&*self.timeline, &kernels, problem, source, job),
            Some(calls) => {
                let replayed = graph_segments::Replayed::new(&self.timeline, calls);
                launch_segments(&replayed, &kernels, problem, source, job)
            }
        }
    }

    /// The read roof over a device input: seconds of one streaming read of all its whole
    /// 16-byte words, with the roof configuration calibrated on this device
    /// ([`roof`]).
    pub fn stream_read(&self, input: &DeviceInput) -> Result<f64, RunError> {
        let Some(source) = input.buffer.as_ref() else {
            return Ok(0.0);
        };
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        self.timeline.bind()?;
        let prelude = assembly::file("cuda_prelude.h").unwrap_or_default();
        let device = roof::RoofDevice {
            timeline: &self.timeline,
            modules: &self.modules,
            arch: self.query.arch(),
            sms: self.caps.compute_units,
            prelude,
        };
        let choice = self
            .roof
            .get_or_init(|| device.calibrate().map_err(|e| e.to_string()))
            .clone()
            .map_err(RunError::Device)?;
        device.read(source.ptr, source.bytes / 16, &choice)
    }

    /// The roof configuration in use, once a roof has been measured.
    pub fn roof_choice(&self) -> Option<roof::RoofChoice> {
        self.roof.get().and_then(|r| r.as_ref().ok()).cloned()
    }

    /// The datasheet DRAM bandwidth, GB/s, where the driver reports its clock and width.
    pub fn datasheet_gbps(&self) -> Option<f64> {
        roof::datasheet_gbps(self.query.memory_clock_khz, self.query.bus_bits)
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let _ = self.timeline.bind();
        if let Ok(mut launches) = self.stream_launches.lock() {
            launches.clear();
        }
        if let Ok(mut functions) = self.output_functions.lock() {
            functions.clear();
        }
        if let Ok(mut launches) = self.whole_launches.lock() {
            launches.clear();
        }
        if let Ok(mut tables) = self.address_tables.lock() {
            tables.clear();
        }
        if let Ok(mut scratch) = self.output_scratch.lock() {
            scratch.clear();
        }
        self.modules.clear();
        if let Ok(mut staging) = self.staging.lock() {
            staging.take();
        }
        if let Ok(mut scratch) = self.stream_scratch.lock() {
            scratch.clear();
        }
        // SAFETY: the stream and events go first, while their context is alive; the
        // timeline is not used again. Then the primary context retained in `open` is
        // released, once.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.timeline);
            let _ = result::primary_ctx::release(self.device);
        }
    }
}

impl Backend for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Uploads, runs what `auto` chooses for the problem and size (the tuning database's
    /// entry, or the production kernel), reads back: `seconds` is kernel time from CUDA
    /// events; transfers are not included.
    fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, Error> {
        problem.check_input(&data)?;
        let choice = self.auto(problem, data.len());
        let input = self.upload(data).map_err(backend_error)?;
        let run = self
            .run(&choice.variant, problem, &input, &choice.param_pairs())
            .map_err(backend_error)?;
        Ok(Outcome {
            value: run.value,
            seconds: run.passes.iter().sum(),
            passes: run.passes,
        })
    }

    /// Uploads `data` and times one streaming read of it on the device.
    fn stream_read(&self, data: &[u8]) -> Result<f64, Error> {
        let input = self
            .upload(ArrayRef::from_slice(data))
            .map_err(backend_error)?;
        CudaDevice::stream_read(self, &input).map_err(backend_error)
    }
}
