//! Inputs generated on the device (`generate.cl`) against the host's `hashed` arrays:
//! every type byte for byte, at sizes around the grid's stride and at starts past 2^32,
//! and reductions of device-made parts equal to the CPU's over the host's copy.

mod common;

use redlab_core::generate::{generate_range, Distribution};
use redlab_core::shard::{combine, plan};
use redlab_core::{reference, DType, Op, Problem};

#[test]
fn every_type_is_the_hosts_array_byte_for_byte() {
    let Some(device) = common::device("device-generated inputs") else {
        return;
    };
    let starts = [0usize, 1, 65_537, (1usize << 32) + 3];
    let lens = [0usize, 1, 2, 13, 255, 257, 4097, 100_003];
    for dtype in DType::ALL {
        for (k, &start) in starts.iter().enumerate() {
            let len = lens[(k * 3 + dtype.size_bytes()) % lens.len()].max(lens[k + 1]);
            for len in [len, lens[k]] {
                let seed = 11 + k as u64;
                let (input, _) = device
                    .generate_hashed(dtype, start, len, seed)
                    .expect("generates");
                let host =
                    generate_range(dtype, start, len, Distribution::Hashed, seed).expect("fits");
                assert_eq!(
                    device.download(&input).expect("reads back"),
                    host.view().bytes(),
                    "{dtype} {start}+{len}"
                );
            }
        }
    }
}

#[test]
fn reductions_of_device_made_parts_equal_the_cpus() {
    let Some(device) = common::device("device-generated inputs") else {
        return;
    };
    let cases = [
        (Op::Sum, DType::F32),
        (Op::Sum, DType::F64),
        (Op::Sum, DType::I32),
        (Op::Min, DType::I32),
        (Op::Max, DType::F32),
        (Op::ArgMax, DType::F32),
        (Op::ArgMin, DType::F64),
        (Op::Xor, DType::U64),
    ];
    for (op, dtype) in cases {
        let problem = Problem::new(op, dtype, None).expect("valid");
        for n in [1usize, 8191, (1 << 18) + 1, 600_011] {
            let seed = 3;
            let host = generate_range(dtype, 0, n, Distribution::Hashed, seed).expect("fits");
            let expected = reference::reduce(&problem, host.view()).expect("reduces");
            // Three devices' worth of subtrees, each made on the device and reduced twice
            // in place (a timing per repeat, one result per part).
            let shards = plan(n, 3);
            let parts = device
                .reduce_hashed(&problem, &shards.subtrees, seed, 2)
                .expect("reduces");
            assert_eq!(parts.kernel_runs.len(), 2, "one time per repeat");
            assert_eq!(
                parts.values.len(),
                shards.subtrees.len(),
                "one result per part"
            );
            let value = combine(&problem, &shards, &parts.values).expect("a value");
            assert!(
                value.same_as(&expected),
                "{op} {dtype} n={n}: {value} vs {expected}"
            );
        }
    }
}
