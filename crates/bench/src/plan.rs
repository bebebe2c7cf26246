//! How a benchmark row is timed: repetitions, warm-up, and cold or warm caches.

use serde::Serialize;

/// The fewest read-roof samples behind a row's roof median.
pub const MIN_ROOF_SAMPLES: usize = 5;

/// Whether timed calls see data the caches already hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// Rotate over distinct input windows whose total size is at least
    /// [`TimingPlan::cold_footprint`], so each call reads from memory, not cache.
    Cold,
    /// Reduce the same input every time (small sizes then run from cache).
    Warm,
}

impl std::str::FromStr for CacheMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cold" => Ok(CacheMode::Cold),
            "warm" => Ok(CacheMode::Warm),
            other => Err(format!("unknown cache mode '{other}' (known: cold, warm)")),
        }
    }
}

/// Repetition and cache policy for every row of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimingPlan {
    /// Untimed calls before timing (they are still verified).
    pub warmup: usize,
    /// Timed calls at least.
    pub min_reps: usize,
    /// Keep repeating until this many seconds of timed calls have passed…
    pub min_seconds: f64,
    /// …but never more than this many calls.
    pub max_reps: usize,
    /// Cold or warm caches.
    pub cache: CacheMode,
    /// Bytes of distinct inputs to rotate over in cold mode (8 × the largest cache).
    pub cold_footprint: u64,
}

impl TimingPlan {
    /// The defaults: 2 warm-up calls, at least 20 timed calls and 0.2 s, at most 2000.
    pub fn new(cache: CacheMode, largest_cache_bytes: u64) -> TimingPlan {
        TimingPlan {
            warmup: 2,
            min_reps: 20,
            min_seconds: 0.2,
            max_reps: 2000,
            cache,
            cold_footprint: 8 * largest_cache_bytes,
        }
    }

    /// Number of distinct windows of `n` elements of `elem_bytes` to rotate over.
    pub fn windows(&self, n: usize, elem_bytes: usize) -> usize {
        match self.cache {
            CacheMode::Warm => 1,
            CacheMode::Cold => {
                let window = (n.max(1) * elem_bytes) as u64;
                self.cold_footprint.div_ceil(window).max(1) as usize
            }
        }
    }

    /// Elements a shared input pool needs so every size in `sizes` gets its windows.
    pub fn pool_elements(&self, sizes: &[usize], elem_bytes: usize) -> usize {
        sizes
            .iter()
            .map(|&n| n * self.windows(n, elem_bytes))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_windows_cover_the_footprint() {
        let plan = TimingPlan::new(CacheMode::Cold, 32 << 20);
        assert_eq!(plan.windows(1 << 20, 4), 64);
        assert_eq!(plan.windows(1 << 27, 4), 1);
        assert_eq!(TimingPlan::new(CacheMode::Warm, 32 << 20).windows(16, 4), 1);
        assert_eq!(plan.pool_elements(&[1 << 20, 1 << 27], 4), 1 << 27);
    }
}
