//! User-defined reductions over several host arrays read through the buffer protocol
//! (numpy arrays, `memoryview`s …), as one array already is: no per-array description in
//! Python (numpy's array interface cost about 4 µs per array, most of a 1000-element
//! dot's call). C-contiguous arrays of one shape only; anything else gets `None` and
//! the Python side describes it as before.
//!
//! A [`MappedReduction`] is made once per `redlab.Reduction` (and again when one of its
//! fields changes) and keeps its fields and the reductions built from them per input
//! types, so a call passes no expression text and looks nothing up by it.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use redlab::{DType, Reduction};

use crate::buffer;
use crate::devices;
use crate::host::HostView;
use crate::reduce::{compute_mapped, to_python, RELEASE_FROM_BYTES};

/// Input-type lists a [`MappedReduction`] keeps built reductions for before it starts
/// over (a program calls one reduction with a few type combinations at most).
const KEPT_TYPE_LISTS: usize = 8;

/// A user-defined reduction's fields (`map`, `combine`, optional `identity`, `post` and
/// accumulator `acc`), built per input types on first use.
#[pyclass(frozen, module = "redlab._native")]
pub struct MappedReduction {
    map: String,
    combine: String,
    identity: Option<String>,
    post: Option<String>,
    acc: Option<String>,
    built: Mutex<Vec<(Vec<DType>, Arc<Reduction>)>>,
}

#[pymethods]
impl MappedReduction {
    #[new]
    #[pyo3(signature = (map, combine, identity, post, acc))]
    fn new(
        map: String,
        combine: String,
        identity: Option<String>,
        post: Option<String>,
        acc: Option<String>,
    ) -> Self {
        MappedReduction {
            map,
            combine,
            identity,
            post,
            acc,
            built: Mutex::new(Vec::new()),
        }
    }

    /// The reduction over `arrays` (a tuple, one per input the map names, C-contiguous,
    /// one shape), along `axes` (`None`: all) on `device`. `None` where an array has no
    /// such buffer.
    #[pyo3(signature = (arrays, axes, keepdims, device))]
    fn reduce_buffers(
        &self,
        py: Python<'_>,
        arrays: &Bound<'_, PyTuple>,
        axes: Option<Vec<isize>>,
        keepdims: bool,
        device: &str,
    ) -> PyResult<Option<PyObject>> {
        let mut open = Vec::with_capacity(arrays.len());
        let mut views: Vec<HostView> = Vec::with_capacity(arrays.len());
        for array in arrays.iter() {
            match buffer::open(&array) {
                Some(h) if h.view.flat => {
                    // The descriptions travel to the computing thread; the buffers stay
                    // open here until the call is done.
                    let (buffer, view) = h.split();
                    open.push(buffer);
                    views.push(view);
                }
                _ => return Ok(None),
            }
        }
        if views.is_empty() {
            return Ok(None);
        }
        let reduction = self.over(&views)?;
        let device = devices::device(device)?;
        let bytes: usize = views.iter().map(HostView::span).sum();
        // SAFETY: every buffer is held open for the whole call.
        let work =
            || unsafe { compute_mapped(&device, &reduction, &views, axes.as_deref(), keepdims) };
        let computed = if bytes >= RELEASE_FROM_BYTES {
            py.allow_threads(work)?
        } else {
            work()?
        };
        drop(open);
        to_python(py, computed, "reduce").map(Some)
    }
}

impl MappedReduction {
    /// The reduction over `views`' types (which must share one shape), built once per
    /// type list.
    fn over(&self, views: &[HostView]) -> PyResult<Arc<Reduction>> {
        crate::what::same_shapes(views)?;
        let types: Vec<DType> = views.iter().map(|v| v.dtype).collect();
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, found)) = built.iter().find(|(t, _)| *t == types) {
            return Ok(found.clone());
        }
        let reduction = crate::what::build_reduction(
            &self.map,
            &self.combine,
            self.identity.as_deref(),
            self.post.as_deref(),
            self.acc.as_deref(),
            &types,
        )?;
        if built.len() >= KEPT_TYPE_LISTS {
            built.clear();
        }
        built.push((types, reduction.clone()));
        Ok(reduction)
    }
}
