//! Dynamic shared memory of kernels that ask for it.
//!
//! A kernel that needs more shared memory than a block's 48 KiB of static memory
//! (the bulk-copy rings of `warp_bulk.h`) says so in its module: the global
//! `redlab_dynamic_shared_bytes` holds the bytes, `redlab_dynamic_shared_from` the
//! smallest input that uses them. When the module cache looks a function up, it raises
//! the function's dynamic shared memory limit to those bytes and notes them here; every
//! launch then asks [`bytes_for`] what to give. Smaller inputs launch without the memory
//! (it would cost occupancy on a path that does not read it), and the kernel checks what
//! it was given, so a launch without it still runs the register path.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use cudarc::driver::{result, sys};
use redlab_kernels::RunError;

use crate::memory::cu;

/// The global holding the bytes a module's kernels ask for.
pub(crate) const SYMBOL_BYTES: &str = "redlab_dynamic_shared_bytes";
/// The global holding the smallest element count that uses them.
const SYMBOL_FROM: &str = "redlab_dynamic_shared_from";

/// What a function asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DynamicShared {
    /// Bytes of dynamic shared memory.
    pub bytes: u32,
    /// The smallest element count that uses them.
    pub from: u64,
}

/// Functions that ask for dynamic shared memory, by handle.
static FUNCTIONS: RwLock<Option<HashMap<usize, DynamicShared>>> = RwLock::new(None);
/// Whether any function has asked (launches skip the lock until one has).
static ANY: AtomicBool = AtomicBool::new(false);

/// Reads what `module` asks for, if it exports it. The module's context must be current.
pub(crate) fn read_module(module: sys::CUmodule) -> Result<Option<DynamicShared>, RunError> {
    let global = |name: &str| {
        let name = CString::new(name).unwrap_or_default();
        // SAFETY: the module is loaded; a missing symbol is an error result, not UB.
        unsafe { result::module::get_global(module, name) }.ok()
    };
    let (Some((bytes_at, 4)), Some((from_at, 8))) = (global(SYMBOL_BYTES), global(SYMBOL_FROM))
    else {
        return Ok(None);
    };
    let (mut bytes, mut from) = ([0u32], [0u64]);
    // SAFETY: both symbols have the sizes matched above.
    unsafe {
        result::memcpy_dtoh_sync(&mut bytes, bytes_at).map_err(cu("cuMemcpyDtoH"))?;
        result::memcpy_dtoh_sync(&mut from, from_at).map_err(cu("cuMemcpyDtoH"))?;
    }
    Ok(Some(DynamicShared {
        bytes: bytes[0],
        from: from[0],
    }))
}

/// Raises `function`'s limit to what `asks` says and notes it for launches.
pub(crate) fn register(function: sys::CUfunction, asks: DynamicShared) -> Result<(), RunError> {
    // SAFETY: the function belongs to a loaded module.
    unsafe {
        result::function::set_function_attribute(
            function,
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            asks.bytes as i32,
        )
    }
    .map_err(cu("cuFuncSetAttribute(max dynamic shared memory)"))?;
    let mut table = FUNCTIONS
        .write()
        .map_err(|_| RunError::Device("dynamic shared memory table poisoned".into()))?;
    table
        .get_or_insert_with(HashMap::new)
        .insert(function as usize, asks);
    ANY.store(true, Ordering::Release);
    Ok(())
}

/// Bytes of dynamic shared memory to launch `function` with over `n` elements.
pub(crate) fn bytes_for(function: sys::CUfunction, n: u64) -> u32 {
    if !ANY.load(Ordering::Acquire) {
        return 0;
    }
    FUNCTIONS
        .read()
        .ok()
        .and_then(|table| table.as_ref()?.get(&(function as usize)).copied())
        .filter(|asks| n >= asks.from)
        .map_or(0, |asks| asks.bytes)
}
