//! What a device can do, as far as choosing kernels goes, and the features a variant
//! may need. Backends fill [`Capabilities`] from their device queries.

use serde::Serialize;

/// A device feature some variants need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// `double` arithmetic (`cl_khr_fp64`).
    Fp64,
    /// 64-bit global atomics (`cl_khr_int64_base_atomics` and `_extended_atomics`).
    Int64Atomics,
    /// OpenCL C 2.0 work-group collective functions (`work_group_reduce_*`).
    WorkGroupCollectives,
    /// Sub-groups with collectives (`cl_khr_subgroups`).
    Subgroups,
    /// Intel sub-group block reads (`cl_intel_subgroups`).
    IntelSubgroups,
    /// Sub-groups that are 32-wide warps with `sub_group_shuffle_down` (CUDA), which the
    /// kernels see as `HAVE_SUBGROUP_SHUFFLE`.
    WarpShuffle,
}

impl Feature {
    /// How the feature is named in a skip reason.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::Fp64 => "double precision (cl_khr_fp64)",
            Feature::Int64Atomics => "64-bit atomics (cl_khr_int64_base_atomics/extended_atomics)",
            Feature::WorkGroupCollectives => "work-group collective functions (OpenCL C 2.0)",
            Feature::Subgroups => "sub-groups (cl_khr_subgroups)",
            Feature::IntelSubgroups => "Intel sub-group block reads (cl_intel_subgroups)",
            Feature::WarpShuffle => "32-wide warps with shuffles (CUDA)",
        }
    }
}

/// The facts about a device that decide which variants can run there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Features present.
    pub features: Vec<Feature>,
    /// Compute units (SMs, cores).
    pub compute_units: usize,
    /// Largest work-group.
    pub max_work_group: usize,
    /// Local memory per work-group, in bytes.
    pub local_memory: u64,
    /// The largest cache in front of global memory, in bytes (for cold benchmarking).
    pub cache_bytes: u64,
}

impl Capabilities {
    /// Whether the device has `feature`.
    pub fn has(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }
}
