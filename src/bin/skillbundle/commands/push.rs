//! `skillbundle push`: publish a verified bundle to an OCI registry.
//!
//! Kept apart from `main.rs` so the command can move with the rest of the per-command
//! handlers; it only parses nothing, calls the library and renders.

use super::{fail_with, BundleSummary, TrustArgs};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::agent::{Bundle, TrustedKeys};
use skillbundle::bundle;
use skillbundle::finding::Finding;
use skillbundle::registry::referrers;
use skillbundle::registry::{self, ArtifactRef, BundleInfo, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The help shown under `skillbundle push --help`.
const AFTER_HELP: &str = "Examples:\n  skillbundle push dist/net-skills-0.2.0.tar.gz registry.example.com/skills/net:0.2.0 --trust keys/release.jwk.json\n  skillbundle push dist/net-skills-0.2.0.tar.gz localhost:5000/skills/net:0.2.0 --trust keys/release.jwk.json --plain-http\n\nThe bundle is verified first (signed by a --trust key unless --allow-unsigned), then pushed as an OCI 1.1\nartifact: artifactType application/vnd.skillbundle.bundle.v1, the empty config, one layer that is the\n.tar.gz byte for byte, and annotations (title, version, created from SOURCE_DATE_EPOCH, bundle name,\nskill count). Pushing the same bundle twice gives the same digest. A tag that names a release version\nis never moved to other content (tag_immutable) unless --force; other tags (latest, stable) move.\nCredentials: REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json, or ~/.docker/config.json\n(as written by `docker login` / `skopeo login`). Prints REGISTRY/REPOSITORY:TAG@sha256:DIGEST.\n\nA release statement beside the bundle (NAME-VERSION.release.json, written by `build --expires`; or\n--release FILE) is checked and carried in the manifest (annotation io.skillbundle.release); a\nrelease-version tag moves without --force to a manifest of the same bundle with a newer statement.\n\nA signed bundle's signature is also pushed as an OCI referrer of that manifest (artifactType\napplication/vnd.skillbundle.signature.v1, one application/jose+json layer: the manifest's detached\nJWS), so `oras discover` and policy engines see it. A registry without the referrers API (CNCF\nDistribution 2.8) gets it listed under the tag sha256-<hex of the manifest digest> instead (the\ndistribution spec's referrers tag schema). `pull --require-referrer-signature` checks it.";

/// `push --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    bundle: BundleSummary<'a>,
    reference: &'a str,
    digest: &'a str,
    unchanged: bool,
    moved: bool,
    /// The signature pushed as an OCI referrer of the manifest (`null` when unsigned).
    referrer: Option<Referrer<'a>>,
    findings: &'a [Finding],
}

#[derive(Serialize)]
struct Referrer<'a> {
    digest: &'a str,
    artifact_type: &'a str,
    /// The referrers tag schema's tag this push listed it under, when the registry
    /// has no referrers API (`null` when the registry lists it).
    fallback_tag: Option<&'a str>,
}

/// Verify a bundle and push it to an OCI registry as a skillbundle artifact.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The bundle (.tar.gz).
    bundle: PathBuf,
    /// Where to push: [oci://]REGISTRY/REPOSITORY:TAG.
    reference: String,
    /// Move a tag that names a release version even if it points to other content.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    push(
        format,
        &args.bundle,
        &args.reference,
        &args.trust,
        args.force,
    )
}

/// Verify `path` (and its release statement, if it has one) and push it to `reference`.
fn push(
    format: Format,
    path: &Path,
    reference: &str,
    trust_args: &TrustArgs,
    force: bool,
) -> ExitCode {
    let trust: &TrustedKeys = &trust_args.keys();
    let options: &Options = &trust_args.registry_options();
    let nothing = "nothing was pushed";
    let limit = bundle::archive::ReadLimits::default().max_total_bytes;
    let bytes = match bundle::read_file(path, limit) {
        Ok(bytes) => bytes,
        Err(f) => return fail_with(format, &[f], nothing),
    };
    let loaded = match Bundle::open(&bytes, trust) {
        Ok(b) => b,
        Err(mut findings) => {
            for f in &mut findings {
                f.location.file.get_or_insert_with(|| path.to_path_buf());
            }
            return fail_with(
                format,
                &findings,
                "the bundle was refused; nothing was pushed",
            );
        }
    };
    // A release statement beside the bundle (or --release) is checked like an agent
    // would, then travels in the manifest.
    let release = match super::check_release_beside(path, &bytes, &loaded, trust_args) {
        Ok(release) => release,
        Err(findings) => return fail_with(format, &findings, nothing),
    };
    let target = match ArtifactRef::parse(reference) {
        Ok(r) => r,
        Err(f) => return fail_with(format, &[f], nothing),
    };
    let info = BundleInfo {
        name: loaded.name().to_string(),
        version: loaded.version().to_string(),
        skills: loaded.skill_ids().count(),
    };
    let pushed = registry::block_on(registry::push_with_release(
        &bytes,
        &info,
        release.as_deref(),
        &target,
        options,
        force,
    ))
    .and_then(|r| r);
    let pushed = match pushed {
        Ok(p) => p,
        Err(f) => return fail_with(format, &[f], nothing),
    };
    // The signature beside it, as an OCI referrer other tools can list.
    let referrer = registry::block_on(referrers::push_signature(
        &bytes,
        &info,
        release.as_deref(),
        &target,
        options,
    ))
    .and_then(|r| r);
    let referrer = match referrer {
        Ok(r) => r,
        Err(f) => {
            let outcome = format!(
                "{} was pushed, but its signature referrer was not",
                pushed.reference
            );
            return fail_with(format, &[f], &outcome);
        }
    };
    let doc = Report {
        ok: true,
        bundle: BundleSummary {
            name: &info.name,
            version: &info.version,
            skills: info.skills,
        },
        reference: &pushed.reference,
        digest: &pushed.digest,
        unchanged: pushed.unchanged,
        moved: pushed.moved,
        referrer: referrer.as_ref().map(|r| Referrer {
            digest: &r.digest,
            artifact_type: referrers::SIGNATURE_ARTIFACT_TYPE,
            fallback_tag: r.fallback_tag.as_deref(),
        }),
        findings: &[],
    };
    render::report(format, &[], &doc, || {
        let how = if pushed.unchanged {
            "already there, unchanged"
        } else if pushed.moved {
            "pushed; the tag was moved from other content"
        } else {
            "pushed"
        };
        let mut lines = vec![
            pushed.reference.clone(),
            format!(
                "  {} {} ({} skills): {how}",
                info.name, info.version, info.skills
            ),
        ];
        lines.push(match &referrer {
            None => "  unsigned: no signature referrer".to_string(),
            Some(r) => match &r.fallback_tag {
                None => format!("  signature referrer {} (already listed by the registry)", r.digest),
                Some(tag) => format!(
                    "  signature referrer {} (listed under the referrers tag {tag}: the registry has no referrers API)",
                    r.digest
                ),
            },
        });
        lines
    })
}
