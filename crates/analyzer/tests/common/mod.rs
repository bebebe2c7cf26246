//! What the simulator tests of the segment kernels share.

use redlab_analyzer::segments::SegmentsRun;
use redlab_analyzer::sim::LaunchConfig;
use redlab_analyzer::variant::VariantOptions;

/// Options for `segments::run`: the kernels as OpenCL builds them, or as CUDA does
/// (`shuffles`: `HAVE_SUBGROUP_SHUFFLE`, warp shuffles), on 2 compute units.
pub fn segment_options(shuffles: bool, seed: u64) -> VariantOptions {
    VariantOptions {
        config: LaunchConfig::linear(1, 1),
        params: Vec::new(),
        defines: if shuffles {
            vec!["HAVE_SUBGROUP_SHUFFLE=1".into()]
        } else {
            Vec::new()
        },
        compute_units: 2,
        seed,
    }
}

/// Every finding of `run`'s passes (races, bounds, uninitialized reads, barriers), one
/// line each, after `what`.
pub fn findings(what: &str, run: &SegmentsRun) -> Vec<String> {
    run.passes
        .iter()
        .flat_map(|pass| pass.report.metrics.findings.values())
        .map(|f| format!("{what}: {:?} at line {}: {}", f.kind, f.line, f.message))
        .collect()
}
