//! User-defined reductions over several host arrays read through the buffer protocol
//! (numpy arrays, `memoryview`s …), as one array already is: no per-array description in
//! Python (numpy's array interface cost about 4 µs per array, most of a 1000-element
//! dot's call). C-contiguous arrays of one shape only; anything else gets `None` and
//! the Python side describes it as before.

use pyo3::prelude::*;
use redlab::segmented::Selection;

use crate::buffer::{self, Held};
use crate::devices;
use crate::host::HostView;
use crate::outputs::PyResultTuple;
use crate::reduce::{axis_plan, lib, shaped, to_python, whole, Computed, RELEASE_FROM_BYTES};

/// A user-defined reduction (`map`, `combine`, optional `identity`, `post`, `acc`) over
/// the buffers of `arrays` (one per input the map names, C-contiguous, one shape), along
/// `axes` (`None`: all) on `device`. `None` where an array has no such buffer.
#[pyfunction]
#[pyo3(signature = (map, combine, identity, post, acc, arrays, axes, keepdims, device))]
#[allow(clippy::too_many_arguments)] // one flat call keeps the per-call cost low
pub fn reduce_mapped_buffers(
    py: Python<'_>,
    map: &str,
    combine: &str,
    identity: Option<&str>,
    post: Option<&str>,
    acc: Option<&str>,
    arrays: Vec<Bound<'_, PyAny>>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    device: &str,
) -> PyResult<Option<PyResultTuple>> {
    let mut held: Vec<Held> = Vec::with_capacity(arrays.len());
    for array in &arrays {
        match buffer::open(array) {
            Some(h) if h.view.flat => held.push(h),
            _ => return Ok(None),
        }
    }
    // The descriptions travel to the computing thread; the buffers stay held here.
    let views: Vec<HostView> = held.iter().map(|h| h.view.clone()).collect();
    let Some(first) = views.first() else {
        return Ok(None);
    };
    let reduction = crate::what::reduction_over_views(map, combine, identity, post, acc, &views)?;
    let device = devices::device(device)?;
    let all = whole(&axes, keepdims);
    let bytes: usize = views.iter().map(HostView::span).sum();
    let work = || -> PyResult<Computed> {
        // SAFETY: every buffer is held open for the whole call.
        let data = views
            .iter()
            .map(|v| unsafe { v.bytes() })
            .collect::<PyResult<Vec<_>>>()?;
        if all {
            let value = device.reduce_mapped(&reduction, &data).map_err(lib)?.value;
            return Ok(Computed::Scalar(value));
        }
        let plan = axis_plan(first, axes.as_deref(), keepdims)?;
        let values = device
            .reduce_mapped_outputs(&reduction, &data, Selection::Axes(&plan))
            .map_err(lib)?;
        let n = plan.segment_len();
        let values = values.into_iter().map(|v| reduction.finish(v, n)).collect();
        Ok(shaped(values, &plan, all, "f64"))
    };
    let computed = if bytes >= RELEASE_FROM_BYTES {
        py.allow_threads(work)?
    } else {
        work()?
    };
    drop(held);
    to_python(py, computed, "reduce").map(Some)
}
