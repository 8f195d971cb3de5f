//! Digests: `sha256:` + lowercase hex of SHA-256 over the RFC 8785 (JCS) bytes of a value.
//!
//! The draft fixes this one algorithm for both the inline-schema digest and the
//! interface_digest. The value fed to it must already have passed the I-JSON reader
//! ([`crate::wire::json`]), which is what makes "same value ⇒ same digest" hold across tools.
//!
//! The canonical bytes are written by [`jcs`], a direct walk over the `serde_json::Value`
//! rather than `serde_json_canonicalizer`: that crate serializes every member name to JSON,
//! parses it back and re-encodes it as UTF-16 to sort it, and was a third of the build's
//! instructions. The output is the same bytes: the RFC 8785 vectors
//! (`tests/integration/jcs_vectors.rs`) and a property test against
//! `serde_json_canonicalizer` check it.
//! Numbers are formatted as ECMAScript does (`ryu-js`, the formatter that crate uses too).

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};
use sha2::{Digest as _, Sha256};
use std::cmp::Ordering;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// The RFC 8785 canonical bytes of a value.
pub fn jcs(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_jcs(value, &mut out);
    out
}

/// Append the RFC 8785 canonical bytes of `value` to `out`.
pub fn write_jcs(value: &Value, out: &mut Vec<u8>) {
    write_marked(value, out, &mut Marks::default());
}

/// [`jcs`], also telling where in the output each of `marks` was written. A mark is
/// found by address, so it must be a value inside `value` (others are never found).
///
/// JCS is compositional: the bytes of a member are its own canonical bytes, wherever it
/// sits. So one pass gives both a document's digest and the digest of any value inside.
pub fn jcs_marking(value: &Value, marks: &[&Value]) -> (Vec<u8>, Vec<Option<Range<usize>>>) {
    let mut out = Vec::with_capacity(256);
    let mut found = vec![None; marks.len()];
    write_marked(
        value,
        &mut out,
        &mut Marks {
            values: marks,
            found: &mut found,
        },
    );
    (out, found)
}

#[derive(Default)]
struct Marks<'a, 'b> {
    values: &'a [&'a Value],
    found: &'b mut [Option<Range<usize>>],
}

fn write_marked(value: &Value, out: &mut Vec<u8>, marks: &mut Marks<'_, '_>) {
    let start = out.len();
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_marked(item, out, marks);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| utf16_cmp(a.0, b.0));
            out.push(b'{');
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(key, out);
                out.push(b':');
                write_marked(item, out, marks);
            }
            out.push(b'}');
        }
    }
    if let Some(i) = marks
        .values
        .iter()
        .position(|mark| std::ptr::eq(*mark, value))
    {
        marks.found[i] = Some(start..out.len());
    }
}

/// Member names sort by their UTF-16 code units (RFC 8785 section 3.2.3). For ASCII
/// names that is plain byte order.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.as_bytes().cmp(b.as_bytes())
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// ECMAScript's Number-to-String of the value as an IEEE 754 double. Integers an I-JSON
/// reader accepts (|n| ≤ 2^53) print as plain decimals, exactly as ECMAScript prints them.
fn write_number(n: &Number, out: &mut Vec<u8>) {
    const EXACT: u64 = 1 << 53;
    if let Some(u) = n.as_u64().filter(|u| *u <= EXACT) {
        out.extend_from_slice(u.to_string().as_bytes());
    } else if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= EXACT) {
        out.extend_from_slice(i.to_string().as_bytes());
    } else {
        // Without serde_json's arbitrary_precision every Number has an f64 view, and a
        // Number is never NaN or infinite.
        let f = n.as_f64().unwrap_or_default();
        out.extend_from_slice(ryu_js::Buffer::new().format_finite(f).as_bytes());
    }
}

/// A JSON string as RFC 8785 writes it: only `"`, `\` and control characters escaped,
/// with the short forms where JSON has them and lowercase `\u00xx` otherwise.
pub(crate) fn write_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// A `sha256:<64 lowercase hex>` digest string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Digest(String);

impl Digest {
    /// The digest of raw bytes.
    pub fn of_bytes(bytes: &[u8]) -> Digest {
        Digest::of_hash(&Sha256::digest(bytes))
    }

    /// The digest whose SHA-256 is `hash` (32 bytes, from a hasher the caller fed).
    pub fn of_hash(hash: &[u8]) -> Digest {
        Digest(format!("sha256:{}", hex(hash)))
    }

    /// The digest of a JSON value's JCS bytes.
    pub fn of_value(value: &Value) -> Digest {
        Digest::of_bytes(&jcs(value))
    }

    /// The digest's text, `sha256:` and 64 lowercase hex digits.
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

/// A text that is not `sha256:` followed by 64 lowercase hex digits. The text itself
/// is not repeated: it may come from a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a digest: expected \"sha256:\" followed by 64 lowercase hex digits")]
pub struct NotADigest;

impl FromStr for Digest {
    type Err = NotADigest;
    fn from_str(s: &str) -> Result<Self, NotADigest> {
        let ok = s.strip_prefix("sha256:").is_some_and(|h| {
            h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        if ok {
            Ok(Digest(s.to_string()))
        } else {
            Err(NotADigest)
        }
    }
}

impl TryFrom<String> for Digest {
    type Error = NotADigest;
    fn try_from(s: String) -> Result<Self, NotADigest> {
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

    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-(1i64 << 53)..=(1i64 << 53)).prop_map(|i| json!(i)),
            any::<u64>().prop_map(|u| json!(u)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
            "[\\x00-\\x1f\"\\\\/a\u{e9}\u{2028}\u{fffd}\u{1f600}]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        "[a-c\u{e9}\u{ff61}\u{10000}\u{1f600}\u{0}-\u{1f}]{0,3}",
                        inner
                    ),
                    0..6
                )
                .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The same bytes as serde_json_canonicalizer, the implementation this replaced.
        #[test]
        fn jcs_matches_serde_json_canonicalizer(value in any_value()) {
            let reference = serde_json_canonicalizer::to_vec(&value).unwrap();
            proptest::prop_assert_eq!(
                String::from_utf8(jcs(&value)).unwrap(),
                String::from_utf8(reference).unwrap()
            );
        }
    }

    #[test]
    fn marked_values_are_their_own_canonical_bytes() {
        let doc = json!({"z": {"b": [1, 2.5], "a": "\u{e9}"}, "a": [true, {"y": null, "x": 1}]});
        let marks = [&doc["z"], &doc["a"][1], &doc["a"][0]];
        let other = json!({"b": 1});
        let (bytes, found) = jcs_marking(&doc, &[marks[0], marks[1], marks[2], &other]);
        assert_eq!(bytes, jcs(&doc));
        for (mark, range) in marks.iter().zip(&found) {
            assert_eq!(&bytes[range.clone().unwrap()], jcs(mark).as_slice());
        }
        assert_eq!(found[3], None);
    }

    #[test]
    fn jcs_escapes_and_sorts_as_rfc_8785_says() {
        let v = json!({"\u{1f600}": 1, "\u{ff61}": 2, "b": "\u{7}\u{1f}\"\\/\n\u{7f}\u{2028}", "a": [-0.0, 1e21, 1.5e-7, 100.0]});
        assert_eq!(
            String::from_utf8(jcs(&v)).unwrap(),
            "{\"a\":[0,1e+21,1.5e-7,100],\"b\":\"\\u0007\\u001f\\\"\\\\/\\n\u{7f}\u{2028}\",\"\u{1f600}\":1,\"\u{ff61}\":2}"
        );
    }

    #[test]
    fn member_order_and_whitespace_do_not_change_the_digest() {
        let a = crate::wire::json::parse(br#"{"b": 1, "a": [1.0, "\u00e9"]}"#).unwrap();
        let b = crate::wire::json::parse(r#"{"a":[1,"é"],"b":1}"#.as_bytes()).unwrap();
        assert_eq!(Digest::of_value(&a), Digest::of_value(&b));
        assert_eq!(jcs(&json!({"b": 1, "a": 2})), br#"{"a":2,"b":1}"#);
    }
}
