//! The production kernel as CUDA builds it (`HAVE_SUBGROUP_SHUFFLE`: 32-wide warps with
//! shuffles), run in the simulator where no GPU is needed: f32/f64 sums and products take
//! one tile per warp (`warp_tiles.h`, forced here at every size with `WARP_TILES_FROM=1`;
//! halves up to `HALF_WARP_TILES_UPTO` tiles) or one per work-group (halves beyond it,
//! and f32/f64 between `WARP_TILES_UPTO` and `WARP_TILES_FROM`, with the one-tile
//! shortcut), everything else the streaming path
//! with its single-group shortcut. Each result must equal the reference bit for bit, and no
//! launch may report a race, out-of-bounds or uninitialized read, or barrier divergence.

use redlab_analyzer::sim::LaunchConfig;
use redlab_analyzer::variant::{self, VariantOptions};
use redlab_core::{DType, Op, Problem};
use redlab_kernels::registry;

/// `NAME=VALUE` settings: the production variant's declared parameters go through the
/// assembly (which writes a `#define` for every parameter, so a `-D` of one would be
/// overridden), anything else is a `-D`.
fn options(settings: &[&str]) -> VariantOptions {
    let production = registry::find("production").expect("the production variant");
    let mut params = Vec::new();
    let mut defines = vec!["HAVE_SUBGROUP_SHUFFLE=1".to_string()];
    for setting in settings {
        let (name, value) = setting.split_once('=').expect("NAME=VALUE");
        if production.params.iter().any(|p| p.name == name) {
            params.push((name.to_string(), value.parse().expect("a number")));
        } else {
            defines.push(setting.to_string());
        }
    }
    VariantOptions {
        config: LaunchConfig::linear(1, 1),
        params,
        defines,
        compute_units: 2,
        seed: 11,
    }
}

fn check(problem: &Problem, n: usize, defines: &[&str], failures: &mut Vec<String>) {
    let production = registry::find("production").expect("the production variant");
    match variant::run(&production, problem, n, &options(defines)) {
        Ok(run) => {
            if let Err(why) = &run.verdict {
                failures.push(format!("{problem} n={n} {defines:?}: {why}"));
            }
            for p in &run.passes {
                for f in p.report.metrics.findings.values() {
                    failures.push(format!(
                        "{problem} n={n} {defines:?}: {:?} at line {}: {}",
                        f.kind, f.line, f.message
                    ));
                }
            }
        }
        Err(e) => failures.push(format!("{problem} n={n} {defines:?}: {e}")),
    }
}

fn problem(op: Op, dtype: DType, acc: Option<DType>) -> Problem {
    Problem::new(op, dtype, acc).expect("valid problem")
}

/// 0, 1, primes, partial words and rows, 2^k ± 1 around the tile (8192) and its rows.
const SIZES: &[usize] = &[0, 1, 3, 1021, 1024, 1025, 8191, 8192, 8193, 16385, 65537];

#[test]
fn warp_tiles_match_the_canonical_order_bit_for_bit() {
    let mut failures = Vec::new();
    let sums = [
        problem(Op::Sum, DType::F32, None),
        problem(Op::Sum, DType::F32, Some(DType::F64)),
        problem(Op::Sum, DType::F64, None),
        problem(Op::Sum, DType::F16, Some(DType::F64)),
    ];
    for p in &sums {
        for &n in SIZES {
            check(p, n, &["WARP_TILES_FROM=1"], &mut failures);
        }
    }
    // Products of many random values end at 0 or infinity; keep them short.
    for dtype in [DType::F32, DType::F64] {
        for n in [1, 5, 255, 257] {
            check(
                &problem(Op::Prod, dtype, None),
                n,
                &["WARP_TILES_FROM=1"],
                &mut failures,
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn halves_as_warp_tiles_match_the_canonical_order_bit_for_bit() {
    // Up to HALF_WARP_TILES_UPTO tiles one group of warps holds every tile (16-byte
    // words of eight halves); 9 tiles take the work-group path with the setting on.
    let mut failures = Vec::new();
    for p in [
        problem(Op::Sum, DType::F16, None),
        problem(Op::Sum, DType::BF16, None),
        problem(Op::Sum, DType::F16, Some(DType::F64)),
    ] {
        for n in [1, 7, 1021, 8192, 8193, 3 * 8192 + 5, 8 * 8192, 9 * 8192 - 1] {
            check(&p, n, &["HALF_WARP_TILES_UPTO=8"], &mut failures);
        }
        check(
            &p,
            16385,
            &["HALF_WARP_TILES_UPTO=2", "WARP_ROWS=2"],
            &mut failures,
        );
    }
    check(
        &problem(Op::Prod, DType::BF16, None),
        257,
        &["HALF_WARP_TILES_UPTO=2"],
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn warp_tiles_merge_subtrees_and_partial_subtrees() {
    // With 256 roots at most, 257 tiles (the last one partial) make subtrees of two tiles
    // and a last subtree of one: the binary counter, the closing from the top and the
    // last group's finish over more roots than one group holds all run.
    let mut failures = Vec::new();
    let n = 256 * 8192 + 5;
    for p in [
        problem(Op::Sum, DType::F32, None),
        problem(Op::Sum, DType::F64, None),
        problem(Op::Sum, DType::F16, None),
    ] {
        check(
            &p,
            n,
            &["MAX_PARTIALS=256", "WARP_TILES_FROM=1"],
            &mut failures,
        );
    }
    // Three tiles per subtree slot across fewer warps than subtrees.
    check(
        &problem(Op::Sum, DType::F32, None),
        40 * 8192 + 3,
        &["MAX_PARTIALS=256", "WARP_ROWS=1", "WARP_TILES_FROM=2"],
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn warp_tiles_loading_ahead_keep_the_canonical_order() {
    // 16 warps (2 groups) over 41 one-tile subtrees: warps 0–8 load ahead into their
    // next subtrees, and the last tile is partial (40·8192 + 3), so loading ahead stops
    // before it; with 42 whole tiles it runs to the end.
    let mut failures = Vec::new();
    let ahead = ["GROUPS_PER_CU=1", "WARP_TILES_FROM=1", "WARP_PREFETCH=1"];
    for p in [
        problem(Op::Sum, DType::F32, None),
        problem(Op::Sum, DType::F64, None),
        problem(Op::Sum, DType::F32, Some(DType::F64)),
    ] {
        for (n, rows) in [(40 * 8192 + 3, "WARP_ROWS=4"), (42 * 8192, "WARP_ROWS=2")] {
            check(&p, n, &[&ahead[..], &[rows]].concat(), &mut failures);
        }
    }
    // 257 tiles under 256 roots: subtrees of two tiles, loaded ahead within a subtree.
    check(
        &problem(Op::Sum, DType::F32, None),
        256 * 8192 + 5,
        &[&ahead[..], &["MAX_PARTIALS=256", "WARP_ROWS=1"]].concat(),
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn group_tiles_with_shuffles_match_the_canonical_order() {
    // A work-group per tile, with the one-tile shortcut at n ≤ 8192: halves by default,
    // f32/f64 between WARP_TILES_UPTO and WARP_TILES_FROM (here: everywhere).
    let mut failures = Vec::new();
    for p in [
        problem(Op::Sum, DType::F32, None),
        problem(Op::Sum, DType::F64, None),
        problem(Op::Sum, DType::BF16, None),
        problem(Op::Sum, DType::F16, Some(DType::F64)),
    ] {
        for &n in &[0, 1, 1021, 8192, 8193, 65537] {
            check(
                &p,
                n,
                &["WARP_TILES_UPTO=0", "WARP_TILES_FROM=0"],
                &mut failures,
            );
        }
        // The defaults: warps up to 8 tiles, groups for 9.
        check(&p, 3 * 8192 + 1, &[], &mut failures);
        check(&p, 9 * 8192, &[], &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn streaming_path_with_shuffles_is_exact() {
    let mut failures = Vec::new();
    for (op, dtype) in [
        (Op::Sum, DType::I32),
        (Op::Min, DType::I32),
        (Op::Max, DType::F32),
        (Op::Min, DType::F64),
        (Op::ArgMax, DType::F32),
        (Op::Xor, DType::U64),
    ] {
        for &n in &[0, 1, 7, 8193, 65537] {
            check(&problem(op, dtype, None), n, &[], &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
