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
