//! `redlab run --stat var|std|logsumexp|nanmin|nanmax|nanmean` end to end: whole arrays
//! and axes verify against the two-pass references, `--out` writes numpy's shape, and a
//! device other than the CPU gets one clear error line.

mod common;

use common::{json_of, redlab};

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
fn other_devices_say_these_run_on_the_cpu() {
    let o = redlab(&[
        "run", "--stat", "var", "--dtype", "f32", "--n", "1000", "--device", "opencl:0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("CPU only") || err.contains("opencl"), "{err}");
}
