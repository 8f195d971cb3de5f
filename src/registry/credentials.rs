//! Registry credentials: the ones `docker login`, `podman login` and `skopeo login` wrote.
//!
//! A fleet already has its registry credentials in the standard files, put there by CI
//! secrets or by the orchestrator; asking for them again in another form would only add a
//! place for them to leak. So the lookup is the one containers tools share:
//! `REGISTRY_AUTH_FILE` when it is set (and then only that file), otherwise
//! `$XDG_RUNTIME_DIR/containers/auth.json`, then `$DOCKER_CONFIG/config.json` or
//! `~/.docker/config.json`. The first file with an entry for the registry wins. An entry
//! is `auth` (base64 of `user:password`), `username` + `password`, or `registrytoken` (a
//! bearer token). What the registry then asks for, basic or bearer-token flow, is the
//! registry client's business ([`crate::registry`]).
//!
//! Secrets never appear in a finding: messages name the file, never what it holds.

use crate::finding::{Code, Finding};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What to present to a registry.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum Credentials {
    /// No entry for the registry: pull anonymously.
    #[default]
    Anonymous,
    /// A user name and password (or personal access token) for the basic flow, or to
    /// exchange for a bearer token when the registry asks for one.
    Basic {
        /// The user name.
        username: String,
        /// The password or personal access token.
        password: String,
    },
    /// A bearer token to present as it is.
    Bearer(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::Basic { username, .. } => write!(f, "Basic({username}, ***)"),
            Credentials::Bearer(_) => f.write_str("Bearer(***)"),
        }
    }
}

/// The files searched, in order, given the environment.
pub fn auth_files() -> Vec<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(file) = env("REGISTRY_AUTH_FILE") {
        return vec![PathBuf::from(file)];
    }
    let mut files = Vec::new();
    if let Some(runtime) = env("XDG_RUNTIME_DIR") {
        files.push(Path::new(&runtime).join("containers/auth.json"));
    }
    if let Some(dir) = env("DOCKER_CONFIG") {
        files.push(Path::new(&dir).join("config.json"));
    } else if let Some(home) = env("HOME") {
        files.push(Path::new(&home).join(".docker/config.json"));
    }
    files
}

/// The credentials for `registry` (`host` or `host:port`) from the standard files.
/// A missing file is skipped; a file that exists but cannot be read or parsed is an
/// error, since silently pulling anonymously would hide the real problem.
pub fn for_registry(registry: &str) -> Result<Credentials, Finding> {
    for file in auth_files() {
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Finding::at_file(
                    Code::Io,
                    format!("cannot read the registry credentials file: {e}"),
                    &file,
                ))
            }
        };
        if let Some(credentials) = lookup(&bytes, registry).map_err(|why| {
            Finding::at_file(
                Code::from(&why),
                format!("the registry credentials file is unusable: {why}"),
                &file,
            )
        })? {
            return Ok(credentials);
        }
    }
    Ok(Credentials::Anonymous)
}

/// Why an auth file is unusable. The words name the rule broken, never what the file
/// holds.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unusable {
    /// The file is not JSON (the parser's reason: what it expected, and where).
    #[error("not valid JSON ({0})")]
    NotJson(serde_json::Error),
    /// `auths` is there but not an object.
    #[error("\"auths\" is not an object")]
    AuthsNotObject,
    /// An `auth` entry is not base64.
    #[error("an \"auth\" entry is not base64")]
    AuthNotBase64,
    /// An `auth` entry decodes to something other than UTF-8.
    #[error("an \"auth\" entry is not UTF-8 user:password")]
    AuthNotUtf8,
    /// An `auth` entry has no `:` between user and password.
    #[error("an \"auth\" entry is not user:password")]
    AuthNotUserPassword,
}

/// An unusable credentials file means no credentials could be presented:
/// `registry_unauthorized`, whatever is wrong in it.
impl From<&Unusable> for Code {
    fn from(_: &Unusable) -> Code {
        Code::RegistryUnauthorized
    }
}

/// The entry for `registry` in the text of one auth file, if any.
pub fn lookup(bytes: &[u8], registry: &str) -> Result<Option<Credentials>, Unusable> {
    let value: Value = serde_json::from_slice(bytes).map_err(Unusable::NotJson)?;
    let Some(auths) = value.get("auths") else {
        return Ok(None);
    };
    let Value::Object(auths) = auths else {
        return Err(Unusable::AuthsNotObject);
    };
    let wanted = normalize(registry);
    let Some((_, entry)) = auths.iter().find(|(key, _)| normalize(key) == wanted) else {
        return Ok(None);
    };
    let text = |name: &str| {
        entry
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(token) = text("registrytoken") {
        return Ok(Some(Credentials::Bearer(token.to_string())));
    }
    if let (Some(username), Some(password)) = (text("username"), text("password")) {
        return Ok(Some(Credentials::Basic {
            username: username.to_string(),
            password: password.to_string(),
        }));
    }
    if let Some(auth) = text("auth") {
        let decoded = STANDARD
            .decode(auth.trim())
            .map_err(|_| Unusable::AuthNotBase64)?;
        let decoded = String::from_utf8(decoded).map_err(|_| Unusable::AuthNotUtf8)?;
        let (username, password) = decoded
            .split_once(':')
            .ok_or(Unusable::AuthNotUserPassword)?;
        return Ok(Some(Credentials::Basic {
            username: username.to_string(),
            password: password.to_string(),
        }));
    }
    Ok(None)
}

/// `https://host:port/v1/` and `host:port` name the same registry; Docker Hub has
/// several spellings.
fn normalize(key: &str) -> String {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = key.split('/').next().unwrap_or(key).to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" | "docker.io" => "docker.io".into(),
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_any_spelling_of_the_registry() {
        let file = serde_json::json!({"auths": {
            "https://127.0.0.1:5000/v1/": {"auth": STANDARD.encode("ci:s3cret")},
            "registry.example": {"username": "u", "password": "p"},
            "tokens.example": {"registrytoken": "t0k"},
            "https://index.docker.io/v1/": {"auth": STANDARD.encode("hub:pw")},
        }})
        .to_string();
        let get = |r| lookup(file.as_bytes(), r).unwrap();
        assert_eq!(
            get("127.0.0.1:5000"),
            Some(Credentials::Basic {
                username: "ci".into(),
                password: "s3cret".into()
            })
        );
        assert!(matches!(
            get("registry.example"),
            Some(Credentials::Basic { .. })
        ));
        assert_eq!(
            get("tokens.example"),
            Some(Credentials::Bearer("t0k".into()))
        );
        assert!(matches!(get("docker.io"), Some(Credentials::Basic { .. })));
        assert_eq!(get("other.example"), None);
    }

    #[test]
    fn a_broken_entry_is_an_error_that_shows_no_secret() {
        let file = r#"{"auths": {"r.example": {"auth": "bm9jb2xvbg=="}}}"#;
        let err = lookup(file.as_bytes(), "r.example")
            .unwrap_err()
            .to_string();
        assert!(err.contains("user:password"), "{err}");
        assert!(!err.contains("nocolon"));
        let debug = format!(
            "{:?}",
            Credentials::Basic {
                username: "u".into(),
                password: "hunter2".into()
            }
        );
        assert!(!debug.contains("hunter2"));
    }
}
