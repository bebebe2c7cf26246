//! NVRTC builds of the axis and segment kernels: results written in place, whole-word
//! loads of maps and of several inputs, inputs read by address, and the build without
//! the column-word kernels.

use super::*;

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn axis_kernels_that_write_results_in_place_store_the_results_width() {
    require_nvrtc();
    // A store of `bits` to global memory, as an integer, untyped or float word.
    let stores = |text: &str, bits: usize| {
        ["u", "s", "b", "f"]
            .iter()
            .any(|kind| text.contains(&format!("st.global.{kind}{bits} ")))
    };
    // i8 max keeps its accumulator in a wide word: the in-place build stores the low
    // byte into the caller's array, which the plain build (8-byte words) never does.
    for (op, dtype, acc) in [
        (Op::Max, DType::I8, None),
        (Op::Xor, DType::U16, None),
        (Op::Min, DType::I32, None),
        (Op::Sum, DType::F32, None),
        (Op::Sum, DType::I32, Some(DType::I64)),
        (Op::Max, DType::F64, None),
        (Op::Min, DType::I64, None),
        (Op::ArgMin, DType::F64, None),
        (Op::Xor, DType::U64, None),
        (Op::ArgMax, DType::F32, None),
        (Op::Min, DType::F16, None),
        (Op::Max, DType::BF16, None),
    ] {
        let problem = Problem::new(op, dtype, acc).expect("valid");
        let raw = redlab_kernels::codec::Codec::new(&problem)
            .in_place_result()
            .expect("results stored in place")
            .bytes();
        let build = |source: &str| {
            let ptx = compile::compile(source, "segments.cl", "sm_90")
                .unwrap_or_else(|f| panic!("{problem}:\n{}", f.log));
            String::from_utf8_lossy(&ptx).into_owned()
        };
        let in_place =
            assembly::assemble_segments_to_result(&problem, &[], Target::Cuda).expect("assembles");
        let text = build(&in_place.source);
        assert!(
            stores(&text, raw * 8),
            "{problem}: no {}-bit store",
            raw * 8
        );
        if raw == 1 {
            let plain =
                assembly::assemble_segments(&problem, &[], Target::Cuda).expect("assembles");
            assert!(!stores(&build(&plain.source), 8), "{problem}");
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn maps_of_two_and_four_byte_inputs_load_whole_words_along_axes() {
    require_nvrtc();
    // Maps of one 2- or 4-byte input lift each element of a word of 4 (MAP_BITS), so
    // column words, word rows and short rows of words load 16 bytes (4-byte elements)
    // or 8 bytes (2-byte elements) at a time; a map of f64 has no such path.
    for (name, dtype, words) in [
        ("mean", DType::F32, Some("v4")),
        ("norm2", DType::F32, Some("v4")),
        ("norminf", DType::F32, Some("v4")),
        ("norm2", DType::F16, Some("v2")),
        ("mean", DType::BF16, Some("v2")),
        ("norm2", DType::F64, None),
    ] {
        let reduction = redlab_expr::stats::reduction(name, dtype).expect("statistic");
        let (_, assembled, _) =
            redlab_kernels::mapped::segments_to_result(&reduction, Target::Cuda)
                .unwrap_or_else(|e| panic!("{name} {dtype}: {e}"));
        assert_eq!(
            assembled.source.contains("#define MAP_BITS"),
            words.is_some(),
            "{name} {dtype}"
        );
        let ptx = compile::compile(&assembled.source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{name} {dtype}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        if let Some(width) = words {
            let loads = text.matches(&format!("ld.global.{width}.u32")).count()
                + text.matches(&format!("ld.global.nc.{width}.u32")).count();
            assert!(loads > 0, "{name} {dtype}: no {width} word loads");
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn maps_of_several_inputs_build_into_the_segment_kernels_with_their_regions() {
    require_nvrtc();
    // Several inputs travel packed, each in its region, which `lift` finds from the
    // length the source holds; one input keeps one program for every length.
    let build = |map: &str, combine: &str, types: &[DType]| {
        redlab_expr::Reduction::builder(map, combine)
            .build(types)
            .expect("builds")
    };
    for (map, combine, types) in [
        ("x * y", "sum", &[DType::F32, DType::F32][..]),
        ("abs(x - y)", "argmax", &[DType::F64, DType::F16]),
        ("x > y ? 1 : 0", "sum", &[DType::I32, DType::BF16]),
    ] {
        let reduction = build(map, combine, types);
        let (_, assembled) = redlab_kernels::mapped::segments_packed(&reduction, Target::Cuda)
            .unwrap_or_else(|e| panic!("{map}: {e}"));
        // The inputs' length comes from the packed buffer's header, not the source.
        assert!(
            assembled.source.contains("((const __global ulong*)(p))[0]"),
            "{map}"
        );
        compile::compile(&assembled.source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{map}:\n{}", f.log));
    }
    let one = build("x * x", "sum", &[DType::F32]);
    let (_, assembled) =
        redlab_kernels::mapped::segments(&one, Target::Cuda).expect("one input builds");
    assert!(
        !assembled.source.contains("UL)"),
        "one input holds no length"
    );
    let by_index = build("x * y + i", "sum", &[DType::F32, DType::F32]);
    assert!(redlab_kernels::mapped::segments_packed(&by_index, Target::Cuda).is_err());
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn custom_combines_build_into_the_segment_kernels() {
    require_nvrtc();
    // The combine and its identity compiled in (`OP_CUSTOM`), one input raw and several
    // packed, over every accumulator type.
    for (map, combine, identity, types) in [
        ("x", "a ^ (b * 3)", "0", &[DType::I32][..]),
        ("x * 2", "a + b * 1.5", "-0.0", &[DType::F32]),
        // Raw 2-byte words of one input, and mapped words of several.
        ("x", "a + b * 1.5", "-0.0", &[DType::F16]),
        ("x * y", "a + b * 1.5", "-0.0", &[DType::F32, DType::F32]),
        ("abs(x - y)", "max(a, b)", "-inf", &[DType::F64, DType::F16]),
        ("x & 255", "a + b", "0", &[DType::U32]),
    ] {
        let reduction = redlab_expr::Reduction::builder(map, combine)
            .identity(identity)
            .build(types)
            .expect("builds");
        let built = if types.len() > 1 {
            redlab_kernels::mapped::segments_packed(&reduction, Target::Cuda)
        } else {
            redlab_kernels::mapped::segments(&reduction, Target::Cuda)
        };
        let (_, assembled) = built.unwrap_or_else(|e| panic!("{combine}: {e}"));
        assert!(
            assembled.source.contains("#define OP_CUSTOM 1"),
            "{combine}"
        );
        compile::compile(&assembled.source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{combine}:\n{}", f.log));
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn several_tensors_read_by_address_build_into_the_production_and_segment_kernels() {
    require_nvrtc();
    // Tensors already on the device: the kernel's buffer is a table of their addresses,
    // which the CUDA translation casts back to pointers.
    let variant = redlab_kernels::mapped::variant().expect("registered");
    for (map, combine, types) in [
        ("x * y", "sum", &[DType::F32, DType::F32][..]),
        ("x * y", "sum", &[DType::F64, DType::F64]),
        ("abs(x - y)", "argmax", &[DType::F64, DType::F16]),
        ("x > y ? 1 : 0", "sum", &[DType::I32, DType::BF16]),
        (
            "x * y + z * i",
            "sum",
            &[DType::F32, DType::F32, DType::F32],
        ),
    ] {
        let reduction = redlab_expr::Reduction::builder(map, combine)
            .build(types)
            .expect("builds");
        let (problem, decls) =
            redlab_kernels::mapped_addressed::decls(&reduction).expect("declares");
        let params = redlab_kernels::mapped::params(&problem, &variant, &[]);
        for params in [params.as_slice(), &[]] {
            let assembled = redlab_kernels::assembly::assemble_with(
                &variant,
                &problem,
                &decls.source,
                params,
                &[],
                Target::Cuda,
                true,
            )
            .expect("assembles");
            compile::compile(&assembled.source, variant.file, "sm_90")
                .unwrap_or_else(|f| panic!("{map}:\n{}", f.log));
        }
        match redlab_kernels::mapped_addressed::segments(&reduction, Target::Cuda) {
            Ok((_, assembled)) => compile::compile(&assembled.source, "segments.cl", "sm_90")
                .map(drop)
                .unwrap_or_else(|f| panic!("{map}:\n{}", f.log)),
            // The index has no place in the segment kernels.
            Err(e) => assert!(map.contains('i') && e.contains("index"), "{map}: {e}"),
        }
        // The stream path's build, storing each output in the caller's array.
        let stored = redlab_kernels::mapped::segments_to_result_for(
            &reduction,
            Target::Cuda,
            redlab_expr::codegen::InputLayout::Addressed,
        );
        match stored {
            Ok((_, assembled, _)) => compile::compile(&assembled.source, "segments.cl", "sm_90")
                .map(drop)
                .unwrap_or_else(|f| panic!("{map}:\n{}", f.log)),
            Err(e) => assert!(
                map.contains('i') || combine == "argmax",
                "{map} {combine}: {e}"
            ),
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn float_sums_of_several_inputs_load_whole_words_along_rows_and_columns() {
    require_nvrtc();
    // Float sums of mapped f32 values read full rows of 128–1024 elements, and columns,
    // as 16-byte words of every input (SEG_MAP_WORD); other combines read lane by lane.
    for (map, combine, types, words) in [
        ("x * y", "sum", &[DType::F32, DType::F32][..], true),
        (
            "x * y - z",
            "sum",
            &[DType::F32, DType::F32, DType::F32],
            true,
        ),
        ("x * y", "sum", &[DType::F16, DType::F32], true),
        ("x * y", "argmax", &[DType::F32, DType::F32], false),
        ("x * y", "sum", &[DType::F64, DType::F64], false),
    ] {
        let reduction = redlab_expr::Reduction::builder(map, combine)
            .build(types)
            .expect("builds");
        let (_, assembled) = redlab_kernels::mapped::segments_packed(&reduction, Target::Cuda)
            .unwrap_or_else(|e| panic!("{map}: {e}"));
        let ptx = compile::compile(&assembled.source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{map}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        for entry in ["short_rows_wide", "column_words"] {
            let start = text.find(&format!(".entry {entry}(")).expect("entry");
            let body = &text[start..];
            let body = &body[..body.find("\n}").expect("entry ends")];
            let wide =
                body.matches("ld.global.v4").count() + body.matches("ld.global.nc.v4").count();
            assert_eq!(
                wide > 0,
                words,
                "{entry}, {map} {combine} {types:?}: {wide} 16-byte loads"
            );
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn the_build_without_column_words_holds_every_other_entry_and_a_fraction_of_the_code() {
    require_nvrtc();
    use redlab_kernels::segments::{COLUMN_WORD_ENTRIES, ENTRY_POINTS, SKIP_COLUMN_WORDS};
    // A float sum: its column_words keeps the canonical class fold, the bulk of the code
    // (order-free operators fold each class as it arrives, a far smaller kernel).
    let reduction = redlab_expr::Reduction::builder("x * x", "sum")
        .build(&[DType::F32])
        .expect("builds");
    let (_, assembled, _) =
        redlab_kernels::mapped::segments_to_result(&reduction, Target::Cuda).expect("assembles");
    let entries = |source: &str| {
        let ptx = compile::compile(source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{}", f.log));
        let text = String::from_utf8_lossy(&ptx).into_owned();
        let present: Vec<&str> = ENTRY_POINTS
            .iter()
            .copied()
            .filter(|name| text.contains(&format!(".entry {name}(")))
            .collect();
        (present, text.len())
    };
    let (all, full_bytes) = entries(&assembled.source);
    assert_eq!(all, ENTRY_POINTS);
    let (kept, kept_bytes) = entries(&format!("{SKIP_COLUMN_WORDS}{}", assembled.source));
    let expected: Vec<&str> = (0..ENTRY_POINTS.len())
        .filter(|e| !COLUMN_WORD_ENTRIES.contains(e))
        .map(|e| ENTRY_POINTS[e])
        .collect();
    assert_eq!(kept, expected);
    // The point of the second build: most of the code is column_words' (for this map,
    // 34% of the PTX is left without it, with row_whole among the rest).
    assert!(
        kept_bytes * 5 < full_bytes * 2,
        "{kept_bytes} bytes of PTX without column_words, {full_bytes} with"
    );
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn inputs_read_by_address_load_their_table_once() {
    require_nvrtc();
    // The production kernel over inputs read by address copies the table of addresses
    // into registers first: its PTX loads each address once, where it had loaded both
    // again beside every element (16 loads of 8 bytes for the unrolled rows of a dot
    // product, results/h100-ncu-dot-paths).
    let variant = redlab_kernels::mapped::variant().expect("registered");
    for types in [
        &[DType::F32, DType::F32][..],
        &[DType::F64, DType::F32, DType::F16],
    ] {
        let map = ["x", "y", "z"][..types.len()].join(" * ");
        let reduction = redlab_expr::Reduction::builder(&map, "sum")
            .build(types)
            .expect("builds");
        let (problem, decls) =
            redlab_kernels::mapped_addressed::decls(&reduction).expect("declares");
        let params = redlab_kernels::mapped::params(&problem, &variant, &[]);
        let assembled = redlab_kernels::assembly::assemble_with(
            &variant,
            &problem,
            &decls.source,
            &params,
            &[],
            Target::Cuda,
            true,
        )
        .expect("assembles");
        let ptx = compile::compile(&assembled.source, variant.file, "sm_90").expect("compiles");
        let ptx = String::from_utf8_lossy(&ptx);
        let table_loads = ptx.matches("ld.global.nc.u64").count();
        assert_eq!(
            table_loads,
            types.len(),
            "{map}: {table_loads} loads of addresses"
        );
    }
}
