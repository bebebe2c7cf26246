//! Many results as one typed array: the type numpy would return and the little-endian
//! bytes of its elements. This is what callers of axis and segment reductions keep (a
//! .npy file, a numpy array), and it is 3 to 24 times smaller than one [`Value`] per
//! output: for rows of 3, computing the sums straight into it made the call 1.55–1.72×
//! faster on the 2-core development machine
//! (results/cpu-dev-2core-typed-outputs).

use crate::value_bytes::scalar_at;
use crate::{DType, Element, Error, Op, Problem, Scalar, Value};

/// One result per output, as an array of one type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// The results' type: the accumulator for sums and products, the input's for min,
    /// max and the bitwise operators, int64 for argmin and argmax (indices).
    pub dtype: DType,
    /// The results' little-endian bytes, `dtype`'s size each.
    pub bytes: PackedBytes,
}

/// The bytes of [`Packed`] results, held as the array they were computed in (viewed as
/// bytes): results of the CPU's column and short-row paths stay the `Vec` of their own
/// type. Copying them into a byte `Vec` was a third of a 3×4096 sum along axis 0 from
/// Python on the 2-core development machine (glibc's copy of 16 KiB took several
/// microseconds there), and for 2^26 rows of one i32, whose min had been copied into
/// fresh memory one 4 KiB page fault at a time, five sixths of the call.
#[derive(Clone)]
pub struct PackedBytes(Storage);

/// The elements, by width: each element type is kept as the unsigned integers of its
/// size (same size and alignment, so the `Vec` moves over without a copy).
#[derive(Clone)]
enum Storage {
    Bytes(Vec<u8>),
    Two(Vec<u16>),
    Four(Vec<u32>),
    Eight(Vec<u64>),
}

impl PackedBytes {
    /// `elements` as bytes, without a copy.
    pub fn of_vec<E: Element>(elements: Vec<E>) -> PackedBytes {
        // Every element type is a plain number of 1, 2, 4 or 8 bytes, aligned to its
        // size, so the cast keeps the allocation; the copy is only a fallback.
        let elements = match bytemuck::allocation::try_cast_vec::<E, u8>(elements) {
            Ok(bytes) => return PackedBytes(Storage::Bytes(bytes)),
            Err((_, elements)) => elements,
        };
        let elements = match bytemuck::allocation::try_cast_vec::<E, u16>(elements) {
            Ok(words) => return PackedBytes(Storage::Two(words)),
            Err((_, elements)) => elements,
        };
        let elements = match bytemuck::allocation::try_cast_vec::<E, u32>(elements) {
            Ok(words) => return PackedBytes(Storage::Four(words)),
            Err((_, elements)) => elements,
        };
        match bytemuck::allocation::try_cast_vec::<E, u64>(elements) {
            Ok(words) => PackedBytes(Storage::Eight(words)),
            Err((_, elements)) => {
                PackedBytes(Storage::Bytes(bytemuck::cast_slice(&elements).to_vec()))
            }
        }
    }

    /// The bytes as a byte `Vec` (copied unless they were bytes already).
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Storage::Bytes(bytes) => bytes,
            _ => self.to_vec(),
        }
    }
}

impl std::ops::Deref for PackedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // Hosts are little-endian (the crate's element views assume it too).
        match &self.0 {
            Storage::Bytes(bytes) => bytes,
            Storage::Two(words) => bytemuck::cast_slice(words),
            Storage::Four(words) => bytemuck::cast_slice(words),
            Storage::Eight(words) => bytemuck::cast_slice(words),
        }
    }
}

impl std::ops::DerefMut for PackedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            Storage::Bytes(bytes) => bytes,
            Storage::Two(words) => bytemuck::cast_slice_mut(words),
            Storage::Four(words) => bytemuck::cast_slice_mut(words),
            Storage::Eight(words) => bytemuck::cast_slice_mut(words),
        }
    }
}

impl From<Vec<u8>> for PackedBytes {
    fn from(bytes: Vec<u8>) -> PackedBytes {
        PackedBytes(Storage::Bytes(bytes))
    }
}

impl PartialEq for PackedBytes {
    fn eq(&self, other: &PackedBytes) -> bool {
        **self == **other
    }
}

impl Eq for PackedBytes {}

impl PartialEq<Vec<u8>> for PackedBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl PartialEq<PackedBytes> for Vec<u8> {
    fn eq(&self, other: &PackedBytes) -> bool {
        self[..] == **other
    }
}

impl std::fmt::Debug for PackedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Packed {
    /// Results computed directly as elements of their type, copied.
    pub fn of_elements<E: Element>(results: &[E]) -> Packed {
        // Hosts are little-endian (the crate's element views assume it too).
        Packed {
            dtype: E::DTYPE,
            bytes: bytemuck::cast_slice(results).to_vec().into(),
        }
    }

    /// Results computed directly as elements of their type, kept as they are.
    pub fn of_vec<E: Element>(results: Vec<E>) -> Packed {
        Packed {
            dtype: E::DTYPE,
            bytes: PackedBytes::of_vec(results),
        }
    }

    /// The results as numpy would return them (see [`Packed::dtype`]). Min, max, argmin
    /// and argmax of an empty output have no value (numpy raises), and are an error here.
    pub fn of_values(problem: &Problem, values: &[Value]) -> Result<Packed, Error> {
        let dtype = Packed::result_dtype(problem);
        let size = dtype.size_bytes();
        let mut bytes = Vec::with_capacity(values.len() * size);
        for (k, value) in values.iter().enumerate() {
            let bits = match (problem.op, value) {
                (Op::ArgMin | Op::ArgMax, Value::Indexed { index, .. }) => *index,
                (_, Value::Scalar(s)) => s.bits(),
                _ => return Err(Packed::undefined(problem, k)),
            };
            bytes.extend_from_slice(&bits.to_le_bytes()[..size]);
        }
        Ok(Packed {
            dtype,
            bytes: bytes.into(),
        })
    }

    /// The type of `problem`'s results (see [`Packed::dtype`]).
    pub fn result_dtype(problem: &Problem) -> DType {
        match problem.op {
            Op::ArgMin | Op::ArgMax => DType::I64,
            _ => problem.acc,
        }
    }

    /// The error for output `k` of `problem` when it has no elements and the operator
    /// no identity (numpy raises there too).
    pub fn undefined(problem: &Problem, k: usize) -> Error {
        Error::Shape(format!(
            "{} of output {k} is undefined: it has no elements",
            problem.op
        ))
    }

    /// Number of results.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size_bytes()
    }

    /// Whether there are no results.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Result `k` as a scalar of [`Packed::dtype`] (an index, for argmin and argmax).
    pub fn scalar(&self, k: usize) -> Option<Scalar> {
        scalar_at(self.dtype, &self.bytes[..], k)
    }

    /// The results as values, for operators whose results are plain scalars (all but
    /// argmin and argmax, whose packed form keeps only the index).
    pub fn scalar_values(&self) -> Vec<Value> {
        (0..self.len())
            .filter_map(|k| self.scalar(k).map(Value::Scalar))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segmented::{reference, Selection};
    use crate::ArrayRef;

    #[test]
    fn typed_results_and_values_pack_to_the_same_bytes() {
        let sums = [1.5f32, -0.0, f32::MIN_POSITIVE, 3.0e7];
        let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
        let values: Vec<Value> = sums
            .iter()
            .map(|&s| Value::Scalar(Scalar::F32(s)))
            .collect();
        let typed = Packed::of_elements(&sums);
        assert_eq!(typed, Packed::of_values(&problem, &values).expect("pack"));
        let doubles: Vec<f64> = sums.iter().map(|&s| f64::from(s)).collect();
        let bytes: Vec<u8> = doubles.iter().flat_map(|d| d.to_le_bytes()).collect();
        assert_eq!(*Packed::of_vec(doubles).bytes, bytes[..]);
        let ints = vec![-3i16, 7, i16::MAX];
        let bytes: Vec<u8> = ints.iter().flat_map(|d| d.to_le_bytes()).collect();
        assert_eq!(Packed::of_vec(ints).bytes.into_vec(), bytes);
        assert_eq!(typed.len(), 4);
        assert_eq!(typed.scalar_values(), values);
        assert_eq!(typed.scalar(4), None);
    }

    /// Every width keeps its allocation and reads back as the elements' own bytes,
    /// also after a write through the byte view.
    #[test]
    fn vectors_of_every_width_keep_their_bytes() {
        fn check<E: Element>(elements: Vec<E>) {
            let expected: Vec<u8> = bytemuck::cast_slice(&elements).to_vec();
            let address = elements.as_ptr() as usize;
            let mut packed = PackedBytes::of_vec(elements);
            assert_eq!(packed.as_ptr() as usize, address, "{} was copied", E::DTYPE);
            assert_eq!(*packed, expected[..]);
            packed[0] ^= 0xff;
            let mut changed = expected.clone();
            changed[0] ^= 0xff;
            assert_eq!(packed.into_vec(), changed);
        }
        check(vec![-3i8, 7, i8::MIN]);
        check(vec![200u8, 1]);
        check(vec![-3i16, 7, i16::MAX]);
        check(vec![half::f16::from_f32(1.5), half::f16::NEG_INFINITY]);
        check(vec![half::bf16::from_f32(-2.25), half::bf16::MAX]);
        check(vec![i32::MIN, 5, -1]);
        check(vec![u32::MAX, 0]);
        check(vec![1.5f32, -0.0, f32::NAN]);
        check(vec![i64::MIN, 9]);
        check(vec![u64::MAX]);
        check(vec![f64::MIN_POSITIVE, -7.0]);
    }

    #[test]
    fn argmax_packs_indices_and_empty_selections_are_errors() {
        let data = [3i32, 9, 1, 9, 2];
        let ranges = [0..2, 2..5, 5..5];
        let argmax = Problem::new(Op::ArgMax, DType::I32, None).expect("problem");
        let values = reference(
            &argmax,
            ArrayRef::from_slice(&data),
            Selection::Ranges(&ranges),
        )
        .expect("values");
        assert!(
            Packed::of_values(&argmax, &values).is_err(),
            "the empty segment has no argmax"
        );
        let packed = Packed::of_values(&argmax, &values[..2]).expect("pack");
        assert_eq!(packed.dtype, DType::I64);
        let indices: Vec<Option<Scalar>> = (0..2).map(|k| packed.scalar(k)).collect();
        assert_eq!(indices, vec![Some(Scalar::I64(1)), Some(Scalar::I64(1))]);
    }
}
