//! NVRTC without a GPU: a sample of kernels compiles for sm_90 through the translation
//! prelude, and a broken kernel returns NVRTC's log. (CI compiles every build with
//! `redlab check-kernels --backend cuda`.)
//!
//! They need libnvrtc, which a machine without the CUDA toolkit or the nvidia-cuda-nvrtc
//! wheel lacks, so they are marked ignored: `cargo test` reports them as ignored rather
//! than passing without having run. CI installs the wheel and runs them with
//! `cargo test -p redlab-cuda --test nvrtc -- --include-ignored`, where a missing
//! libnvrtc fails them. The statistics kernels' builds are in `statistics.rs`, the axis
//! and segment kernels' in `axes.rs`.

mod axes;
mod statistics;

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
