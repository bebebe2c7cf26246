//! Statistics with several-number accumulators on a [`Device`]: one pass per output on
//! the CPU, tile states on OpenCL and CUDA devices (timed per call or, on CUDA, in a
//! graph) finished on the host in the canonical order, and groups of devices splitting
//! the outputs.

use std::time::Instant;

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Packed, Repeated, Value};
use redlab_cpu::statistics::{finish_tiles, Statistic};
use redlab_kernels::statistics::{StateKind, TilePlan};

use super::{Device, Kind};
use crate::Error;

/// Tile states of a statistic and the seconds of the kernel that computed them.
type States = (Vec<[f64; 3]>, f64);

/// The state a device kernel keeps for `stat` (`statistics.cl`); `None` is kept for
/// statistics a device cannot compute (every one can today).
pub fn state_kind(stat: Statistic) -> Option<StateKind> {
    match stat {
        Statistic::Var { .. } | Statistic::Std { .. } => Some(StateKind::Moments),
        Statistic::LogSumExp => Some(StateKind::ExpSum),
        Statistic::NanMin => Some(StateKind::NanMin),
        Statistic::NanMax => Some(StateKind::NanMax),
        Statistic::NanMean => Some(StateKind::NanMoments),
    }
}

impl Device {
    /// A statistic with a several-number accumulator (variance, standard deviation,
    /// log-sum-exp, NaN-skipping min/max/mean) of each output of `selection`, each over
    /// its own elements in the canonical order (`redlab_cpu::statistics`), with the
    /// CPU's bits on the CPU, on OpenCL and CUDA devices and on groups of them.
    ///
    /// ```
    /// use redlab::{segmented::Selection, ArrayRef, Device, Statistic, Value, Scalar};
    ///
    /// let cpu = Device::open("cpu", None)?;
    /// let x = [2.0f64, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
    /// let whole = [0..x.len()];
    /// let var = cpu.statistic(Statistic::Var { ddof: 0.0 }, ArrayRef::from_slice(&x), Selection::Ranges(&whole))?;
    /// assert_eq!(var, vec![Value::Scalar(Scalar::F64(4.0))]);
    /// # Ok::<(), redlab::Error>(())
    /// ```
    pub fn statistic(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<Vec<Value>, Error> {
        Ok(self.statistic_timed(stat, data, selection)?.0)
    }

    /// [`Device::statistic`] as one typed array of the statistic's result type, where
    /// the device computes it that way: on the CPU, var, std and log-sum-exp of f32 and
    /// f64 columns and short rows
    /// (var of 3×4096 f32 along axis 0 took 68 µs as one `Value` per column and 9–11
    /// µs so on the 2-core development machine). `None` elsewhere: the caller takes
    /// [`Device::statistic`].
    pub fn statistic_packed(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Option<Result<Packed, Error>> {
        match &self.kind {
            Kind::Cpu(cpu) => cpu
                .statistic_packed(stat, data, selection)
                .map(|packed| packed.map_err(Error::from)),
            _ => None,
        }
    }

    /// [`Device::statistic`] with its seconds: the tile kernel's (device events) on
    /// OpenCL and CUDA, without the upload and the host's tree over tile states; the
    /// call's wall time on the CPU (of [`Device::statistic_packed`] where it applies).
    pub fn statistic_timed(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, f64), Error> {
        let kind = state_kind(stat);
        let tiles = |run: &dyn Fn(&TilePlan) -> Result<States, String>| {
            self.statistic_of_tiles(stat, data, selection, run)
        };
        match (&self.kind, kind) {
            (Kind::Sharded(group), _) => {
                let (values, seconds) = crate::sharded_outputs::split_outputs(
                    group.members(),
                    data,
                    selection,
                    |m, d, s| m.statistic_timed(stat, d, s),
                )?;
                Ok((values, seconds.into_iter().fold(0.0, f64::max)))
            }
            (Kind::Cpu(cpu), _) => {
                // The typed array where the CPU computes one (what the Python package
                // returns), its values made outside the timing, as the operators' typed
                // outputs are.
                let start = Instant::now();
                if let Some(packed) = cpu.statistic_packed(stat, data, selection) {
                    let seconds = start.elapsed().as_secs_f64();
                    return Ok((packed?.scalar_values(), seconds));
                }
                let values = cpu.statistic(stat, data, selection)?;
                Ok((values, start.elapsed().as_secs_f64()))
            }
            #[cfg(feature = "opencl")]
            (Kind::OpenCl(device), Some(kind)) => tiles(&|plan| {
                device
                    .statistic_tiles(kind, data, plan)
                    .map_err(|e| e.to_string())
            }),
            #[cfg(feature = "cuda")]
            (Kind::Cuda(device), Some(kind)) => tiles(&|plan| {
                device
                    .statistic_tiles(kind, data, plan)
                    .map_err(|e| e.to_string())
            }),
            #[allow(unreachable_patterns)]
            _ => {
                let _ = (kind, tiles);
                Err(Error::Unavailable {
                    backend: self.info().id.clone(),
                    reason: format!(
                        "{} runs on the CPU and on OpenCL and CUDA devices and groups of them",
                        stat.name()
                    ),
                })
            }
        }
    }

    /// [`Device::statistic_timed`] `calls` times over one upload of `data`, on CUDA
    /// devices, as [`Device::reduce_outputs_repeated`] runs the built-in operators: the
    /// first call's outputs, each call's kernel seconds, and whether every call gave
    /// the first one's bits. `None` elsewhere, where each call takes the data as it is.
    pub fn statistic_repeated(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<Option<Repeated>, Error> {
        match (&self.kind, state_kind(stat)) {
            #[cfg(feature = "cuda")]
            (Kind::Cuda(device), Some(kind)) => {
                // The calls' seconds and agreement, beside the first call's states.
                let seen = std::cell::RefCell::new((Vec::new(), true));
                let (values, _) = self.statistic_of_tiles(stat, data, selection, &|plan| {
                    let (states, seconds, agree) = device
                        .statistic_tiles_repeated(kind, data, plan, calls)
                        .map_err(|e| e.to_string())?;
                    *seen.borrow_mut() = (seconds, agree);
                    Ok((states, 0.0))
                })?;
                let (seconds, agree) = seen.into_inner();
                Ok(Some(Repeated {
                    values,
                    seconds,
                    agree,
                }))
            }
            _ => {
                let _ = (stat, data, selection, calls);
                Ok(None)
            }
        }
    }

    /// [`Device::statistic_timed`] in the steady state a pipeline sees: `calls`
    /// back-to-back launches of the tile kernel captured in one CUDA graph and
    /// replayed; the seconds are one call's share of the replay (the upload and the
    /// host's tree over tile states are outside it, as in [`Device::statistic_timed`]).
    pub fn statistic_graph(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<(Vec<Value>, f64), Error> {
        match (&self.kind, state_kind(stat)) {
            #[cfg(feature = "cuda")]
            (Kind::Cuda(device), Some(kind)) => {
                self.statistic_of_tiles(stat, data, selection, &|plan| {
                    device
                        .statistic_tiles_graph(kind, data, plan, calls)
                        .map_err(|e| e.to_string())
                })
            }
            _ => {
                let _ = (stat, data, selection, calls);
                Err(Error::Unavailable {
                    backend: self.info().id.clone(),
                    reason: "graph timing needs a CUDA device".into(),
                })
            }
        }
    }

    /// A statistic's outputs from the tile states that `run` computes for the plan of
    /// `selection`, each output finished over its own tiles, and `run`'s seconds.
    fn statistic_of_tiles(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
        run: &dyn Fn(&TilePlan) -> Result<States, String>,
    ) -> Result<(Vec<Value>, f64), Error> {
        let plan = TilePlan::new(data, selection)?;
        let (states, seconds) = run(&plan).map_err(|message| redlab_core::Error::Backend {
            backend: self.info().backend.clone(),
            message,
        })?;
        let values = plan
            .outputs
            .iter()
            .map(|r| Ok(finish_tiles(stat, data.dtype(), &states[r.clone()])?))
            .collect::<Result<Vec<Value>, Error>>()?;
        Ok((values, seconds))
    }
}
