//! The gateway's own Agent Card (draft "Agent advertisement"): the operator's base card
//! with the gateway's interfaces (JSON-RPC and HTTP+JSON at its public URL, A2A 1.0,
//! streaming), merged with the bundle's skills, describe_skill and the extension
//! ([`crate::card::a2a::merge_card`], the same merge `skillbundle card` makes), the
//! extension's `required` flag set for strict mode, and signed when keys are given
//! ([`crate::card::signature`]). Rebuilt on every reload.

use crate::agent::Bundle;
use crate::card::a2a::{describe_problems, merge_card, CardError, EXTENSION_URI};
use crate::crypto::keys::SigningKeyPair;
use crate::finding::{Code, Finding, Location};
use serde_json::{json, Value};

/// What the card is built from besides the bundle.
#[derive(Clone)]
pub struct CardSettings {
    /// The operator's base card (A2A 1.0 JSON), or `None` for one named after the
    /// bundle.
    pub base: Option<Value>,
    /// The URL callers reach the gateway at (`http://HOST:PORT`).
    pub public_url: String,
    /// Keys to sign the card with.
    pub sign_keys: Vec<SigningKeyPair>,
}

impl std::fmt::Debug for CardSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardSettings")
            .field("public_url", &self.public_url)
            .field("sign_keys", &self.sign_keys.len())
            .finish_non_exhaustive()
    }
}

impl CardSettings {
    /// The gateway's interfaces: JSON-RPC at the public URL (its `/`), HTTP+JSON at the
    /// same base.
    pub fn interfaces(&self) -> Value {
        let url = self.public_url.trim_end_matches('/');
        json!([
            {"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ])
    }

    /// The card for `bundle`.
    pub fn build(&self, bundle: &Bundle, require_extension: bool) -> Result<Value, Finding> {
        let mut base = self.base.clone().unwrap_or_else(|| {
            json!({
                "name": bundle.name(),
                "description": format!("{} {}: schema-governed skills, enforced by skillbundle serve", bundle.name(), bundle.version()),
                "version": bundle.version(),
                "capabilities": {},
                "defaultInputModes": ["application/json"],
                "defaultOutputModes": ["application/json"],
                "skills": [],
            })
        });
        let Some(members) = base.as_object_mut() else {
            return Err(invalid(
                "the base Agent Card is not a JSON object".to_string(),
            ));
        };
        // The gateway's interfaces replace the base's: clients reach the upstream only
        // through the gateway. Signatures covered the old content and are dropped when
        // the card is signed anew.
        members.insert("supportedInterfaces".into(), self.interfaces());
        if !self.sign_keys.is_empty() {
            members.remove("signatures");
        }
        let capabilities = members.entry("capabilities").or_insert_with(|| json!({}));
        if let Some(c) = capabilities.as_object_mut() {
            c.insert("streaming".into(), json!(true));
            c.insert("pushNotifications".into(), json!(false));
        }
        let mut card =
            merge_card(&base, bundle.extension(), bundle.agent_skills()).map_err(|e| {
                invalid(match e {
                    CardError::NotACard(problems) => describe_problems(&problems),
                    other => other.to_string(),
                })
            })?;
        if require_extension {
            if let Some(extensions) = card
                .pointer_mut("/capabilities/extensions")
                .and_then(Value::as_array_mut)
            {
                for e in extensions.iter_mut().filter(|e| e["uri"] == EXTENSION_URI) {
                    e["required"] = json!(true);
                }
            }
        }
        Ok(crate::card::signature::sign(&card, &self.sign_keys))
    }
}

fn invalid(message: String) -> Finding {
    Finding::new(
        Code::CardInvalid,
        format!("the gateway's Agent Card cannot be built: {message}"),
        Location::default(),
    )
}
