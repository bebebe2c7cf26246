//! A barrier orders local memory only with `CLK_LOCAL_MEM_FENCE`: behind a barrier that
//! fences just global memory, a neighbour's local write still races with the read.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNEL: &str = r#"
__kernel void rotate(__global const int* in, __global int* out) {
    __local int s[32];
    uint l = get_local_id(0);
    s[l] = in[get_global_id(0)];
    barrier(FENCE);
    out[get_global_id(0)] = s[(l + 1) % 32];
}
"#;

fn findings(fence: &str) -> Vec<FindingKind> {
    let defines = vec![format!("FENCE={fence}")];
    let compiled = compile("rotate.cl", KERNEL, &defines, &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new(
        "in",
        (0..32i32).flat_map(|i| i.to_le_bytes()).collect(),
    ));
    mem.global.push(Buffer::new("out", vec![0; 128]));
    let report = launch(
        &compiled.program,
        &compiled.files,
        "rotate",
        &[Arg::Global(0), Arg::Global(1)],
        &mut mem,
        &LaunchConfig::linear(32, 32),
    )
    .expect("runs");
    report.metrics.findings.values().map(|f| f.kind).collect()
}

#[test]
fn only_a_local_fence_orders_local_memory() {
    assert!(findings("CLK_LOCAL_MEM_FENCE").is_empty());
    assert!(findings("CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE").is_empty());
    assert!(
        findings("CLK_GLOBAL_MEM_FENCE").contains(&FindingKind::LocalRace),
        "a global-only barrier must leave the local race visible"
    );
}
