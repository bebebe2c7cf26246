//! The read roof on a CUDA device, tuned on the device itself.
//!
//! The roof is the yardstick every row is compared with, so it has to be the fastest
//! streaming read that can be built here, or "% of roof" flatters the kernels. Its
//! kernel (`roof.cl`) takes the loads in flight per thread and a cache hint as
//! parameters; the grid is a number of 256-thread blocks per SM. The first roof
//! measurement on a device times every combination on a 256 MiB scratch buffer (large
//! enough to stream from DRAM on any current GPU, whose L2 holds at most 126 MiB) and
//! keeps the fastest, for the life of the device handle.

use redlab_kernels::{assembly, RunError};

use crate::memory::{DeviceBuffer, Timeline};
use crate::modules::ModuleCache;

/// Loads in flight per thread tried.
pub const UNROLLS: [u32; 4] = [1, 2, 4, 8];
/// Cache hints tried: none, streaming (`__ldcs`), read-only path (`__ldg`).
pub const HINTS: [u32; 3] = [0, 1, 2];
/// 256-thread blocks per SM tried.
const BLOCKS_PER_SM: [usize; 4] = [4, 8, 16, 32];
/// The calibration buffer.
const SCRATCH_BYTES: usize = 256 << 20;
/// Timed reads per configuration (the median counts).
const SAMPLES: usize = 7;

/// The roof configuration a device uses.
#[derive(Debug, Clone, PartialEq)]
pub struct RoofChoice {
    /// Loads in flight per thread.
    pub unroll: u32,
    /// Cache hint (0 none, 1 streaming, 2 read-only).
    pub hint: u32,
    /// 256-thread blocks per SM.
    pub blocks_per_sm: usize,
    /// GB/s it read at calibration.
    pub calibration_gbps: f64,
    /// Configurations timed.
    pub tried: usize,
}

impl RoofChoice {
    /// The parameters in words, for records.
    pub fn describe(&self) -> String {
        let hint = ["none", "streaming", "read-only"][self.hint as usize % 3];
        format!(
            "ROOF_UNROLL={} ROOF_HINT={} ({hint}) blocks/SM={}: fastest of {} at {:.0} GB/s on a 256 MiB read",
            self.unroll, self.hint, self.blocks_per_sm, self.tried, self.calibration_gbps
        )
    }
}

/// The roof's source with its parameters, for the CUDA prelude to precede.
pub fn source(prelude: &str, unroll: u32, hint: u32) -> String {
    format!(
        "{prelude}#define ROOF_UNROLL {unroll}\n#define ROOF_HINT {hint}\n{}",
        assembly::file("roof.cl").unwrap_or_default()
    )
}

/// What the roof needs of the device.
pub(crate) struct RoofDevice<'a> {
    pub timeline: &'a Timeline,
    pub modules: &'a ModuleCache,
    pub arch: String,
    pub sms: usize,
    pub prelude: &'a str,
}

impl RoofDevice<'_> {
    /// Seconds of one read of `words` 16-byte words at `input` with `choice`.
    pub(crate) fn read(
        &self,
        input: cudarc::driver::sys::CUdeviceptr,
        words: usize,
        unroll: u32,
        hint: u32,
        blocks_per_sm: usize,
    ) -> Result<f64, RunError> {
        let text = source(self.prelude, unroll, hint);
        let roof = self.modules.functions(&text, &self.arch, &["roof"])?[0];
        let blocks = self.sms.max(1) * blocks_per_sm;
        let out = DeviceBuffer::alloc(self.timeline.ctx, blocks * 256 * 4)?;
        self.timeline.time(|stream| {
            Timeline::enqueue(roof, stream, input, out.ptr, words, blocks * 256, 256)
        })
    }

    /// Times every configuration on a scratch buffer and returns the fastest.
    pub(crate) fn calibrate(&self) -> Result<RoofChoice, RunError> {
        let scratch = DeviceBuffer::alloc(self.timeline.ctx, SCRATCH_BYTES)?;
        // SAFETY: the buffer was just allocated with SCRATCH_BYTES bytes in this context.
        unsafe { cudarc::driver::result::memset_d8_sync(scratch.ptr, 0x5a, SCRATCH_BYTES) }
            .map_err(|e| RunError::Device(format!("cuMemsetD8: {e}")))?;
        let words = SCRATCH_BYTES / 16;
        let mut best: Option<(f64, u32, u32, usize)> = None;
        let mut tried = 0;
        for unroll in UNROLLS {
            for hint in HINTS {
                for blocks_per_sm in BLOCKS_PER_SM {
                    // The first read of a configuration also loads its module.
                    self.read(scratch.ptr, words, unroll, hint, blocks_per_sm)?;
                    let mut samples = (0..SAMPLES)
                        .map(|_| self.read(scratch.ptr, words, unroll, hint, blocks_per_sm))
                        .collect::<Result<Vec<f64>, _>>()?;
                    samples.sort_by(f64::total_cmp);
                    let median = samples[SAMPLES / 2];
                    tried += 1;
                    if best.is_none_or(|b| median < b.0) {
                        best = Some((median, unroll, hint, blocks_per_sm));
                    }
                }
            }
        }
        let (seconds, unroll, hint, blocks_per_sm) =
            best.ok_or_else(|| RunError::Device("no roof configuration ran".into()))?;
        Ok(RoofChoice {
            unroll,
            hint,
            blocks_per_sm,
            calibration_gbps: (words * 16) as f64 / seconds / 1e9,
            tried,
        })
    }
}

/// The device's datasheet DRAM bandwidth in GB/s, from the memory clock and bus width
/// the driver reports (double data rate), if it reports them.
pub fn datasheet_gbps(memory_clock_khz: i64, bus_bits: i64) -> Option<f64> {
    (memory_clock_khz > 0 && bus_bits > 0)
        .then(|| 2.0 * memory_clock_khz as f64 * 1e3 * (bus_bits as f64 / 8.0) / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasheet_bandwidth_of_hbm3() {
        // H100 SXM: 2619 MHz, 5120-bit bus: 3.35 TB/s.
        let gbps = datasheet_gbps(2_619_000, 5120).expect("reported");
        assert!((gbps - 3352.3).abs() < 1.0, "{gbps}");
        assert_eq!(datasheet_gbps(0, 5120), None);
    }
}
