//! `skillbundle card`: the Agent Card entries of a verified bundle, alone or merged into
//! the agent's own card.

use super::{fail_with, load, read_json, TrustArgs};
use crate::output;
use crate::render::Format;
use skillbundle::a2a;
use skillbundle::finding::{Code, Finding};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Print the Agent Card fragment of a verified bundle, or merge it into a base card.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json\n  skillbundle card bundle.tar.gz --trust keys/release.jwk.json --base agent-card.json > card.json\n\nWith --base, the extension is appended to capabilities.extensions and the skills (describe_skill\nincluded) to skills; a skill id already in the base is refused, and the result must be an A2A 1.0 AgentCard."
)]
pub struct Args {
    /// The bundle (.tar.gz).
    bundle: PathBuf,
    /// A base A2A 1.0 AgentCard (JSON) to merge the fragment into.
    #[arg(long, value_name = "FILE")]
    base: Option<PathBuf>,
    #[command(flatten)]
    trust: TrustArgs,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    card(format, &args.bundle, args.base.as_deref(), &args.trust)
}

fn card(format: Format, path: &Path, base: Option<&Path>, trust: &TrustArgs) -> ExitCode {
    let bundle = match load(format, path, trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let Some(base) = base else {
        output::json(bundle.card_fragment());
        return ExitCode::SUCCESS;
    };
    let fail = |f: Finding| fail_with(format, &[f], "no card was printed");
    let base_card = match read_json(base) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    match a2a::merge_card(&base_card, bundle.extension(), bundle.agent_skills()) {
        Ok(card) => {
            output::json(&card);
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
