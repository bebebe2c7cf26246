//! Raw binary inputs: little-endian elements of the type named with `--dtype`, nothing
//! else in the file.

use std::path::Path;
use std::sync::Arc;

use redlab_core::{host_memory, ByteSource, DType, HostArray};

use super::layout::swap_bytes;
use super::{InputError, Loaded};

/// Loads a raw little-endian file of `dtype` elements from its mapped bytes.
pub fn load(path: &Path, mapped: Arc<dyn ByteSource>, dtype: DType) -> Result<Loaded, InputError> {
    let len = mapped.bytes().len();
    let size = dtype.size_bytes();
    if len % size != 0 {
        return Err(InputError::RawSize {
            path: path.display().to_string(),
            len: len as u64,
            dtype,
            size,
        });
    }
    let count = len / size;
    let shape = vec![count as u64];
    if cfg!(target_endian = "little") {
        if let Ok(array) = HostArray::from_source(dtype, mapped.clone(), 0, count) {
            return Ok(Loaded {
                array,
                shape,
                format: "raw",
                mapped: true,
            });
        }
    }
    host_memory::check_fits(
        &format!("a converted copy of {}", path.display()),
        len as u128,
    )?;
    let mut words = vec![0u64; len.div_ceil(8)];
    let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..len];
    bytes.copy_from_slice(mapped.bytes());
    if cfg!(target_endian = "big") {
        swap_bytes(bytes, size);
    }
    let array = HostArray::from_source(dtype, Arc::new(words), 0, count)?;
    Ok(Loaded {
        array,
        shape,
        format: "raw",
        mapped: false,
    })
}
