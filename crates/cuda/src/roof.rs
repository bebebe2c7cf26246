//! The read roof on a CUDA device, tuned on the device itself.
//!
//! The roof is the yardstick every row is compared with, so it has to be the fastest
//! streaming read that can be built here, or "% of roof" flatters the kernels. Its
//! kernel (`roof.cl`) takes the loads in flight per thread, a cache hint and a layout
//! as parameters; the grid is a number of 256-thread blocks per SM. The first roof
//! measurement on a device times every combination on a 1 GiB scratch buffer (far
//! larger than any current GPU's L2, and large enough that the grid's tail costs what it
//! costs on the largest inputs; 256 MiB picked configurations up to 1% slower at 2^28
//! elements on an H100) and keeps the fastest, for the life of the device handle. On
//! sm_90 and later the sweep also tries bulk asynchronous copies into shared memory
//! (`roof_bulk.cl`), and the record names the best of each way to read.

use redlab_kernels::{assembly, RunError};

use crate::memory::{DeviceBuffer, Timeline};
use crate::modules::ModuleCache;

/// Loads in flight per thread tried.
pub const UNROLLS: [u32; 4] = [1, 2, 4, 8];
/// Cache hints tried: none, streaming (`__ldcs`), read-only path (`__ldg`).
pub const HINTS: [u32; 3] = [0, 1, 2];
/// Layouts tried: grid-stride (0) and one contiguous segment per block (1).
pub const SEGMENTS: [u32; 2] = [0, 1];
/// Bulk-copy stage rings tried on sm_90 and later, as (stages, bytes per stage): each
/// fits a block's 48 KiB of static shared memory with its barriers.
pub const BULK_RINGS: [(u32, u32); 6] = [
    (4, 4096),
    (8, 4096),
    (2, 8192),
    (4, 8192),
    (5, 8192),
    (2, 16384),
];
/// 256-thread blocks per SM tried.
const BLOCKS_PER_SM: [usize; 4] = [4, 8, 16, 32];
/// 256-thread blocks per SM tried with bulk copies (shared memory bounds how many are
/// resident: at 32–40 KiB a block, five).
const BULK_BLOCKS_PER_SM: [usize; 4] = [2, 3, 4, 8];
/// The calibration buffer.
const SCRATCH_BYTES: usize = 1 << 30;
/// Timed reads per configuration (the median counts).
const SAMPLES: usize = 7;

/// How a roof configuration reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoofMethod {
    /// Register loads (`roof.cl`).
    Loads {
        /// Loads in flight per thread.
        unroll: u32,
        /// Cache hint (0 none, 1 streaming, 2 read-only).
        hint: u32,
        /// Layout (0 grid-stride, 1 a contiguous segment per block).
        segments: u32,
    },
    /// Bulk asynchronous copies into a ring of shared-memory stages (`roof_bulk.cl`).
    Bulk {
        /// Stages in the ring.
        stages: u32,
        /// Bytes per stage.
        stage_bytes: u32,
    },
}

/// The roof configuration a device uses.
#[derive(Debug, Clone, PartialEq)]
pub struct RoofChoice {
    /// How it reads.
    pub method: RoofMethod,
    /// 256-thread blocks per SM.
    pub blocks_per_sm: usize,
    /// GB/s it read at calibration.
    pub calibration_gbps: f64,
    /// Configurations timed.
    pub tried: usize,
    /// The fastest register-load configuration's GB/s at calibration, grid-stride layout.
    pub best_loads_gbps: f64,
    /// The same with a contiguous segment per block.
    pub best_segments_gbps: f64,
    /// The fastest bulk-copy configuration's GB/s, where the device has bulk copies.
    pub best_bulk_gbps: Option<f64>,
}

impl RoofChoice {
    /// The parameters in words, for records.
    pub fn describe(&self) -> String {
        let method = match self.method {
            RoofMethod::Loads {
                unroll,
                hint,
                segments,
            } => {
                let hint_name = ["none", "streaming", "read-only"][hint as usize % 3];
                let layout = ["grid-stride", "segment per block"][segments as usize % 2];
                format!("register loads ROOF_UNROLL={unroll} ROOF_HINT={hint} ({hint_name}) ROOF_SEGMENTS={segments} ({layout})")
            }
            RoofMethod::Bulk {
                stages,
                stage_bytes,
            } => format!("bulk copies BULK_STAGES={stages} BULK_STAGE_BYTES={stage_bytes}"),
        };
        let bulk = self
            .best_bulk_gbps
            .map(|bulk| format!(", bulk copies {bulk:.0} GB/s"))
            .unwrap_or_default();
        let families = format!(
            "; best register loads {:.0} GB/s grid-stride, {:.0} GB/s segment per block{bulk}",
            self.best_loads_gbps, self.best_segments_gbps
        );
        format!(
            "{method} blocks/SM={}: fastest of {} at {:.0} GB/s on a {} MiB read{families}",
            self.blocks_per_sm,
            self.tried,
            self.calibration_gbps,
            SCRATCH_BYTES >> 20
        )
    }
}

/// The roof's source with its parameters, for the CUDA prelude to precede.
pub fn source(prelude: &str, unroll: u32, hint: u32, segments: u32) -> String {
    format!(
        "{prelude}#define ROOF_UNROLL {unroll}\n#define ROOF_HINT {hint}\n#define ROOF_SEGMENTS {segments}\n{}",
        assembly::file("roof.cl").unwrap_or_default()
    )
}

/// The bulk-copy roof's source with its ring, for the CUDA prelude to precede.
pub fn bulk_source(prelude: &str, stages: u32, stage_bytes: u32) -> Result<String, String> {
    Ok(format!(
        "{prelude}#define BULK_STAGES {stages}\n#define BULK_STAGE_BYTES {stage_bytes}\n{}",
        assembly::expanded("roof_bulk.cl")?
    ))
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
    /// Whether the device has bulk asynchronous copies (sm_90 and later).
    fn has_bulk_copies(&self) -> bool {
        self.arch
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse::<u32>()
            .is_ok_and(|v| v >= 90)
    }

    /// Seconds of one read of `words` 16-byte words at `input` with `choice`.
    pub(crate) fn read(
        &self,
        input: cudarc::driver::sys::CUdeviceptr,
        words: usize,
        choice: &RoofChoice,
    ) -> Result<f64, RunError> {
        let roof = match choice.method {
            RoofMethod::Loads {
                unroll,
                hint,
                segments,
            } => {
                let text = source(self.prelude, unroll, hint, segments);
                self.modules.functions(&text, &self.arch, &["roof"])?[0]
            }
            RoofMethod::Bulk {
                stages,
                stage_bytes,
            } => {
                let text =
                    bulk_source(self.prelude, stages, stage_bytes).map_err(RunError::Device)?;
                self.modules.functions(&text, &self.arch, &["roof_bulk"])?[0]
            }
        };
        let blocks = self.sms.max(1) * choice.blocks_per_sm;
        let out = DeviceBuffer::alloc(self.timeline.ctx, blocks * 256 * 4)?;
        self.timeline.time(|stream| {
            Timeline::enqueue(roof, stream, input, out.ptr, words, blocks * 256, 256)
        })
    }

    /// Every configuration the device can run.
    fn configurations(&self) -> Vec<(RoofMethod, usize)> {
        let loads = UNROLLS
            .into_iter()
            .flat_map(|unroll| HINTS.map(|hint| (unroll, hint)))
            .flat_map(|(unroll, hint)| SEGMENTS.map(|segments| (unroll, hint, segments)))
            .flat_map(|(unroll, hint, segments)| {
                BLOCKS_PER_SM.map(|blocks| {
                    let method = RoofMethod::Loads {
                        unroll,
                        hint,
                        segments,
                    };
                    (method, blocks)
                })
            });
        let bulk = BULK_RINGS
            .into_iter()
            .filter(|_| self.has_bulk_copies())
            .flat_map(|(stages, stage_bytes)| {
                BULK_BLOCKS_PER_SM.map(|blocks| {
                    let method = RoofMethod::Bulk {
                        stages,
                        stage_bytes,
                    };
                    (method, blocks)
                })
            });
        loads.chain(bulk).collect()
    }

    /// Times every configuration on a scratch buffer and returns the fastest.
    pub(crate) fn calibrate(&self) -> Result<RoofChoice, RunError> {
        let scratch = DeviceBuffer::alloc(self.timeline.ctx, SCRATCH_BYTES)?;
        // SAFETY: the buffer was just allocated with SCRATCH_BYTES bytes in this context.
        unsafe { cudarc::driver::result::memset_d8_sync(scratch.ptr, 0x5a, SCRATCH_BYTES) }
            .map_err(|e| RunError::Device(format!("cuMemsetD8: {e}")))?;
        let words = SCRATCH_BYTES / 16;
        let configs = self.configurations();
        let gbps = |seconds: f64| (words * 16) as f64 / seconds / 1e9;
        let mut best: Option<(f64, RoofChoice)> = None;
        let (mut best_loads, mut best_segments, mut best_bulk) =
            (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for &(method, blocks_per_sm) in &configs {
            let choice = RoofChoice {
                method,
                blocks_per_sm,
                calibration_gbps: 0.0,
                tried: 0,
                best_loads_gbps: 0.0,
                best_segments_gbps: 0.0,
                best_bulk_gbps: None,
            };
            // The first read of a configuration also loads its module.
            self.read(scratch.ptr, words, &choice)?;
            let mut samples = (0..SAMPLES)
                .map(|_| self.read(scratch.ptr, words, &choice))
                .collect::<Result<Vec<f64>, _>>()?;
            samples.sort_by(f64::total_cmp);
            let median = samples[SAMPLES / 2];
            match method {
                RoofMethod::Loads { segments: 0, .. } => best_loads = best_loads.min(median),
                RoofMethod::Loads { .. } => best_segments = best_segments.min(median),
                RoofMethod::Bulk { .. } => best_bulk = best_bulk.min(median),
            }
            if best.as_ref().is_none_or(|b| median < b.0) {
                best = Some((median, choice));
            }
        }
        let (seconds, choice) =
            best.ok_or_else(|| RunError::Device("no roof configuration ran".into()))?;
        Ok(RoofChoice {
            calibration_gbps: gbps(seconds),
            tried: configs.len(),
            best_loads_gbps: gbps(best_loads),
            best_segments_gbps: gbps(best_segments),
            best_bulk_gbps: best_bulk.is_finite().then(|| gbps(best_bulk)),
            ..choice
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
