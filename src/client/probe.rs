//! A conformance probe of a live agent that claims the schema-interface extension.
//!
//! [`crate::client::call`] runs the procedure as a careful client and stops at the first broken
//! rule; a probe asks the question the other way round — does this agent conform? — and
//! so also sends what a conforming agent must refuse: a stale `interface_digest` or
//! `skill_version` (draft "Domain-skill invocation": `interface_mismatch`,
//! `TASK_STATE_REJECTED`), arguments invalid against input_schema (`input_invalid`
//! before domain logic), a skill the card does not advertise and a describe_skill for
//! one ("Machine-readable error conditions": `skill_not_advertised`), and, when the card
//! marks the extension required, a request that does not activate it. For every
//! advertised skill it runs describe_skill through the client's own checks, and with
//! example arguments a valid invocation. Every refusal is read by
//! [`crate::client::final_task`], so a refusal without the draft's error object, or in the wrong
//! state, fails that clause too.
//!
//! Each [`Check`] names the [`Clause`] it tests and carries bounded evidence. The report
//! fails when any MUST check fails; SHOULD checks are reported only. A probe never needs
//! anything but the card URL, so it can run in CI against a staging agent.

use crate::client::call::{request_message, Agent, Caller, Failure};
use crate::client::clause::{Clause, Level};
use crate::client::final_task::{self, excerpt, Ending, Violation};
use crate::client::transport::WireError;
use crate::client::VerifiedInterface;
use crate::interface::binding::Binding;
use crate::interface::condition::Condition;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The agent met the requirement.
    Pass,
    /// The agent broke the requirement.
    Fail,
    /// Not applicable, or not reachable after an earlier failure (the message says which).
    Skip,
}

/// One check of one requirement.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The requirement checked.
    pub clause: Clause,
    /// Its level (MUST, SHOULD).
    pub level: Level,
    /// The skill it concerns, for per-skill checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// The outcome.
    pub status: Status,
    /// What was found, in the probe's words.
    pub message: String,
    /// A JSON Pointer into the value the evidence quotes, for a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// A bounded excerpt of what the agent sent, for a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Check {
    fn new(
        clause: Clause,
        skill: Option<&str>,
        status: Status,
        message: impl Into<String>,
    ) -> Self {
        Check {
            clause,
            level: clause.level(),
            skill: skill.map(str::to_string),
            status,
            message: message.into(),
            pointer: None,
            evidence: None,
        }
    }

    fn violated(v: &Violation, skill: Option<&str>, context: &str) -> Self {
        let mut c = Check::new(
            v.clause,
            skill,
            Status::Fail,
            format!("{context}: {}", v.message),
        );
        c.pointer = (!v.pointer.is_empty()).then(|| v.pointer.clone());
        c.evidence = v.evidence.clone();
        c
    }

    /// Whether this is a failed MUST.
    pub fn fails(&self) -> bool {
        self.status == Status::Fail && self.level == Level::Must
    }
}

/// Everything a probe found about one agent.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The card URL probed.
    pub agent: String,
    /// Every check, in the order run.
    pub checks: Vec<Check>,
}

impl Report {
    /// Whether any MUST check failed.
    pub fn failed(&self) -> bool {
        self.checks.iter().any(Check::fails)
    }
}

/// Probe the agent at `agent_url`. `examples` maps a skill_id to valid arguments for a
/// real invocation (skills without one get no valid-invocation checks).
pub async fn probe(caller: &Caller, agent_url: &str, examples: &BTreeMap<String, Value>) -> Report {
    let mut checks = Vec::new();
    let agent = match caller.agent(agent_url).await {
        Ok(agent) => agent,
        Err(failure) => {
            checks.push(from_failure(
                &failure,
                None,
                "reading the Agent Card",
                Clause::CardAvailable,
            ));
            return Report {
                agent: agent_url.to_string(),
                checks,
            };
        }
    };
    checks.push(Check::new(
        Clause::CardAvailable,
        None,
        Status::Pass,
        "the Agent Card was fetched and read",
    ));
    if caller.options().card_trust.is_some() {
        checks.push(Check::new(
            Clause::CardSigned,
            None,
            Status::Pass,
            "the Agent Card is signed by a trusted key",
        ));
    }
    checks.push(Check::new(
        Clause::CardAdvertisement,
        None,
        Status::Pass,
        format!(
            "the card advertises the extension, interface version 1.0, with {} skill binding{}",
            agent.advertisement.skills.len(),
            if agent.advertisement.skills.len() == 1 {
                ""
            } else {
                "s"
            }
        ),
    ));
    if !agent.advertisement.describe_skill {
        checks.push(Check::new(
            Clause::CardAdvertisement,
            None,
            Status::Fail,
            "the card advertises the extension but no describe_skill AgentSkill",
        ));
    }
    checks.push(Check::new(
        Clause::CardInterface,
        None,
        Status::Pass,
        format!(
            "using the card's {} interface",
            agent.endpoint.binding.card_name()
        ),
    ));
    for skill in &agent.advertisement.skills {
        probe_skill(
            caller,
            &agent,
            skill,
            examples.get(&skill.skill_id),
            &mut checks,
        )
        .await;
    }
    probe_agent(caller, &agent, &mut checks).await;
    Report {
        agent: agent_url.to_string(),
        checks,
    }
}

/// A failure of the client procedure as a check.
fn from_failure(failure: &Failure, skill: Option<&str>, context: &str, otherwise: Clause) -> Check {
    match failure {
        Failure::Violation(v) => Check::violated(v, skill, context),
        Failure::Refused { refusal, .. } => {
            let mut c = Check::new(
                otherwise,
                skill,
                Status::Fail,
                format!("{context}: the agent refused ({refusal})"),
            );
            c.evidence = refusal.error.as_ref().map(|e| excerpt(&e.to_json()));
            c
        }
        Failure::Stopped { state, .. } => Check::new(
            otherwise,
            skill,
            Status::Fail,
            format!("{context}: the task stopped in {state}"),
        ),
        Failure::Local(e) => Check::new(otherwise, skill, Status::Fail, format!("{context}: {e}")),
        Failure::Wire(WireError::Binding {
            code,
            condition,
            evidence,
            ..
        }) => {
            let mut c = Check::new(
                otherwise,
                skill,
                Status::Fail,
                format!(
                    "{context}: the agent answered with a binding error {code}{}",
                    condition
                        .as_deref()
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default()
                ),
            );
            c.evidence = Some(evidence.clone());
            c
        }
        Failure::Wire(e) => Check::new(
            Clause::Transport,
            skill,
            Status::Fail,
            format!("{context}: {e}"),
        ),
    }
}

async fn probe_skill(
    caller: &Caller,
    agent: &Agent,
    skill: &Binding,
    example: Option<&Value>,
    checks: &mut Vec<Check>,
) {
    let id = Some(skill.skill_id.as_str());
    let interface = match caller.interface(agent, &skill.skill_id).await {
        Ok((interface, _)) => interface,
        Err(failure) => {
            checks.push(from_failure(
                &failure,
                id,
                "describe_skill",
                Clause::DescribeResponse,
            ));
            checks.push(Check::new(
                Clause::StaleInterface,
                id,
                Status::Skip,
                "not probed: no verified interface for the skill",
            ));
            return;
        }
    };
    for (clause, message) in [
        (Clause::DescribeResponse, "describe_skill completed with one Artifact named describe_skill, one Data Part"),
        (Clause::DigestTriple, "advertised, returned and calculated interface digests are equal"),
        (Clause::DocumentValid, "the document is valid, 1.0, for the selected skill and version; every inline schema is governed and matches its digest"),
    ] {
        checks.push(Check::new(clause, id, Status::Pass, message));
    }
    // A stale interface_digest, then a stale skill_version: interface_mismatch, rejected.
    let arguments = example.cloned().unwrap_or_else(|| json!({}));
    let mut stale_digest = request_of(&interface, arguments.clone());
    stale_digest["interface_digest"] = json!(other_digest(skill.interface_digest.as_str()));
    let mut stale_version = request_of(&interface, arguments);
    stale_version["skill_version"] = json!(other_version(&skill.skill_version.to_string()));
    for (what, request) in [
        ("a stale interface_digest", stale_digest),
        ("a stale skill_version", stale_version),
    ] {
        let check = expect_refusal(
            caller,
            agent,
            &interface,
            &request,
            true,
            Clause::StaleInterface,
            Condition::InterfaceMismatch,
            what,
        )
        .await;
        checks.push(check);
    }
    // Arguments the input_schema itself rejects.
    match invalid_arguments(&interface) {
        Some(bad) => {
            let request = request_of(&interface, bad);
            checks.push(
                expect_refusal(
                    caller,
                    agent,
                    &interface,
                    &request,
                    true,
                    Clause::InvalidInput,
                    Condition::InputInvalid,
                    "arguments invalid against input_schema",
                )
                .await,
            );
        }
        None => checks.push(Check::new(
            Clause::InvalidInput,
            id,
            Status::Skip,
            "not probed: input_schema accepts every value this probe tries",
        )),
    }
    // A valid invocation, when the operator gave arguments.
    match example {
        None => checks.push(Check::new(
            Clause::PrimaryResult,
            id,
            Status::Skip,
            "not probed: no example arguments for this skill (give --arguments SKILL=FILE)",
        )),
        Some(arguments) => match caller
            .invoke(agent, &interface, arguments.clone(), None)
            .await
        {
            Ok(called) => {
                checks.push(Check::new(
                    Clause::PrimaryResult,
                    id,
                    Status::Pass,
                    "the valid invocation completed with exactly one primary result Artifact",
                ));
                checks.push(Check::new(
                    Clause::ResultValid,
                    id,
                    Status::Pass,
                    "the result validates against output_schema",
                ));
                checks.push(Check::new(
                    Clause::SupportingRecords,
                    id,
                    Status::Pass,
                    format!(
                        "{} supporting record(s), each of a declared kind and valid",
                        called.delivered.records.len()
                    ),
                ));
                checks.push(Check::new(
                    Clause::ActivationEcho,
                    id,
                    if called.activation_echoed {
                        Status::Pass
                    } else {
                        Status::Fail
                    },
                    if called.activation_echoed {
                        "the response echoed the extension in A2A-Extensions"
                    } else {
                        "the response did not echo the extension in A2A-Extensions"
                    },
                ));
            }
            Err(failure) => checks.push(from_failure(
                &failure,
                id,
                "the valid invocation",
                Clause::PrimaryResult,
            )),
        },
    }
}

/// The skill request object for `arguments`, whether or not they are valid.
fn request_of(interface: &VerifiedInterface, arguments: Value) -> Value {
    json!({
        "skill": interface.binding.skill_id,
        "skill_version": interface.binding.skill_version,
        "interface_digest": interface.binding.interface_digest.as_str(),
        "arguments": arguments,
    })
}

/// A digest that is well-formed and not `digest`.
fn other_digest(digest: &str) -> String {
    let zeros = format!("sha256:{}", "0".repeat(64));
    if digest == zeros {
        format!("sha256:{}", "1".repeat(64))
    } else {
        zeros
    }
}

/// A canonical version that is not `version` (the next minor).
fn other_version(version: &str) -> String {
    match version.parse::<crate::wire::version::Version>() {
        Ok(_) => {
            let (major, minor) = version.split_once('.').unwrap_or((version, "0"));
            format!(
                "{major}.{}",
                minor.parse::<u64>().map(|m| m + 1).unwrap_or(1)
            )
        }
        Err(_) => "1.0".to_string(),
    }
}

/// Arguments input_schema rejects, found by trying values of each JSON type (and an
/// object with an unlikely member) against the schema itself; `None` when it accepts all.
fn invalid_arguments(interface: &VerifiedInterface) -> Option<Value> {
    let candidates = [
        json!([]),
        json!(null),
        json!("skillbundle-probe"),
        json!(0),
        json!(true),
        json!({}),
        json!({"skillbundle-probe-unexpected-member": true}),
    ];
    candidates
        .into_iter()
        .find(|c| interface.check_arguments(c).is_err())
}

/// Send `request` and expect a refusal with `expected`.
#[allow(clippy::too_many_arguments)]
async fn expect_refusal(
    caller: &Caller,
    agent: &Agent,
    interface: &VerifiedInterface,
    request: &Value,
    activate: bool,
    clause: Clause,
    expected: Condition,
    what: &str,
) -> Check {
    let skill = Some(interface.binding.skill_id.as_str());
    let mut message = request_message(request);
    if !activate {
        message.as_object_mut().map(|m| m.remove("extensions"));
    }
    let sent = caller
        .http()
        .send(&agent.endpoint, &message, activate, caller.options().mode)
        .await;
    judge(sent, skill, clause, expected, what)
}

/// Read the outcome of a request a conforming agent must refuse with `expected`.
fn judge(
    sent: Result<crate::client::transport::Exchange, WireError>,
    skill: Option<&str>,
    clause: Clause,
    expected: Condition,
    what: &str,
) -> Check {
    let context = format!("a request with {what}");
    let exchange = match sent {
        Ok(e) => e,
        Err(WireError::Binding {
            code,
            condition,
            evidence,
            ..
        }) => {
            // A refusal before task creation, through the binding's error mechanism.
            let ok = condition.as_deref() == Some(expected.as_str());
            let mut c = Check::new(
                clause,
                skill,
                if ok { Status::Pass } else { Status::Fail },
                if ok {
                    format!("{context} was refused before task creation with {expected} (binding error {code})")
                } else {
                    format!("{context} was refused with binding error {code}, without the condition {expected}")
                },
            );
            c.evidence = Some(evidence);
            return c;
        }
        Err(WireError::Violation(v)) => return Check::violated(&v, skill, &context),
        Err(e) => {
            return Check::new(
                Clause::Transport,
                skill,
                Status::Fail,
                format!("{context}: {e}"),
            )
        }
    };
    let task = match final_task::task_of(&exchange.response, clause) {
        Ok(t) => t,
        Err(v) => return Check::violated(&v, skill, &context),
    };
    match final_task::ending(task) {
        Ok(Ending::Refused(r)) if r.condition() == Some(expected) => Check::new(
            clause,
            skill,
            Status::Pass,
            format!("{context} was refused: {r}"),
        ),
        Ok(Ending::Refused(r)) => {
            let got = match r.condition() {
                Some(code) => code.to_string(),
                None => "no machine-readable condition".to_string(),
            };
            let mut c = Check::new(
                clause,
                skill,
                Status::Fail,
                format!(
                    "{context} was refused ({}) with {got}, not {expected}",
                    r.state
                ),
            );
            if r.error.is_none() {
                c.pointer = Some("/status/state".into());
            }
            c.evidence = Some(match &r.error {
                Some(e) => excerpt(&e.to_json()),
                None => excerpt(&json!(r.state)),
            });
            c
        }
        Ok(Ending::Completed(())) => {
            let mut c = Check::new(
                clause,
                skill,
                Status::Fail,
                format!("{context} was accepted: the task completed"),
            );
            c.pointer = Some("/status/state".into());
            c.evidence = Some(excerpt(&json!("TASK_STATE_COMPLETED")));
            c
        }
        Ok(Ending::Stopped { state }) => Check::new(
            clause,
            skill,
            Status::Fail,
            format!("{context} was not refused: the task stopped in {state}"),
        ),
        Err(v) => Check::violated(&v, skill, &context),
    }
}

/// A skill_id the card does not advertise.
fn unadvertised(agent: &Agent) -> String {
    let mut id = "skillbundle_probe_unadvertised".to_string();
    while agent.advertisement.skills.iter().any(|s| s.skill_id == id) {
        id.push('_');
    }
    id
}

async fn probe_agent(caller: &Caller, agent: &Agent, checks: &mut Vec<Check>) {
    let unknown = unadvertised(agent);
    let request = json!({
        "skill": unknown,
        "skill_version": "1.0",
        "interface_digest": format!("sha256:{}", "0".repeat(64)),
        "arguments": {},
    });
    let sent = caller
        .http()
        .send(
            &agent.endpoint,
            &request_message(&request),
            true,
            caller.options().mode,
        )
        .await;
    checks.push(judge(
        sent,
        None,
        Clause::UnadvertisedSkill,
        Condition::SkillNotAdvertised,
        "an unadvertised skill_id",
    ));
    let request = json!({"skill": "describe_skill", "arguments": {"skill_id": unknown}});
    let sent = caller
        .http()
        .send(
            &agent.endpoint,
            &request_message(&request),
            true,
            caller.options().mode,
        )
        .await;
    checks.push(judge(
        sent,
        None,
        Clause::DescribeUnknown,
        Condition::SkillNotAdvertised,
        "describe_skill for an unadvertised skill_id",
    ));
    if !agent.extension_required {
        checks.push(Check::new(
            Clause::Activation,
            None,
            Status::Skip,
            "not probed: the card marks the extension required: false, so base A2A requests may be served",
        ));
        return;
    }
    let Some(first) = agent.advertisement.skills.first() else {
        return;
    };
    let request = json!({"skill": "describe_skill", "arguments": {"skill_id": first.skill_id}});
    let mut message = request_message(&request);
    message.as_object_mut().map(|m| m.remove("extensions"));
    let sent = caller
        .http()
        .send(&agent.endpoint, &message, false, caller.options().mode)
        .await;
    let check = match sent {
        Ok(exchange) => {
            let state = exchange
                .response
                .pointer("/task/status/state")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if state == "TASK_STATE_COMPLETED" {
                let mut c = Check::new(Clause::Activation, None, Status::Fail, "a describe_skill request without activation was served, though the card marks the extension required");
                c.evidence = Some(excerpt(&json!(state)));
                c
            } else {
                Check::new(
                    Clause::Activation,
                    None,
                    Status::Pass,
                    format!(
                        "a request without activation was not served ({})",
                        if state.is_empty() { "no task" } else { &state }
                    ),
                )
            }
        }
        Err(WireError::Binding { code, .. }) => Check::new(
            Clause::Activation,
            None,
            Status::Pass,
            format!("a request without activation was refused (binding error {code})"),
        ),
        Err(e) => Check::new(
            Clause::Transport,
            None,
            Status::Fail,
            format!("a request without activation: {e}"),
        ),
    };
    checks.push(check);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_values_differ_and_stay_well_formed() {
        let d = format!("sha256:{}", "0".repeat(64));
        assert_ne!(other_digest(&d), d);
        assert!(other_digest("sha256:abc")
            .parse::<crate::wire::digest::Digest>()
            .is_ok());
        assert_eq!(other_version("1.0"), "1.1");
        assert_eq!(other_version("2.9"), "2.10");
    }
}
