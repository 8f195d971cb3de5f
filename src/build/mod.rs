//! The authoring side: a vendor's workspace in, checked skills and a bundle out.
//!
//! Draft "Schema Publication and Packaging", Vendor release artifacts: a release
//! pipeline should "validate all schemas; test representative inputs and outputs against
//! them; assign stable schema URIs and versions; compute schema digests" and, when it
//! publishes a bundle, "produce a bundle manifest". The manifests and workspace are read here, the pipeline
//! runs every check, and the scaffold makes a new workspace that passes them.

pub mod checked_skill;
pub mod examples;
pub mod manifest;
pub mod pipeline;
pub mod previous_bundle;
pub mod release_statement;
pub mod scaffold;
pub mod shared_schemas;
pub mod workspace;
