//! 3-element vector loads and stores move exactly three elements (12 bytes for floats),
//! as OpenCL specifies, although a `float3` value occupies 16 bytes: `vstore3` must not
//! touch the element after its three, and `vload3` must not read it.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNEL: &str = r#"
__kernel void shift(__global const float* in, __global float* out) {
    uint i = get_global_id(0);
    float3 v = vload3(i, in);
    vstore3(v * 2.0f, i, out);
}
"#;

#[test]
fn vload3_and_vstore3_move_twelve_bytes() {
    let compiled = compile("shift.cl", KERNEL, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    // Two work-items read 6 floats; `out` holds 6 floats and a sentinel after them.
    let input: Vec<u8> = (1..=6).flat_map(|i| (i as f32).to_le_bytes()).collect();
    mem.global.push(Buffer::new("in", input));
    let mut out: Vec<u8> = vec![0; 24];
    out.extend_from_slice(&(-7.5f32).to_le_bytes());
    mem.global.push(Buffer::new("out", out));
    let report = launch(
        &compiled.program,
        &compiled.files,
        "shift",
        &[Arg::Global(0), Arg::Global(1)],
        &mut mem,
        &LaunchConfig::linear(2, 2),
    )
    .expect("runs");
    assert!(
        report.metrics.findings.is_empty(),
        "{:#?}",
        report.metrics.findings
    );
    let got: Vec<f32> = mem.global[1]
        .bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(got, vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0, -7.5]);
}
