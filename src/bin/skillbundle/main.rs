//! The `skillbundle` command: wiring only.
//!
//! Everything that decides anything lives in the library; each subcommand's arguments,
//! report and handler live in `commands/<name>.rs`; `render` turns findings into text
//! and `output` owns stdout. This file parses the command line and dispatches. Exit
//! status: 0 all good, 1 the input failed a check, 2 usage or I/O error.

// Findings travel on cold error paths only, as in the library.
#![allow(clippy::result_large_err)]

mod commands;
mod interrupt;
mod output;
mod render;

use clap::{CommandFactory, Parser, Subcommand};
use commands::*;
use render::Format;
use std::process::ExitCode;

/// mimalloc instead of the system allocator: see Cargo.toml (the library sets none; its
/// Python extension, built without the CLI, sets the same).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "skillbundle",
    version,
    about = "Release pipeline for schema-governed A2A skills",
    long_about = "skillbundle reads per-skill YAML manifests and JSON Schemas, checks them strictly, \
assembles one Skill Interface Document per skill (draft \"schema interfaces\", interface version 1.0), \
digests it with RFC 8785 (JCS) + SHA-256, and writes a reproducible bundle that agents load at start-up.",
    after_help = "Examples:\n  skillbundle build example-skills          check, then write example-skills/dist/<name>-<version>.tar.gz\n  skillbundle build --locked .              what CI runs: fail if skillbundle.lock would change\n  skillbundle check example-skills          run every check, write nothing\n  skillbundle diff old.tar.gz .             every change since a release, and the version steps it needs\n  skillbundle keygen --out keys/release     make a signing key pair\n  skillbundle build example-skills --sign-key keys/release.key\n  skillbundle verify dist/bundle.tar.gz --trust keys/release.jwk.json\n  skillbundle inspect dist/bundle.tar.gz    list skills, versions and digests of a bundle\n  skillbundle digest schemas/input.json     print a schema's sha256: digest\n\nExit status: 0 all good, 1 the input failed a check (a refusal to overwrite an existing file\nincluded: path_invalid), 2 usage or I/O error. When the reader of stdout goes away (| head),\nthe command stops quietly with the status it had."
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
    /// Print only what failed: no success lines and no warnings in human and github
    /// output (json and sarif documents are unchanged).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Completions(completions::Args),
    Man(man::Args),
    Init(init::Args),
    Build(build::Args),
    Check(check::Args),
    Diff(diff::Args),
    Inspect(inspect::Args),
    Digest(digest::Args),
    Keygen(keygen::Args),
    Verify(verify::Args),
    SignFiles(files::SignArgs),
    VerifyFiles(files::VerifyArgs),
    Describe(describe::Args),
    Card(card::Args),
    VerifyCard(card::VerifyArgs),
    Client(client::Args),
    #[cfg(feature = "client")]
    Call(call::Args),
    #[cfg(feature = "client")]
    Probe(probe::Args),
    Validate(validate::Args),
    #[cfg(feature = "oci")]
    Push(push::Args),
    #[cfg(feature = "oci")]
    Pull(pull::Args),
    #[cfg(feature = "gateway")]
    Serve(Box<serve::Args>),
}

fn main() -> ExitCode {
    let cli = Cli::try_parse();
    // Parsing starts no thread, so the signal mask is still set before any other starts.
    // `serve` takes SIGTERM and SIGINT itself, for a graceful shutdown.
    #[cfg(feature = "gateway")]
    let serving = matches!(
        &cli,
        Ok(Cli {
            command: Command::Serve(_),
            ..
        })
    );
    #[cfg(not(feature = "gateway"))]
    let serving = false;
    if !serving {
        interrupt::install();
    }
    let cli = match cli {
        Ok(cli) => cli,
        Err(e) => return render::finish(output::clap_exit(&e)),
    };
    let format = cli.format;
    render::set_quiet(cli.quiet);
    if let Some(jobs) = cli.jobs {
        // Without --jobs, rayon sizes its pool from RAYON_NUM_THREADS or the CPU count.
        // This is the first use of the global pool, so building it cannot fail here.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(jobs))
            .build_global();
    }
    let status = match cli.command {
        Command::Completions(args) => completions::run(args, Cli::command()),
        Command::Man(args) => man::run(args, Cli::command()),
        Command::Init(args) => init::run(format, args),
        Command::Build(args) => build::run(format, args),
        Command::Check(args) => check::run(format, args),
        Command::Diff(args) => diff::run(format, args),
        Command::Inspect(args) => inspect::run(format, args),
        Command::Digest(args) => digest::run(format, args),
        Command::Keygen(args) => keygen::run(format, args),
        Command::Verify(args) => verify::run(format, args),
        Command::SignFiles(args) => files::run_sign(format, args),
        Command::VerifyFiles(args) => files::run_verify(format, args),
        Command::Describe(args) => describe::run(format, args),
        Command::Card(args) => card::run(format, args),
        Command::VerifyCard(args) => card::run_verify(format, args),
        Command::Client(args) => client::run(format, args),
        #[cfg(feature = "client")]
        Command::Call(args) => call::run(format, args),
        #[cfg(feature = "client")]
        Command::Probe(args) => probe::run(format, args),
        Command::Validate(args) => validate::run(format, args),
        #[cfg(feature = "oci")]
        Command::Push(args) => push::run(format, args),
        #[cfg(feature = "oci")]
        Command::Pull(args) => pull::run(format, args),
        #[cfg(feature = "gateway")]
        Command::Serve(args) => serve::run(format, *args),
    };
    render::finish(status)
}
