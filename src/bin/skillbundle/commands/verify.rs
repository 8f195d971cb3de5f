//! `skillbundle verify`: load a bundle exactly as an agent does, and say what vouches
//! for it.

use super::{count, load, unverified_warning, Signature, TrustArgs};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::agent::SignatureStatus;
use skillbundle::finding::Finding;
use skillbundle::interface::binding::Binding;
use std::path::PathBuf;
use std::process::ExitCode;

/// Verify a bundle as an agent loads it: signatures, digests, documents, validators.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle verify dist/example-network-skills-0.1.0.tar.gz --trust keys/release.jwk.json\n  skillbundle verify bundle.tar.gz --trust old.jwk.json --trust new.jwk.json\n  skillbundle verify bundle.tar.gz --allow-unsigned      (development only: says the bundle is unsigned)\n  skillbundle verify oci://registry.example.com/skills/net:0.2.0 --trust keys/trusted.jwks.json\n\nAny failure refuses the whole bundle (exit status 1) with bundle_invalid, digest_mismatch,\nsignature_invalid, untrusted_key, interface_invalid or resource_limit_exceeded."
)]
pub struct Args {
    /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
    bundle: PathBuf,
    #[command(flatten)]
    trust: TrustArgs,
}

/// `verify --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    bundle: BundleId<'a>,
    signature: Signature,
    warnings: Vec<String>,
    skills: Vec<Binding>,
    findings: &'a [Finding],
}

/// A bundle's name and version.
#[derive(Serialize)]
pub struct BundleId<'a> {
    pub name: &'a str,
    pub version: &'a str,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let bundle = match load(format, &args.bundle, &args.trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let skills: Vec<Binding> = bundle.advertised();
    let doc = Report {
        ok: true,
        bundle: BundleId {
            name: bundle.name(),
            version: bundle.version(),
        },
        signature: bundle.signature().into(),
        warnings: unverified_warning(&bundle).into_iter().collect(),
        skills,
        findings: &[],
    };
    let code = render::report(format, &[], &doc, || {
        let first = match bundle.signature() {
            SignatureStatus::Verified { by } => format!(
                "verified {} {}: {}, signed by {}",
                bundle.name(),
                bundle.version(),
                count(doc.skills.len()),
                by.join(", ")
            ),
            status => format!(
                "loaded {} {}: {}, but {status}",
                bundle.name(),
                bundle.version(),
                count(doc.skills.len())
            ),
        };
        let mut lines = vec![first];
        lines.extend(doc.skills.iter().map(super::skill_line));
        lines
    });
    // The process exits next, and the OS takes the memory back at once: freeing every
    // compiled validator one by one first would only delay the exit (about a twentieth
    // of verify's instructions on a bundle of generated skills).
    std::mem::forget(bundle);
    code
}
