//! skillbundle: the release pipeline for schema-governed A2A skills.

pub mod finding;
pub mod schema;
