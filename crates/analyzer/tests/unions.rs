//! Unions: every field at offset 0, so a value written through one field reads back
//! reinterpreted through another; the size is the largest field's; an initializer sets
//! the first field.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNEL: &str = r#"
typedef union { float f; uint u; uchar b[4]; } bits_t;
union wide { uchar c; double d; };

__kernel void bits(__global uint* out) {
    bits_t x;
    x.f = -2.0f;
    out[0] = x.u;
    out[1] = x.b[3];
    bits_t y = { 1.0f };
    out[2] = y.u;
    out[3] = sizeof(bits_t);
    out[4] = sizeof(union wide);
}
"#;

#[test]
fn union_fields_share_their_bytes() {
    let compiled = compile("bits.cl", KERNEL, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("out", vec![0; 4 * 5]));
    let report = launch(
        &compiled.program,
        &compiled.files,
        "bits",
        &[Arg::Global(0)],
        &mut mem,
        &LaunchConfig::linear(1, 1),
    )
    .expect("runs");
    assert!(
        report.metrics.findings.is_empty(),
        "{:#?}",
        report.metrics.findings
    );
    let got: Vec<u32> = mem.global[0]
        .bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(got, vec![(-2.0f32).to_bits(), 0xc0, 1.0f32.to_bits(), 4, 8]);
}
