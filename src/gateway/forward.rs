//! Which of a caller's request headers the gateway passes on to the upstream, so an
//! upstream that authenticates its callers can sit behind the gateway (draft "Security
//! Considerations": the gateway adds checks, it does not take over the upstream's
//! authorization).
//!
//! Passed on, to every upstream call a request leads to (a send, the GetTask that
//! recognises a Task, a CancelTask the gateway sends when it fails the Task):
//!
//! - `Authorization`, as the caller sent it;
//! - `A2A-Extensions`, less the schema-interface extension (the gateway implements it;
//!   the upstream needs it not), so extensions the upstream itself supports stay
//!   activated end to end, as A2A's extension propagation through an intermediary does;
//! - each header the operator names with `--forward-header NAME`.
//!
//! Never passed on: the hop-by-hop headers (RFC 9110 section 7.6.1: `Connection`, the
//! headers it names, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`,
//! `Upgrade`) and what the gateway writes itself for the upstream (`Host`,
//! `Content-Length`, `Content-Type`, `Accept`, `A2A-Version`, chosen from the upstream's
//! card). Header values are never logged.

use a2a_server::ServiceParams;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Headers that are never forwarded, whatever the operator names.
const NEVER: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "content-type",
    "accept",
    "a2a-version",
];

/// Why an operator's `--forward-header` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderRefused {
    /// Not an HTTP field name.
    #[error("write an HTTP header name (letters, digits and -!#$%&'*+.^_`|~)")]
    NotAName,
    /// One of the names never forwarded (the name, from that fixed list).
    #[error("{0} is never forwarded: a hop-by-hop header, or one the gateway writes itself for the upstream")]
    NeverForwarded(&'static str),
}

/// An operator's `--forward-header` value read as a header name: an HTTP field name
/// that is not one of those never forwarded (the error says which rule it breaks).
pub fn header_name(text: &str) -> Result<HeaderName, HeaderRefused> {
    let name =
        HeaderName::from_bytes(text.trim().as_bytes()).map_err(|_| HeaderRefused::NotAName)?;
    if let Some(never) = NEVER.iter().find(|n| **n == name.as_str()) {
        return Err(HeaderRefused::NeverForwarded(never));
    }
    Ok(name)
}

/// What the gateway forwards: the names beyond `Authorization` and `A2A-Extensions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardPolicy {
    extra: Vec<HeaderName>,
}

impl ForwardPolicy {
    /// A policy forwarding also `names` (the `--forward-header` values, read by
    /// [`header_name`]; a name never forwarded is left out here too).
    pub fn new(names: Vec<HeaderName>) -> ForwardPolicy {
        let mut extra: Vec<HeaderName> = Vec::new();
        for name in names {
            if !NEVER.contains(&name.as_str()) && !extra.contains(&name) {
                extra.push(name);
            }
        }
        ForwardPolicy { extra }
    }

    /// The headers of a caller's request (`params`) that go to the upstream.
    pub fn select(&self, params: &ServiceParams) -> HeaderMap {
        let mut out = HeaderMap::new();
        // Names the caller's Connection header marks hop-by-hop.
        let hop: Vec<String> = values(params, "connection")
            .flat_map(|v| v.split(','))
            .map(|n| n.trim().to_ascii_lowercase())
            .collect();
        let mut put = |name: &HeaderName, value: &str| {
            if hop.iter().any(|h| h == name.as_str()) {
                return;
            }
            if let Ok(value) = HeaderValue::from_str(value) {
                out.append(name.clone(), value);
            }
        };
        for value in values(params, "authorization") {
            put(&reqwest::header::AUTHORIZATION, value);
        }
        let extensions: Vec<&str> = values(params, "a2a-extensions")
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|u| !u.is_empty() && *u != crate::card::a2a::EXTENSION_URI)
            .collect();
        if !extensions.is_empty() {
            put(
                &HeaderName::from_static("a2a-extensions"),
                &extensions.join(", "),
            );
        }
        for name in &self.extra {
            if name == reqwest::header::AUTHORIZATION || name.as_str() == "a2a-extensions" {
                continue;
            }
            for value in values(params, name.as_str()) {
                put(name, value);
            }
        }
        out
    }
}

fn values<'a>(params: &'a ServiceParams, name: &str) -> impl Iterator<Item = &'a str> {
    params.get(name).into_iter().flatten().map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> ServiceParams {
        let mut p = ServiceParams::new();
        for (k, v) in pairs {
            p.entry(k.to_string()).or_default().push(v.to_string());
        }
        p
    }

    #[test]
    fn authorization_and_other_extensions_go_the_schema_interface_extension_stays() {
        let uri = crate::card::a2a::EXTENSION_URI;
        let p = params(&[
            ("authorization", "Bearer t"),
            ("a2a-extensions", &format!("{uri}, urn:other")),
            ("cookie", "c"),
            ("x-tenant", "acme"),
        ]);
        let out = ForwardPolicy::default().select(&p);
        assert_eq!(out.get("authorization").unwrap(), "Bearer t");
        assert_eq!(out.get("a2a-extensions").unwrap(), "urn:other");
        assert!(out.get("cookie").is_none() && out.get("x-tenant").is_none());
        let only_ours = params(&[("a2a-extensions", uri)]);
        assert!(ForwardPolicy::default().select(&only_ours).is_empty());
        let named = ForwardPolicy::new(vec![header_name("X-Tenant").unwrap()]);
        assert_eq!(named.select(&p).get("x-tenant").unwrap(), "acme");
    }

    #[test]
    fn hop_by_hop_headers_are_never_forwarded() {
        for name in [
            "Connection",
            "TE",
            "upgrade",
            "Proxy-Authorization",
            "A2A-Version",
        ] {
            assert!(header_name(name).is_err(), "{name}");
        }
        assert!(header_name("bad name").is_err());
        // A header the caller's Connection header names is hop-by-hop for this hop.
        let p = params(&[("connection", "X-Tenant, close"), ("x-tenant", "acme")]);
        let named = ForwardPolicy::new(vec![header_name("x-tenant").unwrap()]);
        assert!(named.select(&p).is_empty());
    }
}
