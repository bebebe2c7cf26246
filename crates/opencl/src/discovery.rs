//! Finding OpenCL devices and reading what they can do. The OpenCL library is loaded at
//! run time; its absence, or a library without platforms, is a reason, never a panic.

use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::platform::get_platforms;
use redlab_core::DeviceInfo;
use redlab_kernels::{Capabilities, Feature};

/// An OpenCL device found on this machine, numbered across all platforms.
pub struct Found {
    /// `opencl:N`.
    pub index: usize,
    /// The device handle.
    pub device: Device,
    /// The platform's name.
    pub platform: String,
}

/// The error code cl3 returns when the OpenCL library cannot be loaded.
const LIBRARY_MISSING: i32 = -2000;
/// `CL_PLATFORM_NOT_FOUND_KHR`: the ICD loader found no platform.
const NO_PLATFORM: i32 = -1001;

/// Serializes discovery: PoCL's first device query is not safe to race (two threads
/// opening devices at once saw "no devices" in one of them).
static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every OpenCL device, or why there are none.
pub fn devices() -> Result<Vec<Found>, String> {
    // A panic elsewhere while holding the lock leaves nothing half-done here.
    let _one_at_a_time = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let platforms = get_platforms().map_err(|e| match e.0 {
        LIBRARY_MISSING => "no OpenCL library (libOpenCL.so) could be loaded".to_string(),
        NO_PLATFORM => "no platform found (the OpenCL loader has no installed driver)".to_string(),
        code => format!("listing platforms failed ({code}: {e})"),
    })?;
    if platforms.is_empty() {
        return Err("no platform found".to_string());
    }
    let mut found = Vec::new();
    for platform in platforms {
        let name = platform
            .name()
            .unwrap_or_else(|_| "unknown platform".into());
        // A platform without devices reports an error; it simply contributes none.
        let ids = platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for id in ids {
            found.push(Found {
                index: found.len(),
                device: Device::new(id),
                platform: name.clone(),
            });
        }
    }
    if found.is_empty() {
        return Err("platforms exist but have no devices".to_string());
    }
    Ok(found)
}

/// Reads the capabilities that decide which variants run.
pub fn capabilities(device: &Device) -> Capabilities {
    let extensions = device.extensions().unwrap_or_default();
    let has_ext = |name: &str| extensions.split_whitespace().any(|e| e == name);
    let version = device.version().unwrap_or_default();
    let major: u32 = version
        .strip_prefix("OpenCL ")
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(1);
    let mut features = Vec::new();
    if has_ext("cl_khr_fp64") || device.double_fp_config().unwrap_or(0) != 0 {
        features.push(Feature::Fp64);
    }
    if has_ext("cl_khr_int64_base_atomics") && has_ext("cl_khr_int64_extended_atomics") {
        features.push(Feature::Int64Atomics);
    }
    // Mandatory in OpenCL 2.x; optional in 3.0, where the device says.
    let collectives = match major {
        2 => true,
        m if m >= 3 => device
            .work_group_collective_functions_support()
            .unwrap_or(false),
        _ => false,
    };
    if collectives {
        features.push(Feature::WorkGroupCollectives);
    }
    if has_ext("cl_khr_subgroups") {
        features.push(Feature::Subgroups);
    }
    if has_ext("cl_intel_subgroups") {
        features.push(Feature::IntelSubgroups);
    }
    Capabilities {
        features,
        compute_units: device.max_compute_units().unwrap_or(1).max(1) as usize,
        max_work_group: device.max_work_group_size().unwrap_or(64).max(1),
        local_memory: device.local_mem_size().unwrap_or(0),
        cache_bytes: device.global_mem_cache_size().unwrap_or(0),
    }
}

/// The device as `redlab devices` shows it.
pub fn describe(found: &Found, caps: &Capabilities) -> DeviceInfo {
    let d = &found.device;
    let text = |r: Result<String, opencl3::error_codes::ClError>| r.unwrap_or_else(|_| "?".into());
    let features: Vec<&str> = caps
        .features
        .iter()
        .map(|f| match f {
            Feature::Fp64 => "fp64",
            Feature::Int64Atomics => "int64-atomics",
            Feature::WorkGroupCollectives => "work-group-collectives",
            Feature::Subgroups => "sub-groups",
            Feature::IntelSubgroups => "intel-sub-groups",
            Feature::WarpShuffle => "warp-shuffle",
        })
        .collect();
    let sub_groups = match d.max_num_sub_groups() {
        Ok(n) if n > 0 => format!("up to {n} per work-group"),
        _ => "none".to_string(),
    };
    DeviceInfo {
        id: format!("opencl:{}", found.index),
        backend: "opencl".into(),
        name: text(d.name()).trim().to_string(),
        compute_units: caps.compute_units,
        details: vec![
            ("platform".into(), found.platform.clone()),
            ("vendor".into(), text(d.vendor())),
            ("OpenCL".into(), text(d.version())),
            ("OpenCL C".into(), text(d.opencl_c_version())),
            (
                "features".into(),
                if features.is_empty() {
                    "none".into()
                } else {
                    features.join(", ")
                },
            ),
            ("sub-groups".into(), sub_groups),
            ("max work-group".into(), caps.max_work_group.to_string()),
            (
                "local memory".into(),
                format!("{} KiB", caps.local_memory >> 10),
            ),
            (
                "global memory".into(),
                format!("{} MiB", d.global_mem_size().unwrap_or(0) >> 20),
            ),
            ("extensions".into(), text(d.extensions())),
        ],
    }
}
