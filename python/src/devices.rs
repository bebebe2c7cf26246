//! Devices opened once per process and shared by every call (opening a GPU builds
//! contexts and caches kernels), the device list as JSON, and the command line run
//! in-process for `redlab.bench` and `redlab.analyze`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use redlab::Device;

use crate::errors;

type Opened = Mutex<HashMap<String, Arc<Device>>>;

fn opened() -> &'static Opened {
    static OPENED: OnceLock<Opened> = OnceLock::new();
    OPENED.get_or_init(Default::default)
}

/// The device called `name` (`cpu`, `opencl:N`, `cuda:N`), opened on first use.
pub fn device(name: &str) -> PyResult<Arc<Device>> {
    if name == "cpu" {
        return cpu();
    }
    let key = name.trim().to_ascii_lowercase();
    let mut map = opened()
        .lock()
        .map_err(|_| errors::device("device table poisoned"))?;
    if let Some(device) = map.get(&key) {
        return Ok(device.clone());
    }
    let device = Arc::new(Device::open(&key, None).map_err(|e| errors::from_redlab(&e))?);
    map.insert(key, device.clone());
    Ok(device)
}

/// CUDA device `ordinal`, as [`device`] opens it, from a table by ordinal (the torch
/// fast path calls this per call; a name built and looked up per call cost more).
pub fn cuda(ordinal: usize) -> PyResult<Arc<Device>> {
    type ByOrdinal = Mutex<Vec<Option<Arc<Device>>>>;
    static BY_ORDINAL: OnceLock<ByOrdinal> = OnceLock::new();
    let table = BY_ORDINAL.get_or_init(Default::default);
    if let Some(device) = table
        .lock()
        .map_err(|_| errors::device("device table poisoned"))?
        .get(ordinal)
        .and_then(Option::clone)
    {
        return Ok(device);
    }
    let device = self::device(&format!("cuda:{ordinal}"))?;
    let mut slots = table
        .lock()
        .map_err(|_| errors::device("device table poisoned"))?;
    if slots.len() <= ordinal {
        slots.resize(ordinal + 1, None);
    }
    slots[ordinal] = Some(device.clone());
    Ok(device)
}

/// The CPU device, without a table lookup (the common case, on the per-call path).
fn cpu() -> PyResult<Arc<Device>> {
    static CPU: OnceLock<Arc<Device>> = OnceLock::new();
    if let Some(cpu) = CPU.get() {
        return Ok(cpu.clone());
    }
    let cpu = Arc::new(Device::open("cpu", None).map_err(|e| errors::from_redlab(&e))?);
    Ok(CPU.get_or_init(|| cpu).clone())
}

/// What `redlab devices --json` prints: the devices here and why others are not.
#[pyfunction]
pub fn devices_json(py: Python<'_>) -> PyResult<String> {
    let report = py
        .allow_threads(redlab::list_devices)
        .map_err(|e| errors::from_redlab(&e))?;
    serde_json::to_string(&report).map_err(errors::device)
}

/// Runs one `redlab` command line in this process: returns the exit code, what it
/// printed, and the one-line message of a failure.
#[pyfunction]
pub fn run_command(py: Python<'_>, args: Vec<String>) -> (u8, String, Option<String>) {
    py.allow_threads(move || {
        let mut printed = Vec::new();
        let argv = std::iter::once("redlab".to_string()).chain(args);
        let ending = redlab::cli::run_args(argv, &mut printed);
        (
            ending.code,
            String::from_utf8_lossy(&printed).into_owned(),
            ending.message,
        )
    })
}
