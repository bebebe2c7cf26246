//! Scratch arrays that outlive the call that used them: a few per thread, handed to the
//! next call on that thread instead of being freed.
//!
//! The column walks keep lanes of up to a few MiB per task. Allocated fresh, such an
//! array is freshly mapped memory that is faulted in page by page on every call: var of
//! 1000×100 f32 along axis 0 took 0.9–1.3 ms that way against 0.13 ms with its lanes
//! recycled (results/cpu-dev-2core-column-first-rows). A per-task scratch
//! ([`crate::fork::map_range_init`]) ends with its call, so the arrays themselves are
//! what is kept.
//!
//! Which arrays stay matters as much: a sum of 1000×100 columns drops eleven small
//! stack slots, and when the oldest arrays made room for them, the var lanes went and
//! var calls between such sums were back at 0.8 ms. So the smallest arrays go first
//! (they are the cheapest to make again), and an array is taken by best fit.

use std::any::Any;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// Arrays a thread keeps at most.
const KEPT: usize = 16;

/// The largest array kept, in bytes: a narrow run's 1024 lanes of 512 f64 columns (the
/// widest narrow run, log-sum-exp's).
const KEPT_BYTES: usize = 4 << 20;

/// Bytes a thread keeps at most, all arrays together: both arrays of the widest lanes.
const KEPT_TOTAL: usize = 8 << 20;

/// One kept array: its capacity in bytes and the `Vec` itself.
type Kept = (usize, Box<dyn Any>);

thread_local! {
    /// Arrays dropped on this thread, of any element type.
    static KEPT_ARRAYS: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// A `Vec<T>` that can start from an array this thread kept ([`Spare::fit`]) and is kept
/// again when dropped (unless it grew past [`KEPT_BYTES`]). It starts empty.
pub(crate) struct Spare<T: 'static>(Vec<T>);

impl<T: Clone + 'static> Spare<T> {
    /// Makes the array exactly `len` long. Where its capacity is short, the kept array
    /// of `T` with the least capacity of at least `len` takes its place first. Elements
    /// the array (or the kept one) already had keep their stale values; only new ones
    /// are `value`: callers that need every element set fill it themselves.
    pub(crate) fn fit(&mut self, len: usize, value: T) {
        if self.0.capacity() < len {
            if let Some(kept) = take_fitting::<T>(len) {
                let own = std::mem::replace(&mut self.0, kept);
                keep(own);
            }
        }
        self.0.resize(len, value);
    }
}

/// The kept `Vec<T>` with the least capacity of at least `len`, removed from the kept.
fn take_fitting<T: 'static>(len: usize) -> Option<Vec<T>> {
    KEPT_ARRAYS
        .try_with(|kept| {
            let mut kept = kept.borrow_mut();
            let at = kept
                .iter()
                .enumerate()
                .filter_map(|(k, (_, array))| {
                    let capacity = array.downcast_ref::<Vec<T>>()?.capacity();
                    (capacity >= len).then_some((capacity, k))
                })
                .min()?
                .1;
            kept.swap_remove(at).1.downcast::<Vec<T>>().ok().map(|v| *v)
        })
        .ok()
        .flatten()
}

/// Keeps `array` for a later [`Spare::fit`] on this thread, dropping the smallest kept
/// arrays while there are more than [`KEPT`] or [`KEPT_TOTAL`] bytes.
fn keep<T: 'static>(array: Vec<T>) {
    let bytes = array.capacity() * std::mem::size_of::<T>();
    if bytes == 0 || bytes > KEPT_BYTES {
        return;
    }
    // `try_with`: a thread being torn down frees the array instead.
    let _ = KEPT_ARRAYS.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        kept.push((bytes, Box::new(array)));
        while kept.len() > KEPT || kept.iter().map(|(b, _)| b).sum::<usize>() > KEPT_TOTAL {
            let smallest = (0..kept.len()).min_by_key(|&k| kept[k].0).unwrap_or(0);
            kept.swap_remove(smallest);
        }
    });
}

impl<T: 'static> Default for Spare<T> {
    fn default() -> Spare<T> {
        Spare(Vec::new())
    }
}

impl<T: 'static> Drop for Spare<T> {
    fn drop(&mut self) {
        keep(std::mem::take(&mut self.0));
    }
}

impl<T> Deref for Spare<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> DerefMut for Spare<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::Spare;

    /// A new spare of `len` elements, and the address of its memory.
    fn fitted<T: Clone + Default + 'static>(len: usize) -> (Spare<T>, *const T) {
        let mut spare = Spare::default();
        spare.fit(len, T::default());
        let at = spare.as_ptr();
        (spare, at)
    }

    #[test]
    fn a_kept_array_is_taken_again_by_its_type_and_the_best_fit() {
        let (small, small_at) = fitted::<f64>(100);
        let (large, large_at) = fitted::<f64>(10_000);
        drop((small, large));
        // Another element type does not get either.
        let (other, _) = fitted::<u32>(10);
        assert!(other.capacity() < 100);
        let (fits_small, at) = fitted::<f64>(50);
        assert_eq!(at, small_at);
        assert_eq!(fits_small.len(), 50);
        let (fits_large, at) = fitted::<f64>(5_000);
        assert_eq!(at, large_at);
        assert_eq!(fits_large.len(), 5_000);
    }

    #[test]
    fn small_arrays_do_not_push_out_large_ones() {
        let (large, large_at) = fitted::<f64>(100_000);
        drop(large);
        for _ in 0..3 {
            let smalls: Vec<_> = (0..40).map(|_| fitted::<f32>(100).0).collect();
            drop(smalls);
        }
        assert_eq!(fitted::<f64>(90_000).1, large_at);
    }

    #[test]
    fn arrays_past_the_limit_are_freed() {
        let (big, big_at) = fitted::<u8>(super::KEPT_BYTES + 1);
        drop(big);
        let (again, at) = fitted::<u8>(1);
        assert_ne!(at, big_at);
        assert!(again.capacity() < super::KEPT_BYTES);
    }
}
