//! `switch` in the simulator: each work-item enters at its own label (or `default`),
//! falls through until `break`, lanes of one warp taking different labels; `continue`
//! inside a switch continues the enclosing loop.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNEL: &str = r#"
__kernel void sw(__global int* out) {
    uint l = get_local_id(0);
    int r = 0;
    switch (l % 5) {
    case 0:
        r += 1;
    case 1:
        r += 10;
        break;
    case 3:
        r += 100;
    default:
        r += 1000;
        break;
    case 4:
        r += 5;
    }
    int acc = 0;
    for (int k = 0; k < 3; k++) {
        switch (k) {
        case 1:
            continue;
        default:
            acc += k;
        }
        acc += 100;
    }
    out[l] = r + 10000 * acc;
}
"#;

#[test]
fn lanes_enter_at_their_label_fall_through_and_break() {
    let compiled = compile("sw.cl", KERNEL, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("out", vec![0; 4 * 10]));
    let report = launch(
        &compiled.program,
        &compiled.files,
        "sw",
        &[Arg::Global(0)],
        &mut mem,
        &LaunchConfig::linear(10, 10),
    )
    .expect("runs");
    assert!(
        report.metrics.findings.is_empty(),
        "{:#?}",
        report.metrics.findings
    );
    let got: Vec<i32> = mem.global[0]
        .bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let per_label = [11, 10, 1000, 1100, 5];
    let want: Vec<i32> = (0..10).map(|l| per_label[l % 5] + 10000 * 202).collect();
    assert_eq!(got, want);
    assert!(
        report.metrics.total.divergent_branches > 0,
        "labels split the warp"
    );
}
