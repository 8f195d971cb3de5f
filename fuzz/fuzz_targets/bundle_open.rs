//! `Bundle::open` on hostile bytes.
//!
//! The first input byte picks a mode; the rest drives it:
//! - 0: the bytes are the archive (also fed to `archive::read` and an unsigned-allowed open);
//! - 1: edits (see `shared::edit`) to the uncompressed tar of a valid signed bundle;
//! - 2: edits to one file of the bundle (the second byte picks it), repacked as the writer does;
//! - 3: like 2, but the manifest's digests are then recomputed and the manifest re-signed
//!   with the trusted key — a vendor-side bug or a stolen key: documents and fragment
//!   that are authentic yet malformed.
//!
//! Properties: nothing panics or hangs; in modes 1 and 2 (no key), a bundle that opens
//! serves exactly what the original serves (describe_skill for every skill, the card
//! fragment, the extension and AgentSkill entries); in mode 3, what opens is internally
//! consistent (each describe_skill digest is the digest of the interface it returns).
#![no_main]

#[path = "shared/mod.rs"]
mod shared;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use shared::{edit, fixture, gzip_stored, pack, served};
use skillbundle::agent::{Bundle, TrustedKeys};
use skillbundle::bundle::{archive, sign, MANIFEST_PATH};
use skillbundle::wire::digest::Digest;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fx = fixture();
    match mode % 4 {
        0 => {
            let _ = archive::read(rest, archive::ReadLimits::default());
            let _ = Bundle::open(rest, &TrustedKeys::allow_unsigned());
            if let Ok(b) = Bundle::open(rest, &fx.trust) {
                assert_eq!(served(&b), fx.served, "a forged bundle opened");
            }
        }
        1 => {
            let mut tar = fx.tar.clone();
            edit(&mut tar, rest);
            if let Ok(b) = Bundle::open(&gzip_stored(&tar), &fx.trust) {
                assert_eq!(served(&b), fx.served, "an edited tar serves other content");
            }
        }
        2 | 3 => {
            let Some((&pick, script)) = rest.split_first() else {
                return;
            };
            let mut files = fx.files.clone();
            let name = files
                .keys()
                .nth(usize::from(pick) % files.len())
                .unwrap()
                .clone();
            edit(files.get_mut(&name).unwrap(), script);
            if mode % 4 == 3 && !resign(&mut files, &name) {
                return;
            }
            let opened = Bundle::open(&pack(&files), &fx.trust);
            match (mode % 4, opened) {
                (2, Ok(b)) => {
                    assert_eq!(served(&b), fx.served, "an edited file serves other content")
                }
                (_, Ok(b)) => consistent(&b),
                (_, Err(findings)) => assert!(!findings.is_empty()),
            }
        }
        _ => unreachable!(),
    }
});

/// Recompute the manifest's digests for `changed` and re-sign it. False when the
/// manifest is no longer a JSON object.
fn resign(files: &mut std::collections::BTreeMap<String, Vec<u8>>, changed: &str) -> bool {
    let Ok(Value::Object(mut manifest)) = skillbundle::wire::json::parse(&files[MANIFEST_PATH]) else {
        return false;
    };
    if changed != MANIFEST_PATH {
        let digest = Digest::of_bytes(&files[changed]).as_str().to_string();
        if let Some(Value::Object(listed)) = manifest.get_mut("files") {
            if listed.contains_key(changed) {
                listed.insert(changed.to_string(), json!(digest));
            }
        }
        if let Some(Value::Array(skills)) = manifest.get_mut("skills") {
            for skill in skills {
                if skill.get("file").and_then(Value::as_str) == Some(changed) {
                    skill["interface_digest"] = json!(digest);
                }
            }
        }
    }
    manifest.shift_remove(sign::SIGNATURES);
    let unsigned = Value::Object(manifest.clone());
    let signatures = sign::signatures(&unsigned, std::slice::from_ref(&fixture().key));
    manifest.insert(
        sign::SIGNATURES.to_string(),
        serde_json::to_value(signatures).unwrap(),
    );
    files.insert(
        MANIFEST_PATH.to_string(),
        skillbundle::bundle::stable_pretty(&Value::Object(manifest)),
    );
    true
}

/// What any opened bundle must satisfy, authentic or not.
fn consistent(b: &Bundle) {
    for id in b.skill_ids() {
        let described = b.describe_skill(id).expect("an advertised skill describes");
        let interface = &described["result"]["interface"];
        assert_eq!(
            described["result"]["interface_digest"].as_str(),
            Some(Digest::of_value(interface).as_str()),
            "describe_skill's digest is not its interface's"
        );
        let version = interface["skill_version"].as_str().unwrap_or_default();
        let request = json!({
            "skill": id,
            "skill_version": version,
            "interface_digest": described["result"]["interface_digest"],
            "arguments": {},
        });
        let _ = b.check_request(&request);
        let _ = b.check_result(id, &json!({}));
    }
    let _ = served(b);
}
