//! What a loaded bundle holds, as data: each skill's version, interface digest and
//! Schema References (role, record kind, schema_uri, version, dialect, digest).
//!
//! The draft's agent serves one Skill Interface Document per skill; operators and tools
//! (`skillbundle inspect`) want the list of what those documents pin without reading
//! them. It is read from the documents [`Bundle::open`] verified, not from the
//! manifest's claims, so what is listed is what an agent would serve.

use crate::agent::Bundle;
use crate::bundle::manifest::{BundleName, ManifestSchema};
use crate::interface::binding::Binding;
use serde::Serialize;

/// The contents of a loaded bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Inventory {
    /// The bundle's name and version.
    pub bundle: BundleName,
    /// In manifest order.
    pub skills: Vec<SkillListing>,
}

/// One skill of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillListing {
    /// `skill_id`, `skill_version`, `interface_digest`.
    #[serde(flatten)]
    pub binding: Binding,
    /// Input, output, then each supporting record in document order: the same identity
    /// the manifest lists for each, read here from the document itself.
    pub schemas: Vec<ManifestSchema>,
}

/// What `bundle` holds.
pub fn of(bundle: &Bundle) -> Inventory {
    let skills = bundle
        .advertised()
        .into_iter()
        .map(|binding| SkillListing {
            schemas: bundle
                .document(&binding.skill_id)
                .map(|d| d.schemas().iter().map(ManifestSchema::of).collect())
                .unwrap_or_default(),
            binding,
        })
        .collect();
    Inventory {
        bundle: BundleName {
            name: bundle.name().to_string(),
            version: bundle.version().to_string(),
        },
        skills,
    }
}
