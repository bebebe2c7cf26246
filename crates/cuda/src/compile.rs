//! NVRTC: compiling assembled kernel source to PTX for one architecture, with the
//! compiler's log on failure. The library is loaded at run time; its absence is a
//! reason, checked before any call.
//!
//! Two environment variables help tell a kernel's bug from a code generator's:
//! `REDLAB_CUDA_CODE=cubin` has NVRTC assemble machine code for the device itself
//! (the driver then loads it as is, where it otherwise assembles the PTX at load time),
//! `REDLAB_CUDA_DUMP=<folder>` writes every module's source and image there, and
//! `REDLAB_NVRTC_OPTIONS` adds options, separated by spaces (`-Xptxas -O1`).
//!
//! Modules the device loads are kept on disk ([`crate::kernel_cache`]) and compiled once
//! per source, options and NVRTC version, not once per process.

use std::ffi::CStr;

use cudarc::nvrtc::{result, sys};

use crate::kernel_cache::KernelCache;

/// Whether libnvrtc can be loaded here.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    unsafe { sys::is_culib_present() }
}

/// The NVRTC options every kernel is built with for `arch` (`sm_90` or `compute_90`):
/// for machine code of `arch` itself where `machine_code` (NVRTC then assembles it), else
/// for PTX of its virtual architecture; then any of `REDLAB_NVRTC_OPTIONS`.
fn options(arch: &str, machine_code: bool) -> Vec<String> {
    let target = if machine_code {
        arch.replace("compute_", "sm_")
    } else {
        arch.replace("sm_", "compute_")
    };
    let mut options = vec![
        format!("--gpu-architecture={target}"),
        // The kernel files' plain `inline` helpers are device functions.
        "-default-device".into(),
        // Source lines in sanitizer and profiler reports.
        "-lineinfo".into(),
        // OpenCL's extension pragmas mean nothing here; keep them out of the logs.
        "-diag-suppress=161".into(),
        "-DREDLAB_CUDA=1".into(),
    ];
    if let Ok(extra) = std::env::var("REDLAB_NVRTC_OPTIONS") {
        options.extend(extra.split_whitespace().map(String::from));
    }
    options
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
    compile_image(source, name, &options(arch, false), false)
}

/// What the module cache loads: PTX, or machine code where `REDLAB_CUDA_CODE=cubin`
/// (module docs); each written to `REDLAB_CUDA_DUMP` when set, beside its source. An
/// image compiled before, by this process or another, comes from the kernel cache on
/// disk ([`KernelCache`]).
pub fn compile_module(source: &str, name: &str, arch: &str) -> Result<Vec<u8>, CompileFailure> {
    let machine_code = std::env::var("REDLAB_CUDA_CODE").is_ok_and(|v| v == "cubin");
    let options = options(arch, machine_code);
    // Without NVRTC nothing is looked up: its version is part of the key.
    let cache = nvrtc_version()
        .zip(KernelCache::from_env())
        .map(|(version, cache)| {
            let options = options.join("\n");
            let key = KernelCache::key(&[
                version.as_bytes(),
                options.as_bytes(),
                name.as_bytes(),
                source.as_bytes(),
            ]);
            (cache, key)
        });
    let image = match cache
        .as_ref()
        .and_then(|(c, key)| c.load(key, machine_code))
    {
        Some(image) => image,
        None => {
            let image = compile_image(source, name, &options, machine_code)?;
            if let Some((c, key)) = &cache {
                c.store(key, machine_code, &image);
            }
            image
        }
    };
    if let Some(dir) = std::env::var_os("REDLAB_CUDA_DUMP") {
        dump(std::path::Path::new(&dir), source, &image, machine_code);
    }
    Ok(image)
}

/// NVRTC's version as `major.minor`, where the library loads.
fn nvrtc_version() -> Option<String> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; the call writes two integers.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .ok()?;
    Some(format!("{major}.{minor}"))
}

/// Writes `source` and `image` under `dir`, named by a hash of the source. A diagnostic:
/// a folder that cannot be written is said once per module on stderr, nothing more.
fn dump(dir: &std::path::Path, source: &str, image: &[u8], machine_code: bool) {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut hasher);
    let stem = dir.join(format!("{:016x}", hasher.finish()));
    let image_ext = if machine_code { "cubin" } else { "ptx" };
    // PTX without the NUL the driver needs; a cubin as it is.
    let text = if machine_code {
        image
    } else {
        image.strip_suffix(&[0]).unwrap_or(image)
    };
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(stem.with_extension("cu"), source))
        .and_then(|()| std::fs::write(stem.with_extension(image_ext), text));
    if let Err(e) = written {
        eprintln!("REDLAB_CUDA_DUMP: {}: {e}", dir.display());
    }
}

/// Compiles `source` with `options`: machine code where `machine_code`, else PTX.
fn compile_image(
    source: &str,
    name: &str,
    options: &[String],
    machine_code: bool,
) -> Result<Vec<u8>, CompileFailure> {
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
    // SAFETY: `program` was just created and is destroyed below, once.
    let outcome = unsafe {
        match result::compile_program(program, options) {
            Ok(()) if machine_code => cubin(program).map_err(|e| fail("nvrtcGetCUBIN", e)),
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
    let mut image = outcome?;
    if !machine_code && image.last() != Some(&0) {
        image.push(0);
    }
    Ok(image)
}

/// The machine code of a compiled program.
///
/// # Safety
///
/// `program` must be compiled and not destroyed.
unsafe fn cubin(program: sys::nvrtcProgram) -> Result<Vec<u8>, result::NvrtcError> {
    let mut size = 0usize;
    // SAFETY: as the caller promises; the buffer holds `size` bytes.
    unsafe {
        sys::nvrtcGetCUBINSize(program, &mut size).result()?;
        let mut bytes = vec![0u8; size];
        sys::nvrtcGetCUBIN(program, bytes.as_mut_ptr().cast()).result()?;
        Ok(bytes)
    }
}
