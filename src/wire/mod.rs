//! The wire forms: how JSON, YAML, JSON Pointers, Version Strings, digests and packed
//! schemas are read and written, with no file and no network.
//!
//! Everything the draft digests or compares goes through here once: a Version String is
//! two dot-separated decimals (draft "Terminology", Version String), a digest is
//! `sha256:` over the RFC 8785 (JCS) bytes of a value (draft "Schema Reference", and
//! "Skill Interface Document Digest"), and a value is read strictly (duplicate members
//! and lone surrogates refused) so that what is digested is what was sent.

pub mod digest;
pub mod json;
pub mod pointer;
pub mod schema_bytes;
pub mod version;
pub mod yaml;
