//! Keys and signatures: Ed25519 keys as JWK and PEM, and the detached-payload JWS that
//! signs bundles, release statements, Agent Cards and release files.
//!
//! The draft asks publishers to "sign or otherwise integrity-protect any published schema
//! bundle" (draft "Schema Publication and Packaging", Vendor release artifacts) and
//! clients to apply "policy for trusted publishers" ("Security Considerations", Schema
//! trust); this folder is the one implementation of both sides.

pub mod jws;
pub mod keys;
pub mod release_files;
