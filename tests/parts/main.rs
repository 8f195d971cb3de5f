//! The tests that need a part from outside the repository (the CNCF Distribution
//! registry, skopeo, the ORAS client, the Python environment, GNU tar, Python's
//! `tarfile`, actionlint, jq, openssl, the @a2a-js/sdk packages), one module per area,
//! in one `harness = false` test binary: the harness (harness.rs) reports a test whose
//! part is missing as ignored with the reason, or fails it under `CI=true`.
//! `scripts/test-parts` installs the parts.

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod canonical;
mod gateway;
mod openssl;
mod python;
#[cfg(feature = "oci")]
mod registry;
mod workflows;

fn main() {
    harness::run(
        [
            canonical::tests(),
            gateway::tests(),
            openssl::tests(),
            python::tests(),
            #[cfg(feature = "oci")]
            registry::tests(),
            workflows::tests(),
        ]
        .into_iter()
        .flatten()
        .collect(),
    )
}
