//! The [`Backend`] trait every device implements, and the [`DeviceInfo`] it describes
//! itself with.

use serde::Serialize;

use crate::{ArrayRef, Error, Outcome, Problem};

/// A description of one device, for `redlab devices` and benchmark records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceInfo {
    /// The name used to select it (`cpu`, `opencl:0`, `cuda:0`).
    pub id: String,
    /// The backend family (`cpu`, `opencl`, `cuda`).
    pub backend: String,
    /// A human-readable name (the CPU model, the GPU's product name).
    pub name: String,
    /// Parallel units the backend uses (threads, compute units, SMs).
    pub compute_units: usize,
    /// Free-form details, as `key: value` pairs (caches, driver versions, features).
    pub details: Vec<(String, String)>,
}

/// A device that can run reductions.
///
/// Implementations must return results bitwise identical to
/// [`crate::reference::reduce`] for every problem they accept: integers exactly, floats
/// in the canonical order. A problem a backend cannot run is an [`Error`], never a wrong
/// answer or a panic.
pub trait Backend: Send + Sync {
    /// Who this device is.
    fn info(&self) -> &DeviceInfo;

    /// Reduces `data` as `problem` says.
    fn reduce(&self, problem: &Problem, data: ArrayRef<'_>) -> Result<Outcome, Error>;

    /// Streams once through `data` doing the least work that still reads every byte, and
    /// returns the seconds it took: the read roof that reductions are compared with.
    fn stream_read(&self, data: &[u8]) -> Result<f64, Error>;
}
