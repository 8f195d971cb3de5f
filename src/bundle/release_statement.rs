//! Release statements: a signed, expiring "this bundle is current", so a frozen or
//! replaying registry is refused once its answer is stale.
//!
//! A bundle's signature says who made it, never *when it stopped being current*: a
//! mirror that keeps serving `stable` → 0.2.0 after the vendor moved it to 0.3.0 (the
//! "freeze" attack), or replays an old tag, serves bytes that verify for ever, and an
//! agent that has never seen 0.3.0 has nothing to compare with. TUF answers this with
//! its timestamp role: short-lived signed metadata, re-signed often, refused once
//! expired. A release statement is that role reduced to one bundle, in the JWS the
//! bundle signatures already use ([`crate::crypto::jws`], same keys, same `kid` rule):
//!
//! - **What it binds**: the payload is the RFC 8785 (JCS) bytes of exactly
//!   `{"format": "skillbundle-release/1", "name", "version", "digest", "issued_at",
//!   "expires_at"}` — the bundle's name and version, the SHA-256 of the bundle file
//!   (the OCI layer digest), and two times in seconds since the epoch (JWT's
//!   NumericDate). A statement for another bundle, or another build of the same
//!   version, does not verify against this one.
//! - **How it travels — beside the bundle, never inside**: as `NAME-VERSION.release.json`
//!   next to the `.tar.gz` (a JWS in the general JSON serialization, RFC 7515 §7.2.1, with
//!   the payload embedded), and in a registry as the manifest annotation
//!   [`ANNOTATION`]. Inside the archive it would change the bundle's bytes at every
//!   re-issue — breaking reproducibility (SOURCE_DATE_EPOCH builds stay byte-identical:
//!   a statement's time is the real clock, by design) and turning every refresh into
//!   "same version, other content", which the agent's anti-rollback state refuses.
//!   Beside it, CI re-issues the statement by building again (`build --sign-key K
//!   --expires 7d`: the bundle comes out byte-identical, the statement new) and pushes
//!   the same layer under a manifest that differs only in the annotation.
//! - **How it is checked** ([`check`]): signed by a trusted key; bound to this bundle;
//!   issued no later than now (plus [`CLOCK_SKEW`]); not expired; and, when the operator
//!   asks for a maximum age (`--max-age`, `agent::fetch::FetchOptions::max_age`),
//!   issued within it — and then a bundle without a statement is refused too. Every
//!   time failure is [`Code::ReleaseExpired`].
//!
//! Where TUF differs, on purpose: there is no separate timestamp key (the release keys
//! sign it; an operator who wants the split trusts a CI-only key in the JWK Set and
//! signs statements with it), no snapshot role (one bundle per artifact, its digest in
//! the statement), and no version counter (the agent's state already refuses older
//! bundle versions, `agent::fetch`, feature `oci`).

use crate::crypto::jws::{self, JwsSignature};
use crate::crypto::keys::{SigningKeyPair, TrustedKeys};
use crate::finding::{Code, Finding, Location};
use crate::wire::digest::jcs;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The statement payload's `format`.
pub const FORMAT: &str = "skillbundle-release/1";
/// The OCI manifest annotation that carries a statement (its file's JSON text).
pub const ANNOTATION: &str = "io.skillbundle.release";
/// The largest statement read (a few hundred bytes per signature).
pub const MAX_STATEMENT_BYTES: usize = 64 * 1024;
/// How far in the future `issued_at` may be (the signer's clock may run ahead).
pub const CLOCK_SKEW: Duration = Duration::from_secs(300);
/// The file name suffix of a statement beside its bundle.
pub const FILE_SUFFIX: &str = ".release.json";

/// A statement's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    /// The statement format name.
    pub format: String,
    /// The bundle's name.
    pub name: String,
    /// The bundle's version.
    pub version: String,
    /// SHA-256 of the bundle file (`sha256:…`).
    pub digest: String,
    /// Seconds since the epoch.
    pub issued_at: u64,
    /// Seconds since the epoch.
    pub expires_at: u64,
}

/// The statement file: the payload and its signatures (JWS general JSON serialization).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedStatement {
    /// base64url (no padding) of the payload's JCS bytes.
    pub payload: String,
    /// The signatures over the payload.
    pub signatures: Vec<JwsSignature>,
}

/// The bundle a statement must be about.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The bundle's name.
    pub name: &'a str,
    /// The bundle's version.
    pub version: &'a str,
    /// SHA-256 of the bundle file.
    pub digest: &'a str,
}

/// The digest a statement binds: SHA-256 of the bundle file, `sha256:` + hex.
pub fn file_digest(bundle_bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{:x}", sha2::Sha256::digest(bundle_bytes))
}

/// Seconds since the epoch, now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Where the statement of the bundle file `bundle` lives: `x.tar.gz` → `x.release.json`.
pub fn file_beside(bundle: &Path) -> PathBuf {
    let name = bundle
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".tar.gz").unwrap_or(&name);
    bundle.with_file_name(format!("{stem}{FILE_SUFFIX}"))
}

/// The statement of the bundle file `bundle`: the file `explicit` names (`--release`),
/// else the one beside the bundle when there is one. Returns where it is or would be, and
/// its bytes (at most [`MAX_STATEMENT_BYTES`]) when there is one.
pub fn read_for(
    bundle: &Path,
    explicit: Option<&Path>,
) -> Result<(PathBuf, Option<Vec<u8>>), Finding> {
    let path = explicit.map_or_else(|| file_beside(bundle), Path::to_path_buf);
    let bytes = if explicit.is_some() || path.is_file() {
        Some(crate::bundle::read_file(&path, MAX_STATEMENT_BYTES as u64)?)
    } else {
        None
    };
    Ok((path, bytes))
}

/// Issue a statement for `subject`, valid from `issued_at` for `lifetime`, signed by
/// every key. Returns the statement file's bytes (pretty JSON and a newline).
pub fn issue(
    subject: Subject<'_>,
    issued_at: u64,
    lifetime: Duration,
    keys: &[SigningKeyPair],
) -> Vec<u8> {
    let statement = Statement {
        format: FORMAT.into(),
        name: subject.name.into(),
        version: subject.version.into(),
        digest: subject.digest.into(),
        issued_at,
        expires_at: issued_at.saturating_add(lifetime.as_secs()),
    };
    let payload = jcs(&serde_json::to_value(&statement).expect("a statement serializes"));
    let signed = SignedStatement {
        payload: URL_SAFE_NO_PAD.encode(&payload),
        signatures: keys.iter().map(|k| jws::sign(&payload, k)).collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&signed).expect("a statement serializes");
    bytes.push(b'\n');
    bytes
}

/// What [`check`] demands beyond a valid, unexpired statement.
#[derive(Debug, Clone, Copy, Default)]
pub struct Freshness {
    /// Seconds since the epoch ([`now`] outside tests).
    pub now: u64,
    /// Refuse a statement issued longer ago than this, and a bundle without one.
    pub max_age: Option<Duration>,
}

impl Freshness {
    /// Now, refusing statements older than `max_age`.
    pub fn now(max_age: Option<Duration>) -> Self {
        Freshness {
            now: now(),
            max_age,
        }
    }
}

/// Check `statement` (a statement file's bytes, if the bundle came with one) for the
/// bundle `subject`. `Ok(None)`: no statement and none required.
pub fn check(
    statement: Option<&[u8]>,
    subject: Subject<'_>,
    trust: &TrustedKeys,
    freshness: Freshness,
    at: &Location,
) -> Result<Option<Statement>, Finding> {
    let expired = |why: String| {
        Finding::new(Code::ReleaseExpired, why, at.clone()).with_help(
            "the registry (or a mirror) serves a stale release; the vendor re-issues the statement (`build --sign-key KEY --expires 7d`, then `push`); an operator may relax --max-age",
        )
    };
    let Some(bytes) = statement else {
        return match freshness.max_age {
            Some(_) => Err(expired(
                "the bundle comes without a release statement, and a maximum age was asked for"
                    .into(),
            )),
            None => Ok(None),
        };
    };
    let invalid = |why: &str| {
        Finding::new(
            Code::SignatureInvalid,
            format!("the release statement {why}"),
            at.clone(),
        )
    };
    if bytes.len() > MAX_STATEMENT_BYTES {
        return Err(Finding::new(
            Code::ResourceLimitExceeded,
            format!("the release statement is larger than {MAX_STATEMENT_BYTES} bytes"),
            at.clone(),
        ));
    }
    let value = crate::wire::json::parse(bytes).map_err(|_| invalid("is not valid I-JSON"))?;
    let signed: SignedStatement = serde_json::from_value(value)
        .map_err(|_| invalid("does not have the shape {\"payload\", \"signatures\"}"))?;
    let payload = URL_SAFE_NO_PAD
        .decode(&signed.payload)
        .map_err(|_| invalid("payload is not base64url without padding"))?;
    match jws::verify_signatures(&payload, &signed.signatures, trust.keys()) {
        Ok(_) => {}
        Err(e) => {
            return Err(match Code::from(&e) {
                Code::UntrustedKey => Finding::new(
                    Code::UntrustedKey,
                    "the release statement is not signed by a trusted key",
                    at.clone(),
                ),
                _ => invalid("signature does not verify"),
            })
        }
    }
    let value = crate::wire::json::parse(&payload).map_err(|_| invalid("payload is not I-JSON"))?;
    if jcs(&value) != payload {
        return Err(invalid("payload is not in canonical (JCS) form"));
    }
    let statement: Statement = serde_json::from_value(value)
        .map_err(|_| invalid("payload does not have the members of a release statement"))?;
    if statement.format != FORMAT {
        return Err(invalid("has an unknown format"));
    }
    if statement.name != subject.name
        || statement.version != subject.version
        || statement.digest != subject.digest
    {
        return Err(Finding::new(
            Code::DigestMismatch,
            "the release statement is about another bundle (name, version or file digest)",
            at.clone(),
        ));
    }
    let now = freshness.now;
    if statement.issued_at > now.saturating_add(CLOCK_SKEW.as_secs()) {
        return Err(expired(
            "the release statement is issued in the future (check this machine's clock)".into(),
        ));
    }
    if statement.expires_at <= now {
        return Err(expired(format!(
            "the release statement expired {} ago",
            human(now - statement.expires_at)
        )));
    }
    if let Some(max_age) = freshness.max_age {
        let age = now.saturating_sub(statement.issued_at);
        if age > max_age.as_secs() {
            return Err(expired(format!(
                "the release statement was issued {} ago, more than the maximum age of {}",
                human(age),
                human(max_age.as_secs())
            )));
        }
    }
    Ok(Some(statement))
}

/// `90 s`, `5 min`, `3 h`, `2 d` (rounded down).
fn human(secs: u64) -> String {
    match secs {
        s if s >= 2 * 86_400 => format!("{} d", s / 86_400),
        s if s >= 2 * 3600 => format!("{} h", s / 3600),
        s if s >= 2 * 60 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    fn subject() -> Subject<'static> {
        Subject {
            name: "net",
            version: "0.2.0",
            digest: "sha256:aa",
        }
    }

    fn code(r: Result<Option<Statement>, Finding>) -> &'static str {
        r.map(|_| "ok").unwrap_or_else(|f| f.code.as_str())
    }

    #[test]
    fn a_statement_binds_its_bundle_and_its_time() {
        let key = SigningKeyPair::from_seed(&[1; 32]);
        let trust = TrustedKeys::new(vec![key.public_key()]);
        let t0 = 1_800_000_000;
        let file = issue(
            subject(),
            t0,
            Duration::from_secs(30 * DAY),
            std::slice::from_ref(&key),
        );
        let at = Location::default();
        let at_time = |now, max_age: Option<u64>| Freshness {
            now,
            max_age: max_age.map(Duration::from_secs),
        };
        let ok = check(Some(&file), subject(), &trust, at_time(t0 + DAY, None), &at);
        assert_eq!(ok.unwrap().unwrap().expires_at, t0 + 30 * DAY);
        for (now, max_age, expected) in [
            (t0 + 29 * DAY, Some(30 * DAY), "ok"),
            (t0 + 30 * DAY, None, "release_expired"),
            (t0 + 8 * DAY, Some(7 * DAY), "release_expired"),
            (t0 - 3600, None, "release_expired"),
            (t0 - 60, None, "ok"),
        ] {
            assert_eq!(
                code(check(
                    Some(&file),
                    subject(),
                    &trust,
                    at_time(now, max_age),
                    &at
                )),
                expected,
                "{now} {max_age:?}"
            );
        }
        // No statement: fine unless a maximum age is asked for.
        assert_eq!(
            code(check(None, subject(), &trust, at_time(t0, None), &at)),
            "ok"
        );
        assert_eq!(
            code(check(None, subject(), &trust, at_time(t0, Some(DAY)), &at)),
            "release_expired"
        );
        // Another bundle, another key, a changed byte.
        let other = Subject {
            digest: "sha256:bb",
            ..subject()
        };
        let fresh = at_time(t0, None);
        assert_eq!(
            code(check(Some(&file), other, &trust, fresh, &at)),
            "digest_mismatch"
        );
        let stranger = TrustedKeys::new(vec![SigningKeyPair::from_seed(&[2; 32]).public_key()]);
        assert_eq!(
            code(check(Some(&file), subject(), &stranger, fresh, &at)),
            "untrusted_key"
        );
        let mut forged: SignedStatement = serde_json::from_slice(&file).unwrap();
        let later = Statement {
            format: FORMAT.into(),
            name: "net".into(),
            version: "0.2.0".into(),
            digest: "sha256:aa".into(),
            issued_at: t0,
            expires_at: t0 + 3650 * DAY,
        };
        forged.payload = URL_SAFE_NO_PAD.encode(jcs(&serde_json::to_value(&later).unwrap()));
        let forged = serde_json::to_vec(&forged).unwrap();
        assert_eq!(
            code(check(Some(&forged), subject(), &trust, fresh, &at)),
            "signature_invalid"
        );
    }

    #[test]
    fn the_statement_file_sits_beside_its_bundle() {
        assert_eq!(
            file_beside(Path::new("dist/net-0.2.0.tar.gz")),
            Path::new("dist/net-0.2.0.release.json")
        );
    }
}
