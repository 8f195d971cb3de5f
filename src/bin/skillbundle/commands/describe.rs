//! `skillbundle describe`: the describe_skill result an agent serving the bundle returns.

use super::{load, TrustArgs};
use crate::output;
use crate::render::{self, Format};
use std::path::PathBuf;
use std::process::ExitCode;

/// Print the describe_skill result object for a skill of a verified bundle.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  skillbundle describe bundle.tar.gz evaluate_resource_condition --trust keys/release.jwk.json\n\nPrints {\"skill\":\"describe_skill\",\"result\":{\"interface_digest\",\"interface\"}}: the data an agent returns\nin the describe_skill Artifact. An unknown skill prints the skill_not_advertised error object (exit status 1)."
)]
pub struct Args {
    /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
    bundle: PathBuf,
    /// The skill_id to describe.
    skill_id: String,
    #[command(flatten)]
    trust: TrustArgs,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let bundle = match load(format, &args.bundle, &args.trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    match bundle.describe_skill(&args.skill_id) {
        Ok(object) => {
            output::json(&object);
            ExitCode::SUCCESS
        }
        Err(e) => render::error_object(format, &e),
    }
}
