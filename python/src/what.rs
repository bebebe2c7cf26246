//! What a call computes: a built-in operator (with an optional accumulator type), a
//! named statistic from `redlab_expr::stats`, or a user-defined reduction of one array
//! (by its key, [`reduction_key`]), parsed from the names Python passes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use redlab::{DType, Op, Problem, Reduction, Statistic};

use crate::errors;

/// A built-in operator or a statistic.
pub enum What {
    /// One of redlab's operators, accumulating in `acc` (default: the operator's).
    Op(Op, Option<DType>),
    /// A map, a combine and a `post`: a statistic's name, or a user-defined reduction's
    /// key ([`reduction_key`]). Both take the same paths (in place on CUDA tensors).
    Stat(String),
    /// A statistic with a several-number accumulator, computed on the CPU.
    Multi(Statistic),
}

/// The dtype named by the project's names (`f32`) or numpy's (`float32`, `<f4`).
pub fn dtype(name: &str) -> PyResult<DType> {
    name.parse::<DType>()
        .map_err(|_| PyTypeError::new_err(format!("redlab cannot reduce arrays of {name}")))
}

impl What {
    /// Parses `kind` ("op", "stat" or "multi"), `name`, the accumulator's type name and
    /// `ddof` (variance and standard deviation).
    pub fn parse(kind: &str, name: &str, acc: Option<&str>, ddof: f64) -> PyResult<What> {
        match kind {
            "op" => {
                let op = name
                    .parse::<Op>()
                    .map_err(|_| PyValueError::new_err(format!("unknown operator '{name}'")))?;
                Ok(What::Op(op, acc.map(dtype).transpose()?))
            }
            "stat" if acc.is_none() => Ok(What::Stat(name.to_string())),
            "multi" => Statistic::parse(name, ddof)
                .map(What::Multi)
                .ok_or_else(|| PyValueError::new_err(format!("unknown statistic '{name}'"))),
            "stat" => Err(PyTypeError::new_err(format!(
                "{name} takes no dtype: its accumulator is fixed"
            ))),
            other => Err(PyValueError::new_err(format!("unknown kind '{other}'"))),
        }
    }

    /// The problem of a built-in operator over `input`.
    pub fn problem(op: Op, input: DType, acc: Option<DType>) -> PyResult<Problem> {
        Problem::new(op, input, acc).map_err(|e| errors::from_core(&e))
    }

    /// The reduction a [`What::Stat`] name stands for over `input`: a user-defined
    /// reduction's key, or a statistic's name.
    pub fn statistic(name: &str, input: DType) -> PyResult<Arc<Reduction>> {
        if let Some(fields) = name.strip_prefix(KEY_MARK) {
            let parts: Vec<&str> = fields.split(KEY_SEPARATOR).collect();
            let [map, combine, identity, post, acc] = parts[..] else {
                return Err(PyValueError::new_err("not a reduction key"));
            };
            // Empty fields stand for options not given.
            let given = |field: &&str| !field.is_empty();
            let (identity, post, acc) = (
                Some(identity).filter(given),
                Some(post).filter(given),
                Some(acc).filter(given),
            );
            return build_reduction(map, combine, identity, post, acc, &[input]);
        }
        // A statistic's name holds no separator, so it names no user key's fields.
        built(name.to_string(), &[input], || {
            redlab::stats::reduction(name, input).map_err(|e| errors::from_expr(&e))
        })
    }

    /// The name errors use for `name`: a statistic's own, "reduce" for a key.
    pub fn label(name: &str) -> &str {
        if name.starts_with(KEY_MARK) {
            "reduce"
        } else {
            name
        }
    }
}

/// Starts a user-defined reduction's key; no statistic's name does.
const KEY_MARK: &str = "\u{1f}expr\u{1f}";
/// Between a key's fields. The expression language has no control characters, so no
/// field holds one ([`reduction_key`] refuses them).
const KEY_SEPARATOR: char = '\u{1f}';

/// The key under which a user-defined reduction of one array travels as a statistic's
/// name does (`map`, `combine`, optional `identity`, `post` and accumulator `acc`): the
/// same paths then serve it, in place on CUDA tensors and strided host arrays, its
/// prepared kernels cached by the key and input type. `None` for a map that reads the
/// index `i`: those paths number a view's elements by where they sit in memory, so such
/// maps keep the path that copies each input into C order first.
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc))]
pub fn reduction_key(
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
) -> PyResult<Option<String>> {
    if redlab::parser::reads_index(map).map_err(|e| errors::from_expr(&e))? {
        return Ok(None);
    }
    let text = fields_text(map, combine, identity, post, acc);
    // Five fields have four separators between them; any more came from a field.
    if text.matches(KEY_SEPARATOR).count() != 4 {
        return Err(PyValueError::new_err(
            "expressions hold no control characters",
        ));
    }
    Ok(Some(format!("{KEY_MARK}{text}")))
}

/// A `ValueError` naming the first of `views` (one per input a map names) whose shape
/// differs from the first one's.
pub fn same_shapes(views: &[crate::host::HostView]) -> PyResult<()> {
    if let Some(first) = views.first() {
        for (k, v) in views.iter().enumerate().skip(1) {
            if v.layout.dims != first.layout.dims {
                return Err(PyValueError::new_err(format!(
                    "input {k} has shape {:?}, input 0 has {:?}",
                    v.layout.dims, first.layout.dims
                )));
            }
        }
    }
    Ok(())
}

/// A user-defined reduction over `views` (one per input the map names), which must share
/// one shape ([`same_shapes`]).
pub fn reduction_over_views(
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    views: &[crate::host::HostView],
) -> PyResult<Arc<Reduction>> {
    same_shapes(views)?;
    let types: Vec<DType> = views.iter().map(|v| v.dtype).collect();
    build_reduction(map, combine, identity, post, acc, &types)
}

/// A user-defined reduction over inputs of `types`, parsed once per fields and types
/// ([`built`]).
pub fn build_reduction(
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    types: &[DType],
) -> PyResult<Arc<Reduction>> {
    let text = fields_text(map, combine, identity, post, acc);
    built(text, types, || {
        let acc = acc.map(dtype).transpose()?;
        Reduction::builder(map, combine)
            .with_options(identity, post, acc)
            .build(types)
            .map_err(|e| errors::from_expr(&e))
    })
}

/// A reduction's fields as one text, each option not given empty: the key under which
/// it is built and prepared once.
pub fn fields_text(
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
) -> String {
    [
        map,
        combine,
        identity.unwrap_or(""),
        post.unwrap_or(""),
        acc.unwrap_or(""),
    ]
    .join(&KEY_SEPARATOR.to_string())
}

/// Built reductions by their text and input types.
type Built = Mutex<HashMap<(String, Vec<DType>), Arc<Reduction>>>;

/// Built reductions kept before the table starts over.
const BUILT_KEYS: usize = 512;

/// The reduction `text` names over inputs of `types`, built by `build` on first use.
/// Parsing, type checking and folding an expression took about 2 µs of a 1000-element
/// dot's 4 µs call on the development machine; a call with the same fields then only
/// looks it up. Errors are not kept: a bad expression fails again, the same way.
fn built(
    text: String,
    types: &[DType],
    build: impl FnOnce() -> PyResult<Reduction>,
) -> PyResult<Arc<Reduction>> {
    static BUILT: OnceLock<Built> = OnceLock::new();
    let table = BUILT.get_or_init(Default::default);
    let key = (text, types.to_vec());
    if let Some(found) = table.lock().ok().and_then(|t| t.get(&key).cloned()) {
        return Ok(found);
    }
    let reduction = Arc::new(build()?);
    if let Ok(mut t) = table.lock() {
        if t.len() >= BUILT_KEYS {
            t.clear();
        }
        t.insert(key, reduction.clone());
    }
    Ok(reduction)
}

/// The names of the statistics the library computes.
#[pyfunction]
pub fn statistics() -> Vec<&'static str> {
    let mut names = redlab::stats::NAMES.to_vec();
    names.extend(Statistic::NAMES);
    names
}
