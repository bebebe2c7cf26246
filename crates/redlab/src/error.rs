//! The library's error type: model errors, input errors and device selection.

use crate::input::InputError;

/// Anything the redlab library can report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A problem with the reduction request or a backend failure.
    #[error(transparent)]
    Core(#[from] redlab_core::Error),
    /// A problem with an input file.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A device name that is not `cpu`, `opencl:N` or `cuda:N`.
    #[error("unknown device '{0}' (try 'cpu'; 'redlab devices' lists what is here)")]
    UnknownDevice(String),
    /// Ranks of a multi-process reduction that could not meet or exchange.
    #[error(transparent)]
    Rendezvous(#[from] crate::rendezvous::RendezvousError),
    /// Results asked for as a type they are not.
    #[error("the results are {results}, not {asked} (sums and products give their accumulator's type, min, max and the bitwise operators the input's, argmin and argmax int64 indices)")]
    ResultType {
        /// The type the caller asked for.
        asked: redlab_core::DType,
        /// The results' type.
        results: redlab_core::DType,
    },
    /// A known backend that cannot be used here, and why.
    #[error("{backend}: {reason}")]
    Unavailable {
        /// The backend.
        backend: String,
        /// Why.
        reason: String,
    },
}
