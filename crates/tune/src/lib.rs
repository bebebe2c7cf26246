//! Tuning for redlab: the database of the fastest verified configurations per device
//! family ([`db`]), the parameter spaces and which variants may serve a problem
//! ([`space`]), device identities for lookups ([`device`]), and the `auto` strategy that
//! picks a variant and parameters and explains why ([`mod@choose`]). The timing itself is
//! done by `redlab tune`, through the backends.

pub mod choose;
pub mod db;
pub mod device;
pub mod space;

pub use choose::{choose, Auto, Choice, Source};
pub use device::DeviceKey;
