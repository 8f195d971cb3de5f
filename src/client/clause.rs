//! The draft's requirements a client checks on a live agent, each named by its clause.
//!
//! `skillbundle call` stops at the first requirement an agent breaks and `skillbundle
//! probe` reports every one it tested; both say *which* requirement, so that a finding
//! reads as "the draft says X in section Y, and the agent did Z". This is the one list
//! of those requirements: a stable id for machines (the SARIF rule id, the `check` of a
//! JSON report), the draft section, the key word (MUST/SHOULD), and the sentence.
//!
//! The A2A mapping sections of the draft ("Agent advertisement", "describe_skill
//! response", "Domain-skill invocation", "Machine-readable error conditions") supply
//! most of them; "Client-agent behavior" the ones the client itself enforces before it
//! sends anything.

use crate::interface::task_rules::Requirement;
use serde::Serialize;

/// How strongly the draft states a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// MUST / MUST NOT / REQUIRED: a failure is a conformance failure.
    Must,
    /// SHOULD: reported, but does not fail a probe.
    Should,
}

/// One requirement of the draft (or of A2A, where the draft defers to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Clause {
    /// The Agent Card can be fetched and read.
    CardAvailable,
    /// The Agent Card carries a signature by a key the operator trusts.
    CardSigned,
    /// The card advertises the extension, describe_skill and each governed skill.
    CardAdvertisement,
    /// The card names an interface this client can talk to (JSON-RPC or HTTP+JSON, A2A 1.0).
    CardInterface,
    /// describe_skill's task completes with one Artifact named describe_skill, one Data Part.
    DescribeResponse,
    /// Advertised, returned and calculated interface digests are equal.
    DigestTriple,
    /// The returned document is valid, 1.0, for the selected skill and version, schemas governed.
    DocumentValid,
    /// The client validates the arguments against input_schema before sending them.
    ArgumentsValid,
    /// A successful invocation completes with exactly one primary result Artifact.
    PrimaryResult,
    /// The result value validates against output_schema.
    ResultValid,
    /// Every other Artifact is a declared record kind, valid against its schema.
    SupportingRecords,
    /// A refusal that reports a condition carries one Data Part `{"error":{"code",...}}`
    /// with a listed code.
    ErrorObject,
    /// A refusal reaches the task state the draft assigns to its condition.
    ErrorState,
    /// A stale skill_version or interface_digest is rejected with interface_mismatch.
    StaleInterface,
    /// A nonconforming input is rejected with input_invalid before domain logic.
    InvalidInput,
    /// A skill the card does not advertise is refused (skill_not_advertised).
    UnadvertisedSkill,
    /// describe_skill for a skill the card does not advertise is refused.
    DescribeUnknown,
    /// A request that does not activate a required extension is not served.
    Activation,
    /// An agent that activates the extension echoes it in the A2A-Extensions header.
    ActivationEcho,
    /// The agent answers within the client's limits (time, size) in the binding's form.
    Transport,
}

impl Clause {
    /// Every clause, in the order a probe tests them.
    pub const ALL: &'static [Clause] = &[
        Clause::CardAvailable,
        Clause::CardSigned,
        Clause::CardAdvertisement,
        Clause::CardInterface,
        Clause::DescribeResponse,
        Clause::DigestTriple,
        Clause::DocumentValid,
        Clause::ArgumentsValid,
        Clause::PrimaryResult,
        Clause::ResultValid,
        Clause::SupportingRecords,
        Clause::ErrorObject,
        Clause::ErrorState,
        Clause::StaleInterface,
        Clause::InvalidInput,
        Clause::UnadvertisedSkill,
        Clause::DescribeUnknown,
        Clause::Activation,
        Clause::ActivationEcho,
        Clause::Transport,
    ];

    /// The stable id (kebab-case), as serialized.
    pub fn id(self) -> &'static str {
        match self {
            Clause::CardAvailable => "card-available",
            Clause::CardSigned => "card-signed",
            Clause::CardAdvertisement => "card-advertisement",
            Clause::CardInterface => "card-interface",
            Clause::DescribeResponse => "describe-response",
            Clause::DigestTriple => "digest-triple",
            Clause::DocumentValid => "document-valid",
            Clause::ArgumentsValid => "arguments-valid",
            Clause::PrimaryResult => "primary-result",
            Clause::ResultValid => "result-valid",
            Clause::SupportingRecords => "supporting-records",
            Clause::ErrorObject => "error-object",
            Clause::ErrorState => "error-state",
            Clause::StaleInterface => "stale-interface",
            Clause::InvalidInput => "invalid-input",
            Clause::UnadvertisedSkill => "unadvertised-skill",
            Clause::DescribeUnknown => "describe-unknown",
            Clause::Activation => "activation",
            Clause::ActivationEcho => "activation-echo",
            Clause::Transport => "transport",
        }
    }

    /// The section of the draft (or the A2A specification) that states it.
    pub fn section(self) -> &'static str {
        match self {
            Clause::CardAvailable | Clause::CardInterface | Clause::Transport => {
                "Client-agent behavior, step 1 (A2A 1.0 Agent Card and protocol bindings)"
            }
            Clause::CardSigned => "Security Considerations, Schema trust (A2A AgentCardSignature)",
            Clause::CardAdvertisement | Clause::ActivationEcho => {
                "A2A Mapping, Agent advertisement"
            }
            Clause::Activation => "A2A Mapping, Agent advertisement (A2A extension activation)",
            Clause::DescribeResponse => "A2A Mapping, describe_skill response",
            Clause::DigestTriple => "Terminology, Skill Interface Document Digest",
            Clause::DocumentValid => "Client-agent behavior, steps 5 and 6",
            Clause::ArgumentsValid => "Client-agent behavior, step 7",
            Clause::PrimaryResult
            | Clause::ResultValid
            | Clause::SupportingRecords
            | Clause::StaleInterface
            | Clause::InvalidInput => "A2A Mapping, Domain-skill invocation",
            Clause::ErrorObject
            | Clause::ErrorState
            | Clause::UnadvertisedSkill
            | Clause::DescribeUnknown => "A2A Mapping, Machine-readable error conditions",
        }
    }

    /// MUST or SHOULD.
    pub fn level(self) -> Level {
        match self {
            Clause::ActivationEcho => Level::Should,
            _ => Level::Must,
        }
    }

    /// The requirement, in the draft's words (shortened where it runs on).
    pub fn text(self) -> &'static str {
        match self {
            Clause::CardAvailable => {
                "the client retrieves the target Agent Card and obtains its A2A endpoint and schema-interface extension advertisement"
            }
            Clause::CardSigned => {
                "a client agent applies policy for trusted publishers: with a trusted key configured, the card must carry a signature by it"
            }
            Clause::CardAdvertisement => {
                "an agent MUST advertise describe_skill and each schema-governed domain skill in its Agent Card, and the extension with interface_version 1.0 and exactly one skill_version and interface_digest binding per skill_id"
            }
            Clause::CardInterface => {
                "the card names an A2A 1.0 interface (JSON-RPC or HTTP+JSON) the client can use"
            }
            Clause::DescribeResponse => {
                "on success, the describe_skill task MUST reach the completed state and contain exactly one Artifact named describe_skill with exactly one Data Part"
            }
            Clause::DigestTriple => {
                "the interface_digest in the Agent Card, the describe_skill response and the calculated digest of the returned document MUST match"
            }
            Clause::DocumentValid => {
                "the returned document MUST validate against the Skill Interface Schema, be interface version 1.0, identify the selected skill and version, and every embedded schema MUST match its digest and resolve inline"
            }
            Clause::ArgumentsValid => {
                "the client validates the outgoing skill input against input_schema before delegating"
            }
            Clause::PrimaryResult => {
                "on success, the task MUST reach the completed state and contain exactly one primary result Artifact, named after the skill, with a single Data Part holding {\"skill\",\"result\"}"
            }
            Clause::ResultValid => {
                "the result value is the complete domain output and MUST validate against output_schema"
            }
            Clause::SupportingRecords => {
                "each supporting record MUST be a separate Artifact named after a declared record kind (never the skill_id), whose single Data Part validates against that kind's schema"
            }
            Clause::ErrorObject => {
                "when a rejected or failed task reports one of the draft's conditions, its final status Message MUST contain exactly one Data Part {\"error\":{\"code\",\"message\"?}} whose code is one of the conditions"
            }
            Clause::ErrorState => {
                "interface_mismatch, input_invalid, constraint_rejected and authorization_failed MUST end TASK_STATE_REJECTED; a describe_skill or output failure TASK_STATE_FAILED"
            }
            Clause::StaleInterface => {
                "the receiving agent MUST reject a request whose skill_version or interface_digest differs from its active document with interface_mismatch (TASK_STATE_REJECTED)"
            }
            Clause::InvalidInput => {
                "the receiving agent MUST reject a nonconforming input with input_invalid before invoking domain logic"
            }
            Clause::UnadvertisedSkill => {
                "a request for a skill_id the agent does not advertise is refused with skill_not_advertised"
            }
            Clause::DescribeUnknown => {
                "describe_skill for a skill_id the agent does not advertise is refused with skill_not_advertised"
            }
            Clause::Activation => {
                "when the card marks the extension required, a request that does not activate it is not served"
            }
            Clause::ActivationEcho => {
                "an agent that activates the extension SHOULD echo its URI in the A2A-Extensions response header"
            }
            Clause::Transport => {
                "the agent answers in the selected binding's form, within the client's time and size limits"
            }
        }
    }
}

impl Clause {
    /// The clause that states a requirement of the rule set both sides apply to a
    /// Task (`interface::task_rules`).
    pub fn of(requirement: Requirement) -> Clause {
        match requirement {
            Requirement::PrimaryResult => Clause::PrimaryResult,
            Requirement::ResultValid => Clause::ResultValid,
            Requirement::SupportingRecord => Clause::SupportingRecords,
            Requirement::ErrorObject => Clause::ErrorObject,
            Requirement::ErrorState => Clause::ErrorState,
            // A2A's own delivery of Artifact updates, which the draft defers to.
            Requirement::ArtifactUpdate => Clause::Transport,
        }
    }
}

impl std::fmt::Display for Clause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_serialize_as_themselves() {
        let mut ids: Vec<&str> = Clause::ALL.iter().map(|c| c.id()).collect();
        for c in Clause::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.id());
            assert!(!c.text().is_empty() && !c.section().is_empty());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Clause::ALL.len());
    }
}
