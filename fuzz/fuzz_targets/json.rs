//! The strict I-JSON reader (`skillbundle::wire::json`).
//!
//! Properties, each checked on the input text independently of the reader under test:
//! - whatever it accepts has no duplicate member name (an independent re-parse with
//!   serde_json's tokenizer into a map that refuses duplicates), no lone surrogate and no
//!   integer beyond ±(2^53−1) (a small lexical scan of the text);
//! - whatever it accepts, serde_json reads to the same value;
//! - conversely, text serde_json reads, that has none of those problems, no BOM and no
//!   excessive nesting, is accepted;
//! - the JCS bytes of an accepted value are read back to the same value (so a digest
//!   computed at build time can be recomputed by whoever reads the canonical bytes);
//! - `locate` never panics, on any pointer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use skillbundle::wire::json;

fuzz_target!(|data: &[u8]| {
    let ours = json::parse(data);
    let theirs = independent(data);
    let lexical = std::str::from_utf8(data).ok().map(scan);
    match &ours {
        Ok(value) => {
            let lex = lexical.expect("accepted text is UTF-8");
            assert!(!lex.lone_surrogate, "accepted a lone surrogate");
            assert!(
                !lex.big_integer,
                "accepted an integer beyond ±(2^53−1), or a double JCS writes as one"
            );
            assert!(!data.starts_with(b"\xEF\xBB\xBF"), "accepted a BOM");
            match &theirs {
                Ok(Strict(other)) => assert!(
                    same(value, other),
                    "serde_json reads another value: {value} vs {other}"
                ),
                Err(e) if e.to_string().contains("duplicate") => {
                    panic!("accepted a duplicate member name: {e}")
                }
                // serde_json's own nesting limit (128) is below ours (256).
                Err(e) if e.to_string().contains("recursion limit") => {}
                Err(e) => panic!("accepted text serde_json refuses: {e}"),
            }
            let canonical = skillbundle::wire::digest::jcs(value);
            let reread = json::parse(&canonical).unwrap_or_else(|e| {
                panic!(
                    "JCS bytes {:?} are not read back: {e}",
                    String::from_utf8_lossy(&canonical)
                )
            });
            assert!(same(value, &reread), "JCS bytes read back to another value");
            assert_eq!(
                skillbundle::wire::digest::jcs(&reread),
                canonical,
                "JCS is not idempotent"
            );
        }
        Err(e) => {
            assert!(e.line >= 1 && e.column >= 1);
            if let (Ok(_), Some(lex)) = (&theirs, &lexical) {
                let explained = lex.lone_surrogate
                    || lex.big_integer
                    || data.starts_with(b"\xEF\xBB\xBF")
                    || e.limit
                    || lex.out_of_range_float;
                assert!(
                    explained,
                    "refused text serde_json reads without a reason: {e}"
                );
            }
        }
    }
    // Locate with a pointer taken from the input itself.
    if let Some(text) = std::str::from_utf8(data).ok() {
        let pointer = text.lines().next().unwrap_or("");
        if pointer.starts_with('/') {
            let _ = json::locate(data, pointer);
        }
        let _ = json::locate(data, "");
        let _ = json::locate(data, "/0/a");
    }
});

/// Values equal, numbers compared as doubles (serde_json's float parsing may differ from
/// the standard library's by one unit in the last place, and integral doubles may be
/// written as integers by JCS).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || ((x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()) * 2.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// What a lexical scan of the text finds, outside and inside strings.
#[derive(Default)]
struct Lexical {
    lone_surrogate: bool,
    big_integer: bool,
    out_of_range_float: bool,
}

fn scan(text: &str) -> Lexical {
    let b = text.as_bytes();
    let mut out = Lexical::default();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                // A \u escape and whether the previous escape was an unpaired high half.
                let mut pending_high = false;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' && i + 1 < b.len() {
                        if b[i + 1] == b'u' && i + 6 <= b.len() {
                            let unit = text
                                .get(i + 2..i + 6)
                                .and_then(|h| u16::from_str_radix(h, 16).ok())
                                .unwrap_or(0);
                            let high = (0xD800..0xDC00).contains(&unit);
                            let low = (0xDC00..0xE000).contains(&unit);
                            if pending_high && !low {
                                out.lone_surrogate = true;
                            }
                            if low && !pending_high {
                                out.lone_surrogate = true;
                            }
                            pending_high = high;
                            i += 6;
                            continue;
                        }
                        if pending_high {
                            out.lone_surrogate = true;
                        }
                        pending_high = false;
                        i += 2;
                        continue;
                    }
                    if pending_high {
                        out.lone_surrogate = true;
                    }
                    pending_high = false;
                    i += 1;
                }
                if pending_high {
                    out.lone_surrogate = true;
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let lexeme = &text[start..i];
                let integer = !lexeme.contains(['.', 'e', 'E']);
                let digits = lexeme.trim_start_matches('-');
                if integer {
                    // Compare magnitudes as decimal strings: no parsing that could round.
                    let max = "9007199254740991";
                    let d = digits.trim_start_matches('0');
                    if d.len() > max.len() || (d.len() == max.len() && d > max) {
                        out.big_integer = true;
                    }
                } else if let Ok(v) = lexeme.parse::<f64>() {
                    if !v.is_finite() {
                        out.out_of_range_float = true;
                    }
                    // An integral double that RFC 8785 writes in full digits beyond
                    // 2^53 − 1 (1e20 → 100000000000000000000) is refused too.
                    if v.is_finite()
                        && v.fract() == 0.0
                        && v.abs() >= 9007199254740992.0
                        && v.abs() < 1e21
                    {
                        out.big_integer = true;
                    }
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// A JSON value read by serde_json into a map that refuses duplicate member names.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("non-finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

fn independent(data: &[u8]) -> Result<Strict, serde_json::Error> {
    serde_json::from_slice(data)
}
