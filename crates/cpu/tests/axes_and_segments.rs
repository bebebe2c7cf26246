//! Axis and segment reductions on the CPU against an oracle written independently of
//! `redlab_core::shape`: for C order, Fortran order and reversed strided views of
//! seeded random data, every output's elements are listed by explicit multi-index
//! arithmetic in C order of the reduced axes and reduced by the host reference. Every
//! operator × a spread of types × edge shapes (zero-length axes, length 1, primes,
//! 2^k ± 1); results must be bitwise equal (integers exactly, floats in the canonical
//! order of each output's own elements) at 1 and 2 threads.

use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{reference, ArrayRef, DType, HostArray, Op, Packed, Problem, Value};
use redlab_cpu::CpuBackend;

/// Multi-index of linear index `k` over `dims` in C order.
fn unravel(mut k: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for a in (0..dims.len()).rev() {
        index[a] = k % dims[a];
        k /= dims[a];
    }
    index
}

/// Output k's elements: kept axes from k (C order), reduced axes walked in C order.
fn oracle_offsets(layout: &Layout, axes: &[usize], k: usize) -> Vec<usize> {
    let kept: Vec<usize> = (0..layout.dims.len())
        .filter(|a| !axes.contains(a))
        .collect();
    let kept_dims: Vec<usize> = kept.iter().map(|&a| layout.dims[a]).collect();
    let red_dims: Vec<usize> = axes.iter().map(|&a| layout.dims[a]).collect();
    let kept_index = unravel(k, &kept_dims);
    let total: usize = red_dims.iter().product();
    (0..total)
        .map(|j| {
            let red_index = unravel(j, &red_dims);
            let mut full = vec![0usize; layout.dims.len()];
            for (slot, &a) in kept.iter().enumerate() {
                full[a] = kept_index[slot];
            }
            for (slot, &a) in axes.iter().enumerate() {
                full[a] = red_index[slot];
            }
            let offset: isize = layout.offset as isize
                + full
                    .iter()
                    .zip(&layout.strides)
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>();
            offset as usize
        })
        .collect()
}

fn gather(data: &HostArray, offsets: &[usize]) -> Vec<u8> {
    let size = data.dtype().size_bytes();
    let bytes = data.view().bytes();
    offsets
        .iter()
        .flat_map(|&o| bytes[o * size..(o + 1) * size].iter().copied())
        .collect()
}

fn expected(problem: &Problem, data: &HostArray, offsets: &[usize]) -> Value {
    let bytes = gather(data, offsets);
    // Copy into 8-byte words so every type is aligned.
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(&bytes);
    let view = ArrayRef::from_bytes(
        data.dtype(),
        &bytemuck::cast_slice::<u64, u8>(&words)[..bytes.len()],
    )
    .expect("aligned");
    reference::reduce(problem, view).expect("reference")
}

/// `cpu`'s outputs for `plan` (one per output, asserted), each beside the oracle's value
/// for the same output.
fn with_oracle(
    cpu: &CpuBackend,
    problem: &Problem,
    data: &HostArray,
    layout: &Layout,
    axes: &[usize],
    plan: &AxisPlan,
) -> Vec<(usize, (Value, Value))> {
    let got = cpu
        .compute_outputs(problem, data.view(), Selection::Axes(plan))
        .expect("reduces");
    assert_eq!(got.len(), plan.outputs());
    // The typed array callers keep holds the same results, whichever path made it.
    let packed = cpu.compute_outputs_packed(problem, data.view(), Selection::Axes(plan));
    match Packed::of_values(problem, &got) {
        Ok(want) => assert_eq!(packed.expect("packs"), want, "{problem}"),
        Err(_) => assert!(packed.is_err(), "{problem}: an empty output has no value"),
    }
    got.into_iter()
        .enumerate()
        .map(|(k, v)| {
            (
                k,
                (v, expected(problem, data, &oracle_offsets(layout, axes, k))),
            )
        })
        .collect()
}

fn layouts(dims: &[usize]) -> Vec<(String, Layout, usize)> {
    let count: usize = dims.iter().product();
    let mut out = vec![
        ("C".to_string(), Layout::c_order(dims), count),
        ("Fortran".to_string(), Layout::fortran_order(dims), count),
    ];
    // Every other element of a buffer twice as long, with the first axis reversed.
    if count > 0 && !dims.is_empty() {
        let mut l = Layout::c_order(dims);
        for s in &mut l.strides {
            *s *= 2;
        }
        l.offset = ((dims[0] - 1) as isize * l.strides[0]) as usize;
        l.strides[0] = -l.strides[0];
        out.push(("strided, axis 0 reversed".to_string(), l, 2 * count));
    }
    out
}

fn axis_sets(ndim: usize) -> Vec<Vec<usize>> {
    // Every non-empty subset of the axes.
    (1..(1usize << ndim))
        .map(|mask| (0..ndim).filter(|a| mask & (1 << a) != 0).collect())
        .collect()
}

fn problems() -> Vec<Problem> {
    [
        (Op::Sum, DType::F32, None),
        (Op::Sum, DType::F16, None),
        (Op::Sum, DType::I32, None),
        (Op::Prod, DType::F64, None),
        (Op::Min, DType::F32, None),
        (Op::Max, DType::I8, None),
        (Op::ArgMin, DType::F64, None),
        (Op::ArgMax, DType::U16, None),
        (Op::And, DType::U32, None),
        (Op::Or, DType::I64, None),
        (Op::Xor, DType::U8, None),
        (Op::Sum, DType::BF16, Some(DType::F64)),
    ]
    .into_iter()
    .map(|(op, dtype, acc)| Problem::new(op, dtype, acc).expect("valid"))
    .collect()
}

#[test]
fn axis_reductions_match_the_oracle_for_every_layout_and_axis_set() {
    let shapes: &[&[usize]] = &[
        &[0, 3],
        &[1, 1],
        &[7],
        &[3, 5],
        &[2, 0, 3],
        &[1, 7, 1],
        &[3, 4, 5],
        &[2, 3, 2, 3],
        &[17, 33],
        &[2, 8193],
        &[16389, 3],
    ];
    let backends = [
        CpuBackend::new(Some(1)).expect("cpu"),
        CpuBackend::new(Some(2)).expect("cpu"),
    ];
    let mut checked = 0;
    for problem in problems() {
        for dims in shapes {
            for (name, layout, len) in layouts(dims) {
                let data = generate(problem.dtype, len, Distribution::Normal, 5).expect("data");
                layout.check(len).expect("the view fits");
                for axes in axis_sets(dims.len()) {
                    let plan = AxisPlan::new(
                        layout.clone(),
                        Some(&axes.iter().map(|&a| a as isize).collect::<Vec<_>>()),
                        false,
                    )
                    .expect("plan");
                    for cpu in &backends {
                        for (k, (v, want)) in
                            with_oracle(cpu, &problem, &data, &layout, &axes, &plan)
                        {
                            assert!(
                                v.same_as(&want),
                                "{problem} {name} {dims:?} axes {axes:?} output {k}: {v} vs {want}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} outputs checked");
}

/// Columns wider than one block's lanes with full tiles: the path that builds one lane
/// at a time in the fold's order, with all eight rows of a lane at once, over a partial
/// last tile and across the tile tree; and short columns on the same path.
#[test]
fn wide_columns_with_full_tiles_match_the_oracle() {
    let cpu = CpuBackend::new(Some(2)).expect("cpu");
    let mut checked = 0;
    for (op, dtype, acc) in [
        (Op::Sum, DType::F32, None),
        (Op::Sum, DType::F16, None),
        (Op::Prod, DType::F64, None),
        (Op::Sum, DType::BF16, Some(DType::F64)),
    ] {
        let problem = Problem::new(op, dtype, acc).expect("valid");
        // Then columns shorter than a tile's lanes (1, 3, 257 rows): folded from the
        // lanes that hold rows only (`columns::used_lanes`), with the same bits. Then
        // narrow runs (read row by row), whose one-row lanes pair without the identity:
        // rows that follow each other, and rows a stride of twice the width apart, with
        // a last tile of one row and of 1000 rows.
        let narrow = |dims: [usize; 2], row_stride: usize| Layout {
            dims: dims.to_vec(),
            strides: vec![row_stride as isize, 1],
            offset: 0,
        };
        for (dims, layout) in [
            ([16389, 67], Layout::c_order(&[16389, 67])),
            ([8192, 130], Layout::c_order(&[8192, 130])),
            ([257, 70], Layout::c_order(&[257, 70])),
            ([1, 66], Layout::c_order(&[1, 66])),
            ([3, 129], Layout::c_order(&[3, 129])),
            ([1025, 5], narrow([1025, 5], 5)),
            ([2024, 9], narrow([2024, 9], 18)),
        ] {
            let len = dims[0] * layout.strides[0] as usize;
            let data = generate(dtype, len, Distribution::Normal, 9).expect("data");
            let plan = AxisPlan::new(layout.clone(), Some(&[0]), false).expect("plan");
            for (k, (v, want)) in with_oracle(&cpu, &problem, &data, &layout, &[0], &plan) {
                assert!(
                    v.same_as(&want),
                    "{problem} {dims:?} column {k}: {v} vs {want}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * (67 + 130 + 70 + 66 + 129 + 5 + 9));
}

#[test]
fn segments_match_their_own_slices_and_keep_bits_whatever_else_is_reduced() {
    let n = 3 * 8192 + 17;
    let cpu = CpuBackend::new(Some(2)).expect("cpu");
    for problem in problems() {
        let data = generate(problem.dtype, n, Distribution::Normal, 9).expect("data");
        let offsets = vec![0, 0, 1, 8191, 8193, 16385, 16385, n as u64];
        let ranges = Segments::Offsets(offsets).ranges(n).expect("ranges");
        let got = cpu
            .compute_outputs(&problem, data.view(), Selection::Ranges(&ranges))
            .expect("reduces");
        for (k, r) in ranges.iter().enumerate() {
            let want =
                reference::reduce(&problem, data.view().slice(r.start, r.end)).expect("reference");
            assert!(
                got[k].same_as(&want),
                "{problem} segment {k}: {} vs {want}",
                got[k]
            );
            // The same segment alone gives the same bits.
            let alone = cpu
                .compute_outputs(&problem, data.view(), Selection::Ranges(&ranges[k..k + 1]))
                .expect("reduces");
            assert!(alone[0].same_as(&got[k]), "{problem} segment {k} alone");
        }
        for len in [1, 7, 8191, 8193] {
            let fixed = Segments::Fixed(len).ranges(n).expect("ranges");
            let got = cpu
                .compute_outputs(&problem, data.view(), Selection::Ranges(&fixed))
                .expect("reduces");
            assert_eq!(got.len(), n.div_ceil(len));
            let last = fixed.last().expect("a segment");
            let want = reference::reduce(&problem, data.view().slice(last.start, last.end))
                .expect("reference");
            assert!(
                got[got.len() - 1].same_as(&want),
                "{problem} fixed {len}, last segment"
            );
        }
    }
}

/// Seeded values of `dtype` with zeros of both signs, repeats and (for floats, where
/// `nan`) NaNs of both signs and two payloads, at positions that differ per column.
fn awkward_values(dtype: DType, n: usize, nan: bool) -> HostArray {
    let base = generate(DType::F64, n, Distribution::Normal, 17).expect("data");
    let base = base.view().typed::<f64>().expect("f64").to_vec();
    let values: Vec<f64> = base
        .iter()
        .enumerate()
        .map(|(k, &v)| match k % 89 {
            3 if nan => f64::NAN,
            7 if nan && k % 3 == 0 => -f64::NAN,
            11 if nan => f64::from_bits(f64::NAN.to_bits() | 0x5),
            13 => 0.0,
            17 => -0.0,
            19 => 100.0,
            _ => v * 40.0,
        })
        .collect();
    match dtype {
        DType::F32 => HostArray::from_vec(values.iter().map(|&v| v as f32).collect()),
        DType::F64 => HostArray::from_vec(values),
        DType::F16 => HostArray::from_vec(
            values
                .iter()
                .map(|&v| redlab_core::half::f16::from_f64(v))
                .collect(),
        ),
        DType::BF16 => HostArray::from_vec(
            values
                .iter()
                .map(|&v| redlab_core::half::bf16::from_f64(v))
                .collect(),
        ),
        DType::I8 => HostArray::from_vec(values.iter().map(|&v| v as i8).collect()),
        DType::U8 => HostArray::from_vec(values.iter().map(|&v| v as u8).collect()),
        DType::I16 => HostArray::from_vec(values.iter().map(|&v| v as i16).collect()),
        DType::U16 => HostArray::from_vec(values.iter().map(|&v| v as u16).collect()),
        DType::I32 => HostArray::from_vec(values.iter().map(|&v| v as i32).collect()),
        DType::U32 => HostArray::from_vec(values.iter().map(|&v| v as u32).collect()),
        DType::I64 => HostArray::from_vec(values.iter().map(|&v| v as i64).collect()),
        DType::U64 => HostArray::from_vec(values.iter().map(|&v| v as u64).collect()),
    }
}

#[test]
fn selections_of_columns_match_the_oracle_with_nans_zeros_and_ties() {
    // Columns of C-order matrices (blocks of 8 KiB of a row and a remainder, few columns
    // over many rows, which split their rows across tasks), a middle axis, a reversed
    // strided view, and columns without NaNs so the key path answers alone.
    let cases: &[(&[usize], &[usize])] = &[
        (&[1000, 40], &[0]),
        (&[3, 300], &[0]),
        (&[2, 257], &[0]),
        (&[3, 8300], &[0]),
        (&[70001, 9], &[0]),
        (&[5, 9, 600], &[1]),
    ];
    let backends = [
        CpuBackend::new(Some(1)).expect("cpu"),
        CpuBackend::new(Some(2)).expect("cpu"),
    ];
    let mut checked = 0;
    for dtype in DType::ALL {
        for op in [Op::Min, Op::Max, Op::ArgMin, Op::ArgMax] {
            let problem = Problem::new(op, dtype, None).expect("problem");
            for &(dims, axes) in cases {
                for (name, layout, len) in layouts(dims) {
                    for nan in [false, true] {
                        let data = awkward_values(dtype, len, nan);
                        let axes_i: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
                        let plan =
                            AxisPlan::new(layout.clone(), Some(&axes_i), false).expect("plan");
                        for cpu in &backends {
                            for (k, (v, want)) in
                                with_oracle(cpu, &problem, &data, &layout, axes, &plan)
                            {
                                // Bits exactly, NaN payloads included: the first NaN wins.
                                let bits = |x: &Value| x.scalar().map(|s| s.bits());
                                assert!(
                                    v.same_as(&want) && bits(&v) == bits(&want),
                                    "{problem} {name} {dims:?} nan={nan} output {k}: {v} vs {want}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100_000, "only {checked} outputs checked");
}
