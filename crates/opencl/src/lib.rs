//! The OpenCL backend of redlab: finds devices through the OpenCL library loaded at run
//! time ([`discovery`]), builds the kernel library's variants with a per-device program
//! cache ([`program_cache`]), and runs their passes with profiling events around every
//! launch and transfer ([`driver`]).
//!
//! ```no_run
//! use redlab_core::{ArrayRef, Backend, Op, Problem, DType};
//! use redlab_opencl::OpenClDevice;
//!
//! let device = OpenClDevice::open(0)?;
//! let problem = Problem::new(Op::Sum, DType::F32, None)?;
//! let outcome = device.reduce(&problem, ArrayRef::from_slice(&[1.0f32, 2.0, 3.0]))?;
//! # Ok::<(), redlab_core::Error>(())
//! ```

pub mod discovery;
pub mod driver;
mod generate;
mod mapped;
pub mod program_cache;
mod statistics;
mod to_result;

use std::sync::{Arc, Mutex};

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device;
use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Backend, DeviceInfo, Error, Outcome, Packed, Problem, Value};
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::driver::{self as kernel_driver, Plan};
use redlab_kernels::segments::{
    launch_segments, prepare, Reading, SegmentJob, SegmentKernels, SegmentResults, ENTRY_POINTS,
};
use redlab_kernels::{Capabilities, Variant};

pub use driver::DeviceInput;
use program_cache::ProgramCache;
pub use redlab_kernels::generate::GeneratedParts;
pub use redlab_kernels::{Run, RunError};

/// One OpenCL device, ready to run variants.
pub struct OpenClDevice {
    device: Device,
    context: Context,
    queue: CommandQueue,
    caps: Capabilities,
    info: DeviceInfo,
    programs: ProgramCache,
    /// Kernel arguments are per kernel object and not thread-safe to set: one run at a
    /// time per device. PoCL devices share one lock across the process
    /// ([`run_lock_for`]).
    running: Arc<Mutex<()>>,
    /// The `auto` strategy's lookups for this device.
    auto: redlab_tune::Auto,
}

// SAFETY: OpenCL handles may be used from any thread; the only non-thread-safe call
// (setting kernel arguments) happens under `running`.
unsafe impl Send for OpenClDevice {}
unsafe impl Sync for OpenClDevice {}

fn backend_error(message: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: "opencl".into(),
        message: message.to_string(),
    }
}

/// Every OpenCL device as `redlab devices` shows it, or why there are none.
pub fn list() -> Result<Vec<DeviceInfo>, String> {
    let found = discovery::devices()?;
    Ok(found
        .iter()
        .map(|f| discovery::describe(f, &discovery::capabilities(&f.device)))
        .collect())
}

/// The lock a device's runs take. PoCL's process-wide cache of compiled kernel
/// libraries counts references per launched command, and those counts are not safe
/// against launches on several contexts at once: a group of one PoCL device three times
/// (`opencl:0,0,0`) aborted in `pocl_release_dlhandle_cache` whenever its kernels were
/// not yet in PoCL's on-disk cache, although builds and releases were already serialized
/// (`program_cache.rs`). So every PoCL device handle in the process shares one run lock;
/// other platforms keep one per device, and their groups run in parallel.
fn run_lock_for(platform: &str) -> Arc<Mutex<()>> {
    static POCL_RUNS: std::sync::OnceLock<Arc<Mutex<()>>> = std::sync::OnceLock::new();
    if platform.contains("Portable Computing Language") || platform.contains("PoCL") {
        POCL_RUNS.get_or_init(Arc::default).clone()
    } else {
        Arc::default()
    }
}

impl OpenClDevice {
    /// Opens `opencl:index`.
    pub fn open(index: usize) -> Result<OpenClDevice, Error> {
        let mut found = discovery::devices().map_err(backend_error)?;
        let count = found.len();
        if index >= count {
            return Err(backend_error(format!(
                "no device opencl:{index} (this machine has {count})"
            )));
        }
        let entry = found.swap_remove(index);
        let caps = discovery::capabilities(&entry.device);
        let info = discovery::describe(&entry, &caps);
        let context = Context::from_device(&entry.device).map_err(backend_error)?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(backend_error)?;
        let auto = redlab_tune::Auto::new(&info);
        Ok(OpenClDevice {
            device: entry.device,
            context,
            queue,
            caps,
            info,
            programs: ProgramCache::default(),
            running: run_lock_for(&entry.platform),
            auto,
        })
    }

    /// What the device can do.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The `auto` strategy's choice for `problem` over `n` elements here, with its reasons.
    pub fn auto(&self, problem: &Problem, n: usize) -> redlab_tune::Choice {
        self.auto.choose(&self.caps, problem, n)
    }

    /// Copies `data` to the device (timed).
    pub fn upload(&self, data: ArrayRef<'_>) -> Result<DeviceInput, RunError> {
        let bytes = data.bytes();
        if bytes.is_empty() {
            return Ok(DeviceInput {
                buffer: None,
                len: 0,
                bytes: 0,
                upload_s: 0.0,
            });
        }
        let mut buf = driver::buffer(&self.context, bytes.len())?;
        let upload_s = driver::write(&self.queue, &mut buf, bytes)?;
        Ok(DeviceInput {
            buffer: Some(buf),
            len: data.len(),
            bytes: bytes.len(),
            upload_s,
        })
    }

    /// Runs `variant` over an uploaded input. `params` overrides parameter defaults.
    pub fn run(
        &self,
        variant: &Variant,
        problem: &Problem,
        input: &DeviceInput,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError> {
        self.run_with(variant, problem, None, input, params)
    }

    /// [`OpenClDevice::run`] with section 2 of the source given (`decls`: a user-defined
    /// map's declarations, [`redlab_kernels::mapped`]).
    pub fn run_with(
        &self,
        variant: &Variant,
        problem: &Problem,
        decls: Option<&str>,
        input: &DeviceInput,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError> {
        let params = &kernel_driver::launch_params(variant, problem, &self.caps, params, input.len);
        let wg = match kernel_driver::plan(variant, problem, &self.caps, params, input.len)? {
            Plan::Empty(run) => return Ok(run),
            Plan::Launch { wg } => wg,
        };
        let Some(source) = input.buffer.as_ref() else {
            return Err(RunError::Device("empty input reached the device".into()));
        };
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        let entries = kernel_driver::entry_points(variant);
        let build = |first_pass: bool, names: &[&str]| {
            let assembled = match decls {
                None => {
                    assembly::assemble(variant, problem, params, &[], Target::OpenCl, first_pass)
                }
                Some(d) => assembly::assemble_with(
                    variant,
                    problem,
                    d,
                    params,
                    &[],
                    Target::OpenCl,
                    first_pass,
                )
                .map(|mut a| {
                    a.options = format!("{} {}", a.options, redlab_kernels::mapped::OPENCL_OPTIONS);
                    a
                }),
            }
            .map_err(RunError::Device)?;
            self.programs
                .get(&self.context, &assembled.source, &assembled.options, names)
                .map_err(|e| RunError::Build(e.log))
        };
        let mut names = vec![entries.first];
        if let (Some(later), false) = (entries.later, entries.later_rebuilt) {
            names.push(later);
        }
        let first_program = build(true, &names)?;
        let later_program = match (entries.later, entries.later_rebuilt) {
            (Some(later), true) => Some(build(false, &[later])?),
            _ => None,
        };
        let missing = |name: &str| {
            RunError::Device(format!(
                "{}: kernel {name} missing after build",
                variant.name
            ))
        };
        let first = first_program
            .kernel(entries.first)
            .ok_or_else(|| missing(entries.first))?;
        let later = match entries.later {
            Some(name) => Some(
                later_program
                    .as_ref()
                    .unwrap_or(&first_program)
                    .kernel(name)
                    .ok_or_else(|| missing(name))?,
            ),
            None => None,
        };
        let launcher = driver::ClLauncher {
            context: &self.context,
            queue: &self.queue,
        };
        kernel_driver::run_passes(
            &launcher, &self.caps, variant, problem, first, later, source, input.len, wg, params,
        )
    }

    /// The read roof over an uploaded input: seconds of one streaming read of all its
    /// whole 16-byte words by a grid of 8 groups of 256 per compute unit.
    pub fn stream_read(&self, input: &DeviceInput) -> Result<f64, RunError> {
        let Some(source) = input.buffer.as_ref() else {
            return Ok(0.0);
        };
        let text = redlab_kernels::assembly::file("roof.cl")
            .ok_or_else(|| RunError::Device("no roof kernel".into()))?;
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        let program = self
            .programs
            .get(&self.context, text, "", &["roof"])
            .map_err(|e| RunError::Build(e.log))?;
        let kernel = program
            .kernel("roof")
            .ok_or_else(|| RunError::Device("missing roof kernel".into()))?;
        let words = input.bytes / 16;
        let groups = (self.caps.compute_units * 8).max(1);
        let out = driver::buffer(&self.context, groups * 256 * 4)?;
        driver::launch(&self.queue, kernel, source, &out, words, groups * 256, 256)
    }

    /// One result per output of `selection` (axis outputs or segments), each the
    /// canonical reduction of its own elements, with the seconds of each launch. The
    /// kernels are those of `segments.cl`; [`SegmentJob::explain`] says which one a shape
    /// gets. Outputs whose elements do not step evenly are gathered into rows first.
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

    fn outputs_results(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<SegmentResults, Error> {
        problem.check_input(&data)?;
        let device = Reading::plain(self.caps.max_work_group);
        prepare(problem, data, selection, device, |job, rows| {
            let input = self.upload(rows).map_err(backend_error)?;
            self.segment_results(problem, &input, job)
                .map_err(backend_error)
        })
    }

    /// Runs `job` over an uploaded input.
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
        let assembled =
            assembly::assemble_segments(problem, &[], Target::OpenCl).map_err(RunError::Device)?;
        self.segments_built(&assembled, problem, input, job)
    }

    /// Runs `job` with the segment kernels `assembled` (plain, or reading through a map:
    /// [`Self::mapped_segment_results`]) for `problem`, the problem over the values they
    /// reduce.
    fn segments_built(
        &self,
        assembled: &assembly::Assembled,
        problem: &Problem,
        input: &DeviceInput,
        job: &SegmentJob,
    ) -> Result<SegmentResults, RunError> {
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        let program = self
            .programs
            .get(
                &self.context,
                &assembled.source,
                &assembled.options,
                &ENTRY_POINTS,
            )
            .map_err(|e| RunError::Build(e.log))?;
        let kernel = |name: &str| {
            program.kernel(name).ok_or_else(|| {
                RunError::Device(format!("segments: kernel {name} missing after build"))
            })
        };
        let kernels = SegmentKernels {
            short_rows: kernel(ENTRY_POINTS[0])?,
            short_rows_wide: kernel(ENTRY_POINTS[1])?,
            row_tiles: kernel(ENTRY_POINTS[2])?,
            column_tiles: kernel(ENTRY_POINTS[3])?,
            tree: kernel(ENTRY_POINTS[4])?,
            column_words: kernel(ENTRY_POINTS[5])?,
            column_finish: kernel(ENTRY_POINTS[6])?,
            word_rows: kernel(ENTRY_POINTS[7])?,
            row_whole: kernel(ENTRY_POINTS[8])?,
        };
        let launcher = driver::ClLauncher {
            context: &self.context,
            queue: &self.queue,
        };
        // An empty input still needs a buffer to name (no kernel reads it).
        let placeholder;
        let source = match input.buffer.as_ref() {
            Some(buffer) => buffer,
            None => {
                placeholder = driver::buffer(&self.context, 16)?;
                &placeholder
            }
        };
        launch_segments(&launcher, &kernels, problem, source, job)
    }

    /// The device handle (for queries beyond [`Capabilities`]).
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl Backend for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Uploads, runs what `auto` chooses for the problem and size (the tuning database's
    /// entry, or the production kernel), reads back: `seconds` is kernel time from
    /// profiling events; transfers are not included.
    fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, Error> {
        driver::input_bytes(problem, &data).map_err(backend_error)?;
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
        OpenClDevice::stream_read(self, &input).map_err(backend_error)
    }
}
