//! A private array is bounds-checked against its own length: writing one element past
//! its end is an out-of-bounds error naming the array, not a silent change to the
//! variable that happens to follow it in the work-item's private memory.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNEL: &str = r#"
__kernel void spill(__global int* out, int n) {
    int a[4];
    int after = 7;
    for (int k = 0; k < n; k++)
        a[k] = k;
    out[get_global_id(0)] = a[0] + after;
}
"#;

fn run(n: i32) -> (Vec<(FindingKind, String)>, Vec<i32>) {
    let compiled = compile("spill.cl", KERNEL, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("out", vec![0; 8]));
    let report = launch(
        &compiled.program,
        &compiled.files,
        "spill",
        &[
            Arg::Global(0),
            Arg::Scalar(redlab_analyzer::value::Value::Int(
                redlab_analyzer::types::Scalar::Int,
                n as u64,
            )),
        ],
        &mut mem,
        &LaunchConfig::linear(2, 2),
    )
    .expect("runs");
    let findings = report
        .metrics
        .findings
        .values()
        .map(|f| (f.kind, f.message.clone()))
        .collect();
    let out = mem.global[0]
        .bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    (findings, out)
}

#[test]
fn writing_past_a_private_array_is_out_of_bounds() {
    let (findings, out) = run(4);
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(out, vec![7, 7]);
    let (findings, _) = run(5);
    let oob: Vec<&String> = findings
        .iter()
        .filter(|(k, _)| *k == FindingKind::OutOfBounds)
        .map(|(_, m)| m)
        .collect();
    assert!(
        oob.iter().any(|m| m.contains("private variable 'a'")),
        "{findings:?}"
    );
}
