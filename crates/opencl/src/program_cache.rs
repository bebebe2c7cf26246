//! Built programs, cached by (source, options): the source already encodes the device's
//! quirks, the variant, the problem and the parameters, so the same text never builds
//! twice on one device. A build failure carries the compiler's log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use opencl3::context::Context;
use opencl3::kernel::Kernel;
use opencl3::program::Program;

/// One lock for every program build and release in the process. PoCL keeps a
/// process-wide cache of compiled kernel libraries whose reference counts are not safe
/// against builds and releases on several contexts at once: a group of one device three
/// times (`opencl:0,0,0`) building the same program on three threads aborted in
/// `pocl_release_dlhandle_cache`. Builds are rare (each source once per device), so
/// serializing them costs little.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// A built program and its kernels by name.
pub struct Built {
    /// Keeps the program alive as long as its kernels (taken and released in `drop`,
    /// under [`BUILD_LOCK`]).
    program: Option<Program>,
    kernels: Vec<(String, Kernel)>,
}

impl Drop for Built {
    fn drop(&mut self) {
        let _guard = BUILD_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        self.kernels.clear();
        drop(self.program.take());
    }
}

impl Built {
    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|(n, _)| n == name).map(|(_, k)| k)
    }
}

// SAFETY: OpenCL objects are thread-safe by the specification (except clSetKernelArg on
// one kernel from several threads, which the driver serializes with the device lock).
unsafe impl Send for Built {}
unsafe impl Sync for Built {}

/// A failed build: the compiler's log and the source it was given.
#[derive(Debug, Clone)]
pub struct BuildError {
    /// The compiler's log.
    pub log: String,
}

/// Programs built on one device.
#[derive(Default)]
pub struct ProgramCache {
    built: Mutex<HashMap<(String, String), Arc<Built>>>,
}

impl ProgramCache {
    /// The program for `source` with `options`, built on first use.
    pub fn get(
        &self,
        context: &Context,
        source: &str,
        options: &str,
        kernels: &[&str],
    ) -> Result<Arc<Built>, BuildError> {
        let key = (source.to_string(), options.to_string());
        if let Some(hit) = self.built.lock().map_err(|_| poisoned())?.get(&key) {
            return Ok(hit.clone());
        }
        let built = {
            let _guard = BUILD_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
            let program = Program::create_and_build_from_source(context, source, options)
                .map_err(|log| BuildError { log })?;
            let mut named = Vec::new();
            for &name in kernels {
                let kernel = Kernel::create(&program, name).map_err(|e| BuildError {
                    log: format!("kernel {name} not found after building: {e}"),
                })?;
                named.push((name.to_string(), kernel));
            }
            Arc::new(Built {
                program: Some(program),
                kernels: named,
            })
        };
        // The lock is released before the insert: an entry it replaces may drop a Built,
        // whose drop takes the lock.
        self.built
            .lock()
            .map_err(|_| poisoned())?
            .insert(key, built.clone());
        Ok(built)
    }
}

fn poisoned() -> BuildError {
    BuildError {
        log: "program cache lock poisoned by an earlier panic".into(),
    }
}
