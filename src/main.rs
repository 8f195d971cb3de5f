//! The `skillbundle` command: parses flags, calls the library, renders findings.
//!
//! Everything that decides anything lives in the library; this file only turns its data
//! into text (human or JSON) and exit statuses: 0 all good, 1 the input failed a check,
//! 2 usage or I/O error.

// Findings travel on cold error paths only, as in the library.
#![allow(clippy::result_large_err)]

#[cfg(feature = "oci")]
mod cli_pull;
#[cfg(feature = "oci")]
mod cli_push;
mod render;

use clap::{Args, CommandFactory, Parser, Subcommand};
use render::Format;
use serde_json::{json, Value};
use skillbundle::agent::Request;
use skillbundle::bundle::{Bundle, SignatureStatus, TrustedKeys};
use skillbundle::finding::{Code, Finding, Location};
use skillbundle::keys::{PublicKey, SigningKeyPair};
use skillbundle::{a2a, bundle, evolution, pipeline};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "skillbundle",
    version,
    about = "Release pipeline for schema-governed A2A skills",
    long_about = "skillbundle reads per-skill YAML manifests and JSON Schemas, checks them strictly, \
assembles one Skill Interface Document per skill (draft \"schema interfaces\", interface version 1.0), \
digests it with RFC 8785 (JCS) + SHA-256, and writes a reproducible bundle that agents load at start-up.",
    after_help = "Examples:\n  skillbundle build example-skills          check, then write example-skills/dist/<name>-<version>.tar.gz\n  skillbundle build --locked .              what CI runs: fail if skillbundle.lock would change\n  skillbundle check example-skills          run every check, write nothing\n  skillbundle diff old.tar.gz .             every change since a release, and the version steps it needs\n  skillbundle keygen --out keys/release     make a signing key pair\n  skillbundle build example-skills --sign-key keys/release.key\n  skillbundle verify dist/bundle.tar.gz --trust keys/release.jwk.json\n  skillbundle inspect dist/bundle.tar.gz    list skills, versions and digests of a bundle\n  skillbundle digest schemas/input.json     print a schema's sha256: digest\n\nExit status: 0 all good, 1 the input failed a check, 2 usage or I/O error."
)]
struct Cli {
    /// Output format: `human` for people; `json` for one machine-readable document on
    /// stdout; `github` for GitHub Actions annotations on the pull request's lines; `sarif`
    /// (2.1.0) for code scanning.
    #[arg(long, value_enum, default_value_t = Format::Human, global = true)]
    format: Format,
    /// Worker threads for the per-skill checks and for loading a bundle [default:
    /// RAYON_NUM_THREADS when set, otherwise one per CPU]. The output is the same bytes
    /// whatever the number.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  skillbundle completions bash > /etc/bash_completion.d/skillbundle\n  skillbundle completions zsh > \"${fpath[1]}/_skillbundle\"\n  skillbundle completions fish > ~/.config/fish/completions/skillbundle.fish"
    )]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) generated from this help.
    #[command(after_help = "Example:\n  skillbundle man > skillbundle.1 && man ./skillbundle.1")]
    Man,
    /// Create a new workspace with one complete skill that passes `check` and `build`.
    #[command(
        after_help = "Examples:\n  skillbundle init my-skills\n  skillbundle init . --skill check_reachability\n\nExisting files are never overwritten: if any file of the scaffold exists, nothing is written."
    )]
    Init {
        /// The directory to create the workspace in (created if missing).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// The skill_id of the first skill.
        #[arg(long, default_value = "check_reachability")]
        skill: String,
    },
    /// Check a workspace and write its bundle.
    #[command(
        after_help = "Examples:\n  skillbundle build example-skills\n  skillbundle build . --out /tmp/release\n  skillbundle build . --sign-key keys/release.key\n  skillbundle build . --sign-key keys/old.key --sign-key keys/new.key   (key rotation)\n\nSigned bundles stay reproducible: Ed25519 signatures are deterministic.   skillbundle build . --locked                       in CI: the committed lock must already record this release\n  skillbundle build . --previous dist/old.tar.gz     also check against a published bundle\n\nNothing is written unless every check passes; the bundle is written to a temporary file and renamed into place, so an earlier bundle at the same path is never damaged. New schema and skill versions are then recorded in skillbundle.lock (append-only)."
    )]
    Build {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
        /// Where to write `<name>-<version>.tar.gz` [default: WORKSPACE/dist].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Sign manifest.json with this Ed25519 private key (PKCS#8 PEM). Repeat the flag
        /// to sign with several keys, e.g. the old and the new one during a rotation.
        #[arg(long = "sign-key", value_name = "FILE", value_parser = signing_key)]
        sign_key: Vec<SigningKeyPair>,
        /// Fail with lock_outdated, writing nothing, if skillbundle.lock would change.
        #[arg(long)]
        locked: bool,
        /// A previously published bundle: its versions are checked like the lock's.
        #[arg(long, value_name = "BUNDLE")]
        previous: Option<PathBuf>,
    },
    /// Run every check `build` runs, and write nothing.
    #[command(
        after_help = "Examples:\n  skillbundle check example-skills\n  skillbundle check . --previous releases/net-skills-1.4.0.tar.gz\n\nThe release rules compare the workspace with skillbundle.lock (and the --previous bundle): a published version never changes, new versions are higher, and a breaking change needs a MAJOR step."
    )]
    Check {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
        /// A previously published bundle: its versions are checked like the lock's.
        #[arg(long, value_name = "BUNDLE")]
        previous: Option<PathBuf>,
    },
    /// Show every change between two workspaces or bundles, and the version steps they need.
    #[command(
        after_help = "Examples:\n  skillbundle diff releases/net-skills-1.4.0.tar.gz .\n  skillbundle diff old-checkout/ new-checkout/ --format json | jq '.skills[] | select(.satisfied | not)'\n\nEach OLD and NEW is a workspace directory or a bundle (.tar.gz). Input schemas may only widen (accept more); output and record schemas may only narrow. A change the rules cannot decide counts as breaking. Exit status 0 when the comparison ran, whatever it found."
    )]
    Diff {
        /// The earlier workspace or bundle.
        old: PathBuf,
        /// The later workspace or bundle.
        new: PathBuf,
    },
    /// Show the skills, versions and digests in a bundle.
    #[command(
        after_help = "Examples:\n  skillbundle inspect example-skills/dist/example-network-skills-0.1.0.tar.gz\n  skillbundle inspect --format json bundle.tar.gz | jq '.skills[].interface_digest'"
    )]
    Inspect {
        /// The bundle (.tar.gz).
        bundle: PathBuf,
    },
    /// Print the schema digest (sha256 of the JCS bytes) of each JSON file.
    #[command(
        after_help = "Example:\n  skillbundle digest skills/*/schemas/*.json\n\nThe digest is what a Schema Reference's `digest` member must carry for that schema."
    )]
    Digest {
        /// JSON files (YAML files are converted under the same rules).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Generate an Ed25519 signing key pair.
    #[command(
        after_help = "Examples:\n  skillbundle keygen --out keys/release          writes keys/release.key and keys/release.jwk.json\n  skillbundle keygen --out keys/release --pem    also writes keys/release.pub.pem\n\nThe private key (PREFIX.key, PKCS#8 PEM that OpenSSL reads, mode 0600) signs bundles: keep it secret.\nThe public JWK (PREFIX.jwk.json, kid = RFC 7638 thumbprint) is what agents trust with --trust.\nExisting files are never replaced without --force."
    )]
    Keygen {
        /// Path prefix of the files to write.
        #[arg(long, value_name = "PREFIX")]
        out: PathBuf,
        /// Also write the public key as SPKI PEM (PREFIX.pub.pem).
        #[arg(long)]
        pem: bool,
        /// Replace existing key files.
        #[arg(long)]
        force: bool,
    },
    /// Verify a bundle as an agent loads it: signatures, digests, documents, validators.
    #[command(
        after_help = "Examples:\n  skillbundle verify dist/example-network-skills-0.1.0.tar.gz --trust keys/release.jwk.json\n  skillbundle verify bundle.tar.gz --trust old.jwk.json --trust new.jwk.json\n  skillbundle verify bundle.tar.gz --allow-unsigned      (development only: says the bundle is unsigned)\n  skillbundle verify oci://registry.example.com/skills/net:0.2.0 --trust keys/trusted.jwks.json\n\nAny failure refuses the whole bundle (exit status 1) with bundle_invalid, digest_mismatch,\nsignature_invalid, untrusted_key, interface_invalid or resource_limit_exceeded."
    )]
    Verify {
        /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
        bundle: PathBuf,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Print the describe_skill result object for a skill of a verified bundle.
    #[command(
        after_help = "Example:\n  skillbundle describe bundle.tar.gz evaluate_resource_condition --trust keys/release.jwk.json\n\nPrints {\"skill\":\"describe_skill\",\"result\":{\"interface_digest\",\"interface\"}}: the data an agent returns\nin the describe_skill Artifact. An unknown skill prints the skill_not_advertised error object (exit status 1)."
    )]
    Describe {
        /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
        bundle: PathBuf,
        /// The skill_id to describe.
        skill_id: String,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Print the Agent Card fragment of a verified bundle, or merge it into a base card.
    #[command(
        after_help = "Examples:\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json --base agent-card.json > card.json\n\nWith --base, the extension is appended to capabilities.extensions and the skills (describe_skill\nincluded) to skills; a skill id already in the base is refused, and the result must be an A2A 1.0 AgentCard."
    )]
    Card {
        /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
        bundle: PathBuf,
        /// A base A2A 1.0 AgentCard (JSON) to merge the fragment into.
        #[arg(long, value_name = "FILE")]
        base: Option<PathBuf>,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Check a request, result or supporting record against a verified bundle, as the agent would.
    #[command(
        after_help = "Examples:\n  skillbundle validate bundle.tar.gz --trust k.jwk.json --request request.json\n  skillbundle validate bundle.tar.gz --trust k.jwk.json --result evaluate_resource_condition result.json\n  skillbundle validate bundle.tar.gz --trust k.jwk.json --record evaluate_resource_condition resource-observation record.json\n\n--request takes a skill request object ({\"skill\",\"skill_version\",\"interface_digest\",\"arguments\"});\n--result takes the domain output (the skill result object's \"result\" member); --record a complete record.\nWhen invalid, prints the draft's error object (interface_mismatch, input_invalid, output_invalid, ...) and exits 1."
    )]
    #[command(group(clap::ArgGroup::new("what").required(true).args(["request", "result", "record"])))]
    Validate {
        /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
        bundle: PathBuf,
        /// A skill request object (JSON file).
        #[arg(long, value_name = "FILE")]
        request: Option<PathBuf>,
        /// A skill's domain output (JSON file).
        #[arg(long, num_args = 2, value_names = ["SKILL_ID", "FILE"])]
        result: Option<Vec<String>>,
        /// A supporting record of a kind the skill declares (JSON file).
        #[arg(long, num_args = 3, value_names = ["SKILL_ID", "KIND", "FILE"])]
        record: Option<Vec<String>>,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Verify a bundle and push it to an OCI registry as a skillbundle artifact.
    #[cfg(feature = "oci")]
    #[command(after_help = cli_push::AFTER_HELP)]
    Push {
        /// The bundle (.tar.gz).
        bundle: PathBuf,
        /// Where to push: [oci://]REGISTRY/REPOSITORY:TAG.
        reference: String,
        /// Move a tag that names a release version even if it points to other content.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Pull a bundle from an OCI registry, verify it, and write it only if all passed.
    #[cfg(feature = "oci")]
    #[command(after_help = cli_pull::AFTER_HELP)]
    Pull {
        /// [oci://]REGISTRY/REPOSITORY:TAG or [oci://]REGISTRY/REPOSITORY@sha256:DIGEST.
        reference: String,
        /// The directory to write <name>-<version>.tar.gz into.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// An agent state directory: refuse rollbacks below the highest version it
        /// records, and record what was accepted.
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
        #[command(flatten)]
        trust: TrustArgs,
    },
}

/// How a bundle is trusted; the same for every command that loads one.
#[derive(Args)]
struct TrustArgs {
    /// A public key trusted to sign bundles: a JWK (PREFIX.jwk.json), an SPKI PEM file,
    /// or a JWK Set ({"keys": [...]}) holding several, e.g. during a rotation. Repeatable.
    #[arg(long = "trust", value_name = "KEY", value_parser = key_set)]
    trust: Vec<KeySet>,
    /// Accept a bundle that has no signature (development only; the output says so).
    #[arg(long)]
    allow_unsigned: bool,
    /// Talk to the registry of an oci:// reference over plain HTTP, without TLS.
    #[cfg(feature = "oci")]
    #[arg(long)]
    plain_http: bool,
}

/// The keys of one `--trust` file.
#[derive(Clone)]
struct KeySet(Vec<PublicKey>);

fn key_set(path: &str) -> Result<KeySet, String> {
    skillbundle::keys::read_key_set(Path::new(path))
        .map(KeySet)
        .map_err(|e| e.to_string())
}

impl TrustArgs {
    fn keys(&self) -> TrustedKeys {
        let keys = TrustedKeys::new(self.trust.iter().flat_map(|s| s.0.clone()).collect());
        if self.allow_unsigned {
            keys.and_allow_unsigned()
        } else {
            keys
        }
    }
}

fn signing_key(path: &str) -> Result<SigningKeyPair, String> {
    SigningKeyPair::read_pem_file(Path::new(path)).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = cli.format;
    if let Some(jobs) = cli.jobs {
        // Without --jobs, rayon sizes its pool from RAYON_NUM_THREADS or the CPU count.
        // This is the first use of the global pool, so building it cannot fail here.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(jobs))
            .build_global();
    }
    match cli.command {
        Command::Init { dir, skill } => init(format, &dir, &skill),
        Command::Build {
            workspace,
            out,
            sign_key,
            locked,
            previous,
        } => {
            let ledger = evolution::Options {
                previous,
                locked,
                ignore_ledger: false,
            };
            build(format, &workspace, out, sign_key, ledger)
        }
        Command::Check {
            workspace,
            previous,
        } => {
            let ledger = evolution::Options {
                previous,
                ..evolution::Options::default()
            };
            check(format, &workspace, &ledger)
        }
        Command::Diff { old, new } => diff(format, &old, &new),
        Command::Inspect { bundle } => inspect(format, &bundle),
        Command::Digest { files } => digest(format, &files),
        Command::Keygen { out, pem, force } => keygen(format, &out, pem, force),
        Command::Verify { bundle, trust } => verify(format, &bundle, &trust),
        Command::Describe {
            bundle,
            skill_id,
            trust,
        } => describe(format, &bundle, &skill_id, &trust),
        Command::Card {
            bundle,
            base,
            trust,
        } => card(format, &bundle, base.as_deref(), &trust),
        Command::Validate {
            bundle,
            request,
            result,
            record,
            trust,
        } => validate(format, &bundle, &trust, request, result, record),
        #[cfg(feature = "oci")]
        Command::Push {
            bundle,
            reference,
            force,
            trust,
        } => cli_push::push(
            format,
            &bundle,
            &reference,
            &trust.keys(),
            trust.plain_http,
            force,
        ),
        #[cfg(feature = "oci")]
        Command::Pull {
            reference,
            out,
            state,
            trust,
        } => cli_pull::pull(
            format,
            &reference,
            &trust.keys(),
            &out,
            state.as_deref(),
            trust.plain_http,
        ),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "skillbundle",
                &mut std::io::stdout(),
            );
            ExitCode::SUCCESS
        }
        Command::Man => {
            let page = clap_mangen::Man::new(Cli::command());
            match page.render(&mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: cannot write the man page: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

fn skills_json(checked: &pipeline::Checked) -> Vec<Value> {
    checked
        .skills
        .iter()
        .map(|s| {
            json!({
                "skill_id": s.interface.skill_id,
                "skill_version": s.interface.skill_version.to_string(),
                "interface_digest": s.interface.digest.as_str(),
            })
        })
        .collect()
}

/// A progress bar on stderr for human output on a terminal: the number of skills
/// checked and the elapsed time. Nothing at all in json/github/sarif output or when
/// stderr is not a terminal.
fn progress(format: Format) -> (pipeline::Progress, Option<indicatif::ProgressBar>) {
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

fn check(format: Format, workspace: &Path, ledger: &evolution::Options) -> ExitCode {
    let (observer, bar) = progress(format);
    let checked = pipeline::check_with(workspace, &observer, ledger);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let doc =
        json!({"ok": checked.ok(), "skills": skills_json(&checked), "findings": checked.findings});
    render::report(format, &checked.findings, &doc, || {
        let mut lines: Vec<String> = checked
            .skills
            .iter()
            .map(|s| {
                format!(
                    "  {} {} {}",
                    s.interface.skill_id, s.interface.skill_version, s.interface.digest
                )
            })
            .collect();
        lines.insert(
            0,
            format!("checked {}: all checks passed", count(checked.skills.len())),
        );
        lines
    })
}

fn build(
    format: Format,
    workspace: &Path,
    out: Option<PathBuf>,
    sign_keys: Vec<SigningKeyPair>,
    ledger: evolution::Options,
) -> ExitCode {
    let out = out.unwrap_or_else(|| workspace.join("dist"));
    let signed_by: Vec<String> = sign_keys
        .iter()
        .map(|k| k.public_key().kid().to_string())
        .collect();
    let (observer, bar) = progress(format);
    let options = pipeline::BuildOptions {
        sign_keys,
        progress: observer,
        evolution: ledger,
    };
    let built = pipeline::build(workspace, &out, &options);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let checked = &built.checked;
    let lock = built.lock.as_ref().map(|l| {
        json!({
            "path": l.path,
            "updated": l.changed && checked.ok(),
            "added_schemas": l.added_schemas.iter().map(|(u, v)| json!({"schema_uri": u, "version": v})).collect::<Vec<_>>(),
            "added_skills": l.added_skills.iter().map(|(s, v)| json!({"skill_id": s, "skill_version": v})).collect::<Vec<_>>(),
        })
    });
    let doc = json!({
        "ok": checked.ok() && built.bundle.is_some(),
        "bundle": built.bundle,
        "lock": lock,
        "signed_by": signed_by,
        "skills": skills_json(checked),
        "findings": checked.findings,
    });
    render::report(format, &checked.findings, &doc, || {
        let mut lines = vec![format!(
            "built {} ({}, {})",
            built.bundle.as_deref().unwrap_or(Path::new("?")).display(),
            count(checked.skills.len()),
            if signed_by.is_empty() {
                "unsigned".to_string()
            } else {
                format!("signed by {}", signed_by.join(", "))
            }
        )];
        lines.extend(checked.skills.iter().map(|s| {
            format!(
                "  {} {} {}",
                s.interface.skill_id, s.interface.skill_version, s.interface.digest
            )
        }));
        if let Some(l) = &built.lock {
            let n = l.added_schemas.len() + l.added_skills.len();
            lines.push(if l.changed {
                format!(
                    "recorded {n} new entr{} in {}",
                    if n == 1 { "y" } else { "ies" },
                    l.path.display()
                )
            } else {
                format!("{} is up to date", l.path.display())
            });
        }
        lines
    })
}

fn diff(format: Format, old: &Path, new: &Path) -> ExitCode {
    let (a, b) = (evolution::snapshot(old), evolution::snapshot(new));
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            let mut findings: Vec<Finding> = Vec::new();
            findings.extend(a.err().unwrap_or_default());
            findings.extend(b.err().unwrap_or_default());
            return render::report(
                format,
                &findings,
                &json!({"ok": false, "findings": findings}),
                Vec::new,
            );
        }
    };
    let d = evolution::diff(&a, &b);
    let doc = json!({
        "ok": true,
        "satisfied": d.satisfied(),
        "skills": d.skills,
        "findings": [],
    });
    render::report(format, &[], &doc, || render::diff_lines(&d))
}

fn inspect(format: Format, path: &Path) -> ExitCode {
    let fail = |code, msg: String| {
        let f = vec![Finding::new(code, msg, Location::file(path))];
        render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new)
    };
    let limits = bundle::archive::ReadLimits::default();
    // The same bounded read `verify` uses.
    let bytes = match bundle::read_file(path, limits.max_total_bytes) {
        Ok(b) => b,
        Err(f) => return fail(f.code, f.message),
    };
    let files = match bundle::archive::read(&bytes, limits) {
        Ok(f) => f,
        Err(e) => {
            let code = if e.limit {
                Code::ResourceLimitExceeded
            } else {
                Code::BundleInvalid
            };
            return fail(code, e.message);
        }
    };
    let Some(manifest_bytes) = files.get(bundle::MANIFEST_PATH) else {
        return fail(
            Code::BundleInvalid,
            "the archive has no manifest.json".into(),
        );
    };
    let manifest = match skillbundle::json::parse(manifest_bytes) {
        Ok(m) => m,
        Err(e) => return fail(Code::BundleInvalid, format!("manifest.json: {e}")),
    };
    let summary = bundle::summary(&manifest);
    match format {
        Format::Json => render::print_json(&summary),
        Format::Human | Format::Github | Format::Sarif => {
            let b = &summary["bundle"];
            println!(
                "{} {}",
                b["name"].as_str().unwrap_or("?"),
                b["version"].as_str().unwrap_or("?")
            );
            for s in summary["skills"].as_array().into_iter().flatten() {
                println!(
                    "  {} {} {}",
                    s["skill_id"].as_str().unwrap_or("?"),
                    s["skill_version"].as_str().unwrap_or("?"),
                    s["interface_digest"].as_str().unwrap_or("?")
                );
                for r in s["schemas"].as_array().into_iter().flatten() {
                    let role = match r["kind"].as_str() {
                        Some(k) => format!("record {k}"),
                        None => r["role"].as_str().unwrap_or("?").to_string(),
                    };
                    println!(
                        "    {role}: {} {} {}",
                        r["schema_uri"].as_str().unwrap_or("?"),
                        r["version"].as_str().unwrap_or("?"),
                        r["digest"].as_str().unwrap_or("?")
                    );
                }
            }
        }
    }
    ExitCode::SUCCESS
}

fn digest(format: Format, files: &[PathBuf]) -> ExitCode {
    let mut findings = Vec::new();
    let mut digests = Vec::new();
    for file in files {
        match skillbundle::workspace::read_value(
            file,
            file,
            u64::MAX,
            skillbundle::json::DEFAULT_MAX_DEPTH,
        ) {
            Ok((value, _)) => digests.push((file, skillbundle::digest::Digest::of_value(&value))),
            Err(f) => findings.push(f),
        }
    }
    let doc = json!({
        "ok": findings.is_empty(),
        "digests": digests.iter().map(|(f, d)| json!({"file": f, "digest": d})).collect::<Vec<_>>(),
        "findings": findings,
    });
    render::report(format, &findings, &doc, || {
        digests
            .iter()
            .map(|(f, d)| format!("{d}  {}", f.display()))
            .collect()
    })
}

fn init(format: Format, dir: &Path, skill: &str) -> ExitCode {
    match skillbundle::init::write(dir, skill) {
        Ok(written) => {
            let doc = json!({"ok": true, "written": written});
            render::report(format, &[], &doc, || {
                let mut lines = vec![format!(
                    "created a workspace in {} with skill {skill}:",
                    dir.display()
                )];
                lines.extend(written.iter().map(|p| format!("  {}", p.display())));
                lines.push(format!(
                    "next: skillbundle check {0} && skillbundle build {0}",
                    dir.display()
                ));
                lines
            })
        }
        Err(e) => {
            let code = match e {
                skillbundle::init::InitError::Io(..) => Code::Io,
                _ => Code::PathInvalid,
            };
            let f = vec![Finding::new(code, e.to_string(), Location::file(dir))];
            render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new)
        }
    }
}

fn keygen(format: Format, prefix: &Path, pem: bool, force: bool) -> ExitCode {
    if let Some(dir) = prefix.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            let f = vec![Finding::at_file(
                Code::Io,
                format!("cannot create the directory: {e}"),
                dir,
            )];
            return render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new);
        }
    }
    let written = SigningKeyPair::generate().and_then(|key| {
        let files = skillbundle::keys::write_key_files(prefix, &key, pem, force)?;
        Ok((key.public_key(), files))
    });
    let (public, files) = match written {
        Ok(w) => w,
        Err(e) => {
            let f = vec![Finding::at_file(Code::Io, e.to_string(), prefix)];
            return render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new);
        }
    };
    let doc = json!({"ok": true, "kid": public.kid(), "files": files, "findings": []});
    render::report(format, &[], &doc, || {
        let mut lines = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let what = match i {
                0 => "private key: keep it secret; sign with `build --sign-key`",
                1 => "public key (JWK): give it to agents for `--trust`",
                _ => "public key (SPKI PEM)",
            };
            lines.push(format!("wrote {}  ({what})", f.display()));
        }
        lines.push(format!("kid {}", public.kid()));
        lines
    })
}

/// Load a bundle the way every agent-side command does; on failure, report the
/// findings and return the exit status.
fn load(format: Format, path: &Path, trust: &TrustArgs) -> Result<Bundle, ExitCode> {
    let keys = trust.keys();
    #[cfg(feature = "oci")]
    let pulled = path
        .to_str()
        .and_then(|text| cli_pull::open_reference(text, &keys, trust.plain_http));
    #[cfg(not(feature = "oci"))]
    let pulled = None;
    let bundle = pulled
        .unwrap_or_else(|| Bundle::open_path(path, &keys))
        .map_err(|findings| {
            let doc = json!({"ok": false, "findings": findings});
            render::report_with(format, &findings, &doc, Vec::new, "the bundle was refused")
        })?;
    if let Some(warning) = unverified_warning(&bundle) {
        render::warn(format, &warning);
    }
    Ok(bundle)
}

fn unverified_warning(bundle: &Bundle) -> Option<String> {
    match bundle.signature() {
        SignatureStatus::Verified { .. } => None,
        status => Some(format!(
            "{} {} is {status}; it was loaded only because of --allow-unsigned",
            bundle.name(),
            bundle.version()
        )),
    }
}

fn signature_json(status: &SignatureStatus) -> Value {
    match status {
        SignatureStatus::Verified { by } => json!({"status": "verified", "signed_by": by}),
        SignatureStatus::Unsigned => json!({"status": "unsigned"}),
        SignatureStatus::NotVerified { signatures } => {
            json!({"status": "not_verified", "signatures": signatures})
        }
    }
}

fn verify(format: Format, path: &Path, trust: &TrustArgs) -> ExitCode {
    let bundle = match load(format, path, trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let skills: Vec<Value> = bundle
        .advertised()
        .into_iter()
        .map(|a| {
            json!({
                "skill_id": a.skill_id,
                "skill_version": a.skill_version,
                "interface_digest": a.interface_digest,
            })
        })
        .collect();
    let doc = json!({
        "ok": true,
        "bundle": {"name": bundle.name(), "version": bundle.version()},
        "signature": signature_json(bundle.signature()),
        "warnings": unverified_warning(&bundle).into_iter().collect::<Vec<_>>(),
        "skills": skills,
        "findings": [],
    });
    let code = render::report(format, &[], &doc, || {
        let first = match bundle.signature() {
            SignatureStatus::Verified { by } => format!(
                "verified {} {}: {}, signed by {}",
                bundle.name(),
                bundle.version(),
                count(skills.len()),
                by.join(", ")
            ),
            status => format!(
                "loaded {} {}: {}, but {status}",
                bundle.name(),
                bundle.version(),
                count(skills.len())
            ),
        };
        let mut lines = vec![first];
        lines.extend(bundle.advertised().into_iter().map(|a| {
            format!(
                "  {} {} {}",
                a.skill_id, a.skill_version, a.interface_digest
            )
        }));
        lines
    });
    // The process exits next, and the OS takes the memory back at once: freeing every
    // compiled validator one by one first would only delay the exit (about a twentieth
    // of verify's instructions on a bundle of generated skills).
    std::mem::forget(bundle);
    code
}

fn describe(format: Format, path: &Path, skill_id: &str, trust: &TrustArgs) -> ExitCode {
    let bundle = match load(format, path, trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    match bundle.describe_skill(skill_id) {
        Ok(object) => {
            render::print_json(&object);
            ExitCode::SUCCESS
        }
        Err(e) => render::error_object(format, &e),
    }
}

/// Read a JSON file strictly; a finding (exit 2 for I/O, 1 for bad JSON) otherwise.
fn read_json(path: &Path) -> Result<Value, Finding> {
    let bytes = std::fs::read(path)
        .map_err(|e| Finding::at_file(Code::Io, format!("cannot read the file: {e}"), path))?;
    skillbundle::json::parse(&bytes).map_err(|e| e.into_finding(path))
}

fn card(format: Format, path: &Path, base: Option<&Path>, trust: &TrustArgs) -> ExitCode {
    let bundle = match load(format, path, trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let Some(base) = base else {
        render::print_json(bundle.card_fragment());
        return ExitCode::SUCCESS;
    };
    let fail = |f: Finding| {
        let f = vec![f];
        render::report_with(
            format,
            &f,
            &json!({"ok": false, "findings": f}),
            Vec::new,
            "no card was printed",
        )
    };
    let base_card = match read_json(base) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    match a2a::merge_card(&base_card, bundle.extension(), bundle.agent_skills()) {
        Ok(card) => {
            render::print_json(&card);
            ExitCode::SUCCESS
        }
        Err(e) => {
            let code = match e {
                a2a::CardError::DuplicateSkill(_) => Code::DuplicateSkill,
                _ => Code::CardInvalid,
            };
            fail(Finding::at_file(code, e.to_string(), base))
        }
    }
}

/// What `validate` checks.
enum Subject {
    Request,
    Result(String),
    Record(String, String),
}

fn validate(
    format: Format,
    path: &Path,
    trust: &TrustArgs,
    request: Option<PathBuf>,
    result: Option<Vec<String>>,
    record: Option<Vec<String>>,
) -> ExitCode {
    let bundle = match load(format, path, trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    // clap guarantees exactly one of the three, with 1, 2 and 3 values.
    let (subject, file) = match (request, result, record) {
        (Some(file), _, _) => (Subject::Request, file),
        (_, Some(mut a), _) if a.len() == 2 => {
            let file = PathBuf::from(a.pop().unwrap_or_default());
            (Subject::Result(a.remove(0)), file)
        }
        (_, _, Some(mut a)) if a.len() == 3 => {
            let file = PathBuf::from(a.pop().unwrap_or_default());
            let kind = a.pop().unwrap_or_default();
            (Subject::Record(a.remove(0), kind), file)
        }
        _ => {
            eprintln!("error: give one of --request FILE, --result SKILL_ID FILE, --record SKILL_ID KIND FILE");
            return ExitCode::from(2);
        }
    };
    let value = match read_json(&file) {
        Ok(v) => v,
        Err(f) => {
            let f = vec![f];
            return render::report_with(
                format,
                &f,
                &json!({"ok": false, "findings": f}),
                Vec::new,
                "nothing was validated",
            );
        }
    };
    let outcome = match &subject {
        Subject::Request => bundle.check_request(&value).map(|r| match r {
            Request::Describe { skill_id } => {
                format!("valid: a describe_skill request for {skill_id}")
            }
            Request::Invoke { skill_id, .. } => format!(
                "valid: the request names the active interface of {skill_id} and its arguments conform to its input_schema"
            ),
        }),
        Subject::Result(skill_id) => bundle
            .check_result(skill_id, &value)
            .map(|()| format!("valid: the result conforms to the output_schema of {skill_id}")),
        Subject::Record(skill_id, kind) => {
            bundle.check_record(skill_id, kind, &value).map(|()| {
                format!("valid: the {kind} record conforms to the schema {skill_id} declares for it")
            })
        }
    };
    match outcome {
        Ok(line) => render::report(format, &[], &json!({"ok": true, "findings": []}), || {
            vec![line]
        }),
        Err(e) => render::error_object(format, &e),
    }
}

/// "1 skill", "3 skills".
fn count(n: usize) -> String {
    format!("{n} skill{}", if n == 1 { "" } else { "s" })
}
