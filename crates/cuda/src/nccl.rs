//! NCCL between the GPUs of a multi-process reduction, through cudarc's nccl module
//! with libnccl loaded at run time (nothing NCCL is needed to build redlab).
//!
//! The ranks exchange their subtree roots with one all-gather of bytes and join them in
//! the canonical tree order themselves: NCCL's own reductions add in an order of its
//! choosing, which would break the promise that the bits do not depend on the number of
//! GPUs. NVLink multicast (NVLS) stays off: every communicator is made with
//! `NCCL_NVLS_ENABLE=0`.

use std::ffi::c_void;

use cudarc::driver::{result as driver, sys as driver_sys};
use cudarc::nccl::{result as nccl, sys};

use crate::memory::{cu, DeviceBuffer};
use crate::{CudaDevice, RunError};

/// Bytes of an NCCL unique id, which rank 0 makes and every rank needs.
pub const UNIQUE_ID_BYTES: usize = 128;

/// The NCCL version here (`NCCL 2.21.5`), or why NCCL cannot be used.
pub fn status() -> Result<String, String> {
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(missing_reason());
    }
    let v = nccl::get_nccl_version().map_err(|e| format!("ncclGetVersion: {e:?}"))?;
    Ok(format!(
        "NCCL {}.{}.{}",
        v / 10000,
        (v / 100) % 100,
        v % 100
    ))
}

/// Why libnccl was not found, with the fix when only the versioned name is present.
fn missing_reason() -> String {
    // SAFETY: loading a library by name runs its initializers, as loading NCCL would.
    let versioned = unsafe { libloading::Library::new("libnccl.so.2") }.is_ok();
    if versioned {
        "libnccl.so.2 is here but the loader looks for libnccl.so (as the libnccl-dev package names it): link libnccl.so to it in a folder on LD_LIBRARY_PATH".into()
    } else {
        "the NCCL library (libnccl) is not installed; the libnccl2 package or the nvidia-nccl wheel provides it".into()
    }
}

/// A new unique id (on rank 0), as bytes to send to the other ranks.
pub fn unique_id() -> Result<Vec<u8>, RunError> {
    status().map_err(RunError::Device)?;
    let id =
        nccl::get_uniqueid().map_err(|e| RunError::Device(format!("ncclGetUniqueId: {e:?}")))?;
    Ok(id.internal.iter().map(|&c| c as u8).collect())
}

/// One rank's NCCL communicator on its GPU.
pub struct Communicator<'d> {
    device: &'d CudaDevice,
    comm: sys::ncclComm_t,
    world: usize,
}

impl CudaDevice {
    /// The GPU's UUID as text: ranks compare them, since NCCL takes one rank per GPU.
    pub fn uuid(&self) -> Result<String, RunError> {
        let id = driver::device::get_uuid(self.device).map_err(cu("cuDeviceGetUuid"))?;
        Ok(id
            .bytes
            .iter()
            .map(|&b| format!("{:02x}", b as u8))
            .collect())
    }

    /// Joins the communicator of `world` ranks that `id` (from [`unique_id`] on rank 0)
    /// names, as `rank`. Every rank must call this at the same time.
    pub fn communicator(
        &self,
        id: &[u8],
        rank: usize,
        world: usize,
    ) -> Result<Communicator<'_>, RunError> {
        status().map_err(RunError::Device)?;
        if id.len() != UNIQUE_ID_BYTES {
            return Err(RunError::Device(format!(
                "an NCCL unique id has {UNIQUE_ID_BYTES} bytes, not {}",
                id.len()
            )));
        }
        let mut unique = sys::ncclUniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        for (to, &from) in unique.internal.iter_mut().zip(id) {
            *to = from as _;
        }
        // NVLink multicast stays off (see the module notes); set before NCCL reads it.
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
        self.timeline.bind()?;
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the handle; the id came from ncclGetUniqueId on rank 0.
        unsafe { nccl::comm_init_rank(&mut comm, world as i32, unique, rank as i32) }.map_err(
            |e| RunError::Device(format!("ncclCommInitRank (rank {rank} of {world}): {e:?}")),
        )?;
        Ok(Communicator {
            device: self,
            comm,
            world,
        })
    }
}

impl Communicator<'_> {
    /// Every rank's `mine` (all of the same length), concatenated in rank order, and the
    /// seconds the all-gather took on the GPU.
    pub fn all_gather(&self, mine: &[u8]) -> Result<(Vec<u8>, f64), RunError> {
        let timeline = &self.device.timeline;
        let send = DeviceBuffer::alloc(timeline.ctx, mine.len().max(1))?;
        let receive = DeviceBuffer::alloc(timeline.ctx, (mine.len() * self.world).max(1))?;
        timeline.write(&send, mine)?;
        let seconds = timeline.time(|stream| {
            // SAFETY: both buffers are device memory of this context and hold the counts.
            unsafe {
                nccl::all_gather(
                    send.ptr as *const c_void,
                    receive.ptr as *mut c_void,
                    mine.len(),
                    sys::ncclDataType_t::ncclUint8,
                    self.comm,
                    stream as driver_sys::CUstream as _,
                )
            }
            .map(|_| ())
            .map_err(|e| RunError::Device(format!("ncclAllGather: {e:?}")))
        })?;
        let (all, _) = timeline.read(&receive, mine.len() * self.world)?;
        Ok((all, seconds))
    }
}

impl Drop for Communicator<'_> {
    fn drop(&mut self) {
        // SAFETY: made by ncclCommInitRank, destroyed once.
        unsafe {
            let _ = nccl::comm_destroy(self.comm);
        }
    }
}
