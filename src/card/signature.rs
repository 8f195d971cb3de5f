//! Signed Agent Cards (A2A 1.0 `AgentCard.signatures`) that the A2A SDKs verify.
//!
//! An AgentCardSignature is a JWS (RFC 7515) whose detached payload is the canonical
//! card: the card without `signatures`, in its protobuf-JSON form
//! ([`crate::card::agent_card::protobuf_json`]: camelCase names, members at their proto3
//! default omitted, then every `null`, empty string, list and object removed), as
//! RFC 8785 (JCS) bytes. That is exactly what a2a-sdk's `create_signature_verifier`
//! recomputes from a parsed card; signing the JCS of the card *as printed* fails there as
//! soon as the card has a `"required": false` or an empty list. The protected header is
//! the one bundle manifests use: `{"alg":"EdDSA","kid":<RFC 7638 thumbprint>,"typ":"JOSE"}`,
//! Ed25519, deterministic.
//!
//! Signing replaces any signatures the card had: they covered other content. Verifying
//! succeeds when at least one signature by a trusted key verifies and none that names a
//! trusted key fails (the rules of [`crate::crypto::jws::verify_signatures`]).

use crate::crypto::jws::{self, JwsError, JwsSignature, VerifiedBy};
use crate::crypto::keys::{PublicKey, SigningKeyPair};
use serde_json::Value;

/// The bytes an AgentCardSignature signs: JCS of the card's protobuf-JSON form
/// without `signatures`.
pub fn canonical_bytes(card: &Value) -> Vec<u8> {
    crate::wire::digest::jcs(&crate::card::agent_card::protobuf_json(card))
}

/// The card (in camelCase spelling) with `signatures` replaced by one signature per key.
/// A card with no keys is returned without `signatures`.
pub fn sign(card: &Value, keys: &[SigningKeyPair]) -> Value {
    let mut signed = crate::card::agent_card::normalize(card);
    let payload = canonical_bytes(&signed);
    if let Some(members) = signed.as_object_mut() {
        members.remove("signatures");
        if !keys.is_empty() {
            let signatures: Vec<JwsSignature> =
                keys.iter().map(|k| jws::sign(&payload, k)).collect();
            members.insert(
                "signatures".into(),
                serde_json::to_value(signatures).expect("signatures serialize"),
            );
        }
    }
    signed
}

/// Verify a card's `signatures` against `trusted` keys over its canonical form.
pub fn verify(card: &Value, trusted: &[PublicKey]) -> Result<Vec<VerifiedBy>, JwsError> {
    let signatures: Vec<JwsSignature> = match card.get("signatures") {
        None | Some(Value::Null) => Vec::new(),
        Some(list) => {
            serde_json::from_value(list.clone()).map_err(|e| JwsError::SignatureInvalid {
                kid: None,
                reason: format!(
                    "`signatures` is not a list of {{protected, signature, header?}}: {e}"
                ),
            })?
        }
    };
    jws::verify_signatures(&canonical_bytes(card), &signatures, trusted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn signatures_cover_the_canonical_form_and_nothing_else() {
        let key = SigningKeyPair::from_seed(&[7; 32]);
        let card = json!({"name": "A", "capabilities": {"extensions": [{"uri": "u", "required": false}]}, "skills": []});
        let signed = sign(&card, std::slice::from_ref(&key));
        let trusted = [key.public_key()];
        assert_eq!(verify(&signed, &trusted).unwrap().len(), 1);
        // Members at their default, or empty, are not covered: adding them keeps it valid.
        let mut same = signed.clone();
        same["iconUrl"] = json!("");
        same["capabilities"]["extensions"][0]["required"] = json!(false);
        verify(&same, &trusted).unwrap();
        // Content is covered.
        let mut changed = signed.clone();
        changed["name"] = json!("B");
        assert!(matches!(
            verify(&changed, &trusted),
            Err(JwsError::SignatureInvalid { .. })
        ));
        assert!(matches!(
            verify(&card, &trusted),
            Err(JwsError::NoSignatures)
        ));
    }
}
