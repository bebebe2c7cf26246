//! Unit tests of [`super`]: directives, conditionals, macros with arguments, includes and
//! the positions of errors.

use super::*;

fn run(text: &str, defines: &[&str]) -> Result<String, String> {
    let defines: Vec<String> = defines.iter().map(|s| s.to_string()).collect();
    let resolve = |name: &str, _: &str| {
        Ok((name == "h.h").then(|| ("h.h".to_string(), "#define FROM_HEADER 7\n".to_string())))
    };
    preprocess("t.cl", text, &defines, &resolve)
        .map(|p| {
            p.tokens
                .iter()
                .map(Token::text)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .map_err(|(d, files)| d.resolve(&files).to_string())
}

#[test]
fn function_like_macros_expand_arguments_and_rescan() {
    let text = "#define SQ(x) ((x) * (x))\n#define TWICE(f, v) f(f(v))\nTWICE(SQ, a + 1)";
    assert_eq!(
        run(text, &[]).expect("ok"),
        "( ( ( ( a + 1 ) * ( a + 1 ) ) ) * ( ( ( a + 1 ) * ( a + 1 ) ) ) )"
    );
}

#[test]
fn a_macro_does_not_expand_inside_itself() {
    assert_eq!(run("#define X X + 1\nX", &[]).expect("ok"), "X + 1");
}

#[test]
fn conditionals_defined_elif_and_command_line_defines() {
    let text =
        "#if defined(A) && B > 2\nyes\n#elif B == 2\ntwo\n#else\nno\n#endif\n#ifndef C\nc\n#endif";
    assert_eq!(run(text, &["A", "B=3"]).expect("ok"), "yes c");
    assert_eq!(run(text, &["B=2", "C"]).expect("ok"), "two");
    assert_eq!(run(text, &[]).expect("ok"), "no c");
}

#[test]
fn includes_paste_and_errors_with_positions() {
    assert_eq!(run("#include \"h.h\"\nFROM_HEADER", &[]).expect("ok"), "7");
    assert_eq!(
        run("#define CAT(a, b) a ## b\nCAT(x, 1)", &[]).expect("ok"),
        "x1"
    );
    let err = run("int a;\n#include \"missing.h\"", &[]).expect_err("fails");
    assert!(err.starts_with("t.cl:2:2:"), "{err}");
    let err = run("#if 1\nx", &[]).expect_err("fails");
    assert!(err.contains("#if without #endif"), "{err}");
    let err = run("#error stop here", &[]).expect_err("fails");
    assert!(err.contains("#error stop here"), "{err}");
}
