//! Rearranging element bytes into the reduction's layout: native byte order and C order.

/// Copies `src` (elements of `size` bytes in Fortran order for `shape`) into C order.
///
/// The Fortran-ordered array of shape `(d0, …, dk-1)` is the C-ordered array of shape
/// `(dk-1, …, d0)`, so the source offset of C index `(i0, …, ik-1)` is
/// `Σ i_j · Π_{m<j} d_m`. An odometer walks the C indices (last fastest) and keeps that
/// offset up to date incrementally.
pub fn fortran_to_c(src: &[u8], shape: &[usize], size: usize) -> Vec<u8> {
    // An empty axis makes the array empty whatever the other axes (whose product alone
    // may not fit in usize): test for it before multiplying.
    if shape.contains(&0) {
        return Vec::new();
    }
    let count: usize = shape.iter().product();
    let mut out = Vec::with_capacity(count * size);
    let mut src_stride = vec![1usize; shape.len()];
    for j in 1..shape.len() {
        src_stride[j] = src_stride[j - 1] * shape[j - 1];
    }
    let mut index = vec![0usize; shape.len()];
    let mut offset = 0usize;
    for _ in 0..count {
        out.extend_from_slice(&src[offset * size..(offset + 1) * size]);
        // Advance the odometer from the last axis.
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            offset += src_stride[axis];
            if index[axis] < shape[axis] {
                break;
            }
            offset -= src_stride[axis] * shape[axis];
            index[axis] = 0;
        }
    }
    out
}

/// Reverses the bytes of every `size`-byte element in place.
pub fn swap_bytes(data: &mut [u8], size: usize) {
    if size > 1 {
        for element in data.chunks_exact_mut(size) {
            element.reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_2x3_becomes_row_major() {
        // A = [[0, 1, 2], [3, 4, 5]] stored column-major: 0 3 1 4 2 5.
        let src = [0u8, 3, 1, 4, 2, 5];
        assert_eq!(fortran_to_c(&src, &[2, 3], 1), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn fortran_3d_and_degenerate_shapes() {
        // shape (2, 2, 2): C index (i, j, k) is stored at i + 2j + 4k.
        let src: Vec<u8> = (0..8).collect();
        let expected: Vec<u8> = (0..8u8)
            .map(|c| (c >> 2) | (((c >> 1) & 1) << 1) | ((c & 1) << 2))
            .collect();
        assert_eq!(fortran_to_c(&src, &[2, 2, 2], 1), expected);
        assert_eq!(fortran_to_c(&[7, 8], &[], 1), vec![7]);
        assert!(fortran_to_c(&[], &[0, 3], 4).is_empty());
        assert!(fortran_to_c(&[], &[1 << 40, 1 << 40, 0], 4).is_empty());
    }

    #[test]
    fn swaps_each_element() {
        let mut bytes = [1u8, 2, 3, 4, 5, 6, 7, 8];
        swap_bytes(&mut bytes, 4);
        assert_eq!(bytes, [4, 3, 2, 1, 8, 7, 6, 5]);
    }
}
