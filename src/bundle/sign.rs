//! Signing a bundle manifest, and reading its signatures back.
//!
//! The README ("The bundle") fixes the shape: `manifest.json` carries `signatures: [{"protected",
//! "signature"}]` (A2A's AgentCardSignature), each a JWS whose detached payload is the
//! RFC 8785 (JCS) bytes of the manifest *without* its `signatures` member. Ed25519
//! signatures are deterministic, so a signed bundle stays byte-for-byte reproducible
//! from the same inputs and keys. The JWS mechanics live in [`crate::crypto::jws`].

use super::{stable_pretty, Contents, MANIFEST_PATH};
use crate::crypto::jws::{self, JwsSignature};
use crate::crypto::keys::SigningKeyPair;
use crate::wire::digest::jcs;
use serde_json::Value;

/// The manifest member holding the signatures.
pub const SIGNATURES: &str = "signatures";

/// The detached JWS payload of a manifest: the JCS bytes of the manifest without its
/// `signatures` member (whether or not it has one).
pub fn signing_payload(manifest: &Value) -> Vec<u8> {
    match manifest {
        Value::Object(map) if map.contains_key(SIGNATURES) => {
            into_signing_payload(manifest.clone())
        }
        other => jcs(other),
    }
}

/// [`signing_payload`] of a manifest the caller no longer needs: the signatures are
/// removed in place instead of from a copy (a 10,000-skill manifest's tree is some
/// 100 MB).
pub fn into_signing_payload(mut manifest: Value) -> Vec<u8> {
    if let Value::Object(map) = &mut manifest {
        map.remove(SIGNATURES);
    }
    jcs(&manifest)
}

/// Sign `manifest` with every key, in the given order (one signature per key).
pub fn signatures(manifest: &Value, keys: &[SigningKeyPair]) -> Vec<JwsSignature> {
    let payload = signing_payload(manifest);
    keys.iter().map(|key| jws::sign(&payload, key)).collect()
}

/// Sign the bundle's manifest with `keys` and rewrite `manifest.json` with the
/// signatures added. `contents.manifest` stays the unsigned manifest. With no keys the
/// contents are left unchanged (an unsigned bundle).
pub fn sign(contents: &mut Contents<'_>, keys: &[SigningKeyPair]) {
    if keys.is_empty() {
        return;
    }
    let list: Vec<Value> = signatures(&contents.manifest, keys)
        .into_iter()
        .map(|s| serde_json::to_value(s).expect("a signature always serializes"))
        .collect();
    // Add the signatures to the manifest only while writing it out, rather than signing
    // a clone: the manifest of 10,000 skills is a tree of tens of megabytes.
    let Value::Object(map) = &mut contents.manifest else {
        return;
    };
    map.insert(SIGNATURES.to_string(), Value::Array(list));
    let written = stable_pretty(&contents.manifest);
    if let Value::Object(map) = &mut contents.manifest {
        map.remove(SIGNATURES);
    }
    contents
        .files
        .insert(MANIFEST_PATH.to_string(), written.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keys::PublicKey;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn contents() -> Contents<'static> {
        let manifest = json!({"format": "skillbundle/1", "bundle": {"name": "n", "version": "1"}});
        let mut files = BTreeMap::new();
        files.insert(MANIFEST_PATH.to_string(), stable_pretty(&manifest).into());
        Contents { files, manifest }
    }

    #[test]
    fn payload_ignores_signatures() {
        let m = json!({"b": 1, "a": 2});
        let mut signed = m.clone();
        signed["signatures"] = json!([{"protected": "x", "signature": "y"}]);
        assert_eq!(signing_payload(&m), br#"{"a":2,"b":1}"#);
        assert_eq!(signing_payload(&signed), signing_payload(&m));
    }

    #[test]
    fn signing_is_deterministic_and_verifiable() {
        let a = SigningKeyPair::from_seed(&[7; 32]);
        let b = SigningKeyPair::from_seed(&[9; 32]);
        let mut one = contents();
        let mut two = contents();
        sign(&mut one, &[a.clone(), b.clone()]);
        sign(&mut two, &[a.clone(), b.clone()]);
        assert_eq!(one.files, two.files);
        let written: Value = crate::wire::json::parse(&one.files[MANIFEST_PATH].bytes())
            .expect("signed manifest is JSON");
        let sigs: Vec<JwsSignature> = serde_json::from_value(written[SIGNATURES].clone()).unwrap();
        assert_eq!(sigs.len(), 2);
        let trusted: Vec<PublicKey> = vec![b.public_key()];
        let by = jws::verify_signatures(&signing_payload(&written), &sigs, &trusted).unwrap();
        assert_eq!(by[0].0, b.public_key().kid());
        // No keys: unchanged.
        let mut unsigned = contents();
        sign(&mut unsigned, &[]);
        assert_eq!(unsigned.files, contents().files);
    }
}
