//! When a call into the library lets go of the GIL. Releasing it lets the agent's other
//! Python threads run while Rust checks a large value; for the few hundred bytes of a
//! skill request or a record, releasing and taking it back costs more than the check, and
//! on an agent's request path every microsecond of its own is one the caller waits for.

use pyo3::prelude::*;

/// Work on data from this size on (in bytes) runs with the GIL released, so that the
/// agent's other threads run meanwhile; smaller data (a skill request, a record: a few
/// hundred bytes) is checked in less time than releasing and taking back the GIL costs.
pub const DETACH_FROM_BYTES: usize = 16 * 1024;

/// Run `work`, on data of `size` bytes, with the GIL released when the data is large
/// ([`DETACH_FROM_BYTES`]).
pub fn detach_if_large<T, F>(py: Python<'_>, size: usize, work: F) -> T
where
    F: pyo3::marker::Ungil + FnOnce() -> T,
    T: pyo3::marker::Ungil,
{
    if size < DETACH_FROM_BYTES {
        work()
    } else {
        py.detach(work)
    }
}
