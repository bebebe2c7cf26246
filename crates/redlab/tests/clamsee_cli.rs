//! `redlab analyze FILE.clamsee` end to end: a session runs its calls, `--show` prints
//! an array, `--dump` writes arrays as .npy that read back, an existing file is kept
//! without `--force`, and a name that is not an array is one clear error.

mod common;

use common::{assert_clean_error, redlab};

fn fixture(name: &str) -> String {
    format!(
        "{}/../analyzer/tests/fixtures/clamsee/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn a_session_shows_and_dumps_its_arrays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().to_str().expect("utf-8").to_string();
    let session = fixture("reduce_v3.clamsee");
    let o = redlab(&[
        "analyze",
        &session,
        "--show",
        "total",
        "--dump",
        "output",
        "--dump",
        "total",
        "--out-dir",
        &out_dir,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("total after the run: [10240]"), "{text}");
    let output = redlab::input::load(&dir.path().join("output.npy"), None).expect("reads back");
    assert_eq!(output.shape, vec![8]);
    assert_eq!(
        output.array.view().typed::<f32>().expect("f32"),
        &[1280.0; 8]
    );
    let total = redlab::input::load(&dir.path().join("total.npy"), None).expect("reads back");
    assert_eq!(total.array.view().typed::<f32>().expect("f32"), &[10240.0]);
    let before = std::fs::read(dir.path().join("total.npy")).expect("reads");
    assert_clean_error(
        &[
            "analyze",
            &session,
            "--dump",
            "total",
            "--out-dir",
            &out_dir,
        ],
        "exists; give --force",
    );
    assert_eq!(
        std::fs::read(dir.path().join("total.npy")).expect("reads"),
        before
    );
    assert_clean_error(
        &[
            "analyze",
            &session,
            "--dump",
            "nosuch",
            "--out-dir",
            &out_dir,
        ],
        "the session has no array nosuch",
    );
}
