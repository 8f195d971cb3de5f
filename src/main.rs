//! The `skillbundle` command: parses flags, calls the library, renders findings.
//!
//! Everything that decides anything lives in the library; this file only turns its data
//! into text (human or JSON) and exit statuses: 0 all good, 1 the input failed a check,
//! 2 usage or I/O error.

// Findings travel on cold error paths only, as in the library.
#![allow(clippy::result_large_err)]

mod render;

use clap::{Parser, Subcommand, ValueEnum};
use render::Format;
use serde_json::{json, Value};
use skillbundle::finding::{Code, Finding, Location};
use skillbundle::keys::SigningKeyPair;
use skillbundle::{bundle, pipeline};
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
    after_help = "Examples:\n  skillbundle build example-skills          check, then write example-skills/dist/<name>-<version>.tar.gz\n  skillbundle check example-skills          run every check, write nothing\n  skillbundle keygen --out keys/release     make a signing key pair\n  skillbundle build example-skills --sign-key keys/release.key\n  skillbundle inspect dist/bundle.tar.gz    list skills, versions and digests of a bundle\n  skillbundle digest schemas/input.json     print a schema's sha256: digest\n\nExit status: 0 all good, 1 the input failed a check, 2 usage or I/O error."
)]
struct Cli {
    /// Output format: `human` for people, `json` for one machine-readable document on stdout.
    #[arg(long, value_enum, default_value_t = FormatArg::Human, global = true)]
    format: FormatArg,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Human,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Check a workspace and write its bundle.
    #[command(
        after_help = "Examples:\n  skillbundle build example-skills\n  skillbundle build . --out /tmp/release\n  skillbundle build . --sign-key keys/release.key\n  skillbundle build . --sign-key keys/old.key --sign-key keys/new.key   (key rotation)\n\nSigned bundles stay reproducible: Ed25519 signatures are deterministic. Nothing is written unless every check passes; the bundle is written to a temporary file and renamed into place, so an earlier bundle at the same path is never damaged."
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
    },
    /// Run every check `build` runs, and write nothing.
    #[command(after_help = "Example:\n  skillbundle check example-skills")]
    Check {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
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
}

fn signing_key(path: &str) -> Result<SigningKeyPair, String> {
    SigningKeyPair::read_pem_file(Path::new(path)).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = match cli.format {
        FormatArg::Human => Format::Human,
        FormatArg::Json => Format::Json,
    };
    match cli.command {
        Command::Build {
            workspace,
            out,
            sign_key,
        } => build(format, &workspace, out, sign_key),
        Command::Check { workspace } => check(format, &workspace),
        Command::Inspect { bundle } => inspect(format, &bundle),
        Command::Digest { files } => digest(format, &files),
        Command::Keygen { out, pem, force } => keygen(format, &out, pem, force),
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

fn check(format: Format, workspace: &Path) -> ExitCode {
    let checked = pipeline::check(workspace);
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
            format!("checked {} skills: all checks passed", checked.skills.len()),
        );
        lines
    })
}

fn build(
    format: Format,
    workspace: &Path,
    out: Option<PathBuf>,
    sign_keys: Vec<SigningKeyPair>,
) -> ExitCode {
    let out = out.unwrap_or_else(|| workspace.join("dist"));
    let signed_by: Vec<String> = sign_keys
        .iter()
        .map(|k| k.public_key().kid().to_string())
        .collect();
    let built = pipeline::build(workspace, &out, &pipeline::BuildOptions { sign_keys });
    let checked = &built.checked;
    let doc = json!({
        "ok": checked.ok() && built.bundle.is_some(),
        "bundle": built.bundle,
        "signed_by": signed_by,
        "skills": skills_json(checked),
        "findings": checked.findings,
    });
    render::report(format, &checked.findings, &doc, || {
        let mut lines = vec![format!(
            "built {} ({} skills, {})",
            built.bundle.as_deref().unwrap_or(Path::new("?")).display(),
            checked.skills.len(),
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
        lines
    })
}

fn inspect(format: Format, path: &Path) -> ExitCode {
    let fail = |code, msg: String| {
        let f = vec![Finding::new(code, msg, Location::file(path))];
        render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new)
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return fail(Code::Io, format!("cannot read the bundle: {e}")),
    };
    let files = match bundle::archive::read(&bytes, bundle::archive::ReadLimits::default()) {
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
        Format::Human => {
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
