//! Ed25519 keys: generation, files OpenSSL can read, and public keys as JWK.
//!
//! A bundle is signed with an Ed25519 key (see the README, "The bundle"). The
//! vendor keeps the private key; agents trust the public key. Both sides need files
//! that other tools understand, so this module pins down the formats:
//!
//! * **Private key**: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). We *write* the
//!   version 1 structure (RFC 5208/8410: `OneAsymmetricKey` version 0, no public
//!   key), because OpenSSL 3 rejects the version 2 structure that ed25519-dalek's
//!   encoder produces. We *read* both versions; a v2 key's embedded public key must
//!   match its seed.
//! * **Public key**: a JWK (RFC 8037 `OKP`/`Ed25519`) whose `kid` is its RFC 7638
//!   thumbprint, and on request an SPKI PEM (`-----BEGIN PUBLIC KEY-----`). The
//!   thumbprint is what a signature's protected header names, so a `kid` that does
//!   not match the key is rejected rather than trusted.
//! * **Key files** are written atomically (temporary file + rename), the private
//!   key with mode 0600 on unix, and an existing file is never replaced unless the
//!   caller asks for it.
//!
//! [`TrustedKeys`] is the other side's set: the public keys a verifier accepts (an agent
//! loading a bundle, a release statement's check, a registry referrer's check), and
//! whether unsigned bundles are allowed.
//!
//! Errors are a [`KeyError`] whose message tells the user what to do; nothing here
//! prints.

use crate::finding::Code;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_dalek::pkcs8::spki::der::pem::{self, LineEnding};
/// Wrapper that wipes secret material (seed, private key PEM) when dropped.
pub use ed25519_dalek::pkcs8::spki::der::zeroize::Zeroizing;
use ed25519_dalek::pkcs8::{
    spki, DecodePrivateKey, DecodePublicKey, EncodePublicKey, KeypairBytes,
};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The DER of a PKCS#8 v1 Ed25519 private key is this 16-byte header followed by
/// the 32-byte seed (RFC 8410 section 10.3):
///
/// ```text
/// 30 2e                 SEQUENCE, 46 bytes
///    02 01 00           INTEGER 0 (version v1)
///    30 05              SEQUENCE (AlgorithmIdentifier)
///       06 03 2b 65 70  OID 1.3.101.112 (id-Ed25519), no parameters
///    04 22              OCTET STRING, 34 bytes (privateKey)
///       04 20 ...       OCTET STRING, 32 bytes (CurvePrivateKey = seed)
/// ```
const PKCS8_V1_HEADER: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// PEM label of a PKCS#8 private key.
const PRIVATE_KEY_LABEL: &str = "PRIVATE KEY";
/// PEM label of an SPKI public key.
const PUBLIC_KEY_LABEL: &str = "PUBLIC KEY";

/// Why a key could not be generated, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The operating system's random number generator failed.
    #[error("cannot get randomness from the operating system to generate a key: {0}")]
    Randomness(String),

    /// The text contains no PEM block at all.
    #[error("not a PEM file: expected a \"-----BEGIN {expected}-----\" line")]
    NotPem {
        /// The PEM label that was looked for.
        expected: &'static str,
    },

    /// The text holds PEM, but not of the kind needed.
    #[error(
        "expected a \"-----BEGIN {expected}-----\" block, found \"-----BEGIN {found}-----\"{}",
        pem_hint(expected, found)
    )]
    UnexpectedPem {
        /// The PEM label that was looked for.
        expected: &'static str,
        /// The first PEM label found instead.
        found: String,
    },

    /// The PEM block is structurally broken (bad base64, missing END line, ...).
    #[error("malformed PEM: {0}")]
    MalformedPem(String),

    /// A PKCS#8 private key for some other algorithm (RSA, EC, Ed448, ...).
    #[error("not an Ed25519 PKCS#8 private key (its algorithm is {}); generate one with `skillbundle keygen` or `openssl genpkey -algorithm ed25519`", describe_oid(.oid))]
    NotEd25519PrivateKey {
        /// The algorithm OID found in the key, dotted.
        oid: String,
    },

    /// A public key for some other algorithm.
    #[error("not an Ed25519 public key (its algorithm is {})", describe_oid(.oid))]
    NotEd25519PublicKey {
        /// The algorithm OID found in the key, dotted.
        oid: String,
    },

    /// The DER inside the PEM is not a well-formed Ed25519 PKCS#8 private key.
    #[error("malformed Ed25519 PKCS#8 private key: {0}")]
    MalformedPrivateKey(String),

    /// A PKCS#8 v2 key carries a public key that does not belong to its seed.
    #[error(
        "the private key file is corrupt: its embedded public key does not match its private key"
    )]
    PublicKeyMismatch,

    /// The DER inside the PEM is not a well-formed SPKI public key.
    #[error("malformed public key: {0}")]
    MalformedPublicKey(String),

    /// The 32 bytes are not the canonical encoding of a point on the curve.
    #[error("not a valid Ed25519 public key: {0}")]
    InvalidPoint(&'static str),

    /// The public key is a small-order point, which any signature could match.
    #[error(
        "refusing a weak Ed25519 public key (a small-order point): no private key stands behind it"
    )]
    WeakPublicKey,

    /// The JSON is not a valid Ed25519 public JWK.
    #[error("invalid Ed25519 JWK: {0}")]
    InvalidJwk(String),

    /// The JWK names itself with a `kid` other than its RFC 7638 thumbprint.
    #[error("JWK \"kid\" is {kid:?} but the key's RFC 7638 thumbprint is {thumbprint:?}; remove the \"kid\" or correct it")]
    KidMismatch {
        /// The `kid` written in the JWK.
        kid: String,
        /// The thumbprint computed from the key.
        thumbprint: String,
    },

    /// A key file to be written already exists.
    #[error("{} already exists; refusing to overwrite it (use --force to replace it)", .0.display())]
    FileExists(PathBuf),

    /// The key file prefix does not name a file.
    #[error("invalid key file prefix {:?}: it must name a file, e.g. keys/release", .0.display())]
    InvalidPrefix(PathBuf),

    /// An operating system error while reading or writing a file.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done ("read", "write", ...).
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// The one mapping of a key failure to a finding code: refusing to replace a key file,
/// or a prefix that names no file, is about the path the caller gave (`path_invalid`,
/// like `init` refusing to overwrite); a file that could not be read or written, or no
/// randomness, is the environment (`io_error`); a key that could not be read from its
/// text is a malformed signing input (`signature_invalid`).
impl From<&KeyError> for Code {
    fn from(e: &KeyError) -> Code {
        match e {
            KeyError::FileExists(_) | KeyError::InvalidPrefix(_) => Code::PathInvalid,
            KeyError::Randomness(_) | KeyError::Io { .. } => Code::Io,
            KeyError::NotPem { .. }
            | KeyError::UnexpectedPem { .. }
            | KeyError::MalformedPem(_)
            | KeyError::NotEd25519PrivateKey { .. }
            | KeyError::NotEd25519PublicKey { .. }
            | KeyError::MalformedPrivateKey(_)
            | KeyError::PublicKeyMismatch
            | KeyError::MalformedPublicKey(_)
            | KeyError::InvalidPoint(_)
            | KeyError::WeakPublicKey
            | KeyError::InvalidJwk(_)
            | KeyError::KidMismatch { .. } => Code::SignatureInvalid,
        }
    }
}

/// An extra sentence for [`KeyError::UnexpectedPem`] pointing at the likely fix.
fn pem_hint(expected: &str, found: &str) -> &'static str {
    match (expected, found) {
        (PRIVATE_KEY_LABEL, PUBLIC_KEY_LABEL) => {
            "; this is a public key, but signing needs the private key file (PREFIX.key)"
        }
        (PUBLIC_KEY_LABEL, PRIVATE_KEY_LABEL) => {
            "; this is a private key, never distribute it: give the public key (PREFIX.jwk.json or PREFIX.pub.pem, or `openssl pkey -in KEY -pubout`)"
        }
        (_, "ENCRYPTED PRIVATE KEY") => {
            "; encrypted private keys are not supported: decrypt it first with `openssl pkey -in KEY -out PLAIN.key`"
        }
        (_, "OPENSSH PRIVATE KEY") => {
            "; OpenSSH key files are not supported: use `skillbundle keygen` or `openssl genpkey -algorithm ed25519`"
        }
        (_, "RSA PRIVATE KEY" | "EC PRIVATE KEY" | "DSA PRIVATE KEY" | "EC PARAMETERS") => {
            "; only Ed25519 keys are supported: generate one with `skillbundle keygen` or `openssl genpkey -algorithm ed25519`"
        }
        (_, "CERTIFICATE") => {
            "; certificates are not supported: extract the key with `openssl x509 -in CERT -pubkey -noout`"
        }
        _ => "",
    }
}

/// A readable name for an algorithm OID in error messages.
fn describe_oid(oid: &str) -> String {
    let name = match oid {
        "1.2.840.113549.1.1.1" => "RSA",
        "1.2.840.10045.2.1" => "EC (ecPublicKey)",
        "1.3.101.110" => "X25519",
        "1.3.101.111" => "X448",
        "1.3.101.113" => "Ed448",
        "1.2.840.10040.4.1" => "DSA",
        _ => return format!("OID {oid}"),
    };
    format!("{name}, OID {oid}")
}

/// An Ed25519 private key with its public half.
///
/// `Debug` never shows the private key.
#[derive(Clone)]
pub struct SigningKeyPair {
    signing: SigningKey,
}

impl fmt::Debug for SigningKeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKeyPair")
            .field(
                "kid",
                &jwk_thumbprint(self.signing.verifying_key().as_bytes()),
            )
            .finish_non_exhaustive()
    }
}

impl SigningKeyPair {
    /// Generates a fresh key from the operating system's random number generator.
    pub fn generate() -> Result<Self, KeyError> {
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut seed[..]).map_err(|e| KeyError::Randomness(e.to_string()))?;
        Ok(Self::from_seed(&seed))
    }

    /// The key whose 32-byte seed (RFC 8032 private key, JWK `d`) is `seed`.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        Self {
            signing: SigningKey::from_bytes(seed),
        }
    }

    /// The 32-byte seed. Handle with care: this is the private key.
    pub fn seed(&self) -> &[u8; 32] {
        self.signing.as_bytes()
    }

    /// The public half.
    pub fn public_key(&self) -> PublicKey {
        PublicKey::from_verifying_key(self.signing.verifying_key())
    }

    /// Signs `message` (pure Ed25519, RFC 8032; deterministic).
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        let signature: Signature = self.signing.sign(message);
        signature.to_bytes()
    }

    /// The private key as PKCS#8 v1 DER (48 bytes), the form OpenSSL writes and reads.
    pub fn to_pkcs8_der(&self) -> Zeroizing<Vec<u8>> {
        let mut der = Zeroizing::new(Vec::with_capacity(48));
        der.extend_from_slice(&PKCS8_V1_HEADER);
        der.extend_from_slice(self.signing.as_bytes());
        der
    }

    /// The private key as PKCS#8 v1 PEM (`-----BEGIN PRIVATE KEY-----`, LF line
    /// endings, trailing newline), byte-identical to what
    /// `openssl genpkey -algorithm ed25519` writes for the same seed.
    pub fn to_pkcs8_pem(&self) -> Zeroizing<String> {
        let der = self.to_pkcs8_der();
        // Cannot fail: the label is a valid RFC 7468 label and the input is 48 bytes.
        let text = pem::encode_string(PRIVATE_KEY_LABEL, LineEnding::LF, &der)
            .expect("PEM encoding of a 48-byte document cannot fail");
        Zeroizing::new(text)
    }

    /// Reads a PKCS#8 private key (v1 or v2) from PEM text. Text around the
    /// `PRIVATE KEY` block is ignored.
    pub fn from_pkcs8_pem(text: &str) -> Result<Self, KeyError> {
        let block = find_pem_block(text, PRIVATE_KEY_LABEL)?;
        let (_label, der) =
            pem::decode_vec(block.as_bytes()).map_err(|e| KeyError::MalformedPem(e.to_string()))?;
        let der = Zeroizing::new(der);
        Self::from_pkcs8_der(&der)
    }

    /// Reads a PKCS#8 private key (v1 or v2) from DER.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyError> {
        let keypair = KeypairBytes::from_pkcs8_der(der).map_err(private_key_error)?;
        let signing = SigningKey::from_bytes(&keypair.secret_key);
        if let Some(public) = &keypair.public_key {
            if public.to_bytes() != signing.verifying_key().to_bytes() {
                return Err(KeyError::PublicKeyMismatch);
            }
        }
        Ok(Self { signing })
    }

    /// Reads a private key PEM file.
    pub fn read_pem_file(path: &Path) -> Result<Self, KeyError> {
        let text = Zeroizing::new(read_text(path)?);
        Self::from_pkcs8_pem(&text)
    }
}

fn private_key_error(e: ed25519_dalek::pkcs8::Error) -> KeyError {
    use ed25519_dalek::pkcs8::Error;
    match e {
        Error::PublicKey(spki::Error::OidUnknown { oid }) => KeyError::NotEd25519PrivateKey {
            oid: oid.to_string(),
        },
        Error::ParametersMalformed => KeyError::MalformedPrivateKey(
            "the Ed25519 algorithm identifier must not have parameters".into(),
        ),
        Error::KeyMalformed(_) => KeyError::MalformedPrivateKey(
            "the private key is not a 32-byte OCTET STRING (RFC 8410)".into(),
        ),
        other => KeyError::MalformedPrivateKey(other.to_string()),
    }
}

fn public_key_error(e: spki::Error) -> KeyError {
    match e {
        spki::Error::OidUnknown { oid } => KeyError::NotEd25519PublicKey {
            oid: oid.to_string(),
        },
        spki::Error::KeyMalformed => {
            KeyError::MalformedPublicKey("the public key is not 32 bytes".into())
        }
        other => KeyError::MalformedPublicKey(other.to_string()),
    }
}

/// Returns the first PEM block labelled `wanted` (from its BEGIN line through its
/// END line), or an error naming what was found instead.
fn find_pem_block<'a>(text: &'a str, wanted: &'static str) -> Result<&'a str, KeyError> {
    let mut first_other: Option<String> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        let Some(label) = trimmed
            .strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
        else {
            continue;
        };
        if label != wanted {
            first_other.get_or_insert_with(|| label.to_string());
            continue;
        }
        let end_line = format!("-----END {wanted}-----");
        let mut end = start;
        for rest in text[start..].split_inclusive('\n') {
            end += rest.len();
            if rest.trim() == end_line {
                return Ok(text[start..end].trim_start());
            }
        }
        return Err(KeyError::MalformedPem(format!(
            "no \"{end_line}\" line after \"-----BEGIN {wanted}-----\""
        )));
    }
    match first_other {
        Some(found) => Err(KeyError::UnexpectedPem {
            expected: wanted,
            found,
        }),
        None => Err(KeyError::NotPem { expected: wanted }),
    }
}

/// An Ed25519 public key, always valid: a canonical encoding of a point that is
/// not of small order. Carries its RFC 7638 thumbprint, used as `kid`.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
    kid: String,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("kid", &self.kid)
            .field("x", &self.x())
            .finish()
    }
}

impl PublicKey {
    fn from_verifying_key(key: VerifyingKey) -> Self {
        let kid = jwk_thumbprint(key.as_bytes());
        Self { key, kid }
    }

    /// The key whose RFC 8032 encoding (JWK `x`) is `bytes`. Rejects bytes that do
    /// not decode to a point, non-canonical encodings (which would give one key two
    /// thumbprints) and small-order points.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self, KeyError> {
        let key = VerifyingKey::from_bytes(bytes)
            .map_err(|_| KeyError::InvalidPoint("the 32 bytes do not encode a curve point"))?;
        if key.to_edwards().compress().to_bytes() != *bytes {
            return Err(KeyError::InvalidPoint(
                "the 32 bytes are not the canonical encoding of the point",
            ));
        }
        if key.is_weak() {
            return Err(KeyError::WeakPublicKey);
        }
        Ok(Self::from_verifying_key(key))
    }

    /// The 32-byte RFC 8032 encoding.
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.key.as_bytes()
    }

    /// The ed25519-dalek key, for callers that verify by other means.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.key
    }

    /// The RFC 7638 thumbprint; the `kid` of this key's JWK and of its signatures.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The JWK `x` member: base64url (no padding) of the 32-byte encoding.
    pub fn x(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.key.as_bytes())
    }

    /// Verifies an Ed25519 signature with `verify_strict` (rejects non-canonical
    /// `s`, small-order `R` and weak keys).
    pub fn verify_strict(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        let signature = Signature::from_bytes(signature);
        self.key.verify_strict(message, &signature).is_ok()
    }

    /// The public JWK `{"kty":"OKP","crv":"Ed25519","x":…,"kid":…}`, members in
    /// that order.
    pub fn to_jwk(&self) -> Value {
        let mut jwk = Map::new();
        jwk.insert("kty".into(), Value::from("OKP"));
        jwk.insert("crv".into(), Value::from("Ed25519"));
        jwk.insert("x".into(), Value::from(self.x()));
        jwk.insert("kid".into(), Value::from(self.kid.clone()));
        Value::Object(jwk)
    }

    /// The JWK as the file `PREFIX.jwk.json` holds it: pretty-printed, newline-terminated.
    pub fn to_jwk_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.to_jwk())
            .expect("serializing a JSON object of strings cannot fail");
        text.push('\n');
        text
    }

    /// Reads a public JWK from JSON text. Duplicate members are rejected; see
    /// [`PublicKey::from_jwk`] for the other rules.
    pub fn from_jwk_json(text: &str) -> Result<Self, KeyError> {
        let object = parse_unique_object(text.as_bytes())
            .map_err(|e| KeyError::InvalidJwk(format!("not a JSON object: {e}")))?;
        Self::from_jwk_object(&object)
    }

    /// Reads a public JWK. Requires `kty` "OKP", `crv` "Ed25519" and `x` the
    /// base64url (no padding) of 32 bytes; a present `kid` must equal the RFC 7638
    /// thumbprint; a present `alg` must be "EdDSA" (or RFC 9864's "Ed25519"), a
    /// present `use` "sig". A private member `d` is refused: a file of trusted keys
    /// must not hold a secret. Other members are ignored.
    pub fn from_jwk(jwk: &Value) -> Result<Self, KeyError> {
        match jwk {
            Value::Object(object) => Self::from_jwk_object(object),
            _ => Err(KeyError::InvalidJwk("a JWK must be a JSON object".into())),
        }
    }

    fn from_jwk_object(jwk: &Map<String, Value>) -> Result<Self, KeyError> {
        let member = |name: &str| -> Result<Option<&str>, KeyError> {
            match jwk.get(name) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(KeyError::InvalidJwk(format!(
                    "member \"{name}\" must be a string"
                ))),
            }
        };
        match member("kty")? {
            Some("OKP") => {}
            Some(other) => {
                return Err(KeyError::InvalidJwk(format!(
                    "\"kty\" is {other:?}; an Ed25519 key has \"kty\": \"OKP\""
                )))
            }
            None => return Err(KeyError::InvalidJwk("missing \"kty\"".into())),
        }
        match member("crv")? {
            Some("Ed25519") => {}
            Some(other) => {
                return Err(KeyError::InvalidJwk(format!(
                    "\"crv\" is {other:?}; only \"Ed25519\" is supported"
                )))
            }
            None => return Err(KeyError::InvalidJwk("missing \"crv\"".into())),
        }
        if jwk.contains_key("d") {
            return Err(KeyError::InvalidJwk(
                "it contains the private key (\"d\"); use the public JWK only".into(),
            ));
        }
        match member("alg")? {
            None | Some("EdDSA" | "Ed25519") => {}
            Some(other) => {
                return Err(KeyError::InvalidJwk(format!(
                    "\"alg\" is {other:?}; an Ed25519 signing key has \"alg\": \"EdDSA\""
                )))
            }
        }
        match member("use")? {
            None | Some("sig") => {}
            Some(other) => {
                return Err(KeyError::InvalidJwk(format!(
                    "\"use\" is {other:?}; a signing key has \"use\": \"sig\""
                )))
            }
        }
        let x = member("x")?.ok_or_else(|| KeyError::InvalidJwk("missing \"x\"".into()))?;
        let bytes = URL_SAFE_NO_PAD.decode(x).map_err(|e| {
            KeyError::InvalidJwk(format!("\"x\" is not base64url without padding: {e}"))
        })?;
        let bytes: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            KeyError::InvalidJwk(format!(
                "\"x\" decodes to {} bytes; an Ed25519 public key is 32 bytes",
                bytes.len()
            ))
        })?;
        let key = Self::from_bytes(&bytes)?;
        if let Some(kid) = member("kid")? {
            if kid != key.kid {
                return Err(KeyError::KidMismatch {
                    kid: kid.to_string(),
                    thumbprint: key.kid,
                });
            }
        }
        Ok(key)
    }

    /// Reads an SPKI public key from PEM text (`-----BEGIN PUBLIC KEY-----`), as
    /// `openssl pkey -pubout` writes it. Text around the block is ignored.
    pub fn from_spki_pem(text: &str) -> Result<Self, KeyError> {
        let block = find_pem_block(text, PUBLIC_KEY_LABEL)?;
        let (_label, der) =
            pem::decode_vec(block.as_bytes()).map_err(|e| KeyError::MalformedPem(e.to_string()))?;
        Self::from_spki_der(&der)
    }

    /// Reads an SPKI public key from DER.
    pub fn from_spki_der(der: &[u8]) -> Result<Self, KeyError> {
        let key = VerifyingKey::from_public_key_der(der).map_err(public_key_error)?;
        Self::from_bytes(key.as_bytes())
    }

    /// The SPKI DER (44 bytes).
    pub fn to_spki_der(&self) -> Vec<u8> {
        self.key
            .to_public_key_der()
            .expect("SPKI encoding of a 32-byte key cannot fail")
            .into_vec()
    }

    /// The SPKI PEM (`-----BEGIN PUBLIC KEY-----`, LF line endings, trailing
    /// newline), byte-identical to `openssl pkey -pubout`.
    pub fn to_spki_pem(&self) -> String {
        self.key
            .to_public_key_pem(LineEnding::LF)
            .expect("SPKI encoding of a 32-byte key cannot fail")
    }

    /// Reads a public key in either accepted form: a JWK (text starting with `{`)
    /// or an SPKI PEM.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        if text.trim_start().starts_with('{') {
            Self::from_jwk_json(text)
        } else {
            Self::from_spki_pem(text)
        }
    }

    /// Reads a public key file in either accepted form (see [`PublicKey::parse`]).
    pub fn read_file(path: &Path) -> Result<Self, KeyError> {
        Self::parse(&read_text(path)?)
    }
}

/// Reads the trusted keys a file holds: one public key (JWK or SPKI PEM, see
/// [`PublicKey::parse`]) or an RFC 7517 JWK Set, `{"keys": [...]}`, which is how a
/// vendor announces a rotation: the old and the new key side by side, each verifying
/// alone. The whole text is strict I-JSON (duplicate members anywhere are refused); every
/// key of a set must be a valid Ed25519 public signing key and a set may not be empty,
/// so a typo never silently narrows what is trusted. Keys listed twice are kept once.
pub fn parse_key_set(text: &str) -> Result<Vec<PublicKey>, KeyError> {
    if !text.trim_start().starts_with('{') {
        return PublicKey::from_spki_pem(text).map(|key| vec![key]);
    }
    let value = crate::wire::json::parse(text.as_bytes())
        .map_err(|e| KeyError::InvalidJwk(format!("not valid JSON: {e}")))?;
    let Some(keys) = value.get("keys") else {
        return PublicKey::from_jwk(&value).map(|key| vec![key]);
    };
    let Value::Array(keys) = keys else {
        return Err(KeyError::InvalidJwk(
            "a JWK Set's \"keys\" must be an array of JWKs".into(),
        ));
    };
    if keys.is_empty() {
        return Err(KeyError::InvalidJwk(
            "the JWK Set's \"keys\" is empty: it would trust nothing".into(),
        ));
    }
    let mut out: Vec<PublicKey> = Vec::with_capacity(keys.len());
    for (i, jwk) in keys.iter().enumerate() {
        let key = PublicKey::from_jwk(jwk).map_err(|e| match e {
            KeyError::InvalidJwk(why) => KeyError::InvalidJwk(format!("key {i} of the set: {why}")),
            other => other,
        })?;
        if !out.iter().any(|k| k.kid() == key.kid()) {
            out.push(key);
        }
    }
    Ok(out)
}

/// Reads a trusted-key file: one key or a JWK Set (see [`parse_key_set`]).
pub fn read_key_set(path: &Path) -> Result<Vec<PublicKey>, KeyError> {
    parse_key_set(&read_text(path)?)
}

/// The RFC 7638 JWK thumbprint of an Ed25519 public key: base64url (no padding) of
/// SHA-256 over `{"crv":"Ed25519","kty":"OKP","x":"<x>"}` — the required members in
/// lexicographic order, no whitespace (the same bytes JCS would produce; `x` is
/// base64url, so nothing needs escaping).
pub fn jwk_thumbprint(public_key: &[u8; 32]) -> String {
    let x = URL_SAFE_NO_PAD.encode(public_key);
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// Writes the files of `keygen --out PREFIX [--pem] [--force]` and returns their
/// paths in this order:
///
/// * `PREFIX.key` — the private key, PKCS#8 v1 PEM, mode 0600 on unix;
/// * `PREFIX.jwk.json` — the public JWK;
/// * `PREFIX.pub.pem` — the SPKI PEM public key, only if `with_pem`.
///
/// Unless `force`, fails with [`KeyError::FileExists`] before writing anything if
/// any of these exists (a dangling symlink counts), and each file is created with
/// no-clobber semantics, so a file appearing meanwhile is not replaced either.
/// Each file is written to a temporary file in the same directory, synced, then
/// renamed into place: a file is either absent, the old one, or complete. If
/// writing fails without `force`, files this call already created are removed.
pub fn write_key_files(
    prefix: &Path,
    key: &SigningKeyPair,
    with_pem: bool,
    force: bool,
) -> Result<Vec<PathBuf>, KeyError> {
    let public = key.public_key();
    let mut targets: Vec<(PathBuf, Zeroizing<Vec<u8>>, bool)> = vec![
        (
            with_suffix(prefix, ".key")?,
            Zeroizing::new(key.to_pkcs8_pem().as_bytes().to_vec()),
            true,
        ),
        (
            with_suffix(prefix, ".jwk.json")?,
            Zeroizing::new(public.to_jwk_json().into_bytes()),
            false,
        ),
    ];
    if with_pem {
        targets.push((
            with_suffix(prefix, ".pub.pem")?,
            Zeroizing::new(public.to_spki_pem().into_bytes()),
            false,
        ));
    }

    if !force {
        for (path, _, _) in &targets {
            if fs::symlink_metadata(path).is_ok() {
                return Err(KeyError::FileExists(path.clone()));
            }
        }
    }

    // Stage every file completely before any rename, so a failure while writing
    // leaves the destination untouched. Dropped temporary files delete themselves.
    let mut staged = Vec::with_capacity(targets.len());
    for (path, contents, private) in &targets {
        let dir = parent_dir(path);
        let mut builder = tempfile::Builder::new();
        builder.prefix(".skillbundle-keygen-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if *private { 0o600 } else { 0o644 };
            builder.permissions(fs::Permissions::from_mode(mode));
        }
        #[cfg(not(unix))]
        let _ = private;
        let io_error = |action: &'static str| {
            move |source: io::Error| KeyError::Io {
                action,
                path: path.clone(),
                source,
            }
        };
        let mut tmp = builder
            .tempfile_in(dir)
            .map_err(io_error("create a temporary file for"))?;
        tmp.write_all(contents).map_err(io_error("write"))?;
        tmp.as_file().sync_all().map_err(io_error("write"))?;
        staged.push((path.clone(), tmp));
    }

    let mut written: Vec<PathBuf> = Vec::with_capacity(staged.len());
    for (path, tmp) in staged {
        let result = if force {
            tmp.persist(&path).map(drop).map_err(|e| e.error)
        } else {
            tmp.persist_noclobber(&path).map(drop).map_err(|e| e.error)
        };
        if let Err(source) = result {
            if !force {
                for done in &written {
                    let _ = fs::remove_file(done);
                }
            }
            return Err(if !force && source.kind() == io::ErrorKind::AlreadyExists {
                KeyError::FileExists(path)
            } else {
                KeyError::Io {
                    action: "write",
                    path,
                    source,
                }
            });
        }
        written.push(path);
    }

    // Make the renames durable; best effort, the files themselves are complete.
    #[cfg(unix)]
    for path in &written {
        if let Ok(dir) = fs::File::open(parent_dir(path)) {
            let _ = dir.sync_all();
        }
    }
    Ok(written)
}

/// `prefix` with `suffix` appended to its file name (not `with_extension`: a
/// prefix such as `release-1.2` keeps its dot).
fn with_suffix(prefix: &Path, suffix: &str) -> Result<PathBuf, KeyError> {
    let text = prefix.as_os_str();
    let ends_with_separator = text
        .to_string_lossy()
        .ends_with(|c: char| std::path::is_separator(c));
    if text.is_empty() || ends_with_separator || prefix.file_name().is_none() {
        return Err(KeyError::InvalidPrefix(prefix.to_path_buf()));
    }
    let mut name = text.to_os_string();
    name.push(suffix);
    Ok(PathBuf::from(name))
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// The most a key file is read: a PEM or JWK key is a few hundred bytes.
const MAX_KEY_FILE_BYTES: u64 = 16 * 1024;

/// Read a key file the operator named: never blocking on a FIFO, never reading a
/// device, at most [`MAX_KEY_FILE_BYTES`] (see [`crate::fs::operator_file`]).
fn read_text(path: &Path) -> Result<String, KeyError> {
    let io = |source| KeyError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let bytes = crate::fs::operator_file::read(path, MAX_KEY_FILE_BYTES).map_err(|e| match e {
        crate::fs::operator_file::ReadError::Io(e) => io(e),
        other => io(io::Error::new(io::ErrorKind::InvalidInput, other)),
    })?;
    String::from_utf8(bytes).map_err(|e| io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// A JSON object whose top-level member names are unique (RFC 7515 section 4 and
/// RFC 7517 section 4 require unique names; serde_json alone keeps the last).
struct UniqueObject(Map<String, Value>);

impl<'de> Deserialize<'de> for UniqueObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = UniqueObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<UniqueObject, A::Error> {
                let mut object = Map::new();
                while let Some(name) = access.next_key::<String>()? {
                    if object.contains_key(&name) {
                        return Err(de::Error::custom(format_args!("duplicate member {name:?}")));
                    }
                    let value: Value = access.next_value()?;
                    object.insert(name, value);
                }
                Ok(UniqueObject(object))
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// Parses `bytes` as one JSON object with unique top-level member names and
/// nothing after it. The error's text is a human-readable reason.
pub(crate) fn parse_unique_object(bytes: &[u8]) -> Result<Map<String, Value>, serde_json::Error> {
    serde_json::from_slice::<UniqueObject>(bytes).map(|object| object.0)
}

/// The public keys an agent trusts to sign bundles, and whether it accepts unsigned ones.
#[derive(Debug, Clone, Default)]
pub struct TrustedKeys {
    keys: Vec<PublicKey>,
    allow_unsigned: bool,
}

impl TrustedKeys {
    /// Trust bundles signed by any of `keys`; refuse unsigned bundles.
    pub fn new(keys: Vec<PublicKey>) -> Self {
        TrustedKeys {
            keys,
            allow_unsigned: false,
        }
    }

    /// Trust no key and accept unsigned bundles. Meant for development: the loaded
    /// `Bundle::signature` then says the bundle was not verified.
    pub fn allow_unsigned() -> Self {
        TrustedKeys {
            keys: Vec::new(),
            allow_unsigned: true,
        }
    }

    /// Also accept unsigned bundles (signed ones are still checked against the keys).
    pub fn and_allow_unsigned(mut self) -> Self {
        self.allow_unsigned = true;
        self
    }

    /// The trusted public keys.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// Whether an unsigned bundle is accepted.
    pub fn allows_unsigned(&self) -> bool {
        self.allow_unsigned
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    // RFC 8037 appendix A.1-A.3.
    pub(crate) const RFC8037_D: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
    const RFC8037_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    pub(crate) const RFC8037_THUMBPRINT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

    /// An EC P-256 key from `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
    const EC_PRIVATE_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggocq6jg9eBiuGsDU
FTw5Ct+7Jb1VMDB/VYEYUFp7cgehRANCAASGN0mrzsRWIzYUjxB45wqbZ9oDzwu1
afrdeyHIc05jZz8J9kZtLmsgGtrMw5YfrEOBdJslzsVbS8BxRHxQOSHc
-----END PRIVATE KEY-----
";
    /// Its public key (`openssl pkey -pubout`).
    const EC_PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEhjdJq87EViM2FI8QeOcKm2faA88L
tWn63XshyHNOY2c/CfZGbS5rIBrazMOWH6xDgXSbJc7FW0vAcUR8UDkh3A==
-----END PUBLIC KEY-----
";

    /// The RFC 8037 A.1 key (also used by the JWS tests).
    pub(crate) fn rfc8037_key() -> SigningKeyPair {
        let d: [u8; 32] = URL_SAFE_NO_PAD
            .decode(RFC8037_D)
            .unwrap()
            .try_into()
            .unwrap();
        SigningKeyPair::from_seed(&d)
    }

    fn der_of(pem_text: &str) -> Vec<u8> {
        pem::decode_vec(pem_text.as_bytes()).unwrap().1
    }

    // ---- RFC 8037 / RFC 7638 -------------------------------------------------

    #[test]
    fn rfc8037_public_key_and_thumbprint() {
        let key = rfc8037_key();
        let public = key.public_key();
        assert_eq!(public.x(), RFC8037_X);
        assert_eq!(public.kid(), RFC8037_THUMBPRINT);
        assert_eq!(jwk_thumbprint(public.as_bytes()), RFC8037_THUMBPRINT);
        assert_eq!(
            serde_json::to_string(&public.to_jwk()).unwrap(),
            format!(
                r#"{{"kty":"OKP","crv":"Ed25519","x":"{RFC8037_X}","kid":"{RFC8037_THUMBPRINT}"}}"#
            )
        );
    }

    #[test]
    fn thumbprint_is_sha256_of_jcs_of_required_members() {
        let public = rfc8037_key().public_key();
        let required = serde_json::json!({"x": public.x(), "kty": "OKP", "crv": "Ed25519"});
        let jcs = serde_json_canonicalizer::to_vec(&required).unwrap();
        assert_eq!(
            jcs,
            format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{RFC8037_X}"}}"#).as_bytes()
        );
        assert_eq!(URL_SAFE_NO_PAD.encode(Sha256::digest(&jcs)), public.kid());
    }

    #[test]
    fn rfc8037_a4_signature_vector() {
        // RFC 8037 A.4: JWS over "Example of Ed25519 signing" with {"alg":"EdDSA"}.
        let input = b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc";
        let expected = "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg";
        let key = rfc8037_key();
        let signature = key.sign(input);
        assert_eq!(URL_SAFE_NO_PAD.encode(signature), expected);
        assert!(key.public_key().verify_strict(input, &signature));
        assert!(!key.public_key().verify_strict(b"other", &signature));
    }

    // ---- private keys ---------------------------------------------------------

    #[test]
    fn generated_keys_are_distinct_and_round_trip() {
        let a = SigningKeyPair::generate().unwrap();
        let b = SigningKeyPair::generate().unwrap();
        assert_ne!(a.seed(), b.seed());
        let read = SigningKeyPair::from_pkcs8_pem(&a.to_pkcs8_pem()).unwrap();
        assert_eq!(read.seed(), a.seed());
        assert_eq!(read.public_key(), a.public_key());
    }

    #[test]
    fn written_private_key_is_pkcs8_v1_48_bytes() {
        let key = rfc8037_key();
        let pem_text = key.to_pkcs8_pem();
        assert!(pem_text.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(pem_text.ends_with("-----END PRIVATE KEY-----\n"));
        let der = der_of(&pem_text);
        assert_eq!(der.len(), 48);
        assert_eq!(
            der[..16],
            [
                0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
                0x04, 0x20
            ]
        );
        assert_eq!(&der[16..], key.seed());
        assert_eq!(der, key.to_pkcs8_der().as_slice());
    }

    #[test]
    fn reads_pkcs8_v2_with_public_key() {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        let key = SigningKeyPair::generate().unwrap();
        // ed25519-dalek's own encoder writes v2 (version 1 with the public key).
        let v2 = key.signing.to_pkcs8_pem(LineEnding::LF).unwrap();
        let der = der_of(&v2);
        assert_eq!(der[4], 1, "expected a v2 (version 1) structure");
        assert!(der.len() > 48);
        let read = SigningKeyPair::from_pkcs8_pem(&v2).unwrap();
        assert_eq!(read.seed(), key.seed());
    }

    #[test]
    fn rejects_pkcs8_v2_whose_public_key_does_not_match() {
        use ed25519_dalek::pkcs8::{EncodePrivateKey, PublicKeyBytes};
        let key = SigningKeyPair::generate().unwrap();
        let other = SigningKeyPair::generate().unwrap();
        let bytes = KeypairBytes {
            secret_key: *key.seed(),
            public_key: Some(PublicKeyBytes(*other.public_key().as_bytes())),
        };
        let pem_text = bytes.to_pkcs8_pem(LineEnding::LF).unwrap();
        let err = SigningKeyPair::from_pkcs8_pem(&pem_text).unwrap_err();
        assert!(matches!(err, KeyError::PublicKeyMismatch), "{err:?}");
    }

    #[test]
    fn reads_pem_with_crlf_and_surrounding_text() {
        let key = rfc8037_key();
        let text = format!(
            "Key for release signing\r\n{}\r\ntrailing notes\r\n",
            key.to_pkcs8_pem().replace('\n', "\r\n")
        );
        let read = SigningKeyPair::from_pkcs8_pem(&text).unwrap();
        assert_eq!(read.seed(), key.seed());
    }

    #[test]
    fn rejects_other_algorithms_with_a_clear_message() {
        let err = SigningKeyPair::from_pkcs8_pem(EC_PRIVATE_PEM).unwrap_err();
        assert!(
            matches!(&err, KeyError::NotEd25519PrivateKey { oid } if oid == "1.2.840.10045.2.1"),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with("not an Ed25519 PKCS#8 private key"),
            "{message}"
        );
        assert!(message.contains("EC"), "{message}");

        let err = PublicKey::from_spki_pem(EC_PUBLIC_PEM).unwrap_err();
        assert!(
            matches!(err, KeyError::NotEd25519PublicKey { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn private_key_reader_explains_wrong_files() {
        let public_pem = rfc8037_key().public_key().to_spki_pem();
        let err = SigningKeyPair::from_pkcs8_pem(&public_pem).unwrap_err();
        assert!(
            matches!(&err, KeyError::UnexpectedPem { found, .. } if found == "PUBLIC KEY"),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("signing needs the private key"),
            "{err}"
        );

        let encrypted =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n";
        let err = SigningKeyPair::from_pkcs8_pem(encrypted).unwrap_err();
        assert!(err.to_string().contains("decrypt it first"), "{err}");

        let openssh =
            "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
        let err = SigningKeyPair::from_pkcs8_pem(openssh).unwrap_err();
        assert!(err.to_string().contains("OpenSSH"), "{err}");

        let err = SigningKeyPair::from_pkcs8_pem("hello\n").unwrap_err();
        assert!(matches!(err, KeyError::NotPem { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "not a PEM file: expected a \"-----BEGIN PRIVATE KEY-----\" line"
        );
    }

    #[test]
    fn rejects_malformed_private_keys() {
        // Missing END line.
        let err =
            SigningKeyPair::from_pkcs8_pem("-----BEGIN PRIVATE KEY-----\nMC4CAQAw\n").unwrap_err();
        assert!(matches!(err, KeyError::MalformedPem(_)), "{err:?}");

        // Bad base64.
        let err = SigningKeyPair::from_pkcs8_pem(
            "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
        )
        .unwrap_err();
        assert!(matches!(err, KeyError::MalformedPem(_)), "{err:?}");

        // Truncated DER.
        let der = rfc8037_key().to_pkcs8_der();
        let err = SigningKeyPair::from_pkcs8_der(&der[..40]).unwrap_err();
        assert!(matches!(err, KeyError::MalformedPrivateKey(_)), "{err:?}");

        // Inner OCTET STRING of the wrong length (31-byte seed).
        let mut short = der[..47].to_vec();
        short[1] = 0x2d;
        short[13] = 0x21;
        short[15] = 0x1f;
        let err = SigningKeyPair::from_pkcs8_der(&short).unwrap_err();
        assert!(matches!(err, KeyError::MalformedPrivateKey(_)), "{err:?}");

        // Trailing garbage after the structure.
        let mut long = der.to_vec();
        long.push(0);
        assert!(SigningKeyPair::from_pkcs8_der(&long).is_err());
    }

    #[test]
    fn debug_does_not_reveal_the_private_key() {
        let key = rfc8037_key();
        let debug = format!("{key:?}");
        assert!(debug.contains(RFC8037_THUMBPRINT), "{debug}");
        assert!(!debug.contains(RFC8037_D), "{debug}");
        let seed_hex: String = key.seed().iter().map(|b| format!("{b:02x}")).collect();
        assert!(!debug.to_lowercase().contains(&seed_hex[..8]), "{debug}");
        assert!(!debug.contains(&format!("{:?}", key.seed())), "{debug}");
    }

    // ---- public keys ----------------------------------------------------------

    #[test]
    fn jwk_round_trip() {
        let public = SigningKeyPair::generate().unwrap().public_key();
        assert_eq!(PublicKey::from_jwk(&public.to_jwk()).unwrap(), public);
        assert_eq!(
            PublicKey::from_jwk_json(&public.to_jwk_json()).unwrap(),
            public
        );
        assert_eq!(PublicKey::parse(&public.to_jwk_json()).unwrap(), public);
        assert!(public.to_jwk_json().ends_with("}\n"));
    }

    #[test]
    fn jwk_without_kid_and_with_optional_members_is_accepted() {
        let text = format!(
            r#"{{"kty":"OKP","crv":"Ed25519","x":"{RFC8037_X}","alg":"EdDSA","use":"sig","key_ops":["verify"]}}"#
        );
        let public = PublicKey::from_jwk_json(&text).unwrap();
        assert_eq!(public.kid(), RFC8037_THUMBPRINT);
    }

    fn jwk_error(text: &str) -> KeyError {
        PublicKey::from_jwk_json(text).unwrap_err()
    }

    #[test]
    fn jwk_validation() {
        let x = RFC8037_X;
        let invalid = |text: String, needle: &str| {
            let err = jwk_error(&text);
            assert!(matches!(err, KeyError::InvalidJwk(_)), "{text}: {err:?}");
            assert!(err.to_string().contains(needle), "{text}: {err}");
        };
        invalid(
            format!(r#"{{"kty":"EC","crv":"Ed25519","x":"{x}"}}"#),
            "\"kty\"",
        );
        invalid(
            format!(r#"{{"crv":"Ed25519","x":"{x}"}}"#),
            "missing \"kty\"",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed448","x":"{x}"}}"#),
            "\"crv\"",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"X25519","x":"{x}"}}"#),
            "\"crv\"",
        );
        invalid(format!(r#"{{"kty":"OKP","x":"{x}"}}"#), "missing \"crv\"");
        invalid(r#"{"kty":"OKP","crv":"Ed25519"}"#.into(), "missing \"x\"");
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}="}}"#),
            "base64url",
        );
        invalid(
            r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#
                .into(),
            "base64url",
        );
        invalid(
            r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHUR"}"#
                .into(),
            "",
        );
        invalid(
            format!(
                r#"{{"kty":"OKP","crv":"Ed25519","x":"{}"}}"#,
                URL_SAFE_NO_PAD.encode([7u8; 31])
            ),
            "31 bytes",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","d":"{RFC8037_D}"}}"#),
            "private key",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","alg":"ES256"}}"#),
            "\"alg\"",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","use":"enc"}}"#),
            "\"use\"",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","kid":7}}"#),
            "must be a string",
        );
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":["{x}"]}}"#),
            "must be a string",
        );
        invalid(
            format!(
                r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","x":"{}"}}"#,
                URL_SAFE_NO_PAD.encode([9u8; 32])
            ),
            "duplicate member \"x\"",
        );
        invalid(format!(r#"["kty","OKP","{x}"]"#), "not a JSON object");
        invalid(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}"}} {{}}"#),
            "not a JSON object",
        );
        invalid("".into(), "not a JSON object");
        let err = PublicKey::from_jwk(&Value::from("OKP")).unwrap_err();
        assert!(matches!(err, KeyError::InvalidJwk(_)), "{err:?}");
    }

    #[test]
    fn jwk_with_a_wrong_kid_is_rejected() {
        let other = SigningKeyPair::generate().unwrap().public_key();
        let text = format!(
            r#"{{"kty":"OKP","crv":"Ed25519","x":"{RFC8037_X}","kid":"{}"}}"#,
            other.kid()
        );
        match jwk_error(&text) {
            KeyError::KidMismatch { kid, thumbprint } => {
                assert_eq!(kid, other.kid());
                assert_eq!(thumbprint, RFC8037_THUMBPRINT);
            }
            err => panic!("{err:?}"),
        }
        // A kid that is a thumbprint in another encoding is not accepted either.
        let text = format!(
            r#"{{"kty":"OKP","crv":"Ed25519","x":"{RFC8037_X}","kid":"{RFC8037_THUMBPRINT}="}}"#
        );
        assert!(matches!(jwk_error(&text), KeyError::KidMismatch { .. }));
    }

    #[test]
    fn weak_and_invalid_points_are_rejected() {
        // The identity point (0, 1): small order.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert!(matches!(
            PublicKey::from_bytes(&identity),
            Err(KeyError::WeakPublicKey)
        ));
        let jwk = format!(
            r#"{{"kty":"OKP","crv":"Ed25519","x":"{}"}}"#,
            URL_SAFE_NO_PAD.encode(identity)
        );
        assert!(matches!(jwk_error(&jwk), KeyError::WeakPublicKey));

        // y = 2 is not the y-coordinate of any curve point.
        let mut not_on_curve = [0u8; 32];
        not_on_curve[0] = 2;
        assert!(matches!(
            PublicKey::from_bytes(&not_on_curve),
            Err(KeyError::InvalidPoint(_))
        ));
    }

    #[test]
    fn non_canonical_encodings_are_rejected() {
        // Encodings with y >= p (there are 19 y values, two sign bits each). Whatever
        // the curve library does with them, from_bytes must not accept any: one key
        // would otherwise have several thumbprints.
        for y_minus_p in 0u8..19 {
            for sign in [0u8, 0x80] {
                let mut bytes = [0xffu8; 32];
                bytes[0] = 0xed + y_minus_p;
                bytes[31] = 0x7f | sign;
                // 0xed + 18 = 0xff: all fit in the low byte.
                assert!(PublicKey::from_bytes(&bytes).is_err(), "{bytes:02x?}");
            }
        }
        // y = p + 3 decodes (to the point with y = 3) in ed25519-dalek and is not of
        // small order: only the canonicality check stands in the way.
        let mut bytes = [0xffu8; 32];
        bytes[0] = 0xed + 3;
        bytes[31] = 0x7f;
        assert!(VerifyingKey::from_bytes(&bytes).is_ok_and(|k| !k.is_weak()));
        assert!(matches!(
            PublicKey::from_bytes(&bytes),
            Err(KeyError::InvalidPoint(_))
        ));
        // x = 0 with the sign bit set is also non-canonical, for y = 1 (identity).
        let mut bytes = [0u8; 32];
        bytes[0] = 1;
        bytes[31] = 0x80;
        assert!(PublicKey::from_bytes(&bytes).is_err());
    }

    #[test]
    fn spki_pem_round_trip() {
        let public = rfc8037_key().public_key();
        let pem_text = public.to_spki_pem();
        assert!(pem_text.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert!(pem_text.ends_with("-----END PUBLIC KEY-----\n"));
        assert_eq!(public.to_spki_der().len(), 44);
        assert_eq!(&public.to_spki_der()[12..], public.as_bytes());
        assert_eq!(PublicKey::from_spki_pem(&pem_text).unwrap(), public);
        assert_eq!(PublicKey::parse(&pem_text).unwrap(), public);
        assert_eq!(
            PublicKey::from_spki_der(&public.to_spki_der()).unwrap(),
            public
        );
    }

    #[test]
    fn public_key_reader_explains_wrong_files() {
        let private_pem = rfc8037_key().to_pkcs8_pem();
        let err = PublicKey::from_spki_pem(&private_pem).unwrap_err();
        assert!(
            matches!(&err, KeyError::UnexpectedPem { found, .. } if found == "PRIVATE KEY"),
            "{err:?}"
        );
        assert!(err.to_string().contains("never distribute it"), "{err}");
        let err = PublicKey::parse("garbage").unwrap_err();
        assert!(matches!(err, KeyError::NotPem { .. }), "{err:?}");
    }

    // ---- key files ------------------------------------------------------------

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_key_files() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKeyPair::generate().unwrap();
        let prefix = dir.path().join("release-1.2");
        let written = write_key_files(&prefix, &key, false, false).unwrap();
        assert_eq!(
            written,
            vec![
                dir.path().join("release-1.2.key"),
                dir.path().join("release-1.2.jwk.json")
            ]
        );
        assert_eq!(
            dir_entries(dir.path()),
            ["release-1.2.jwk.json", "release-1.2.key"]
        );
        let read = SigningKeyPair::read_pem_file(&written[0]).unwrap();
        assert_eq!(read.seed(), key.seed());
        assert_eq!(PublicKey::read_file(&written[1]).unwrap(), key.public_key());
        #[cfg(unix)]
        assert_eq!(mode(&written[0]), 0o600);
    }

    #[test]
    fn writes_pem_public_key_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKeyPair::generate().unwrap();
        let written = write_key_files(&dir.path().join("k"), &key, true, false).unwrap();
        assert_eq!(written.len(), 3);
        assert_eq!(written[2], dir.path().join("k.pub.pem"));
        assert_eq!(PublicKey::read_file(&written[2]).unwrap(), key.public_key());
        assert_eq!(
            fs::read_to_string(&written[2]).unwrap(),
            key.public_key().to_spki_pem()
        );
    }

    #[test]
    fn refuses_to_overwrite_before_writing_anything() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("k");
        fs::write(dir.path().join("k.pub.pem"), "keep me").unwrap();
        let key = SigningKeyPair::generate().unwrap();
        let err = write_key_files(&prefix, &key, true, false).unwrap_err();
        assert!(
            matches!(&err, KeyError::FileExists(p) if *p == dir.path().join("k.pub.pem")),
            "{err:?}"
        );
        assert!(err.to_string().contains("--force"), "{err}");
        // Nothing written, no temporary files left behind.
        assert_eq!(dir_entries(dir.path()), ["k.pub.pem"]);
        assert_eq!(
            fs::read_to_string(dir.path().join("k.pub.pem")).unwrap(),
            "keep me"
        );

        // Without --pem the existing .pub.pem is not a target.
        write_key_files(&prefix, &key, false, false).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("k.pub.pem")).unwrap(),
            "keep me"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_counts_as_existing() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("k.key")).unwrap();
        let key = SigningKeyPair::generate().unwrap();
        let err = write_key_files(&dir.path().join("k"), &key, false, false).unwrap_err();
        assert!(matches!(err, KeyError::FileExists(_)), "{err:?}");
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn force_replaces_existing_files() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("k");
        let old = SigningKeyPair::generate().unwrap();
        let new = SigningKeyPair::generate().unwrap();
        write_key_files(&prefix, &old, true, false).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Even a world-readable old key file ends up 0600.
            fs::set_permissions(dir.path().join("k.key"), fs::Permissions::from_mode(0o644))
                .unwrap();
        }
        assert!(matches!(
            write_key_files(&prefix, &new, true, false),
            Err(KeyError::FileExists(_))
        ));
        let written = write_key_files(&prefix, &new, true, true).unwrap();
        assert_eq!(
            SigningKeyPair::read_pem_file(&written[0]).unwrap().seed(),
            new.seed()
        );
        assert_eq!(PublicKey::read_file(&written[1]).unwrap(), new.public_key());
        assert_eq!(PublicKey::read_file(&written[2]).unwrap(), new.public_key());
        #[cfg(unix)]
        assert_eq!(mode(&written[0]), 0o600);
        assert_eq!(
            dir_entries(dir.path()),
            ["k.jwk.json", "k.key", "k.pub.pem"]
        );
    }

    #[test]
    fn missing_directory_is_an_io_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("absent").join("k");
        let key = SigningKeyPair::generate().unwrap();
        let err = write_key_files(&prefix, &key, false, false).unwrap_err();
        assert!(matches!(&err, KeyError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains("k.key"), "{err}");
        assert_eq!(dir_entries(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn prefix_must_name_a_file() {
        let key = SigningKeyPair::generate().unwrap();
        for prefix in ["", "keys/", "/", "..", "keys/.."] {
            let err = write_key_files(Path::new(prefix), &key, false, false).unwrap_err();
            assert!(
                matches!(err, KeyError::InvalidPrefix(_)),
                "{prefix:?}: {err:?}"
            );
        }
        assert_eq!(
            with_suffix(Path::new("release"), ".key").unwrap(),
            PathBuf::from("release.key")
        );
    }

    #[test]
    fn read_errors_name_the_file() {
        let err = SigningKeyPair::read_pem_file(Path::new("/nonexistent/dir/k.key")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read /nonexistent/dir/k.key"),
            "{err}"
        );
    }

    #[test]
    fn a_jwk_set_holds_every_key_of_a_rotation() {
        let old = SigningKeyPair::from_seed(&[1; 32]).public_key();
        let new = SigningKeyPair::from_seed(&[2; 32]).public_key();
        let set = serde_json::json!({"keys": [old.to_jwk(), new.to_jwk(), old.to_jwk()]});
        let keys = parse_key_set(&set.to_string()).unwrap();
        let kids: Vec<&str> = keys.iter().map(|k| k.kid()).collect();
        assert_eq!(kids, [old.kid(), new.kid()]);
        // One key alone, in either form, is a set of one.
        assert_eq!(parse_key_set(&old.to_jwk_json()).unwrap().len(), 1);
        assert_eq!(parse_key_set(&old.to_spki_pem()).unwrap().len(), 1);
    }

    #[test]
    fn a_jwk_set_with_a_bad_key_or_no_key_is_refused() {
        let good = SigningKeyPair::from_seed(&[1; 32]).public_key().to_jwk();
        for (text, why) in [
            (r#"{"keys": []}"#.to_string(), "empty"),
            (r#"{"keys": {}}"#.to_string(), "array"),
            (
                serde_json::json!({"keys": [good, {"kty": "RSA"}]}).to_string(),
                "key 1 of the set",
            ),
            (r#"{"keys": [], "keys": []}"#.to_string(), "JSON"),
        ] {
            let err = parse_key_set(&text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
