//! `skillbundle card` and `skillbundle verify-card`: the Agent Card a bundle's agent
//! serves, merged into a base card and signed, and the check of a signed card.
//!
//! Findings about a base card point at the file, the JSON Pointer of the member and its
//! line and column, one per problem, so a vendor fixes them all in one pass.

use crate::render::{self, Format};
use serde_json::{json, Value};
use skillbundle::a2a;
use skillbundle::card_signature;
use skillbundle::finding::{Code, Finding, Location};
use skillbundle::jws::JwsError;
use skillbundle::keys::{PublicKey, SigningKeyPair};
use std::path::Path;
use std::process::ExitCode;

fn fail(format: Format, findings: Vec<Finding>, what: &str) -> ExitCode {
    render::report_with(
        format,
        &findings,
        &json!({"ok": false, "findings": findings}),
        Vec::new,
        what,
    )
}

/// Read a JSON file strictly, keeping its bytes for locating pointers.
fn read(path: &Path) -> Result<(Value, Vec<u8>), Finding> {
    let bytes = std::fs::read(path)
        .map_err(|e| Finding::at_file(Code::Io, format!("cannot read the file: {e}"), path))?;
    let value = skillbundle::json::parse(&bytes).map_err(|e| e.into_finding(path))?;
    Ok((value, bytes))
}

fn located(code: Code, message: String, path: &Path, bytes: &[u8], pointer: &str) -> Finding {
    let mut location = Location::file(path).with_pointer(pointer);
    if let Some((line, column)) = skillbundle::json::locate(bytes, pointer) {
        location = location.with_position(line, column);
    }
    Finding::new(code, message, location)
}

/// `card BUNDLE --trust … [--base FILE] [--sign-key KEY]…`.
pub fn card(
    format: Format,
    path: &Path,
    base: Option<&Path>,
    trust: &crate::TrustArgs,
    sign_keys: &[SigningKeyPair],
) -> ExitCode {
    let bundle = match crate::load(format, path, trust) {
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
        render::print_json(bundle.card_fragment());
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
        Err(a2a::CardError::NotACard(problems)) => {
            let findings = problems
                .into_iter()
                .map(|p| located(Code::CardInvalid, p.message, base, &bytes, &p.pointer))
                .collect();
            return fail(format, findings, "no card was printed");
        }
        Err(e @ a2a::CardError::StaleSignatures) => {
            let f = located(
                Code::CardInvalid,
                e.to_string(),
                base,
                &bytes,
                "/signatures",
            );
            return fail(format, vec![f], "no card was printed");
        }
        Err(e) => {
            let code = match e {
                a2a::CardError::SkillConflict { .. } => Code::DuplicateSkill,
                _ => Code::CardInvalid,
            };
            return fail(
                format,
                vec![Finding::at_file(code, e.to_string(), base)],
                "no card was printed",
            );
        }
    };
    let card = card_signature::sign(&merged, sign_keys);
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
    render::print_json(&card);
    ExitCode::SUCCESS
}

/// `verify-card CARD --trust KEY…`.
pub fn verify_card(format: Format, path: &Path, trust: &[PublicKey]) -> ExitCode {
    let (card, bytes) = match read(path) {
        Ok(v) => v,
        Err(f) => return fail(format, vec![f], "the card was not verified"),
    };
    let problems = skillbundle::agent_card::check(&card);
    if !problems.is_empty() {
        let findings = problems
            .into_iter()
            .map(|p| located(Code::CardInvalid, p.message, path, &bytes, &p.pointer))
            .collect();
        return fail(format, findings, "the card was not verified");
    }
    match card_signature::verify(&card, trust) {
        Ok(by) => {
            let by: Vec<String> = by.into_iter().map(|k| k.0).collect();
            let doc = json!({"ok": true, "signed_by": by, "findings": []});
            render::report(format, &[], &doc, || {
                vec![format!(
                    "verified: the Agent Card is signed by {}",
                    by.join(", ")
                )]
            })
        }
        Err(e) => {
            let (code, message) = match e {
                JwsError::NoSignatures => (
                    Code::SignatureInvalid,
                    "the Agent Card has no signatures".to_string(),
                ),
                JwsError::UntrustedKey { .. } => (Code::UntrustedKey, e.to_string()),
                JwsError::SignatureInvalid { .. } => (
                    Code::SignatureInvalid,
                    format!("{e} (a signature covers the card's canonical form: any change to its content, such as a merge, makes it stale)"),
                ),
            };
            let f = located(code, message, path, &bytes, "/signatures");
            fail(format, vec![f], "the card was not verified")
        }
    }
}
