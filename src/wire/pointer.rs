//! JSON Pointer (RFC 6901) helpers shared by the schema checks, and [`Problem`], the one
//! `{pointer, message}` type for what is wrong where in a JSON value.
//!
//! Every schema finding names the place it is about with a JSON Pointer into the schema
//! value, and the closure check has to follow pointers that appear in `$ref` fragments.
//! Both directions must be exact: a token containing `/` or `~` is escaped as `~1` / `~0`
//! when a pointer is written, and a pointer read from a reference is rejected when it
//! uses an escape RFC 6901 does not define or names an array index with a leading zero.
//! One small module keeps those rules in a single place.

use serde_json::Value;
use std::borrow::Cow;

/// One way a JSON value is wrong: where (a JSON Pointer into it) and why, in this
/// crate's words (nothing quoted from the value). An Agent Card that is not an A2A 1.0
/// AgentCard and a Skill Interface Document that breaks a rule of the draft are both
/// reported as a list of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// A JSON Pointer (RFC 6901) into the value; empty for the whole value.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

/// Escape one reference token: `~` becomes `~0`, `/` becomes `~1`.
pub fn escape(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// Append one (unescaped) token to `pointer`.
pub fn push(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&escape(token));
}

/// `pointer` with one more (unescaped) token.
pub fn child(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    push(&mut out, token);
    out
}

/// Unescape one reference token; `None` when it holds a `~` not followed by `0` or `1`.
pub fn unescape(token: &str) -> Option<Cow<'_, str>> {
    if !token.contains('~') {
        return Some(Cow::Borrowed(token));
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(Cow::Owned(out))
}

/// Split a pointer into its unescaped tokens; `None` when it is not a valid JSON Pointer
/// (non-empty without a leading `/`, or with an undefined `~` escape).
pub fn tokens(pointer: &str) -> Option<Vec<Cow<'_, str>>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').map(unescape).collect()
}

/// The array index a token names, under RFC 6901's strict grammar (`0` or a digit
/// sequence without a leading zero). `-` ("past the end") never names an element.
pub fn array_index(token: &str) -> Option<usize> {
    let bytes = token.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    token.parse().ok()
}

/// One step from `value` along an (unescaped) token.
pub fn step<'a>(value: &'a Value, token: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => items.get(array_index(token)?),
        _ => None,
    }
}

/// The value `pointer` identifies inside `root`, under RFC 6901's strict rules.
pub fn get<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    tokens(pointer)?
        .iter()
        .try_fold(root, |value, token| step(value, token))
}

/// Decode `%XX` escapes (as found in a URI fragment) into a UTF-8 string; `None` when an
/// escape is malformed or the decoded bytes are not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_tilde_before_slash() {
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(escape("~1"), "~01");
        assert_eq!(escape("plain"), "plain");
        assert_eq!(child("/properties", "a/b"), "/properties/a~1b");
    }

    #[test]
    fn unescape_round_trips_and_rejects_bad_escapes() {
        for token in ["", "a", "~", "/", "~0~1", "a/b~c", "~01"] {
            assert_eq!(unescape(&escape(token)).as_deref(), Some(token));
        }
        assert_eq!(unescape("~2"), None);
        assert_eq!(unescape("a~"), None);
    }

    #[test]
    fn get_follows_rfc6901() {
        let doc = json!({
            "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3,
            "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8
        });
        assert_eq!(get(&doc, ""), Some(&doc));
        assert_eq!(get(&doc, "/foo"), Some(&json!(["bar", "baz"])));
        assert_eq!(get(&doc, "/foo/0"), Some(&json!("bar")));
        assert_eq!(get(&doc, "/"), Some(&json!(0)));
        assert_eq!(get(&doc, "/a~1b"), Some(&json!(1)));
        assert_eq!(get(&doc, "/c%d"), Some(&json!(2)));
        assert_eq!(get(&doc, "/m~0n"), Some(&json!(8)));
        assert_eq!(get(&doc, "/ "), Some(&json!(7)));
        assert_eq!(get(&doc, "/foo/00"), None, "leading zero");
        assert_eq!(get(&doc, "/foo/-"), None, "past the end");
        assert_eq!(get(&doc, "/foo/2"), None);
        assert_eq!(get(&doc, "foo"), None, "no leading slash");
        assert_eq!(get(&doc, "/m~2n"), None, "bad escape");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%25b").as_deref(), Some("a%b"));
        assert_eq!(percent_decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%2"), None);
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%FF"), None, "not UTF-8");
    }
}
