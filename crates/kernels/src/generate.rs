//! Inputs generated on the device (`generate.cl`): the `hashed` distribution of
//! [`redlab_core::hashed`], written in place by each device for its own part of an
//! array, so that arrays larger than one device's memory (or than the host's) can be
//! reduced without a transfer. Each backend builds [`source`] and launches
//! [`ENTRY_POINT`] over a grid of [`grid`] work-items.

use redlab_core::{DType, Value};

use crate::assembly::{self, Target};

/// The kernel's name.
pub const ENTRY_POINT: &str = "generate_hashed";

/// Work-items per work-group of the launch.
pub const WORK_GROUP: usize = 256;

/// The results of reducing parts of a `hashed` array made on the device.
#[derive(Debug, Clone, Default)]
pub struct GeneratedParts {
    /// One result per part, each as if the part were an input of its own.
    pub values: Vec<Value>,
    /// Seconds of generating the data on the device (device events).
    pub generate_s: f64,
    /// Kernel seconds of each repeat of the reductions, summed over the parts (device
    /// events). The data is made once and reduced again in place, so a repeat times the
    /// kernels alone, never a fresh allocation.
    pub kernel_runs: Vec<f64>,
}

impl GeneratedParts {
    /// Records repeat `rep` of the part being reduced (parts in order, each repeated
    /// before the next): its seconds join that repeat's total, its value is the part's
    /// result, and a repeat that disagrees with the part's first result is an error.
    pub fn record(
        &mut self,
        rep: usize,
        seconds: f64,
        value: Value,
    ) -> Result<(), crate::RunError> {
        if self.kernel_runs.len() <= rep {
            self.kernel_runs.resize(rep + 1, 0.0);
        }
        self.kernel_runs[rep] += seconds;
        if rep == 0 {
            self.values.push(value);
            return Ok(());
        }
        match self.values.last() {
            Some(first) if first.same_as(&value) => Ok(()),
            first => Err(crate::RunError::Device(format!(
                "repeated reductions of one generated part disagree: {} then {value}",
                first.map_or("nothing".to_string(), Value::to_string)
            ))),
        }
    }
}

/// Bytes of `len` elements of `dtype`, or the error for a length that overflows.
pub fn byte_len(dtype: DType, len: usize) -> Result<usize, crate::RunError> {
    len.checked_mul(dtype.size_bytes())
        .ok_or_else(|| crate::RunError::Device(format!("{len} elements of {dtype} overflow")))
}

/// The kind and width `generate.cl` takes for `dtype`.
fn kind(dtype: DType) -> (u32, u32) {
    let bits = 8 * dtype.size_bytes() as u32;
    let kind = match dtype {
        DType::F32 => 1,
        DType::F64 => 2,
        DType::F16 => 3,
        DType::BF16 => 4,
        _ => 0,
    };
    (kind, bits)
}

/// The complete source for `dtype` on `target` (CUDA's translation header first).
pub fn source(dtype: DType, target: Target) -> String {
    let (kind, bits) = kind(dtype);
    let mut text = String::new();
    if target == Target::Cuda {
        text.push_str(assembly::file("cuda_prelude.h").unwrap_or_default());
    } else if dtype == DType::F64 {
        text.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    text.push_str(&format!(
        "#define GEN_KIND {kind}\n#define GEN_BITS {bits}\n"
    ));
    text.push_str(assembly::file("generate.cl").unwrap_or_default());
    text
}

/// Work-items of the launch for `len` elements on a device of `compute_units`: enough
/// groups to fill every unit several times over, never more than one item per element
/// (the grid strides over the rest).
pub fn grid(len: usize, compute_units: usize) -> usize {
    let items = compute_units.max(1) * 32 * WORK_GROUP;
    let needed = len.div_ceil(WORK_GROUP) * WORK_GROUP;
    items.min(needed).max(WORK_GROUP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_gets_its_kind_and_width() {
        assert!(source(DType::F64, Target::OpenCl).contains("cl_khr_fp64"));
        assert!(
            source(DType::F16, Target::Cuda).contains("#define GEN_KIND 3\n#define GEN_BITS 16")
        );
        assert!(
            source(DType::I8, Target::OpenCl).contains("#define GEN_KIND 0\n#define GEN_BITS 8")
        );
        assert!(source(DType::U64, Target::OpenCl).contains("GEN_BITS 64"));
        assert_eq!(grid(1, 132), WORK_GROUP);
        assert_eq!(grid(1 << 40, 132), 132 * 32 * WORK_GROUP);
    }
}
