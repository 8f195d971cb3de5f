//! Loading from a registry at agent start-up: keep-last-good and anti-rollback.
//!
//! An agent that pulls its bundle at start-up must not stop working because the
//! registry is down, and must not be turned back to an older signed bundle — one whose
//! schema is known to be wrong verifies just as well as the fix (TUF's "rollback
//! attack"). So [`Bundle::fetch`] keeps a small state directory:
//!
//! - `state.json`: per bundle name, the highest version accepted and its digest; per
//!   source (`registry/repository`, what the agent follows), the bundle accepted from it
//!   — its name, version, file digest and the manifest it came from;
//! - `bundles/sha256-<hex>.tar.gz`: that last good bundle, byte for byte.
//!
//! A fetched bundle is accepted only when it verifies ([`Bundle::open`]) and is what the
//! source may move to ([`State::admits`], else [`Code::RollbackRefused`]):
//!
//! - the same bundle *name* the source delivered before: a tag moved to another bundle
//!   the vendor also signed (a renamed product, a beta channel, a `0.0.1`) is TUF's
//!   "mix-and-match" attack, and no version comparison across names can catch it;
//! - a version not below the highest accepted for that name, from any source (a mirror
//!   serving an older release is a rollback too);
//! - for the same version, the same content: release versions are immutable.
//!
//! Only the operator can say otherwise ([`FetchOptions::allow_rollback`],
//! `pull --allow-rollback`), and what is then accepted is recorded as the new highest.
//! A version ordering cannot see a *freeze* (a registry that keeps serving the old tag):
//! for that the manifest's signed, expiring release statement is checked
//! ([`crate::bundle::release_statement`], [`FetchOptions::max_age`]). When the registry cannot be reached or the new bundle is refused, the last good bundle of that
//! source is verified again from the state directory and loaded instead, and the result
//! says so ([`Source::LastGood`], with the findings that caused it). Without a last good
//! bundle the findings are returned: an agent never starts on nothing it can trust.
//!
//! Every write is atomic (temporary file + rename), and the bundle file is written
//! before the state that names it, so a crash leaves the previous state whole. One state
//! directory belongs to one agent process at a time.

use crate::agent::Bundle;
use crate::bundle::archive::ReadLimits;
use crate::bundle::release_statement;
use crate::crypto::keys::TrustedKeys;
use crate::finding::{Code, Finding, Location};
use crate::fs::atomic_file;
use crate::registry::referrers;
use crate::registry::{self, ArtifactRef, Options};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The state file's name inside the state directory.
pub const STATE_FILE: &str = "state.json";
/// The folder of kept bundles inside the state directory.
pub const BUNDLES_DIR: &str = "bundles";
const STATE_FORMAT: &str = "skillbundle-state/1";

/// How an agent fetches: how to reach the registry, and what it may accept.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Transport, credentials and deadlines ([`registry::Timeouts`]: connect, per read,
    /// and overall; a pull cut off by the deadline falls back to the last good bundle).
    pub registry: Options,
    /// The operator's override: accept a lower version, another bundle name under the
    /// source, or other content for a version already accepted — and record it.
    pub allow_rollback: bool,
    /// Accept a bundle only when the registry also lists a signature of it, by a trusted
    /// key, as an OCI referrer of its manifest ([`crate::registry::referrers::verify_signature`]);
    /// else [`Code::ReferrerSignatureMissing`]. The in-bundle signature is checked
    /// either way and stays authoritative.
    pub require_referrer_signature: bool,
    /// Require a release statement ([`crate::bundle::release_statement`]) issued at most this long ago:
    /// a frozen or replaying registry is refused once stale ([`Code::ReleaseExpired`]),
    /// and a bundle without a statement too. Without it, a statement the manifest carries
    /// is still checked (signature, binding, expiry).
    pub max_age: Option<std::time::Duration>,
}

impl From<Options> for FetchOptions {
    fn from(registry: Options) -> Self {
        FetchOptions {
            registry,
            ..FetchOptions::default()
        }
    }
}

/// A bundle loaded by [`Bundle::fetch`], and where it came from.
pub struct Fetched {
    /// The verified, loaded bundle.
    pub bundle: Bundle,
    /// Whether it came from the registry or is the last good one kept.
    pub source: Source,
    /// The verified bundle file, as kept in the state directory.
    pub file: PathBuf,
}

/// Where a fetched bundle came from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Pulled from the registry just now, verified and recorded as the last good bundle.
    Registry {
        /// `registry/repository@sha256:…` of the manifest pulled.
        pinned: String,
        /// The version accepted before this one for the same name, if any.
        previous: Option<String>,
    },
    /// The registry's bundle could not be had or was refused; the last good bundle kept
    /// in the state directory was verified again and loaded instead.
    LastGood {
        /// `registry/repository@sha256:…` it was pulled from.
        pinned: String,
        /// Why the registry's bundle was not loaded.
        refused: Vec<Finding>,
    },
}

/// The state directory's record (`state.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// The state file's format name.
    pub format: String,
    /// Bundle name → the highest version accepted.
    pub highest: BTreeMap<String, Accepted>,
    /// `registry/repository` → the last bundle accepted from it.
    pub sources: BTreeMap<String, Kept>,
}

/// A bundle version accepted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Accepted {
    /// The bundle version.
    pub version: String,
    /// SHA-256 of the bundle file (`sha256:…`).
    pub digest: String,
}

/// The last good bundle of a source.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Kept {
    /// The bundle's name.
    pub name: String,
    /// The bundle's version.
    pub version: String,
    /// SHA-256 of the bundle file (`sha256:…`); the file is `bundles/sha256-<hex>.tar.gz`.
    pub digest: String,
    /// `registry/repository@sha256:…` of the manifest it came from.
    pub pinned: String,
}

impl State {
    /// Read `state.json` from `dir`; a missing file is an empty state. A state that
    /// cannot be read is an error: without it, rollbacks could not be refused.
    pub fn read(dir: &Path) -> Result<State, Finding> {
        let path = dir.join(STATE_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(State {
                    format: STATE_FORMAT.into(),
                    ..State::default()
                })
            }
            Err(e) => {
                return Err(Finding::at_file(
                    Code::Io,
                    format!("cannot read the state file: {e}"),
                    &path,
                ))
            }
        };
        let state: State = serde_json::from_slice(&bytes).map_err(|e| {
            Finding::at_file(
                Code::Io,
                format!("the state file is corrupt ({e}); rollbacks cannot be refused without it"),
                &path,
            )
            .with_help("restore it from a backup, or remove the state directory to start over (this forgets the highest versions accepted)")
        })?;
        if state.format != STATE_FORMAT {
            return Err(Finding::at_file(
                Code::Io,
                "the state file has an unknown format",
                &path,
            ));
        }
        Ok(state)
    }

    fn write(&self, dir: &Path) -> Result<(), Finding> {
        let path = dir.join(STATE_FILE);
        let mut bytes = serde_json::to_vec_pretty(self).expect("the state always serializes");
        bytes.push(b'\n');
        atomic_file::replace(&path, ".state-", |f| f.write_all(&bytes)).map_err(|e| {
            Finding::at_file(Code::Io, format!("cannot write the state file: {e}"), &path)
        })
    }

    /// Whether source `source` (`registry/repository`) may deliver bundle `name` at
    /// `version` with file digest `digest`: the name it delivered before, a version not
    /// below the highest accepted for the name, the same content for the same version.
    pub fn admits(
        &self,
        source: &str,
        name: &str,
        version: &str,
        digest: &str,
    ) -> Result<(), NotAdmitted> {
        if let Some(kept) = self.sources.get(source) {
            if kept.name != name {
                return Err(NotAdmitted::OtherBundle {
                    before: kept.name.clone(),
                    now: name.to_string(),
                });
            }
        }
        let Some(highest) = self.highest.get(name) else {
            return Ok(());
        };
        match compare_versions(version, &highest.version) {
            Ordering::Less => Err(NotAdmitted::Older {
                version: version.to_string(),
                highest: highest.version.clone(),
            }),
            Ordering::Equal if highest.digest != digest => Err(NotAdmitted::ContentChanged {
                version: version.to_string(),
            }),
            _ => Ok(()),
        }
    }
}

/// Why [`State::admits`] refused a delivered bundle: each is how a rollback or a moved
/// tag looks from the agent's side.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotAdmitted {
    /// The source delivered another bundle name before.
    #[error("this source delivered the bundle {before} before; it now names another bundle ({now}), which is how a tag moved to another signed product or channel looks")]
    OtherBundle {
        /// The name it delivered before.
        before: String,
        /// The name it delivers now.
        now: String,
    },
    /// The version is below the highest accepted for the name.
    #[error("the bundle's version {version} is older than {highest}, the highest version of this bundle already accepted")]
    Older {
        /// The delivered version.
        version: String,
        /// The highest version accepted so far.
        highest: String,
    },
    /// The version was accepted before with other content.
    #[error("the bundle's version {version} was already accepted with other content; release versions are immutable")]
    ContentChanged {
        /// The delivered version.
        version: String,
    },
}

/// Every refusal is anti-rollback: `rollback_refused`.
impl From<&NotAdmitted> for Code {
    fn from(e: &NotAdmitted) -> Code {
        match e {
            NotAdmitted::OtherBundle { .. }
            | NotAdmitted::Older { .. }
            | NotAdmitted::ContentChanged { .. } => Code::RollbackRefused,
        }
    }
}

/// Where the kept bundle with file digest `digest` lives; `None` when `digest` is not
/// `sha256:` and 64 lowercase hex digits (a state file edited by hand names no path).
pub fn kept_path(dir: &Path, digest: &str) -> Option<PathBuf> {
    let hex = digest.strip_prefix("sha256:")?;
    let well_formed =
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    well_formed.then(|| dir.join(BUNDLES_DIR).join(format!("sha256-{hex}.tar.gz")))
}

/// Order bundle versions: dot-separated parts, numeric parts numerically (any length),
/// other parts as text, numbers before text; a `-pre-release` suffix sorts before the
/// same version without one (`1.2.0-rc.1` < `1.2.0` < `1.10.0`).
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let (a_core, a_pre) = a.split_once('-').map_or((a, None), |(c, p)| (c, Some(p)));
    let (b_core, b_pre) = b.split_once('-').map_or((b, None), |(c, p)| (c, Some(p)));
    let parts = |s: &'_ str| s.split('.').map(str::to_string).collect::<Vec<_>>();
    let by_parts = |x: &str, y: &str| {
        let (x, y) = (parts(x), parts(y));
        for (p, q) in x.iter().zip(&y) {
            let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            let order = match (numeric(p), numeric(q)) {
                (true, true) => {
                    let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                    p.len().cmp(&q.len()).then_with(|| p.cmp(q))
                }
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => p.cmp(q),
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        x.len().cmp(&y.len())
    };
    by_parts(a_core, b_core).then_with(|| match (a_pre, b_pre) {
        (None, None) => Ordering::Equal,
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(p), Some(q)) => by_parts(p, q),
    })
}

impl Bundle {
    /// Pull `reference` (`[oci://]REGISTRY/REPOSITORY(:TAG|@sha256:…)`), verify it, and
    /// load it — or, when that fails, the last good bundle kept in `state_dir` (see the
    /// [module](crate::agent::fetch) documentation). Credentials come from the standard files;
    /// use [`fetch`] for other [`Options`], and [`fetch_async`] from a tokio runtime.
    pub fn fetch(
        reference: &str,
        trust: &TrustedKeys,
        state_dir: &Path,
    ) -> Result<Fetched, Vec<Finding>> {
        fetch(reference, trust, state_dir, &FetchOptions::default())
    }
}

/// [`Bundle::fetch`] with explicit options, on a runtime of its own.
pub fn fetch(
    reference: &str,
    trust: &TrustedKeys,
    state_dir: &Path,
    options: &FetchOptions,
) -> Result<Fetched, Vec<Finding>> {
    registry::block_on(fetch_async(reference, trust, state_dir, options)).map_err(|f| vec![f])?
}

/// [`Bundle::fetch`] for callers inside a tokio runtime.
pub async fn fetch_async(
    reference: &str,
    trust: &TrustedKeys,
    state_dir: &Path,
    options: &FetchOptions,
) -> Result<Fetched, Vec<Finding>> {
    let parsed = ArtifactRef::parse(reference).map_err(|f| vec![f])?;
    let state = State::read(state_dir).map_err(|f| vec![f])?;
    let key = parsed.repository_key();
    let refused = match pull_and_accept(&parsed, trust, state_dir, options, &state).await {
        Ok(fetched) => return Ok(fetched),
        Err(findings) => findings,
    };
    // Keep-last-good: only for a failure of the registry or of the new bundle, never
    // for a state directory that cannot be written.
    if refused.iter().any(|f| f.code == Code::Io) {
        return Err(refused);
    }
    let Some(kept) = state.sources.get(&key) else {
        return Err(refused);
    };
    let state_file = state_dir.join(STATE_FILE);
    let Some(path) = kept_path(state_dir, &kept.digest) else {
        return Err(with(
            refused,
            Finding::at_file(
                Code::Io,
                "the state file names its last good bundle by a malformed digest",
                &state_file,
            ),
        ));
    };
    let bytes = crate::bundle::read_file(&path, ReadLimits::default().max_total_bytes)
        .map_err(|f| with(refused.clone(), f))?;
    if release_statement::file_digest(&bytes) != kept.digest {
        return Err(with(
            refused,
            Finding::at_file(
                Code::DigestMismatch,
                "the kept last good bundle no longer has the digest recorded for it",
                &path,
            ),
        ));
    }
    match Bundle::open(&bytes, trust) {
        Ok(bundle) => Ok(Fetched {
            bundle,
            file: path,
            source: Source::LastGood {
                pinned: kept.pinned.clone(),
                refused,
            },
        }),
        Err(mut findings) => {
            for f in &mut findings {
                f.location.file.get_or_insert_with(|| path.clone());
            }
            let mut all = refused;
            all.extend(findings);
            Err(all)
        }
    }
}

fn with(mut findings: Vec<Finding>, more: Finding) -> Vec<Finding> {
    findings.push(more);
    findings
}

/// A bundle pulled from a registry and verified as [`fetch`] verifies it before the
/// state is consulted: its signature and contents ([`Bundle::open`]), its release
/// statement ([`crate::bundle::release_statement::check`], with [`FetchOptions::max_age`]) and, when
/// asked, its signature referrer. `pull` without a state directory stops here.
pub struct Verified {
    /// The loaded bundle.
    pub bundle: Bundle,
    /// The bundle file's bytes, as pulled.
    pub bytes: Vec<u8>,
    /// `sha256:` + hex of the bundle file.
    pub digest: String,
    /// `registry/repository@sha256:…` of the manifest it came from.
    pub pinned: String,
}

/// Pull `reference` and verify it (see [`Verified`]); nothing is written.
pub async fn pull_verified(
    reference: &ArtifactRef,
    trust: &TrustedKeys,
    options: &FetchOptions,
) -> Result<Verified, Vec<Finding>> {
    let limits = ReadLimits::default();
    let pulled = registry::pull(reference, &options.registry, limits.max_total_bytes)
        .await
        .map_err(|f| vec![f])?;
    let at = Location::file(reference.as_str());
    let bundle = Bundle::open(&pulled.bytes, trust).map_err(|mut findings| {
        for f in &mut findings {
            f.location
                .file
                .get_or_insert_with(|| reference.as_str().into());
        }
        findings
    })?;
    let digest = release_statement::file_digest(&pulled.bytes);
    let subject = release_statement::Subject {
        name: bundle.name(),
        version: bundle.version(),
        digest: &digest,
    };
    let freshness = release_statement::Freshness::now(options.max_age);
    release_statement::check(pulled.release.as_deref(), subject, trust, freshness, &at)
        .map_err(|f| vec![f])?;
    if options.require_referrer_signature {
        referrers::verify_signature(
            reference,
            &pulled.manifest_digest,
            &pulled.bytes,
            trust,
            &options.registry,
        )
        .await
        .map_err(|f| vec![f])?;
    }
    Ok(Verified {
        bundle,
        bytes: pulled.bytes,
        digest,
        pinned: pulled.pinned,
    })
}

async fn pull_and_accept(
    reference: &ArtifactRef,
    trust: &TrustedKeys,
    state_dir: &Path,
    options: &FetchOptions,
    state: &State,
) -> Result<Fetched, Vec<Finding>> {
    let Verified {
        bundle,
        bytes,
        digest,
        pinned,
    } = pull_verified(reference, trust, options).await?;
    let at = Location::file(reference.as_str());
    let source = reference.repository_key();
    if !options.allow_rollback {
        if let Err(why) = state.admits(&source, bundle.name(), bundle.version(), &digest) {
            return Err(vec![Finding::new(Code::from(&why), why.to_string(), at).with_help(
                "publish a higher version of the same bundle; the state directory records, per source and per bundle name, what was accepted (an operator who means it passes --allow-rollback)",
            )]);
        }
    }
    // The bundle file first, then the state naming it.
    let file = kept_path(state_dir, &digest).expect("a digest computed here is well formed");
    atomic_file::replace(&file, ".bundle-", |f| f.write_all(&bytes)).map_err(|e| {
        vec![Finding::at_file(
            Code::Io,
            format!("cannot keep the bundle in the state directory: {e}"),
            &file,
        )]
    })?;
    let mut next = state.clone();
    let previous = next
        .highest
        .insert(
            bundle.name().to_string(),
            Accepted {
                version: bundle.version().to_string(),
                digest: digest.clone(),
            },
        )
        .map(|a| a.version);
    next.sources.insert(
        source,
        Kept {
            name: bundle.name().to_string(),
            version: bundle.version().to_string(),
            digest,
            pinned: pinned.clone(),
        },
    );
    next.write(state_dir).map_err(|f| vec![f])?;
    remove_unkept(state_dir, &next);
    Ok(Fetched {
        bundle,
        file,
        source: Source::Registry { pinned, previous },
    })
}

/// Remove kept bundles no source names any more (best effort: a leftover file is
/// only disk space, and the next fetch tries again).
fn remove_unkept(state_dir: &Path, state: &State) {
    let Ok(entries) = std::fs::read_dir(state_dir.join(BUNDLES_DIR)) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let named = state
            .sources
            .values()
            .any(|kept| kept_path(state_dir, &kept.digest).as_ref() == Some(&path));
        if !named {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_as_people_read_them() {
        let ordered = [
            "0.1.0",
            "0.2.0",
            "0.10.0",
            "1.0.0-rc.1",
            "1.0.0-rc.2",
            "1.0.0",
            "1.0.1",
            "1.0.1.1",
            "10.0",
        ];
        for pair in ordered.windows(2) {
            assert_eq!(
                compare_versions(pair[0], pair[1]),
                Ordering::Less,
                "{pair:?}"
            );
            assert_eq!(
                compare_versions(pair[1], pair[0]),
                Ordering::Greater,
                "{pair:?}"
            );
        }
        assert_eq!(compare_versions("1.02", "1.2"), Ordering::Equal);
    }

    #[test]
    fn the_state_refuses_older_versions_and_changed_content() {
        let mut state = State::default();
        state.highest.insert(
            "net".into(),
            Accepted {
                version: "0.2.0".into(),
                digest: "sha256:aa".into(),
            },
        );
        state.sources.insert(
            "reg/net".into(),
            Kept {
                name: "net".into(),
                version: "0.2.0".into(),
                digest: "sha256:aa".into(),
                pinned: "reg/net@sha256:ff".into(),
            },
        );
        for source in ["reg/net", "mirror/net"] {
            assert!(state.admits(source, "net", "0.1.0", "sha256:bb").is_err());
            assert!(state.admits(source, "net", "0.2.0", "sha256:bb").is_err());
            assert!(state.admits(source, "net", "0.2.0", "sha256:aa").is_ok());
            assert!(state.admits(source, "net", "0.3.0", "sha256:cc").is_ok());
        }
        // Another bundle under the source the agent follows: refused, whatever its version.
        assert!(state
            .admits("reg/net", "net-beta", "9.0.0", "sha256:dd")
            .is_err());
        // Another bundle under another source is that source's business.
        assert!(state
            .admits("reg/other", "other", "0.0.1", "sha256:dd")
            .is_ok());
    }

    #[test]
    fn only_well_formed_digests_name_kept_files() {
        let dir = Path::new("/state");
        let hex = "ab".repeat(32);
        assert_eq!(
            kept_path(dir, &format!("sha256:{hex}")),
            Some(dir.join(format!("bundles/sha256-{hex}.tar.gz")))
        );
        for bad in ["sha256:../../x", "sha512:aa", "", "sha256:AB"] {
            assert_eq!(kept_path(dir, bad), None, "{bad}");
        }
    }

    #[test]
    fn a_corrupt_state_is_an_error_not_a_fresh_start() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(State::read(dir.path()).unwrap().format, STATE_FORMAT);
        std::fs::write(dir.path().join(STATE_FILE), b"{\"format\":").unwrap();
        let err = State::read(dir.path()).unwrap_err();
        assert_eq!(err.code, Code::Io);
        assert!(err.message.contains("rollbacks cannot be refused"));
    }
}
