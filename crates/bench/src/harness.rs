//! Timing one benchmark row: warm-up, repetitions over rotating input windows, and a
//! check of every call's result against the host reference.

use redlab_core::{reference, ArrayRef, Backend, Problem, Value};

use crate::record::Status;
use crate::stats::Stats;
use crate::TimingPlan;

/// What timing one row found.
#[derive(Debug, Clone)]
pub struct RowOutcome {
    /// Timing of the timed calls (`None` when skipped).
    pub stats: Option<Stats>,
    /// Median seconds of each pass.
    pub passes: Vec<f64>,
    /// Timing of the streaming reads of the same windows, interleaved with the timed
    /// calls (the row's roof).
    pub roof: Option<Stats>,
    /// Right, wrong or skipped.
    pub status: Status,
    /// Why it was skipped or wrong.
    pub reason: Option<String>,
    /// The first call's result.
    pub value: Option<Value>,
    /// Distinct input windows used.
    pub windows: usize,
}

impl RowOutcome {
    /// A row that could not run, and why.
    pub fn skipped(reason: String) -> RowOutcome {
        RowOutcome {
            stats: None,
            passes: Vec::new(),
            roof: None,
            status: Status::Skipped,
            reason: Some(reason),
            value: None,
            windows: 0,
        }
    }
}

/// Times `problem` over windows of `n` elements taken from `pool`.
///
/// Window `k` is elements `[k·n, (k+1)·n)` of the pool; calls rotate through the windows
/// so that in cold mode each call reads memory the previous ones did not leave in cache.
/// Every result, warm-up included, is compared with the reference for its window.
/// After each timed call a window of the same size, half a rotation away (so it is
/// equally cold), is read once by [`Backend::stream_read`]: the row's roof, measured on
/// the same pool under the same conditions (machine bandwidth drifts over seconds, so a
/// roof taken once before the rows can sit below them).
pub fn time_row(
    backend: &dyn Backend,
    problem: &Problem,
    pool: ArrayRef<'_>,
    n: usize,
    plan: &TimingPlan,
) -> RowOutcome {
    if pool.len() < n {
        return RowOutcome::skipped(format!(
            "input pool holds {} elements, row needs {n}",
            pool.len()
        ));
    }
    let available = pool.len().checked_div(n).unwrap_or(1);
    let windows = plan
        .windows(n, problem.dtype.size_bytes())
        .min(available)
        .max(1);
    let mut expected: Vec<Option<Value>> = vec![None; windows];
    let mut samples = Vec::new();
    let mut roof_samples = Vec::new();
    let mut pass_samples: Vec<Vec<f64>> = Vec::new();
    let mut first_value = None;
    let mut wrong: Option<String> = None;
    let mut timed_total = 0.0;
    let mut call = 0usize;
    loop {
        let window = call % windows;
        let data = pool.slice(window * n, window * n + n);
        let outcome = match backend.reduce(problem, data) {
            Ok(outcome) => outcome,
            Err(e) => return RowOutcome::skipped(e.to_string()),
        };
        let want = match &expected[window] {
            Some(v) => *v,
            None => match reference::reduce(problem, data) {
                Ok(v) => {
                    expected[window] = Some(v);
                    v
                }
                Err(e) => return RowOutcome::skipped(format!("reference failed: {e}")),
            },
        };
        if !outcome.value.same_as(&want) && wrong.is_none() {
            wrong = Some(format!(
                "window {window}: got {}, reference {}",
                outcome.value, want
            ));
        }
        first_value.get_or_insert(outcome.value);
        if call >= plan.warmup {
            samples.push(outcome.seconds);
            timed_total += outcome.seconds;
            // Half a rotation away: cold in cold mode (the reductions touched it
            // windows/2 calls ago and will again only windows/2 calls later).
            let far = (window + windows / 2) % windows;
            let far_data = pool.slice(far * n, far * n + n);
            match backend.stream_read(far_data.bytes()) {
                Ok(seconds) => roof_samples.push(seconds),
                Err(e) => return RowOutcome::skipped(format!("read roof failed: {e}")),
            }
            for (k, &p) in outcome.passes.iter().enumerate() {
                if pass_samples.len() <= k {
                    pass_samples.push(Vec::new());
                }
                pass_samples[k].push(p);
            }
        }
        call += 1;
        let timed = samples.len();
        if timed >= plan.max_reps || (timed >= plan.min_reps && timed_total >= plan.min_seconds) {
            break;
        }
    }
    // The roof is a comparator: however few calls the row took (--min-time 0), its median
    // comes from several samples.
    while roof_samples.len() < crate::plan::MIN_ROOF_SAMPLES {
        let far = windows / 2;
        match backend.stream_read(pool.slice(far * n, far * n + n).bytes()) {
            Ok(seconds) => roof_samples.push(seconds),
            Err(e) => return RowOutcome::skipped(format!("read roof failed: {e}")),
        }
    }
    RowOutcome {
        stats: Stats::of(&samples),
        passes: pass_samples
            .iter()
            .filter_map(|p| Stats::of(p).map(|s| s.median))
            .collect(),
        roof: Stats::of(&roof_samples),
        status: if wrong.is_some() {
            Status::Wrong
        } else {
            Status::Ok
        },
        reason: wrong,
        value: first_value,
        windows,
    }
}
