//! Digests: `sha256:` + lowercase hex of SHA-256 over the RFC 8785 (JCS) bytes of a value.
//!
//! The draft fixes this one algorithm for both the inline-schema digest and the
//! interface_digest. The canonical bytes come from `serde_json_canonicalizer`; the value
//! fed to it must already have passed the I-JSON reader ([`crate::json`]), which is what
//! makes "same value ⇒ same digest" hold across tools.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::fmt;
use std::str::FromStr;

/// The RFC 8785 canonical bytes of a value.
pub fn jcs(value: &Value) -> Vec<u8> {
    // Serializing a serde_json::Value cannot fail: keys are strings and numbers finite.
    serde_json_canonicalizer::to_vec(value).expect("a serde_json::Value always canonicalizes")
}

/// A `sha256:<64 lowercase hex>` digest string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Digest(String);

impl Digest {
    /// The digest of raw bytes.
    pub fn of_bytes(bytes: &[u8]) -> Digest {
        Digest(format!("sha256:{}", hex(&Sha256::digest(bytes))))
    }

    /// The digest of a JSON value's JCS bytes.
    pub fn of_value(value: &Value) -> Digest {
        Digest::of_bytes(&jcs(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

impl FromStr for Digest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let ok = s.strip_prefix("sha256:").is_some_and(|h| {
            h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        if ok {
            Ok(Digest(s.to_string()))
        } else {
            Err(format!(
                "{s:?} is not a digest: expected \"sha256:\" followed by 64 lowercase hex digits"
            ))
        }
    }
}

impl TryFrom<String> for Digest {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Digest> for String {
    fn from(d: Digest) -> String {
        d.0
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_strings_are_strict() {
        assert!("sha256:".parse::<Digest>().is_err());
        assert!(format!("sha256:{}", "A".repeat(64))
            .parse::<Digest>()
            .is_err());
        assert!(format!("sha512:{}", "a".repeat(64))
            .parse::<Digest>()
            .is_err());
        assert!(format!("sha256:{}", "a".repeat(64))
            .parse::<Digest>()
            .is_ok());
    }

    #[test]
    fn member_order_and_whitespace_do_not_change_the_digest() {
        let a = crate::json::parse(br#"{"b": 1, "a": [1.0, "\u00e9"]}"#).unwrap();
        let b = crate::json::parse(r#"{"a":[1,"é"],"b":1}"#.as_bytes()).unwrap();
        assert_eq!(Digest::of_value(&a), Digest::of_value(&b));
        assert_eq!(jcs(&json!({"b": 1, "a": 2})), br#"{"a":2,"b":1}"#);
    }
}
