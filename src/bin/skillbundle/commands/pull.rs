//! `skillbundle pull`, and `oci://` references wherever a bundle path is taken.
//!
//! Kept apart from `main.rs` so the command can move with the rest of the per-command
//! handlers. All the checking is the library's ([`skillbundle::registry`],
//! [`skillbundle::agent::fetch`]); this file writes the verified file and renders.

use super::{fail_with, BundleSummary, Signature, TrustArgs};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::agent::fetch::{self, FetchOptions, Source};
use skillbundle::agent::{Bundle, TrustedKeys};
use skillbundle::finding::{Code, Finding};
use skillbundle::registry::{self, ArtifactRef};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The help shown under `skillbundle pull --help`.
const AFTER_HELP: &str = "Examples:\n  skillbundle pull oci://registry.example.com/skills/net:0.2.0 --trust keys/release.jwk.json --out bundles/\n  skillbundle pull registry.example.com/skills/net@sha256:DIGEST --trust keys/trusted.jwks.json --out bundles/\n  skillbundle pull oci://localhost:5000/skills/net:stable --trust k.jwk.json --out b/ --state /var/lib/agent/skills --plain-http\n\nThe manifest's artifact type (artifactType, or config.mediaType in the OCI 1.0 form ORAS writes),\nmedia types and sizes are checked before the layer is downloaded; the\nlayer's digest is checked as it streams; then the bundle is verified exactly as `verify` does. Only\nthen is DIR/<name>-<version>.tar.gz written (atomically): on any failure nothing is written.\nWith --state DIR, a bundle older than the highest version already accepted there, another bundle\nname under the same registry/repository, or other content for an accepted version is refused\n(rollback_refused; --allow-rollback overrides), and the state records what was accepted. The\nwhole pull has a deadline (--timeout 120s; --connect-timeout 10s, --read-timeout 30s). --trust takes a JWK, a PEM, or a\nJWK Set ({\"keys\": [...]}) holding the keys of a rotation.\n\nWith --require-referrer-signature, the bundle is accepted only if the registry also lists its\nsignature as an OCI referrer of the pulled manifest (as `push` publishes it: artifactType\napplication/vnd.skillbundle.signature.v1), found through the referrers API or, on a registry\nwithout one, the sha256-<hex> tag, and signed by a --trust key over this bundle\n(referrer_signature_missing otherwise). The signature inside the bundle is checked either way.";

/// `pull --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    bundle: BundleSummary<'a>,
    pinned: &'a str,
    previous_version: Option<&'a str>,
    signature: Signature,
    written: &'a Path,
    findings: &'a [Finding],
}

/// Pull a bundle from an OCI registry, verify it, and write it only if all passed.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// [oci://]REGISTRY/REPOSITORY:TAG or [oci://]REGISTRY/REPOSITORY@sha256:DIGEST.
    reference: String,
    /// The directory to write <name>-<version>.tar.gz into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// An agent state directory: refuse a bundle older than the highest version it
    /// records, another bundle under the same registry/repository, or other content for
    /// a version already accepted (rollback_refused); record what was accepted.
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// With --state: accept what rollback_refused would refuse, and record it as the
    /// highest (an operator's deliberate downgrade or switch).
    #[arg(long, requires = "state")]
    allow_rollback: bool,
    /// Also require the bundle's signature as an OCI referrer of its manifest (as `push`
    /// publishes it), signed by a --trust key over this very bundle: found through the
    /// registry's referrers API, or the sha256-<hex> tag where it has none.
    #[arg(long)]
    require_referrer_signature: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let options = FetchOptions {
        registry: args.trust.registry_options(),
        allow_rollback: args.allow_rollback,
        require_referrer_signature: args.require_referrer_signature,
        max_age: args.trust.max_age,
    };
    pull(
        format,
        &args.reference,
        &args.trust.keys(),
        &args.out,
        args.state.as_deref(),
        &options,
    )
}

/// If `text` is an `oci://` reference, pull and open it (nothing is written).
pub fn open_reference(
    text: &str,
    trust: &TrustedKeys,
    options: &FetchOptions,
) -> Option<Result<Bundle, Vec<Finding>>> {
    registry::strip_scheme(text)?;
    Some(pull_and_open(text, trust, options).map(|verified| verified.bundle))
}

fn pull_and_open(
    text: &str,
    trust: &TrustedKeys,
    options: &FetchOptions,
) -> Result<fetch::Verified, Vec<Finding>> {
    let reference = ArtifactRef::parse(text).map_err(|f| vec![f])?;
    registry::block_on(fetch::pull_verified(&reference, trust, options)).map_err(|f| vec![f])?
}

/// Pull `reference`, verify it, and write it into `out`.
fn pull(
    format: Format,
    reference: &str,
    trust: &TrustedKeys,
    out: &Path,
    state: Option<&Path>,
    options: &FetchOptions,
) -> ExitCode {
    let nothing = "the bundle was refused; nothing was written";
    let (bundle, bytes, pinned, previous) = match state {
        None => match pull_and_open(reference, trust, options) {
            Ok(fetch::Verified {
                bundle,
                bytes,
                pinned,
                ..
            }) => (bundle, bytes, pinned, None),
            Err(findings) => return fail_with(format, &findings, nothing),
        },
        Some(dir) => {
            match fetch::fetch(reference, trust, dir, options) {
                Ok(fetch::Fetched {
                    source: Source::Registry { pinned, previous },
                    bundle,
                    file,
                }) => match std::fs::read(&file) {
                    Ok(bytes) => (bundle, bytes, pinned, previous),
                    Err(e) => {
                        let f = Finding::at_file(
                            Code::Io,
                            format!("cannot read back the bundle kept in the state directory: {e}"),
                            &file,
                        );
                        return fail_with(format, &[f], "nothing was written");
                    }
                },
                // The last good bundle is what an agent would run on; `pull` reports the
                // refusal instead, and writes nothing.
                Ok(fetch::Fetched {
                    source: Source::LastGood { refused, .. },
                    bundle,
                    ..
                }) => {
                    let outcome = format!(
                        "the registry's bundle was refused; nothing was written (the state directory keeps {} {} as the last good bundle)",
                        bundle.name(),
                        bundle.version()
                    );
                    return fail_with(format, &refused, &outcome);
                }
                Err(findings) => return fail_with(format, &findings, nothing),
            }
        }
    };
    // The name and version passed the builder's rules when the bundle was opened; the
    // write still takes one file name component only, and lands inside --out or nowhere.
    let name = skillbundle::build::manifest::archive_file_name(bundle.name(), bundle.version());
    let dest = match skillbundle::fs::atomic_file::replace_in(out, &name, ".pull-", |f| {
        f.write_all(&bytes)
    }) {
        Ok(dest) => dest,
        Err(e) => {
            let f = Finding::at_file(Code::Io, format!("cannot write the bundle: {e}"), out);
            return fail_with(format, &[f], "nothing was written");
        }
    };
    let doc = Report {
        ok: true,
        bundle: BundleSummary {
            name: bundle.name(),
            version: bundle.version(),
            skills: bundle.skill_ids().count(),
        },
        pinned: &pinned,
        previous_version: previous.as_deref(),
        signature: bundle.signature().into(),
        written: &dest,
        findings: &[],
    };
    render::report(format, &[], &doc, || {
        vec![
            format!(
                "pulled {} {} ({} skills), {}",
                bundle.name(),
                bundle.version(),
                bundle.skill_ids().count(),
                bundle.signature()
            ),
            format!("  from {pinned}"),
            format!("  wrote {}", dest.display()),
        ]
    })
}
