//! Unit tests of the kernel-language parser (`parser.rs`).

use super::*;
use crate::preprocess::preprocess;

pub(crate) fn parse_text(text: &str) -> Result<Program, String> {
    let none = |_: &str, _: &str| Ok(None);
    let pp = preprocess("t.cl", text, &[], &none).map_err(|(d, f)| d.resolve(&f).to_string())?;
    parse(&pp.tokens).map_err(|d| d.resolve(&pp.files).to_string())
}

#[test]
fn kernels_with_attributes_structs_and_local_arrays() {
    let text = "typedef struct { float v; ulong i; } acc_t;\n\
        __kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n\
        void k(__global const float* in, __global acc_t* out, ulong n) {\n\
          __local acc_t s[2][64];\n  unsigned int a = 0, b[4] = {1, 2, 3, 4};\n\
          for (uint i = 0; i < n; i++) { if (i & 1) continue; else a += b[i & 3]; }\n\
          out[0] = s[1][a];\n}\n";
    let p = parse_text(text).expect("parses");
    let k = p.kernels().next().expect("a kernel");
    assert_eq!(k.reqd_work_group_size, Some([64, 1, 1]));
    assert_eq!(k.params.len(), 3);
    assert_eq!(k.params[0].ty.name(), "__global float*");
    let StmtKind::Block(body) = &k.body.kind else {
        panic!("block")
    };
    let StmtKind::Decl(d) = &body[0].kind else {
        panic!("decl")
    };
    assert_eq!((d[0].space, d[0].ty.size()), (Space::Local, 2 * 64 * 16));
    let StmtKind::Decl(d) = &body[1].kind else {
        panic!("decl")
    };
    assert_eq!(d[1].ty.name(), "uint[4]");
}

#[test]
fn an_alignment_after_a_declarator_is_kept() {
    let text = "__kernel void k(__global float* out) {\n\
          __local float a[3], s[64] __attribute__((aligned(16)));\n\
          __local float t[2] __attribute__((aligned));\n  out[0] = s[0] + a[0] + t[0];\n}\n";
    let p = parse_text(text).expect("parses");
    let k = p.kernels().next().expect("a kernel");
    let StmtKind::Block(body) = &k.body.kind else {
        panic!("block")
    };
    let aligns = |i: usize| {
        let StmtKind::Decl(d) = &body[i].kind else {
            panic!("decl")
        };
        d.iter().map(|v| v.align).collect::<Vec<_>>()
    };
    assert_eq!(aligns(0), [None, Some(16)]);
    assert_eq!(aligns(1), [Some(16)]);
}

#[test]
fn errors_name_line_and_column() {
    let err = parse_text("__kernel void k() {\n  int a = ;\n}").expect_err("fails");
    assert!(err.starts_with("t.cl:2:11:"), "{err}");
    let err = parse_text("__kernel void k() { goto end; }").expect_err("fails");
    assert!(err.contains("not supported"), "{err}");
    let err = parse_text("__kernel void k() { switch (1) { k(); } }").expect_err("fails");
    assert!(err.contains("before any case label"), "{err}");
}
