//! The packaged v1.0 Skill Interface Schema, integrity-checked before first use.
//!
//! The draft requires both the remote agent and the client to "integrity-check the packaged
//! Skill Interface Schema before using it", and forbids local variations. So the schema is
//! embedded in the binary, its digest is pinned here in the code, and [`InterfaceSchema::new`]
//! refuses any copy whose JCS digest differs from the pin — a modified schema can never
//! silently validate documents.

use crate::finding::{Code, Finding, Location};
use crate::wire::digest::Digest;
use serde_json::Value;
use std::sync::OnceLock;

/// The packaged schema, as shipped in `schemas/skill-interface-v1.json`.
pub const PACKAGED: &[u8] = include_bytes!("../../schemas/skill-interface-v1.json");

/// The pinned digest of the packaged schema (JCS + SHA-256).
pub const PINNED_DIGEST: &str =
    "sha256:c49214ca4c873322de1320bc3f32601db1e59854f61ea6f22f6504ab7ca20e96";

/// The interface version this schema defines.
pub const INTERFACE_VERSION: &str = "1.0";

/// One way a document fails the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer into the document.
    pub instance_path: String,
    /// JSON Pointer into the Skill Interface Schema.
    pub schema_path: String,
    /// The failing keyword.
    pub keyword: String,
    /// The validator's message.
    pub message: String,
}

/// Why a copy of the Skill Interface Schema was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IntegrityError {
    /// The bytes are not I-JSON.
    #[error("the Skill Interface Schema is not valid JSON: {0}")]
    NotJson(crate::wire::json::JsonError),
    /// The JCS digest is not [`PINNED_DIGEST`].
    #[error("the Skill Interface Schema failed its integrity check: digest {found}, expected {PINNED_DIGEST}")]
    DigestMismatch {
        /// The digest of the refused copy.
        found: Digest,
    },
    /// The schema has the pinned digest but does not compile (the validator's reason).
    #[error("the Skill Interface Schema does not compile: {0}")]
    DoesNotCompile(String),
}

/// The draft's condition for an unusable packaged schema: nothing can be validated, so
/// every interface counts as invalid (`interface_invalid`), with no location of its own.
impl From<&IntegrityError> for Finding {
    fn from(e: &IntegrityError) -> Finding {
        Finding::new(Code::InterfaceInvalid, e.to_string(), Location::default())
    }
}

/// A verified, compiled Skill Interface Schema.
pub struct InterfaceSchema {
    digest: Digest,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for InterfaceSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterfaceSchema")
            .field("digest", &self.digest)
            .finish()
    }
}

impl InterfaceSchema {
    /// Check `bytes` against the pinned digest, then compile it. Any difference — even
    /// one that leaves the schema valid — is refused.
    pub fn new(bytes: &[u8]) -> Result<InterfaceSchema, IntegrityError> {
        let value = crate::wire::json::parse(bytes).map_err(IntegrityError::NotJson)?;
        let digest = Digest::of_value(&value);
        if digest.as_str() != PINNED_DIGEST {
            return Err(IntegrityError::DigestMismatch { found: digest });
        }
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .offline()
            .build(&value)
            .map_err(|e| IntegrityError::DoesNotCompile(e.to_string()))?;
        Ok(InterfaceSchema { digest, validator })
    }

    /// The packaged schema, verified and compiled once per process.
    pub fn packaged() -> Result<&'static InterfaceSchema, IntegrityError> {
        static CELL: OnceLock<Result<InterfaceSchema, IntegrityError>> = OnceLock::new();
        CELL.get_or_init(|| InterfaceSchema::new(PACKAGED))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The digest of the schema (recorded in every bundle manifest).
    pub fn digest(&self) -> &Digest {
        &self.digest
    }

    /// Every way `document` fails the schema; empty when it conforms.
    pub fn validate(&self, document: &Value) -> Vec<SchemaViolation> {
        self.validator
            .iter_errors(document)
            .map(|e| SchemaViolation {
                instance_path: e.instance_path().to_string(),
                schema_path: e.schema_path().to_string(),
                keyword: e.kind().keyword().to_string(),
                message: e.to_string(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packaged_schema_passes_its_integrity_check() {
        let schema = InterfaceSchema::packaged().unwrap();
        assert_eq!(schema.digest().as_str(), PINNED_DIGEST);
    }

    #[test]
    fn a_modified_copy_is_refused() {
        let text = std::str::from_utf8(PACKAGED).unwrap();
        // Loosen one pattern: still a valid schema, but not the standard one.
        let modified = text.replacen("\"minLength\": 1", "\"minLength\": 0", 1);
        assert_ne!(modified, text);
        let err = InterfaceSchema::new(modified.as_bytes()).unwrap_err();
        assert!(
            matches!(err, IntegrityError::DigestMismatch { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("integrity check"), "{err}");
        // Whitespace and member order are not modifications: the digest is over JCS.
        let reformatted = serde_json::to_vec(&crate::wire::json::parse(PACKAGED).unwrap()).unwrap();
        assert!(InterfaceSchema::new(&reformatted).is_ok());
    }
}
