//! The draft's evolution rules: what a new build may publish, given what was published.
//!
//! Draft "Schema Evolution and Compatibility": a published schema version and digest are
//! immutable, a change that is not backward compatible increments MAJOR, a compatible
//! one MINOR. The ledger (`skillbundle.lock`) remembers what was published, the
//! compatibility checker decides whether one schema accepts what another did, and the
//! evolution rules turn both into a gate.

pub mod candidate;
pub mod compat;
pub mod evolution;
pub mod ledger;
