//! Host arrays: [`HostArray`] owns (or maps) the bytes of a flat input, [`ArrayRef`] is
//! a typed, borrowed view of them that backends consume.

use std::sync::Arc;

use crate::{DType, Element, Error};

/// Bytes that can back a [`HostArray`]: a vector, or a memory-mapped file.
pub trait ByteSource: Send + Sync {
    /// All bytes of the source.
    fn bytes(&self) -> &[u8];
}

impl<T: bytemuck::Pod + Send + Sync> ByteSource for Vec<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

/// A flat array of elements of one [`DType`], owned or memory-mapped.
///
/// Cloning is cheap: the bytes are shared.
#[derive(Clone)]
pub struct HostArray {
    dtype: DType,
    source: Arc<dyn ByteSource>,
    offset: usize,
    len: usize,
}

impl std::fmt::Debug for HostArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostArray")
            .field("dtype", &self.dtype)
            .field("len", &self.len)
            .finish()
    }
}

impl HostArray {
    /// Takes ownership of a typed vector.
    pub fn from_vec<T: Element>(data: Vec<T>) -> HostArray {
        let len = data.len();
        HostArray {
            dtype: T::DTYPE,
            source: Arc::new(data),
            offset: 0,
            len,
        }
    }

    /// Views `len` elements of `dtype` starting `offset` bytes into `source`.
    ///
    /// Fails when the range is out of bounds or the start is not aligned for the type
    /// (callers then copy into an owned vector instead).
    pub fn from_source(
        dtype: DType,
        source: Arc<dyn ByteSource>,
        offset: usize,
        len: usize,
    ) -> Result<HostArray, Error> {
        let total = source.bytes().len();
        let end = len
            .checked_mul(dtype.size_bytes())
            .and_then(|b| b.checked_add(offset))
            .ok_or_else(|| Error::BadBuffer("array size overflows".into()))?;
        if end > total {
            return Err(Error::BadBuffer(format!(
                "array of {len} {dtype} needs {} bytes after offset {offset}, source has {}",
                end - offset,
                total.saturating_sub(offset)
            )));
        }
        let start = source.bytes()[offset..].as_ptr() as usize;
        if start % dtype.size_bytes() != 0 {
            return Err(Error::BadBuffer(format!(
                "data at offset {offset} is not aligned for {dtype}"
            )));
        }
        Ok(HostArray {
            dtype,
            source,
            offset,
            len,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A typed view of all elements.
    pub fn view(&self) -> ArrayRef<'_> {
        let bytes =
            &self.source.bytes()[self.offset..self.offset + self.len * self.dtype.size_bytes()];
        ArrayRef {
            dtype: self.dtype,
            bytes,
        }
    }
}

/// A borrowed, typed view of a flat array: the input every backend takes.
///
/// Invariant: `bytes` holds a whole number of elements and is aligned for `dtype`.
#[derive(Debug, Clone, Copy)]
pub struct ArrayRef<'a> {
    dtype: DType,
    bytes: &'a [u8],
}

impl<'a> ArrayRef<'a> {
    /// Views a typed slice.
    pub fn from_slice<T: Element>(data: &'a [T]) -> ArrayRef<'a> {
        ArrayRef {
            dtype: T::DTYPE,
            bytes: bytemuck::cast_slice(data),
        }
    }

    /// Views raw bytes (native endianness) as elements of `dtype`; they must be a whole
    /// number of elements, aligned for the type.
    pub fn from_bytes(dtype: DType, bytes: &'a [u8]) -> Result<ArrayRef<'a>, Error> {
        let size = dtype.size_bytes();
        if bytes.len() % size != 0 || (bytes.as_ptr() as usize) % size != 0 {
            return Err(Error::BadBuffer(format!(
                "{} bytes at an address that is not a whole, aligned number of {dtype} elements",
                bytes.len()
            )));
        }
        Ok(ArrayRef { dtype, bytes })
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size_bytes()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The raw bytes (native endianness).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The elements as `&[T]`, if `T` is this view's type.
    pub fn typed<T: Element>(&self) -> Result<&'a [T], Error> {
        if T::DTYPE != self.dtype {
            return Err(Error::DTypeMismatch {
                expected: T::DTYPE,
                found: self.dtype,
            });
        }
        // The constructor guarantees alignment and length, so this cannot fail; the
        // error path stays for safety rather than a panic.
        bytemuck::try_cast_slice(self.bytes).map_err(|e| Error::BadBuffer(e.to_string()))
    }

    /// Elements `start..end` as a view of the same type.
    pub fn slice(&self, start: usize, end: usize) -> ArrayRef<'a> {
        let size = self.dtype.size_bytes();
        ArrayRef {
            dtype: self.dtype,
            bytes: &self.bytes[start * size..end * size],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_typed_and_checked() {
        let array = HostArray::from_vec(vec![1.5f32, -2.0, 3.25]);
        let view = array.view();
        assert_eq!(view.len(), 3);
        assert_eq!(view.typed::<f32>().ok(), Some(&[1.5f32, -2.0, 3.25][..]));
        assert!(view.typed::<i32>().is_err());
        assert_eq!(
            view.slice(1, 3).typed::<f32>().ok(),
            Some(&[-2.0f32, 3.25][..])
        );
    }

    #[test]
    fn out_of_range_sources_are_rejected() {
        let bytes: Arc<dyn ByteSource> = Arc::new(vec![0u64; 2]);
        assert!(HostArray::from_source(DType::F32, bytes.clone(), 0, 4).is_ok());
        assert!(HostArray::from_source(DType::F32, bytes.clone(), 8, 3).is_err());
        assert!(HostArray::from_source(DType::F32, bytes, 2, 1).is_err());
    }
}
