//! Uninitialized private memory: a variable, an array element or a struct field read
//! before anything wrote it is found; written ones (by assignment, initializer,
//! parameter, pointer store, or a loop that fills an array) are not, and a variable
//! declared again in a loop starts uninitialized again.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNELS: &str = r#"
typedef struct { int a; float b; } pair;

__kernel void clean(__global int* out, int k) {
    uint l = get_local_id(0);
    int x = 3;
    int y;
    y = x + k;
    int a[4];
    for (int i = 0; i < 4; i++) a[i] = i * y;
    pair p;
    p.a = 1;
    p.b = 2.0f;
    pair q = p;
    int* w = &a[1];
    *w = 7;
    out[l] = a[1] + a[3] + q.a + (int)q.b;
}

__kernel void scalar(__global int* out) {
    int x;
    out[get_local_id(0)] = x + 1;
}

__kernel void element(__global int* out) {
    int a[4];
    a[0] = 1;
    out[get_local_id(0)] = a[2];
}

__kernel void field(__global float* out) {
    pair p;
    p.a = 1;
    out[get_local_id(0)] = p.b;
}

__kernel void some_lanes(__global int* out) {
    int x;
    if (get_local_id(0) < 4) x = 1;
    out[get_local_id(0)] = x;
}

__kernel void redeclared(__global int* out) {
    int total = 0;
    for (int i = 0; i < 2; i++) {
        int t;
        if (i == 0) t = 5;
        total += t;
    }
    out[get_local_id(0)] = total;
}
"#;

fn findings(kernel: &str, args: &[Arg]) -> Vec<(FindingKind, u64)> {
    let compiled = compile("private.cl", KERNELS, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(Buffer::new("out", vec![0; 4 * 8]));
    let report = launch(
        &compiled.program,
        &compiled.files,
        kernel,
        args,
        &mut mem,
        &LaunchConfig::linear(8, 8),
    )
    .expect("runs");
    report
        .metrics
        .findings
        .values()
        .map(|f| (f.kind, f.count))
        .collect()
}

#[test]
fn written_variables_are_not_reported() {
    let scalar_k = Arg::Scalar(redlab_analyzer::value::Value::Int(
        redlab_analyzer::types::Scalar::Int,
        2,
    ));
    assert_eq!(findings("clean", &[Arg::Global(0), scalar_k]), vec![]);
}

#[test]
fn reads_before_any_write_are_reported() {
    for kernel in ["scalar", "element", "field"] {
        assert_eq!(
            findings(kernel, &[Arg::Global(0)]),
            vec![(FindingKind::UninitializedPrivateRead, 8)],
            "{kernel}"
        );
    }
    // Only the work-items that skipped the write.
    assert_eq!(
        findings("some_lanes", &[Arg::Global(0)]),
        vec![(FindingKind::UninitializedPrivateRead, 4)]
    );
    // The second iteration's `t` is a new variable with no value.
    assert_eq!(
        findings("redeclared", &[Arg::Global(0)]),
        vec![(FindingKind::UninitializedPrivateRead, 8)]
    );
}
