//! Summary statistics of repeated timings.

use serde::Serialize;

/// Median, minimum and maximum of a set of timings, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The fastest sample.
    pub min: f64,
    /// The slowest sample.
    pub max: f64,
    /// Number of samples.
    pub count: usize,
}

impl Stats {
    /// Summarizes `samples`; `None` when there are none or one is not a number.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|s| s.is_nan()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[mid]
        } else {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        };
        Some(Stats {
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            count: sorted.len(),
        })
    }
}

/// Gigabytes (10^9 bytes) per second for `bytes` moved in `seconds`.
pub fn gbps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let s = Stats::of(&[3.0, 1.0, 2.0, 10.0]).expect("samples");
        assert_eq!((s.median, s.min, s.max, s.count), (2.5, 1.0, 10.0, 4));
        assert_eq!(Stats::of(&[5.0, 1.0, 3.0]).map(|s| s.median), Some(3.0));
        assert!(Stats::of(&[]).is_none());
        assert_eq!(gbps(2_000_000_000, 0.5), 4.0);
    }
}
