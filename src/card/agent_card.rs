//! The A2A 1.0 AgentCard as `a2a.proto` defines it: a strict shape check, and the
//! protobuf-JSON form that Agent Card signatures cover.
//!
//! Why not the `a2a-lf` serde types alone: they accept members the A2A SDKs' strict
//! parse refuses (`x-…` members, the 0.3 `supportsAuthenticatedExtendedCard`, both
//! spellings of one field) and refuse what they accept (a card written with the
//! proto's snake_case field names, which protobuf's JSON parser reads as well). The
//! SDKs parse the card with protobuf's JSON mapping, so this module carries the
//! message tree of `lf.a2a.v1.AgentCard` (as a2a-sdk 1.3.0 ships it) and checks a card
//! against it: every member known, in one spelling only, of the right JSON type, every
//! field A2A 1.0 marks REQUIRED present and non-empty, exactly one member in a oneof.
//!
//! The same tree gives the card's protobuf-JSON form ([`protobuf_json`]), which is what
//! a2a-sdk signs and verifies: `MessageToDict` of the parsed card — field names in their
//! camelCase JSON spelling, members at their proto3 default omitted (for a field without
//! presence, `false`; empty strings and lists) — then, recursively, every empty string,
//! list and object and every `null` removed, also inside `params` and `header`
//! (`google.protobuf.Struct`). Fields with explicit presence (`capabilities.streaming`,
//! `pushNotifications`, `extendedAgentCard`) keep a `false`.

use crate::wire::pointer::Problem;
use serde_json::{Map, Value};

/// The kind of a field, as protobuf's JSON mapping reads it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `string`: a JSON string.
    Str,
    /// `bool` without presence: `false` is its default and omitted.
    Bool,
    /// `optional bool`: `false` is kept.
    OptBool,
    Msg(&'static Message),
    RepStr,
    RepMsg(&'static Message),
    /// `map<string, string>`.
    MapStr,
    /// `map<string, Message>`.
    MapMsg(&'static Message),
    /// `google.protobuf.Struct`: any JSON object.
    Struct,
}

#[derive(Debug)]
struct Field {
    /// The camelCase JSON name; the proto (snake_case) name is derived from it.
    name: &'static str,
    kind: Kind,
    /// REQUIRED in A2A 1.0: present and, for strings and lists, not empty.
    required: bool,
}

#[derive(Debug)]
struct Message {
    name: &'static str,
    fields: &'static [Field],
    /// The fields form one `oneof` that must have exactly one member set.
    oneof: bool,
}

const fn f(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        kind,
        required: false,
    }
}

const fn req(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        kind,
        required: true,
    }
}

const fn msg(name: &'static str, fields: &'static [Field]) -> Message {
    Message {
        name,
        fields,
        oneof: false,
    }
}

use Kind::*;

static AGENT_INTERFACE: Message = msg(
    "AgentInterface",
    &[
        req("url", Str),
        req("protocolBinding", Str),
        f("tenant", Str),
        req("protocolVersion", Str),
    ],
);
static AGENT_PROVIDER: Message = msg(
    "AgentProvider",
    &[req("url", Str), req("organization", Str)],
);
static AGENT_EXTENSION: Message = msg(
    "AgentExtension",
    &[
        f("uri", Str),
        f("description", Str),
        f("required", Bool),
        f("params", Struct),
    ],
);
static AGENT_CAPABILITIES: Message = msg(
    "AgentCapabilities",
    &[
        f("streaming", OptBool),
        f("pushNotifications", OptBool),
        f("extensions", RepMsg(&AGENT_EXTENSION)),
        f("extendedAgentCard", OptBool),
    ],
);
static API_KEY: Message = msg(
    "APIKeySecurityScheme",
    &[f("description", Str), f("location", Str), f("name", Str)],
);
static HTTP_AUTH: Message = msg(
    "HTTPAuthSecurityScheme",
    &[
        f("description", Str),
        f("scheme", Str),
        f("bearerFormat", Str),
    ],
);
static AUTHORIZATION_CODE: Message = msg(
    "AuthorizationCodeOAuthFlow",
    &[
        f("authorizationUrl", Str),
        f("tokenUrl", Str),
        f("refreshUrl", Str),
        f("scopes", MapStr),
        f("pkceRequired", Bool),
    ],
);
static CLIENT_CREDENTIALS: Message = msg(
    "ClientCredentialsOAuthFlow",
    &[
        f("tokenUrl", Str),
        f("refreshUrl", Str),
        f("scopes", MapStr),
    ],
);
static IMPLICIT: Message = msg(
    "ImplicitOAuthFlow",
    &[
        f("authorizationUrl", Str),
        f("refreshUrl", Str),
        f("scopes", MapStr),
    ],
);
static PASSWORD: Message = msg(
    "PasswordOAuthFlow",
    &[
        f("tokenUrl", Str),
        f("refreshUrl", Str),
        f("scopes", MapStr),
    ],
);
static DEVICE_CODE: Message = msg(
    "DeviceCodeOAuthFlow",
    &[
        f("deviceAuthorizationUrl", Str),
        f("tokenUrl", Str),
        f("refreshUrl", Str),
        f("scopes", MapStr),
    ],
);
static OAUTH_FLOWS: Message = Message {
    name: "OAuthFlows",
    fields: &[
        f("authorizationCode", Msg(&AUTHORIZATION_CODE)),
        f("clientCredentials", Msg(&CLIENT_CREDENTIALS)),
        f("implicit", Msg(&IMPLICIT)),
        f("password", Msg(&PASSWORD)),
        f("deviceCode", Msg(&DEVICE_CODE)),
    ],
    oneof: true,
};
static OAUTH2: Message = msg(
    "OAuth2SecurityScheme",
    &[
        f("description", Str),
        f("flows", Msg(&OAUTH_FLOWS)),
        f("oauth2MetadataUrl", Str),
    ],
);
static OPEN_ID_CONNECT: Message = msg(
    "OpenIdConnectSecurityScheme",
    &[f("description", Str), f("openIdConnectUrl", Str)],
);
static MTLS: Message = msg("MutualTlsSecurityScheme", &[f("description", Str)]);
static SECURITY_SCHEME: Message = Message {
    name: "SecurityScheme",
    fields: &[
        f("apiKeySecurityScheme", Msg(&API_KEY)),
        f("httpAuthSecurityScheme", Msg(&HTTP_AUTH)),
        f("oauth2SecurityScheme", Msg(&OAUTH2)),
        f("openIdConnectSecurityScheme", Msg(&OPEN_ID_CONNECT)),
        f("mtlsSecurityScheme", Msg(&MTLS)),
    ],
    oneof: true,
};
static STRING_LIST: Message = msg("StringList", &[f("list", RepStr)]);
static SECURITY_REQUIREMENT: Message =
    msg("SecurityRequirement", &[f("schemes", MapMsg(&STRING_LIST))]);
static AGENT_SKILL: Message = msg(
    "AgentSkill",
    &[
        req("id", Str),
        req("name", Str),
        req("description", Str),
        req("tags", RepStr),
        f("examples", RepStr),
        f("inputModes", RepStr),
        f("outputModes", RepStr),
        f("securityRequirements", RepMsg(&SECURITY_REQUIREMENT)),
    ],
);
static SIGNATURE: Message = msg(
    "AgentCardSignature",
    &[
        req("protected", Str),
        req("signature", Str),
        f("header", Struct),
    ],
);
static AGENT_CARD: Message = msg(
    "AgentCard",
    &[
        req("name", Str),
        req("description", Str),
        req("supportedInterfaces", RepMsg(&AGENT_INTERFACE)),
        f("provider", Msg(&AGENT_PROVIDER)),
        req("version", Str),
        f("documentationUrl", Str),
        req("capabilities", Msg(&AGENT_CAPABILITIES)),
        f("securitySchemes", MapMsg(&SECURITY_SCHEME)),
        f("securityRequirements", RepMsg(&SECURITY_REQUIREMENT)),
        req("defaultInputModes", RepStr),
        req("defaultOutputModes", RepStr),
        req("skills", RepMsg(&AGENT_SKILL)),
        f("signatures", RepMsg(&SIGNATURE)),
        f("iconUrl", Str),
    ],
);

/// The proto (snake_case) field name protobuf's JSON parser also accepts.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Every way `card` is not an A2A 1.0 AgentCard, in document order; empty when it is one.
pub fn check(card: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    check_message(card, &AGENT_CARD, "", &mut problems);
    problems
}

/// Hints for members that earlier A2A versions or other conventions use.
fn hint(message: &Message, member: &str) -> &'static str {
    match (message.name, member) {
        ("AgentCard", "supportsAuthenticatedExtendedCard" | "supports_authenticated_extended_card") => {
            "; it is A2A 0.3's: A2A 1.0 has capabilities.extendedAgentCard"
        }
        ("AgentCard" | "AgentCapabilities", "supportsExtendedAgentCard" | "supports_extended_agent_card") => {
            "; A2A 1.0 spells it capabilities.extendedAgentCard"
        }
        ("AgentCard", "url" | "preferredTransport" | "additionalInterfaces" | "protocolVersion") => {
            "; it is A2A 0.3's: A2A 1.0 lists endpoints in supportedInterfaces"
        }
        (_, m) if m.starts_with("x-") => {
            "; A2A 1.0 has no extension members: put extension data in capabilities.extensions[].params"
        }
        _ => "",
    }
}

fn push(problems: &mut Vec<Problem>, pointer: String, message: String) {
    problems.push(Problem { pointer, message });
}

fn check_message(value: &Value, message: &Message, at: &str, problems: &mut Vec<Problem>) {
    let Some(members) = value.as_object() else {
        push(
            problems,
            at.to_string(),
            format!("{} must be a JSON object", message.name),
        );
        return;
    };
    let mut set = 0usize;
    for (name, member) in members {
        let pointer = format!("{at}/{}", crate::wire::pointer::escape(name));
        let Some(field) = message
            .fields
            .iter()
            .find(|f| f.name == name || snake(f.name) == *name)
        else {
            push(
                problems,
                pointer,
                format!(
                    "`{name}` is not a member of an A2A 1.0 {}{}",
                    message.name,
                    hint(message, name)
                ),
            );
            continue;
        };
        if field.name != name && members.contains_key(field.name) {
            push(
                problems,
                pointer,
                format!(
                    "`{name}` and `{}` are two spellings of one {} field; keep one",
                    field.name, message.name
                ),
            );
            continue;
        }
        if !member.is_null() {
            set += 1;
        }
        check_value(member, field, message, &pointer, problems);
    }
    for field in message.fields.iter().filter(|f| f.required) {
        let present = members
            .get(field.name)
            .or_else(|| members.get(&snake(field.name)));
        // `skills` may be empty or absent: an agent with no skills of its own has an
        // empty list, which protobuf JSON (the SDK's own form of a card) omits.
        let empty = match present {
            None | Some(Value::Null) => field.name != "skills",
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(a)) => a.is_empty() && field.name != "skills",
            Some(_) => false,
        };
        if empty {
            push(
                problems,
                at.to_string(),
                format!(
                    "{} requires `{}`{}",
                    message.name,
                    field.name,
                    if present.is_some() {
                        " to be non-empty"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    if message.oneof && set != 1 {
        let names: Vec<&str> = message.fields.iter().map(|f| f.name).collect();
        push(
            problems,
            at.to_string(),
            format!(
                "{} must set exactly one of {}",
                message.name,
                names.join(", ")
            ),
        );
    }
}

fn check_value(
    value: &Value,
    field: &Field,
    message: &Message,
    at: &str,
    problems: &mut Vec<Problem>,
) {
    let wrong = |problems: &mut Vec<Problem>, what: &str| {
        push(
            problems,
            at.to_string(),
            format!("{}.{} must be {what}", message.name, field.name),
        )
    };
    if value.is_null() {
        return; // protobuf's JSON mapping reads null as "not set"
    }
    match field.kind {
        Str if !value.is_string() => wrong(problems, "a string"),
        Bool | OptBool if !value.is_boolean() => wrong(problems, "true or false"),
        Struct if !value.is_object() => wrong(problems, "a JSON object"),
        Msg(inner) => check_message(value, inner, at, problems),
        RepStr => match value.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    if !item.is_string() {
                        push(
                            problems,
                            format!("{at}/{i}"),
                            format!("{}.{} must list strings", message.name, field.name),
                        );
                    }
                }
            }
            None => wrong(problems, "an array of strings"),
        },
        RepMsg(inner) => match value.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    check_message(item, inner, &format!("{at}/{i}"), problems);
                }
            }
            None => wrong(problems, &format!("an array of {}", inner.name)),
        },
        MapStr => match value.as_object() {
            Some(map) => {
                for (k, v) in map {
                    if !v.is_string() {
                        push(
                            problems,
                            format!("{at}/{}", crate::wire::pointer::escape(k)),
                            format!("{}.{} maps names to strings", message.name, field.name),
                        );
                    }
                }
            }
            None => wrong(problems, "an object"),
        },
        MapMsg(inner) => match value.as_object() {
            Some(map) => {
                for (k, v) in map {
                    let p = format!("{at}/{}", crate::wire::pointer::escape(k));
                    check_message(v, inner, &p, problems);
                }
            }
            None => wrong(problems, &format!("an object of {}", inner.name)),
        },
        _ => {}
    }
}

/// The card in camelCase spelling: every known field under its JSON name (a card
/// written with proto names reads the same). Members this module does not know are
/// kept as they are. Call it on a card [`check`] accepted.
pub fn normalize(card: &Value) -> Value {
    rename(card, &AGENT_CARD)
}

fn rename(value: &Value, message: &Message) -> Value {
    let Some(members) = value.as_object() else {
        return value.clone();
    };
    let mut out = Map::new();
    for (name, member) in members {
        match message
            .fields
            .iter()
            .find(|f| f.name == name || snake(f.name) == *name)
        {
            Some(field) => {
                out.insert(field.name.to_string(), rename_value(member, field.kind));
            }
            None => {
                out.insert(name.clone(), member.clone());
            }
        }
    }
    Value::Object(out)
}

fn rename_value(value: &Value, kind: Kind) -> Value {
    match (kind, value) {
        (Msg(inner), v) => rename(v, inner),
        (RepMsg(inner), Value::Array(items)) => {
            Value::Array(items.iter().map(|i| rename(i, inner)).collect())
        }
        (MapMsg(inner), Value::Object(map)) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), rename(v, inner)))
                .collect(),
        ),
        (_, v) => v.clone(),
    }
}

/// The card's protobuf-JSON form without `signatures`, as a2a-sdk 1.3.0 computes it
/// before canonicalizing (`_canonicalize_agent_card`): camelCase names, no member at its
/// proto3 default where the field has no presence, and no `null`, empty string, empty
/// list or empty object anywhere. Its JCS bytes are what an AgentCardSignature signs.
pub fn protobuf_json(card: &Value) -> Value {
    let mut card = normalize(card);
    if let Some(members) = card.as_object_mut() {
        members.remove("signatures");
    }
    let defaults_dropped = drop_defaults(&card, &AGENT_CARD);
    clean(&defaults_dropped).unwrap_or_else(|| Value::Object(Map::new()))
}

/// Remove `false` from fields of kind [`Kind::Bool`] (no presence).
fn drop_defaults(value: &Value, message: &Message) -> Value {
    let Some(members) = value.as_object() else {
        return value.clone();
    };
    let mut out = Map::new();
    for (name, member) in members {
        let field = message.fields.iter().find(|f| f.name == name);
        let kept = match (field.map(|f| f.kind), member) {
            (Some(Bool), Value::Bool(false)) => continue,
            (Some(Msg(inner)), v) => drop_defaults(v, inner),
            (Some(RepMsg(inner)), Value::Array(items)) => {
                Value::Array(items.iter().map(|i| drop_defaults(i, inner)).collect())
            }
            (Some(MapMsg(inner)), Value::Object(map)) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), drop_defaults(v, inner)))
                    .collect(),
            ),
            (_, v) => v.clone(),
        };
        out.insert(name.clone(), kept);
    }
    Value::Object(out)
}

/// a2a-sdk's `_clean_empty`: drop `null`, `""`, `[]` and `{}`, bottom-up (a container
/// emptied by the cleaning goes too). `None` for a value that is dropped.
fn clean(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let kept: Vec<Value> = items.iter().filter_map(clean).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let kept: Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| clean(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card() -> Value {
        json!({
            "name": "Agent", "description": "Does things.", "version": "1.0.0",
            "supportedInterfaces": [{"url": "https://a.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": false, "extensions": [{"uri": "urn:x", "required": false, "params": {"a": "", "b": [], "c": {"d": null}, "e": 0}}]},
            "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"], "examples": []}],
            "signatures": [{"protected": "p", "signature": "s"}]
        })
    }

    #[test]
    fn the_protobuf_json_form_omits_defaults_and_empties() {
        assert_eq!(check(&card()), vec![]);
        assert_eq!(
            protobuf_json(&card()),
            json!({
                "name": "Agent", "description": "Does things.", "version": "1.0.0",
                "supportedInterfaces": [{"url": "https://a.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {"streaming": false, "extensions": [{"uri": "urn:x", "params": {"e": 0}}]},
                "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
                "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]
            })
        );
    }

    #[test]
    fn snake_case_reads_as_camel_case() {
        let mut snake_card = Map::new();
        for (k, v) in card().as_object().unwrap() {
            snake_card.insert(snake(k), v.clone());
        }
        let snake_card = Value::Object(snake_card);
        assert_eq!(check(&snake_card), vec![]);
        assert_eq!(protobuf_json(&snake_card), protobuf_json(&card()));
        assert_eq!(snake("oauth2MetadataUrl"), "oauth2_metadata_url");
    }
}
