//! The worker threads `Bundle.open` loads skills on, and why they survive `os.fork()`.
//!
//! [`crate::bundle`] loads a bundle's skills in parallel on rayon. rayon's global pool
//! starts its threads once per process; a child forked from a process whose pool already
//! ran (a preloading gunicorn master, multiprocessing's `fork` start method) inherits the
//! pool's state but none of its threads, and its first parallel call waits forever for
//! workers that do not exist. So the Python module never uses the global pool: parallel
//! work runs in a pool of its own, remembered with the id of the process that built it.
//! A process that finds a pool built by another process (its parent) builds a fresh one
//! and leaves the inherited one alone: dropping it would signal threads that are not
//! there. When no thread can be started, the caller gets the reason, not a hang.

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyErr;
use rayon::ThreadPool;
use std::sync::{Arc, Mutex};

/// The pool and the id of the process that built it. The lock is held only to read or
/// replace the slot, never while work runs.
static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// The pool's threads could not be started (the operating system's reason).
#[derive(Debug, thiserror::Error)]
#[error("the threads that load a bundle could not be started: {0}")]
pub struct PoolUnavailable(#[from] rayon::ThreadPoolBuildError);

/// Python sees a pool that cannot start as a `RuntimeError`.
impl From<PoolUnavailable> for PyErr {
    fn from(e: PoolUnavailable) -> PyErr {
        PyRuntimeError::new_err(e.to_string())
    }
}

/// Run `work` inside this process's pool (its `rayon::scope`s and parallel iterators run
/// on that pool's threads). `Err` says why the pool could not be started.
pub fn install<R: Send>(work: impl FnOnce() -> R + Send) -> Result<R, PoolUnavailable> {
    Ok(current()?.install(work))
}

fn current() -> Result<Arc<ThreadPool>, PoolUnavailable> {
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((owner, pool)) = slot.as_ref() {
        if *owner == pid {
            return Ok(Arc::clone(pool));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("skillbundle-{i}"))
        .build()
        .map(Arc::new)?;
    if let Some(inherited) = slot.replace((pid, Arc::clone(&pool))) {
        // Built by the parent process: its threads do not exist here.
        std::mem::forget(inherited);
    }
    Ok(pool)
}
