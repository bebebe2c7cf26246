//! What the host declares about a global buffer: a kernel that writes a read-only buffer
//! or reads a write-only one breaks the declaration (also through an atomic), and a
//! buffer left uninitialized on purpose reports every read of a byte the kernel has not
//! written yet, but not reads after the kernel's own writes.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Access, Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig};

const KERNELS: &str = r#"
__kernel void copy(__global const int* in, __global int* out) {
    uint i = get_global_id(0);
    out[i] = in[i] + 1;
}

__kernel void accumulate(__global const int* in, __global int* out) {
    uint i = get_global_id(0);
    out[i] += in[i];
}

__kernel void write_then_read(__global const int* in, __global int* out) {
    uint i = get_global_id(0);
    out[i] = in[i];
    out[i] = out[i] * 2;
}

__kernel void count(__global const int* in, __global int* out) {
    atomic_add(&out[0], in[get_global_id(0)]);
}
"#;

/// Runs `kernel` over 8 work-items with `in` and `out` declared as given.
fn findings(kernel: &str, in_buf: Buffer, out_buf: Buffer) -> Vec<(FindingKind, u64)> {
    let compiled = compile("declared.cl", KERNELS, &[], &|_, _| Ok(None)).expect("compiles");
    let mut mem = Memory::default();
    mem.global.push(in_buf);
    mem.global.push(out_buf);
    let report = launch(
        &compiled.program,
        &compiled.files,
        kernel,
        &[Arg::Global(0), Arg::Global(1)],
        &mut mem,
        &LaunchConfig::linear(8, 8),
    )
    .expect("runs");
    let mut found: Vec<(FindingKind, u64)> = report
        .metrics
        .findings
        .values()
        .map(|f| (f.kind, f.count))
        .collect();
    found.sort_by_key(|(k, _)| format!("{k:?}"));
    found
}

fn with(access: Access, mut buffer: Buffer) -> Buffer {
    buffer.access = access;
    buffer
}

fn ints(name: &str) -> Buffer {
    Buffer::new(name, (0..8i32).flat_map(|v| v.to_le_bytes()).collect())
}

#[test]
fn kernels_that_keep_the_declarations_are_clean() {
    let found = findings(
        "copy",
        with(Access::ReadOnly, ints("in")),
        with(Access::WriteOnly, Buffer::uninitialized("out", 32)),
    );
    assert_eq!(found, vec![]);
    let found = findings(
        "write_then_read",
        with(Access::ReadOnly, ints("in")),
        Buffer::uninitialized("out", 32),
    );
    assert_eq!(found, vec![], "reads after the kernel's own writes");
}

#[test]
fn broken_declarations_are_reported() {
    // Writing a read-only buffer.
    let found = findings("copy", ints("in"), with(Access::ReadOnly, ints("out")));
    assert_eq!(found, vec![(FindingKind::AccessViolation, 8)]);
    // Reading a write-only buffer (`+=` reads first).
    let found = findings(
        "accumulate",
        ints("in"),
        with(Access::WriteOnly, ints("out")),
    );
    assert_eq!(found, vec![(FindingKind::AccessViolation, 8)]);
    // An atomic update of a read-only buffer writes it.
    let found = findings("count", ints("in"), with(Access::ReadOnly, ints("out")));
    assert_eq!(found, vec![(FindingKind::AccessViolation, 8)]);
}

#[test]
fn reads_of_bytes_left_uninitialized_are_reported() {
    let found = findings("accumulate", ints("in"), Buffer::uninitialized("out", 32));
    assert_eq!(found, vec![(FindingKind::UninitializedGlobalRead, 8)]);
    // The input itself left unwritten.
    let found = findings("copy", Buffer::uninitialized("in", 32), ints("out"));
    assert_eq!(found, vec![(FindingKind::UninitializedGlobalRead, 8)]);
    // Only the first atomic reads the unwritten word; the rest read its written value.
    let found = findings("count", ints("in"), Buffer::uninitialized("out", 32));
    assert_eq!(found, vec![(FindingKind::UninitializedGlobalRead, 1)]);
}
