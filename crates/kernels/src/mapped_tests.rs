//! Unit tests of [`super`]: declarations of mapped problems, packing of inputs, results
//! computed in place, and the segment sources of maps.

use super::*;
use crate::assembly::{assemble_with, Target};
use redlab_core::DType;

#[test]
fn several_inputs_carry_their_length_in_the_buffer() {
    let dot = Reduction::builder("x * y", "sum")
        .build(&[DType::F32, DType::F64])
        .expect("builds");
    let (x, y) = ([1.0f32, 2.0, 3.0], [4.0f64, 5.0, 6.0]);
    let packed = pack_for_segments(&dot, &[ArrayRef::from_slice(&x), ArrayRef::from_slice(&y)]);
    assert_eq!(&packed[..8], &3u64.to_le_bytes());
    assert!(packed[8..SEGMENTS_PACK_HEADER].iter().all(|&b| b == 0));
    // The regions follow, each 256-byte aligned as the production kernel packs them.
    let regions = &packed[SEGMENTS_PACK_HEADER..];
    assert_eq!(
        regions,
        pack(&dot, &[ArrayRef::from_slice(&x), ArrayRef::from_slice(&y)])
    );
    assert_eq!(&regions[..4], &1.0f32.to_le_bytes());
    assert_eq!(&regions[256..264], &4.0f64.to_le_bytes());
    // One program for every length: nothing of the length is in the source.
    let (_, assembled) = segments_packed(&dot, Target::OpenCl).expect("assembles");
    assert!(assembled.source.contains("((const __global ulong*)(p))[0]"));
}

#[test]
fn float_sums_of_several_inputs_load_words_and_one_input_only_raw_ones() {
    let loads = |map: &str, combine: &str, inputs: &[DType]| {
        let r = Reduction::builder(map, combine)
            .build(inputs)
            .expect("builds");
        let (_, source) = segment_decls(&r, InputLayout::Packed).expect("declares");
        (loads_words(&r), source.contains("#define SEG_MAP_WORD"))
    };
    let (f32, f64, f16) = (DType::F32, DType::F64, DType::F16);
    assert_eq!(loads("x * y", "sum", &[f32, f32]), (true, true));
    assert_eq!(loads("x * y - z", "prod", &[f16, f32, f32]), (true, true));
    // Not f32 values, or not a sum or product: element by element.
    assert!(!loads("x * y", "sum", &[f64, f32]).0);
    assert!(!loads("x * y", "max", &[f32, f32]).0);
    // One input loads raw words of 2 or 4 bytes only: its memory is the caller's,
    // aligned to its elements, so it has no mapped words.
    assert_eq!(loads("x * x", "sum", &[f32]), (true, false));
    assert_eq!(loads("f32(x) * 2", "sum", &[f64]), (false, false));
}

#[test]
fn integer_maps_of_integer_words_are_told_apart() {
    let guarded = |map: &str, combine: &str, input: DType| {
        let r = Reduction::builder(map, combine)
            .build(&[input])
            .expect("builds");
        maps_integer_words(&r)
    };
    // The cases the H200 got wrong, and their neighbours that were right but alike.
    for map in ["x * x", "x * 3", "x + x", "x", "x + 1", "(x + 1) * (x - 1)"] {
        assert!(guarded(map, "sum", DType::I32), "{map}");
    }
    assert!(guarded("x * x", "sum", DType::U32));
    assert!(guarded("x * x", "sum", DType::I16));
    assert!(guarded("x * x", "sum", DType::U16));
    assert!(guarded("abs(x * 3) + 1", "max", DType::U32));
    // Float maps, float inputs, and inputs that are not read as words stay in the
    // kernels.
    assert!(!guarded("x * x", "sum", DType::F32));
    assert!(!guarded("x * 0.5", "sum", DType::I32));
    assert!(!guarded("x != 0 ? 1 : 0", "sum", DType::F32));
    assert!(!guarded("x * x", "sum", DType::I64));
    assert!(!guarded("x * x", "sum", DType::I8));
}

#[test]
fn a_mapped_production_kernel_reads_through_the_map_only() {
    let dot = Reduction::builder("x * y", "sum")
        .build(&[DType::F32, DType::F64])
        .expect("builds");
    let (problem, decls) = decls(&dot).expect("declares");
    assert_eq!(problem.dtype, DType::F64);
    assert!(decls.needs_fp64);
    let v = variant().expect("registered");
    let text = assemble_with(
        &v,
        &problem,
        &decls.source,
        &params(&problem, &v, &[]),
        &[],
        Target::OpenCl,
        true,
    )
    .expect("assembles")
    .source;
    for needle in [
        "#define IN_IS_MAPPED 1",
        "rl_map(in, i, n)",
        "#define lift(p, i) lift_n((p), (i), n)",
        "#define RL_MAP_WORD 2",
        "RL_DMUL(",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
    let packed = pack(
        &dot,
        &[
            ArrayRef::from_slice(&[1.0f32; 3]),
            ArrayRef::from_slice(&[2.0f64; 3]),
        ],
    );
    assert_eq!(packed.len(), 512);
    assert_eq!(&packed[256..264], &2.0f64.to_le_bytes());
}

#[test]
fn custom_combines_declare_their_own_combine_and_identity() {
    let r = Reduction::builder("x", "max(a, b)")
        .identity("-inf")
        .build(&[DType::F32])
        .expect("builds");
    let (problem, d) = decls(&r).expect("declares");
    assert_eq!(problem.acc, DType::F32);
    for needle in [
        "#define OP_CUSTOM 1",
        "rl_max_f(a, b)",
        "#define IDENTITY ((acc_t)as_float(0xff800000u))",
    ] {
        assert!(d.source.contains(needle), "missing {needle}");
    }
}

#[test]
fn custom_combines_of_one_input_of_2_or_4_byte_elements_lift_raw_words() {
    let words = |map: &str, inputs: &[DType]| {
        let r = Reduction::builder(map, "a + b * 1.5")
            .identity("-0.0")
            .build(inputs)
            .expect("builds");
        let (_, source) = segment_decls(&r, InputLayout::Packed).expect("declares");
        (custom_reads_words(&r), source.contains("#define MAP_BITS"))
    };
    let (f32, f64, f16) = (DType::F32, DType::F64, DType::F16);
    assert_eq!(words("x * 2", &[f32]), (true, true));
    assert_eq!(words("x", &[f16]), (true, true));
    // 8-byte elements, several inputs, or a map that reads `i`: element by element.
    assert_eq!(words("f32(x)", &[f64]), (false, false));
    assert_eq!(words("x * y", &[f32, f32]), (false, false));
    assert_eq!(words("x * f32(i)", &[f32]), (false, false));
    // The word's elements convert to the accumulator as `lift_n` converts the element.
    let r = Reduction::builder("x * 2", "a ^ (b * 3)")
        .identity("0")
        .build(&[DType::I32])
        .expect("builds");
    let (_, source) = segment_decls(&r, InputLayout::Packed).expect("declares");
    assert!(source.contains("#define MAP_BITS 4"));
    assert!(
        source.contains("return (long)(rl_map_bits(b));"),
        "{source}"
    );
    assert!(
        source.contains("return (long)(rl_map(in, i, n));"),
        "{source}"
    );
}

#[test]
fn statistics_store_their_finished_type_in_place_where_the_accumulator_allows() {
    let stat = |name, dtype| redlab_expr::stats::reduction(name, dtype).expect("builds");
    // A post over a sum (of f64: integers are mapped to f64 for the mean): applied
    // in the store, in its own type.
    let mean = in_place_result(&stat("mean", DType::I32)).expect("in place");
    assert_eq!(mean.dtype, DType::F64);
    assert!(mean.defines.contains("#define SEG_RESULT_POST 1"));
    assert!(mean.post.contains("rl_post(double r, ulong n)"));
    let any = in_place_result(&stat("any", DType::F32)).expect("in place");
    assert_eq!(
        (any.dtype, any.defines.contains("SEG_RESULT 1")),
        (DType::U8, true)
    );
    // No post: the problem's own form (a max key turned back into the float).
    let inf = in_place_result(&stat("norminf", DType::F32)).expect("in place");
    assert_eq!(inf.dtype, DType::F32);
    assert!(inf.post.is_empty() && !inf.defines.contains("SEG_RESULT_POST"));
    // A post over an index, two inputs, or the index `i`: the host finishes them.
    let refused = [
        Reduction::builder("x * x", "argmax")
            .post("r + 1")
            .build(&[DType::F32]),
        Reduction::builder("x * y", "sum").build(&[DType::F32, DType::F32]),
        Reduction::builder("x * i", "sum").build(&[DType::F32]),
    ];
    for r in refused {
        let r = r.expect("builds");
        assert!(in_place_result(&r).is_none(), "{}", r.describe());
        assert!(segments_to_result(&r, Target::Cuda).is_err());
    }
    let (problem, assembled, dtype) =
        segments_to_result(&stat("norm2", DType::F16), Target::OpenCl).expect("assembles");
    assert_eq!((problem.dtype, dtype), (DType::F32, DType::F32));
    assert!(assembled
        .source
        .contains("#define lift(p, i) lift_n((p), (i), 0)"));
}

#[test]
fn whole_array_statistics_finish_in_the_production_kernel_where_the_result_is_raw() {
    let stat = |name, dtype| redlab_expr::stats::reduction(name, dtype).expect("builds");
    let whole = |name, dtype| whole_to_result(&stat(name, dtype)).expect("fits");
    // The mean's division runs in the last group's store, in the result's own type;
    // its map is the input itself, so the plain sum's kernel reads it (halves
    // widened into an f32 sum, as the map widens them).
    let mean = whole("mean", DType::F32);
    assert_eq!(
        (mean.problem.dtype, mean.dtype, mean.plain),
        (DType::F32, DType::F32, true)
    );
    assert!(mean
        .decls
        .starts_with("#define SEPARATE_RESULT 4\n#define RESULT_POST_T float\n"));
    assert!(mean.decls.contains("rl_post(float r, ulong n)"));
    assert!(!mean.decls.contains("rl_map"));
    let half = whole("mean", DType::F16);
    assert_eq!(
        (half.problem.dtype, half.problem.acc),
        (DType::F16, DType::F32)
    );
    let ints = whole("nansum", DType::I32);
    assert_eq!(
        (ints.problem.dtype, ints.problem.acc, ints.plain),
        (DType::I32, DType::I64, true)
    );
    // Integers' means map to f64 (a conversion: mapped); any/all store a byte.
    let mean = whole("mean", DType::I32);
    assert!(mean.decls.contains("SEPARATE_RESULT 8") && mean.dtype == DType::F64);
    assert!(!mean.plain && mean.decls.contains("rl_map"));
    let any = whole("any", DType::F16);
    assert!(any.decls.contains("RESULT_POST_T uchar") && any.dtype == DType::U8);
    // No post: the accumulator's own bytes are the result.
    let nansum = whole("nansum", DType::F64);
    assert!(!nansum.decls.contains("RESULT_POST_T") && nansum.dtype == DType::F64);
    assert!(!nansum.plain);
    // norminf's max is held as an order key: stored as the float it stands for.
    let inf = whole("norminf", DType::F16);
    assert!(inf.decls.contains("#define SEG_RESULT_KEY 1") && inf.dtype == DType::F32);
    // Two inputs or a post over an index need the host.
    let dot = Reduction::builder("x * y", "sum").build(&[DType::F32, DType::F32]);
    assert!(whole_to_result(&dot.expect("builds")).is_err());
    // The production kernel assembles around it, storing through `rl_post`.
    let norm = whole("norm2", DType::F32);
    let text = assemble_with(
        &variant().expect("registered"),
        &norm.problem,
        &norm.decls,
        &[],
        &[],
        Target::Cuda,
        true,
    )
    .expect("assembles")
    .source;
    assert!(text.contains("RL_STORE_RESULT(v) (*(__global RESULT_POST_T*)result"));
}
