//! NVRTC without a GPU: a sample of kernels compiles for sm_90 through the translation
//! prelude, and a broken kernel returns NVRTC's log. (CI compiles every build with
//! `redlab check-kernels --backend cuda`.)
//!
//! They need libnvrtc, which a machine without the CUDA toolkit or the nvidia-cuda-nvrtc
//! wheel lacks, so they are marked ignored: `cargo test` reports them as ignored rather
//! than passing without having run. CI installs the wheel and runs them with
//! `cargo test -p redlab-cuda --test nvrtc -- --include-ignored`, where a missing
//! libnvrtc fails them.

use redlab_core::{DType, Op, Problem};
use redlab_cuda::compile;
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::registry;

/// Fails the test when libnvrtc cannot be loaded: an ignored test that is asked to run
/// must run.
fn require_nvrtc() {
    assert!(
        compile::nvrtc_present(),
        "libnvrtc cannot be loaded: put the CUDA toolkit's or the nvidia-cuda-nvrtc wheel's lib folder on LD_LIBRARY_PATH"
    );
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn production_and_sdk_kernels_compile_for_sm_90() {
    require_nvrtc();
    for name in [
        "production",
        "reduce0",
        "khronos-sub-group",
        "builtin-wg-reduce",
    ] {
        let variant = registry::find(name).expect("registered");
        for (op, dtype) in [
            (Op::Sum, DType::F32),
            (Op::Max, DType::F64),
            (Op::Sum, DType::I8),
        ] {
            let problem = Problem::new(op, dtype, None).expect("valid");
            if variant
                .check(&problem, &redlab_cuda::check::cuda_capabilities())
                .is_err()
            {
                continue;
            }
            let source = assembly::assemble(&variant, &problem, &[], &[], Target::Cuda, true)
                .expect("assembles")
                .source;
            let ptx = compile::compile(&source, variant.file, "sm_90")
                .unwrap_or_else(|f| panic!("{name} {problem}:\n{}", f.log));
            let text = String::from_utf8_lossy(&ptx);
            assert!(
                text.contains(".entry reduce"),
                "{name} {problem}: no entry point"
            );
            assert!(
                text.contains(".target sm_90"),
                "{name} {problem}: wrong target"
            );
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn halves_warp_tiles_compile_for_sm_90_with_warp_shuffles() {
    require_nvrtc();
    let variant = registry::find("production").expect("registered");
    for (op, dtype, acc) in [
        (Op::Sum, DType::F16, None),
        (Op::Sum, DType::BF16, None),
        (Op::Sum, DType::F16, Some(DType::F64)),
        (Op::Prod, DType::BF16, None),
    ] {
        let problem = Problem::new(op, dtype, acc).expect("valid");
        let ptx = |upto: u32| {
            let params = [("HALF_WARP_TILES_UPTO", upto), ("WARP_ROWS", 2)];
            let source = assembly::assemble(&variant, &problem, &params, &[], Target::Cuda, true)
                .expect("assembles")
                .source;
            compile::compile(&source, variant.file, "sm_90")
                .unwrap_or_else(|f| panic!("{problem} upto {upto}:\n{}", f.log))
        };
        let without = ptx(0);
        for upto in [2, 8] {
            let with = ptx(upto);
            assert!(String::from_utf8_lossy(&with).contains(".entry reduce"));
            // The setting builds the warp path in (halves had been kept off it).
            assert!(
                with.len() > without.len(),
                "{problem} upto {upto}: no warp path"
            );
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn a_broken_kernel_returns_the_nvrtc_log() {
    require_nvrtc();
    let failure = compile::compile(
        "extern \"C\" __global__ void reduce() { undeclared_name = 1; }",
        "broken.cu",
        "sm_90",
    )
    .expect_err("must not compile");
    assert!(failure.log.contains("undeclared_name"), "{}", failure.log);
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn every_roof_configuration_compiles_for_sm_90() {
    require_nvrtc();
    let prelude = assembly::file("cuda_prelude.h").expect("prelude");
    for unroll in redlab_cuda::roof::UNROLLS {
        for (hint, segments) in redlab_cuda::roof::HINTS
            .into_iter()
            .flat_map(|h| redlab_cuda::roof::SEGMENTS.map(|s| (h, s)))
        {
            let source = redlab_cuda::roof::source(prelude, unroll, hint, segments);
            let ptx = compile::compile(&source, "roof.cl", "sm_90")
                .unwrap_or_else(|f| panic!("roof {unroll} {hint}:\n{}", f.log));
            let text = String::from_utf8_lossy(&ptx);
            assert!(text.contains(".entry roof"), "roof {unroll} {hint}");
            // The streaming hint shows in the PTX as evict-first loads.
            if hint == 1 {
                assert!(text.contains("ld.global.cs"), "roof {unroll}: no .cs loads");
            }
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn every_bulk_copy_roof_ring_compiles_for_sm_90() {
    require_nvrtc();
    let prelude = assembly::file("cuda_prelude.h").expect("prelude");
    for (stages, stage_bytes) in redlab_cuda::roof::BULK_RINGS {
        let source =
            redlab_cuda::roof::bulk_source(prelude, stages, stage_bytes).expect("embedded");
        let ptx = compile::compile(&source, "roof_bulk.cl", "sm_90")
            .unwrap_or_else(|f| panic!("ring {stages}x{stage_bytes}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(text.contains(".entry roof_bulk"), "{stages}x{stage_bytes}");
        assert!(
            text.contains("cp.async.bulk.shared"),
            "{stages}x{stage_bytes}"
        );
        // The ring and its barriers fit the 48 KiB of static shared memory a block has.
        let ring = stages as usize * stage_bytes as usize;
        assert!(
            ring + 8 * stages as usize <= 48 << 10,
            "{stages}x{stage_bytes}"
        );
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn the_stream_path_kernel_takes_the_result_address() {
    require_nvrtc();
    let variant = registry::find("production").expect("registered");
    // Raw results, and results stored converted: an index, a float from its order key,
    // narrowed to f16/bf16.
    for (op, dtype, acc) in [
        (Op::Sum, DType::F32, None),
        (Op::Sum, DType::I32, Some(DType::I64)),
        (Op::Sum, DType::F64, None),
        (Op::Min, DType::I32, None),
        (Op::ArgMax, DType::F32, None),
        (Op::Max, DType::F64, None),
        (Op::Min, DType::F16, None),
        (Op::Max, DType::BF16, None),
    ] {
        let problem = Problem::new(op, dtype, acc).expect("valid");
        let decls = redlab_kernels::codec::Codec::new(&problem)
            .separate_result_decls()
            .expect("stored by the kernel");
        let source =
            assembly::assemble_with(&variant, &problem, &decls, &[], &[], Target::Cuda, true)
                .expect("assembles")
                .source;
        let ptx = compile::compile(&source, variant.file, "sm_90")
            .unwrap_or_else(|f| panic!("{problem}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(
            text.contains("reduce_param_3"),
            "{problem}: no fourth argument"
        );
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn whole_array_statistics_build_into_the_stream_path_kernel() {
    require_nvrtc();
    // The production kernel with the map as lift(), the result after `post` stored in
    // the caller's memory (fourth argument): the mean's division and the norm's square
    // root in the kernel, any's byte, nansum's raw f64.
    let variant = registry::find("production").expect("registered");
    for (name, dtype, needle) in [
        ("mean", DType::F32, "div.rn.f32"),
        ("mean", DType::F16, "div.rn.f32"),
        ("mean", DType::I32, "div.rn.f64"),
        ("nansum", DType::I32, "reduce_param_3"),
        ("norm2", DType::F16, "sqrt.rn.f32"),
        ("any", DType::F32, "st.global.u8"),
        ("count_nonzero", DType::I32, "reduce_param_3"),
        ("nansum", DType::F64, "reduce_param_3"),
    ] {
        let reduction = redlab_expr::stats::reduction(name, dtype).expect("statistic");
        let whole = redlab_kernels::mapped::whole_to_result(&reduction)
            .unwrap_or_else(|e| panic!("{name} {dtype}: {e}"));
        let (problem, decls) = (whole.problem, whole.decls);
        let params: &[(&str, u32)] = if whole.plain {
            &[]
        } else {
            redlab_kernels::mapped::FLOAT_PARAMS
        };
        let source =
            assembly::assemble_with(&variant, &problem, &decls, params, &[], Target::Cuda, true)
                .expect("assembles")
                .source;
        let ptx = compile::compile(&source, variant.file, "sm_90")
            .unwrap_or_else(|f| panic!("{name} {dtype}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(
            text.contains("reduce_param_3"),
            "{name} {dtype}: no result argument"
        );
        assert!(text.contains(needle), "{name} {dtype}: no {needle}");
    }
}

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
fn mapped_statistics_store_their_finished_results_in_place() {
    require_nvrtc();
    // The mean of f32 stores an f32 (the division on the device), the mean of i32 an
    // f64, any a byte (`r != 0`), the norm of f16 an f32 square root; norminf, without
    // a post, the float its max key stands for.
    for (name, dtype, bits, needle) in [
        ("mean", DType::F32, 32, "div.rn.f32"),
        ("mean", DType::I32, 64, "div.rn.f64"),
        ("any", DType::F32, 8, ""),
        ("norm2", DType::F16, 32, "sqrt.rn.f32"),
        ("norminf", DType::F64, 64, ""),
    ] {
        let reduction = redlab_expr::stats::reduction(name, dtype).expect("statistic");
        let (_, assembled, result) =
            redlab_kernels::mapped::segments_to_result(&reduction, Target::Cuda)
                .unwrap_or_else(|e| panic!("{name} {dtype}: {e}"));
        assert_eq!(result.size_bytes() * 8, bits, "{name} {dtype}");
        let ptx = compile::compile(&assembled.source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{name} {dtype}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(text.contains(needle), "{name} {dtype}: no {needle}");
        assert!(
            ["b", "u", "s", "f"]
                .iter()
                .any(|kind| text.contains(&format!("st.global.{kind}{bits} "))),
            "{name} {dtype}: no {bits}-bit store"
        );
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
fn bulk_copy_warp_tiles_export_their_shared_memory_and_fit_it() {
    require_nvrtc();
    let variant = registry::find("production").expect("registered");
    for (dtype, rows, row_bytes) in [(DType::F32, 6, 4096), (DType::F64, 6, 8192)] {
        let problem = Problem::new(Op::Sum, dtype, None).expect("valid");
        let source = assembly::assemble(
            &variant,
            &problem,
            &[("WARP_BULK_ROWS", rows)],
            &[],
            Target::Cuda,
            true,
        )
        .expect("assembles")
        .source;
        let ptx = compile::compile(&source, variant.file, "sm_90")
            .unwrap_or_else(|f| panic!("{problem}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(
            text.contains("cp.async.bulk.shared"),
            "{problem}: no bulk copy"
        );
        assert!(
            text.contains("%dynamic_smem_size"),
            "{problem}: no check of the memory given"
        );
        // The exported size: eight warps' rings (capped so they fit: f64 rows are
        // 8 KiB, so 3 of the 6 asked for) and a barrier word per slot.
        let fit = (225_280 / (8 * (row_bytes + 8))).min(rows as usize);
        let bytes = 8 * fit * (row_bytes + 8);
        assert!(
            text.contains(&format!("redlab_dynamic_shared_bytes = {bytes};")),
            "{problem}: expected {bytes} bytes exported"
        );
        assert!(text.contains("redlab_dynamic_shared_from"), "{problem}");
    }
    // Without the parameter nothing asks for dynamic shared memory.
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let source = assembly::assemble(&variant, &problem, &[], &[], Target::Cuda, true)
        .expect("assembles")
        .source;
    let ptx = compile::compile(&source, variant.file, "sm_90").expect("compiles");
    assert!(!String::from_utf8_lossy(&ptx).contains("redlab_dynamic_shared_bytes"));
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn cluster_finishes_build_for_every_problem_on_sm_90_and_not_before() {
    require_nvrtc();
    let variant = registry::find("production").expect("registered");
    let mut canonical = 0;
    for problem in redlab_cuda::check::all_problems() {
        let source = assembly::assemble(
            &variant,
            &problem,
            &[("CLUSTER_FINISH", 8)],
            &[],
            Target::Cuda,
            true,
        )
        .expect("assembles")
        .source;
        let ptx = compile::compile(&source, variant.file, "sm_90")
            .unwrap_or_else(|f| panic!("{problem}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        // The cluster's shape is part of the kernel, and partials travel through
        // distributed shared memory behind the cluster barrier: on the order-free path
        // and, for inputs of up to eight subtrees, on the canonical one.
        for needle in [".reqnctapercluster 8", "barrier.cluster.wait", "mapa.u64"] {
            assert!(text.contains(needle), "{problem}: {needle} missing");
        }
        canonical += usize::from(problem.dtype.is_float() && problem.op.is_arithmetic());
        // Before sm_90 there are no clusters: the same parameter builds the plain kernel.
        let ptx = compile::compile(&source, variant.file, "sm_80")
            .unwrap_or_else(|f| panic!("{problem} on sm_80:\n{}", f.log));
        assert!(!String::from_utf8_lossy(&ptx).contains("barrier.cluster"));
    }
    assert!(canonical >= 8, "only {canonical} canonical problems");
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn the_generation_kernel_compiles_for_every_type() {
    require_nvrtc();
    for dtype in DType::ALL {
        let source = redlab_kernels::generate::source(dtype, Target::Cuda);
        let ptx = compile::compile(&source, "generate.cl", "sm_90")
            .unwrap_or_else(|f| panic!("generate {dtype}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(
            text.contains(&format!(".entry {}", redlab_kernels::generate::ENTRY_POINT)),
            "{dtype}"
        );
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn the_statistics_kernel_compiles_for_every_state_and_type() {
    use redlab_core::segmented::Selection;
    use redlab_core::shape::{AxisPlan, Layout};
    use redlab_kernels::statistics::{
        program, source, StateKind, TilePlan, COLUMNS_ENTRY_POINT, ENTRY_POINT, KEPT_ENTRY_POINT,
        SHORT_ENTRY_POINT, THREAD_TILES_ENTRY_POINT, WARP_ROWS_ENTRY_POINT,
    };
    require_nvrtc();
    for kind in [
        StateKind::Moments,
        StateKind::ExpSum,
        StateKind::NanMin,
        StateKind::NanMax,
        StateKind::NanMoments,
    ] {
        for dtype in [
            DType::F32,
            DType::F64,
            DType::F16,
            DType::BF16,
            DType::I8,
            DType::U64,
        ] {
            // Columns of 8 and 16 lane classes, and the launch bound, across the types.
            let classes = if dtype == DType::I8 { 8 } else { 16 };
            let mut text = format!(
                "#define ST_MIN_GROUPS 5\n{}",
                source(kind, dtype, Target::Cuda)
            );
            let entries: &[&str] = match kind {
                StateKind::NanMoments => {
                    // Short tiles compact their values that are not NaN in the lanes, or
                    // in each work-item's staged row.
                    text = format!(
                        "#define ST_WIDTH 32\n#define ST_THREAD_WIDTH 16\n#define ST_THREAD_STAGED 1\n{text}"
                    );
                    &[
                        ENTRY_POINT,
                        KEPT_ENTRY_POINT,
                        SHORT_ENTRY_POINT,
                        THREAD_TILES_ENTRY_POINT,
                    ]
                }
                _ => {
                    // The short, column, warp-row and thread-tile kernels too (the
                    // latter staged where its 256 tiles of 32 fit in 40 KiB).
                    let staged = u8::from(dtype.size_bytes() <= 4);
                    text = format!(
                        "#define ST_WIDTH 64\n#define ST_COLUMNS 1\n#define ST_CLASSES {classes}\n#define ST_WARP_ROWS 1\n\
                         #define ST_THREAD_WIDTH 32\n#define ST_THREAD_STAGED {staged}\n{text}"
                    );
                    &[
                        ENTRY_POINT,
                        SHORT_ENTRY_POINT,
                        COLUMNS_ENTRY_POINT,
                        WARP_ROWS_ENTRY_POINT,
                        THREAD_TILES_ENTRY_POINT,
                    ]
                }
            };
            let ptx = compile::compile(&text, "statistics.cl", "sm_90")
                .unwrap_or_else(|f| panic!("{kind:?} {dtype}:\n{}", f.log));
            let text = String::from_utf8_lossy(&ptx);
            for entry in entries {
                assert!(
                    text.contains(&format!(".entry {entry}")),
                    "{kind:?} {dtype} {entry}"
                );
            }
            // The program the library builds for `dims` along `axis`, compiled, with its
            // entry in the PTX.
            let built = |dims: [usize; 2], axis: isize| {
                let axes =
                    AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
                let plan = TilePlan::in_place(Selection::Axes(&axes)).expect("tiles");
                let p = program(kind, dtype, Target::Cuda, &plan);
                let ptx = compile::compile(&p.source, "statistics.cl", "sm_90")
                    .unwrap_or_else(|f| panic!("{kind:?} {dtype} {dims:?}:\n{}", f.log));
                assert!(
                    String::from_utf8_lossy(&ptx).contains(&format!(".entry {}", p.entry)),
                    "{kind:?} {dtype} {dims:?}"
                );
                p
            };
            // nanmean's tiles of at most a row: rows of elements of at most 4 bytes take
            // stat_warp_rows (compacted in each segment's staged row), other rows and
            // columns stat_kept with a one-row stage (rows of 300 and 700, columns of 700).
            if kind == StateKind::NanMoments {
                for (dims, axis) in [([3usize, 700usize], 1isize), ([3, 300], 1), ([700, 3], 0)] {
                    let short = built(dims, axis);
                    if axis == 1 && dtype.size_bytes() <= 4 {
                        assert_eq!(short.entry, WARP_ROWS_ENTRY_POINT, "{dtype} {dims:?}");
                    } else {
                        assert_eq!(short.entry, KEPT_ENTRY_POINT, "{dtype} {dims:?}");
                        assert!(short.source.contains("ST_KEPT_ROWS 1"), "{dtype} {dims:?}");
                    }
                }
            }
            // Rows of 100 take stat_warp_rows with segments of 4 work-items (shuffles
            // within the segment; nanmean's of 8-byte elements take the short kernel):
            // the program the library builds, for every kind.
            let expected = if kind == StateKind::NanMoments && dtype.size_bytes() > 4 {
                SHORT_ENTRY_POINT
            } else {
                WARP_ROWS_ENTRY_POINT
            };
            assert_eq!(
                built([3, 100], 1).entry,
                expected,
                "{kind:?} {dtype} rows of 100"
            );
            // Rows of 3000 take a whole warp each, three elements a lane (nanmean's
            // compact in a work-group's stage).
            if kind != StateKind::NanMoments {
                let long = built([3, 3000], 1);
                assert!(
                    long.entry == WARP_ROWS_ENTRY_POINT
                        && long.source.contains("#define ST_LANE_ROWS 3\n"),
                    "{kind:?} {dtype} rows of 3000"
                );
            }
            // stat_tiles stages its rows with asynchronous copies where elements have
            // 4 bytes or more (16 bytes per copy for contiguous rows).
            // (stat_warp_rows stages elements of at most 4 bytes).
            let staged = dtype.size_bytes() >= 4;
            assert_eq!(
                text.contains("cp.async.cg.shared.global"),
                staged,
                "{kind:?} {dtype}: staged copies"
            );
            // No multiply fused into an add, as the host never fuses (log-sum-exp's
            // canonical exp fuses on purpose, with explicit fma on every backend, so it
            // is not checked).
            if kind != StateKind::ExpSum {
                assert!(
                    !text.contains("fma.rn.f64"),
                    "{kind:?} {dtype}: fused multiply-add"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn atomic_finish_uses_native_atomics_and_no_root_tree() {
    require_nvrtc();
    let variant = registry::find("production").expect("registered");
    // The operator's own atomic on the accumulator's width (integers accumulate in 64
    // bits, f32 min/max in 32-bit keys; min as a maximum of complemented keys, and as
    // an or of complements), and an exchange that takes the value and leaves zero for
    // the next launch.
    for (op, dtype, atomic) in [
        (Op::Min, DType::I32, "atom.global.max.u64"),
        (Op::Min, DType::F32, "atom.global.max.u32"),
        (Op::Max, DType::F64, "atom.global.max.u64"),
        (Op::Sum, DType::I32, "atom.global.add.u64"),
        (Op::And, DType::U32, "atom.global.or.b64"),
        (Op::Xor, DType::I64, "atom.global.xor.b64"),
    ] {
        let problem = Problem::new(op, dtype, None).expect("valid");
        let assemble = |params: &[(&str, u32)]| {
            assembly::assemble(&variant, &problem, params, &[], Target::Cuda, true)
                .expect("assembles")
                .source
        };
        let compiled = |source: &str| {
            let ptx = compile::compile(source, variant.file, "sm_90")
                .unwrap_or_else(|f| panic!("{problem}:\n{}", f.log));
            String::from_utf8_lossy(&ptx).replace("red.global", "atom.global")
        };
        let with = compiled(&assemble(&[("ATOMIC_FINISH", 1)]));
        assert!(with.contains(atomic), "{problem}: no {atomic}");
        assert!(with.contains("atom.global.exch"), "{problem}: no exchange");
        let without = compiled(&assemble(&[]));
        assert!(
            !without.contains(atomic),
            "{problem}: {atomic} without the parameter"
        );
    }
    // Canonical float sums keep their roots: the parameter does not reach them.
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let source = assembly::assemble(
        &variant,
        &problem,
        &[("ATOMIC_FINISH", 1)],
        &[],
        Target::Cuda,
        true,
    )
    .expect("assembles")
    .source;
    let ptx = compile::compile(&source, variant.file, "sm_90").expect("compiles");
    assert!(!String::from_utf8_lossy(&ptx).contains("atom.global.exch"));
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn order_free_selections_load_whole_words() {
    require_nvrtc();
    // Elements of 1, 2 and 4 bytes load chunks as 16-byte words (order_free.h): the
    // order keys of argmin/argmax, the halves' min/max, small integers. 8-byte elements
    // keep the per-element loads, so there the vector load must be absent.
    for (op, dtype, words) in [
        (Op::ArgMax, DType::F32, true),
        (Op::ArgMin, DType::I32, true),
        (Op::ArgMax, DType::U32, true),
        (Op::ArgMin, DType::F16, true),
        (Op::ArgMax, DType::BF16, true),
        (Op::Max, DType::F16, true),
        (Op::Min, DType::BF16, true),
        (Op::Max, DType::I32, true),
        (Op::ArgMin, DType::I8, true),
        (Op::Max, DType::U8, true),
        (Op::Sum, DType::I16, true),
        (Op::Xor, DType::U16, true),
        (Op::ArgMax, DType::F64, false),
        (Op::Max, DType::I64, false),
    ] {
        let problem = Problem::new(op, dtype, None).expect("valid");
        let text = production_ptx(&problem);
        assert_eq!(
            text.contains("ld.global.v4.u32") || text.contains("ld.global.nc.v4.u32"),
            words,
            "{problem}: word loads"
        );
    }
    // Byte sums add a word's parts with dp4a, signed or unsigned as the type is.
    for (dtype, form) in [(DType::I8, "dp4a.s32.s32"), (DType::U8, "dp4a.u32.u32")] {
        let problem = Problem::new(Op::Sum, dtype, None).expect("valid");
        assert!(
            production_ptx(&problem).contains(form),
            "{problem}: no {form}"
        );
    }
}

/// The production kernel for `problem` at its default parameters, built for sm_90.
fn production_ptx(problem: &Problem) -> String {
    let variant = registry::find("production").expect("registered");
    let source = assembly::assemble(&variant, problem, &[], &[], Target::Cuda, true)
        .expect("assembles")
        .source;
    let ptx = compile::compile(&source, variant.file, "sm_90")
        .unwrap_or_else(|f| panic!("{problem}:\n{}", f.log));
    String::from_utf8_lossy(&ptx).into_owned()
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
    // The point of the second build: most of the code is column_words'.
    assert!(
        kept_bytes * 3 < full_bytes,
        "{kept_bytes} bytes of PTX without column_words, {full_bytes} with"
    );
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn a_module_compiled_once_comes_from_the_kernel_cache_afterwards() {
    require_nvrtc();
    // The only test here that goes through compile_module, so the variable cannot
    // reach another test's compile.
    let dir = tempfile::tempdir().expect("temporary folder");
    std::env::set_var("REDLAB_KERNEL_CACHE", dir.path());
    let variant = registry::find("reduce0").expect("registered");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let source = assembly::assemble(&variant, &problem, &[], &[], Target::Cuda, true)
        .expect("assembles")
        .source;
    let first = compile::compile_module(&source, "redlab.cu", "sm_90").expect("compiles");
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("cache folder")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(std::fs::read(&files[0]).expect("cached image"), first);
    // A cached image is what the second compile returns: change the file and see it.
    let mut marked = first.clone();
    let at = marked.len() - 1;
    marked.splice(at..at, b"// cached\n".iter().copied());
    std::fs::write(&files[0], &marked).expect("rewrite");
    let second = compile::compile_module(&source, "redlab.cu", "sm_90").expect("compiles");
    assert_eq!(second, marked);
    // Another source is compiled, not served the first one's image.
    let other = format!("{source}\n// another source\n");
    let third = compile::compile_module(&other, "redlab.cu", "sm_90").expect("compiles");
    assert_eq!(third, first);
    std::env::remove_var("REDLAB_KERNEL_CACHE");
}
