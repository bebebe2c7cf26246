//! User-defined reductions over several inputs that already lie in device memory (CUDA
//! tensors handed over through DLPack): the kernels read every input where it is, so
//! nothing is copied or packed first. The kernel's buffer is then a table of the inputs'
//! 64-bit addresses ([`table`], [`InputLayout::Addressed`]) in place of the packed
//! regions ([`mapped::pack`]); the map, the kernels and their canonical order are the
//! packed ones, so the bits are too.

use redlab_core::{DType, Problem};
use redlab_expr::codegen::InputLayout;
use redlab_expr::Reduction;

use crate::assembly::{Assembled, Target};
use crate::mapped;
use crate::optype::OpType;

/// Bytes each input's address must be a multiple of: the packed regions' own alignment
/// for whole-word loads of 16 bytes.
pub const ADDRESS_ALIGN: u64 = 16;

/// Checks that `inputs` (address and element type of each) are what the addressed
/// kernels of `reduction` read: one per input the map names, of its type, each aligned
/// to [`ADDRESS_ALIGN`]. One input takes the packed layout, where it is its own buffer.
pub fn check(reduction: &Reduction, inputs: &[(u64, DType)]) -> Result<(), String> {
    if reduction.inputs.len() < 2 {
        return Err("one input is read as its own buffer, not through a table".into());
    }
    if inputs.len() != reduction.inputs.len() {
        return Err(format!(
            "the map reads {} inputs, {} were given",
            reduction.inputs.len(),
            inputs.len()
        ));
    }
    for (k, ((address, dtype), wanted)) in inputs.iter().zip(&reduction.inputs).enumerate() {
        if dtype != wanted {
            return Err(format!("input {k} holds {dtype}, the map reads {wanted}"));
        }
        if address % ADDRESS_ALIGN != 0 {
            return Err(format!(
                "input {k} starts at {address:#x}, not on a {ADDRESS_ALIGN}-byte boundary"
            ));
        }
    }
    Ok(())
}

/// The kernel's buffer: each input's address as a little-endian u64.
pub fn table(inputs: &[(u64, DType)]) -> Vec<u8> {
    inputs
        .iter()
        .flat_map(|(address, _)| address.to_le_bytes())
        .collect()
}

/// The production kernel's section 2 for the addressed inputs of `reduction`.
pub fn decls(reduction: &Reduction) -> Result<(Problem, OpType), String> {
    mapped::decls_for(reduction, InputLayout::Addressed)
}

/// The segment kernels (along axes, over segments) for the addressed inputs of
/// `reduction`: a built-in combine and a map that does not read `i`, as
/// [`mapped::segments_packed`] asks.
pub fn segments(reduction: &Reduction, target: Target) -> Result<(Problem, Assembled), String> {
    if reduction.inputs.len() < 2 || !mapped::maps_inputs_on_device(reduction) {
        return Err(format!(
            "the segment kernels read several inputs by address when they are mapped by a \
             built-in combine without the index `i` (this map: `{}`)",
            reduction.map_text
        ));
    }
    mapped::assemble_mapped_segments(reduction, target, InputLayout::Addressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot() -> Reduction {
        Reduction::builder("x * y", "sum")
            .build(&[DType::F32, DType::F32])
            .expect("a dot product builds")
    }

    #[test]
    fn the_table_holds_each_address_in_order() {
        let t = table(&[(0x1000, DType::F32), (0x20_0000_0010, DType::F32)]);
        assert_eq!(t.len(), 16);
        assert_eq!(
            u64::from_le_bytes(t[..8].try_into().expect("8 bytes")),
            0x1000
        );
        assert_eq!(
            u64::from_le_bytes(t[8..].try_into().expect("8 bytes")),
            0x20_0000_0010
        );
    }

    #[test]
    fn inputs_off_a_boundary_or_of_another_type_are_refused() {
        let r = dot();
        assert!(check(&r, &[(0x1000, DType::F32), (0x2000, DType::F32)]).is_ok());
        let off = check(&r, &[(0x1000, DType::F32), (0x2004, DType::F32)]).expect_err("refused");
        assert!(off.contains("input 1") && off.contains("boundary"), "{off}");
        let ty = check(&r, &[(0x1000, DType::F64), (0x2000, DType::F32)]).expect_err("refused");
        assert!(ty.contains("input 0 holds f64"), "{ty}");
        assert!(check(&r, &[(0x1000, DType::F32)]).is_err());
    }

    #[test]
    fn addressed_kernels_find_each_input_in_the_table_and_packed_ones_by_offset() {
        let r = dot();
        let (_, addressed) = decls(&r).expect("declares");
        let (_, packed) = mapped::decls(&r).expect("declares");
        assert!(addressed
            .source
            .contains("((const __global ulong*)(in))[k]"));
        assert!(!packed.source.contains("((const __global ulong*)(in))[k]"));
        // Everything else is the same program, so the same order and bits.
        assert_eq!(
            addressed
                .source
                .replace(InputLayout::Addressed.region_macro(), ""),
            packed
                .source
                .replace(InputLayout::Packed.region_macro(), "")
        );
        let (_, seg) = segments(&r, Target::Cuda).expect("assembles");
        assert!(seg.source.contains("lift_n((p), (i), 0)"));
        assert!(!seg.source.contains("lift_n((p) + 256"));
    }
}
