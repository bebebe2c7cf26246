//! How much memory the host can still give: checked before large allocations so that an
//! impossible request is a clear error instead of an abort or the OOM killer.

use crate::Error;

/// Bytes the OS reports as available (Linux `MemAvailable`), if it says.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Fails with [`Error::OutOfMemory`] when `needed` bytes for `what` exceed what is
/// available. Where the OS does not say, allocation itself decides.
pub fn check_fits(what: &str, needed: u128) -> Result<(), Error> {
    let available = available_bytes().map_or(u64::MAX as u128, |b| b as u128);
    if needed > available || needed > isize::MAX as u128 {
        return Err(Error::OutOfMemory {
            what: what.to_string(),
            needed,
            available,
        });
    }
    Ok(())
}

/// Buffers at least this large are worth huge pages.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Asks the OS to back `[ptr, ptr + len)` with transparent huge pages, as numpy does
/// for large arrays: streaming reads then miss the TLB 512× less often. Call it before
/// the pages are first touched. Advice only: failure or a non-Linux OS changes nothing.
pub fn advise_huge_pages(ptr: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        if len < HUGE_PAGE_THRESHOLD {
            return;
        }
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: madvise with MADV_HUGEPAGE only changes how the kernel backs pages
            // of a range this process owns; it never changes their contents, and the
            // range lies inside the caller's allocation (rounded inward to pages).
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// `count` zeroed elements for results that the caller's threads then write: a large
/// allocation is mapped zero pages, faulted in by the threads that write them rather
/// than filled on one thread first, and backed by huge pages (as numpy backs its
/// results), which cuts the faults 512-fold. Max along 2^26 rows of one f32 on the
/// 2-core development machine spent most of its time on those faults.
pub fn zeroed_results<T: bytemuck::Zeroable>(count: usize) -> Vec<T> {
    let results = bytemuck::zeroed_vec::<T>(count);
    advise_huge_pages(
        results.as_ptr().cast(),
        std::mem::size_of_val(results.as_slice()),
    );
    results
}
