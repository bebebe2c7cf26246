//! Golden counts for the SDK's reduce0, reduce1 and reduce2 (seed 002), derived by hand
//! from their indexing below, at two work-group sizes. Each test runs the kernel as the
//! project assembles it (sum of f32: 4-byte partials, so one element is one bank word)
//! over two work-groups, `n` = global size, warps of 32 lanes and 32 banks.
//!
//! Shared structure, per work-group of WG work-items, W = WG/32 warps, L = log2(WG)
//! tree steps:
//! - branch instances per warp: the `?:` of LOAD_OR_IDENTITY (1), the loop condition
//!   (L + 1 evaluations), the `if` in the loop (L), the final `if (lid == 0)` (1), so
//!   W·(2L + 3) per group; the `?:` never diverges (every index is below n) and the
//!   final `if` diverges in warp 0 only;
//! - barriers: one before the loop and one per step, 1 + L per group;
//! - global memory: each warp loads 32 consecutive floats (1 request, 128 bytes = 4
//!   sectors) and warp 0 stores one partial (1 request, 1 sector);
//! - local memory: every warp stores its 32 elements once (1 request, 1 wavefront), and
//!   warp 0 reads sdata[0] at the end (1 request, 1 wavefront).

use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::Counters;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};
use redlab_analyzer::types::Scalar;
use redlab_analyzer::value::Value;
use redlab_analyzer::{compile, project_headers, variant};
use redlab_core::{DType, Op, Problem};
use redlab_kernels::registry;

/// Runs `name` over two groups of `wg` and returns the totals.
fn counts(name: &str, wg: usize) -> Counters {
    let v = registry::find(name).expect("registered");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let source = variant::source(&v, &problem, &[("WG", wg as u32)], true).expect("assembles");
    let compiled = compile(name, &source, &[], &project_headers).expect("compiles");
    let n = 2 * wg;
    let mut mem = Memory::default();
    let input: Vec<u8> = (0..n)
        .flat_map(|i| (i as f32 * 0.25 - 3.0).to_le_bytes())
        .collect();
    mem.global.push(Buffer::new("in", input));
    mem.global.push(Buffer::new("out", vec![0; 8]));
    let args = [
        Arg::Global(0),
        Arg::Global(1),
        Arg::Scalar(Value::Int(Scalar::ULong, n as u64)),
    ];
    let cfg = LaunchConfig::linear(n, wg);
    let run = launch(
        &compiled.program,
        &compiled.files,
        "reduce",
        &args,
        &mut mem,
        &cfg,
    )
    .expect("runs");
    assert!(
        run.metrics.findings.is_empty(),
        "{:?}",
        run.metrics.findings
    );
    // The kernel is correct, too: each group's partial is its sum.
    for g in 0..2 {
        let want: f32 = (g * wg..(g + 1) * wg).map(|i| i as f32 * 0.25 - 3.0).sum();
        let got = f32::from_le_bytes(
            mem.global[1].bytes[4 * g..4 * g + 4]
                .try_into()
                .expect("4 bytes"),
        );
        assert!(
            (got - want).abs() <= 1e-3 * want.abs().max(1.0),
            "group {g}: {got} vs {want}"
        );
    }
    run.metrics.total
}

/// Checks the totals of two groups against per-group numbers.
#[allow(clippy::too_many_arguments)]
fn assert_per_group(c: &Counters, wg: usize, divergent: u64, load: (u64, u64), store: (u64, u64)) {
    let w = (wg / 32) as u64;
    let l = wg.trailing_zeros() as u64;
    assert_eq!(c.branches, 2 * w * (2 * l + 3), "branches");
    assert_eq!(c.divergent_branches, 2 * divergent, "divergent branches");
    assert_eq!(
        (c.local_load.requests, c.local_load.wavefronts),
        (2 * load.0, 2 * load.1),
        "local loads (requests, wavefronts)"
    );
    assert_eq!(
        c.local_load.bank_conflicts,
        2 * (load.1 - load.0),
        "local load conflicts"
    );
    assert_eq!(
        (c.local_store.requests, c.local_store.wavefronts),
        (2 * store.0, 2 * store.1),
        "local stores (requests, wavefronts)"
    );
    assert_eq!(
        c.local_store.bank_conflicts,
        2 * (store.1 - store.0),
        "local store conflicts"
    );
    assert_eq!(
        (c.global_load.requests, c.global_load.sectors),
        (2 * w, 2 * 4 * w),
        "global loads"
    );
    assert_eq!(
        (c.global_store.requests, c.global_store.sectors),
        (2, 2),
        "global stores"
    );
    assert_eq!(c.barriers, 2 * (1 + l), "barriers");
}

/// reduce0: step s (1, 2, …, WG/2) runs the body on lanes with lid % 2s == 0.
/// - Divergence: for s ≤ 16 every warp has lane 0 in and lane 1 out (5 steps × W warps);
///   for s ≥ 32 only lane 0 of warps with 32w % 2s == 0 is in, so those warps diverge
///   and the others skip the body: WG = 64 → s = 32: warp 0 (1); WG = 256 → s = 32: 4
///   warps, 64: 2, 128: 1 (7). Plus the final `if`: 64 → 5·2 + 1 + 1 = 12;
///   256 → 5·8 + 7 + 1 = 48.
/// - Banks: active lanes are 2s words apart, at most 32/2s of them per warp, so every
///   bank sees at most one word: no conflicts. Each warp that runs the body makes 2
///   loads and 1 store: (5W + X) warp-steps with X = 1 (64) or 7 (256): loads
///   2·11 + 1 = 23 (64) and 2·47 + 1 = 95 (256); stores 11 + 2 = 13 and 47 + 8 = 55.
#[test]
fn reduce0_diverges_in_every_warp_without_bank_conflicts() {
    assert_per_group(&counts("reduce0", 64), 64, 12, (23, 23), (13, 13));
    assert_per_group(&counts("reduce0", 256), 256, 48, (95, 95), (55, 55));
}

/// reduce1: step s runs lanes with index = 2·s·lid < WG, i.e. lid < A = WG/2s.
/// - Divergence: a warp splits only when A falls inside it, A < 32: that is warp 0 at
///   the 5 steps with A = 16, 8, 4, 2, 1; plus the final `if`: 6 at both sizes.
/// - Banks: active lanes are 2s words apart, so they reach P = 32/gcd(2s, 32) banks
///   (16/s for s < 16, else 1) and a warp with c active lanes needs ⌈c/P⌉ wavefronts.
///   WG = 64, per access (warp 0 only): s = 1: c 32, P 16 → 2; s = 2: 16/8 → 2;
///   s = 4: 8/4 → 2; s = 8: 4/2 → 2; s = 16: 2/1 → 2; s = 32: 1 → 1; 11 wavefronts
///   over 6 requests. Two loads and one store per step, plus the first store per warp
///   and the final load: loads 13 requests / 23 wavefronts, stores 8 / 13.
///   WG = 256: s = 1: 4 warps × 2; s = 2: 2 warps × 4; s = 4: 1 × 8; s = 8: c 16, P 2
///   → 8; s = 16: c 8, P 1 → 8; then 4, 2, 1: 47 wavefronts over 12 requests; loads
///   25 / 95, stores 20 / 55.
#[test]
fn reduce1_removes_divergence_and_adds_bank_conflicts() {
    assert_per_group(&counts("reduce1", 64), 64, 6, (13, 23), (8, 13));
    assert_per_group(&counts("reduce1", 256), 256, 6, (25, 95), (20, 55));
}

/// reduce2: step s = WG/2, WG/4, …, 1 runs lanes lid < s, reading sdata[lid] and
/// sdata[lid + s]: consecutive words, one wavefront each, no conflicts.
/// - Divergence: warp 0 splits at s = 16, 8, 4, 2, 1; plus the final `if`: 6.
/// - Requests: ⌈s/32⌉ warps per step: WG = 64: 6 warp-steps → loads 2·6 + 1 = 13,
///   stores 6 + 2 = 8; WG = 256: 4 + 2 + 1 + 5 = 12 → loads 25, stores 20 — the same
///   requests as reduce1 with a wavefront each.
#[test]
fn reduce2_has_neither_divergence_in_full_warps_nor_conflicts() {
    assert_per_group(&counts("reduce2", 64), 64, 6, (13, 13), (8, 8));
    assert_per_group(&counts("reduce2", 256), 256, 6, (25, 25), (20, 20));
}
