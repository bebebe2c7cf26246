//! Devices by name: opening one (`cpu`, later `opencl:N`, `cuda:N`) and listing what is
//! present, with the reason for each backend that is not.

use redlab_core::{ArrayRef, Backend, DeviceInfo, Outcome, Problem};
use redlab_cpu::CpuBackend;
use serde::Serialize;

use crate::Error;

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
}

/// The GPU backends this build does not contain yet, with the reason shown to users.
fn missing_backends() -> Vec<Unavailable> {
    ["opencl", "cuda"]
        .into_iter()
        .map(|backend| Unavailable {
            backend: backend.to_string(),
            reason: "this build of redlab has no support for this backend yet".to_string(),
        })
        .collect()
}

/// Lists the devices present and the backends that are not usable.
pub fn list_devices() -> Result<DeviceReport, Error> {
    let cpu = CpuBackend::new(None)?;
    Ok(DeviceReport {
        devices: vec![cpu.info().clone()],
        unavailable: missing_backends(),
    })
}

/// An opened device.
pub struct Device {
    backend: Box<dyn Backend>,
}

impl Device {
    /// Opens a device by name: `cpu` (all cores). `threads` limits CPU worker threads.
    pub fn open(name: &str, threads: Option<usize>) -> Result<Device, Error> {
        let lower = name.trim().to_ascii_lowercase();
        let family = lower.split(':').next().unwrap_or_default();
        match family {
            "cpu" if lower == "cpu" || lower == "cpu:0" => Ok(Device {
                backend: Box::new(CpuBackend::new(threads)?),
            }),
            "opencl" | "cuda" => {
                let missing = missing_backends();
                let reason = missing
                    .iter()
                    .find(|u| u.backend == family)
                    .map(|u| u.reason.clone())
                    .unwrap_or_default();
                Err(Error::Unavailable {
                    backend: family.to_string(),
                    reason,
                })
            }
            _ => Err(Error::UnknownDevice(name.to_string())),
        }
    }

    /// Who the device is.
    pub fn info(&self) -> &DeviceInfo {
        self.backend.info()
    }

    /// The backend behind the device.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// Reduces `data` as `problem` says.
    pub fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, Error> {
        Ok(self.backend.reduce(problem, data)?)
    }
}
