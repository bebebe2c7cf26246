//! Element counts on the command line (`1000003`, `1e6`, `2^20`, `64Mi`, `4K`), parsed by
//! [`redlab_core::size`].

use std::str::FromStr;

pub use redlab_core::size::{parse_size, parse_size_list};

/// A parsed element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub usize);

impl FromStr for Size {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_size(text).map(Size)
    }
}
