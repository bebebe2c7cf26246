//! Finding CUDA devices: the driver library loaded at run time (its absence is a reason,
//! checked before any call), `cuInit`, and each device's facts — name, compute
//! capability, SMs, L2, memory, clocks — as capabilities and as `redlab devices` shows
//! them.

use cudarc::driver::{result, sys};
use redlab_core::DeviceInfo;
use redlab_kernels::{Capabilities, Feature};

use crate::compile;

/// What the driver says about one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Ordinal (`cuda:N`).
    pub ordinal: usize,
    /// Product name.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: usize,
    /// L2 cache bytes.
    pub l2_bytes: u64,
    /// Device memory bytes.
    pub memory_bytes: u64,
    /// SM clock, kHz.
    pub clock_khz: i64,
    /// Memory clock, kHz.
    pub memory_clock_khz: i64,
    /// Memory bus width, bits.
    pub bus_bits: i64,
    /// Largest block.
    pub max_threads_per_block: usize,
    /// Static shared memory per block, bytes.
    pub shared_per_block: u64,
}

impl Query {
    /// The NVRTC architecture of this device (`sm_90`).
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Whether libcuda can be loaded here.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    unsafe { sys::is_culib_present() }
}

fn err(what: &str, e: result::DriverError) -> String {
    let name = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{e:?}"));
    format!("{what}: {name}")
}

/// Initializes the driver and counts devices, or says why there are none.
pub fn count() -> Result<usize, String> {
    if !driver_present() {
        return Err("the CUDA driver library (libcuda) is not installed".into());
    }
    result::init().map_err(|e| err("cuInit failed", e))?;
    let n = result::device::get_count().map_err(|e| err("cuDeviceGetCount failed", e))?;
    Ok(n.max(0) as usize)
}

/// Queries device `ordinal` (after [`count`] succeeded).
pub fn query(ordinal: usize) -> Result<Query, String> {
    let dev = result::device::get(ordinal as i32).map_err(|e| err("cuDeviceGet", e))?;
    let attr = |a: sys::CUdevice_attribute| -> i64 {
        // SAFETY: `dev` is a valid device handle from cuDeviceGet.
        unsafe { result::device::get_attribute(dev, a) }.map_or(0, i64::from)
    };
    use sys::CUdevice_attribute as A;
    Ok(Query {
        ordinal,
        name: result::device::get_name(dev).unwrap_or_else(|_| "?".into()),
        compute_capability: (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) as i32,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) as i32,
        ),
        sms: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).max(1) as usize,
        l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).max(0) as u64,
        // SAFETY: as above.
        memory_bytes: unsafe { result::device::total_mem(dev) }.unwrap_or(0) as u64,
        clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).max(1) as usize,
        shared_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK).max(0) as u64,
    })
}

/// Features every CUDA device has (the prelude supplies the collectives).
pub const FEATURES: [Feature; 5] = [
    Feature::Fp64,
    Feature::Int64Atomics,
    Feature::WorkGroupCollectives,
    Feature::Subgroups,
    Feature::WarpShuffle,
];

/// What the kernel library may assume on a CUDA device: doubles and 64-bit atomics
/// always; sub-groups are warps and work-group collectives are built from them in the
/// translation prelude; there are no Intel block reads.
pub fn capabilities(q: &Query) -> Capabilities {
    Capabilities {
        features: FEATURES.to_vec(),
        compute_units: q.sms,
        max_work_group: q.max_threads_per_block,
        local_memory: q.shared_per_block,
        cache_bytes: q.l2_bytes,
    }
}

/// The device as `redlab devices` shows it.
pub fn describe(q: &Query) -> DeviceInfo {
    let (major, minor) = q.compute_capability;
    // Double data rate: two transfers per memory clock.
    let peak = 2.0 * q.memory_clock_khz as f64 * 1e3 * (q.bus_bits as f64 / 8.0) / 1e9;
    DeviceInfo {
        id: format!("cuda:{}", q.ordinal),
        backend: "cuda".into(),
        name: q.name.clone(),
        compute_units: q.sms,
        details: vec![
            ("compute capability".into(), format!("{major}.{minor} ({})", q.arch())),
            ("SMs".into(), q.sms.to_string()),
            ("L2".into(), format!("{} MiB", q.l2_bytes >> 20)),
            ("memory".into(), format!("{} MiB", q.memory_bytes >> 20)),
            ("SM clock".into(), format!("{} MHz", q.clock_khz / 1000)),
            (
                "memory clock".into(),
                format!(
                    "{} MHz, {}-bit bus (datasheet peak ≈ {peak:.0} GB/s)",
                    q.memory_clock_khz / 1000,
                    q.bus_bits
                ),
            ),
            ("max block".into(), q.max_threads_per_block.to_string()),
            (
                "shared memory per block".into(),
                format!("{} KiB", q.shared_per_block >> 10),
            ),
            (
                "features".into(),
                "fp64, int64-atomics, sub-groups (warps of 32), work-group collectives (from warp shuffles)".into(),
            ),
            (
                "NVRTC".into(),
                if compile::nvrtc_present() {
                    "present".into()
                } else {
                    "missing: kernels cannot be built".into()
                },
            ),
        ],
    }
}

/// Every CUDA device as `redlab devices` shows it, or why there are none.
pub fn list() -> Result<Vec<DeviceInfo>, String> {
    let n = count()?;
    if n == 0 {
        return Err("the CUDA driver reports no devices".into());
    }
    (0..n).map(|i| query(i).map(|q| describe(&q))).collect()
}
