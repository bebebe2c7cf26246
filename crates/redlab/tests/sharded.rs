//! A group of devices (`cpu:0,0`, `opencl:0,0` here; `cuda:0,1` on a GPU machine) gives
//! the one-device result bit for bit: floats in the canonical order, integers and
//! selections exactly, argmin/argmax with global indices, for every operator on sizes
//! around tile and subtree boundaries; arrays made on the devices themselves (`hashed`)
//! give the host's bits too.

use redlab::generate::{generate, Distribution};
use redlab::{DType, Device, Op, Problem};

fn groups() -> Vec<&'static str> {
    let mut g = vec!["cpu:0,0", "cpu:0,0,0"];
    let required = std::env::var("REDLAB_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    match Device::open("opencl:0", None) {
        Ok(_) => g.push("opencl:0,0,0"),
        Err(e) => {
            assert!(
                !required,
                "REDLAB_REQUIRE_OPENCL=1 but OpenCL is not usable: {e}"
            );
            eprintln!("SKIPPED: the OpenCL group ({e})");
        }
    }
    g
}

#[test]
fn groups_of_devices_give_the_one_device_bits() {
    let cpu = Device::open("cpu", None).expect("cpu");
    for name in groups() {
        let group = Device::open(name, None).expect("group opens");
        assert!(group.info().details.iter().any(|(k, _)| k == "members"));
        for dtype in [DType::F32, DType::F64, DType::I32, DType::U8] {
            for n in [0, 1, 8191, 8193, 3 * 65_536 + 17, 1 << 20] {
                let data = generate(dtype, n, Distribution::Normal, 3).expect("data");
                for op in Op::ALL {
                    let Ok(problem) = Problem::new(op, dtype, None) else {
                        continue;
                    };
                    let want = cpu.reduce(&problem, data.view()).expect("cpu").value;
                    let got = group
                        .reduce(&problem, data.view())
                        .unwrap_or_else(|e| panic!("{name} {problem} n={n}: {e}"))
                        .value;
                    assert!(
                        got.same_as(&want),
                        "{name} {problem} n={n}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_group_says_what_it_does_not_do_yet() {
    let group = Device::open("cpu:0,0", None).expect("group opens");
    let plan =
        redlab::shape::AxisPlan::new(redlab::shape::Layout::c_order(&[2, 3]), Some(&[1]), false)
            .expect("plan");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let e = group
        .reduce_outputs(
            &problem,
            redlab::ArrayRef::from_slice(&[1.0f32; 6]),
            redlab::segmented::Selection::Axes(&plan),
        )
        .expect_err("not yet");
    assert!(e.to_string().contains("reduces whole arrays only"), "{e}");
    assert!(Device::open("cuda:0,", None).is_err());
}

#[test]
fn arrays_made_on_each_device_give_the_hosts_bits() {
    let mut names = groups();
    names.insert(0, "cpu");
    if names.contains(&"opencl:0,0,0") {
        names.push("opencl:0");
    }
    for name in names {
        let device = Device::open(name, None).expect("opens");
        for dtype in [DType::F32, DType::F64, DType::I32, DType::F16] {
            for n in [0, 1, 8191, 8193, 3 * 65_536 + 17, (1 << 20) + 1] {
                let data = generate(dtype, n, Distribution::Hashed, 4).expect("data");
                for op in [Op::Sum, Op::Max, Op::ArgMin] {
                    let problem = Problem::new(op, dtype, None).expect("valid");
                    let want = redlab::reference::reduce(&problem, data.view()).expect("reference");
                    let made = redlab::generated::reduce_hashed(&device, &problem, n, 4)
                        .unwrap_or_else(|e| panic!("{name} {problem} n={n}: {e}"));
                    assert!(
                        made.value.same_as(&want),
                        "{name} {problem} n={n}: {} vs {want}",
                        made.value
                    );
                    let streamed =
                        redlab::generated::reference_hashed(&problem, n, 4).expect("host");
                    assert!(
                        streamed.same_as(&want),
                        "{problem} n={n}: {streamed} vs {want}"
                    );
                    let shares: usize = made.devices.iter().map(|d| d.elements).sum();
                    assert_eq!(shares, n, "{name}: every element belongs to one device");
                }
            }
        }
    }
}
