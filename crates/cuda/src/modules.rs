//! The module cache of one device: NVRTC-compiled PTX (or a cubin, with
//! `REDLAB_CUDA_CODE=cubin`: `compile::compile_module`) loaded as a module, keyed by the
//! assembled source (which holds every define) and the architecture, with its functions
//! looked up once. Callers that can name what a source is assembled from in a few
//! bytes look its functions up by that name ([`ModuleCache::memoized`]), without
//! assembling the source again: assembly costs about a tenth of a millisecond per call.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Mutex;

use cudarc::driver::{result, sys};
use redlab_kernels::RunError;

use crate::compile;
use crate::dynamic_shared::{self, DynamicShared};
use crate::memory::cu;

struct Module {
    handle: sys::CUmodule,
    functions: HashMap<String, sys::CUfunction>,
    /// The dynamic shared memory the module's kernels ask for ([`dynamic_shared`]).
    dynamic: Option<DynamicShared>,
}

/// Loaded modules by source.
#[derive(Default)]
pub(crate) struct ModuleCache {
    modules: Mutex<HashMap<String, Module>>,
    /// Functions by the short key of what their source is assembled from.
    memo: Mutex<HashMap<String, Vec<sys::CUfunction>>>,
}

// SAFETY: module and function handles are plain driver handles, used with the owning
// context current and under the cache's lock or the device's run lock.
unsafe impl Send for ModuleCache {}
unsafe impl Sync for ModuleCache {}

impl ModuleCache {
    /// The functions `names` of `source`, compiling and loading it on first use. The
    /// device's context must be current.
    pub(crate) fn functions(
        &self,
        source: &str,
        arch: &str,
        names: &[&str],
    ) -> Result<Vec<sys::CUfunction>, RunError> {
        self.prefixed_functions("", source, arch, names)
    }

    /// [`Self::functions`] of `prefix` (defines, say) followed by `source`, joined once
    /// in the key rather than copied by the caller on every call.
    pub(crate) fn prefixed_functions(
        &self,
        prefix: &str,
        source: &str,
        arch: &str,
        names: &[&str],
    ) -> Result<Vec<sys::CUfunction>, RunError> {
        let key = format!("{arch}\n{prefix}{source}");
        let full_source = &key[arch.len() + 1..];
        let lock = || {
            self.modules
                .lock()
                .map_err(|_| RunError::Device("module cache lock poisoned".into()))
        };
        // Compiling takes NVRTC a tenth of a second or more: it happens outside the lock,
        // so threads building different kernels do not wait for each other.
        let ptx = if lock()?.contains_key(&key) {
            None
        } else {
            Some(
                compile::compile_module(full_source, "redlab.cu", arch)
                    .map_err(|f| RunError::Build(f.log))?,
            )
        };
        let mut modules = lock()?;
        if let (false, Some(ptx)) = (modules.contains_key(&key), ptx) {
            // SAFETY: `ptx` is NUL-terminated PTX text or a cubin image, either outliving
            // the call.
            let handle = unsafe { result::module::load_data(ptx.as_ptr().cast()) }
                .map_err(cu("cuModuleLoadData"))?;
            // Only modules whose PTX declares it are asked (a missing symbol is a driver
            // error, which tools such as compute-sanitizer report). The PTX, not the
            // source: headers are inlined whole, also where the preprocessor drops them.
            let symbol = dynamic_shared::SYMBOL_BYTES.as_bytes();
            let dynamic = if ptx.windows(symbol.len()).any(|w| w == symbol) {
                dynamic_shared::read_module(handle)?
            } else {
                None
            };
            modules.insert(
                key.clone(),
                Module {
                    handle,
                    functions: HashMap::new(),
                    dynamic,
                },
            );
        }
        let module = modules
            .get_mut(&key)
            .ok_or_else(|| RunError::Device("module vanished from the cache".into()))?;
        names
            .iter()
            .map(|&name| {
                if let Some(&f) = module.functions.get(name) {
                    return Ok(f);
                }
                let c_name = CString::new(name)
                    .map_err(|_| RunError::Device(format!("bad kernel name {name}")))?;
                // SAFETY: the module is loaded and not unloaded while cached.
                let f = unsafe { result::module::get_function(module.handle, c_name) }
                    .map_err(cu("cuModuleGetFunction"))?;
                if let Some(asks) = module.dynamic {
                    dynamic_shared::register(f, asks)?;
                }
                module.functions.insert(name.to_string(), f);
                Ok(f)
            })
            .collect()
    }

    /// The functions `key` names, from `build` on first use. `key` must determine the
    /// assembled source and the names asked for, as [`Self::functions`]' key does.
    pub(crate) fn memoized(
        &self,
        key: &str,
        build: impl FnOnce() -> Result<Vec<sys::CUfunction>, RunError>,
    ) -> Result<Vec<sys::CUfunction>, RunError> {
        let lock = || {
            self.memo
                .lock()
                .map_err(|_| RunError::Device("function memo poisoned".into()))
        };
        if let Some(functions) = lock()?.get(key) {
            return Ok(functions.clone());
        }
        let functions = build()?;
        lock()?.insert(key.to_string(), functions.clone());
        Ok(functions)
    }

    /// Unloads every module (the context must be current).
    pub(crate) fn clear(&self) {
        if let Ok(mut memo) = self.memo.lock() {
            memo.clear();
        }
        if let Ok(mut modules) = self.modules.lock() {
            for (_, module) in modules.drain() {
                // SAFETY: loaded by this cache, unloaded once.
                let _ = unsafe { result::module::unload(module.handle) };
            }
        }
    }
}
