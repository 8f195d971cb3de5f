//! `skillbundle validate`: check a request, a result or a supporting record against a
//! verified bundle, as the agent serving it would.

use super::{fail_with, load, read_json, TrustArgs};
use crate::render::{self, Format};
use clap::{value_parser, Arg, ArgGroup, ArgMatches};
use serde::Serialize;
use skillbundle::agent::Request;
use skillbundle::finding::Finding;
use std::path::PathBuf;
use std::process::ExitCode;

/// Check a request, result or supporting record against a verified bundle, as the agent would.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle validate bundle.tar.gz --trust k.jwk.json --request request.json\n  skillbundle validate bundle.tar.gz --trust k.jwk.json --result evaluate_resource_condition result.json\n  skillbundle validate bundle.tar.gz --trust k.jwk.json --record evaluate_resource_condition resource-observation record.json\n\n--request takes a skill request object ({\"skill\",\"skill_version\",\"interface_digest\",\"arguments\"});\n--result takes the domain output (the skill result object's \"result\" member); --record a complete record.\nWhen invalid, prints the draft's error object (interface_mismatch, input_invalid, output_invalid, ...) and exits 1."
)]
pub struct Args {
    /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
    bundle: PathBuf,
    #[command(flatten)]
    subject: Subject,
    #[command(flatten)]
    trust: TrustArgs,
}

/// What `validate` checks, and the file that holds it: exactly one of `--request FILE`,
/// `--result SKILL_ID FILE` and `--record SKILL_ID KIND FILE`.
pub enum Subject {
    Request {
        file: PathBuf,
    },
    Result {
        skill_id: String,
        file: PathBuf,
    },
    Record {
        skill_id: String,
        kind: String,
        file: PathBuf,
    },
}

impl Subject {
    fn file(&self) -> &PathBuf {
        match self {
            Subject::Request { file }
            | Subject::Result { file, .. }
            | Subject::Record { file, .. } => file,
        }
    }
}

// clap's derive has no form for an option taking values of different meanings, so the
// three flags are declared here and turned into a `Subject` once, at parse time.
impl clap::Args for Subject {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            Arg::new("request")
                .long("request")
                .value_name("FILE")
                .value_parser(value_parser!(PathBuf))
                .help("A skill request object (JSON file)"),
        )
        .arg(
            Arg::new("result")
                .long("result")
                .num_args(2)
                .value_names(["SKILL_ID", "FILE"])
                .help("A skill's domain output (JSON file)"),
        )
        .arg(
            Arg::new("record")
                .long("record")
                .num_args(3)
                .value_names(["SKILL_ID", "KIND", "FILE"])
                .help("A supporting record of a kind the skill declares (JSON file)"),
        )
        .group(
            ArgGroup::new("what")
                .required(true)
                .args(["request", "result", "record"]),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for Subject {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let values = |id: &str| -> Vec<String> {
            matches
                .get_many::<String>(id)
                .map(|v| v.cloned().collect())
                .unwrap_or_default()
        };
        if let Some(file) = matches.get_one::<PathBuf>("request") {
            return Ok(Subject::Request { file: file.clone() });
        }
        if let [skill_id, file] = values("result").as_slice() {
            return Ok(Subject::Result {
                skill_id: skill_id.clone(),
                file: file.into(),
            });
        }
        if let [skill_id, kind, file] = values("record").as_slice() {
            return Ok(Subject::Record {
                skill_id: skill_id.clone(),
                kind: kind.clone(),
                file: file.into(),
            });
        }
        // The group and the value counts above make this unreachable from the command
        // line; a caller building matches by hand gets a usage error.
        Err(clap::Error::raw(
            clap::error::ErrorKind::MissingRequiredArgument,
            "give one of --request FILE, --result SKILL_ID FILE, --record SKILL_ID KIND FILE\n",
        ))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// `validate --format json` when the value is valid (an invalid one prints the draft's
/// error object instead).
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let bundle = match load(format, &args.bundle, &args.trust) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let subject = &args.subject;
    let value = match read_json(subject.file()) {
        Ok(v) => v,
        Err(f) => return fail_with(format, &[f], "nothing was validated"),
    };
    let outcome = match subject {
        Subject::Request { .. } => bundle.check_request(&value).map(|r| match r {
            Request::Describe { skill_id } => {
                format!("valid: a describe_skill request for {skill_id}")
            }
            Request::Invoke { skill_id, .. } => format!(
                "valid: the request names the active interface of {skill_id} and its arguments conform to its input_schema"
            ),
        }),
        Subject::Result { skill_id, .. } => bundle
            .check_result(skill_id, &value)
            .map(|()| format!("valid: the result conforms to the output_schema of {skill_id}")),
        Subject::Record { skill_id, kind, .. } => {
            bundle.check_record(skill_id, kind, &value).map(|()| {
                format!("valid: the {kind} record conforms to the schema {skill_id} declares for it")
            })
        }
    };
    match outcome {
        Ok(line) => {
            let doc = Report {
                ok: true,
                findings: &[],
            };
            render::report(format, &[], &doc, || vec![line])
        }
        Err(e) => render::error_object(format, &e),
    }
}
