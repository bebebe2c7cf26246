//! Reduction values as JSON: numbers that round-trip exactly, with the raw bits beside
//! them, and strings for NaN and the infinities (which JSON numbers cannot hold).

use redlab::{Scalar, Value};
use serde_json::{json, Map, Value as Json};

/// A scalar as a JSON number (or `"NaN"`, `"inf"`, `"-inf"`).
pub fn scalar(s: &Scalar) -> Json {
    match *s {
        Scalar::I8(v) => json!(v),
        Scalar::U8(v) => json!(v),
        Scalar::I16(v) => json!(v),
        Scalar::U16(v) => json!(v),
        Scalar::I32(v) => json!(v),
        Scalar::U32(v) => json!(v),
        Scalar::I64(v) => json!(v),
        Scalar::U64(v) => json!(v),
        _ => {
            // Every float type embeds exactly in f64, whose JSON text round-trips.
            let x = s.to_f64();
            if x.is_nan() {
                json!("NaN")
            } else if x.is_infinite() {
                json!(if x > 0.0 { "inf" } else { "-inf" })
            } else {
                json!(x)
            }
        }
    }
}

/// Adds `value`, `value_bits`, `index` and `empty` fields for a result.
pub fn value_fields(value: &Value, fields: &mut Map<String, Json>) {
    match value.scalar() {
        Some(s) => {
            fields.insert("value".into(), scalar(&s));
            let hex_digits = s.dtype().size_bytes() * 2;
            fields.insert(
                "value_bits".into(),
                json!(format!("0x{:0width$x}", s.bits(), width = hex_digits)),
            );
            fields.insert("empty".into(), json!(false));
        }
        None => {
            fields.insert("value".into(), Json::Null);
            fields.insert("empty".into(), json!(true));
        }
    }
    if let Some(index) = value.index() {
        fields.insert("index".into(), json!(index));
    }
}
