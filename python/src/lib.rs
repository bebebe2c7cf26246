//! The native half of the `redlab` Python package: reductions over arrays that Python
//! hands over by address (numpy's array interface) or as DLPack capsules (torch, CuPy),
//! run by the redlab library with the interpreter lock released. The Python half
//! (`redlab/__init__.py`) shapes the numpy-style API around these functions.

use pyo3::prelude::*;

mod buffer;
mod devices;
mod dlpack;
mod errors;
mod host;
mod mapped_buffers;
mod mapped_tensors;
mod numpy_objects;
mod outputs;
mod reduce;
mod stream_stats;
mod what;

/// The extension module `redlab._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(reduce::reduce_host, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::reduce_buffer, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::reduce_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::enqueue_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::enqueue_axis_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::enqueue_axis_pointer, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::enqueue_pointer, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::reduce_mapped, m)?)?;
    m.add_class::<mapped_buffers::MappedReduction>()?;
    m.add_function(wrap_pyfunction!(mapped_tensors::reduce_mapped_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(mapped_tensors::enqueue_tensors_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(mapped_tensors::enqueue_tensors_whole, m)?)?;
    m.add_function(wrap_pyfunction!(mapped_tensors::enqueue_tensors_axes, m)?)?;
    m.add_function(wrap_pyfunction!(stream_stats::enqueue_stat_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(stream_stats::enqueue_stat_pointer, m)?)?;
    m.add_function(wrap_pyfunction!(stream_stats::enqueue_stat_whole, m)?)?;
    m.add_function(wrap_pyfunction!(devices::devices_json, m)?)?;
    m.add_function(wrap_pyfunction!(devices::run_command, m)?)?;
    m.add_function(wrap_pyfunction!(what::statistics, m)?)?;
    m.add_function(wrap_pyfunction!(what::reduction_key, m)?)?;
    m.add("CANONICAL_VERSION", redlab::canonical::VERSION)?;
    m.add("DeviceError", m.py().get_type::<errors::DeviceError>())?;
    Ok(())
}
