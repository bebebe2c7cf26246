//! Reductions of `hashed` arrays made where they are reduced
//! ([`redlab_core::hashed`]): each GPU writes its own part of the array in its own
//! memory (`generate.cl`) and reduces it there, so the array never exists on the host and
//! can be larger than any one device — or the host — can hold. A group (`cuda:0,1`)
//! cuts the array at aligned subtrees of the canonical order ([`redlab_core::shard`]),
//! exactly as it cuts host data, so the bits are those of the CPU over the whole array.
//!
//! [`reference_hashed`] is the host's answer for the same array, generated and reduced
//! one subtree at a time in parallel, so it needs memory for a few subtrees only.

use std::ops::Range;
use std::time::Instant;

use rayon::prelude::*;
use redlab_core::generate::{generate_range, Distribution};
use redlab_core::shard::{combine, plan, plan_for};
use redlab_core::{reference, Error as CoreError, Problem, Value};
use redlab_kernels::generate::GeneratedParts;
use serde::Serialize;

use crate::sharded::on_each_member;
use crate::{Device, Error};

/// Where one device's time went.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceTimes {
    /// The device.
    pub device: String,
    /// Elements it generated and reduced.
    pub elements: usize,
    /// Seconds generating them (device events; host wall time on the CPU).
    pub generate_s: f64,
    /// Kernel seconds reducing them, one per repeat (device events; host wall time on
    /// the CPU).
    pub kernel_runs_s: Vec<f64>,
}

/// A reduction of a generated array, with where its time went.
#[derive(Debug, Clone)]
pub struct GeneratedOutcome {
    /// The result.
    pub value: Value,
    /// Each device's share and times.
    pub devices: Vec<DeviceTimes>,
    /// Seconds joining the devices' partials in tree order on the host.
    pub combine_s: f64,
    /// Wall seconds of the whole call: generation, reductions, combine.
    pub wall_s: f64,
}

impl GeneratedOutcome {
    /// Each repeat's kernel seconds: its slowest device's (the devices reduce side by
    /// side).
    pub fn kernel_runs(&self) -> Vec<f64> {
        let repeats = self
            .devices
            .iter()
            .map(|d| d.kernel_runs_s.len())
            .max()
            .unwrap_or(0);
        (0..repeats)
            .map(|rep| {
                self.devices
                    .iter()
                    .filter_map(|d| d.kernel_runs_s.get(rep).copied())
                    .fold(0.0, f64::max)
            })
            .collect()
    }

    /// The slowest device's generation seconds.
    pub fn generate_s(&self) -> f64 {
        self.devices
            .iter()
            .map(|d| d.generate_s)
            .fold(0.0, f64::max)
    }
}

/// Reduces the `hashed` array of `n` elements and `seed` on `device`, each device
/// generating its own part in place (the CPU generates on the host) once and reducing
/// it `repeat` times, each repeat timed on its own.
pub fn reduce_hashed(
    device: &Device,
    problem: &Problem,
    n: usize,
    seed: u64,
    repeat: usize,
) -> Result<GeneratedOutcome, Error> {
    let started = Instant::now();
    let members = device.members();
    let shards = plan_for(problem, n, members.map_or(1, <[Device]>::len));
    let (Some(members), false) = (members, shards.subtrees.is_empty()) else {
        // One device, or nothing to split: the whole array as one input.
        let only = device.members().map_or(device, |m| &m[0]);
        let parts = reduce_parts(only, problem, std::slice::from_ref(&(0..n)), seed, repeat)?;
        let devices = vec![times(only, n, &parts)];
        let value = parts.values.into_iter().next().ok_or_else(no_value)?;
        return Ok(GeneratedOutcome {
            value,
            devices,
            combine_s: 0.0,
            wall_s: started.elapsed().as_secs_f64(),
        });
    };
    let results = on_each_member(members, |d, member| {
        reduce_parts(member, problem, &shards.subtrees_of(d), seed, repeat)
    });
    let mut roots = Vec::with_capacity(shards.subtrees.len());
    let mut devices = Vec::with_capacity(members.len());
    for (d, (member, parts)) in members.iter().zip(results).enumerate() {
        let parts = parts?;
        devices.push(times(member, shards.shard(d).len(), &parts));
        roots.extend(parts.values);
    }
    let joined = Instant::now();
    let value = combine(problem, &shards, &roots).ok_or_else(no_value)?;
    Ok(GeneratedOutcome {
        value,
        devices,
        combine_s: joined.elapsed().as_secs_f64(),
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// The host's result for the `hashed` array of `n` elements and `seed`: subtrees of at
/// most about 256 MiB generated and reduced by the reference in parallel, joined in tree
/// order (the canonical result, bit for bit).
pub fn reference_hashed(problem: &Problem, n: usize, seed: u64) -> Result<Value, Error> {
    const PIECE_BYTES: usize = 1 << 30;
    let pieces = (n * problem.dtype.size_bytes())
        .div_ceil(PIECE_BYTES)
        .max(1);
    // `plan` makes at least four subtrees per "device": about 256 MiB each.
    let shards = plan(n, pieces);
    if shards.subtrees.is_empty() {
        let empty = generate_range(problem.dtype, 0, 0, Distribution::Hashed, seed)?;
        return Ok(reference::reduce(problem, empty.view())?);
    }
    let roots = shards
        .subtrees
        .par_iter()
        .map(|r| {
            let part = generate_range(problem.dtype, r.start, r.len(), Distribution::Hashed, seed)?;
            reference::reduce(problem, part.view())
        })
        .collect::<Result<Vec<Value>, CoreError>>()?;
    combine(problem, &shards, &roots).ok_or_else(no_value)
}

fn no_value() -> Error {
    CoreError::Shape("no part produced a value".into()).into()
}

fn times(device: &Device, elements: usize, parts: &GeneratedParts) -> DeviceTimes {
    DeviceTimes {
        device: device.info().id.clone(),
        elements,
        generate_s: parts.generate_s,
        kernel_runs_s: parts.kernel_runs.clone(),
    }
}

/// One device's results for its `ranges` (ordered, adjacent) of the `hashed` array of
/// `seed`, each range reduced as an input of its own, generated in place on GPUs and on
/// the host for the CPU (one process's part of a multi-process run, or one member's),
/// each range reduced `repeat` times in place.
pub fn reduce_parts(
    device: &Device,
    problem: &Problem,
    ranges: &[Range<usize>],
    seed: u64,
    repeat: usize,
) -> Result<GeneratedParts, Error> {
    let gpu_error = |backend: &str, e: redlab_kernels::RunError| CoreError::Backend {
        backend: backend.into(),
        message: e.to_string(),
    };
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        return cuda
            .reduce_hashed(problem, ranges, seed, repeat)
            .map_err(|e| gpu_error("cuda", e).into());
    }
    #[cfg(feature = "opencl")]
    if let Some(opencl) = device.opencl() {
        return opencl
            .reduce_hashed(problem, ranges, seed, repeat)
            .map_err(|e| gpu_error("opencl", e).into());
    }
    let mut parts = GeneratedParts::default();
    for r in ranges {
        let made = Instant::now();
        let data = generate_range(problem.dtype, r.start, r.len(), Distribution::Hashed, seed)?;
        parts.generate_s += made.elapsed().as_secs_f64();
        for rep in 0..repeat.max(1) {
            let outcome = device.backend().reduce(problem, data.view())?;
            parts
                .record(rep, outcome.seconds, outcome.value)
                .map_err(|e| gpu_error("cpu", e))?;
        }
    }
    Ok(parts)
}
