//! One module per `skillbundle` subcommand (cargo's `commands/<cmd>.rs` pattern), and the
//! few pieces several of them share: how a bundle is trusted and loaded, the per-skill
//! summary line, the progress bar and the report every failure prints.
//!
//! Each command module holds its clap arguments (with the help text), its typed report
//! for `--format json` and its handler `run`; `main.rs` only parses and dispatches. A new
//! command is a new file here, a `pub mod` line below and one variant plus one match arm
//! in `main.rs`.

pub mod build;
#[cfg(feature = "client")]
pub mod call;
pub mod card;
pub mod check;
pub mod client;
pub mod completions;
pub mod describe;
pub mod diff;
pub mod digest;
pub mod files;
pub mod init;
pub mod inspect;
pub mod keygen;
pub mod man;
#[cfg(feature = "client")]
pub mod probe;
#[cfg(feature = "oci")]
pub mod pull;
#[cfg(feature = "oci")]
pub mod push;
#[cfg(feature = "gateway")]
pub mod serve;
pub mod validate;
pub mod verify;

use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::agent::{Bundle, SignatureStatus, TrustedKeys};
use skillbundle::build::pipeline;
use skillbundle::bundle::release_statement;
use skillbundle::crypto::keys::{PublicKey, SigningKeyPair};
use skillbundle::finding::{Code, Finding};
use skillbundle::interface::binding::Binding;
use std::path::Path;
use std::process::ExitCode;

/// How a bundle is trusted; the same for every command that loads one.
#[derive(clap::Args)]
pub struct TrustArgs {
    /// A public key trusted to sign bundles: a JWK (PREFIX.jwk.json), an SPKI PEM file,
    /// or a JWK Set ({"keys": [...]}) holding several, e.g. during a rotation. Repeatable.
    #[arg(long = "trust", value_name = "KEY", value_parser = key_set)]
    pub trust: Vec<KeySet>,
    /// Accept a bundle that has no signature (development only; the output says so).
    #[arg(long)]
    pub allow_unsigned: bool,
    /// Talk to the registry of an oci:// reference over plain HTTP, without TLS.
    #[cfg(feature = "oci")]
    #[arg(long)]
    pub plain_http: bool,
    /// Require a signed release statement issued at most this long ago (e.g. 7d), and
    /// refuse a stale or missing one (release_expired): a frozen or replaying registry or
    /// mirror. A statement that comes with a bundle is checked even without this.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub max_age: Option<std::time::Duration>,
    /// The release statement of a bundle file (default: NAME-VERSION.release.json beside
    /// it, when there is one). From a registry, the manifest carries it.
    #[arg(long, value_name = "FILE")]
    pub release: Option<std::path::PathBuf>,
    /// The overall deadline of a registry operation: every request, redirect, token
    /// exchange and byte of an oci:// reference (e.g. 120s, 5m).
    #[cfg(feature = "oci")]
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = duration)]
    pub timeout: std::time::Duration,
    /// Give up opening a connection to the registry after this long.
    #[cfg(feature = "oci")]
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub connect_timeout: std::time::Duration,
    /// Fail when the registry sends nothing for this long.
    #[cfg(feature = "oci")]
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub read_timeout: std::time::Duration,
}

/// A duration: a positive whole number with a unit, `s`, `m`, `h` or `d` (`90s`, `5m`,
/// `30d`).
pub fn duration(text: &str) -> Result<std::time::Duration, String> {
    let bad =
        || "write a positive whole number and a unit: s, m, h or d (90s, 5m, 30d)".to_string();
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    match n.checked_mul(scale) {
        Some(secs) if secs > 0 => Ok(std::time::Duration::from_secs(secs)),
        _ => Err(bad()),
    }
}

/// The keys of one `--trust` file.
#[derive(Clone)]
pub struct KeySet(pub Vec<PublicKey>);

pub fn key_set(path: &str) -> Result<KeySet, String> {
    skillbundle::crypto::keys::read_key_set(Path::new(path))
        .map(KeySet)
        .map_err(|e| e.to_string())
}

impl TrustArgs {
    /// How to reach the registry of an oci:// reference.
    #[cfg(feature = "oci")]
    pub fn registry_options(&self) -> skillbundle::registry::Options {
        skillbundle::registry::Options {
            plain_http: self.plain_http,
            credentials: None,
            timeouts: skillbundle::registry::Timeouts {
                connect: self.connect_timeout,
                read: self.read_timeout,
                total: self.timeout,
            },
        }
    }

    /// Every key of every `--trust` file, and whether unsigned bundles are allowed.
    pub fn keys(&self) -> TrustedKeys {
        let keys = TrustedKeys::new(self.trust.iter().flat_map(|s| s.0.clone()).collect());
        if self.allow_unsigned {
            keys.and_allow_unsigned()
        } else {
            keys
        }
    }
}

pub fn public_key(path: &str) -> Result<PublicKey, String> {
    PublicKey::read_file(Path::new(path)).map_err(|e| e.to_string())
}

pub fn signing_key(path: &str) -> Result<SigningKeyPair, String> {
    SigningKeyPair::read_pem_file(Path::new(path)).map_err(|e| e.to_string())
}

/// The report of a run that failed before it produced anything: `{"ok": false,
/// "findings": [...]}`.
#[derive(Serialize)]
pub struct Failed<'a> {
    ok: bool,
    findings: &'a [Finding],
}

impl<'a> Failed<'a> {
    pub fn new(findings: &'a [Finding]) -> Self {
        Failed {
            ok: false,
            findings,
        }
    }
}

/// Report `findings` as a failed run (nothing was written).
pub fn fail(format: Format, findings: &[Finding]) -> ExitCode {
    render::report(format, findings, &Failed::new(findings), Vec::new)
}

/// [`fail`], ending the human list of findings with `outcome`.
pub fn fail_with(format: Format, findings: &[Finding], outcome: &str) -> ExitCode {
    render::report_with(format, findings, &Failed::new(findings), Vec::new, outcome)
}

/// A bundle in a push or pull report: name, version and how many skills it holds.
#[derive(Serialize)]
pub struct BundleSummary<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub skills: usize,
}

/// One skill in a human report: `  ID VERSION DIGEST` (the JSON report carries the
/// [`Binding`] itself).
pub fn skill_line(binding: &Binding) -> String {
    format!("  {}", binding.human())
}

/// The skills a check passed, as report lines.
pub fn skill_lines(checked: &pipeline::Checked) -> Vec<Binding> {
    checked
        .skills
        .iter()
        .map(|s| s.interface.binding())
        .collect()
}

/// What the signature check of a loaded bundle established, for `--format json`.
#[derive(Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Signature {
    Verified { signed_by: Vec<String> },
    Unsigned,
    NotVerified { signatures: usize },
}

impl From<&SignatureStatus> for Signature {
    fn from(status: &SignatureStatus) -> Self {
        match status {
            SignatureStatus::Verified { by } => Signature::Verified {
                signed_by: by.clone(),
            },
            SignatureStatus::Unsigned => Signature::Unsigned,
            SignatureStatus::NotVerified { signatures } => Signature::NotVerified {
                signatures: *signatures,
            },
        }
    }
}

/// A progress bar on stderr for human output on a terminal: the number of skills
/// checked and the elapsed time. Nothing at all in json/github/sarif output or when
/// stderr is not a terminal.
pub fn progress(format: Format) -> (pipeline::Progress, Option<indicatif::ProgressBar>) {
    use std::io::IsTerminal;
    if format != Format::Human || !std::io::stderr().is_terminal() {
        return (pipeline::Progress::default(), None);
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} checking skills {pos}/{len} [{elapsed_precise}] {wide_bar}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let observer = bar.clone();
    let progress = pipeline::Progress::new(move |done, total| {
        observer.set_length(total as u64);
        observer.set_position(done as u64);
    });
    (progress, Some(bar))
}

/// Load a bundle the way every agent-side command does; on failure, report the
/// findings and return the exit status.
pub fn load(format: Format, path: &Path, trust: &TrustArgs) -> Result<Bundle, ExitCode> {
    let keys = trust.keys();
    #[cfg(feature = "oci")]
    let pulled = path.to_str().and_then(|text| {
        let options = skillbundle::agent::fetch::FetchOptions {
            registry: trust.registry_options(),
            max_age: trust.max_age,
            ..Default::default()
        };
        pull::open_reference(text, &keys, &options)
    });
    #[cfg(not(feature = "oci"))]
    let pulled = None;
    let bundle = pulled
        .unwrap_or_else(|| {
            // Read once: the bundle is opened from the bytes its statement's digest binds.
            let limit = skillbundle::bundle::archive::ReadLimits::default().max_total_bytes;
            let bytes = skillbundle::bundle::read_file(path, limit).map_err(|f| vec![f])?;
            let bundle = Bundle::open_read(path, &bytes, &keys)?;
            check_release_beside(path, &bytes, &bundle, trust)?;
            Ok(bundle)
        })
        .map_err(|findings| fail_with(format, &findings, "the bundle was refused"))?;
    if let Some(warning) = unverified_warning(&bundle) {
        render::warn(format, &warning);
    }
    Ok(bundle)
}

/// Check the release statement of the bundle file `path` (`--release`, or the one beside
/// it) against `bytes`, the file as read (and opened as `bundle`): always when there is
/// one, and its age when `--max-age` asks.
pub fn check_release_beside(
    path: &Path,
    bytes: &[u8],
    bundle: &Bundle,
    trust: &TrustArgs,
) -> Result<Option<Vec<u8>>, Vec<Finding>> {
    let (statement_path, statement) =
        release_statement::read_for(path, trust.release.as_deref()).map_err(|f| vec![f])?;
    let digest = release_statement::file_digest(bytes);
    let subject = release_statement::Subject {
        name: bundle.name(),
        version: bundle.version(),
        digest: &digest,
    };
    let freshness = release_statement::Freshness::now(trust.max_age);
    let at = skillbundle::finding::Location::file(&statement_path);
    release_statement::check(statement.as_deref(), subject, &trust.keys(), freshness, &at)
        .map_err(|f| vec![f])?;
    Ok(statement)
}

pub fn unverified_warning(bundle: &Bundle) -> Option<String> {
    match bundle.signature() {
        SignatureStatus::Verified { .. } => None,
        status => Some(format!(
            "{} {} is {status}; it was loaded only because of --allow-unsigned",
            bundle.name(),
            bundle.version()
        )),
    }
}

/// Read a JSON file strictly; a finding (exit 2 for I/O, 1 for bad JSON) otherwise.
pub fn read_json(path: &Path) -> Result<serde_json::Value, Finding> {
    let bytes = read_operator_file(path)?;
    skillbundle::wire::json::parse(&bytes).map_err(|e| e.into_finding(path))
}

/// The bytes of a file the operator named: see [`read_json`].
pub fn read_operator_file(path: &Path) -> Result<Vec<u8>, Finding> {
    use skillbundle::fs::operator_file::ReadError;
    // A file the operator named (a request, a result, a record, a base card): a regular
    // file only, at most the example size limit.
    let max = skillbundle::schema::limits::Limits::default().max_example_bytes;
    let bytes = skillbundle::fs::operator_file::read(path, max).map_err(|e| {
        let message = match &e {
            ReadError::Io(io) => format!("cannot read the file: {io}"),
            _ => e.to_string(),
        };
        Finding::at_file(Code::from(&e), message, path)
    })?;
    Ok(bytes)
}

/// "1 skill", "3 skills".
pub fn count(n: usize) -> String {
    format!("{n} skill{}", if n == 1 { "" } else { "s" })
}
