//! A Data Part's `data` — a `google.protobuf.Value` — read from its protobuf wire bytes.
//!
//! a2a-sdk holds every Data Part as a protobuf `Value`. Walking one from Python costs about
//! two microseconds per node (the executor converted each request and each Artifact so);
//! `Value.SerializeToString()` is one call into the protobuf runtime, and the wire form of
//! `Value`, `Struct` and `ListValue` is small enough to read here exactly. Exactly: a
//! `number_value` is the double that was sent, so a NaN or an infinity is refused under the
//! I-JSON rules (as [`super::value`] refuses it from a Python `float`), with its JSON
//! Pointer and never its value, instead of surfacing as a protobuf serialization error.
//!
//! Wire form (protobuf `struct.proto`): `Value` is a oneof of `null_value` (1, varint),
//! `number_value` (2, fixed64), `string_value` (3, bytes), `bool_value` (4, varint),
//! `struct_value` (5, message), `list_value` (6, message); a `Value` with none set is
//! `null`. `Struct` is `map<string, Value> fields = 1` (entries: key 1, value 2);
//! `ListValue` is `repeated Value values = 1`.

use super::value::{Refusal, Refused};
use crate::wire::pointer;
use serde_json::{Map, Number, Value};

/// The deepest nesting of a Data Part's value that a2a-sdk can carry: protobuf's parsers
/// (upb's decoder, and `json_format`) refuse a message nested more than 100 levels, and
/// a2a-sdk copies its messages through them (a `Part`, an `Artifact`, a `Task` built from
/// others is parsed from their bytes). A Data Part's `Value` sits in a `Part` inside a
/// `Task`'s Artifact or history Message (three levels), and each level of a JSON object
/// takes three (`Value`, `Struct`, the map entry): a value nested deeper than 32 levels
/// makes the SDK raise wherever it copies it, so the executor refuses it first, with
/// `resource_limit_exceeded`, before the SDK or the domain code holds it.
pub const CARRIED_DEPTH: usize = 32;

/// The default depth limit of a request body read before a2a-sdk parses it (Python's
/// `Limits.max_depth`, applied by `skillbundle.guard.RequestGuard`): a JSON-RPC body
/// holds a Message's Data Part five levels down (the body, `params`, `message`, `parts`,
/// the Part), an HTTP+JSON body four, so a deeper body holds a Data Part (or metadata)
/// nested deeper than [`CARRIED_DEPTH`] — past what the SDK's own parser takes, which
/// would answer with protobuf's text instead of the draft's `resource_limit_exceeded`.
/// Never above the library's body default.
pub const CARRIED_BODY_DEPTH: usize = {
    let carried = CARRIED_DEPTH + 5;
    let library = crate::agent::body::BodyLimits::DEFAULT_MAX_DEPTH;
    if carried < library {
        carried
    } else {
        library
    }
};

/// Why the bytes are not a `Value` at all (a defect of the caller, not of the data).
const MALFORMED: &str = "not the wire form of a google.protobuf.Value";

/// Read a `Value` from its wire bytes; values nested more than `max_depth` levels are
/// refused. `Err(Ok(refused))` is data that is not I-JSON, `Err(Err(_))` bytes that are
/// no `Value`.
pub fn decode(bytes: &[u8], max_depth: usize) -> Result<Value, Result<Refused, &'static str>> {
    let mut path = Vec::new();
    value(bytes, 0, max_depth, &mut path).map_err(|e| {
        e.map(|why| Refused {
            // Pushed as the failure unwound: innermost first.
            pointer: path
                .iter()
                .rev()
                .map(|t| format!("/{}", pointer::escape(t)))
                .collect(),
            why,
        })
    })
}

/// The wire bytes of `value` as a `Value`: what protobuf writes for it, and what
/// [`decode`] reads back (an integer as the double a `number_value` holds). a2a-sdk's
/// `Part.data.ParseFromString` takes them, so the executor's helpers publish what the
/// library read, without protobuf's `json_format` walking the value in Python.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(value, &mut out);
    out
}

fn encode_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(&[1 << 3, 0]),
        Value::Bool(b) => out.extend_from_slice(&[4 << 3, u8::from(*b)]),
        Value::Number(n) => {
            out.push((2 << 3) | 1);
            let v = n.as_f64().unwrap_or(f64::NAN);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        Value::String(s) => delimited(out, 3, s.as_bytes()),
        Value::Object(map) => {
            let mut body = Vec::new();
            for (key, item) in map {
                let mut entry = Vec::new();
                delimited(&mut entry, 1, key.as_bytes());
                let mut inner = Vec::new();
                encode_into(item, &mut inner);
                delimited(&mut entry, 2, &inner);
                delimited(&mut body, 1, &entry);
            }
            delimited(out, 5, &body);
        }
        Value::Array(items) => {
            let mut body = Vec::new();
            for item in items {
                let mut inner = Vec::new();
                encode_into(item, &mut inner);
                delimited(&mut body, 1, &inner);
            }
            delimited(out, 6, &body);
        }
    }
}

/// A length-delimited field (wire type 2).
fn delimited(out: &mut Vec<u8>, field: u8, body: &[u8]) {
    out.push((field << 3) | 2);
    let mut len = body.len();
    while len >= 0x80 {
        out.push((len & 0x7f) as u8 | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend_from_slice(body);
}

type Failure = Result<Refusal, &'static str>;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn varint(&mut self) -> Result<u64, Failure> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or(Err(MALFORMED))?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Err(MALFORMED))
    }

    fn fixed64(&mut self) -> Result<u64, Failure> {
        let end = self.at + 8;
        let b = self.bytes.get(self.at..end).ok_or(Err(MALFORMED))?;
        self.at = end;
        Ok(u64::from_le_bytes(b.try_into().expect("eight bytes")))
    }

    fn delimited(&mut self) -> Result<&'a [u8], Failure> {
        let len = usize::try_from(self.varint()?).map_err(|_| Err(MALFORMED))?;
        let end = self.at.checked_add(len).ok_or(Err(MALFORMED))?;
        let b = self.bytes.get(self.at..end).ok_or(Err(MALFORMED))?;
        self.at = end;
        Ok(b)
    }

    /// A field's tag: (number, wire type).
    fn tag(&mut self) -> Result<(u64, u64), Failure> {
        let t = self.varint()?;
        Ok((t >> 3, t & 7))
    }

    fn skip(&mut self, wire: u64) -> Result<(), Failure> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.fixed64().map(drop),
            2 => self.delimited().map(drop),
            5 => {
                let end = self.at + 4;
                self.bytes.get(self.at..end).ok_or(Err(MALFORMED))?;
                self.at = end;
                Ok(())
            }
            _ => Err(Err(MALFORMED)),
        }
    }
}

fn text(bytes: &[u8]) -> Result<String, Failure> {
    // protobuf strings are UTF-8; anything else (a lone surrogate) has no JSON form.
    String::from_utf8(bytes.to_vec()).map_err(|_| Ok(Refusal::LoneSurrogate))
}

fn number(v: f64) -> Result<Value, Failure> {
    let n = Number::from_f64(v).ok_or(Ok(Refusal::NumberNotIJson))?;
    let v = Value::Number(n);
    crate::wire::json::check_numbers(&v).map_err(|_| Ok(Refusal::NumberNotIJson))?;
    Ok(v)
}

/// One `Value`. On failure `path` holds the tokens from the failing value up to the
/// root (each level pushes its token as the failure passes it, so a value that is read
/// costs no token).
fn value(bytes: &[u8], depth: usize, max: usize, path: &mut Vec<String>) -> Result<Value, Failure> {
    let mut r = Reader { bytes, at: 0 };
    let mut out = Value::Null;
    while !r.done() {
        let (field, wire) = r.tag()?;
        out = match (field, wire) {
            (1, 0) => {
                r.varint()?;
                Value::Null
            }
            (2, 1) => number(f64::from_bits(r.fixed64()?))?,
            (3, 2) => Value::String(text(r.delimited()?)?),
            (4, 0) => Value::Bool(r.varint()? != 0),
            (5, 2) | (6, 2) => {
                if depth >= max {
                    return Err(Ok(Refusal::TooDeep(max)));
                }
                let inner = r.delimited()?;
                if field == 5 {
                    structure(inner, depth + 1, max, path)?
                } else {
                    list(inner, depth + 1, max, path)?
                }
            }
            (_, wire) => {
                r.skip(wire)?;
                continue;
            }
        };
    }
    Ok(out)
}

fn structure(
    bytes: &[u8],
    depth: usize,
    max: usize,
    path: &mut Vec<String>,
) -> Result<Value, Failure> {
    let mut r = Reader { bytes, at: 0 };
    // Sized once: growing the map rehashes it and moves its entries.
    let mut map = Map::with_capacity(count(bytes)?);
    while !r.done() {
        let (field, wire) = r.tag()?;
        if (field, wire) != (1, 2) {
            r.skip(wire)?;
            continue;
        }
        let mut entry = Reader {
            bytes: r.delimited()?,
            at: 0,
        };
        let (mut key, mut item) = (String::new(), &[][..]);
        while !entry.done() {
            match entry.tag()? {
                (1, 2) => key = text(entry.delimited()?)?,
                (2, 2) => item = entry.delimited()?,
                (_, wire) => entry.skip(wire)?,
            }
        }
        match value(item, depth, max, path) {
            Ok(v) => {
                map.insert(key, v);
            }
            Err(e) => {
                path.push(key);
                return Err(e);
            }
        }
    }
    Ok(Value::Object(map))
}

fn list(bytes: &[u8], depth: usize, max: usize, path: &mut Vec<String>) -> Result<Value, Failure> {
    let mut r = Reader { bytes, at: 0 };
    let mut items = Vec::with_capacity(count(bytes)?);
    while !r.done() {
        let (field, wire) = r.tag()?;
        if (field, wire) != (1, 2) {
            r.skip(wire)?;
            continue;
        }
        match value(r.delimited()?, depth, max, path) {
            Ok(v) => items.push(v),
            Err(e) => {
                path.push(items.len().to_string());
                return Err(e);
            }
        }
    }
    Ok(Value::Array(items))
}

/// How many entries (field 1, length-delimited) a `Struct` or `ListValue` holds: read
/// past, not into.
fn count(bytes: &[u8]) -> Result<usize, Failure> {
    let mut r = Reader { bytes, at: 0 };
    let mut n = 0;
    while !r.done() {
        let (field, wire) = r.tag()?;
        n += usize::from((field, wire) == (1, 2));
        r.skip(wire)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tag(field: u8, wire: u8) -> u8 {
        (field << 3) | wire
    }

    fn delimited(field: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag(field, 2), u8::try_from(body.len()).unwrap()];
        v.extend_from_slice(body);
        v
    }

    fn num(x: f64) -> Vec<u8> {
        let mut v = vec![tag(2, 1)];
        v.extend_from_slice(&x.to_bits().to_le_bytes());
        v
    }

    fn string(s: &str) -> Vec<u8> {
        delimited(3, s.as_bytes())
    }

    fn object(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (k, v) in members {
            let mut entry = delimited(1, k.as_bytes());
            entry.extend(delimited(2, v));
            body.extend(delimited(1, &entry));
        }
        delimited(5, &body)
    }

    #[test]
    fn reads_what_protobuf_writes() {
        let list = delimited(
            6,
            &[
                delimited(1, &num(1.5)),
                delimited(1, &[tag(4, 0), 1]),
                delimited(1, &[]),
            ]
            .concat(),
        );
        let bytes = object(&[("a", string("x")), ("b", list), ("c", num(80.0))]);
        assert_eq!(
            decode(&bytes, 8).unwrap(),
            json!({"a": "x", "b": [1.5, true, null], "c": 80.0})
        );
    }

    #[test]
    fn reads_back_what_it_writes() {
        let long = "x".repeat(300);
        let v = json!({"a": [1, -2.5, true, false, null, {}, []], "b": {"c": long, "d": ""},
                       "n": 9_007_199_254_740_991_i64, "é": "ü"});
        let read = decode(&encode(&v), 8).unwrap();
        // Integers come back as the doubles a number_value holds.
        assert_eq!(
            read,
            json!({"a": [1.0, -2.5, true, false, null, {}, []], "b": {"c": long, "d": ""},
                   "n": 9_007_199_254_740_991.0, "é": "ü"})
        );
        // The bytes protobuf writes for the same value (field order as written).
        let protobuf = object(&[("a", string("x")), ("c", num(80.0))]);
        assert_eq!(encode(&json!({"a": "x", "c": 80})), protobuf);
    }

    #[test]
    fn refuses_what_i_json_refuses_with_its_pointer() {
        let bytes = object(&[("a", object(&[("n", num(f64::NAN))]))]);
        let refused = decode(&bytes, 8).unwrap_err().unwrap();
        assert_eq!(refused.pointer, "/a/n");
        assert_eq!(refused.why, Refusal::NumberNotIJson);
        // Through a list, after values that were read, with a key to escape.
        let list = delimited(
            6,
            &[
                delimited(1, &num(1.0)),
                delimited(1, &object(&[("x/y", num(f64::INFINITY))])),
            ]
            .concat(),
        );
        let refused = decode(&object(&[("ok", string("v")), ("l", list)]), 8)
            .unwrap_err()
            .unwrap();
        assert_eq!(refused.pointer, "/l/1/x~1y");
        let deep = object(&[("a", object(&[("b", object(&[]))]))]);
        assert_eq!(
            decode(&deep, 2).unwrap_err().unwrap().why,
            Refusal::TooDeep(2)
        );
        assert!(decode(&[tag(2, 1), 0, 0], 8).unwrap_err().is_err());
    }
}
