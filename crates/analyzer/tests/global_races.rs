//! Races on global memory: within a work-group between global barriers, between
//! work-groups unless atomics order them (the last-group pattern), and plain writes
//! against atomics; correct kernels of each kind are not reported.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNELS: &str = r#"
__kernel void all_write_one(__global int* out) {
    out[0] = get_local_id(0);
}

__kernel void published(__global int* out) {
    if (get_local_id(0) == 0) out[get_group_id(0)] = 7;
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[64 + get_global_id(0)] = out[get_group_id(0)];
}

__kernel void local_barrier_only(__global int* out) {
    if (get_local_id(0) == 0) out[get_group_id(0)] = 7;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[64 + get_global_id(0)] = out[get_group_id(0)];
}

__kernel void groups_write_one(__global int* out) {
    if (get_local_id(0) == 0) out[0] = get_group_id(0);
}

__kernel void groups_add_atomically(__global int* out) {
    atomic_add(out, 1);
}

__kernel void last_group(__global int* out, __global uint* counter) {
    __local int is_last;
    uint g = get_group_id(0);
    if (get_local_id(0) == 0) {
        out[1 + g] = (int)g;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        is_last = atomic_inc(counter) == get_num_groups(0) - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (is_last && get_local_id(0) == 0) {
        int s = 0;
        for (uint k = 0; k < get_num_groups(0); k++) s += out[1 + k];
        out[0] = s;
    }
}

__kernel void reads_others_without_atomics(__global int* out) {
    uint g = get_group_id(0);
    if (get_local_id(0) == 0) {
        out[1 + g] = (int)g;
        if (g == get_num_groups(0) - 1) out[0] = out[1];
    }
}

__kernel void plain_write_against_atomic(__global int* out) {
    if (get_group_id(0) == 0) atomic_add(out, 1);
    else if (get_local_id(0) == 0) out[0] = 5;
}
"#;

fn kinds(kernel: &str, with_counter: bool) -> Vec<FindingKind> {
    let compiled = compile("races.cl", KERNELS, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("out", vec![0; 4 * 128]));
    let mut args = vec![Arg::Global(0)];
    if with_counter {
        mem.global.push(Buffer::new("counter", vec![0; 4]));
        args.push(Arg::Global(1));
    }
    let report = launch(
        &compiled.program,
        &compiled.files,
        kernel,
        &args,
        &mut mem,
        &LaunchConfig::linear(32, 8),
    )
    .expect("runs");
    report.metrics.findings.values().map(|f| f.kind).collect()
}

#[test]
fn unordered_accesses_are_races() {
    for kernel in [
        "all_write_one",
        "local_barrier_only",
        "groups_write_one",
        "reads_others_without_atomics",
        "plain_write_against_atomic",
    ] {
        assert!(
            kinds(kernel, false).contains(&FindingKind::GlobalRace),
            "{kernel} should race"
        );
    }
}

#[test]
fn ordered_accesses_are_not() {
    assert_eq!(kinds("published", false), vec![]);
    assert_eq!(kinds("groups_add_atomically", false), vec![]);
    assert_eq!(kinds("last_group", true), vec![]);
}
