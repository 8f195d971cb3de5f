//! The tests that need nothing from outside the repository, one module per area, in one
//! test binary (`autotests = false` in Cargo.toml, as ripgrep does): every module links
//! the library and the shared helpers once, not once per file.
//!
//! CLI behaviour is in trycmd files (tests/cmd/, run by `cli`), outputs are insta
//! snapshots (tests/integration/snapshots/). The tests that need an outside part are the
//! `parts` target (tests/parts/main.rs); the memory bound is its own target
//! (tests/resources.rs), as it measures children whose peak starts from this process's.

#[path = "../common/mod.rs"]
mod common;

mod advice;
mod agent;
mod build;
mod capability_descriptors;
mod card;
mod cli;
mod client;
mod compat;
mod compat_decided;
mod compat_props;
mod compat_soundness;
mod container;
mod error_objects;
mod formats;
// Needs the gateway (`skillbundle serve`) built in.
#[cfg(feature = "gateway")]
mod gateway_hostile;
#[cfg(feature = "gateway")]
mod gateway_keeper;
#[cfg(feature = "gateway")]
mod gateway_support;
mod governance;
mod hostile;
mod init;
mod jcs_vectors;
mod jsts;
mod layering;
mod ledger;
mod lying_registry;
mod man;
mod nothing_dropped;
mod nothing_lost;
mod output;
mod output_hygiene;
mod parallel;
mod readme;
mod refusals;
mod release_files;
mod release_output;
mod shared_schemas;
mod targets;
