//! `redlab run --stat var|std|logsumexp|nanmin|nanmax|nanmean` end to end: whole arrays
//! and axes verify against the two-pass references, `--out` writes numpy's shape; OpenCL
//! (PoCL here, the same kernel CUDA builds) gives the CPU's bits for every statistic; a
//! group of devices says it takes one.

mod common;

use common::{json_of, redlab};
use redlab::generate::{generate, Distribution};
use redlab::segmented::Selection;
use redlab::shape::{AxisPlan, Layout};
use redlab::{DType, Statistic};

#[test]
fn statistics_verify_whole_and_along_axes() {
    for stat in ["var", "std", "logsumexp", "nanmin", "nanmax", "nanmean"] {
        let o = redlab(&[
            "run", "--stat", stat, "--ddof", "1", "--dtype", "f32", "--n", "100003", "--json",
        ]);
        assert!(
            o.status.success(),
            "{stat}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let j = json_of(&o);
        assert_eq!(j["stat"], stat);
        assert_eq!(j["verified"], true, "{stat}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("lse.npy");
    let o = redlab(&[
        "run",
        "--stat",
        "logsumexp",
        "--dtype",
        "f64",
        "--shape",
        "30x1000",
        "--axis",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_of(&o)["out_shape"], serde_json::json!([30]));
    let bytes = std::fs::read(&out).expect("written");
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    assert_eq!(
        bytes.len(),
        10 + header + 30 * 8,
        "30 f64 values after the header"
    );
    assert!(String::from_utf8_lossy(&bytes[10..10 + header]).contains("'shape': (30,)"));
}

#[test]
fn a_device_that_cannot_be_opened_is_one_clear_line_and_a_group_computes() {
    let o = redlab(&[
        "run", "--stat", "nanmean", "--dtype", "f32", "--n", "1000", "--device", "cuda:7",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    // A group splits the outputs over its members (tests/sharded.rs checks it widely).
    let group = redlab::Device::open("cpu:0,0", None).expect("group");
    let cpu = redlab::Device::open("cpu", None).expect("cpu");
    let x = [1.0f32, 2.0, 4.5, -3.0];
    let halves = [0..2usize, 2..4];
    let stat = Statistic::Var { ddof: 0.0 };
    let got = group
        .statistic(
            stat,
            redlab::ArrayRef::from_slice(&x),
            Selection::Ranges(&halves),
        )
        .expect("group");
    let want = cpu
        .statistic(
            stat,
            redlab::ArrayRef::from_slice(&x),
            Selection::Ranges(&halves),
        )
        .expect("cpu");
    assert_eq!(got, want);
}

/// Seeded random values (normal, standard deviation `spread`) with both zeros and
/// repeats mixed in, and NaN when `nan`.
fn awkward(dtype: DType, n: usize, seed: u64, nan: bool, spread: f64) -> redlab::HostArray {
    let mut values: Vec<f64> = generate(DType::F64, n, Distribution::Normal, seed)
        .expect("data")
        .view()
        .typed::<f64>()
        .expect("f64")
        .iter()
        .map(|v| v * spread)
        .collect();
    for (k, v) in values.iter_mut().enumerate() {
        *v = match k % 97 {
            5 if nan => f64::NAN,
            11 => 0.0,
            13 => -0.0,
            17 => 7.0,
            _ => *v,
        };
    }
    match dtype {
        DType::F32 => redlab::HostArray::from_vec(values.iter().map(|&v| v as f32).collect()),
        DType::F16 => redlab::HostArray::from_vec(
            values
                .iter()
                .map(|&v| redlab_core::half::f16::from_f64(v))
                .collect(),
        ),
        DType::I32 => redlab::HostArray::from_vec(values.iter().map(|&v| v as i32).collect()),
        _ => redlab::HostArray::from_vec(values),
    }
}

/// `stat` over `data` on the CPU and on `device`: the CPU's results as numbers, after
/// checking that the device gave the same outputs bit for bit (`what` names the case).
fn same_bits_as_cpu(
    cpu: &redlab::Device,
    device: &redlab::Device,
    stat: Statistic,
    data: &redlab::HostArray,
    selection: Selection<'_>,
    what: &str,
) -> Vec<f64> {
    let want = cpu.statistic(stat, data.view(), selection).expect("cpu");
    let got = device
        .statistic(stat, data.view(), selection)
        .expect("opencl");
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g.same_as(w), "{what} output {k}: {g} vs {w}");
    }
    want.iter()
        .map(|w| w.scalar().expect("value").to_f64())
        .collect()
}

#[test]
fn gpus_compute_the_cpus_statistics_bit_for_bit() {
    let Some(device) = common::opencl_or_skip("statistics on OpenCL") else {
        return;
    };
    let cpu = redlab::Device::open("cpu", None).expect("cpu");
    let stats = [
        Statistic::Var { ddof: 1.0 },
        Statistic::Std { ddof: 0.0 },
        Statistic::LogSumExp,
        Statistic::NanMin,
        Statistic::NanMax,
        Statistic::NanMean,
    ];
    for dtype in [DType::F32, DType::F64, DType::F16, DType::I32] {
        for (dims, axes) in [
            (vec![1usize], None),
            (vec![0], None),
            (vec![8193], None),
            (vec![3, 30_011], Some(vec![1isize])),
            (vec![300, 41], Some(vec![0])),
            (vec![4, 5, 997], Some(vec![0, 2])),
            (vec![7, 1], Some(vec![0])),
            // Rows of 33 to 1024: segments of 2 (33, 64), 4 (100), 8 (200), 16 (300) and
            // 32 (1000, 1024) work-items per row.
            (vec![50, 200], Some(vec![1])),
            (vec![40, 100], Some(vec![1])),
            (vec![10, 300], Some(vec![1])),
            (vec![600, 33], Some(vec![1])),
            (vec![20, 1024], Some(vec![1])),
            (vec![70, 64], Some(vec![1])),
            // Rows of 65 and 128: segments of four work-items, part and whole.
            (vec![8, 65], Some(vec![1])),
            (vec![12, 128], Some(vec![1])),
            (vec![9, 1000], Some(vec![1])),
            // Rows of 700 and 1023: merges of c + 1 and c elements for most c below 512,
            // whose weights the kernels read from tables.
            (vec![6, 700], Some(vec![1])),
            (vec![3, 1023], Some(vec![1])),
            // Rows of 1025 to 3072: a whole warp each, two or three elements a lane, part
            // and whole.
            (vec![5, 1025], Some(vec![1])),
            (vec![4, 2000], Some(vec![1])),
            (vec![3, 3072], Some(vec![1])),
            (vec![33, 600], Some(vec![0])),
            (vec![9000, 37], Some(vec![0])),
            // Columns whose groups copy whole 16-byte words (40 × 4 or 8 bytes a row),
            // two full groups of 16 and a partial one that copies element by element.
            (vec![9000, 40], Some(vec![0])),
            (vec![3, 2000, 40], Some(vec![1])),
            // Columns of one tile stage the rows their lanes hold: one (1000 rows, part;
            // 1024, whole), two (1500) and four (3000; whole words in 40 columns).
            (vec![1000, 40], Some(vec![0])),
            (vec![1024, 17], Some(vec![0])),
            (vec![1500, 9], Some(vec![0])),
            (vec![3000, 40], Some(vec![0])),
            // Columns whose lanes past the rows are skipped a class's leaves at a time
            // (257 rows: 33 of class 0's 128 lanes, 32 of the others'), and a last tile of
            // 300 rows after a whole one of 8192.
            (vec![257, 40], Some(vec![0])),
            (vec![8492, 40], Some(vec![0])),
            // Tiles of at most 32 elements, a work-item each: rows staged in local
            // memory (whole and partial widths), columns loading their own.
            (vec![700, 32], Some(vec![1])),
            (vec![300, 7], Some(vec![1])),
            (vec![259, 1], Some(vec![1])),
            (vec![20, 300], Some(vec![0])),
        ] {
            let n: usize = dims.iter().product();
            let clean = awkward(dtype, n, 3, false, 30.0);
            let with_nan = awkward(dtype, n, 3, true, 30.0);
            // Log-sum-exp of values this wide is its few largest terms: a narrow spread
            // makes every exponential count (a wrong last bit in one shows).
            let narrow = awkward(dtype, n, 4, false, 0.5);
            let plan = AxisPlan::new(Layout::c_order(&dims), axes.as_deref(), false).expect("plan");
            let ranges = [0..n / 3, n / 3..n / 3, n / 3..n];
            let axis_lens = vec![plan.segment_len(); plan.outputs()];
            let range_lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
            for (selection, lens) in [
                (Selection::Axes(&plan), &axis_lens),
                (Selection::Ranges(&ranges), &range_lens),
            ] {
                for stat in stats {
                    let data = match stat {
                        Statistic::NanMin | Statistic::NanMax | Statistic::NanMean => &with_nan,
                        Statistic::LogSumExp => &narrow,
                        _ => &clean,
                    };
                    let want = cpu.statistic(stat, data.view(), selection).expect("cpu");
                    let got = match device.statistic(stat, data.view(), selection) {
                        Ok(v) => v,
                        Err(e) => panic!("{} {dtype} {dims:?}: {e}", stat.name()),
                    };
                    assert_eq!(got.len(), want.len());
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        let what = format!("{} {dtype} {dims:?} {axes:?} output {k}", stat.name());
                        // Log-sum-exp too: every backend computes the canonical exp.
                        assert!(g.same_as(w), "{what}: {g} vs {w}");
                        if lens[k] > 1 && stat != Statistic::NanMin && stat != Statistic::NanMax {
                            // (nanmean of NaN-holding data is checked real too: one NaN in 97.)
                            let v = w.scalar().expect("value").to_f64();
                            assert!(v.is_finite(), "{what}: a real value is checked ({v})");
                        }
                    }
                }
            }
        }
    }
}

/// The columns kernel holds 16 neighbouring columns per work-group where 32 would give
/// few work-groups, and 32 otherwise; both widths must give the CPU's bits.
#[test]
fn columns_of_both_widths_compute_the_cpus_bits() {
    let Some(device) = common::opencl_or_skip("statistics columns on OpenCL") else {
        return;
    };
    let cpu = redlab::Device::open("cpu", None).expect("cpu");
    // 300 rows: more than the short kernel takes; 16384 columns: 512 work-groups of 32.
    for (dims, classes) in [([300usize, 16_384usize], 8), ([300, 1000], 16)] {
        let n = dims[0] * dims[1];
        let data = awkward(DType::F32, n, 5, false, 0.5);
        let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[0]), false).expect("plan");
        let selection = Selection::Axes(&plan);
        let words = redlab_kernels::statistics::explain(
            redlab_kernels::statistics::StateKind::Moments,
            DType::F32,
            selection,
        );
        assert!(
            words.contains(&format!("{classes} lane classes per column")),
            "{dims:?}: {words}"
        );
        for stat in [Statistic::Var { ddof: 1.0 }, Statistic::LogSumExp] {
            let want = cpu.statistic(stat, data.view(), selection).expect("cpu");
            let got = device
                .statistic(stat, data.view(), selection)
                .expect("opencl");
            assert_eq!(got.len(), want.len());
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                let what = format!("{} {dims:?} output {k}", stat.name());
                let (g, w) = (
                    g.scalar().expect("value").to_f64(),
                    w.scalar().expect("value").to_f64(),
                );
                assert_eq!(g.to_bits(), w.to_bits(), "{what}: {g} vs {w}");
            }
        }
    }
}

/// Log-sum-exp's pushes and merges have no branches on the device: infinities, NaN and
/// rows that hold only −∞ must still give the CPU's results, in every kernel (a
/// work-item per short row or column, a short-kernel column, a warp per row, a
/// work-group per whole and partial tile, columns).
#[test]
fn log_sum_exp_of_infinities_and_nan_is_the_cpus() {
    let Some(device) = common::opencl_or_skip("log-sum-exp of special values on OpenCL") else {
        return;
    };
    let cpu = redlab::Device::open("cpu", None).expect("cpu");
    for (dims, axis) in [
        ([400usize, 32usize], 1isize),
        ([300, 5], 1),
        ([20, 300], 0),
        ([40, 600], 0),
        ([60, 1000], 1),
        ([3, 8192], 1),
        ([2, 20_000], 1),
        ([300, 40], 0),
    ] {
        let n = dims[0] * dims[1];
        let base = awkward(DType::F64, n, 6, false, 0.5);
        let base = base.view().typed::<f64>().expect("f64").to_vec();
        // Rows (or columns) of only −∞, scattered −∞ and +∞, and NaN in some outputs.
        let special: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let (row, col) = (k / dims[1], k % dims[1]);
                let output = if axis == 1 { row } else { col };
                match (output % 7, k % 13) {
                    (0, _) => f64::NEG_INFINITY,
                    (1, 3) => f64::NEG_INFINITY,
                    (2, 5) => f64::INFINITY,
                    (3, 2) => f64::NAN,
                    (4, 6) => f64::NEG_INFINITY,
                    (4, 9) => f64::INFINITY,
                    _ => v,
                }
            })
            .collect();
        let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
        let selection = Selection::Axes(&plan);
        for data in [
            redlab::HostArray::from_vec(special.clone()),
            redlab::HostArray::from_vec(special.iter().map(|&v| v as f32).collect()),
        ] {
            let want = cpu
                .statistic(Statistic::LogSumExp, data.view(), selection)
                .expect("cpu");
            let got = device
                .statistic(Statistic::LogSumExp, data.view(), selection)
                .expect("opencl");
            let kinds: Vec<f64> = want
                .iter()
                .map(|w| w.scalar().expect("value").to_f64())
                .collect();
            // The data reaches every case: −∞, +∞, NaN and real results (where there
            // are outputs enough for each).
            assert!(kinds.contains(&f64::NEG_INFINITY), "{dims:?}");
            assert!(kinds.iter().any(|v| v.is_finite()), "{dims:?}");
            if kinds.len() >= 7 {
                assert!(kinds.contains(&f64::INFINITY), "{dims:?}");
                assert!(kinds.iter().any(|v| v.is_nan()), "{dims:?}");
            }
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(g.same_as(w), "{dims:?} axis {axis} output {k}: {g} vs {w}");
            }
        }
    }
}

/// nanmean over long columns runs the moments' columns kernel first and `stat_kept` only
/// over the tiles whose mean came out NaN: a tile with a NaN, and one whose infinities of
/// both signs made a NaN mean without any NaN, must both give the CPU's bits, beside
/// clean tiles of the same call and of the same column.
#[test]
fn nanmean_over_columns_reruns_only_the_tiles_it_must() {
    let Some(device) = common::opencl_or_skip("nanmean over columns on OpenCL") else {
        return;
    };
    let cpu = redlab::Device::open("cpu", None).expect("cpu");
    let (rows, columns) = (9000usize, 5usize);
    let base = awkward(DType::F64, rows * columns, 11, false, 30.0);
    let mut values = base.view().typed::<f64>().expect("f64").to_vec();
    let at = |row: usize, column: usize| row * columns + column;
    // Column 0: infinities of both signs in its first tile, no NaN. Column 1: one NaN in
    // its second tile only. Column 2: a NaN in each tile. Columns 3 and 4: clean.
    values[at(5, 0)] = f64::INFINITY;
    values[at(4000, 0)] = f64::NEG_INFINITY;
    values[at(8500, 1)] = f64::NAN;
    values[at(17, 2)] = f64::NAN;
    values[at(8999, 2)] = f64::NAN;
    let plan = AxisPlan::new(Layout::c_order(&[rows, columns]), Some(&[0]), false).expect("plan");
    let selection = Selection::Axes(&plan);
    for data in [
        redlab::HostArray::from_vec(values.clone()),
        redlab::HostArray::from_vec(values.iter().map(|&v| v as f32).collect()),
    ] {
        let means = same_bits_as_cpu(
            &cpu,
            &device,
            Statistic::NanMean,
            &data,
            selection,
            "nanmean of columns",
        );
        assert!(means[0].is_nan(), "+inf and -inf make NaN: {means:?}");
        assert!(means[1..].iter().all(|v| v.is_finite()), "{means:?}");
    }
}

/// nanmean compacts each tile's values that are not NaN in order: outputs of only NaN,
/// of half NaN at random, of NaN clustered in a tile's first half or in its second staged
/// part, of one kept value, and of none, in rows (whole and partial tiles, and tiles of
/// at most a row) and columns, must give the CPU's bits.
#[test]
fn nanmean_of_sparse_and_clustered_values_is_the_cpus() {
    let Some(device) = common::opencl_or_skip("nanmean of NaN-dense data on OpenCL") else {
        return;
    };
    let cpu = redlab::Device::open("cpu", None).expect("cpu");
    for (dims, axis) in [
        ([6usize, 8192usize], 1isize),
        ([6, 20_000], 1),
        ([6, 5000], 1),
        ([9000, 6], 0),
        // 540 tiles with a NaN mean: at least 512 rerun on stat_kept_columns, four
        // neighbouring columns' tiles to a work-group (fewer on stat_kept).
        ([9000, 360], 0),
        // Tiles of at most a row: a segment's staged row (f32, f16; 2 work-items for rows
        // of 33, 16 for 300, 32 for 1000), or one row staged at a time by a work-group
        // (f64 longer than 256, columns), or the short kernel's lanes (f64 of 33–256);
        // rows of at most 32 a work-item's staged row (f64 of 32: the short kernel).
        ([6, 1000], 1),
        ([6, 1024], 1),
        ([6, 300], 1),
        ([6, 33], 1),
        ([6, 32], 1),
        ([6, 7], 1),
        ([700, 6], 0),
    ] {
        let n = dims[0] * dims[1];
        let base = awkward(DType::F64, n, 7, false, 30.0);
        let base = base.view().typed::<f64>().expect("f64").to_vec();
        let len = dims[axis as usize];
        let values: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let (row, col) = (k / dims[1], k % dims[1]);
                let (output, at) = if axis == 1 { (row, col) } else { (col, row) };
                let dropped = match output % 6 {
                    0 => true,
                    1 => (k.wrapping_mul(2_654_435_761) >> 7) % 7 < 4,
                    2 => at % 8192 < 4096.min(len / 2),
                    3 => at % 8192 >= 4096,
                    4 => at != 1234 % len,
                    _ => false,
                };
                if dropped {
                    f64::NAN
                } else {
                    v
                }
            })
            .collect();
        let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
        let selection = Selection::Axes(&plan);
        for data in [
            redlab::HostArray::from_vec(values.clone()),
            redlab::HostArray::from_vec(values.iter().map(|&v| v as f32).collect()),
            redlab::HostArray::from_vec(
                values
                    .iter()
                    .map(|&v| redlab_core::half::f16::from_f64(v))
                    .collect(),
            ),
        ] {
            let what = format!("{dims:?} axis {axis}");
            let means =
                same_bits_as_cpu(&cpu, &device, Statistic::NanMean, &data, selection, &what);
            // The outputs of only NaN (every sixth) are NaN, every other one real.
            for (o, mean) in means.iter().enumerate() {
                assert_eq!(mean.is_nan(), o % 6 == 0, "{dims:?} output {o}: {means:?}");
                assert!(mean.is_nan() || mean.is_finite(), "{dims:?}: {means:?}");
            }
        }
    }
}
