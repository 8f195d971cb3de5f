//! Does a declared property name match a `patternProperties` pattern? The comparison
//! needs the answer to know which schema governed a property before it was declared (or
//! governs it after it was removed). It is asked of the same regular-expression engine,
//! with the same options, that validates instances (through [`crate::schema::govern`], so a
//! pattern past the limits is never compiled), and the answer is the one the tool gives
//! at run time; a pattern that is refused leaves the question undecided.

use crate::schema::{govern_alone, validator::Validator};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Compiled patterns, one per pattern string (`None` when it does not compile).
#[derive(Default)]
pub(super) struct Patterns {
    compiled: HashMap<String, Option<Validator>>,
}

impl Patterns {
    /// Whether `name` matches `pattern`; `None` when the pattern does not compile.
    pub(super) fn matches(&mut self, pattern: &str, name: &str) -> Option<bool> {
        let v = self
            .compiled
            .entry(pattern.to_owned())
            .or_insert_with(|| govern_alone(&json!({ "pattern": pattern })).ok());
        v.as_ref()
            .map(|v| v.is_valid(&Value::String(name.to_owned())))
    }
}
