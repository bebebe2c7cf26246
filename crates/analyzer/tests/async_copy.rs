//! Async copies in the simulator: `async_work_group_copy` and the strided form move the
//! right elements, `wait_group_events` completes them, and each misuse is found —
//! reading the destination before the wait, work-items passing different arguments, a
//! copy never waited for.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNELS: &str = r#"
__kernel void staged_sum(__global const float* in, __global float* out, __local float* tile) {
    uint l = get_local_id(0), g = get_group_id(0), n = get_local_size(0);
    event_t e = async_work_group_copy(tile, in + g * n, n, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (uint k = 0; k < n; k++) s += tile[k];
        out[g] = s;
    }
}

__kernel void strided(__global const int* in, __global int* out, __local int* tile) {
    uint l = get_local_id(0), n = get_local_size(0);
    event_t e = async_work_group_strided_copy(tile, in + 1, n, 3, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = tile[l];
    event_t back = async_work_group_copy(out + n, tile, n, 0);
    wait_group_events(1, &back);
}

__kernel void early_read(__global const float* in, __global float* out, __local float* tile) {
    uint l = get_local_id(0), n = get_local_size(0);
    event_t e = async_work_group_copy(tile, in, n, 0);
    out[l] = tile[l];
    wait_group_events(1, &e);
}

__kernel void divergent(__global const float* in, __local float* tile) {
    uint l = get_local_id(0);
    event_t e = async_work_group_copy(tile, in + l, 4, 0);
    wait_group_events(1, &e);
}

__kernel void never_waited(__global const float* in, __local float* tile) {
    event_t e = async_work_group_copy(tile, in, 8, 0);
}
"#;

fn run(kernel: &str, args: &[Arg], mem: &mut Memory, groups: usize, n: usize) -> Vec<FindingKind> {
    let compiled = compile("async.cl", KERNELS, &[], &|_, _| Ok(None)).expect("compiles");
    let report = launch(
        &compiled.program,
        &compiled.files,
        kernel,
        args,
        mem,
        &LaunchConfig::linear(groups * n, n),
    )
    .expect("runs");
    report.metrics.findings.values().map(|f| f.kind).collect()
}

fn floats(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn copies_move_the_right_elements_and_waits_complete_them() {
    let input: Vec<f32> = (0..64).map(|i| (i * 7 % 13) as f32).collect();
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("in", floats(&input)));
    mem.global.push(Buffer::new("out", vec![0; 4 * 4]));
    let found = run(
        "staged_sum",
        &[Arg::Global(0), Arg::Global(1), Arg::Local(64)],
        &mut mem,
        4,
        16,
    );
    assert!(found.is_empty(), "{found:?}");
    for g in 0..4 {
        let got = f32::from_le_bytes(mem.global[1].bytes[4 * g..4 * g + 4].try_into().expect("4"));
        let expected: f32 = input[16 * g..16 * (g + 1)].iter().sum();
        assert_eq!(got, expected, "group {g}");
    }

    let ints: Vec<u8> = (0..100i32).flat_map(|v| v.to_le_bytes()).collect();
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("in", ints));
    mem.global.push(Buffer::new("out", vec![0; 4 * 16]));
    let found = run(
        "strided",
        &[Arg::Global(0), Arg::Global(1), Arg::Local(32)],
        &mut mem,
        1,
        8,
    );
    assert!(found.is_empty(), "{found:?}");
    let out: Vec<i32> = mem.global[1]
        .bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    let expected: Vec<i32> = (0..8).map(|k| 1 + 3 * k).collect();
    assert_eq!(&out[..8], &expected[..], "strided gather into local");
    assert_eq!(&out[8..], &expected[..], "local copied back to global");
}

#[test]
fn misuse_is_found() {
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("in", floats(&[1.0; 64])));
    mem.global.push(Buffer::new("out", vec![0; 4 * 16]));
    let found = run(
        "early_read",
        &[Arg::Global(0), Arg::Global(1), Arg::Local(64)],
        &mut mem,
        1,
        16,
    );
    assert_eq!(
        found,
        vec![FindingKind::AsyncCopyMisuse],
        "read before the wait"
    );

    let mut mem = Memory::default();
    mem.global.push(Buffer::new("in", floats(&[1.0; 64])));
    let found = run(
        "divergent",
        &[Arg::Global(0), Arg::Local(64)],
        &mut mem,
        1,
        8,
    );
    assert!(
        found.contains(&FindingKind::AsyncCopyMisuse),
        "different arguments: {found:?}"
    );

    let mut mem = Memory::default();
    mem.global.push(Buffer::new("in", floats(&[1.0; 64])));
    let found = run(
        "never_waited",
        &[Arg::Global(0), Arg::Local(64)],
        &mut mem,
        1,
        8,
    );
    assert_eq!(found, vec![FindingKind::AsyncCopyMisuse], "never waited");
}
