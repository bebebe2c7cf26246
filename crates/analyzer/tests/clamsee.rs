//! CLamsee sessions: the tutorial's three reduction versions written as sessions of our
//! own (tests/fixtures/clamsee), run as the tutorial describes — the dialect (kernels
//! without a return type, local arrays sized by an argument, `@watch`,
//! `@computeBranchingBehavior`) and the host statements — with the results and the
//! counts the tutorial's comparison describes: version 2 diverges less than version 1
//! but has bank conflicts, version 3 has none; calls in sequence share arrays.

use redlab_analyzer::clamsee;
use redlab_analyzer::session::{self, SessionRun};
use redlab_analyzer::sim::LaunchConfig;

fn run(name: &str) -> SessionRun {
    let path = format!(
        "{}/tests/fixtures/clamsee/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fixture");
    let parsed = clamsee::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    session::run(&parsed, &LaunchConfig::linear(1, 1), &[])
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn floats(run: &SessionRun, array: &str) -> Vec<f32> {
    run.arrays[array]
        .1
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn the_three_versions_run_and_compare_as_the_tutorial_says() {
    let runs: Vec<SessionRun> = [
        "reduce_v1.clamsee",
        "reduce_v2.clamsee",
        "reduce_v3.clamsee",
    ]
    .iter()
    .map(|f| run(f))
    .collect();
    for r in &runs {
        assert!(r.branching);
        // 128 work-items per group, each element 10: every partial is 1280.
        assert_eq!(floats(r, "output"), vec![1280.0; 8]);
        let first = &r.calls[0].pass.report;
        assert!(
            first.metrics.findings.is_empty(),
            "{:?}",
            first.metrics.findings
        );
        assert!(first.config.watch.contains(&"sdata".to_string()));
    }
    let total = |k: usize| runs[k].calls[0].pass.report.metrics.total;
    let (v1, v2, v3) = (total(0), total(1), total(2));
    assert!(
        v2.divergent_branches < v1.divergent_branches,
        "{} vs {}",
        v2.divergent_branches,
        v1.divergent_branches
    );
    assert!(v2.local_load.bank_conflicts + v2.local_store.bank_conflicts > 0);
    assert_eq!(
        v3.local_load.bank_conflicts + v3.local_store.bank_conflicts,
        0
    );
    assert!(v3.divergent_branches <= v2.divergent_branches);
    // Version 3's session reduces the partials again in a second call.
    assert_eq!(runs[2].calls.len(), 2);
    assert_eq!(floats(&runs[2], "total"), vec![10240.0]);
}

#[test]
fn session_mistakes_are_clear_errors() {
    let bad = |text: &str, needle: &str| {
        let e = clamsee::parse(text)
            .and_then(|s| session::run(&s, &LaunchConfig::linear(1, 1), &[]).map(|_| ()))
            .expect_err("rejects");
        assert!(e.to_string().contains(needle), "{e}");
    };
    let kernel =
        "kernel k(global float *a, int n) { local float s[n]; s[0] = a[0]; a[0] = s[0] + n; }\n";
    bad(
        &format!("{kernel}float [4] x; Device.k(x, 4);"),
        "call Device.setGlobalWorkSize first",
    );
    bad(
        &format!(
            "{kernel}Device.setGlobalWorkSize(4,1); Device.setLocalWorkSize(4,1); Device.k(y, 4);"
        ),
        "no array y",
    );
    bad(&format!("{kernel}Device.setGlobalWorkSize(4,1); Device.setLocalWorkSize(4,1); float [4] x; Device.k(x);"), "takes 2 arguments, not 1");
    bad(&format!("{kernel}Device.setGlobalWorkSize(4,1); Device.setLocalWorkSize(4,1); float [4] x; Device.k(x, 0);"), "local array length");
    bad(&format!("{kernel}Device.nosuch(1);"), "no kernel nosuch");
    bad(
        &format!("{kernel}@unknownAnnotation;"),
        "unknown annotation",
    );
    bad("integer n = ;", "cannot read");
    bad("print(4);", "cannot read the host statement");
}
