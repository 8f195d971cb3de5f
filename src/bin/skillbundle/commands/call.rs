//! `skillbundle call`: the draft's client procedure against a live agent.
//!
//! Wiring only: flags become [`skillbundle::client::call::Options`], the library's [`Caller`]
//! runs the procedure, and this file renders what came back.

use crate::output;
use crate::render::{self, Format};
use serde_json::{json, Value};
use skillbundle::client::call::{Called, Caller, Failure, Options};
use skillbundle::client::final_task::Refusal;
use skillbundle::client::transport::{Binding, Limits, Mode, WireError};
use skillbundle::crypto::keys::PublicKey;
use skillbundle::finding::{Code, Finding};
use skillbundle::interface::condition::ErrorObject;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Call a schema-governed skill of a live A2A agent, checking everything it returns.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle call http://127.0.0.1:9999 evaluate_resource_condition --arguments args.json\n  skillbundle call https://agent.example evaluate_resource_condition --arguments - --card-trust vendor.jwk.json < args.json\n  skillbundle call http://127.0.0.1:9999 evaluate_resource_condition --arguments args.json --binding http-json --stream\n\nRuns the draft's client procedure (\"Client-agent behavior\", steps 1-10): fetch the Agent Card\n(AGENT_URL/.well-known/agent-card.json) and, with --card-trust, require a signature by that key;\nrequire the schema-interface extension, one binding for the skill and describe_skill; call\ndescribe_skill with the extension activated (A2A-Extensions header and Message.extensions);\ncheck the describe task, the digest triple (card, response, computed) and the document's\ngovernance; validate the arguments against input_schema before sending anything; send the skill\nrequest object; check the final Task: completed, exactly one primary result Artifact named after\nthe skill whose one Data Part is {\"skill\",\"result\"} valid against output_schema, every other\nArtifact a declared record kind valid against its schema.\n\nOn success prints {\"result\", \"records\"} (with --format json, the full report) and exits 0.\nOtherwise exits 1 with the finding: the draft clause broken, the JSON pointer, and a bounded\nexcerpt of what the agent sent; a refusal prints the agent's error object. Exit status 2 when the\nagent cannot be reached or the arguments file cannot be read."
)]
pub struct Args {
    /// The agent's base URL (its card is AGENT_URL/.well-known/agent-card.json), or the
    /// card's own URL when it ends in .json.
    pub agent_url: String,
    /// The skill_id to call, as the Agent Card advertises it.
    pub skill_id: String,
    /// The domain input (the skill request object's `arguments`), JSON; `-` reads stdin.
    #[arg(long, value_name = "FILE|-")]
    pub arguments: PathBuf,
    #[command(flatten)]
    pub wire: WireArgs,
}

/// How to reach agents; shared by `call` and `probe`.
#[derive(clap::Args)]
pub struct WireArgs {
    /// Require the Agent Card to be signed by this key (JWK, SPKI PEM or JWK Set);
    /// an unsigned or otherwise signed card is refused. Repeatable.
    #[arg(long = "card-trust", value_name = "KEY", value_parser = keys)]
    pub card_trust: Vec<Vec<PublicKey>>,
    /// The A2A protocol binding to use [default: the card's first JSON-RPC or HTTP+JSON
    /// interface].
    #[arg(long, value_enum)]
    pub binding: Option<BindingArg>,
    /// Receive the task as a stream (SendStreamingMessage, SSE); chunks are assembled
    /// before anything is validated.
    #[arg(long, conflicts_with = "poll")]
    pub stream: bool,
    /// Send without waiting (returnImmediately), then poll GetTask until the task ends.
    #[arg(long)]
    pub poll: bool,
    /// Seconds each exchange with the agent may take (card, describe_skill, the call).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// The largest response (or stream) accepted from the agent, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 8 << 20)]
    pub max_body: usize,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum BindingArg {
    /// JSON-RPC 2.0 (the card's "JSONRPC" interface).
    Jsonrpc,
    /// HTTP+JSON (the card's "HTTP+JSON" interface).
    HttpJson,
}

fn keys(path: &str) -> Result<Vec<PublicKey>, String> {
    skillbundle::crypto::keys::read_key_set(Path::new(path)).map_err(|e| e.to_string())
}

impl WireArgs {
    pub fn options(&self) -> Options {
        Options {
            limits: Limits {
                timeout: Duration::from_secs(self.timeout),
                max_body: self.max_body,
                ..Limits::default()
            },
            binding: self.binding.map(|b| match b {
                BindingArg::Jsonrpc => Binding::JsonRpc,
                BindingArg::HttpJson => Binding::HttpJson,
            }),
            mode: if self.stream {
                Mode::Stream
            } else if self.poll {
                Mode::Poll
            } else {
                Mode::Blocking
            },
            card_trust: (!self.card_trust.is_empty())
                .then(|| self.card_trust.iter().flatten().cloned().collect()),
            cache_capacity: 64,
        }
    }
}

/// Read `--arguments`: a file, or stdin for `-`, at most the operator-file limit.
fn read_arguments(path: &Path) -> Result<Value, Finding> {
    if path != Path::new("-") {
        return super::read_json(path);
    }
    let max = skillbundle::schema::limits::Limits::default().max_example_bytes;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Finding::at_file(Code::Io, format!("cannot read stdin: {e}"), path))?;
    if bytes.len() as u64 > max {
        return Err(Finding::at_file(
            Code::ResourceLimitExceeded,
            format!("the arguments on stdin exceed {max} bytes"),
            path,
        ));
    }
    skillbundle::wire::json::parse(&bytes).map_err(|e| e.into_finding(path))
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let arguments = match read_arguments(&args.arguments) {
        Ok(v) => v,
        Err(f) => return super::fail_with(format, &[f], "nothing was sent"),
    };
    let caller = match Caller::new(args.wire.options()) {
        Ok(c) => c,
        Err(f) => return failed(format, &args.agent_url, &f),
    };
    let outcome = skillbundle::client::call::block_on(caller.call(
        &args.agent_url,
        &args.skill_id,
        arguments,
        None,
    ))
    .and_then(|r| r);
    match outcome {
        Err(failure) => failed(format, &args.agent_url, &failure),
        Ok(called) => succeeded(format, &args.agent_url, &called),
    }
}

fn succeeded(format: Format, agent: &str, called: &Called) -> ExitCode {
    match format {
        Format::Human => output::json(&json!({
            "result": called.delivered.result,
            "records": called.delivered.records,
        })),
        _ => output::json(&json!({"ok": true, "agent": agent, "call": called})),
    }
    ExitCode::SUCCESS
}

/// A failure as JSON: its kind, and the clause, condition, pointer, message, evidence.
pub fn failure_json(failure: &Failure) -> Value {
    match failure {
        Failure::Local(e) => json!({"kind": "local", "error": e.to_json()}),
        Failure::Violation(v) => {
            json!({"kind": "violation", "violation": v, "section": v.clause.section(), "requirement": v.clause.text()})
        }
        Failure::Refused { describe, refusal } => json!({
            "kind": "refused",
            "request": if *describe { "describe_skill" } else { "skill" },
            "state": refusal.state,
            "error": refusal.error.as_ref().map(ErrorObject::to_json),
        }),
        Failure::Stopped { describe, state } => json!({
            "kind": "stopped",
            "request": if *describe { "describe_skill" } else { "skill" },
            "state": state,
        }),
        Failure::Wire(WireError::Binding {
            code,
            condition,
            evidence,
            ..
        }) => {
            json!({"kind": "binding_error", "code": code, "condition": condition, "evidence": evidence})
        }
        Failure::Wire(e) => json!({"kind": "wire", "message": e.to_string()}),
    }
}

/// Exit status of a failure: 2 when the agent could not be reached, 1 otherwise.
pub fn status(failure: &Failure) -> ExitCode {
    match failure {
        Failure::Wire(WireError::Unreachable(_)) => ExitCode::from(2),
        _ => ExitCode::from(1),
    }
}

/// The human lines of a failure (stderr).
pub fn failure_lines(failure: &Failure) -> Vec<String> {
    let mut lines = Vec::new();
    match failure {
        Failure::Violation(v) => {
            let condition = v.condition.map(|c| format!(" ({c})")).unwrap_or_default();
            lines.push(format!("error[{}]{condition}: {}", v.clause, v.message));
            lines.push(format!(
                "  the draft: {} — {}",
                v.clause.section(),
                v.clause.text()
            ));
            if !v.pointer.is_empty() {
                lines.push(format!("  at: {}", v.pointer));
            }
            if let Some(e) = &v.evidence {
                lines.push(format!("  the agent sent: {e}"));
            }
        }
        Failure::Local(e) => {
            lines.push(format!("error[{}]: {}", e.code(), e.message()));
            lines.push("  detected by this client; nothing was sent for it".to_string());
        }
        other => lines.push(format!("error: {other}")),
    }
    lines
}

fn failed(format: Format, agent: &str, failure: &Failure) -> ExitCode {
    match format {
        Format::Human => {
            if let Failure::Refused {
                refusal: Refusal {
                    error: Some(error), ..
                },
                ..
            } = failure
            {
                output::json(&error.to_json());
            }
            let mut err = std::io::stderr().lock();
            for line in failure_lines(failure) {
                let _ = writeln!(err, "{}", render::visible_line(&line));
            }
        }
        Format::Github => {
            let lines = failure_lines(failure);
            output::lines(&[format!(
                "::error title=skillbundle call::{}",
                render::github_line(&lines.join(" | "))
            )]);
        }
        _ => output::json(&json!({"ok": false, "agent": agent, "failure": failure_json(failure)})),
    }
    status(failure)
}
