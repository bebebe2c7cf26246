//! What the kernels of one axis or segment job wrote ([`SegmentResults`]): each output's
//! accumulator as the device holds it, read back once and turned into values or straight
//! into the typed array on the host.

use redlab_core::{reference, ArrayRef, Packed, Problem, Value};

use crate::codec::Codec;
use crate::driver::RunError;

/// What the kernels of one job wrote: each output's accumulator as the device holds it
/// ([`Codec`]'s bytes), with the seconds of each launch. Turned into values or into the
/// typed array on the host, without a second trip to the device.
pub struct SegmentResults {
    pub(crate) problem: Problem,
    pub(crate) codec: Codec,
    /// Accumulators of every output (empty when no output has elements).
    pub(crate) bytes: Vec<u8>,
    /// Outputs with no elements, which hold the value over nothing.
    pub(crate) empty: Vec<usize>,
    pub(crate) outputs: usize,
    /// Seconds of each launch.
    pub passes: Vec<f64>,
}

impl SegmentResults {
    /// The value over no elements: the identity, or [`Value::Empty`] for min, max,
    /// argmin and argmax.
    fn empty_value(&self) -> Result<Value, redlab_core::Error> {
        let problem = &self.problem;
        let empty = redlab_core::with_dtype!(problem.dtype, T => ArrayRef::from_slice::<T>(&[]));
        reference::reduce(problem, empty)
    }

    /// One value per output.
    pub fn values(self) -> Result<(Vec<Value>, Vec<f64>), RunError> {
        let empty_value = self
            .empty_value()
            .map_err(|e| RunError::Device(e.to_string()))?;
        let mut values = vec![empty_value; self.outputs];
        if !self.bytes.is_empty() {
            let mut empty = self.empty.iter().peekable();
            for (k, value) in values.iter_mut().enumerate() {
                if empty.next_if_eq(&&k).is_none() {
                    *value = self.codec.value(self.codec.decode(&self.bytes, k));
                }
            }
        }
        Ok((values, self.passes))
    }

    /// The outputs as one typed array (see [`Packed`]; the same bytes as packing
    /// [`SegmentResults::values`]), without a [`Value`] per output: accumulators that
    /// already are the result's bytes are copied (a stride apart where the device keeps
    /// them in wider words), float min/max keys converted in one loop, others decoded
    /// one by one. Min, max, argmin and argmax of an output with no elements are an
    /// error, as when packing values.
    pub fn packed(self) -> Result<(Packed, Vec<f64>), redlab_core::Error> {
        let dtype = Packed::result_dtype(&self.problem);
        let size = dtype.size_bytes();
        let acc = self.codec.acc_bytes;
        let mut bytes = Vec::with_capacity(self.outputs * size);
        if self.bytes.is_empty() {
            // No output has elements (all are in `empty`): nothing came from the device.
            bytes.resize(self.outputs * size, 0);
        } else if self.codec.raw_result_bytes() == Some(size) && acc == size {
            bytes.extend_from_slice(&self.bytes[..self.outputs * size]);
        } else if self.codec.raw_result_bytes() == Some(size) {
            for word in self.bytes.chunks_exact(acc).take(self.outputs) {
                bytes.extend_from_slice(&word[..size]);
            }
        } else if self
            .codec
            .float_keys_into(&self.bytes, self.outputs, &mut bytes)
        {
            // Float min/max: keys turned back into floats in one loop (empty outputs
            // are replaced below).
        } else {
            for k in 0..self.outputs {
                let bits = match self.codec.value(self.codec.decode(&self.bytes, k)) {
                    Value::Scalar(s) => s.bits(),
                    Value::Indexed { index, .. } => index,
                    // Only an output with no elements has no value (checked below).
                    Value::Empty => 0,
                };
                bytes.extend_from_slice(&bits.to_le_bytes()[..size]);
            }
        }
        if let Some(&first) = self.empty.first() {
            let bits = match self.empty_value()? {
                Value::Scalar(s) => s.bits(),
                _ => return Err(Packed::undefined(&self.problem, first)),
            };
            let word = &bits.to_le_bytes()[..size];
            for &k in &self.empty {
                bytes[k * size..(k + 1) * size].copy_from_slice(word);
            }
        }
        Ok((
            Packed {
                dtype,
                bytes: bytes.into(),
            },
            self.passes,
        ))
    }
}
