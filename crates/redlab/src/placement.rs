//! Placement of a reduction over data in host memory (`--device auto`): the CPU reducing
//! it in place, or the GPU after a staged upload. The choice comes from bandwidths
//! measured once per GPU and cached — host→device from pinned and pageable memory, the
//! GPU's reduction over device-resident data, the CPU's over host data — and says why.

use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::generate::{generate, Distribution};
use crate::{DType, Device, Error, Op, Problem};

/// Elements the measurements use (f32, 256 MiB: past every cache).
const MEASURE_N: usize = 1 << 26;

/// Bandwidths measured for one GPU and the host it sits in, GB/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The GPU (`cuda:0`) and its name.
    pub gpu: String,
    /// Its name.
    pub gpu_name: String,
    /// Host→device from page-locked memory.
    pub pinned_gbps: f64,
    /// Host→device from pageable memory.
    pub pageable_gbps: f64,
    /// The GPU reducing data already on it (production kernel, sum of f32).
    pub gpu_gbps: f64,
    /// The CPU reducing host data (sum of f32, all cores).
    pub cpu_gbps: f64,
    /// When (seconds since the Unix epoch).
    pub unix_time: u64,
}

/// Where to reduce, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// `cpu` or the GPU's id.
    pub device: String,
    /// The reasoning, one line per step.
    pub reasons: Vec<String>,
}

fn cache_path(gpu: &str, name: &str) -> Option<PathBuf> {
    let slug: String = format!("{gpu}-{name}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let base = redlab_tune::db::cache_root()?;
    Some(base.join("placement").join(format!("{slug}.json")))
}

/// The cached measurements for `gpu`, or new ones (then cached). `fresh` measures
/// again regardless.
pub fn measured(gpu: &Device, cpu: &Device, fresh: bool) -> Result<(Measured, bool), Error> {
    let info = gpu.info();
    let path = cache_path(&info.id, &info.name);
    if !fresh {
        if let Some(m) = path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Measured>(&t).ok())
        {
            return Ok((m, true));
        }
    }
    let m = measure(gpu, cpu)?;
    if let Some(p) = path {
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(text) = serde_json::to_string_pretty(&m) {
            let _ = std::fs::write(p, text);
        }
    }
    Ok((m, false))
}

fn unavailable(what: impl std::fmt::Display) -> Error {
    Error::Unavailable {
        backend: "auto".into(),
        reason: what.to_string(),
    }
}

fn measure(gpu: &Device, cpu: &Device) -> Result<Measured, Error> {
    let Some(cuda) = gpu.cuda() else {
        return Err(unavailable(format!(
            "{} is not a CUDA device",
            gpu.info().id
        )));
    };
    let data = generate(DType::F32, MEASURE_N, Distribution::Uniform, 1)?;
    let bytes = (MEASURE_N * 4) as f64;
    let problem = Problem::new(Op::Sum, DType::F32, None)?;
    let t = cuda.measure_transfers(MEASURE_N * 4).map_err(unavailable)?;
    let input = cuda.upload(data.view()).map_err(unavailable)?;
    let production = redlab_kernels::registry::find("production")
        .ok_or_else(|| unavailable("no production variant"))?;
    let mut gpu_best = f64::MAX;
    for _ in 0..5 {
        let run = cuda
            .run(&production, &problem, &input, &[])
            .map_err(unavailable)?;
        gpu_best = gpu_best.min(run.passes.iter().sum());
    }
    let mut cpu_best = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        cpu.reduce(&problem, data.view())?;
        cpu_best = cpu_best.min(started.elapsed().as_secs_f64());
    }
    Ok(Measured {
        gpu: gpu.info().id.clone(),
        gpu_name: gpu.info().name.clone(),
        pinned_gbps: t.pinned_gbps,
        pageable_gbps: t.pageable_gbps,
        gpu_gbps: bytes / gpu_best / 1e9,
        cpu_gbps: bytes / cpu_best / 1e9,
        unix_time: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    })
}

/// Fixed costs of a GPU reduction of host data beyond moving the bytes: allocating,
/// launching and reading the result back (measured on the H100 at 2^10 elements to be
/// tens of microseconds; 100 µs keeps small inputs on the CPU).
const GPU_FIXED_S: f64 = 100e-6;

/// Where to reduce `bytes` of host data, given the measurements.
pub fn decide(m: &Measured, bytes: u64) -> Placement {
    let b = bytes as f64;
    let cpu_s = b / (m.cpu_gbps * 1e9);
    // The staged upload overlaps staging with DMA, so the copy runs at the pinned rate;
    // the reduction on the device follows it.
    let gpu_s = b / (m.pinned_gbps * 1e9) + b / (m.gpu_gbps * 1e9) + GPU_FIXED_S;
    let mut reasons = vec![
        format!(
            "measured: CPU reduces host data at {:.1} GB/s; host→device copies run at {:.1} GB/s pinned ({:.1} pageable); {} reduces device data at {:.0} GB/s",
            m.cpu_gbps, m.pinned_gbps, m.pageable_gbps, m.gpu, m.gpu_gbps
        ),
        format!(
            "for {:.1} MB: CPU ≈ {:.3} ms; GPU ≈ {:.3} ms (staged upload + kernel + {:.0} µs fixed)",
            b / 1e6,
            cpu_s * 1e3,
            gpu_s * 1e3,
            GPU_FIXED_S * 1e6
        ),
    ];
    let device = if gpu_s < cpu_s {
        reasons.push(format!(
            "→ {}: {:.2}× faster end to end, the data has to cross the bus either way",
            m.gpu,
            cpu_s / gpu_s
        ));
        m.gpu.clone()
    } else {
        reasons.push(format!(
            "→ cpu: {:.2}× faster; moving the data to the GPU costs more than reducing it here",
            gpu_s / cpu_s
        ));
        "cpu".into()
    };
    Placement { device, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(cpu: f64, pinned: f64) -> Measured {
        Measured {
            gpu: "cuda:0".into(),
            gpu_name: "GPU".into(),
            pinned_gbps: pinned,
            pageable_gbps: pinned / 2.0,
            gpu_gbps: 3000.0,
            cpu_gbps: cpu,
            unix_time: 0,
        }
    }

    #[test]
    fn small_inputs_stay_on_the_cpu_and_a_slow_cpu_sends_large_ones_to_the_gpu() {
        assert_eq!(decide(&m(30.0, 50.0), 1 << 12).device, "cpu");
        let p = decide(&m(30.0, 50.0), 1 << 30);
        assert_eq!(p.device, "cuda:0", "{:?}", p.reasons);
        assert_eq!(
            decide(&m(100.0, 50.0), 1 << 30).device,
            "cpu",
            "a CPU faster than the bus"
        );
        assert!(p.reasons.iter().any(|r| r.contains("pinned")));
    }
}
