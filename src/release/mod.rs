//! The draft's evolution rules: what a new build may publish, given what was published.
//!
//! Draft "Schema Evolution and Compatibility": a published schema version and digest are
//! immutable, a change that is not backward compatible increments MAJOR, a compatible
//! one MINOR. The ledger (`skillbundle.lock`) remembers what was published, the
//! compatibility checker decides whether one schema accepts what another did, and the
//! rules turn both into a gate: [`rules`] (run by `check` and `build`) on top of
//! [`skill_diff`] and [`step`], [`lock_update`] for what `build` records, [`diff`] for
//! `skillbundle diff`.

pub mod candidate;
pub mod compat;
pub mod diff;
pub mod ledger;
pub mod lock_update;
pub mod rules;
pub mod skill_diff;
pub mod step;
