//! A previously published bundle as the release rules' baseline (`check --previous`,
//! `build --previous`, and a bundle side of `diff`).
//!
//! The draft's evolution rules ([`crate::release::rules`]) compare what is published now with what was published
//! before ("Schema Evolution and Compatibility": a published schema version and digest are
//! immutable). The rules take a ledger ([`crate::release::ledger::Ledger`]); reading one
//! out of a bundle means opening the bundle as an agent does ([`crate::agent::Bundle`]),
//! which is the build's business, not the rules': this module is where the two meet.

use crate::agent::Bundle;
use crate::bundle;
use crate::crypto::keys::TrustedKeys;
use crate::finding::{Code, Finding};
use crate::release::ledger::Ledger;
use std::path::Path;

/// Read a bundle and the ledger entries it publishes, after checking its integrity.
pub fn read_bundle(path: &Path) -> Result<Ledger, Vec<Finding>> {
    // Loaded exactly as an agent loads it: every file digest, every document against the
    // packaged schema, every inline-schema and interface digest, the same schema
    // governance. Signatures are checked when present against no trusted key, so this
    // establishes integrity, not authenticity: the vendor's own earlier release is the
    // baseline, whoever signed it.
    // Findings name entries as `BUNDLE/entry`, so it is clear which bundle they are in.
    let bundle = Bundle::open_path(path, &TrustedKeys::allow_unsigned())?;
    let mut ledger = Ledger::default();
    let mut findings = Vec::new();
    for advertised in bundle.advertised() {
        let Some(document) = bundle.document(&advertised.skill_id) else {
            continue;
        };
        if let Err(e) = ledger.add_document(document) {
            findings.push(Finding::at_file(
                Code::BundleInvalid,
                format!("{}: {e}", bundle::interface_path(&advertised.skill_id)),
                path,
            ));
        }
    }
    if findings.is_empty() {
        Ok(ledger)
    } else {
        Err(findings)
    }
}
