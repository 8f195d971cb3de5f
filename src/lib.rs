//! skillbundle: the release pipeline for schema-governed A2A skills.
//!
//! A vendor keeps one YAML manifest and a few JSON Schemas per skill; this library reads
//! them strictly, checks them, assembles and digests one Skill Interface Document per
//! skill (draft "schema interfaces", interface version 1.0) and writes a reproducible
//! bundle. It never prints: every check returns [`finding::Finding`]s, and the
//! `skillbundle` binary decides how to show them.
//!
//! The agent side is in the same crate, and the names an agent embeds are re-exported
//! here: [`Bundle::open`] verifies and loads a bundle against [`TrustedKeys`]
//! ([`PublicKey`]s), and the loaded [`Bundle`] serves it (Agent Card entries,
//! describe_skill, the checks on a [`Request`], returning the draft's [`ErrorObject`]s
//! with a [`Condition`]); every check the library runs reports [`Finding`]s with a
//! [`Code`]. With feature `oci`, `Bundle::fetch` loads from a registry (`Source`,
//! `FetchOptions`).
//!
//! The modules follow the draft's concepts and sides: `wire` (the byte forms: JSON, YAML,
//! JSON Pointer, Version String, digest), `fs` (the files the tool opens or replaces),
//! `schema` (governance of one JSON Schema), `interface` (the draft's vocabulary both
//! sides share: Skill Interface Document, Schema Reference, conditions), `crypto`,
//! `card` (the A2A Agent Card), `bundle` (the format), `agent` (a loaded bundle and what
//! it serves), `client` (what a client checks, and with feature `client` the wire
//! client), `registry` (feature `oci`), `build` and `release` (the authoring side),
//! `gateway` (feature `gateway`) and `python` (feature `python`). They are public for
//! the `skillbundle` binary, the tests, the fuzz targets and the Python package, and
//! hidden from the documentation: the re-exports below are the embedding API.
//!
//! An embedder can still reach the modules behind the re-exports; every one but the
//! binary's `gateway` and the extension's `python` is documented item by item all the same. `missing_docs` skips hidden
//! items, so `.ci/run` builds the documentation once more with
//! `RUSTDOCFLAGS="--cfg skillbundle_doc_all -D missing-docs"`, which un-hides them.

// Findings travel on cold error paths only; boxing them would cost clarity, not speed.
#![allow(clippy::result_large_err)]
// The library never prints: findings are data, and the binary renders them.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(missing_docs)]

#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod agent;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod build;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod bundle;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod card;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod client;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod crypto;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod finding;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod fs;
#[cfg(feature = "gateway")]
#[doc(hidden)]
pub mod gateway;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod interface;
#[cfg(feature = "python")]
#[doc(hidden)]
pub mod python;
#[cfg(feature = "oci")]
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod registry;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod release;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod schema;
#[cfg_attr(not(skillbundle_doc_all), doc(hidden))]
pub mod wire;

#[cfg(feature = "oci")]
pub use agent::fetch::{FetchOptions, Source};
pub use agent::{Bundle, Request, SignatureStatus};
pub use crypto::keys::{PublicKey, TrustedKeys};
pub use finding::{Code, Finding, Location, Severity};
pub use interface::condition::{Condition, ErrorObject};
pub use interface::{Document, SchemaReference};
