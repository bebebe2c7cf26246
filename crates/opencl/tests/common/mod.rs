//! What the OpenCL tests share: the first device, or a visible skip.

use redlab_opencl::OpenClDevice;

/// The first OpenCL device, or `None` after printing why `what` is skipped; without a
/// platform the test fails instead when `REDLAB_REQUIRE_OPENCL=1` (CI sets it).
pub fn device(what: &str) -> Option<OpenClDevice> {
    match OpenClDevice::open(0) {
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
