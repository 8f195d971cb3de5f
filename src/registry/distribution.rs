//! The read side of the OCI distribution protocol, for a registry that may lie.
//!
//! An agent pulls at start-up from registries and mirrors its vendor does not control,
//! so every answer is treated as hostile until checked, and nothing the registry says
//! can make the agent hold more memory, wait longer, or send its credentials further
//! than the caller allowed (distribution-spec "Pulling manifests", "Pulling blobs"; the
//! token flow of the Docker registry token specification, which the distribution spec
//! leaves to registries and every registry implements):
//!
//! - **Bounded bodies.** Every body — manifest, token answer, blob, error — is read
//!   against a cap: a `Content-Length` above it is refused before a byte is read, and the
//!   bytes are counted as they arrive, so a body that lies about its length or has none
//!   is cut off at the cap. A blob is never buffered: it streams into its SHA-256 and
//!   into the caller's sink, and must be exactly its declared size.
//! - **Timed.** A connect timeout, a per-read timeout (reqwest's), and the whole
//!   operation under one deadline ([`Timeouts::total`], applied by the caller around all
//!   the requests, and by the client to each request as a backstop).
//! - **Credentials only where they belong.** A static bearer token goes to the
//!   registry's own origin only. Basic credentials are sent only when the registry asks
//!   (`401`): to the registry itself for the basic scheme, and to a bearer token realm
//!   only when that realm is HTTPS or the registry's own origin — never to another
//!   origin over plain HTTP ([`CREDENTIALS_WITHHELD`]). Redirects drop the
//!   `Authorization` header when the origin changes (reqwest's rule).
//!
//! Findings name the kind of failure and the reference; never a URL, header or body the
//! registry sent (the one exception is a token realm's origin, which the operator needs
//! to see, and which holds no secret).

use crate::finding::{Code, Finding, Location};
use crate::registry::credentials::Credentials;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode, Url};
use sha2::{Digest as _, Sha256};
use std::io::Write;
use std::time::Duration;

/// The largest token-endpoint answer read (tokens are a few kilobytes).
pub const MAX_AUTH_TOKEN_BYTES: usize = 64 * 1024;
/// The largest error body read (only its `errors[].code` members are looked at).
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// How many redirects a request follows (a blob may live on a CDN).
pub const MAX_REDIRECTS: usize = 5;
/// The message of the finding when Basic credentials would leave for a realm on another
/// origin over plain HTTP.
pub const CREDENTIALS_WITHHELD: &str = "the registry's token realm is on another origin over plain HTTP; the registry credentials are not sent there";

/// The deadlines of one registry operation. A registry that never answers, or answers
/// a byte at a time, cannot hold a caller longer than `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To open a TCP (and TLS) connection.
    pub connect: Duration,
    /// Between two reads of a response: a registry that goes silent this long fails.
    pub read: Duration,
    /// For the whole operation (every request, redirect, token exchange and byte).
    pub total: Duration,
}

impl Timeouts {
    /// The default connect timeout.
    pub const CONNECT: Duration = Duration::from_secs(10);
    /// The default per-read timeout.
    pub const READ: Duration = Duration::from_secs(30);
    /// The default overall deadline.
    pub const TOTAL: Duration = Duration::from_secs(120);
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Timeouts::CONNECT,
            read: Timeouts::READ,
            total: Timeouts::TOTAL,
        }
    }
}

/// A read session with one repository of one registry.
pub struct Session {
    client: reqwest::Client,
    /// `http(s)://host[:port]`
    base: Url,
    repository: String,
    credentials: Credentials,
    /// A bearer token obtained from the realm, for the rest of the session.
    token: Option<String>,
    /// Where findings point (the reference as the operator wrote it).
    at: Location,
}

impl Session {
    /// A session with `registry` (`host[:port]`) for `repository`.
    pub fn new(
        registry: &str,
        repository: &str,
        plain_http: bool,
        credentials: Credentials,
        timeouts: Timeouts,
        at: Location,
    ) -> Result<Session, Finding> {
        let scheme = if plain_http { "http" } else { "https" };
        let base = Url::parse(&format!("{scheme}://{registry}/")).map_err(|_| {
            Finding::new(
                Code::ArtifactNotFound,
                "the reference's registry is not a host name",
                at.clone(),
            )
        })?;
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .read_timeout(timeouts.read)
            .timeout(timeouts.total)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            .build()
            .map_err(|e| {
                Finding::new(
                    Code::Io,
                    format!("cannot start the HTTP client: {e}"),
                    at.clone(),
                )
            })?;
        Ok(Session {
            client,
            base,
            repository: repository.to_string(),
            credentials,
            token: None,
            at,
        })
    }

    /// GET the manifest `reference` (a tag or a digest), accepting `accept`, at most
    /// `cap` bytes. Returns the bytes and the `Docker-Content-Digest` header, if any.
    pub async fn manifest(
        &mut self,
        reference: &str,
        accept: &[&str],
        cap: usize,
    ) -> Result<(Vec<u8>, Option<String>), Finding> {
        let url = self.url(&format!("manifests/{reference}"))?;
        let response = self.get(url, &accept.join(", ")).await?;
        let digest = response
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = read_capped(response, cap, "the manifest", &self.at).await?;
        Ok((bytes, digest))
    }

    /// GET blob `digest` (`sha256:` + 64 hex), which must be exactly `size` bytes, and
    /// stream it into `sink` while hashing. Nothing beyond `size` is read; a different
    /// length or digest is [`Code::DigestMismatch`].
    pub async fn blob(
        &mut self,
        digest: &str,
        size: u64,
        sink: &mut impl Write,
    ) -> Result<(), Finding> {
        let url = self.url(&format!("blobs/{digest}"))?;
        let mut response = self.get(url, "application/octet-stream").await?;
        let mismatch = || {
            Finding::new(
                Code::DigestMismatch,
                "the layer's bytes do not match the size and digest its manifest declares",
                self.at.clone(),
            )
        };
        if response.content_length().is_some_and(|n| n != size) {
            return Err(mismatch());
        }
        let mut hasher = Sha256::new();
        let mut read = 0u64;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| transport(&e, &self.at))?
        {
            read += chunk.len() as u64;
            if read > size {
                return Err(mismatch());
            }
            hasher.update(&chunk);
            sink.write_all(&chunk).map_err(|e| {
                Finding::new(
                    Code::Io,
                    format!("cannot hold the layer while it downloads: {e}"),
                    self.at.clone(),
                )
            })?;
        }
        if read != size || format!("sha256:{:x}", hasher.finalize()) != digest {
            return Err(mismatch());
        }
        Ok(())
    }

    /// GET the list of referrers of the manifest `digest` of type `artifact_type`
    /// (distribution-spec "Listing Referrers": an image index), at most `cap` bytes.
    /// `None` when the registry answers 404: it has no referrers API, and the spec's
    /// referrers tag schema (an index tagged `sha256-<hex>`) stands in for it.
    pub async fn referrers(
        &mut self,
        digest: &str,
        artifact_type: &str,
        cap: usize,
    ) -> Result<Option<Vec<u8>>, Finding> {
        let mut url = self.url(&format!("referrers/{digest}"))?;
        url.query_pairs_mut()
            .append_pair("artifactType", artifact_type);
        match self
            .get(url, "application/vnd.oci.image.index.v1+json")
            .await
        {
            Ok(response) => read_capped(response, cap, "the referrers list", &self.at)
                .await
                .map(Some),
            Err(f) if f.code == Code::ArtifactNotFound => Ok(None),
            Err(f) => Err(f),
        }
    }

    fn url(&self, tail: &str) -> Result<Url, Finding> {
        self.base
            .join(&format!("v2/{}/{tail}", self.repository))
            .map_err(|_| {
                Finding::new(
                    Code::ArtifactNotFound,
                    "the reference does not make a registry URL",
                    self.at.clone(),
                )
            })
    }

    /// A GET with what authorization the session has; on a `401`, the challenge is
    /// answered once (basic, or a token from the realm) and the GET repeated.
    async fn get(&mut self, url: Url, accept: &str) -> Result<Response, Finding> {
        let first = self.send(url.clone(), accept, self.authorization()).await?;
        if first.status() != StatusCode::UNAUTHORIZED {
            return self.checked(first).await;
        }
        let challenge = first
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(Challenge::parse);
        // The 401's body is not needed; it is dropped unread.
        drop(first);
        let header = match challenge {
            Some(Challenge::Basic) => match &self.credentials {
                Credentials::Basic { username, password } => basic(username, password),
                _ => return Err(self.unauthorized("401 Unauthorized")),
            },
            Some(Challenge::Bearer {
                realm,
                service,
                scope,
            }) => {
                let token = self.token_from(&realm, service, scope).await?;
                let header = bearer(&token);
                self.token = Some(token);
                header
            }
            None => return Err(self.unauthorized("401 Unauthorized")),
        };
        let second = self.send(url, accept, Some(header)).await?;
        self.checked(second).await
    }

    fn authorization(&self) -> Option<HeaderValue> {
        if let Some(token) = &self.token {
            return Some(bearer(token));
        }
        match &self.credentials {
            Credentials::Bearer(token) => Some(bearer(token)),
            _ => None,
        }
    }

    async fn send(
        &self,
        url: Url,
        accept: &str,
        authorization: Option<HeaderValue>,
    ) -> Result<Response, Finding> {
        let mut headers = HeaderMap::new();
        if let Ok(accept) = HeaderValue::from_str(accept) {
            headers.insert(ACCEPT, accept);
        }
        if let Some(value) = authorization {
            headers.insert(AUTHORIZATION, value);
        }
        self.client
            .get(url)
            .headers(headers)
            .send()
            .await
            .map_err(|e| transport(&e, &self.at))
    }

    /// The response when it is a success; otherwise the finding its status (and, for a
    /// 4xx, the error codes of its capped body) call for.
    async fn checked(&self, response: Response) -> Result<Response, Finding> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let codes: Vec<String> = if status.is_client_error() {
            let body = read_capped(response, MAX_ERROR_BODY_BYTES, "the error body", &self.at)
                .await
                .unwrap_or_default();
            serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("errors").and_then(|e| e.as_array()).cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.get("code").and_then(|c| c.as_str()).map(str::to_string))
                .collect()
        } else {
            Vec::new()
        };
        let has = |names: &[&str]| codes.iter().any(|c| names.contains(&c.as_str()));
        if status == StatusCode::NOT_FOUND
            || has(&["MANIFEST_UNKNOWN", "BLOB_UNKNOWN", "NAME_UNKNOWN"])
        {
            return Err(Finding::new(
                Code::ArtifactNotFound,
                "the registry has no artifact at this reference",
                self.at.clone(),
            ));
        }
        match status {
            StatusCode::UNAUTHORIZED => Err(self.unauthorized("401 Unauthorized")),
            StatusCode::FORBIDDEN => Err(self.unauthorized("403 Forbidden")),
            _ if has(&["UNAUTHORIZED", "DENIED"]) => Err(self.unauthorized("denied")),
            _ => Err(Finding::new(
                Code::RegistryError,
                format!("the registry answered with HTTP status {}", status.as_u16()),
                self.at.clone(),
            )),
        }
    }

    fn unauthorized(&self, status: &str) -> Finding {
        Finding::new(
            Code::RegistryUnauthorized,
            format!("the registry refused access ({status})"),
            self.at.clone(),
        )
        .with_help("log in with `docker login` or `skopeo login`, or point REGISTRY_AUTH_FILE at a credentials file")
    }

    /// A bearer token from `realm`, presenting Basic credentials only where they may go.
    async fn token_from(
        &self,
        realm: &str,
        service: Option<String>,
        scope: Option<String>,
    ) -> Result<String, Finding> {
        let Ok(mut url) = Url::parse(realm) else {
            return Err(Finding::new(
                Code::RegistryError,
                "the registry's token realm is not an absolute URL",
                self.at.clone(),
            ));
        };
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Finding::new(
                Code::RegistryError,
                "the registry's token realm is not an http(s) URL",
                self.at.clone(),
            ));
        }
        let scope = scope.unwrap_or_else(|| format!("repository:{}:pull", self.repository));
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = &service {
                query.append_pair("service", service);
            }
            query.append_pair("scope", &scope);
        }
        let authorization = match &self.credentials {
            Credentials::Basic { username, password } => {
                if !credentials_may_go_to(&url, &self.base) {
                    return Err(Finding::new(
                        Code::RegistryUnauthorized,
                        format!("{CREDENTIALS_WITHHELD} (realm origin {})", origin(&url)),
                        self.at.clone(),
                    )
                    .with_help("the registry (or whoever answers for it) asked for the credentials to be sent in clear text to another server; use a registry whose token realm is HTTPS, or its own origin"));
                }
                Some(basic(username, password))
            }
            // A static token is for the registry itself, and anonymity is anonymous.
            Credentials::Bearer(_) | Credentials::Anonymous => None,
        };
        let response = self.send(url, "application/json", authorization).await?;
        if !response.status().is_success() {
            return Err(match response.status() {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                    self.unauthorized("the token realm refused the credentials")
                }
                status => Finding::new(
                    Code::RegistryError,
                    format!(
                        "the registry's token realm answered with HTTP status {}",
                        status.as_u16()
                    ),
                    self.at.clone(),
                ),
            });
        }
        let body =
            read_capped(response, MAX_AUTH_TOKEN_BYTES, "the token answer", &self.at).await?;
        let answer: serde_json::Value = serde_json::from_slice(&body).map_err(|_| {
            Finding::new(
                Code::RegistryError,
                "the registry's token realm did not answer with JSON",
                self.at.clone(),
            )
        })?;
        ["token", "access_token"]
            .iter()
            .find_map(|k| answer.get(*k).and_then(|t| t.as_str()))
            .filter(|t| !t.is_empty() && HeaderValue::from_str(&format!("Bearer {t}")).is_ok())
            .map(str::to_string)
            .ok_or_else(|| {
                Finding::new(
                    Code::RegistryError,
                    "the registry's token realm answered without a usable token",
                    self.at.clone(),
                )
            })
    }
}

/// Whether Basic credentials for the registry at `registry` may be sent to `realm`:
/// over HTTPS, or to the registry's own origin (scheme, host and port).
pub fn credentials_may_go_to(realm: &Url, registry: &Url) -> bool {
    realm.scheme() == "https" || origin(realm) == origin(registry)
}

/// `scheme://host[:port]` of a URL (the port always written).
pub fn origin(url: &Url) -> String {
    format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    )
}

/// A `WWW-Authenticate` challenge, as far as a pull needs it.
#[derive(Debug, PartialEq, Eq)]
enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
}

impl Challenge {
    /// Parse `Basic realm="…"` or `Bearer realm="…",service="…",scope="…"`. An unknown
    /// scheme, or a bearer challenge without a realm, is `Basic`'s opposite: no way in
    /// — it parses as a bearer challenge with an empty realm, refused later.
    fn parse(header: &str) -> Challenge {
        let (scheme, rest) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return Challenge::Basic;
        }
        let mut params = std::collections::BTreeMap::new();
        let mut rest = rest.trim();
        while let Some((key, after)) = rest.split_once('=') {
            let key = key
                .trim()
                .trim_start_matches(',')
                .trim()
                .to_ascii_lowercase();
            let after = after.trim_start();
            let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
                match quoted.find('"') {
                    Some(end) => (&quoted[..end], &quoted[end + 1..]),
                    None => (quoted, ""),
                }
            } else {
                match after.find(',') {
                    Some(end) => (&after[..end], &after[end..]),
                    None => (after, ""),
                }
            };
            params.insert(key, value.to_string());
            rest = tail.trim_start().trim_start_matches(',');
        }
        Challenge::Bearer {
            realm: params.remove("realm").unwrap_or_default(),
            service: params.remove("service"),
            scope: params.remove("scope"),
        }
    }
}

fn basic(username: &str, password: &str) -> HeaderValue {
    let mut value = HeaderValue::from_str(&format!(
        "Basic {}",
        STANDARD.encode(format!("{username}:{password}"))
    ))
    .expect("base64 is a valid header value");
    value.set_sensitive(true);
    value
}

fn bearer(token: &str) -> HeaderValue {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
    value.set_sensitive(true);
    value
}

/// Read a body of at most `cap` bytes: a larger `Content-Length` is refused before a
/// byte is read, and the bytes are counted as they come.
async fn read_capped(
    mut response: Response,
    cap: usize,
    what: &str,
    at: &Location,
) -> Result<Vec<u8>, Finding> {
    let too_large = || {
        Finding::new(
            Code::ResourceLimitExceeded,
            format!("{what} is larger than {cap} bytes"),
            at.clone(),
        )
    };
    let declared = response.content_length();
    if declared.is_some_and(|n| n > cap as u64) {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(declared.map_or(0, |n| n as usize).min(cap));
    while let Some(chunk) = response.chunk().await.map_err(|e| transport(&e, at))? {
        let needed = bytes.len() + chunk.len();
        if needed > cap {
            return Err(too_large());
        }
        // Grow by doubling, but never past the cap: an endless body holds at most `cap`.
        if needed > bytes.capacity() {
            let want = needed.max(bytes.capacity() * 2).min(cap);
            bytes.reserve_exact(want - bytes.len());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// A transport failure, by kind, with the innermost cause ("Connection refused").
fn transport(e: &reqwest::Error, at: &Location) -> Finding {
    let what = if e.is_connect() {
        "cannot connect to the registry"
    } else if e.is_timeout() {
        "the registry did not answer in time"
    } else if e.is_redirect() {
        "the registry redirected too many times"
    } else if e.is_body() || e.is_decode() {
        "the registry's answer broke off"
    } else {
        "the request to the registry failed"
    };
    let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(next) = cause.and_then(std::error::Error::source) {
        cause = Some(next);
    }
    // The innermost cause names the failure, never the URL (the outer layers repeat it).
    let cause = cause
        .map(|c| c.to_string())
        .filter(|c| !c.contains("://"))
        .map(|c| format!(": {c}"))
        .unwrap_or_default();
    Finding::new(Code::RegistryError, format!("{what}{cause}"), at.clone()).with_help(
        "check the address and that the registry is up; a registry without TLS needs --plain-http",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse_as_registries_write_them() {
        assert_eq!(
            Challenge::parse(r#"Basic realm="Registry Realm""#),
            Challenge::Basic
        );
        assert_eq!(
            Challenge::parse(
                r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#
            ),
            Challenge::Bearer {
                realm: "https://auth.example/token".into(),
                service: Some("registry.example".into()),
                scope: Some("repository:a/b:pull".into()),
            }
        );
        assert_eq!(
            Challenge::parse("Bearer realm=http://x/t, service=s"),
            Challenge::Bearer {
                realm: "http://x/t".into(),
                service: Some("s".into()),
                scope: None,
            }
        );
    }

    #[test]
    fn credentials_go_to_https_realms_or_the_registry_itself() {
        let url = |s: &str| Url::parse(s).unwrap();
        let registry = url("http://127.0.0.1:5000/");
        assert!(credentials_may_go_to(
            &url("https://auth.example/token"),
            &registry
        ));
        assert!(credentials_may_go_to(
            &url("http://127.0.0.1:5000/token"),
            &registry
        ));
        for foreign in [
            "http://127.0.0.1:5001/token",
            "http://localhost:5000/token",
            "http://auth.example/token",
        ] {
            assert!(
                !credentials_may_go_to(&url(foreign), &registry),
                "{foreign}"
            );
        }
        assert_eq!(
            origin(&url("http://auth.example/t?x")),
            "http://auth.example:80"
        );
    }
}
