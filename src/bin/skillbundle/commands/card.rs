//! `skillbundle card` and `skillbundle verify-card`: the Agent Card a bundle's agent
//! serves, merged into a base card and signed, and the check of a signed card.
//!
//! Findings about a base card point at the file, the JSON Pointer of the member and its
//! line and column, one per problem, so a vendor fixes them all in one pass.

use super::{load, public_key, signing_key, TrustArgs};
use crate::output;
use crate::render::{self, Format};
use serde::Serialize;
use serde_json::Value;
use skillbundle::card::a2a;
use skillbundle::card::signature;
use skillbundle::crypto::jws::JwsError;
use skillbundle::crypto::keys::{PublicKey, SigningKeyPair};
use skillbundle::finding::{Code, Finding, Location};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Print the Agent Card fragment of a verified bundle, or merge it into a base card.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json --base agent-card.json > card.json\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json --base agent-card.json --sign-key keys/card.key\n\nWith --base, the base is checked as A2A 1.0 defines AgentCard (one finding per problem, with its pointer),\nthe extension is appended to capabilities.extensions and the skills (describe_skill included) to skills.\nA base entry for a bundle skill is merged into the bundle's: it may add members the bundle leaves unset\n(securityRequirements), a conflicting member is refused. A base carrying signatures is refused (they would\nbe stale) unless --sign-key is given: then they are dropped, and the merged card is signed in the canonical\nform a2a-sdk verifies (see verify-card)."
)]
pub struct Args {
    /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
    bundle: PathBuf,
    /// A base A2A 1.0 AgentCard (JSON) to merge the fragment into.
    #[arg(long, value_name = "FILE")]
    base: Option<PathBuf>,
    /// Sign the merged card (A2A AgentCardSignature) with this Ed25519 private key
    /// (PKCS#8 PEM); repeatable. Needs --base. The base card's own signatures are dropped.
    #[arg(long = "sign-key", value_name = "KEY", value_parser = signing_key, requires = "base")]
    sign_key: Vec<SigningKeyPair>,
    #[command(flatten)]
    trust: TrustArgs,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    card(
        format,
        &args.bundle,
        args.base.as_deref(),
        &args.trust,
        &args.sign_key,
    )
}

/// Verify an Agent Card's signatures (A2A AgentCardSignature) against trusted keys.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle verify-card card.json --trust keys/card.jwk.json\n  skillbundle verify-card card.json --trust old.jwk.json --trust new.jwk.json\n\nThe card must be an A2A 1.0 AgentCard (card_invalid otherwise). Each signature is a JWS whose detached\npayload is the canonical card: without `signatures`, in protobuf-JSON form (camelCase names, members at\ntheir proto3 default omitted, then every null, empty string, empty list and empty object removed), as\nRFC 8785 (JCS) bytes: the form a2a-sdk signs and verifies. At least one signature by a trusted key must\nverify and none by a trusted key may fail: otherwise signature_invalid (a stale or altered card) or\nuntrusted_key."
)]
pub struct VerifyArgs {
    /// The Agent Card (JSON).
    card: PathBuf,
    /// A public key trusted to sign the card: a JWK or an SPKI PEM file. Repeatable.
    #[arg(long = "trust", value_name = "KEY", value_parser = public_key, required = true)]
    trust: Vec<PublicKey>,
}

pub fn run_verify(format: Format, args: VerifyArgs) -> ExitCode {
    verify_card(format, &args.card, &args.trust)
}

fn fail(format: Format, findings: Vec<Finding>, what: &str) -> ExitCode {
    super::fail_with(format, &findings, what)
}

/// `card verify --format json`.
#[derive(Serialize)]
struct Verified<'a> {
    ok: bool,
    signed_by: &'a [String],
    findings: &'a [Finding],
}

/// Read a JSON file strictly, keeping its bytes for locating pointers.
fn read(path: &Path) -> Result<(Value, Vec<u8>), Finding> {
    let bytes = super::read_operator_file(path)?;
    let value = skillbundle::wire::json::parse(&bytes).map_err(|e| e.into_finding(path))?;
    Ok((value, bytes))
}

fn located(code: Code, message: String, path: &Path, bytes: &[u8], pointer: &str) -> Finding {
    let mut location = Location::file(path).with_pointer(pointer);
    if let Some((line, column)) = skillbundle::wire::json::locate(bytes, pointer) {
        location = location.with_position(line, column);
    }
    Finding::new(code, message, location)
}

/// `card BUNDLE --trust … [--base FILE] [--sign-key KEY]…`.
fn card(
    format: Format,
    path: &Path,
    base: Option<&Path>,
    trust: &TrustArgs,
    sign_keys: &[SigningKeyPair],
) -> ExitCode {
    let bundle = match load(format, path, trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let Some(base) = base else {
        if !sign_keys.is_empty() {
            let f = Finding::new(
                Code::CardInvalid,
                "--sign-key signs a complete Agent Card: give the base card with --base (the fragment alone is not a card)",
                Location::default(),
            );
            return fail(format, vec![f], "no card was printed");
        }
        output::json(bundle.card_fragment());
        return ExitCode::SUCCESS;
    };
    let (mut base_card, bytes) = match read(base) {
        Ok(v) => v,
        Err(f) => return fail(format, vec![f], "no card was printed"),
    };
    // The base's signatures cover its old content: with --sign-key they are dropped and
    // the merged card is signed anew; without, the merge refuses them.
    let mut dropped = 0;
    if !sign_keys.is_empty() {
        if let Some(members) = base_card.as_object_mut() {
            dropped = members
                .remove("signatures")
                .and_then(|s| s.as_array().map(Vec::len))
                .unwrap_or(0);
        }
    }
    let merged = match a2a::merge_card(&base_card, bundle.extension(), bundle.agent_skills()) {
        Ok(card) => card,
        Err(e) => {
            let code = Code::from(&e);
            let findings = match e {
                a2a::CardError::NotACard(problems) => problems
                    .into_iter()
                    .map(|p| located(code, p.message, base, &bytes, &p.pointer))
                    .collect(),
                e @ a2a::CardError::StaleSignatures => {
                    vec![located(code, e.to_string(), base, &bytes, "/signatures")]
                }
                e => vec![Finding::at_file(code, e.to_string(), base)],
            };
            return fail(format, findings, "no card was printed");
        }
    };
    let card = signature::sign(&merged, sign_keys);
    if dropped > 0 {
        render::warn(
            format,
            &format!(
                "dropped the base card's {dropped} signature{} (they covered its old content); the merged card is signed by {}",
                if dropped == 1 { "" } else { "s" },
                sign_keys
                    .iter()
                    .map(|k| k.public_key().kid().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    output::json(&card);
    ExitCode::SUCCESS
}

/// `verify-card CARD --trust KEY…`.
fn verify_card(format: Format, path: &Path, trust: &[PublicKey]) -> ExitCode {
    let (card, bytes) = match read(path) {
        Ok(v) => v,
        Err(f) => return fail(format, vec![f], "the card was not verified"),
    };
    let problems = skillbundle::card::agent_card::check(&card);
    if !problems.is_empty() {
        let findings = problems
            .into_iter()
            .map(|p| located(Code::CardInvalid, p.message, path, &bytes, &p.pointer))
            .collect();
        return fail(format, findings, "the card was not verified");
    }
    match signature::verify(&card, trust) {
        Ok(by) => {
            let by: Vec<String> = by.into_iter().map(|k| k.0).collect();
            let doc = Verified {
                ok: true,
                signed_by: &by,
                findings: &[],
            };
            render::report(format, &[], &doc, || {
                vec![format!(
                    "verified: the Agent Card is signed by {}",
                    by.join(", ")
                )]
            })
        }
        Err(e) => {
            let message = match e {
                JwsError::NoSignatures => "the Agent Card has no signatures".to_string(),
                JwsError::SignatureInvalid { .. } => format!("{e} (a signature covers the card's canonical form: any change to its content, such as a merge, makes it stale)"),
                _ => e.to_string(),
            };
            let f = located(Code::from(&e), message, path, &bytes, "/signatures");
            fail(format, vec![f], "the card was not verified")
        }
    }
}
