//! When the CPU backend hands a reduction to its worker threads, and when it runs it on
//! the caller's thread instead.
//!
//! Handing work to the pool is a round trip between threads: the caller wakes a parked
//! worker and parks itself until the work is done. On the 2-core development machine
//! (`redlab bench --device cpu --cache warm --ops sum`), that trip cost 20–30 µs with two
//! threads and about 80 µs with one, where summing 65536 f32 on one thread took 4.9 µs,
//! and two threads first beat one at about a mebibyte of input. So inputs under
//! [`FORK_BYTES`], and every input of a one-thread backend, run on the caller's thread:
//! whole arrays, and axis and segment reductions (a 64×64 f32 row sum from Python took
//! 40 µs with the trip and 4 µs without).
//! The parallel loops inside them ask [`on_pool`] and run serially there: a rayon loop
//! started off a pool would hand its work to rayon's global pool instead.
//!
//! Where the work runs changes no result: the canonical order fixes every float's
//! bits, and the integer folds and selections are exact in any grouping. The helpers
//! below ([`map_range`], [`map_range_init`], [`map_chunks_mut`]) give the many-output
//! paths one loop body for both places.

use rayon::prelude::*;

use crate::CpuBackend;

/// Inputs of fewer bytes run on the caller's thread (see the module documentation).
pub const FORK_BYTES: usize = 1 << 20;

/// Whether the current thread is a worker of a rayon pool, where parallel loops split
/// their work; elsewhere they run serially on the caller's thread.
pub fn on_pool() -> bool {
    rayon::current_thread_index().is_some()
}

/// `f(k)` for every `k` in `0..n`, in order: in parallel (tasks of at least `min_len`)
/// on a pool, serially elsewhere.
pub fn map_range<R: Send>(
    n: usize,
    min_len: usize,
    f: impl Fn(usize) -> R + Sync + Send,
) -> Vec<R> {
    if on_pool() {
        (0..n)
            .into_par_iter()
            .with_min_len(min_len)
            .map(f)
            .collect()
    } else {
        (0..n).map(f).collect()
    }
}

/// [`map_range`] with a scratch value per task, made by `init`.
pub fn map_range_init<S, R: Send>(
    n: usize,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize) -> R + Sync + Send,
) -> Vec<R> {
    if on_pool() {
        (0..n).into_par_iter().map_init(init, f).collect()
    } else {
        let mut scratch = init();
        (0..n).map(|k| f(&mut scratch, k)).collect()
    }
}

/// `f(k, chunk)` for the `k`-th chunk of `size` elements of `slice`, in order: in
/// parallel (tasks of at least `min_len` chunks) on a pool, serially elsewhere.
pub fn map_chunks_mut<T: Send, R: Send>(
    slice: &mut [T],
    size: usize,
    min_len: usize,
    f: impl Fn(usize, &mut [T]) -> R + Sync + Send,
) -> Vec<R> {
    if on_pool() {
        slice
            .par_chunks_mut(size)
            .enumerate()
            .with_min_len(min_len)
            .map(|(k, chunk)| f(k, chunk))
            .collect()
    } else {
        slice
            .chunks_mut(size)
            .enumerate()
            .map(|(k, chunk)| f(k, chunk))
            .collect()
    }
}

/// `f(scratch, k, item)` for the `k`-th of `items`: in parallel (one scratch per task,
/// from `init`) on a pool, serially with one scratch elsewhere.
pub fn for_each_init<I: Send, S>(
    items: Vec<I>,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize, I) + Sync + Send,
) {
    if on_pool() {
        items
            .into_par_iter()
            .enumerate()
            .for_each_init(init, |scratch, (k, item)| f(scratch, k, item));
    } else {
        let mut scratch = init();
        for (k, item) in items.into_iter().enumerate() {
            f(&mut scratch, k, item);
        }
    }
}

impl CpuBackend {
    /// Runs `work` over `bytes` of input on the pool, or on the caller's thread where
    /// splitting it cannot pay for the threads' round trip.
    pub(crate) fn run<R: Send>(&self, bytes: usize, work: impl FnOnce() -> R + Send) -> R {
        if bytes < FORK_BYTES || self.threads() == 1 {
            work()
        } else {
            self.pool.install(work)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_and_one_thread_backends_run_on_the_callers_thread() {
        let caller = std::thread::current().id();
        let two = CpuBackend::new(Some(2)).expect("threads");
        let one = CpuBackend::new(Some(1)).expect("threads");
        let place = || (std::thread::current().id(), on_pool());
        assert!(!on_pool(), "a test thread is no pool's worker");
        assert_eq!(two.run(FORK_BYTES - 1, place), (caller, false));
        assert_eq!(one.run(FORK_BYTES * 64, place), (caller, false));
        let (thread, pooled) = two.run(FORK_BYTES, place);
        assert!(
            pooled && thread != caller,
            "a mebibyte on two threads forks"
        );
    }
}
