//! Every file the tool opens on an operator's say-so or replaces: bounded reads that
//! never block on a FIFO, replacement by rename so that nothing is lost on failure, and
//! the workspace's source files that findings point into.
//!
//! The draft's "Security Considerations" (resource limits) bound what an implementation
//! reads; these are the two places where the library touches a path it was handed.

pub mod atomic_file;
pub mod operator_file;
pub mod sandbox;
pub mod source_file;
