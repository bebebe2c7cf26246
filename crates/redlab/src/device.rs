//! Devices by name: opening one (`cpu`, `opencl:N`, `cuda:N`) and listing what is
//! present, with the reason for each backend that is not.

use std::ops::Range;
use std::time::Instant;

use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{
    ArrayRef, Backend, DeviceInfo, Element, Op, Outcome, Packed, Problem, Repeated, Value,
};
use redlab_cpu::CpuBackend;
use redlab_expr::Reduction;
use serde::Serialize;

use crate::Error;

mod custom;
mod statistics;
pub use statistics::state_kind;

/// A backend that cannot be used here, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unavailable {
    /// The backend family.
    pub backend: String,
    /// Why it is not available.
    pub reason: String,
}

/// What `redlab devices` shows.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    /// Devices that can run reductions.
    pub devices: Vec<DeviceInfo>,
    /// Backends that cannot, with reasons.
    pub unavailable: Vec<Unavailable>,
    /// The NCCL version that multi-process runs on CUDA GPUs exchange through, when there
    /// are CUDA devices and NCCL loads (otherwise `unavailable` says why).
    pub nccl: Option<String>,
}

#[cfg(not(feature = "cuda"))]
const CUDA_MISSING: &str = "this build was made without the cuda feature";

/// Lists the devices present and the backends that are not usable.
pub fn list_devices() -> Result<DeviceReport, Error> {
    let cpu = CpuBackend::new(None)?;
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(unused_mut))]
    let mut devices = vec![cpu.info().clone()];
    let mut unavailable = Vec::new();
    #[cfg(feature = "opencl")]
    match redlab_opencl::list() {
        Ok(found) => devices.extend(found),
        Err(reason) => unavailable.push(Unavailable {
            backend: "opencl".into(),
            reason,
        }),
    }
    #[cfg(not(feature = "opencl"))]
    unavailable.push(Unavailable {
        backend: "opencl".into(),
        reason: "this build was made without the opencl feature".into(),
    });
    #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
    let mut nccl = None;
    #[cfg(feature = "cuda")]
    match redlab_cuda::list() {
        Ok(found) => {
            devices.extend(found);
            match redlab_cuda::nccl::status() {
                Ok(version) => nccl = Some(version),
                Err(reason) => unavailable.push(Unavailable {
                    backend: "nccl".into(),
                    reason,
                }),
            }
        }
        Err(reason) => unavailable.push(Unavailable {
            backend: "cuda".into(),
            reason,
        }),
    }
    #[cfg(not(feature = "cuda"))]
    unavailable.push(Unavailable {
        backend: "cuda".into(),
        reason: CUDA_MISSING.into(),
    });
    Ok(DeviceReport {
        devices,
        unavailable,
        nccl,
    })
}

/// The backend behind an opened device.
enum Kind {
    Cpu(CpuBackend),
    /// Several devices, each reducing its shard (`cuda:0,1`, `cuda:all`).
    Sharded(Box<crate::sharded::Sharded>),
    #[cfg(feature = "opencl")]
    OpenCl(Box<redlab_opencl::OpenClDevice>),
    #[cfg(feature = "cuda")]
    Cuda(Box<redlab_cuda::CudaDevice>),
}

/// An opened device.
pub struct Device {
    kind: Kind,
}

impl Device {
    /// Opens a device by name: `cpu` (all cores; `threads` limits them), `opencl:N`,
    /// `cuda:N`, or a group of them (`cuda:0,1`, `cuda:all`; see `crate::sharded`).
    pub fn open(name: &str, threads: Option<usize>) -> Result<Device, Error> {
        let lower = name.trim().to_ascii_lowercase();
        if let Some(names) = crate::sharded::member_names(&lower)? {
            let devices = names
                .iter()
                .map(|n| Device::open(n, threads))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Device {
                kind: Kind::Sharded(Box::new(crate::sharded::Sharded::new(&lower, devices))),
            });
        }
        let (family, index) = match lower.split_once(':') {
            Some((f, i)) => (f.to_string(), Some(i.to_string())),
            None => (lower.clone(), None),
        };
        let index: Option<usize> = match index {
            Some(i) => Some(
                i.parse()
                    .map_err(|_| Error::UnknownDevice(name.to_string()))?,
            ),
            None => None,
        };
        match family.as_str() {
            "cpu" if index.unwrap_or(0) == 0 => Ok(Device {
                kind: Kind::Cpu(CpuBackend::new(threads)?),
            }),
            #[cfg(feature = "opencl")]
            "opencl" => Ok(Device {
                kind: Kind::OpenCl(Box::new(redlab_opencl::OpenClDevice::open(
                    index.unwrap_or(0),
                )?)),
            }),
            #[cfg(not(feature = "opencl"))]
            "opencl" => Err(Error::Unavailable {
                backend: "opencl".into(),
                reason: "this build was made without the opencl feature".into(),
            }),
            #[cfg(feature = "cuda")]
            "cuda" => Ok(Device {
                kind: Kind::Cuda(Box::new(redlab_cuda::CudaDevice::open(index.unwrap_or(0))?)),
            }),
            #[cfg(not(feature = "cuda"))]
            "cuda" => Err(Error::Unavailable {
                backend: "cuda".into(),
                reason: CUDA_MISSING.into(),
            }),
            _ => Err(Error::UnknownDevice(name.to_string())),
        }
    }

    /// Who the device is.
    pub fn info(&self) -> &DeviceInfo {
        self.backend().info()
    }

    /// The backend behind the device.
    pub fn backend(&self) -> &dyn Backend {
        match &self.kind {
            Kind::Cpu(cpu) => cpu,
            Kind::Sharded(sharded) => sharded.as_ref(),
            #[cfg(feature = "opencl")]
            Kind::OpenCl(device) => device.as_ref(),
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => device.as_ref(),
        }
    }

    /// The members of a group (`cuda:0,1`), in shard order; `None` for one device.
    pub fn members(&self) -> Option<&[Device]> {
        match &self.kind {
            Kind::Sharded(sharded) => Some(sharded.members()),
            _ => None,
        }
    }

    /// The CUDA device, for running individual variants.
    #[cfg(feature = "cuda")]
    pub fn cuda(&self) -> Option<&redlab_cuda::CudaDevice> {
        match &self.kind {
            Kind::Cuda(device) => Some(device),
            _ => None,
        }
    }

    /// The OpenCL device, for running individual variants.
    #[cfg(feature = "opencl")]
    pub fn opencl(&self) -> Option<&redlab_opencl::OpenClDevice> {
        match &self.kind {
            Kind::OpenCl(device) => Some(device),
            _ => None,
        }
    }

    /// Reduces `data` as `problem` says.
    pub fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, Error> {
        Ok(self.backend().reduce(problem, data)?)
    }

    /// One result per output of `selection` (axis outputs or segments), each the
    /// canonical reduction of its own elements, and the seconds of each launch (device
    /// events on GPUs; the call's wall time on the CPU). Transfers are not included.
    pub fn reduce_outputs(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        match &self.kind {
            Kind::Sharded(group) => crate::sharded_outputs::split_outputs(
                group.members(),
                data,
                selection,
                |m, d, s| {
                    let (values, passes) = m.reduce_outputs(problem, d, s)?;
                    Ok((values, passes.iter().sum()))
                },
            ),
            Kind::Cpu(cpu) => {
                let start = Instant::now();
                let values = cpu.compute_outputs(problem, data, selection)?;
                Ok((values, vec![start.elapsed().as_secs_f64()]))
            }
            #[cfg(feature = "opencl")]
            Kind::OpenCl(device) => Ok(device.compute_outputs(problem, data, selection)?),
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => Ok(device.compute_outputs(problem, data, selection)?),
        }
    }

    /// [`Device::reduce_outputs`] as the one typed array callers keep (numpy's result
    /// type; argmin/argmax give int64 indices), with the same seconds. On the CPU, float
    /// sums and products of columns and of short rows are computed in that array
    /// directly, without a [`Value`] per output; GPUs decode their accumulators straight
    /// into it; a sharded group packs its members' values. Min,
    /// max, argmin and argmax of an empty output are an error: they have no value.
    pub fn reduce_outputs_packed(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<(Packed, Vec<f64>), Error> {
        match &self.kind {
            Kind::Cpu(cpu) => {
                let start = Instant::now();
                let packed = cpu.compute_outputs_packed(problem, data, selection)?;
                Ok((packed, vec![start.elapsed().as_secs_f64()]))
            }
            #[cfg(feature = "opencl")]
            Kind::OpenCl(device) => Ok(device.compute_outputs_packed(problem, data, selection)?),
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => Ok(device.compute_outputs_packed(problem, data, selection)?),
            Kind::Sharded(_) => {
                let (values, passes) = self.reduce_outputs(problem, data, selection)?;
                Ok((Packed::of_values(problem, &values)?, passes))
            }
        }
    }

    /// [`Device::reduce_outputs`] `calls` times over one upload of `data`, on CUDA
    /// devices, as a caller whose data stays on the device runs it (the comparators'
    /// inputs are on the device too): the first call's outputs, each call's seconds and
    /// whether all calls agreed. `None` elsewhere, where
    /// each call takes the data as it is.
    pub fn reduce_outputs_repeated(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<Option<Repeated>, Error> {
        match &self.kind {
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => Ok(Some(
                device.compute_outputs_repeated(problem, data, selection, calls)?,
            )),
            _ => {
                let _ = (problem, data, selection, calls);
                Ok(None)
            }
        }
    }

    /// [`Device::reduce_outputs_packed`] timed in the steady state, on CUDA devices:
    /// `calls` back-to-back calls captured in one CUDA graph and replayed, with one
    /// call's share of the replay's seconds. Elsewhere an [`Error::Unavailable`].
    pub fn reduce_outputs_packed_graph(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<(Packed, f64), Error> {
        match &self.kind {
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => {
                Ok(device.compute_outputs_packed_graph(problem, data, selection, calls)?)
            }
            _ => {
                let _ = (problem, data, selection, calls);
                Err(Error::Unavailable {
                    backend: self.info().id.clone(),
                    reason: "graph timing needs a CUDA device".into(),
                })
            }
        }
    }

    /// Reduces `inputs` (equal lengths, the types `reduction` was built for) with a
    /// user-defined map and combine: the map per element, then the combine in the
    /// canonical order, so float sums give the same bits on every device.
    ///
    /// ```
    /// use redlab::{ArrayRef, DType, Device, Reduction, Scalar, Value};
    ///
    /// let cpu = Device::open("cpu", None)?;
    /// let dot = Reduction::builder("x * y", "sum").build(&[DType::F32, DType::F32])?;
    /// let (x, y) = ([1.0f32, 2.0, 3.0], [4.0f32, 5.0, 6.0]);
    /// let outcome = cpu.reduce_mapped(&dot, &[ArrayRef::from_slice(&x), ArrayRef::from_slice(&y)])?;
    /// assert_eq!(outcome.value, Value::Scalar(Scalar::F32(32.0)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_mapped(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<Outcome, Error> {
        Ok(match &self.kind {
            Kind::Cpu(cpu) => cpu.reduce_mapped(reduction, inputs)?,
            Kind::Sharded(group) => group.reduce_mapped(reduction, inputs)?,
            #[cfg(feature = "opencl")]
            Kind::OpenCl(device) => device.reduce_mapped(reduction, inputs)?,
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => device.reduce_mapped(reduction, inputs)?,
        })
    }

    /// A user-defined reduction along axes or over segments, each output reduced in the
    /// canonical order of its own mapped values (before `post`, which the caller applies
    /// per output). On OpenCL and CUDA devices a map of one input that does not read `i`
    /// is compiled into the segment kernels, which map each element as they read it;
    /// other maps are applied on the host once, then the mapped values reduced here.
    /// A custom combine folds each output in the same canonical order, in the segment
    /// kernels where the map does not read `i`, else on the host (`device/custom.rs`);
    /// an empty output's value is its identity.
    pub fn reduce_mapped_outputs(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
    ) -> Result<Vec<Value>, Error> {
        Ok(self
            .reduce_mapped_outputs_timed(reduction, inputs, selection)?
            .0)
    }

    /// [`Device::reduce_mapped_outputs`] with the seconds of each kernel launch (of the
    /// reduction of the mapped values, where the map ran on the host).
    pub fn reduce_mapped_outputs_timed(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        let Some(problem) = reduction.problem() else {
            return self.custom_outputs_timed(reduction, inputs, selection);
        };
        if self.maps_outputs_on_device(reduction) {
            match &self.kind {
                #[cfg(feature = "opencl")]
                Kind::OpenCl(device) => {
                    return Ok(device.compute_mapped_outputs(reduction, inputs, selection)?)
                }
                #[cfg(feature = "cuda")]
                Kind::Cuda(device) => {
                    return Ok(device.compute_mapped_outputs(reduction, inputs, selection)?)
                }
                _ => {}
            }
        }
        let mapped = redlab_expr::host::map_all(reduction, inputs)?;
        self.reduce_outputs(problem, mapped.view(), selection)
    }

    /// [`Device::reduce_mapped_outputs`] timed in the steady state on CUDA devices that
    /// map on the device: `calls` back-to-back calls captured in one CUDA graph and
    /// replayed, with one call's share of the replay's seconds. Elsewhere an
    /// [`Error::Unavailable`].
    pub fn reduce_mapped_outputs_graph(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<(Vec<Value>, f64), Error> {
        match &self.kind {
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) if self.graphs_mapped_outputs(reduction) => {
                let (values, seconds) =
                    device.compute_mapped_outputs_graph(reduction, inputs, selection, calls)?;
                Ok((
                    custom::empty_outputs_hold_identity(reduction, selection, values),
                    seconds,
                ))
            }
            _ => {
                let _ = (reduction, inputs, selection, calls);
                Err(Error::Unavailable {
                    backend: self.info().id.clone(),
                    reason: "graph timing of a map needs a CUDA device that maps in its kernels"
                        .into(),
                })
            }
        }
    }

    /// Whether [`Device::reduce_mapped_outputs_graph`] can time `reduction` here: a CUDA
    /// device that compiles its map into the segment kernels.
    pub fn graphs_mapped_outputs(&self, reduction: &Reduction) -> bool {
        let cuda = match &self.kind {
            #[cfg(feature = "cuda")]
            Kind::Cuda(_) => true,
            _ => false,
        };
        cuda && self.maps_outputs_on_device(reduction)
    }

    /// Whether [`Device::reduce_mapped_outputs`] compiles `reduction`'s map into the
    /// segment kernels here (an OpenCL or CUDA device, no `i`, a built-in combine; one
    /// input read raw, several packed into one buffer) rather than mapping on the host
    /// first. CUDA devices map integer maps of integer words on the host where
    /// [`redlab_kernels::mapped::guarded_on_cuda`] asks for it.
    pub fn maps_outputs_on_device(&self, reduction: &Reduction) -> bool {
        let gpu = match &self.kind {
            #[cfg(feature = "opencl")]
            Kind::OpenCl(_) => true,
            #[cfg(feature = "cuda")]
            Kind::Cuda(_) => !redlab_kernels::mapped::guarded_on_cuda(reduction),
            _ => false,
        };
        gpu && redlab_kernels::mapped::segments_take(reduction)
    }

    /// How [`Device::reduce_outputs`] will run `selection` here, in words.
    pub fn explain_outputs(&self, problem: &Problem, selection: Selection<'_>) -> String {
        match &self.kind {
            Kind::Cpu(cpu) => cpu.explain_outputs(problem, selection),
            Kind::Sharded(group) => {
                let split = match selection {
                    Selection::Axes(_) => "blocks of the outermost kept axis",
                    Selection::Ranges(_) => "runs of whole segments of about equal size",
                };
                format!(
                    "outputs split over the {} members by {split}, each output whole on one member; each member: {}",
                    group.members().len(),
                    group.members()[0].explain_outputs(problem, selection)
                )
            }
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            _ => match redlab_kernels::segments::SegmentJob::new(selection) {
                Some(job) => job
                    .for_device(self.max_work_group())
                    .for_problem(problem)
                    .explain()
                    .to_string(),
                None => "the outputs' elements do not step evenly through the buffer (reduced \
                         axes that do not merge): gathered into rows on the host, then reduced \
                         as segments"
                    .into(),
            },
        }
    }

    /// How [`Device::reduce_mapped_outputs`] will run `selection` of `reduction` here, in
    /// words: the plan of the segment kernels that map as they read
    /// ([`redlab_kernels::segments::SegmentJob::for_mapped`]), or, where the map runs on
    /// the host, that of the mapped values' reduction.
    pub fn explain_mapped_outputs(
        &self,
        reduction: &Reduction,
        selection: Selection<'_>,
    ) -> String {
        let Some(problem) = reduction.problem() else {
            return self.explain_custom_outputs(reduction, selection);
        };
        #[cfg(any(feature = "opencl", feature = "cuda"))]
        if self.maps_outputs_on_device(reduction) {
            return self.explain_mapped_on_device(reduction, problem, selection);
        }
        format!(
            "the map applied on the host, then: {}",
            self.explain_outputs(problem, selection)
        )
    }

    /// [`Device::explain_mapped_outputs`] where the segment kernels map.
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    fn explain_mapped_on_device(
        &self,
        reduction: &Reduction,
        problem: &Problem,
        selection: Selection<'_>,
    ) -> String {
        match redlab_kernels::segments::SegmentJob::new(selection) {
            Some(job) => format!(
                "the map compiled into the segment kernels, each element mapped as it is \
                 read; {}",
                job.for_device(self.max_work_group())
                    .for_mapped(problem, redlab_kernels::mapped::loads_words(reduction))
                    .explain()
            ),
            None => "the outputs' elements do not step evenly through the buffer: gathered \
                     into rows on the host, then mapped and reduced as segments"
                .into(),
        }
    }

    /// Reduces `data`, viewed through `layout`, along `axes` (`None`: all) on this device:
    /// one value per output element, in C order of the kept axes, each the canonical
    /// reduction of its own elements, so the same bits on every device.
    ///
    /// ```
    /// use redlab::{shape::Layout, Device, Op};
    ///
    /// let cpu = Device::open("cpu", None)?;
    /// let m = [1.5f32, 2.0, 3.0, 10.0, 20.0, 30.0];
    /// let columns = cpu.reduce_axis(Op::Max, &m, &Layout::c_order(&[2, 3]), Some(&[0]))?;
    /// assert_eq!(columns.len(), 3);
    /// # Ok::<(), redlab::Error>(())
    /// ```
    pub fn reduce_axis<T: Element>(
        &self,
        op: Op,
        data: &[T],
        layout: &Layout,
        axes: Option<&[isize]>,
    ) -> Result<Vec<Value>, Error> {
        let (problem, plan) = axis_request(op, data, layout, axes)?;
        let (values, _) =
            self.reduce_outputs(&problem, ArrayRef::from_slice(data), Selection::Axes(&plan))?;
        Ok(values)
    }

    /// Reduces each segment of `data` (CSR offsets or a fixed length) on this device, each
    /// in the canonical order of its own elements.
    pub fn reduce_segments<T: Element>(
        &self,
        op: Op,
        data: &[T],
        segments: &Segments,
    ) -> Result<Vec<Value>, Error> {
        let (problem, ranges) = segment_request(op, data, segments)?;
        let (values, _) = self.reduce_outputs(
            &problem,
            ArrayRef::from_slice(data),
            Selection::Ranges(&ranges),
        )?;
        Ok(values)
    }

    /// [`Device::reduce_axis`] as a vector of the results' own type `R`, without a
    /// [`Value`] per output: numpy's result type, that is the accumulator for sums and
    /// products (i64 for integer sums, f32 for f16 sums), the input's type for min, max
    /// and the bitwise operators, and i64 indices for argmin and argmax. Any other `R` is
    /// an error that names the results' type; so are min, max, argmin and argmax along
    /// an empty axis.
    ///
    /// ```
    /// use redlab::{shape::Layout, Device, Op};
    ///
    /// let cpu = Device::open("cpu", None)?;
    /// let m = [1i32, 2, 3, 10, 20, 30];
    /// let rows: Vec<i64> = cpu.reduce_axis_as(Op::Sum, &m, &Layout::c_order(&[2, 3]), Some(&[1]))?;
    /// assert_eq!(rows, [6, 60]);
    /// let columns: Vec<i32> = cpu.reduce_axis_as(Op::Max, &m, &Layout::c_order(&[2, 3]), Some(&[0]))?;
    /// assert_eq!(columns, [10, 20, 30]);
    /// assert!(cpu.reduce_axis_as::<i32, i32>(Op::Sum, &m, &Layout::c_order(&[2, 3]), None).is_err());
    /// # Ok::<(), redlab::Error>(())
    /// ```
    pub fn reduce_axis_as<T: Element, R: Element>(
        &self,
        op: Op,
        data: &[T],
        layout: &Layout,
        axes: Option<&[isize]>,
    ) -> Result<Vec<R>, Error> {
        let (problem, plan) = axis_request(op, data, layout, axes)?;
        let (packed, _) = self.reduce_outputs_packed(
            &problem,
            ArrayRef::from_slice(data),
            Selection::Axes(&plan),
        )?;
        typed_results(packed)
    }

    /// [`Device::reduce_segments`] as a vector of the results' own type `R` (see
    /// [`Device::reduce_axis_as`]); min, max, argmin and argmax of an empty segment are
    /// an error.
    pub fn reduce_segments_as<T: Element, R: Element>(
        &self,
        op: Op,
        data: &[T],
        segments: &Segments,
    ) -> Result<Vec<R>, Error> {
        let (problem, ranges) = segment_request(op, data, segments)?;
        let (packed, _) = self.reduce_outputs_packed(
            &problem,
            ArrayRef::from_slice(data),
            Selection::Ranges(&ranges),
        )?;
        typed_results(packed)
    }

    /// The most work-items a work-group may hold here (the CPU has no groups).
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    fn max_work_group(&self) -> usize {
        match &self.kind {
            Kind::Cpu(_) | Kind::Sharded(_) => usize::MAX,
            #[cfg(feature = "opencl")]
            Kind::OpenCl(device) => device.capabilities().max_work_group,
            #[cfg(feature = "cuda")]
            Kind::Cuda(device) => device.capabilities().max_work_group,
        }
    }
}

/// The problem and the axis plan of reducing `data`, viewed through `layout`, along
/// `axes` (`None`: all), in the input's default accumulator.
pub(crate) fn axis_request<T: Element>(
    op: Op,
    data: &[T],
    layout: &Layout,
    axes: Option<&[isize]>,
) -> Result<(Problem, AxisPlan), Error> {
    let problem = Problem::new(op, T::DTYPE, None)?;
    layout.check(data.len())?;
    Ok((problem, AxisPlan::new(layout.clone(), axes, false)?))
}

/// The problem and the element ranges of reducing each segment of `data`.
pub(crate) fn segment_request<T: Element>(
    op: Op,
    data: &[T],
    segments: &Segments,
) -> Result<(Problem, Vec<Range<usize>>), Error> {
    let problem = Problem::new(op, T::DTYPE, None)?;
    Ok((problem, segments.ranges(data.len())?))
}

/// The results as elements of `R`, which must be their type ([`Packed::dtype`]).
pub(crate) fn typed_results<R: Element>(packed: Packed) -> Result<Vec<R>, Error> {
    if R::DTYPE != packed.dtype {
        return Err(Error::ResultType {
            asked: R::DTYPE,
            results: packed.dtype,
        });
    }
    // Hosts are little-endian, as the packed bytes are; a byte vector need not be
    // aligned for R, so each element is read unaligned.
    Ok(packed
        .bytes
        .chunks_exact(std::mem::size_of::<R>())
        .map(bytemuck::pod_read_unaligned)
        .collect())
}
