//! Who a device is, for the tuning database: backend, family (the file name a database
//! is stored under), architecture and vendor — the levels lookups fall back through.

use redlab_core::DeviceInfo;
use serde::{Deserialize, Serialize};

/// The keys a tuning lookup uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceKey {
    /// `cuda` or `opencl`.
    pub backend: String,
    /// The device family: `nvidia-h100`, `nvidia-h200`, `pocl-cpu` … (a file name).
    pub family: String,
    /// The architecture: `sm_90` on CUDA; on OpenCL the platform and device type.
    pub architecture: String,
    /// `nvidia`, `amd`, `intel`, `pocl` …
    pub vendor: String,
    /// The device's own name.
    pub name: String,
}

fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

fn detail<'a>(info: &'a DeviceInfo, key: &str) -> Option<&'a str> {
    info.details
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

impl DeviceKey {
    /// The keys of a device, from what its backend reports.
    pub fn of(info: &DeviceInfo) -> DeviceKey {
        let name = info.name.clone();
        let platform = detail(info, "platform").unwrap_or("");
        let pocl = platform.contains("Portable Computing Language") || name.starts_with("cpu-");
        let vendor = if info.backend == "cuda" || name.to_ascii_lowercase().contains("nvidia") {
            "nvidia".to_string()
        } else if pocl {
            "pocl".to_string()
        } else {
            let v = detail(info, "vendor").unwrap_or("unknown");
            slug(v.split_whitespace().next().unwrap_or(v))
        };
        let family = if vendor == "nvidia" {
            // "NVIDIA H100 80GB HBM3" → nvidia-h100: the model, not the memory variant.
            let model = name
                .split_whitespace()
                .find(|w| {
                    !w.eq_ignore_ascii_case("nvidia")
                        && !w.eq_ignore_ascii_case("geforce")
                        && !w.eq_ignore_ascii_case("tesla")
                })
                .unwrap_or(&name);
            format!("nvidia-{}", slug(model))
        } else if pocl {
            format!("pocl-{}", slug(name.split('-').next().unwrap_or("cpu")))
        } else {
            slug(&name)
        };
        let architecture = if info.backend == "cuda" {
            detail(info, "compute capability")
                .and_then(|c| c.split('(').nth(1))
                .map(|a| a.trim_end_matches(')').to_string())
                .unwrap_or_else(|| "unknown".into())
        } else {
            slug(&format!("{platform} {}", if pocl { "cpu" } else { "gpu" }))
        };
        DeviceKey {
            backend: info.backend.clone(),
            family,
            architecture,
            vendor,
            name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(backend: &str, name: &str, details: &[(&str, &str)]) -> DeviceInfo {
        DeviceInfo {
            id: format!("{backend}:0"),
            backend: backend.into(),
            name: name.into(),
            compute_units: 1,
            details: details
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn families_architectures_and_vendors() {
        let h100 = DeviceKey::of(&info(
            "cuda",
            "NVIDIA H100 80GB HBM3",
            &[("compute capability", "9.0 (sm_90)")],
        ));
        assert_eq!(
            (
                h100.family.as_str(),
                h100.architecture.as_str(),
                h100.vendor.as_str()
            ),
            ("nvidia-h100", "sm_90", "nvidia")
        );
        let h200 = DeviceKey::of(&info(
            "opencl",
            "NVIDIA H200",
            &[
                ("platform", "NVIDIA CUDA"),
                ("vendor", "NVIDIA Corporation"),
            ],
        ));
        assert_eq!(
            (h200.family.as_str(), h200.architecture.as_str()),
            ("nvidia-h200", "nvidia-cuda-gpu")
        );
        let pocl = DeviceKey::of(&info(
            "opencl",
            "cpu-haswell-AMD EPYC 7B13 64-Core Processor",
            &[
                ("platform", "Portable Computing Language"),
                ("vendor", "AuthenticAMD"),
            ],
        ));
        assert_eq!(
            (pocl.family.as_str(), pocl.vendor.as_str()),
            ("pocl-cpu", "pocl")
        );
    }
}
