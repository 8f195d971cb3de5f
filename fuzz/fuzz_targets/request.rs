//! Invocation checks on arbitrary JSON against the example bundle: `check_request`,
//! `check_result` and `check_record`.
//!
//! The first byte picks how the rest (a JSON text, read with a generous nesting limit so
//! that deep values reach the checks) is used: 0 as the whole request object; 1–3 as the
//! `arguments` of an otherwise correct request for skill 0–2; 4 as a result, 5 as a
//! supporting record of the skill's first record kind.
//!
//! Properties: nothing panics or overflows the stack; an error object has at most
//! MAX_ERROR_DETAILS details, serializes, and carries the condition the stage allows; a request
//! whose version or digest is not the active one is always interface_mismatch.
#![no_main]

#[path = "shared/mod.rs"]
mod shared;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use skillbundle::agent::{Request, MAX_ERROR_DETAILS};
use skillbundle::interface::condition::{Condition, ErrorObject};

/// Deep enough to go past every internal nesting guard; shallow enough that dropping
/// the value (which recurses) stays safe.
const DEPTH: usize = 1_000;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(value) = skillbundle::wire::json::parse_with_depth(rest, DEPTH) else {
        return;
    };
    let bundle = &shared::fixture().bundle;
    let ids: Vec<&str> = bundle.skill_ids().collect();
    match mode % 6 {
        0 => {
            let outcome = bundle.check_request(&value);
            if let Some(id) = value.get("skill").and_then(Value::as_str) {
                if let Some(doc) = bundle.interface(id) {
                    let stale = value.get("skill_version") != doc.get("skill_version");
                    if stale {
                        let e = outcome.as_ref().unwrap_err();
                        assert_eq!(e.error.code, Condition::InterfaceMismatch);
                    }
                }
            }
            check(outcome.map(|_| ()));
        }
        m @ 1..=3 => {
            let id = ids[usize::from(m - 1) % ids.len()];
            let described = bundle.describe_skill(id).unwrap();
            let request = json!({
                "skill": id,
                "skill_version": described["result"]["interface"]["skill_version"],
                "interface_digest": described["result"]["interface_digest"],
                "arguments": value,
            });
            let outcome = bundle.check_request(&request);
            if let Err(e) = &outcome {
                assert!(
                    matches!(
                        e.error.code,
                        Condition::InputInvalid | Condition::ResourceLimitExceeded
                    ),
                    "{e:?}"
                );
            } else {
                assert!(matches!(outcome, Ok(Request::Invoke { .. })));
            }
            check(outcome.map(|_| ()));
        }
        4 => {
            for id in &ids {
                check(bundle.check_result(id, &value));
            }
        }
        5 => {
            for id in &ids {
                let kind = bundle
                    .document(id)
                    .and_then(|d| d.records().first())
                    .and_then(|r| r.kind.as_deref())
                    .unwrap_or("none");
                check(bundle.check_record(id, kind, &value));
            }
        }
        _ => unreachable!(),
    }
});

fn check(outcome: Result<(), ErrorObject>) {
    if let Err(e) = outcome {
        let details = e.error.details.as_ref().map_or(0, Vec::len);
        assert!(details <= MAX_ERROR_DETAILS, "{details} details");
        serde_json::to_vec(&e).expect("an error object serializes");
    }
}
