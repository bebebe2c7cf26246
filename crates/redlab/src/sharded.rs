//! Several devices as one (`cuda:0,1`, `cuda:all`, `opencl:0,1`): the input split at
//! aligned subtree boundaries of the canonical order ([`redlab_core::shard`]), each
//! device reducing its own subtrees (or, where the cut cannot show, its whole run in one
//! launch: `shard::plan_for`) with its production path, on its own host thread,
//! and the roots joined in tree order on the host, so a float sum gives the same bits on
//! any number of devices as on one and on the CPU.
//!
//! The partials are few (four subtrees per device) and are joined on the host. Axis and
//! segment reductions split by outputs instead (`sharded_outputs`); user-defined
//! reductions split as plain ones do, a custom combine joining the roots itself. Arrays
//! made on the devices themselves go through [`crate::generated`]; one process per GPU
//! joining through NCCL is `redlab run --rank` (`cli::ranks`).

use std::ops::Range;

use redlab_core::shard::{combine, plan_for, ShardPlan};
use redlab_core::{ArrayRef, Backend, DeviceInfo, Error as CoreError, Outcome, Problem, Value};

use crate::{Device, Error};

/// A group of devices reducing shards of one input.
pub struct Sharded {
    devices: Vec<Device>,
    info: DeviceInfo,
}

/// The member device names of a sharded name (`cuda:0,1` → `cuda:0`, `cuda:1`;
/// `cuda:all` → every CUDA device), or `None` for a single device.
// Built without GPU backends, every family name is unknown and the count's use unreachable.
#[cfg_attr(
    not(any(feature = "opencl", feature = "cuda")),
    allow(unreachable_code, unused_variables)
)]
pub fn member_names(name: &str) -> Result<Option<Vec<String>>, Error> {
    let Some((family, list)) = name.split_once(':') else {
        return Ok(None);
    };
    if list == "all" {
        let count = match family {
            #[cfg(feature = "cuda")]
            "cuda" => redlab_cuda::list()
                .map_err(|reason| Error::Unavailable {
                    backend: "cuda".into(),
                    reason,
                })?
                .len(),
            #[cfg(feature = "opencl")]
            "opencl" => redlab_opencl::list()
                .map_err(|reason| Error::Unavailable {
                    backend: "opencl".into(),
                    reason,
                })?
                .len(),
            _ => return Err(Error::UnknownDevice(name.to_string())),
        };
        if count == 0 {
            return Err(Error::UnknownDevice(format!("{name} (no {family} device)")));
        }
        return Ok(Some((0..count).map(|k| format!("{family}:{k}")).collect()));
    }
    if !list.contains(',') {
        return Ok(None);
    }
    let names: Vec<String> = list
        .split(',')
        .map(|k| format!("{family}:{}", k.trim()))
        .collect();
    Ok(Some(names))
}

impl Sharded {
    /// The group `name` of `devices`.
    pub fn new(name: &str, devices: Vec<Device>) -> Sharded {
        let first = devices.first().map(|d| d.info().clone());
        let info = DeviceInfo {
            id: name.to_string(),
            backend: first.as_ref().map_or("none".into(), |i| i.backend.clone()),
            name: format!(
                "{} × {}",
                devices.len(),
                first.as_ref().map_or("nothing".into(), |i| i.name.clone())
            ),
            compute_units: devices.iter().map(|d| d.info().compute_units).sum(),
            details: vec![(
                "members".into(),
                devices
                    .iter()
                    .map(|d| d.info().id.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            )],
        };
        Sharded { devices, info }
    }

    /// The member devices, in shard order.
    pub fn members(&self) -> &[Device] {
        &self.devices
    }
}

impl Sharded {
    /// A user-defined reduction over the group: each member maps and reduces its
    /// subtrees of the inputs (as [`Backend::reduce`] does for plain reductions), the
    /// roots are joined in tree order and `post` is applied once, so the bits are one
    /// device's. A map that reads the index `i` reads it shifted by its subtree's start
    /// ([`redlab_expr::Reduction::with_index_from`]). A custom combine's kernels follow
    /// the canonical tree too (lanes, halving fold, aligned pairwise tree of tiles), so
    /// its roots are joined by the combine expression itself, pair by pair.
    pub fn reduce_mapped(
        &self,
        reduction: &redlab_expr::Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<Outcome, Error> {
        let n = redlab_expr::host::check_inputs(reduction, inputs)
            .map_err(|e| Error::Core(CoreError::Shape(e.to_string())))?;
        let shards = mapped_plan(reduction, n, self.devices.len());
        if shards.subtrees.len() <= 1 {
            return self.devices[0].reduce_mapped(reduction, inputs);
        }
        let bare = without_post(reduction);
        let joined = subtrees_joined(
            &self.devices,
            &shards,
            |device, r| member_mapped(device, &bare, inputs, 0, r),
            |roots| join_roots(reduction, &shards, roots),
        )?;
        Ok(Outcome {
            value: reduction.finish(joined.value, n),
            ..joined
        })
    }
}

/// How a user-defined reduction of `n` elements splits over `parts` devices or ranks:
/// as its built-in problem would ([`plan_for`]), or by canonical subtrees for a custom
/// combine (whose tree the roots must follow).
pub fn mapped_plan(reduction: &redlab_expr::Reduction, n: usize, parts: usize) -> ShardPlan {
    match reduction.problem() {
        Some(problem) => plan_for(problem, n, parts),
        None => redlab_core::shard::plan(n, parts),
    }
}

/// The roots of `reduction` (its `post` left out) over each of `subtrees` on `device`,
/// in order, with their seconds summed. `inputs` hold the whole arrays' elements from
/// `offset` on (one rank's part), and every subtree lies inside them.
pub fn mapped_roots(
    device: &Device,
    reduction: &redlab_expr::Reduction,
    inputs: &[ArrayRef<'_>],
    offset: usize,
    subtrees: &[Range<usize>],
) -> Result<(Vec<Value>, f64), Error> {
    let bare = without_post(reduction);
    let mut roots = Vec::with_capacity(subtrees.len());
    let mut seconds = 0.0;
    for r in subtrees {
        let outcome = member_mapped(device, &bare, inputs, offset, r.clone())?;
        seconds += outcome.seconds;
        roots.push(outcome.value);
    }
    Ok((roots, seconds))
}

/// The roots of every subtree of `shards` (in plan order) joined in tree order, by the
/// built-in problem or by the custom combine itself, then `post`: the result over all
/// `n` elements, with one device's bits.
pub fn join_mapped(
    reduction: &redlab_expr::Reduction,
    shards: &ShardPlan,
    roots: &[Value],
    n: usize,
) -> Result<Value, Error> {
    Ok(reduction.finish(join_roots(reduction, shards, roots)?, n))
}

fn without_post(reduction: &redlab_expr::Reduction) -> redlab_expr::Reduction {
    let mut bare = reduction.clone();
    bare.post = None;
    bare
}

fn join_roots(
    reduction: &redlab_expr::Reduction,
    shards: &ShardPlan,
    roots: &[Value],
) -> Result<Value, CoreError> {
    match &reduction.combine {
        redlab_expr::Combine::Builtin(problem) => tree_join(problem, shards, roots),
        redlab_expr::Combine::Custom { node, acc, .. } => custom_join(node, acc.dtype(), roots),
    }
}

/// `reduction` (its `post` left out) over subtree `r` of the whole arrays on `member`,
/// the map's index shifted to the subtree's start; `inputs` begin at element `offset`.
fn member_mapped(
    member: &Device,
    reduction: &redlab_expr::Reduction,
    inputs: &[ArrayRef<'_>],
    offset: usize,
    r: Range<usize>,
) -> Result<Outcome, Error> {
    let slices: Vec<_> = inputs
        .iter()
        .map(|a| a.slice(r.start - offset, r.end - offset))
        .collect();
    member.reduce_mapped(&reduction.with_index_from(r.start as u64), &slices)
}

/// Every member reducing its subtrees of `shards` with `reduce(member, subtree)`, each on
/// its own host thread, and the roots (in subtree order) joined by `join`: the joined
/// value, the slowest member's seconds, and each member's (its subtrees' seconds summed).
fn subtrees_joined<E>(
    devices: &[Device],
    shards: &ShardPlan,
    reduce: impl Fn(&Device, Range<usize>) -> Result<Outcome, E> + Sync,
    join: impl FnOnce(&[Value]) -> Result<Value, CoreError>,
) -> Result<Outcome, E>
where
    E: Send + From<CoreError>,
{
    let results = on_each_member(devices, |d, device| {
        let mut values = Vec::new();
        let mut seconds = 0.0;
        for r in shards.subtrees_of(d) {
            let outcome = reduce(device, r)?;
            seconds += outcome.seconds;
            values.push(outcome.value);
        }
        Ok::<_, E>((values, seconds))
    });
    let mut roots = Vec::with_capacity(shards.subtrees.len());
    let mut passes = Vec::with_capacity(devices.len());
    for r in results {
        let (values, seconds) = r?;
        roots.extend(values);
        passes.push(seconds);
    }
    Ok(Outcome {
        value: join(&roots)?,
        seconds: passes.iter().copied().fold(0.0, f64::max),
        passes,
    })
}

/// The roots of a built-in problem joined in tree order (argmin/argmax indices offset).
fn tree_join(problem: &Problem, shards: &ShardPlan, roots: &[Value]) -> Result<Value, CoreError> {
    combine(problem, shards, roots)
        .ok_or_else(|| CoreError::Shape("no shard produced a value".into()))
}

/// The roots of a custom combine joined by the combine expression itself, pair by pair
/// in the aligned tree order, as a value of the accumulator type `acc`.
fn custom_join(
    combine: &redlab_expr::types::Node,
    acc: redlab_core::DType,
    roots: &[Value],
) -> Result<Value, CoreError> {
    let roots = roots
        .iter()
        .map(|root| match *root {
            Value::Scalar(s) => Ok(redlab_expr::eval::from_scalar(s)),
            other => Err(CoreError::Shape(format!(
                "a subtree of a custom combine gave {other} instead of a value"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let joined = redlab_expr::host::tree(combine, roots)
        .ok_or_else(|| CoreError::Shape("no shard produced a value".into()))?;
    Ok(Value::Scalar(redlab_expr::eval::to_scalar(joined, acc)))
}

/// Runs `work(d, member)` for every member at once, each on its own host thread, and
/// returns the results in member order (a panicking thread becomes an error).
pub fn on_each_member<T, E>(
    members: &[Device],
    work: impl Fn(usize, &Device) -> Result<T, E> + Sync,
) -> Vec<Result<T, E>>
where
    T: Send,
    E: Send + From<CoreError>,
{
    std::thread::scope(|scope| {
        let work = &work;
        let handles: Vec<_> = members
            .iter()
            .enumerate()
            .map(|(d, member)| scope.spawn(move || work(d, member)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(CoreError::Shape("a device thread panicked".into()).into())
                })
            })
            .collect()
    })
}

impl Backend for Sharded {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Each device reduces its subtrees (kernel time summed per device); `seconds` is the
    /// slowest device's, `passes` holds each device's.
    fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, CoreError> {
        problem.check_input(&data)?;
        let shards = plan_for(problem, data.len(), self.devices.len());
        if shards.subtrees.is_empty() {
            return self.devices[0].backend().reduce(problem, data);
        }
        subtrees_joined(
            &self.devices,
            &shards,
            |device, r| device.backend().reduce(problem, data.slice(r.start, r.end)),
            |roots| tree_join(problem, &shards, roots),
        )
    }

    /// The slowest member's read of its share of the bytes (they read in parallel).
    fn stream_read(&self, data: &[u8]) -> Result<f64, CoreError> {
        let share = data.len().div_ceil(self.devices.len()).max(1);
        let mut slowest: f64 = 0.0;
        for (d, device) in self.devices.iter().enumerate() {
            let start = (d * share).min(data.len());
            let end = ((d + 1) * share).min(data.len());
            slowest = slowest.max(device.backend().stream_read(&data[start..end])?);
        }
        Ok(slowest)
    }
}
