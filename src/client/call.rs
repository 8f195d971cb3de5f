//! The draft's client procedure against a live agent: one call of a schema-governed skill.
//!
//! Draft "Client-agent behavior", steps 1–10, over the wire: fetch the Agent Card (and,
//! when the operator trusts a key, require a signature by it); read its schema-interface
//! advertisement and select the skill (both it and describe_skill advertised, one
//! binding); call describe_skill with the extension activated (`A2A-Extensions` and the
//! Message's `extensions`) and one Data Part; check the describe task, the digest triple
//! and the document's governance; validate the arguments before sending; send the skill
//! request object; check the final Task — blocking, streamed or polled — for its one
//! primary result and its supporting records. Before delegating, the client "MUST
//! possess a successfully validated Skill Interface Document", so any failure up to the
//! request stops the procedure and nothing is sent.
//!
//! Every check is the library's: [`crate::client`] reads the card and verifies the
//! describe response, [`crate::client::final_task`] reads the Tasks, [`VerifiedInterface`]
//! validates arguments, results and records. This module only orders them and moves
//! bytes through [`crate::client::transport`]. Verified interfaces are kept in an
//! [`InterfaceCache`] keyed by the card's binding ("Operational Considerations"), so a
//! second call of an unchanged skill sends no describe_skill; a card whose digest
//! changed drops the entry. A call on behalf of an upstream task carries the
//! correlation of [`crate::client::delegation`] and returns the [`Hop`].

use crate::card::a2a::EXTENSION_URI;
use crate::client::clause::Clause;
use crate::client::delegation::{Hop, Upstream};
use crate::client::final_task::{self, Delivered, Ending, Refusal, Violation};
use crate::client::interface_cache::InterfaceCache;
use crate::client::transport::{self, Binding, Endpoint, Http, Limits, Mode, WireError};
use crate::client::{CardAdvertisement, VerifiedInterface};
use crate::crypto::keys::PublicKey;
use crate::interface::condition::{Condition, ErrorObject};
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Mutex;

/// How a [`Caller`] talks to agents.
#[derive(Debug, Clone)]
pub struct Options {
    /// Size, time and depth limits of an exchange.
    pub limits: Limits,
    /// The binding to use; the card's first usable interface when `None`.
    pub binding: Option<Binding>,
    /// How to wait for the result (blocking, stream, poll).
    pub mode: Mode,
    /// Keys one of which must have signed the Agent Card; no check when `None`.
    pub card_trust: Option<Vec<PublicKey>>,
    /// How many verified interfaces the cache keeps.
    pub cache_capacity: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            limits: Limits::default(),
            binding: None,
            mode: Mode::Blocking,
            card_trust: None,
            cache_capacity: 64,
        }
    }
}

/// Why a call did not deliver a checked result.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The client stopped before sending (a condition detected locally:
    /// skill_not_advertised, unsupported_interface_version, input_invalid).
    Local(ErrorObject),
    /// The agent broke a requirement of the draft.
    Violation(Violation),
    /// The agent rejected or failed the task (at describe_skill when `describe` is
    /// true), with a well-formed error object or reporting no condition.
    Refused {
        /// Whether the refusal answered describe_skill.
        describe: bool,
        /// The task state it ended in, and the agent's error object if it sent one.
        refusal: Refusal,
    },
    /// The task stopped in another state (canceled, input-required, ...).
    Stopped {
        /// Whether the task was describe_skill's.
        describe: bool,
        /// The task's final state.
        state: String,
    },
    /// The exchange itself failed (unreachable, timeout, a binding error).
    Wire(WireError),
}

impl From<WireError> for Failure {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Violation(v) => Failure::Violation(v),
            other => Failure::Wire(other),
        }
    }
}

impl From<Violation> for Failure {
    fn from(v: Violation) -> Self {
        Failure::Violation(v)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Local(e) => write!(f, "{e}"),
            Failure::Violation(v) => write!(f, "{v}"),
            Failure::Refused { describe, refusal } => {
                let request = if *describe { "describe_skill" } else { "skill" };
                match refusal.condition() {
                    Some(code) => write!(
                        f,
                        "the agent refused the {request} request ({}): {code}",
                        refusal.state
                    ),
                    None => write!(
                        f,
                        "the {request} task ended in {} with no machine-readable condition",
                        refusal.state
                    ),
                }
            }
            Failure::Stopped { describe, state } => write!(
                f,
                "the {} task stopped in {state}",
                if *describe { "describe_skill" } else { "skill" }
            ),
            Failure::Wire(e) => write!(f, "{e}"),
        }
    }
}

/// A target agent, as its card describes it.
#[derive(Debug, Clone)]
pub struct Agent {
    /// The card's URL: the target identity the cache is keyed by.
    pub card_url: String,
    /// The Agent Card as read.
    pub card: Value,
    /// What the card advertises of the extension and its skills.
    pub advertisement: CardAdvertisement,
    /// The interface the calls go to.
    pub endpoint: Endpoint,
    /// Whether the card marks the extension `required: true`.
    pub extension_required: bool,
    /// The `kid`s of the trusted keys whose signatures verified (empty without trust).
    pub signed_by: Vec<String>,
}

/// A delivered and checked result.
#[derive(Debug, Clone, Serialize)]
pub struct Called {
    /// The binding the call used (card, describe_skill and request agree on it).
    #[serde(flatten)]
    pub binding: crate::interface::binding::Binding,
    /// The downstream task's id and context, as the agent issued them.
    pub task_id: String,
    /// The downstream task's context id.
    pub context_id: String,
    /// The checked result: the output, and the supporting records.
    #[serde(flatten)]
    pub delivered: Delivered,
    /// Whether the verified interface came from the cache (no describe_skill sent).
    pub interface_cached: bool,
    /// Whether the agent echoed the extension in the `A2A-Extensions` response header.
    pub activation_echoed: bool,
    /// The hop, when the call was made on behalf of an upstream task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hop: Option<Hop>,
}

/// Runs the client procedure; holds the HTTP client and the interface cache. Share one
/// per process.
#[derive(Debug)]
pub struct Caller {
    http: Http,
    options: Options,
    cache: Mutex<InterfaceCache>,
}

/// Run a future of this module on a current-thread tokio runtime, for callers that do
/// not run tokio themselves (from inside a runtime, await the async form instead).
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Wire(WireError::Unreachable(format!("no async runtime: {e}"))))?;
    Ok(runtime.block_on(future))
}

/// A fresh A2A messageId (128 random bits).
fn message_id() -> String {
    let mut bytes = [0u8; 16];
    // Without randomness, a time-based id is still unique enough per process.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The user Message carrying one skill request object as its single Data Part, marked
/// with the extension (draft "Agent advertisement": the Message's `extensions` list
/// includes the URI when it carries a request object of the draft).
pub fn request_message(request: &Value) -> Value {
    json!({
        "messageId": message_id(),
        "role": "ROLE_USER",
        "parts": [{"data": request}],
        "extensions": [EXTENSION_URI],
    })
}

impl Caller {
    /// A caller with `options`; fails only when no HTTP client can be built.
    pub fn new(options: Options) -> Result<Self, Failure> {
        Ok(Caller {
            http: Http::new(options.limits)?,
            cache: Mutex::new(InterfaceCache::new(options.cache_capacity)),
            options,
        })
    }

    /// The options it was built with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The HTTP client (for probes that send what the procedure never would).
    pub fn http(&self) -> &Http {
        &self.http
    }

    /// How many verified interfaces are cached.
    pub fn cached(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or_default()
    }

    /// Step 1: fetch and read the Agent Card of `agent_url`, check its signature when
    /// keys are trusted, choose its interface, and drop cached interfaces the card no
    /// longer advertises.
    pub async fn agent(&self, agent_url: &str) -> Result<Agent, Failure> {
        let card_url = transport::card_url(agent_url);
        let card = self.http.card(&card_url).await.map_err(|e| match e {
            WireError::Violation(mut v) => {
                v.clause = Clause::CardAvailable;
                Failure::Violation(v)
            }
            other => Failure::Wire(other),
        })?;
        let signed_by = match &self.options.card_trust {
            None => Vec::new(),
            Some(keys) => crate::card::signature::verify(&card, keys)
                .map_err(|e| {
                    Violation::new(
                        Clause::CardSigned,
                        "/signatures",
                        format!("the Agent Card is not signed by a trusted key: {e}"),
                    )
                })?
                .into_iter()
                .map(|k| k.0)
                .collect(),
        };
        let advertisement = crate::client::read_card(&card).map_err(|e| card_error(&card, e))?;
        let endpoint = transport::endpoint(&card, self.options.binding)?;
        let extension_required = advertisement.extension_required;
        if let Ok(mut cache) = self.cache.lock() {
            cache.refresh(&card_url, &advertisement);
        }
        Ok(Agent {
            card_url,
            card,
            advertisement,
            endpoint,
            extension_required,
            signed_by,
        })
    }

    /// Steps 2–6: the verified interface of `skill_id` — from the cache when the card's
    /// binding is unchanged, otherwise by describe_skill (then cached). Returns whether
    /// it came from the cache.
    pub async fn interface(
        &self,
        agent: &Agent,
        skill_id: &str,
    ) -> Result<(VerifiedInterface, bool), Failure> {
        let selected = agent
            .advertisement
            .select(skill_id)
            .map_err(Failure::Local)?;
        if let Some(hit) = self
            .cache
            .lock()
            .ok()
            .and_then(|mut c| c.get(&agent.card_url, selected))
        {
            return Ok((hit, true));
        }
        let request = agent
            .advertisement
            .describe_request(skill_id)
            .map_err(Failure::Local)?;
        let exchange = self
            .http
            .send(
                &agent.endpoint,
                &request_message(&request),
                true,
                self.options.mode,
            )
            .await?;
        let task = final_task::task_of(&exchange.response, Clause::DescribeResponse)?;
        let data = match final_task::describe_result(task)? {
            Ending::Completed(data) => data,
            Ending::Refused(refusal) => {
                return Err(Failure::Refused {
                    describe: true,
                    refusal,
                })
            }
            Ending::Stopped { state } => {
                return Err(Failure::Stopped {
                    describe: true,
                    state,
                })
            }
        };
        let verified = crate::client::verify_describe_response(selected, &data).map_err(|e| {
            match final_task::describe_violation(selected, &data, e) {
                Ok(v) => Failure::Violation(v),
                Err(local) => Failure::Local(local),
            }
        })?;
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(&agent.card_url, verified.clone());
        }
        Ok((verified, false))
    }

    /// Steps 7–10: validate `arguments`, send the skill request object, check the final
    /// Task. With `upstream`, the request carries the hop's correlation metadata.
    pub async fn invoke(
        &self,
        agent: &Agent,
        interface: &VerifiedInterface,
        arguments: Value,
        upstream: Option<&Upstream>,
    ) -> Result<Called, Failure> {
        let request = interface.request(arguments).map_err(Failure::Local)?;
        let mut message = request_message(&request);
        if let Some(up) = upstream {
            up.annotate(&mut message);
        }
        let exchange = self
            .http
            .send(&agent.endpoint, &message, true, self.options.mode)
            .await?;
        let task = final_task::task_of(&exchange.response, Clause::PrimaryResult)?;
        let delivered = match final_task::skill_result(task, interface)? {
            Ending::Completed(d) => d,
            Ending::Refused(refusal) => {
                return Err(Failure::Refused {
                    describe: false,
                    refusal,
                })
            }
            Ending::Stopped { state } => {
                return Err(Failure::Stopped {
                    describe: false,
                    state,
                })
            }
        };
        let text = |p: &str| {
            task.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let task_id = text("/id");
        let binding = interface.advertised().clone();
        let hop = match upstream {
            None => None,
            Some(up) => Some(
                Hop::record(up, &agent.card_url, &task_id, &binding, &text("/status/state"))
                    .ok_or_else(|| {
                        Violation::new(
                            Clause::Transport,
                            "/id",
                            "the downstream task has the upstream task's id at the same agent: the hop cannot be told apart",
                        )
                    })?,
            ),
        };
        Ok(Called {
            binding,
            task_id,
            context_id: text("/contextId"),
            delivered,
            interface_cached: false,
            activation_echoed: exchange.echoed,
            hop,
        })
    }

    /// The whole procedure: card, interface (cached or described), invocation.
    pub async fn call(
        &self,
        agent_url: &str,
        skill_id: &str,
        arguments: Value,
        upstream: Option<&Upstream>,
    ) -> Result<Called, Failure> {
        let agent = self.agent(agent_url).await?;
        let (interface, cached) = self.interface(&agent, skill_id).await?;
        let mut called = self.invoke(&agent, &interface, arguments, upstream).await?;
        called.interface_cached = cached;
        Ok(called)
    }
}

/// A problem reading the card's advertisement: a malformed advertisement is the
/// agent's violation; no extension or another interface version stops the client.
fn card_error(card: &Value, error: ErrorObject) -> Failure {
    if error.code() == Condition::InterfaceInvalid {
        Failure::Violation(
            Violation::new(
                Clause::CardAdvertisement,
                "/capabilities/extensions",
                error.message(),
            )
            .with_condition(Condition::InterfaceInvalid)
            .with_evidence(
                card.pointer("/capabilities/extensions")
                    .unwrap_or(&Value::Null),
            ),
        )
    } else {
        Failure::Local(error)
    }
}
