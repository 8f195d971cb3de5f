//! Schema governance on arbitrary schema values: limits, dialect, inline-ref closure,
//! meta-schema validation and compilation, then validation of a few instances — in the
//! order the pipeline and `Bundle::open` run them. Must never panic or hang.
//!
//! Input: a JSON text (the schema); if it holds a top-level `"$fuzz_instance"` member,
//! that member is removed and used as an extra instance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use skillbundle::schema::{closure, dialect, limits, validator, DRAFT_2020_12};

fuzz_target!(|data: &[u8]| {
    let Ok(mut schema) = skillbundle::wire::json::parse(data) else {
        return;
    };
    let extra = schema
        .as_object_mut()
        .and_then(|m| m.shift_remove("$fuzz_instance"));
    let limits = limits::Limits::default();
    let mut findings = limits::check_schema(&schema, &limits);
    // The dialect and closure walks run on every value, even one over the limits, to
    // exercise them (the pipeline stops after the limits).
    findings.extend(dialect::check(&schema, DRAFT_2020_12));
    findings.extend(closure::check(&schema));
    let _ = closure::ref_chains(&schema);
    for f in &findings {
        // Every pointer a finding carries must exist in the schema.
        if let Some(p) = &f.location.pointer {
            assert!(
                skillbundle::wire::pointer::get(&schema, p).is_some(),
                "finding {:?} points at {p:?}, which does not exist",
                f.message
            );
        }
    }
    if !(schema.is_object() || schema.is_boolean()) || !findings.is_empty() {
        return;
    }
    // The one governance path every schema takes (limits, dialect, closure, compile).
    let patterns = validator::PatternCache::new();
    let Ok(compiled) = skillbundle::schema::govern(&schema, DRAFT_2020_12, &limits, &patterns)
    else {
        return;
    };
    let mut instances = vec![
        json!(null),
        json!({}),
        json!([]),
        json!("x"),
        json!(0),
        json!(1.5),
        json!({"a": [1, "b", {"c": null}]}),
        schema.clone(),
    ];
    instances.extend(extra);
    for instance in &instances {
        let errors = compiled.errors(instance);
        assert_eq!(
            errors.is_empty(),
            compiled.is_valid(instance),
            "errors() and is_valid() disagree on {instance}"
        );
    }
    // The schema itself as a value goes through the instance limits too.
    let _ = limits::check_instance(&schema, &limits);
    drop::<Value>(schema);
});
