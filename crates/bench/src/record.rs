//! One benchmark row as a JSON line: what ran, where, how it was timed, and the result.

use serde::{Deserialize, Serialize};

/// Whether a row's results were right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every call's result matched the reference.
    Ok,
    /// At least one call's result did not.
    Wrong,
    /// The row could not run on this device (`reason` says why).
    Skipped,
}

/// One row of `redlab bench --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// Device id (`cpu`, `opencl:0`, `cuda:0`).
    pub device: String,
    /// Device name (CPU model, GPU product).
    pub device_name: String,
    /// The strategy that ran.
    pub variant: String,
    /// Operator.
    pub op: String,
    /// Input type.
    pub dtype: String,
    /// Accumulator type.
    pub acc: String,
    /// Elements.
    pub n: usize,
    /// Right, wrong or skipped.
    pub status: Status,
    /// Why the row was skipped or wrong.
    pub reason: Option<String>,
    /// Median seconds per reduction.
    pub median_s: Option<f64>,
    /// Fastest reduction.
    pub min_s: Option<f64>,
    /// Slowest reduction.
    pub max_s: Option<f64>,
    /// Timed repetitions.
    pub reps: usize,
    /// Median seconds of each pass.
    pub passes: Vec<f64>,
    /// Input bytes per second at the median, in GB/s.
    pub gbps: Option<f64>,
    /// The read roof measured in the same run, in GB/s.
    pub roof_gbps: Option<f64>,
    /// `gbps / roof_gbps`.
    pub roof_fraction: Option<f64>,
    /// How the roof read, where it is tuned on the device (CUDA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roof_config: Option<String>,
    /// The device's datasheet memory bandwidth, GB/s (CUDA: from the memory clock and
    /// bus width the driver reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datasheet_gbps: Option<f64>,
    /// `roof_gbps / datasheet_gbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roof_peak_fraction: Option<f64>,
    /// What `auto` ran, for rows of `--variants auto`: the variant and its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_choice: Option<String>,
    /// The input's shape, for rows of axis reductions (`bench --shapes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<usize>>,
    /// The reduced axes of such rows (`None` there: all axes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<Vec<isize>>,
    /// Which kernel or CPU path ran such rows, and why (`--explain`'s text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// For user-defined reductions: the reduction (map, combine, post) in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<String>,
    /// Why this row's timing is doubtful (a rate above the read roof measured beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// Host→device and device→host seconds (0 where the data already lives on the device).
    pub transfer_s: f64,
    /// Cold (rotating inputs) or warm.
    pub cache: String,
    /// Distinct input windows rotated over.
    pub windows: usize,
    /// Threads (CPU) or compute units used.
    pub threads: usize,
    /// Seconds per reduction inside a captured CUDA graph of back-to-back reductions
    /// (one-launch variants on CUDA; absent elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_s: Option<f64>,
    /// The comparator's median per-call time over this row's (the production row of a
    /// `--compare` run; > 1 means faster than the comparator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup_per_call: Option<f64>,
    /// The same ratio for the per-reduction time in a graph.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup_graph: Option<f64>,
    /// The result of the first call, as text that round-trips.
    pub value: String,
    /// Version of the canonical float order.
    pub canonical_order: u32,
    /// redlab's version.
    pub redlab_version: String,
    /// The commit the binary was built from.
    pub commit: String,
    /// The command line that produced the row.
    pub command: String,
    /// Seconds since the Unix epoch when the row finished.
    pub unix_time: u64,
}

/// A row's rate above this share of the read roof measured beside it cannot be the
/// strategy's own: the machine was busy during the roof's samples, or the row's.
pub const ROOF_TOLERANCE: f64 = 1.05;

impl Record {
    /// Sets the rate, the roof and their ratio, with a warning when the ratio is
    /// implausible.
    pub fn set_rates(&mut self, rate: Option<f64>, roof: Option<f64>) {
        self.gbps = rate;
        self.roof_gbps = roof;
        self.roof_fraction = rate.zip(roof).filter(|(_, r)| *r > 0.0).map(|(g, r)| g / r);
        self.warning = self.roof_fraction.filter(|&f| f > ROOF_TOLERANCE).map(|f| {
            format!(
                "{:.0}% of the read roof measured beside it: the machine was busy or the roof too slow; repeat on an idle machine",
                f * 100.0
            )
        });
    }

    /// Sets how the device's roof reads and its datasheet bandwidth, and the roof's share
    /// of that bandwidth (call after [`Record::set_rates`]).
    pub fn set_roof_context(&mut self, config: Option<String>, datasheet_gbps: Option<f64>) {
        self.roof_config = config;
        self.datasheet_gbps = datasheet_gbps;
        self.roof_peak_fraction = self
            .roof_gbps
            .zip(datasheet_gbps)
            .filter(|(_, peak)| *peak > 0.0)
            .map(|(roof, peak)| roof / peak);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        serde_json::from_value(serde_json::json!({
            "device": "cpu", "device_name": "test", "variant": "cpu", "op": "sum",
            "dtype": "f32", "acc": "f32", "n": 1024, "status": "ok", "reason": null,
            "median_s": 1e-6, "min_s": 1e-6, "max_s": 1e-6, "reps": 3, "passes": [],
            "gbps": null, "roof_gbps": null, "roof_fraction": null, "transfer_s": 0.0,
            "cache": "cold", "windows": 1, "threads": 1, "value": "1",
            "canonical_order": 1, "redlab_version": "0", "commit": "x", "command": "x",
            "unix_time": 0
        }))
        .expect("a record")
    }

    #[test]
    fn a_rate_above_the_roof_is_flagged() {
        let mut r = record();
        r.set_rates(Some(90.0), Some(100.0));
        assert_eq!(r.roof_fraction, Some(0.9));
        assert!(r.warning.is_none());
        r.set_rates(Some(184.0), Some(100.0));
        let warning = r.warning.clone().expect("flagged");
        assert!(warning.starts_with("184% of the read roof"), "{warning}");
        r.set_rates(Some(5.0), Some(0.0));
        assert_eq!((r.roof_fraction, r.warning), (None, None));
    }
}
