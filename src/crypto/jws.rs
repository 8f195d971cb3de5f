//! Detached-payload JWS signatures (RFC 7515) over bundle manifests.
//!
//! A bundle's `manifest.json` carries `signatures: [{"protected","signature"}]` in
//! the shape of A2A's `AgentCardSignature`: a JWS in the flattened JSON
//! serialization whose payload is *detached* — it is not stored in the signature
//! but recomputed by the verifier (for a manifest, the JCS bytes of the manifest
//! without its `signatures` member; see the README, "The bundle"). Keeping
//! the wire format plain JWS means any JOSE library, or a few lines of code with an
//! Ed25519 primitive, can check a bundle without this crate.
//!
//! What this module signs:
//!
//! * protected header, exactly `{"alg":"EdDSA","kid":"<thumbprint>","typ":"JOSE"}`:
//!   members in JCS (RFC 8785) order — alg, kid, typ — and no whitespace, so the
//!   header bytes are reproducible from the key alone; `kid` is the RFC 7638
//!   thumbprint of the signer's public JWK ([`crate::crypto::keys::PublicKey::kid`]);
//! * signing input `ASCII(BASE64URL(protected) || '.' || BASE64URL(payload))`,
//!   base64url without padding (RFC 7515 section 5.1);
//! * signature: Ed25519 (RFC 8032, "EdDSA" per RFC 8037) over the signing input.
//!
//! What it accepts when verifying is described at [`verify`]: the header is read
//! strictly, the key is chosen by `kid` among the caller's trusted keys only (never
//! from the signature itself), and the signature is checked with `verify_strict`.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::crypto::keys::{parse_unique_object, PublicKey, SigningKeyPair};
use crate::finding::Code;

/// The JWS `alg` of Ed25519 signatures (RFC 8037 section 3.1).
pub const ALG: &str = "EdDSA";

/// The `typ` written in the protected header (RFC 7515 section 4.1.9: the JWS is
/// not a compact JWT, it is a general JOSE object).
pub const TYP: &str = "JOSE";

/// One detached-payload JWS, as A2A's `AgentCardSignature` stores it.
///
/// `header` is A2A's optional unprotected header; it is kept so that a signature
/// read and written again is unchanged, but it is never used for verification
/// (nothing in it is signed). Other members are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwsSignature {
    /// base64url (no padding) of the protected header JSON.
    pub protected: String,
    /// base64url (no padding) of the 64-byte Ed25519 signature.
    pub signature: String,
    /// Unprotected header parameters; ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Map<String, Value>>,
}

/// The `kid` of the trusted key a signature verified under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VerifiedBy(pub String);

impl fmt::Display for VerifiedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why signatures did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwsError {
    /// No signature names a trusted key (the `kid`s of those seen are listed).
    #[error("not signed by a trusted key (signed by: {}); add the signer's public key to the trusted keys if you trust it", list_kids(.kids))]
    UntrustedKey {
        /// The `kid`s the signatures name.
        kids: Vec<String>,
    },

    /// A signature is malformed, or names a trusted key but does not verify under it.
    #[error("invalid signature{}: {reason}", kid.as_ref().map(|k| format!(" by key {k}")).unwrap_or_default())]
    SignatureInvalid {
        /// The `kid` the signature names, when it could be read.
        kid: Option<String>,
        /// What is wrong.
        reason: String,
    },

    /// The list of signatures is empty.
    #[error("no signatures: the bundle is not signed")]
    NoSignatures,
}

/// The one mapping of a signature failure to a finding code, whatever was signed (a
/// bundle, a release statement, a signed file list, an Agent Card): a signature that
/// names a trusted key and does not verify is `signature_invalid`; nothing signed by a
/// trusted key (no signature at all included) is `untrusted_key`. The caller words the
/// message for what was signed.
impl From<&JwsError> for Code {
    fn from(e: &JwsError) -> Code {
        match e {
            JwsError::SignatureInvalid { .. } => Code::SignatureInvalid,
            JwsError::UntrustedKey { .. } | JwsError::NoSignatures => Code::UntrustedKey,
        }
    }
}

fn list_kids(kids: &[String]) -> String {
    if kids.is_empty() {
        "no key".into()
    } else {
        kids.join(", ")
    }
}

fn invalid(kid: Option<&str>, reason: impl Into<String>) -> JwsError {
    JwsError::SignatureInvalid {
        kid: kid.map(str::to_string),
        reason: reason.into(),
    }
}

/// The protected header JSON this module writes for `kid`:
/// `{"alg":"EdDSA","kid":"<kid>","typ":"JOSE"}` (JCS member order, no whitespace).
pub fn protected_header(kid: &str) -> String {
    let mut header = Map::new();
    header.insert("alg".into(), Value::from(ALG));
    header.insert("kid".into(), Value::from(kid));
    header.insert("typ".into(), Value::from(TYP));
    Value::Object(header).to_string()
}

/// The JWS signing input: `ASCII(protected_b64 || '.' || BASE64URL(payload))`.
pub fn signing_input(protected_b64: &str, payload: &[u8]) -> Vec<u8> {
    let mut input = Vec::with_capacity(protected_b64.len() + 1 + payload.len().div_ceil(3) * 4);
    input.extend_from_slice(protected_b64.as_bytes());
    input.push(b'.');
    input.extend_from_slice(URL_SAFE_NO_PAD.encode(payload).as_bytes());
    input
}

/// Signs `payload` (detached) with `key`. Deterministic: the same payload and key
/// always give the same signature.
pub fn sign(payload: &[u8], key: &SigningKeyPair) -> JwsSignature {
    let public = key.public_key();
    let protected = URL_SAFE_NO_PAD.encode(protected_header(public.kid()));
    let signature = key.sign(&signing_input(&protected, payload));
    JwsSignature {
        protected,
        signature: URL_SAFE_NO_PAD.encode(signature),
        header: None,
    }
}

/// Verifies one detached-payload signature against the `trusted` keys.
///
/// In order:
/// 1. `protected` must be base64url without padding (canonical) of a UTF-8 JSON
///    object with unique member names, and carry a string `kid` — otherwise
///    [`JwsError::SignatureInvalid`];
/// 2. the trusted key whose thumbprint equals `kid` is chosen; none →
///    [`JwsError::UntrustedKey`] (the remaining checks are then not made, so a
///    signature by another party, in any algorithm, is merely "untrusted");
/// 3. the header must have `alg` "EdDSA"; no `crit` (this implementation
///    understands no extensions, RFC 7515 section 4.1.11); `typ`, if present,
///    "JOSE" or "JOSE+JSON" (case-insensitive); `b64`, if present, `true`
///    (RFC 7797 unencoded payloads are not supported). Other members are ignored;
/// 4. `signature` must be base64url without padding of 64 bytes, and verify under
///    the chosen key with ed25519-dalek's `verify_strict` over the signing input
///    built from `protected` exactly as received.
///
/// Any failure in 3 or 4 is [`JwsError::SignatureInvalid`].
pub fn verify(
    payload: &[u8],
    signature: &JwsSignature,
    trusted: &[PublicKey],
) -> Result<VerifiedBy, JwsError> {
    let header_bytes = URL_SAFE_NO_PAD.decode(&signature.protected).map_err(|e| {
        invalid(
            None,
            format!("\"protected\" is not base64url without padding: {e}"),
        )
    })?;
    let header = parse_unique_object(&header_bytes).map_err(|e| {
        invalid(
            None,
            format!("the protected header is not a JSON object: {e}"),
        )
    })?;
    let kid = match header.get("kid") {
        Some(Value::String(kid)) => kid.as_str(),
        Some(_) => {
            return Err(invalid(
                None,
                "the protected header's \"kid\" is not a string",
            ))
        }
        None => return Err(invalid(None, "the protected header has no \"kid\"")),
    };
    let Some(key) = trusted.iter().find(|key| key.kid() == kid) else {
        return Err(JwsError::UntrustedKey {
            kids: vec![kid.to_string()],
        });
    };
    check_header(&header, kid)?;

    let signature_bytes = URL_SAFE_NO_PAD.decode(&signature.signature).map_err(|e| {
        invalid(
            Some(kid),
            format!("\"signature\" is not base64url without padding: {e}"),
        )
    })?;
    let signature_bytes: [u8; 64] = signature_bytes.as_slice().try_into().map_err(|_| {
        invalid(
            Some(kid),
            format!(
                "\"signature\" decodes to {} bytes; an Ed25519 signature is 64 bytes",
                signature_bytes.len()
            ),
        )
    })?;
    let input = signing_input(&signature.protected, payload);
    if key.verify_strict(&input, &signature_bytes) {
        Ok(VerifiedBy(kid.to_string()))
    } else {
        Err(invalid(
            Some(kid),
            "the signature does not match the signed content (it was altered, or made by another key)",
        ))
    }
}

/// The header rules of step 3 of [`verify`]. The header is not yet authenticated: the
/// messages name the rule broken, never the value found.
fn check_header(header: &Map<String, Value>, kid: &str) -> Result<(), JwsError> {
    let refuse = |reason: String| Err(invalid(Some(kid), reason));
    match header.get("alg") {
        Some(Value::String(alg)) if alg == ALG => {}
        Some(Value::String(_)) => {
            return refuse(format!(
                "\"alg\" names another algorithm; only \"{ALG}\" (Ed25519) is accepted"
            ))
        }
        Some(_) => return refuse("\"alg\" is not a string".into()),
        None => return refuse("the protected header has no \"alg\"".into()),
    }
    if header.contains_key("crit") {
        return refuse(
            "the protected header marks members as critical (\"crit\"); no JWS extensions are supported"
                .into(),
        );
    }
    match header.get("typ") {
        None => {}
        Some(Value::String(typ))
            if typ.eq_ignore_ascii_case("JOSE") || typ.eq_ignore_ascii_case("JOSE+JSON") => {}
        Some(_) => return refuse(format!("\"typ\" is not \"{TYP}\"")),
    }
    match header.get("b64") {
        None | Some(Value::Bool(true)) => {}
        Some(_) => return refuse("unencoded payloads (\"b64\": false) are not supported".into()),
    }
    Ok(())
}

/// Verifies a list of signatures, as a bundle with rotated keys carries them.
///
/// Succeeds, returning the keys that verified, when at least one signature by a
/// trusted key verifies and no signature that names a trusted key fails.
/// Signatures naming unknown keys are ignored (another party's, or a retired key's).
/// Errors:
/// * [`JwsError::NoSignatures`] for an empty list;
/// * [`JwsError::SignatureInvalid`] as soon as one signature is malformed (its
///   signer cannot be known) or names a trusted key and fails; the reason names
///   the signature's index;
/// * [`JwsError::UntrustedKey`] listing the `kid`s seen when no signature names a
///   trusted key.
pub fn verify_signatures(
    payload: &[u8],
    signatures: &[JwsSignature],
    trusted: &[PublicKey],
) -> Result<Vec<VerifiedBy>, JwsError> {
    if signatures.is_empty() {
        return Err(JwsError::NoSignatures);
    }
    let mut verified = Vec::new();
    let mut untrusted = Vec::new();
    for (index, signature) in signatures.iter().enumerate() {
        match verify(payload, signature, trusted) {
            Ok(by) => verified.push(by),
            Err(JwsError::UntrustedKey { kids }) => untrusted.extend(kids),
            Err(JwsError::SignatureInvalid { kid, reason }) => {
                return Err(JwsError::SignatureInvalid {
                    kid,
                    reason: format!("signatures[{index}]: {reason}"),
                })
            }
            Err(JwsError::NoSignatures) => return Err(JwsError::NoSignatures),
        }
    }
    if verified.is_empty() {
        Err(JwsError::UntrustedKey { kids: untrusted })
    } else {
        Ok(verified)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signature, VerifyingKey};
    use proptest::prelude::*;

    use crate::crypto::keys::tests::{rfc8037_key, RFC8037_THUMBPRINT};

    const PAYLOAD: &[u8] = br#"{"bundle":{"name":"example-network-skills","version":"0.1.0"}}"#;

    fn b64(bytes: impl AsRef<[u8]>) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A signature with `header_json` as protected header, signed properly by `key`.
    fn sign_with_header(header_json: &str, payload: &[u8], key: &SigningKeyPair) -> JwsSignature {
        let protected = b64(header_json);
        let signature = b64(key.sign(&signing_input(&protected, payload)));
        JwsSignature {
            protected,
            signature,
            header: None,
        }
    }

    fn reason(err: JwsError) -> String {
        match err {
            JwsError::SignatureInvalid { reason, .. } => reason,
            other => panic!("expected SignatureInvalid, got {other:?}"),
        }
    }

    #[test]
    fn sign_then_verify() {
        let key = SigningKeyPair::generate().unwrap();
        let public = key.public_key();
        let signature = sign(PAYLOAD, &key);
        assert_eq!(
            verify(PAYLOAD, &signature, std::slice::from_ref(&public)).unwrap(),
            VerifiedBy(public.kid().to_string())
        );
        // Deterministic.
        assert_eq!(sign(PAYLOAD, &key), signature);
    }

    #[test]
    fn protected_header_is_exact() {
        let signature = sign(PAYLOAD, &rfc8037_key());
        let header = URL_SAFE_NO_PAD.decode(&signature.protected).unwrap();
        let expected = format!(r#"{{"alg":"EdDSA","kid":"{RFC8037_THUMBPRINT}","typ":"JOSE"}}"#);
        assert_eq!(String::from_utf8(header).unwrap(), expected);
        assert_eq!(protected_header(RFC8037_THUMBPRINT), expected);
        // It is its own JCS form.
        let value: Value = serde_json::from_str(&expected).unwrap();
        assert_eq!(
            serde_json_canonicalizer::to_string(&value).unwrap(),
            expected
        );
    }

    /// An implementation with only the JWS spec, the public JWK and an Ed25519
    /// primitive can check the signature.
    #[test]
    fn external_verification_from_the_spec_alone() {
        let key = SigningKeyPair::generate().unwrap();
        let jwk = key.public_key().to_jwk();
        let signature = sign(PAYLOAD, &key);
        let json = serde_json::to_string(&signature).unwrap();

        let parsed: Value = serde_json::from_str(&json).unwrap();
        let protected = parsed["protected"].as_str().unwrap();
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(protected).unwrap()).unwrap();
        assert_eq!(header["alg"], "EdDSA");
        assert_eq!(header["typ"], "JOSE");
        assert_eq!(header["kid"], jwk["kid"]);

        let mut input = String::new();
        input.push_str(protected);
        input.push('.');
        input.push_str(&URL_SAFE_NO_PAD.encode(PAYLOAD));

        let x: [u8; 32] = URL_SAFE_NO_PAD
            .decode(jwk["x"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        let verifying_key = VerifyingKey::from_bytes(&x).unwrap();
        let sig: [u8; 64] = URL_SAFE_NO_PAD
            .decode(parsed["signature"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        verifying_key
            .verify_strict(input.as_bytes(), &Signature::from_bytes(&sig))
            .unwrap();
    }

    #[test]
    fn rfc8037_a4_vector() {
        // RFC 8037 A.4: the same key, header {"alg":"EdDSA"}, payload below.
        let payload = b"Example of Ed25519 signing";
        let signature = sign_with_header(r#"{"alg":"EdDSA"}"#, payload, &rfc8037_key());
        assert_eq!(signature.protected, "eyJhbGciOiJFZERTQSJ9");
        assert_eq!(
            signing_input(&signature.protected, payload),
            b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
        );
        assert_eq!(
            signature.signature,
            "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
        );
        // Valid JWS, but without a kid it cannot be matched to a trusted key.
        let err = verify(payload, &signature, &[rfc8037_key().public_key()]).unwrap_err();
        assert!(reason(err).contains("no \"kid\""));
        // With the kid added, our verifier accepts a header in a different member order.
        let header = format!(r#"{{"kid":"{RFC8037_THUMBPRINT}","alg":"EdDSA"}}"#);
        let signature = sign_with_header(&header, payload, &rfc8037_key());
        verify(payload, &signature, &[rfc8037_key().public_key()]).unwrap();
    }

    #[test]
    fn tampered_payload_fails() {
        let key = SigningKeyPair::generate().unwrap();
        let signature = sign(PAYLOAD, &key);
        let mut tampered = PAYLOAD.to_vec();
        tampered[5] ^= 1;
        let err = verify(&tampered, &signature, &[key.public_key()]).unwrap_err();
        assert!(
            matches!(&err, JwsError::SignatureInvalid { kid: Some(k), .. } if k == key.public_key().kid()),
            "{err:?}"
        );
        assert!(verify(b"", &signature, &[key.public_key()]).is_err());
    }

    #[test]
    fn tampered_header_fails() {
        let key = SigningKeyPair::generate().unwrap();
        let kid = key.public_key().kid().to_string();
        let signature = sign(PAYLOAD, &key);
        for header in [
            format!(r#"{{"alg":"EdDSA","kid":"{kid}"}}"#),
            format!(r#"{{"alg":"EdDSA","kid":"{kid}","typ":"JOSE","x5u":"https://example.com"}}"#),
            format!(r#"{{"alg":"EdDSA","typ":"JOSE","kid":"{kid}"}}"#),
            format!(r#"{{"alg":"EdDSA", "kid":"{kid}","typ":"JOSE"}}"#),
        ] {
            let tampered = JwsSignature {
                protected: b64(&header),
                ..signature.clone()
            };
            let err = verify(PAYLOAD, &tampered, &[key.public_key()]).unwrap_err();
            assert!(reason(err).contains("does not match"), "{header}");
        }
    }

    #[test]
    fn signature_by_another_key_under_a_trusted_kid_fails() {
        let trusted = SigningKeyPair::generate().unwrap();
        let attacker = SigningKeyPair::generate().unwrap();
        let header = protected_header(trusted.public_key().kid());
        let forged = sign_with_header(&header, PAYLOAD, &attacker);
        let err = verify(PAYLOAD, &forged, &[trusted.public_key()]).unwrap_err();
        assert!(reason(err).contains("does not match"));
    }

    #[test]
    fn unknown_kid_is_untrusted() {
        let key = SigningKeyPair::generate().unwrap();
        let other = SigningKeyPair::generate().unwrap();
        let signature = sign(PAYLOAD, &key);
        assert_eq!(
            verify(PAYLOAD, &signature, &[other.public_key()]),
            Err(JwsError::UntrustedKey {
                kids: vec![key.public_key().kid().to_string()]
            })
        );
        assert!(matches!(
            verify(PAYLOAD, &signature, &[]),
            Err(JwsError::UntrustedKey { .. })
        ));
        // Another party's signature in another algorithm is untrusted, not invalid.
        let es256 = JwsSignature {
            protected: b64(r#"{"alg":"ES256","kid":"someone-else"}"#),
            signature: "AAAA".into(),
            header: None,
        };
        assert!(matches!(
            verify(PAYLOAD, &es256, &[key.public_key()]),
            Err(JwsError::UntrustedKey { .. })
        ));
        let message = verify(PAYLOAD, &es256, &[]).unwrap_err().to_string();
        assert!(message.contains("someone-else"), "{message}");
    }

    #[test]
    fn bad_base64_is_invalid() {
        let key = SigningKeyPair::generate().unwrap();
        let trusted = [key.public_key()];
        let good = sign(PAYLOAD, &key);
        let cases = [
            (
                format!("{}=", good.protected),
                good.signature.clone(),
                "\"protected\"",
            ),
            (
                format!(" {}", good.protected),
                good.signature.clone(),
                "\"protected\"",
            ),
            (
                format!("+{}", &good.protected[1..]),
                good.signature.clone(),
                "\"protected\"",
            ),
            (
                good.protected.clone(),
                format!("{}==", good.signature),
                "\"signature\"",
            ),
            (
                good.protected.clone(),
                format!("/{}", &good.signature[1..]),
                "\"signature\"",
            ),
            (good.protected.clone(), "!!".into(), "\"signature\""),
            (
                good.protected.clone(),
                good.signature[..80].into(),
                "60 bytes",
            ),
            (good.protected.clone(), String::new(), "0 bytes"),
        ];
        for (protected, signature, needle) in cases {
            let jws = JwsSignature {
                protected,
                signature,
                header: None,
            };
            let message = verify(PAYLOAD, &jws, &trusted).unwrap_err().to_string();
            assert!(message.contains(needle), "{jws:?}: {message}");
        }
        // Non-canonical base64url (trailing bits set) is rejected, not decoded leniently.
        // The 80-byte header encodes to 107 characters; the last one carries 2
        // unused bits, which must be zero.
        let mut protected = good.protected.clone();
        assert_eq!(protected.len() % 4, 3);
        let last = protected.pop().unwrap();
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        protected.push(alphabet.as_bytes()[alphabet.find(last).unwrap() + 1] as char);
        let jws = JwsSignature {
            protected,
            ..good.clone()
        };
        let message = verify(PAYLOAD, &jws, &trusted).unwrap_err().to_string();
        assert!(message.contains("\"protected\""), "{message}");
    }

    #[test]
    fn malformed_headers_are_invalid() {
        let key = SigningKeyPair::generate().unwrap();
        let kid = key.public_key().kid().to_string();
        let trusted = [key.public_key()];
        let cases = [
            ("not json".to_string(), "not a JSON object"),
            (r#"["EdDSA"]"#.into(), "not a JSON object"),
            (r#""EdDSA""#.into(), "not a JSON object"),
            (
                format!(r#"{{"alg":"EdDSA","kid":"{kid}"}} x"#),
                "not a JSON object",
            ),
            (
                format!(r#"{{"alg":"none","alg":"EdDSA","kid":"{kid}"}}"#),
                "duplicate member \"alg\"",
            ),
            (r#"{"alg":"EdDSA"}"#.into(), "no \"kid\""),
            (
                r#"{"alg":"EdDSA","kid":42}"#.into(),
                "\"kid\" is not a string",
            ),
            (
                format!(r#"{{"alg":"none","kid":"{kid}"}}"#),
                "only \"EdDSA\"",
            ),
            (
                format!(r#"{{"alg":"ES256","kid":"{kid}"}}"#),
                "only \"EdDSA\"",
            ),
            (
                format!(r#"{{"alg":"Ed25519","kid":"{kid}"}}"#),
                "only \"EdDSA\"",
            ),
            (
                format!(r#"{{"alg":["EdDSA"],"kid":"{kid}"}}"#),
                "\"alg\" is not a string",
            ),
            (format!(r#"{{"kid":"{kid}"}}"#), "no \"alg\""),
            (
                format!(r#"{{"alg":"EdDSA","kid":"{kid}","crit":["exp"],"exp":1}}"#),
                "critical",
            ),
            (
                format!(r#"{{"alg":"EdDSA","kid":"{kid}","crit":["b64"],"b64":false}}"#),
                "critical",
            ),
            (
                format!(r#"{{"alg":"EdDSA","kid":"{kid}","b64":false}}"#),
                "unencoded",
            ),
            (
                format!(r#"{{"alg":"EdDSA","kid":"{kid}","typ":"JWT"}}"#),
                "\"typ\"",
            ),
            (
                format!(r#"{{"alg":"EdDSA","kid":"{kid}","typ":1}}"#),
                "\"typ\"",
            ),
        ];
        for (header, needle) in cases {
            // Properly signed, so only the header rule can reject it.
            let jws = sign_with_header(&header, PAYLOAD, &key);
            let err = verify(PAYLOAD, &jws, &trusted).unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(err, JwsError::SignatureInvalid { .. }),
                "{header}: {message}"
            );
            assert!(message.contains(needle), "{header}: {message}");
        }
        // Not UTF-8.
        let jws = JwsSignature {
            protected: b64([0xff, 0xfe]),
            signature: String::new(),
            header: None,
        };
        assert!(matches!(
            verify(PAYLOAD, &jws, &trusted),
            Err(JwsError::SignatureInvalid { .. })
        ));
    }

    #[test]
    fn accepted_header_variants() {
        let key = SigningKeyPair::generate().unwrap();
        let kid = key.public_key().kid().to_string();
        for header in [
            format!(r#"{{"alg":"EdDSA","kid":"{kid}"}}"#),
            format!(r#"{{"alg":"EdDSA","kid":"{kid}","typ":"jose"}}"#),
            format!(r#"{{"alg":"EdDSA","kid":"{kid}","typ":"JOSE+JSON"}}"#),
            format!(r#"{{"alg":"EdDSA","kid":"{kid}","b64":true}}"#),
            format!(r#"{{"alg":"EdDSA","kid":"{kid}","jku":"https://example.com/keys"}}"#),
        ] {
            let jws = sign_with_header(&header, PAYLOAD, &key);
            assert!(
                verify(PAYLOAD, &jws, &[key.public_key()]).is_ok(),
                "{header}"
            );
        }
    }

    #[test]
    fn non_canonical_s_is_rejected() {
        // Adding the group order L to s gives a signature that lax verifiers accept.
        const L: [u8; 32] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
            0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
        ];
        let key = SigningKeyPair::generate().unwrap();
        let mut jws = sign(PAYLOAD, &key);
        let mut sig: [u8; 64] = URL_SAFE_NO_PAD
            .decode(&jws.signature)
            .unwrap()
            .try_into()
            .unwrap();
        let mut carry = 0u16;
        for (s, l) in sig[32..].iter_mut().zip(L) {
            let sum = u16::from(*s) + u16::from(l) + carry;
            *s = sum as u8;
            carry = sum >> 8;
        }
        assert_eq!(carry, 0);
        jws.signature = b64(sig);
        assert!(verify(PAYLOAD, &jws, &[key.public_key()]).is_err());
    }

    #[test]
    fn serde_shape() {
        let jws = sign(PAYLOAD, &rfc8037_key());
        let json = serde_json::to_string(&jws).unwrap();
        assert_eq!(
            json,
            format!(
                r#"{{"protected":"{}","signature":"{}"}}"#,
                jws.protected, jws.signature
            )
        );
        assert_eq!(serde_json::from_str::<JwsSignature>(&json).unwrap(), jws);

        // A2A's optional unprotected header is accepted, kept, and ignored.
        let with_header = format!(
            r#"{{"protected":"{}","signature":"{}","header":{{"kid":"not-this-one","alg":"none"}}}}"#,
            jws.protected, jws.signature
        );
        let parsed: JwsSignature = serde_json::from_str(&with_header).unwrap();
        assert!(parsed.header.is_some());
        assert_eq!(serde_json::to_string(&parsed).unwrap(), with_header);
        verify(PAYLOAD, &parsed, &[rfc8037_key().public_key()]).unwrap();

        for bad in [
            format!(
                r#"{{"protected":"{}","signature":"{}","payload":"e30"}}"#,
                jws.protected, jws.signature
            ),
            format!(
                r#"{{"protected":"{}","signature":"{}","header":"x"}}"#,
                jws.protected, jws.signature
            ),
            format!(r#"{{"protected":"{}"}}"#, jws.protected),
        ] {
            assert!(serde_json::from_str::<JwsSignature>(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn list_verification() {
        let a = SigningKeyPair::generate().unwrap();
        let b = SigningKeyPair::generate().unwrap();
        let stranger = SigningKeyPair::generate().unwrap();
        let (kid_a, kid_b) = (
            a.public_key().kid().to_string(),
            b.public_key().kid().to_string(),
        );
        let trusted = [a.public_key(), b.public_key()];
        let good_a = sign(PAYLOAD, &a);
        let good_b = sign(PAYLOAD, &b);
        let by_stranger = sign(PAYLOAD, &stranger);
        let bad_b = sign(b"other payload", &b);

        assert_eq!(
            verify_signatures(PAYLOAD, std::slice::from_ref(&good_a), &trusted).unwrap(),
            [VerifiedBy(kid_a.clone())]
        );
        // Rotation: both keys sign; both verify.
        assert_eq!(
            verify_signatures(PAYLOAD, &[good_a.clone(), good_b.clone()], &trusted).unwrap(),
            [VerifiedBy(kid_a.clone()), VerifiedBy(kid_b.clone())]
        );
        // Old key retired: its signature is ignored.
        assert_eq!(
            verify_signatures(PAYLOAD, &[good_a.clone(), good_b.clone()], &trusted[1..]).unwrap(),
            [VerifiedBy(kid_b.clone())]
        );
        // Unknown signers are ignored.
        assert_eq!(
            verify_signatures(PAYLOAD, &[by_stranger.clone(), good_a.clone()], &trusted).unwrap(),
            [VerifiedBy(kid_a.clone())]
        );
        // A failing signature by a trusted key spoils the lot.
        let err =
            verify_signatures(PAYLOAD, &[good_a.clone(), bad_b.clone()], &trusted).unwrap_err();
        assert!(
            matches!(&err, JwsError::SignatureInvalid { kid: Some(k), reason } if *k == kid_b && reason.starts_with("signatures[1]: ")),
            "{err:?}"
        );
        // So does a malformed one, whoever made it.
        let garbage = JwsSignature {
            protected: "%%%".into(),
            signature: String::new(),
            header: None,
        };
        assert!(matches!(
            verify_signatures(PAYLOAD, &[good_a.clone(), garbage], &trusted),
            Err(JwsError::SignatureInvalid { kid: None, .. })
        ));
        // Only strangers.
        assert_eq!(
            verify_signatures(PAYLOAD, std::slice::from_ref(&by_stranger), &trusted),
            Err(JwsError::UntrustedKey {
                kids: vec![stranger.public_key().kid().to_string()]
            })
        );
        assert!(matches!(
            verify_signatures(PAYLOAD, &[good_a], &[]),
            Err(JwsError::UntrustedKey { .. })
        ));
        // Nothing at all.
        assert_eq!(
            verify_signatures(PAYLOAD, &[], &trusted),
            Err(JwsError::NoSignatures)
        );
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            JwsError::UntrustedKey { kids: vec!["k1".into(), "k2".into()] }.to_string(),
            "not signed by a trusted key (signed by: k1, k2); add the signer's public key to the trusted keys if you trust it"
        );
        assert_eq!(
            JwsError::SignatureInvalid {
                kid: Some("k1".into()),
                reason: "r".into()
            }
            .to_string(),
            "invalid signature by key k1: r"
        );
        assert_eq!(
            JwsError::SignatureInvalid {
                kid: None,
                reason: "r".into()
            }
            .to_string(),
            "invalid signature: r"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn any_payload_round_trips_and_any_bit_flip_fails(
            payload in proptest::collection::vec(any::<u8>(), 0..512),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let key = rfc8037_key();
            let jws = sign(&payload, &key);
            let trusted = [key.public_key()];
            prop_assert!(verify(&payload, &jws, &trusted).is_ok());
            if !payload.is_empty() {
                let mut tampered = payload.clone();
                tampered[flip.index(payload.len())] ^= 1 << bit;
                prop_assert!(verify(&tampered, &jws, &trusted).is_err());
            }
        }
    }
}
