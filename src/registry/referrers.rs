//! A bundle's signature as an OCI referrer, so registries and other tools see it.
//!
//! A bundle carries its own signatures (`manifest.json`'s `signatures`, a detached-payload
//! JWS over the manifest's JCS bytes: see [`crate::bundle::sign`]) and stays
//! self-contained: that in-bundle signature is what [`crate::agent::Bundle::open`]
//! checks, and it alone decides whether a bundle is trusted. But a registry, `oras
//! discover`, or a policy engine in front of a fleet cannot open a `.tar.gz`; what they
//! read is the OCI 1.1 *referrers* graph: artifacts whose `subject` names another
//! manifest. So [`push_signature`] also publishes the same detached JWS as such an
//! artifact:
//!
//! - an image manifest with `artifactType` [`SIGNATURE_ARTIFACT_TYPE`], the empty config,
//!   and one layer of media type [`JWS_MEDIA_TYPE`] (`application/jose+json`, RFC 7515's
//!   JSON serialization): `{"signatures":[{"protected","signature"}, ...]}` with the
//!   payload detached — the bundle's own signatures, byte for byte the same values;
//! - `subject`: the bundle's artifact manifest (digest and size);
//! - annotations: the bundle name, version and `created` (from `SOURCE_DATE_EPOCH`), so
//!   the same bundle always gives the same referrer manifest, and digest.
//!
//! The distribution spec (1.1, "Pushing Manifests with Subject", "Listing Referrers")
//! lets a registry list referrers itself (`GET /v2/<name>/referrers/<digest>`); one that
//! does not — Debian's Distribution 2.8, many mirrors — answers that endpoint with 404,
//! and clients then keep the list themselves under the *referrers tag schema*: an image
//! index tagged `sha256-<hex of the subject digest>`. [`push_signature`] pushes the
//! referrer, asks the registry for the subject's referrers, and only when the registry
//! does not list it adds its descriptor to that fallback index (never a second time).
//!
//! [`verify_signature`] (`pull --require-referrer-signature`) finds the referrers of a
//! pulled bundle's manifest the same two ways, through the pull side's bounded and timed
//! [`crate::registry::distribution::Session`] (which also decides where credentials may go), and accepts when one of them is a
//! signature artifact for *this* subject whose JWS a trusted key signed over *this*
//! bundle's manifest — proof that the signature is published where other tools look,
//! not a second source of trust. Everything the registry lists is untrusted: at most
//! [`MAX_SIGNATURE_REFERRERS`] descriptors are looked at, each manifest is read within
//! [`registry::MAX_OCI_MANIFEST_BYTES`] and must have the digest it was asked for by, and
//! each JWS within [`MAX_REFERRER_JWS_BYTES`], checked against its declared size and digest; the
//! whole operation has the overall deadline of [`registry::Timeouts`].

use crate::bundle::archive::ReadLimits;
use crate::bundle::first_pass;
use crate::bundle::sign;
use crate::crypto::jws::{self, JwsError, JwsSignature};
use crate::crypto::keys::TrustedKeys;
use crate::finding::{Code, Finding, Location};
use crate::registry::distribution::Session;
use crate::registry::{self, ArtifactRef, BundleInfo, Layer, Options, MANIFEST_MEDIA_TYPE};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The `artifactType` of a bundle's signature referrer.
pub const SIGNATURE_ARTIFACT_TYPE: &str = "application/vnd.skillbundle.signature.v1";
/// The media type of its one layer: a JWS in the JSON serialization (RFC 7515, section
/// 9.2.1), payload detached.
pub const JWS_MEDIA_TYPE: &str = "application/jose+json";
/// The OCI image index media type (the referrers list, and the fallback tag's content).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The largest JWS layer read: a few hundred bytes per signature, 64 KiB is hundreds of
/// keys.
pub const MAX_REFERRER_JWS_BYTES: u64 = 64 * 1024;
/// At most this many listed signature referrers are examined on a pull.
pub const MAX_SIGNATURE_REFERRERS: usize = 16;

/// The detached JWS, as the referrer's layer holds it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetachedJws {
    signatures: Vec<JwsSignature>,
}

/// A signature referrer pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedReferrer {
    /// The referrer manifest's digest.
    pub digest: String,
    /// The referrers tag schema's tag (`sha256-<hex>`), when the registry did not list
    /// the referrer itself and this push added it to the fallback index; `None` when the
    /// registry lists it (through its referrers API, or an index written before).
    pub fallback_tag: Option<String>,
}

/// A signature referrer found and verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedReferrer {
    /// The referrer manifest's digest.
    pub digest: String,
    /// The `kid`s of the trusted keys whose signatures verified.
    pub by: Vec<String>,
}

/// The referrers tag schema's tag for a subject digest: `sha256:abc…` → `sha256-abc…`.
pub fn fallback_tag(subject_digest: &str) -> String {
    subject_digest.replace(':', "-")
}

/// The layer bytes: the detached JWS of `signatures`.
pub fn jws_document(signatures: &[JwsSignature]) -> Vec<u8> {
    serde_json::to_vec(&DetachedJws {
        signatures: signatures.to_vec(),
    })
    .expect("signatures always serialize")
}

/// The referrer manifest for a JWS layer whose subject is the manifest `subject` (its
/// bytes). A fixed member order: the same inputs give the same digest.
pub fn signature_manifest(jws: &[u8], subject: &[u8], info: &BundleInfo) -> Vec<u8> {
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": SIGNATURE_ARTIFACT_TYPE,
        "config": {
            "mediaType": registry::EMPTY_CONFIG_MEDIA_TYPE,
            "digest": registry::sha256(registry::EMPTY_CONFIG),
            "size": registry::EMPTY_CONFIG.len(),
            "data": "e30=",
        },
        "layers": [{
            "mediaType": JWS_MEDIA_TYPE,
            "digest": registry::sha256(jws),
            "size": jws.len(),
        }],
        "subject": {
            "mediaType": MANIFEST_MEDIA_TYPE,
            "digest": registry::sha256(subject),
            "size": subject.len(),
        },
        "annotations": {
            registry::ANNOTATION_BUNDLE_NAME: info.name,
            "org.opencontainers.image.created": registry::created(),
            "org.opencontainers.image.version": info.version,
        },
    });
    serde_json::to_vec(&manifest).expect("a JSON value always serializes")
}

/// Check that manifest bytes are a signature referrer of the manifest `subject_digest`,
/// and return its JWS layer. Either artifact form is accepted
/// ([`registry::check_artifact_type`]). The messages never echo what the registry sent.
pub fn check_signature_manifest(
    bytes: &[u8],
    subject_digest: &str,
) -> Result<Layer, NotASignature> {
    let manifest = crate::wire::json::parse(bytes).map_err(|_| NotASignature::NotIJson)?;
    let text = |pointer: &str| manifest.pointer(pointer).and_then(Value::as_str);
    if manifest.get("schemaVersion").and_then(Value::as_u64) != Some(2)
        || (manifest.get("mediaType").is_some() && text("/mediaType") != Some(MANIFEST_MEDIA_TYPE))
    {
        return Err(NotASignature::NotImageManifest);
    }
    registry::check_artifact_type(&manifest, SIGNATURE_ARTIFACT_TYPE)
        .map_err(NotASignature::ArtifactType)?;
    if text("/subject/digest") != Some(subject_digest) {
        return Err(NotASignature::OtherSubject);
    }
    let Some(Value::Array(layers)) = manifest.get("layers") else {
        return Err(NotASignature::NoLayers);
    };
    let [layer] = layers.as_slice() else {
        return Err(NotASignature::NotOneLayer);
    };
    if layer.get("mediaType").and_then(Value::as_str) != Some(JWS_MEDIA_TYPE) {
        return Err(NotASignature::LayerMediaType);
    }
    let digest = layer.get("digest").and_then(Value::as_str).unwrap_or("");
    if !registry::is_sha256_digest(digest) {
        return Err(NotASignature::LayerDigest);
    }
    match layer.get("size").and_then(Value::as_u64) {
        Some(size) if size <= MAX_REFERRER_JWS_BYTES => Ok(Layer {
            digest: digest.to_string(),
            size,
        }),
        Some(_) => Err(NotASignature::LayerTooLarge),
        None => Err(NotASignature::LayerSize),
    }
}

/// Why [`check_signature_manifest`] refused a manifest (words of our own, nothing the
/// registry sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotASignature {
    /// The bytes are not I-JSON.
    #[error("its manifest is not valid I-JSON")]
    NotIJson,
    /// Not schema version 2, or another `mediaType`.
    #[error("it is not an OCI image manifest")]
    NotImageManifest,
    /// Not of the signature artifact type.
    #[error("{0}")]
    ArtifactType(registry::NotOfType),
    /// Its subject is another manifest.
    #[error("its subject is not the bundle's manifest")]
    OtherSubject,
    /// No `layers` array.
    #[error("it has no layers array")]
    NoLayers,
    /// Not exactly one layer.
    #[error("it does not have exactly one layer")]
    NotOneLayer,
    /// The layer is not a JWS.
    #[error("its layer's media type is not {JWS_MEDIA_TYPE}")]
    LayerMediaType,
    /// The layer's digest is not a sha256 digest.
    #[error("its layer's digest is not sha256: and 64 lowercase hex digits")]
    LayerDigest,
    /// The layer is larger than [`MAX_REFERRER_JWS_BYTES`].
    #[error("its layer is larger than {MAX_REFERRER_JWS_BYTES} bytes")]
    LayerTooLarge,
    /// The layer's size is not a non-negative integer.
    #[error("its layer's size is not a non-negative integer")]
    LayerSize,
}

/// Why one listed referrer does not vouch for the bundle: the registry lied, or it lists
/// another party's signature (words of our own, nothing the registry sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unqualified {
    /// The listed descriptor's digest is malformed.
    #[error("a listed descriptor's digest is not sha256: and 64 lowercase hex digits")]
    DescriptorDigest,
    /// The listed manifest is not in the registry.
    #[error("a listed referrer's manifest is not in the registry")]
    ManifestMissing,
    /// The manifest's bytes do not have the digest listed.
    #[error("a listed referrer's manifest does not have the digest it is listed under")]
    ManifestDigest,
    /// The manifest is not a signature referrer of this bundle.
    #[error("a listed referrer is not a signature of this bundle: {0}")]
    NotASignature(NotASignature),
    /// The JWS blob is missing or not what its descriptor says.
    #[error("a referrer's JWS is missing or does not have its declared size and digest")]
    JwsMissing,
    /// The JWS blob is not a detached-payload JWS.
    #[error("a referrer's JWS is not a JSON-serialized JWS with detached payload")]
    JwsMalformed,
    /// The JWS holds no signature.
    #[error("a referrer's JWS holds no signature")]
    NoSignature,
    /// No signature names a trusted key.
    #[error("a referrer's JWS is signed by no trusted key")]
    Untrusted,
    /// A signature names a trusted key and does not verify.
    #[error(
        "a referrer's JWS names a trusted key but does not verify over this bundle's manifest"
    )]
    DoesNotVerify,
}

/// The bundle manifest's signatures and their detached payload.
fn signed_manifest(bundle_bytes: &[u8]) -> Result<(Vec<JwsSignature>, Vec<u8>), Finding> {
    let manifest =
        first_pass::read_manifest(bundle_bytes, ReadLimits::default()).map_err(|mut f| {
            f.truncate(1);
            f.pop().unwrap_or_else(|| {
                Finding::new(
                    Code::BundleInvalid,
                    "the bundle cannot be read",
                    Location::default(),
                )
            })
        })?;
    let signatures: Vec<JwsSignature> = manifest
        .get(sign::SIGNATURES)
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|_| {
            Finding::new(
                Code::SignatureInvalid,
                "the bundle manifest's signatures are not a list of JWS signatures",
                Location::file("manifest.json").with_pointer("/signatures"),
            )
        })?
        .unwrap_or_default();
    Ok((signatures, sign::into_signing_payload(manifest)))
}

/// Publish the signatures of a bundle already pushed to `target` (by
/// [`registry::push_with_release`] with the same `info` and `release`) as a referrer of
/// its artifact manifest. An unsigned bundle has nothing to publish: `Ok(None)`.
pub async fn push_signature(
    bundle_bytes: &[u8],
    info: &BundleInfo,
    release: Option<&[u8]>,
    target: &ArtifactRef,
    options: &Options,
) -> Result<Option<PushedReferrer>, Finding> {
    registry::within_deadline(
        options,
        target.as_str(),
        push_signature_within(bundle_bytes, info, release, target, options),
    )
    .await
}

async fn push_signature_within(
    bundle_bytes: &[u8],
    info: &BundleInfo,
    release: Option<&[u8]>,
    target: &ArtifactRef,
    options: &Options,
) -> Result<Option<PushedReferrer>, Finding> {
    let at = target.as_str();
    let (signatures, _) = signed_manifest(bundle_bytes)?;
    if signatures.is_empty() {
        return Ok(None);
    }
    let jws = jws_document(&signatures);
    // The manifest push wrote: the subject (a new release statement makes a new one).
    let subject = registry::manifest_with_release(bundle_bytes, info, release);
    let subject_digest = registry::sha256(&subject);
    let manifest = signature_manifest(&jws, &subject, info);
    let digest = registry::sha256(&manifest);
    let session = registry::Session::new(target, options).await?;
    session.upload_blob(target, registry::EMPTY_CONFIG).await?;
    session.upload_blob(target, &jws).await?;
    session
        .put_manifest(
            &target.at_digest(&digest),
            manifest.clone(),
            MANIFEST_MEDIA_TYPE,
            at,
        )
        .await?;

    // Listed by the registry already (its referrers API, or a fallback index that has
    // it from an earlier push)?
    let listed = session
        .referrers(
            &target.at_digest(&subject_digest),
            SIGNATURE_ARTIFACT_TYPE,
            at,
        )
        .await?;
    if listed.iter().any(|d| d["digest"] == digest.as_str()) {
        return Ok(Some(PushedReferrer {
            digest,
            fallback_tag: None,
        }));
    }

    // The referrers tag schema: add the descriptor to the index under the fallback tag.
    let tag = fallback_tag(&subject_digest);
    let tagged = target.at_tag(&tag);
    let mut index = match session.get_manifest(&tagged, INDEX_MEDIA_TYPE, at).await? {
        None => json!({"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": []}),
        Some(bytes) => {
            let index = crate::wire::json::parse(&bytes).ok().filter(is_index);
            index.ok_or_else(|| {
                Finding::new(
                    Code::ArtifactInvalid,
                    format!("the registry's tag {tag} (the referrers tag schema's list for this bundle) is not an image index; it was left as it is and the signature referrer is not listed"),
                    Location::file(at),
                )
            })?
        }
    };
    let descriptor = json!({
        "mediaType": MANIFEST_MEDIA_TYPE,
        "digest": digest,
        "size": manifest.len(),
        "artifactType": SIGNATURE_ARTIFACT_TYPE,
        "annotations": serde_json::from_slice::<Value>(&manifest).expect("we wrote it")["annotations"],
    });
    let manifests = index["manifests"]
        .as_array_mut()
        .expect("is_index checked the manifests array");
    manifests.retain(|d| d["digest"] != digest.as_str());
    manifests.push(descriptor);
    let bytes = serde_json::to_vec(&index).expect("a JSON value always serializes");
    session
        .put_manifest(&tagged, bytes, INDEX_MEDIA_TYPE, at)
        .await?;
    Ok(Some(PushedReferrer {
        digest,
        fallback_tag: Some(tag),
    }))
}

fn is_index(value: &Value) -> bool {
    value.get("schemaVersion").and_then(Value::as_u64) == Some(2)
        && value
            .get("mediaType")
            .is_none_or(|t| t.as_str() == Some(INDEX_MEDIA_TYPE))
        && value.get("manifests").is_some_and(Value::is_array)
}

/// Find a signature referrer of the pulled bundle's artifact manifest
/// (`manifest_digest`) that a trusted key signed over this bundle's manifest. The
/// bundle bytes must already have been verified ([`crate::agent::Bundle::open`]).
///
/// Errors: [`Code::ReferrerSignatureMissing`] when no listed referrer qualifies (the
/// message says whether none was listed or why the last one looked at failed); the
/// registry's own errors as [`registry`] reports them.
pub async fn verify_signature(
    reference: &ArtifactRef,
    manifest_digest: &str,
    bundle_bytes: &[u8],
    trust: &TrustedKeys,
    options: &Options,
) -> Result<VerifiedReferrer, Finding> {
    registry::within_deadline(
        options,
        reference.as_str(),
        verify_signature_within(reference, manifest_digest, bundle_bytes, trust, options),
    )
    .await
}

async fn verify_signature_within(
    reference: &ArtifactRef,
    manifest_digest: &str,
    bundle_bytes: &[u8],
    trust: &TrustedKeys,
    options: &Options,
) -> Result<VerifiedReferrer, Finding> {
    let at = reference.as_str();
    let missing = |why: String| {
        Finding::new(Code::ReferrerSignatureMissing, why, Location::file(at)).with_help(
            "publish the bundle with `skillbundle push`, which pushes its signature as a referrer, or leave out --require-referrer-signature",
        )
    };
    let (_, payload) = signed_manifest(bundle_bytes)?;
    let mut session = registry::read_session(reference, options)?;
    let cap = registry::MAX_OCI_MANIFEST_BYTES;
    // The referrers API, or the referrers tag schema where the registry has none.
    let index = match session
        .referrers(manifest_digest, SIGNATURE_ARTIFACT_TYPE, cap)
        .await?
    {
        Some(list) => Some(list),
        None => match session
            .manifest(&fallback_tag(manifest_digest), &[INDEX_MEDIA_TYPE], cap)
            .await
        {
            Ok((bytes, _)) => Some(bytes),
            Err(f) if f.code == Code::ArtifactNotFound => None,
            Err(f) => return Err(f),
        },
    };
    let listed: Vec<Value> = index
        .and_then(|bytes| crate::wire::json::parse(&bytes).ok())
        .filter(is_index)
        .and_then(|index| index["manifests"].as_array().cloned())
        .unwrap_or_default();
    let candidates: Vec<&Value> = listed
        .iter()
        .filter(|d| d["artifactType"] == SIGNATURE_ARTIFACT_TYPE)
        .take(MAX_SIGNATURE_REFERRERS)
        .collect();
    if candidates.is_empty() {
        return Err(missing(format!(
            "the registry lists no signature referrer ({SIGNATURE_ARTIFACT_TYPE}) of the bundle's manifest, neither through the referrers API nor under the tag {}",
            fallback_tag(manifest_digest)
        )));
    }
    let mut last: Option<Unqualified> = None;
    for descriptor in &candidates {
        match check_candidate(&mut session, descriptor, manifest_digest, &payload, trust).await? {
            Ok(verified) => return Ok(verified),
            Err(why) => last = Some(why),
        }
    }
    let last = last.map(|why| why.to_string()).unwrap_or_default();
    Err(missing(format!(
        "{} signature referrer(s) of the bundle's manifest are listed, and none is signed by a trusted key over this bundle: {last}",
        candidates.len()
    )))
}

/// One listed referrer: `Ok(Err(why))` when it does not qualify (the registry lied or
/// lists another party's signature), `Err` when the registry itself failed.
async fn check_candidate(
    session: &mut Session,
    descriptor: &Value,
    subject_digest: &str,
    payload: &[u8],
    trust: &TrustedKeys,
) -> Result<Result<VerifiedReferrer, Unqualified>, Finding> {
    let digest = descriptor["digest"].as_str().unwrap_or("");
    if !registry::is_sha256_digest(digest) {
        return Ok(Err(Unqualified::DescriptorDigest));
    }
    let bytes = match session
        .manifest(
            digest,
            &[MANIFEST_MEDIA_TYPE],
            registry::MAX_OCI_MANIFEST_BYTES,
        )
        .await
    {
        Ok((bytes, _)) => bytes,
        Err(f) if f.code == Code::ArtifactNotFound => return Ok(Err(Unqualified::ManifestMissing)),
        Err(f) => return Err(f),
    };
    if registry::sha256(&bytes) != digest {
        return Ok(Err(Unqualified::ManifestDigest));
    }
    let layer = match check_signature_manifest(&bytes, subject_digest) {
        Ok(layer) => layer,
        Err(why) => return Ok(Err(Unqualified::NotASignature(why))),
    };
    let mut jws = Vec::new();
    match session.blob(&layer.digest, layer.size, &mut jws).await {
        Ok(()) => {}
        Err(f) if matches!(f.code, Code::DigestMismatch | Code::ArtifactNotFound) => {
            return Ok(Err(Unqualified::JwsMissing))
        }
        Err(f) => return Err(f),
    }
    let Some(signatures) = crate::wire::json::parse(&jws)
        .ok()
        .and_then(|v| serde_json::from_value::<DetachedJws>(v).ok())
        .map(|doc| doc.signatures)
    else {
        return Ok(Err(Unqualified::JwsMalformed));
    };
    Ok(
        match jws::verify_signatures(payload, &signatures, trust.keys()) {
            Ok(by) => Ok(VerifiedReferrer {
                digest: digest.to_string(),
                by: by.into_iter().map(|k| k.0).collect(),
            }),
            Err(JwsError::NoSignatures) => Err(Unqualified::NoSignature),
            Err(JwsError::UntrustedKey { .. }) => Err(Unqualified::Untrusted),
            Err(JwsError::SignatureInvalid { .. }) => Err(Unqualified::DoesNotVerify),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> BundleInfo {
        BundleInfo {
            name: "n".into(),
            version: "1.0.0".into(),
            skills: 1,
        }
    }

    #[test]
    fn the_referrer_we_write_passes_our_own_check_and_is_reproducible() {
        let subject = registry::manifest_for(b"bundle", &info());
        let jws = br#"{"signatures":[]}"#;
        let manifest = signature_manifest(jws, &subject, &info());
        assert_eq!(manifest, signature_manifest(jws, &subject, &info()));
        let layer = check_signature_manifest(&manifest, &registry::sha256(&subject)).unwrap();
        assert_eq!(layer.digest, registry::sha256(jws));
        // Another subject: not a signature of this bundle.
        let other = registry::sha256(b"other");
        assert_eq!(
            check_signature_manifest(&manifest, &other),
            Err(NotASignature::OtherSubject)
        );
    }

    #[test]
    fn foreign_or_oversized_referrers_are_refused() {
        let subject = registry::manifest_for(b"bundle", &info());
        let d = registry::sha256(&subject);
        let good: Value =
            serde_json::from_slice(&signature_manifest(b"{}", &subject, &info())).unwrap();
        let edit = |pointer: &str, to: Value| {
            let mut m = good.clone();
            *m.pointer_mut(pointer).unwrap() = to;
            serde_json::to_vec(&m).unwrap()
        };
        for bytes in [
            edit(
                "/artifactType",
                json!("application/vnd.cncf.notary.signature"),
            ),
            edit("/layers/0/mediaType", json!("application/octet-stream")),
            edit("/layers/0/size", json!(MAX_REFERRER_JWS_BYTES + 1)),
            edit("/layers/0/digest", json!("sha256:00")),
            edit("/layers", json!([])),
            edit("/mediaType", json!(INDEX_MEDIA_TYPE)),
        ] {
            assert!(check_signature_manifest(&bytes, &d).is_err());
        }
        // The OCI 1.0 form: the type as config.mediaType.
        let mut v10 = good.clone();
        v10.as_object_mut().unwrap().remove("artifactType");
        v10["config"]["mediaType"] = json!(SIGNATURE_ARTIFACT_TYPE);
        assert!(check_signature_manifest(&serde_json::to_vec(&v10).unwrap(), &d).is_ok());
    }

    #[test]
    fn the_fallback_tag_is_the_digest_with_a_dash() {
        assert_eq!(fallback_tag("sha256:ab12"), "sha256-ab12");
    }
}
