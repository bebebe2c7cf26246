//! Helpers the binary's end-to-end tests share: running `redlab`, reading its JSON, and
//! asserting that bad input ends as one clear line on stderr, and building `.npy` files.
// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use std::process::Output;

use assert_cmd::Command;
use serde_json::Value as Json;

/// Runs the `redlab` binary with `args`.
pub fn redlab(args: &[&str]) -> Output {
    Command::cargo_bin("redlab")
        .expect("binary is built")
        .args(args)
        .output()
        .expect("binary runs")
}

/// The one JSON object a successful command printed.
pub fn json_of(output: &Output) -> Json {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON object")
}

/// Asserts a clean failure: exit code 2 and exactly one line on stderr naming `needle`.
pub fn assert_clean_error(args: &[&str], needle: &str) {
    assert_clean_failure(args, &redlab(args), needle);
}

/// [`assert_clean_error`] for a command already run.
pub fn assert_clean_failure(args: &[&str], output: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(stderr.starts_with("redlab: error: "), "{args:?}: {stderr}");
    assert!(
        stderr.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: '{needle}' not in: {stderr}"
    );
    for bad in ["panicked", "backtrace", "RUST_BACKTRACE"] {
        assert!(!stderr.contains(bad), "{args:?}: {stderr}");
    }
}

/// `.npy` bytes with a header dictionary given as text (padded as numpy pads it), for
/// tests of damaged and unusual headers.
pub fn npy_with_header(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.as_bytes().to_vec();
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    header.extend(std::iter::repeat_n(b' ', pad));
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header);
    bytes.extend(data);
    bytes
}

/// The first OpenCL device, or `None` after printing why `what` is skipped; without a
/// platform the test fails instead when `REDLAB_REQUIRE_OPENCL=1` (CI sets it).
pub fn opencl_or_skip(what: &str) -> Option<redlab::Device> {
    match redlab::Device::open("opencl:0", None) {
        Ok(device) => Some(device),
        Err(e) => {
            let required = std::env::var("REDLAB_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "REDLAB_REQUIRE_OPENCL=1 but OpenCL is not usable: {e}"
            );
            eprintln!("SKIPPED: {what} need a platform: {e}");
            None
        }
    }
}

/// A port for a child rank or driver to listen on: why it is not simply port 0's pick is
/// in [`redlab::rendezvous::local_listening_port`].
pub fn listening_port() -> u16 {
    redlab::rendezvous::local_listening_port().expect("a free port below the ephemeral range")
}
