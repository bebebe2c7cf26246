//! Host data onto the GPU through pinned staging buffers: the input is cut into chunks,
//! each copied (by all cores) into one of two page-locked buffers and sent to the device
//! asynchronously, so filling one buffer overlaps the DMA of the other. Also the
//! host→device bandwidth measurements (pinned and pageable) that placement decisions
//! use.

use std::ffi::c_void;
use std::time::Instant;

use cudarc::driver::{result, sys};
use rayon::prelude::*;
use redlab_core::ArrayRef;
use redlab_kernels::RunError;

use crate::memory::{cu, DeviceBuffer};
use crate::{CudaDevice, DeviceInput};

/// Page-locked host memory, freed on drop.
struct Pinned {
    ptr: *mut c_void,
    bytes: usize,
}

impl Pinned {
    fn new(bytes: usize) -> Result<Pinned, RunError> {
        // SAFETY: the returned memory is owned here and freed once, on drop.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }.map_err(cu("cuMemHostAlloc"))?;
        Ok(Pinned { ptr, bytes })
    }

    /// The buffer as bytes.
    fn slice(&mut self, len: usize) -> &mut [u8] {
        // SAFETY: `ptr` holds `bytes` bytes owned by this value; `len` is clamped.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), len.min(self.bytes)) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        unsafe {
            let _ = result::free_host(self.ptr);
        }
    }
}

/// Staging buffers in use by uploads.
const SLOTS: usize = 4;

/// Pinned staging buffers with their copy stream and one event per buffer, kept by the
/// device between uploads.
pub(crate) struct Ring {
    slots: Vec<Pinned>,
    events: Vec<sys::CUevent>,
    stream: sys::CUstream,
    chunk: usize,
}

// SAFETY: the pinned pointers and driver handles are plain addresses; the device
// serializes uploads with its staging lock.
unsafe impl Send for Ring {}

impl Ring {
    fn new(chunk: usize) -> Result<Ring, RunError> {
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let mut events = Vec::new();
        for _ in 0..SLOTS {
            events.push(result::event::create(flags).map_err(cu("cuEventCreate"))?);
        }
        Ok(Ring {
            slots: (0..SLOTS)
                .map(|_| Pinned::new(chunk))
                .collect::<Result<_, _>>()?,
            events,
            stream: result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(cu("cuStreamCreate"))?,
            chunk,
        })
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: nothing is in flight (every upload synchronizes its stream); the
        // handles were created in the device's context, which is still alive.
        unsafe {
            let _ = result::stream::synchronize(self.stream);
            let _ = result::stream::destroy(self.stream);
            for e in &self.events {
                let _ = result::event::destroy(*e);
            }
        }
    }
}

/// Measured host→device bandwidths, GB/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfers {
    /// From page-locked memory.
    pub pinned_gbps: f64,
    /// From ordinary (pageable) memory.
    pub pageable_gbps: f64,
}

/// What a staged upload took.
pub struct Staged {
    /// The input, on the device.
    pub input: DeviceInput,
    /// Wall seconds from the first byte copied to the last byte on the device.
    pub seconds: f64,
    /// Chunks sent.
    pub chunks: usize,
}

/// Copies `src` into `dst` with every core.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    const PIECE: usize = 1 << 20;
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

impl CudaDevice {
    /// Measures host→device bandwidth over `bytes` from pinned and from pageable memory
    /// (the better of three copies each).
    pub fn measure_transfers(&self, bytes: usize) -> Result<Transfers, RunError> {
        self.timeline.bind()?;
        let device = DeviceBuffer::alloc(self.timeline.ctx, bytes)?;
        let mut pinned = Pinned::new(bytes)?;
        parallel_copy(pinned.slice(bytes), &vec![1u8; bytes]);
        let pageable = vec![1u8; bytes];
        let (mut best_pinned, mut best_pageable) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let src = pinned.slice(bytes);
            let s = self.timeline.time(|stream| {
                // SAFETY: `device` holds `bytes`; the copy is waited for before `src` is
                // reused.
                unsafe { result::memcpy_htod_async(device.ptr, &*src, stream) }
                    .map_err(cu("cuMemcpyHtoDAsync"))
            })?;
            best_pinned = best_pinned.min(s);
            let started = Instant::now();
            // SAFETY: synchronous copy into a buffer of `bytes` bytes.
            unsafe { result::memcpy_htod_sync(device.ptr, &pageable) }
                .map_err(cu("cuMemcpyHtoD"))?;
            best_pageable = best_pageable.min(started.elapsed().as_secs_f64());
        }
        Ok(Transfers {
            pinned_gbps: bytes as f64 / best_pinned / 1e9,
            pageable_gbps: bytes as f64 / best_pageable / 1e9,
        })
    }

    /// Sends `data` to the device in chunks of `chunk_bytes` through pinned staging
    /// buffers (filling one while the others are in flight). The buffers are allocated
    /// once per device and kept: pinning memory costs milliseconds.
    pub fn upload_staged(
        &self,
        data: ArrayRef<'_>,
        chunk_bytes: usize,
    ) -> Result<Staged, RunError> {
        let bytes = data.bytes();
        if bytes.is_empty() {
            return Ok(Staged {
                input: self.upload(data)?,
                seconds: 0.0,
                chunks: 0,
            });
        }
        let (free, _) = self.memory()?;
        if bytes.len() + (64 << 20) > free {
            return Err(RunError::Device(format!(
                "the input needs {:.2} GiB on the device, which has {:.2} GiB free",
                bytes.len() as f64 / (1u64 << 30) as f64,
                free as f64 / (1u64 << 30) as f64
            )));
        }
        let chunk = chunk_bytes.max(1 << 16);
        self.timeline.bind()?;
        let mut guard = self
            .staging
            .lock()
            .map_err(|_| RunError::Device("staging lock poisoned".into()))?;
        if guard.as_ref().is_none_or(|r| r.chunk != chunk) {
            *guard = None;
            *guard = Some(Ring::new(chunk)?);
        }
        let ring = guard
            .as_mut()
            .ok_or_else(|| RunError::Device("no staging buffers".into()))?;
        let device = DeviceBuffer::alloc(self.timeline.ctx, bytes.len())?;
        let started = Instant::now();
        let mut chunks = 0;
        let mut outcome = Ok(());
        let slots = ring.slots.len();
        for (k, piece) in bytes.chunks(chunk).enumerate() {
            let s = k % slots;
            // SAFETY: the events and stream belong to the current context; a slot is
            // refilled only after the copy that read it has completed (its event).
            let step = unsafe {
                (if k >= slots {
                    result::event::synchronize(ring.events[s]).map_err(cu("copy failed"))
                } else {
                    Ok(())
                })
                .and_then(|_| {
                    let staging = ring.slots[s].slice(piece.len());
                    parallel_copy(staging, piece);
                    result::memcpy_htod_async(
                        device.ptr + (k * chunk) as u64,
                        &*staging,
                        ring.stream,
                    )
                    .map_err(cu("cuMemcpyHtoDAsync"))
                })
                .and_then(|_| {
                    result::event::record(ring.events[s], ring.stream).map_err(cu("cuEventRecord"))
                })
            };
            if let Err(e) = step {
                outcome = Err(e);
                break;
            }
            chunks += 1;
        }
        // SAFETY: every copy is waited for before the buffers can be refilled or freed.
        let synced = unsafe { result::stream::synchronize(ring.stream) }.map_err(cu("copy failed"));
        outcome.and(synced)?;
        let seconds = started.elapsed().as_secs_f64();
        Ok(Staged {
            input: DeviceInput {
                buffer: Some(device),
                len: data.len(),
                dtype: data.dtype(),
                upload_s: seconds,
            },
            seconds,
            chunks,
        })
    }
}
