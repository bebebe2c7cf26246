//! OpenCL C constructs the simulator runs as a device would: vector and struct kernel
//! arguments (given as comma-separated values), copies of structs that hold arrays,
//! program-scope pointers initialised from program-scope arrays, packed structs (the
//! attribute before or after the body) and buffers of structs given as bytes.

use redlab_analyzer::args::bind;
use redlab_analyzer::compile;
use redlab_analyzer::memory::Memory;
use redlab_analyzer::sim::{launch, LaunchConfig};

const KERNELS: &str = r#"
typedef struct { int a; float b; int2 c; } S;
typedef struct { int v[4]; short tag; } A;
__constant int table[4] = {10, 20, 30, 40};
__constant int* entry = table + 1;

typedef struct __attribute__((packed)) { char c; int i; } P;
typedef struct { char c; int i; } __attribute__((packed)) R;
typedef struct { char c; int i; } Q;

__kernel void packed(__global P* p, __global int* out) {
    out[0] = sizeof(P);
    out[1] = sizeof(R);
    out[2] = sizeof(Q);
    out[3] = p[1].i;
    out[4] = (int)p[1].c;
}

__kernel void by_value(__global int* out, int4 v, S s) {
    out[get_global_id(0)] = v.x + v.w + s.a + (int)s.b + s.c.y;
}

__kernel void copies(__global int* out) {
    A a;
    for (int i = 0; i < 4; i++) a.v[i] = i * 3;
    a.tag = 5;
    A b = a;
    A c;
    c = b;
    out[get_global_id(0)] = c.v[get_global_id(0) % 4] + c.tag;
}

__kernel void pointers(__global int* out) {
    out[get_global_id(0)] = entry[get_global_id(0) % 3];
}
"#;

fn run(kernel: &str, args: &[(&str, &str)]) -> Result<Vec<i32>, String> {
    let compiled =
        compile("constructs.cl", KERNELS, &[], &|_, _| Ok(None)).map_err(|e| e.to_string())?;
    let f = compiled
        .program
        .kernels()
        .find(|k| &*k.name == kernel)
        .cloned()
        .ok_or("no kernel")?;
    let given: Vec<(String, String)> = args
        .iter()
        .map(|(n, s)| (n.to_string(), s.to_string()))
        .collect();
    let mut mem = Memory::default();
    let bound = bind(&f, &given, &mut mem, 1).map_err(|e| e.to_string())?;
    let report = launch(
        &compiled.program,
        &compiled.files,
        kernel,
        &bound,
        &mut mem,
        &LaunchConfig::linear(8, 4),
    )
    .map_err(|e| e.to_string())?;
    assert!(
        report.metrics.findings.is_empty(),
        "{:#?}",
        report.metrics.findings
    );
    Ok(mem.global[0]
        .bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

#[test]
fn vectors_and_structs_pass_by_value() {
    let out = run(
        "by_value",
        &[
            ("out", "buffer:int:8:zeros"),
            ("v", "1,2,3,40"),
            ("s", "7, 2.5, 100, 200"),
        ],
    )
    .expect("runs");
    assert_eq!(out, vec![1 + 40 + 7 + 2 + 200; 8]);
    // One value fills a vector, as (int4)(5) does.
    let out = run(
        "by_value",
        &[("out", "buffer:int:8:zeros"), ("v", "5"), ("s", "0,0,0,0")],
    )
    .expect("runs");
    assert_eq!(out, vec![10; 8]);
    let wrong = run(
        "by_value",
        &[
            ("out", "buffer:int:8:zeros"),
            ("v", "1,2"),
            ("s", "0,0,0,0"),
        ],
    );
    assert!(wrong
        .expect_err("refused")
        .contains("2 values given, 4 needed"));
}

#[test]
fn structs_holding_arrays_copy_whole() {
    let out = run("copies", &[("out", "buffer:int:8:zeros")]).expect("runs");
    assert_eq!(out, vec![5, 8, 11, 14, 5, 8, 11, 14]);
}

#[test]
fn program_scope_pointers_point_into_program_scope_arrays() {
    let out = run("pointers", &[("out", "buffer:int:8:zeros")]).expect("runs");
    assert_eq!(out, vec![20, 30, 40, 20, 30, 40, 20, 30]);
}

#[test]
fn packed_structs_have_no_padding_and_struct_buffers_are_bytes() {
    let compiled = compile("constructs.cl", KERNELS, &[], &|_, _| Ok(None)).expect("compiles");
    let f = compiled
        .program
        .kernels()
        .find(|k| &*k.name == "packed")
        .cloned()
        .expect("kernel");
    let given = [
        ("p".to_string(), "buffer:uchar:10:iota".to_string()),
        ("out".to_string(), "buffer:int:5:zeros".to_string()),
    ];
    let mut mem = Memory::default();
    let bound = bind(&f, &given, &mut mem, 1).expect("binds");
    launch(
        &compiled.program,
        &compiled.files,
        "packed",
        &bound,
        &mut mem,
        &LaunchConfig::linear(1, 1),
    )
    .expect("runs");
    let out: Vec<i32> = mem.global[1]
        .bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    // Element 1 of the packed array starts at byte 5: c = 5, i = bytes 6..9.
    assert_eq!(out, vec![5, 5, 8, i32::from_le_bytes([6, 7, 8, 9]), 5]);
}
