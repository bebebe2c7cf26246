//! Non-uniform work-groups (OpenCL 2.0): a global size that is not a multiple of the
//! work-group size runs, with smaller groups at the edge. In them `get_local_size` is
//! the group's own extent and `get_enqueued_local_size` the size asked for; global ids
//! stay group × enqueued size + local id, and no work-item past the global size runs.

use redlab_analyzer::compile;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::metrics::FindingKind;
use redlab_analyzer::sim::{launch, Arg, LaunchConfig, LaunchReport};

const IDS: &str = r#"
__kernel void ids(__global uint* out, uint width) {
    size_t x = get_global_id(0), y = get_global_id(1);
    uint i = (uint)(y * width + x);
    out[4 * i] = (uint)(get_local_id(0) * 1000 + get_local_id(1));
    out[4 * i + 1] = (uint)(get_local_size(0) * 1000 + get_local_size(1));
    out[4 * i + 2] = (uint)(get_enqueued_local_size(0) * 1000 + get_enqueued_local_size(1));
    out[4 * i + 3] = (uint)(get_group_id(0) * 1000 + get_num_groups(0) * 100 + get_group_id(1) * 10 + get_num_groups(1));
}
"#;

const SENTINEL: u32 = 0xDEAD_BEEF;

fn run(
    source: &str,
    kernel: &str,
    args: &[Arg],
    mem: &mut Memory,
    cfg: &LaunchConfig,
) -> LaunchReport {
    let compiled = compile("k.cl", source, &[], &|_, _| Ok(None)).expect("compiles");
    launch(&compiled.program, &compiled.files, kernel, args, mem, cfg).expect("runs")
}

fn words(buffer: &Buffer) -> Vec<u32> {
    buffer
        .bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

#[test]
fn edge_groups_see_their_own_size_in_two_dimensions() {
    let (width, height, local) = (10usize, 6usize, [4usize, 4, 1]);
    let mut mem = Memory::default();
    // Four words per work-item, then a sentinel nobody may write.
    let mut out: Vec<u8> = vec![0; 4 * 4 * width * height];
    out.extend_from_slice(&SENTINEL.to_le_bytes());
    mem.global.push(Buffer::new("out", out));
    let cfg = LaunchConfig {
        global: [width, height, 1],
        local,
        ..LaunchConfig::linear(1, 1)
    };
    let report = run(
        IDS,
        "ids",
        &[
            Arg::Global(0),
            Arg::Scalar(redlab_analyzer::value::Value::Int(
                redlab_analyzer::types::Scalar::UInt,
                width as u64,
            )),
        ],
        &mut mem,
        &cfg,
    );
    assert!(
        report.metrics.findings.is_empty(),
        "{:#?}",
        report.metrics.findings
    );
    // Groups 3 × 2: only (0, 0) and (1, 0) are whole.
    assert_eq!(cfg.partial_groups(), 4);
    let got = words(&mem.global[0]);
    for y in 0..height {
        for x in 0..width {
            let i = 4 * (y * width + x);
            let (gx, gy) = (x / local[0], y / local[1]);
            let size = |g: usize, d: usize, extent: usize| local[d].min(extent - g * local[d]);
            assert_eq!(
                got[i..i + 4],
                [
                    ((x % 4) * 1000 + y % 4) as u32,
                    (size(gx, 0, width) * 1000 + size(gy, 1, height)) as u32,
                    4004,
                    (gx * 1000 + 300 + gy * 10 + 2) as u32,
                ],
                "work-item ({x}, {y})"
            );
        }
    }
    assert_eq!(
        got[4 * width * height],
        SENTINEL,
        "no work-item past the global size"
    );
}

/// Lane 0 of each group adds the group's elements, counting up to `BOUND`.
fn group_sums(bound: &str) -> String {
    format!(
        r#"
__kernel void sums(__global const uint* x, __global uint* out) {{
    __local uint s[64];
    size_t l = get_local_id(0);
    s[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {{
        uint t = 0;
        for (uint k = 0; k < {bound}; k++) t += s[k];
        out[get_group_id(0)] = t;
    }}
}}
"#
    )
}

fn sums(bound: &str) -> (LaunchReport, Vec<u32>) {
    let n = 100usize;
    let mut mem = Memory::default();
    let x: Vec<u8> = (0..n as u32)
        .flat_map(|v| (v * 7 + 3).to_le_bytes())
        .collect();
    mem.global.push(Buffer::new("x", x));
    mem.global.push(Buffer::new("out", vec![0; 8]));
    let report = run(
        &group_sums(bound),
        "sums",
        &[Arg::Global(0), Arg::Global(1)],
        &mut mem,
        &LaunchConfig::linear(n, 64),
    );
    (report, words(&mem.global[1]))
}

#[test]
fn a_group_reduction_over_the_groups_own_size_is_exact() {
    let (report, got) = sums("get_local_size(0)");
    assert!(
        report.metrics.findings.is_empty(),
        "{:#?}",
        report.metrics.findings
    );
    assert_eq!(report.config.partial_groups(), 1);
    let expect = |r: std::ops::Range<u32>| r.map(|v| v * 7 + 3).sum::<u32>();
    assert_eq!(got, vec![expect(0..64), expect(64..100)]);
}

#[test]
fn counting_to_the_enqueued_size_reads_what_the_edge_group_never_wrote() {
    let (report, _) = sums("get_enqueued_local_size(0)");
    let uninitialized: Vec<_> = report
        .metrics
        .findings
        .values()
        .filter(|f| f.kind == FindingKind::UninitializedLocalRead)
        .collect();
    assert_eq!(uninitialized.len(), 1, "{:#?}", report.metrics.findings);
    // Only the edge group (group 1, 36 work-items) reads past what it wrote.
    assert_eq!(uninitialized[0].work_group, [1, 0, 0]);
}
