//! NVRTC: compiling assembled kernel source to PTX for one architecture, with the
//! compiler's log on failure. The library is loaded at run time; its absence is a
//! reason, checked before any call.

use std::ffi::CStr;

use cudarc::nvrtc::{result, sys};

/// Whether libnvrtc can be loaded here.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    unsafe { sys::is_culib_present() }
}

/// The NVRTC options every kernel is built with for `arch` (`sm_90` or `compute_90`).
pub fn options(arch: &str) -> Vec<String> {
    let virtual_arch = arch.replace("sm_", "compute_");
    vec![
        format!("--gpu-architecture={virtual_arch}"),
        // The kernel files' plain `inline` helpers are device functions.
        "-default-device".into(),
        // Source lines in sanitizer and profiler reports.
        "-lineinfo".into(),
        // OpenCL's extension pragmas mean nothing here; keep them out of the logs.
        "-diag-suppress=161".into(),
        "-DREDLAB_CUDA=1".into(),
    ]
}

/// A failed compile: the log, which names the line in the assembled source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileFailure {
    /// NVRTC's log (or the failing call).
    pub log: String,
}

fn text(chars: &[std::ffi::c_char]) -> String {
    // SAFETY: NVRTC returns NUL-terminated strings.
    unsafe { CStr::from_ptr(chars.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Compiles `source` (named `name` in messages) for `arch`; returns NUL-terminated PTX.
pub fn compile(source: &str, name: &str, arch: &str) -> Result<Vec<u8>, CompileFailure> {
    if !nvrtc_present() {
        return Err(CompileFailure {
            log: "libnvrtc could not be loaded (install the CUDA toolkit or the \
                  nvidia-cuda-nvrtc wheel and put its lib folder on LD_LIBRARY_PATH)"
                .into(),
        });
    }
    let fail = |what: &str, e: result::NvrtcError| CompileFailure {
        log: format!("{what}: {e:?}"),
    };
    let source = std::ffi::CString::new(source).map_err(|_| CompileFailure {
        log: "the source contains a NUL byte".into(),
    })?;
    let name = std::ffi::CString::new(name).unwrap_or_default();
    let program =
        result::create_program(&source, Some(&name)).map_err(|e| fail("nvrtcCreateProgram", e))?;
    let options = options(arch);
    // SAFETY: `program` was just created and is destroyed below, once.
    let outcome = unsafe {
        match result::compile_program(program, &options) {
            Ok(()) => result::get_ptx(program)
                .map(|ptx| ptx.iter().map(|&c| c as u8).collect::<Vec<u8>>())
                .map_err(|e| fail("nvrtcGetPTX", e)),
            Err(e) => Err(CompileFailure {
                log: match result::get_program_log(program) {
                    Ok(log) => text(&log),
                    Err(_) => format!("nvrtcCompileProgram: {e:?}"),
                },
            }),
        }
    };
    // SAFETY: as above; the program is not used after this.
    let _ = unsafe { result::destroy_program(program) };
    let mut ptx = outcome?;
    if ptx.last() != Some(&0) {
        ptx.push(0);
    }
    Ok(ptx)
}
