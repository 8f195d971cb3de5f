//! skillbundle: the release pipeline for schema-governed A2A skills.

pub mod digest;
pub mod finding;
pub mod json;
pub mod pointer;
pub mod version;
pub mod yaml;
