//! `skillbundle probe`: a conformance check of a live agent that claims the extension.
//!
//! Wiring and rendering only: [`skillbundle::client::probe::probe`] decides every check.

use super::call::WireArgs;
use crate::output;
use crate::render::{self, Format};
use serde_json::{json, Value};
use skillbundle::client::call::Caller;
use skillbundle::client::clause::{Clause, Level};
use skillbundle::client::probe::{Check, Report, Status};
use skillbundle::finding::Finding;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Check that a live A2A agent conforms to the schema-interface draft.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle probe http://127.0.0.1:9999\n  skillbundle probe https://staging-agent.example --card-trust vendor.jwk.json --format github\n  skillbundle probe https://staging-agent.example --arguments evaluate_resource_condition=args.json --format sarif > probe.sarif\n  skillbundle probe https://staging-agent.example --workspace example-skills\n\nFor every skill the card advertises: describe_skill through the client's own checks (describe\ntask, digest triple, document governance); requests a conforming agent must refuse: a stale\ninterface_digest and a stale skill_version (interface_mismatch), arguments the input_schema\nrejects (input_invalid); and, with --arguments SKILL=FILE (or --workspace DIR: each skill's\nfirst valid input example), a valid invocation (one primary result, valid result and records).\nFor the agent: a request for an unadvertised skill and a describe_skill for one\n(skill_not_advertised), and when the card marks the extension required, a request that does\nnot activate it. Every refusal must carry the draft's error object in the state the draft\nassigns.\n\nEach check names the draft clause it tests, with pass/fail/skip and bounded evidence.\nExit status 1 when any MUST check fails (SHOULD checks are reported only), 2 when the agent\ncannot be reached at all."
)]
pub struct Args {
    /// The agent's base URL (its card is AGENT_URL/.well-known/agent-card.json), or the
    /// card's own URL when it ends in .json.
    pub agent_url: String,
    /// Valid arguments for a skill, to probe a real invocation: SKILL=FILE (JSON). Repeatable.
    #[arg(long, value_name = "SKILL=FILE", value_parser = example)]
    pub arguments: Vec<(String, PathBuf)>,
    /// Take the valid arguments from a workspace instead: for each of its skills, the
    /// first of examples/input/valid/*.json (a --arguments for the same skill wins).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub wire: WireArgs,
}

fn example(text: &str) -> Result<(String, PathBuf), String> {
    let (skill, file) = text
        .split_once('=')
        .ok_or("expected SKILL=FILE, e.g. evaluate_resource_condition=args.json")?;
    if skill.is_empty() || file.is_empty() {
        return Err("expected SKILL=FILE with both parts non-empty".into());
    }
    Ok((skill.to_string(), PathBuf::from(file)))
}

/// The first valid input example of each skill of the workspace at `root`.
fn workspace_examples(root: &Path) -> Result<Vec<(String, PathBuf)>, Vec<Finding>> {
    use skillbundle::build::workspace;
    use skillbundle::interface::Role;
    let ws = workspace::Workspace::open(root)?;
    let mut found = Vec::new();
    for dir in &ws.skill_dirs {
        let skill = workspace::read_skill(&ws.root, dir).map_err(|f| vec![f])?;
        let (examples, _) = skillbundle::build::examples::discover(&skill.dir, &[]);
        if let Some(first) = examples
            .iter()
            .filter(|e| e.role == Role::Input && e.valid)
            .min_by(|a, b| a.path.cmp(&b.path))
        {
            found.push((skill.manifest.skill_id.clone(), first.path.clone()));
        }
    }
    Ok(found)
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let mut examples = BTreeMap::new();
    if let Some(root) = &args.workspace {
        match workspace_examples(root) {
            Ok(found) => {
                for (skill, file) in found {
                    match super::read_json(&file) {
                        Ok(v) => {
                            examples.insert(skill, v);
                        }
                        Err(f) => return super::fail_with(format, &[f], "nothing was probed"),
                    }
                }
            }
            Err(findings) => return super::fail_with(format, &findings, "nothing was probed"),
        }
    }
    for (skill, file) in &args.arguments {
        match super::read_json(Path::new(file)) {
            Ok(v) => {
                examples.insert(skill.clone(), v);
            }
            Err(f) => return super::fail_with(format, &[f], "nothing was probed"),
        }
    }
    let caller = match Caller::new(args.wire.options()) {
        Ok(c) => c,
        Err(f) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {f}");
            return ExitCode::from(2);
        }
    };
    let report = match skillbundle::client::call::block_on(skillbundle::client::probe::probe(
        &caller,
        &args.agent_url,
        &examples,
    )) {
        Ok(r) => r,
        Err(f) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {f}");
            return ExitCode::from(2);
        }
    };
    render_report(format, &report);
    let unreachable = report.checks.len() == 1
        && report.checks[0].clause == Clause::Transport
        && report.checks[0].message.contains("cannot be reached");
    if unreachable {
        ExitCode::from(2)
    } else if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "FAIL",
        Status::Skip => "skip",
    }
}

fn render_report(format: Format, report: &Report) {
    match format {
        Format::Json => output::json(&json!({
            "ok": !report.failed(),
            "agent": report.agent,
            "checks": report.checks.iter().map(check_json).collect::<Vec<_>>(),
        })),
        Format::Sarif => output::json(&sarif(report)),
        Format::Github => output::lines(
            &report
                .checks
                .iter()
                .filter(|c| c.status != Status::Pass)
                .map(github)
                .collect::<Vec<_>>(),
        ),
        Format::Human => {
            let mut lines = Vec::new();
            for c in &report.checks {
                let skill = c
                    .skill
                    .as_deref()
                    .map(|s| format!(" {s}:"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{:4} {} [{}]{skill} {}",
                    status_word(c.status),
                    c.clause,
                    level(c.clause.level()),
                    c.message
                ));
                if c.status == Status::Fail {
                    lines.push(format!(
                        "       the draft: {} — {}",
                        c.clause.section(),
                        c.clause.text()
                    ));
                    if let Some(p) = &c.pointer {
                        lines.push(format!("       at: {p}"));
                    }
                    if let Some(e) = &c.evidence {
                        lines.push(format!("       the agent sent: {e}"));
                    }
                }
            }
            let failed = report.checks.iter().filter(|c| c.fails()).count();
            lines.push(if failed == 0 {
                format!(
                    "the agent passed every MUST check ({} checks)",
                    report.checks.len()
                )
            } else {
                format!(
                    "{failed} MUST check{} failed",
                    if failed == 1 { "" } else { "s" }
                )
            });
            output::lines(
                &lines
                    .iter()
                    .map(|l| render::visible_line(l))
                    .collect::<Vec<_>>(),
            );
        }
    }
}

fn level(l: Level) -> &'static str {
    match l {
        Level::Must => "MUST",
        Level::Should => "SHOULD",
    }
}

fn check_json(c: &Check) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
    v["section"] = json!(c.clause.section());
    v["requirement"] = json!(c.clause.text());
    v
}

/// One non-passing check as a GitHub Actions workflow command.
fn github(c: &Check) -> String {
    let kind = match (c.status, c.level) {
        (Status::Fail, Level::Must) => "error",
        (Status::Fail, Level::Should) => "warning",
        _ => "notice",
    };
    let mut message = format!(
        "{}{} ({}: {})",
        c.skill
            .as_deref()
            .map(|s| format!("{s}: "))
            .unwrap_or_default(),
        c.message,
        c.clause.section(),
        c.clause.text()
    );
    if let Some(p) = &c.pointer {
        message.push_str(&format!(" at {p}"));
    }
    if let Some(e) = &c.evidence {
        message.push_str(&format!("; the agent sent: {e}"));
    }
    format!(
        "::{kind} title={}::{}",
        render::github_line(c.clause.id()).replace([':', ','], "-"),
        render::github_line(&message)
    )
}

/// The report as SARIF 2.1.0: one rule per clause tested, one result per check
/// (`kind: pass` for a pass, `notApplicable` for a skip).
fn sarif(report: &Report) -> Value {
    let mut clauses: Vec<Clause> = report.checks.iter().map(|c| c.clause).collect();
    clauses.sort();
    clauses.dedup();
    let rules: Vec<Value> = clauses
        .iter()
        .map(|c| {
            json!({
                "id": c.id(),
                "name": c.id(),
                "shortDescription": {"text": c.text()},
                "fullDescription": {"text": format!("{} ({})", c.text(), c.section())},
                "defaultConfiguration": {"level": if c.level() == Level::Must { "error" } else { "warning" }},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .checks
        .iter()
        .map(|c| {
            let (kind, level) = match (c.status, c.level) {
                (Status::Pass, _) => ("pass", "none"),
                (Status::Skip, _) => ("notApplicable", "none"),
                (Status::Fail, Level::Must) => ("fail", "error"),
                (Status::Fail, Level::Should) => ("fail", "warning"),
            };
            let mut props = serde_json::Map::new();
            if let Some(s) = &c.skill {
                props.insert("skill".into(), json!(s));
            }
            if let Some(p) = &c.pointer {
                props.insert("pointer".into(), json!(p));
            }
            if let Some(e) = &c.evidence {
                props.insert("evidence".into(), json!(e));
            }
            json!({
                "ruleId": c.clause.id(),
                "ruleIndex": clauses.iter().position(|x| *x == c.clause),
                "kind": kind,
                "level": level,
                "message": {"text": c.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": report.agent}}}],
                "properties": Value::Object(props),
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "skillbundle probe", "version": env!("CARGO_PKG_VERSION"), "rules": rules}},
            "results": results,
        }],
    })
}
