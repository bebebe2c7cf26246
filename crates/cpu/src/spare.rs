//! Scratch arrays that outlive the call that used them: a few per thread, handed to the
//! next call on that thread instead of being freed.
//!
//! The column walks keep lanes of up to a few MiB per task. Allocated fresh, such an
//! array is freshly mapped memory that is faulted in page by page on every call: var of
//! 1000×100 f32 along axis 0 took 0.9–1.3 ms that way against 0.13 ms with its lanes
//! recycled (results/cpu-dev-2core-column-first-rows). A per-task scratch
//! ([`crate::fork::map_range_init`]) ends with its call, so the arrays themselves are
//! what is kept.

use std::any::Any;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// Arrays a thread keeps at most.
const KEPT: usize = 4;

/// The largest array kept, in bytes: a narrow run's 1024 lanes of 128 f64 columns.
const KEPT_BYTES: usize = 1 << 20;

thread_local! {
    /// Arrays dropped on this thread, of any element type, newest last.
    static KEPT_ARRAYS: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// A `Vec<T>` that starts from an array this thread kept, if it has one of `T`, and is
/// kept again when dropped (unless it grew past [`KEPT_BYTES`]). Its contents on taking
/// are unspecified: callers size and fill it.
pub(crate) struct Spare<T: 'static>(Vec<T>);

impl<T: 'static> Spare<T> {
    /// The newest kept array of `T`, or an empty one.
    pub(crate) fn take() -> Spare<T> {
        let kept = KEPT_ARRAYS.with(|kept| {
            let mut kept = kept.borrow_mut();
            let at = kept.iter().rposition(|array| array.is::<Vec<T>>())?;
            kept.swap_remove(at).downcast::<Vec<T>>().ok()
        });
        Spare(kept.map(|array| *array).unwrap_or_default())
    }
}

impl<T: 'static> Default for Spare<T> {
    fn default() -> Spare<T> {
        Spare::take()
    }
}

impl<T: 'static> Drop for Spare<T> {
    fn drop(&mut self) {
        let array = std::mem::take(&mut self.0);
        if array.capacity() == 0 || array.capacity() * std::mem::size_of::<T>() > KEPT_BYTES {
            return;
        }
        // `try_with`: a thread being torn down frees the array instead.
        let _ = KEPT_ARRAYS.try_with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.len() == KEPT {
                kept.remove(0);
            }
            kept.push(Box::new(array));
        });
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

    #[test]
    fn a_dropped_array_is_taken_again_by_its_type_only() {
        let mut first = Spare::<f64>::take();
        first.resize(1000, 1.5);
        let pointer = first.as_ptr();
        drop(first);
        // Another element type does not get it.
        let other = Spare::<u32>::take();
        assert_eq!(other.capacity(), 0);
        let again = Spare::<f64>::take();
        assert_eq!(again.as_ptr(), pointer);
        assert!(again.capacity() >= 1000);
    }

    #[test]
    fn arrays_past_the_limit_are_freed() {
        let mut big = Spare::<u8>::take();
        big.resize(super::KEPT_BYTES + 1, 7);
        drop(big);
        assert_eq!(Spare::<u8>::take().capacity(), 0);
    }
}
