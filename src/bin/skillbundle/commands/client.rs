//! `skillbundle client …`: the draft's client-agent checks, for scripts in any language.
//!
//! A client written in another language can shell out for what the draft makes it
//! verify: `check-card` reads an Agent Card's schema-interface advertisement, and
//! `describe-check` verifies a describe_skill response against the card, then
//! optionally checks outgoing arguments (printing the request object to send), a
//! received result or a supporting record. Every refusal prints the draft's error
//! object and exits 1; these are local conditions, with no remote task state.

use crate::render::{self, Format};
use clap::Subcommand;
use serde::Serialize;
use skillbundle::client::{self, CardAdvertisement, VerifiedInterface};
use skillbundle::finding::Finding;
use skillbundle::interface::binding::Binding;
use skillbundle::interface::condition::ErrorObject;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The draft's client-side checks: an Agent Card's advertisement, a describe_skill response.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle client check-card agent-card.json\n  skillbundle client describe-check evaluate_resource_condition response.json --card agent-card.json\n  skillbundle client describe-check evaluate_resource_condition response.json --card agent-card.json --arguments args.json > request.json\n\nEvery refusal prints the draft's error object (skill_not_advertised, unsupported_interface_version,\ninterface_invalid, input_invalid, output_invalid) and exits 1: a local condition, no remote task state."
)]
pub struct Args {
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(Subcommand)]
pub enum ClientCommand {
    /// Read an Agent Card's schema-interface advertisement as a client does (step 1).
    #[command(
        after_help = "Example:\n  skillbundle client check-card agent-card.json\n\nPrints the interface_version and each advertised skill_id, skill_version and interface_digest.\nErrors (exit status 1, the draft's error object on stdout): skill_not_advertised when the card has\nno schema-interface extension; unsupported_interface_version when it advertises a version other\nthan 1.0; interface_invalid when the card lists the extension more than once (version 1.0 allows one\nbinding per skill_id in a card) or the advertisement is malformed (an entry without skill_id,\nskill_version or interface_digest, a skill_id bound twice or to no AgentSkill of the card)."
    )]
    CheckCard {
        /// The Agent Card (JSON), as fetched from the agent.
        card: PathBuf,
    },
    /// Verify a describe_skill response against the Agent Card, then check data with it.
    #[command(
        after_help = "Examples:\n  skillbundle client describe-check evaluate_resource_condition response.json --card card.json\n  skillbundle client describe-check evaluate_resource_condition response.json --card card.json --arguments args.json > request.json\n  skillbundle client describe-check evaluate_resource_condition response.json --card card.json --result result.json\n  skillbundle client describe-check evaluate_resource_condition response.json --card card.json --record resource-observation record.json\n\nRuns the draft's client steps 2-6: the skill and describe_skill must be advertised\n(skill_not_advertised); the returned interface_digest must equal the advertised one and the\ndigest of the returned document; the document must be valid against the Skill Interface Schema,\nbe interface version 1.0 (unsupported_interface_version) and describe the selected skill and\nversion; every inline schema must match its digest and pass the same governance as a bundle's\n(dialect, no external or dangling $ref, meta-schema): otherwise interface_invalid.\n--arguments FILE then validates the outgoing input (input_invalid) and prints the skill request\nobject to send; --result FILE validates a received domain output and --record KIND FILE a\nsupporting record (output_invalid)."
    )]
    #[command(group(clap::ArgGroup::new("data").args(["arguments", "result", "record"])))]
    DescribeCheck {
        /// The skill_id selected from the Agent Card.
        skill_id: String,
        /// The describe_skill result object (the Artifact's Data Part data), JSON.
        response: PathBuf,
        /// The Agent Card the skill was selected from.
        #[arg(long, value_name = "CARD")]
        card: PathBuf,
        /// A domain input to validate; prints the skill request object to send.
        #[arg(long, value_name = "FILE")]
        arguments: Option<PathBuf>,
        /// A received domain output (the skill result object's "result") to validate.
        #[arg(long, value_name = "FILE")]
        result: Option<PathBuf>,
        /// A received supporting record of a declared kind to validate.
        #[arg(long, num_args = 2, value_names = ["KIND", "FILE"])]
        record: Option<Vec<String>>,
    },
}

/// Run one `client` subcommand.
pub fn run(format: Format, args: Args) -> ExitCode {
    match args.command {
        ClientCommand::CheckCard { card } => check_card(format, &card),
        ClientCommand::DescribeCheck {
            skill_id,
            response,
            card,
            arguments,
            result,
            record,
        } => {
            let data = match (arguments, result, record) {
                (Some(file), _, _) => Data::Arguments(file),
                (_, Some(file), _) => Data::Result(file),
                (_, _, Some(mut pair)) if pair.len() == 2 => {
                    let file = PathBuf::from(pair.pop().unwrap_or_default());
                    Data::Record(pair.remove(0), file)
                }
                _ => Data::None,
            };
            describe_check(format, &skill_id, &response, &card, data)
        }
    }
}

/// What `describe-check` checks after the response.
enum Data {
    None,
    Arguments(PathBuf),
    Result(PathBuf),
    Record(String, PathBuf),
}

/// An unreadable or non-JSON file: the finding, exit status 2 or 1.
fn unreadable(format: Format, finding: Finding) -> ExitCode {
    super::fail_with(format, &[finding], "nothing was checked")
}

fn read_card(format: Format, path: &Path) -> Result<CardAdvertisement, ExitCode> {
    let card = super::read_json(path).map_err(|f| unreadable(format, f))?;
    client::read_card(&card).map_err(|e| render::error_object(format, &e))
}

/// `client check-card --format json`.
#[derive(Serialize)]
struct CardReport<'a> {
    ok: bool,
    interface_version: &'a str,
    describe_skill: bool,
    skills: &'a [Binding],
    findings: &'a [Finding],
}

/// `client describe-check --format json`: the verified interface.
#[derive(Serialize)]
struct Checked<'a> {
    ok: bool,
    #[serde(flatten)]
    binding: &'a Binding,
    findings: &'a [Finding],
}

fn check_card(format: Format, path: &Path) -> ExitCode {
    let card = match read_card(format, path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let doc = CardReport {
        ok: true,
        interface_version: &card.interface_version,
        describe_skill: card.describe_skill,
        skills: &card.skills,
        findings: &[],
    };
    render::report(format, &[], &doc, || {
        let mut lines = vec![format!(
            "the card advertises schema interfaces {} for {} skill{}{}",
            card.interface_version,
            card.skills.len(),
            if card.skills.len() == 1 { "" } else { "s" },
            if card.describe_skill {
                ""
            } else {
                ", but not describe_skill: none can be used under the procedure"
            }
        )];
        lines.extend(card.skills.iter().map(super::skill_line));
        lines
    })
}

fn verify(
    format: Format,
    skill_id: &str,
    response: &Path,
    card: &Path,
) -> Result<VerifiedInterface, ExitCode> {
    let card = read_card(format, card)?;
    let fail = |e: ErrorObject| render::error_object(format, &e);
    let selected = card.select(skill_id).map_err(fail)?;
    let response = super::read_json(response).map_err(|f| unreadable(format, f))?;
    client::verify_describe_response(selected, &response).map_err(fail)
}

fn describe_check(
    format: Format,
    skill_id: &str,
    response: &Path,
    card: &Path,
    data: Data,
) -> ExitCode {
    let verified = match verify(format, skill_id, response, card) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let read = |file: &Path| super::read_json(file).map_err(|f| unreadable(format, f));
    let outcome = match &data {
        Data::None => Ok(format!(
            "verified: {} {} {} (every inline schema matches its digest)",
            verified.binding.skill_id,
            verified.binding.skill_version,
            verified.binding.interface_digest
        )),
        Data::Arguments(file) => {
            let arguments = match read(file) {
                Ok(v) => v,
                Err(code) => return code,
            };
            return match verified.request(arguments) {
                Ok(request) => {
                    crate::output::json(&request);
                    ExitCode::SUCCESS
                }
                Err(e) => render::error_object(format, &e),
            };
        }
        Data::Result(file) => match read(file) {
            Ok(v) => verified.check_result(&v).map(|()| {
                format!(
                    "valid: the result conforms to the output_schema of {} {}",
                    verified.binding.skill_id, verified.binding.skill_version
                )
            }),
            Err(code) => return code,
        },
        Data::Record(kind, file) => match read(file) {
            Ok(v) => verified.check_record(kind, &v).map(|()| {
                format!(
                    "valid: the record conforms to the schema {} declares for its kind",
                    verified.binding.skill_id
                )
            }),
            Err(code) => return code,
        },
    };
    match outcome {
        Ok(line) => {
            let doc = Checked {
                ok: true,
                binding: &verified.binding,
                findings: &[],
            };
            render::report(format, &[], &doc, || vec![line])
        }
        Err(e) => render::error_object(format, &e),
    }
}
