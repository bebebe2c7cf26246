//! Planted bugs in kernels a user might write, each found with its kind, line,
//! work-item and work-group — and the fixed kernel comes out clean, so the checks are
//! not just noise.

use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::{Finding, FindingKind};
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};
use redlab_analyzer::types::Scalar;
use redlab_analyzer::value::Value;
use redlab_analyzer::{compile, AnalyzeError};

/// A tree reduction over 64 work-items; `BUG` selects the planted bug.
const KERNEL: &str = r#"
__kernel void tree(__global const float* in, __global float* out, uint n) {
    __local float s[64];
    uint lid = get_local_id(0);
    uint gid = get_global_id(0);
#if BUG == 4
    if (lid > 0)
#endif
    s[lid] = in[gid];
#if BUG == 3
    s[lid] += in[gid + 1];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = 32; w > 0; w >>= 1) {
        if (lid < w) {
            s[lid] += s[lid + w];
#if BUG == 2
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
        }
#if BUG != 1
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
    if (lid == 0)
        out[get_group_id(0)] = s[0];
}
"#;

fn run(bug: u32) -> Result<(Vec<Finding>, Vec<f32>), AnalyzeError> {
    let defines = vec![format!("BUG={bug}")];
    let compiled = compile("tree.cl", KERNEL, &defines, &|_, _| Ok(None))?;
    let mut mem = Memory::default();
    let input: Vec<u8> = (0..128).flat_map(|i| (i as f32).to_le_bytes()).collect();
    mem.global.push(Buffer::new("in", input));
    mem.global.push(Buffer::new("out", vec![0; 8]));
    let args = [
        Arg::Global(0),
        Arg::Global(1),
        Arg::Scalar(Value::Int(Scalar::UInt, 128)),
    ];
    let report = launch(
        &compiled.program,
        &compiled.files,
        "tree",
        &args,
        &mut mem,
        &LaunchConfig::linear(128, 64),
    )?;
    let out = mem.global[1]
        .bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    Ok((report.metrics.findings.into_values().collect(), out))
}

fn only(findings: &[Finding], kind: FindingKind) -> &Finding {
    let of_kind: Vec<&Finding> = findings.iter().filter(|f| f.kind == kind).collect();
    assert!(!of_kind.is_empty(), "no {kind:?} in {findings:#?}");
    of_kind[0]
}

#[test]
fn the_correct_kernel_is_clean_and_right() {
    let (findings, out) = run(0).expect("runs");
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(
        out,
        [(0..64).sum::<i32>() as f32, (64..128).sum::<i32>() as f32]
    );
}

#[test]
fn a_missing_barrier_is_a_race() {
    let (findings, _) = run(1).expect("runs");
    let f = only(&findings, FindingKind::LocalRace);
    assert_eq!(f.line, 16, "{f:?}");
    assert!(f.message.contains("no barrier between"), "{}", f.message);
    assert_eq!(f.work_group, [0, 0, 0]);
}

#[test]
fn a_barrier_inside_a_divergent_branch_is_found() {
    let (findings, _) = run(2).expect("runs");
    let f = only(&findings, FindingKind::BarrierDivergence);
    assert_eq!(f.line, 18, "{f:?}");
    assert!(
        f.message.contains("reached by 32 of 64 work-items"),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("[32, 0, 0] is not there"),
        "{}",
        f.message
    );
}

#[test]
fn an_out_of_bounds_read_names_the_buffer() {
    let (findings, _) = run(3).expect("runs");
    let f = only(&findings, FindingKind::OutOfBounds);
    assert_eq!(
        (f.line, f.work_item, f.work_group, f.count),
        (11, [127, 0, 0], [1, 0, 0], 1),
        "{f:?}"
    );
    assert!(
        f.message.contains("bytes 512..516 of in (512 bytes)"),
        "{}",
        f.message
    );
}

#[test]
fn an_uninitialized_local_read_is_found() {
    let (findings, _) = run(4).expect("runs");
    let f = only(&findings, FindingKind::UninitializedLocalRead);
    // Work-item 0 skipped its store, then reads s[0] at the step w = 32.
    assert_eq!((f.line, f.work_item), (16, [0, 0, 0]), "{f:?}");
    assert_eq!(f.count, 2, "work-item 0 of each group");
}

#[test]
fn source_errors_name_line_and_column() {
    let err = compile(
        "bad.cl",
        "__kernel void k(__global int* a) {\n  a[0] = ;\n}",
        &[],
        &|_, _| Ok(None),
    )
    .expect_err("fails");
    assert_eq!(
        err.to_string(),
        "bad.cl:2:10: expected an expression, found ';'"
    );
    let compiled = compile(
        "k.cl",
        "__kernel void k(__global int* a) { a[0] = nosuch(1); }",
        &[],
        &|_, _| Ok(None),
    )
    .expect("parses");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("a", vec![0; 4]));
    let err = launch(
        &compiled.program,
        &compiled.files,
        "k",
        &[Arg::Global(0)],
        &mut mem,
        &LaunchConfig::linear(1, 1),
    )
    .expect_err("fails");
    assert!(
        err.to_string()
            .starts_with("k.cl:1:43: unknown function nosuch"),
        "{err}"
    );
}
