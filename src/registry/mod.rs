//! Registry distribution: a bundle as an OCI 1.1 artifact, pushed and pulled.
//!
//! Fleets already run OCI registries (CNCF Distribution, Harbor, Zot, every cloud's),
//! with mirrors, pull-through caches, access control and retention; Helm charts and Wasm
//! modules ship that way. So a bundle is published there rather than on a server of our
//! own, following the OCI 1.1 artifact guidance:
//!
//! - an image manifest with `artifactType` [`ARTIFACT_TYPE`] and the empty config
//!   (`{}`, [`EMPTY_CONFIG_MEDIA_TYPE`]), which Debian's Distribution 2.8 accepts once the
//!   `{}` blob is in the repository — so push uploads it first;
//! - exactly one layer, the `.tar.gz` byte for byte, media type [`LAYER_MEDIA_TYPE`];
//! - annotations: `org.opencontainers.image.title`, `.version`, `.created` (from
//!   `SOURCE_DATE_EPOCH`, so the manifest — and its digest — is the same on every push of
//!   the same bundle), the bundle name and the skill count.
//!
//! Pulling accepts the same artifact in the OCI 1.0 form too, as the ORAS clients push it
//! (no `artifactType`; the type as `config.mediaType`, which the distribution spec says
//! stands in for it: [`check_artifact_type`]).
//!
//! Pulling trusts nothing the registry says: the manifest's media types, artifact type and
//! sizes are checked against the bundle limits *before* the layer is downloaded, the
//! layer's size and SHA-256 are checked while it streams (a redirect to another host for
//! the blob, which the distribution spec allows, is followed — the digest check does not
//! care where the bytes came from), and the caller then opens the bytes with
//! [`crate::agent::Bundle::open`]. Registries let tags move silently; refusing to move
//! a release-version tag is done here, by the client.
//!
//! The client is the ORAS project's `oci-client` (async, on tokio). Every function has an
//! async form for agents that already run tokio, and [`block_on`] for the others.
//! Credentials come from the standard files ([`crate::registry::credentials`]).

pub mod credentials;
pub mod distribution;
pub mod referrers;

use crate::finding::{Code, Finding, Location};
pub use crate::registry::distribution::Timeouts;
use credentials::Credentials;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::future::Future;
use std::io::{Read as _, Seek as _};
use std::time::Duration;

/// The scheme that marks a registry reference where a bundle path is expected.
pub const SCHEME: &str = "oci://";
/// The OCI 1.1 `artifactType` of a skillbundle bundle.
pub const ARTIFACT_TYPE: &str = "application/vnd.skillbundle.bundle.v1";
/// The media type of the one layer: the bundle `.tar.gz`, byte for byte.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.skillbundle.bundle.v1.tar+gzip";
/// The OCI image manifest media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI 1.1 empty descriptor's media type.
pub const EMPTY_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The empty descriptor's content.
pub const EMPTY_CONFIG: &[u8] = b"{}";
/// Annotation key of our own: the bundle's name.
pub const ANNOTATION_BUNDLE_NAME: &str = "io.skillbundle.bundle.name";
/// Annotation key of our own: the number of skills in the bundle.
pub const ANNOTATION_SKILL_COUNT: &str = "io.skillbundle.bundle.skills";
const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";
const ANNOTATION_VERSION: &str = "org.opencontainers.image.version";
const ANNOTATION_CREATED: &str = "org.opencontainers.image.created";
/// The largest manifest read: Distribution's own limit for a manifest PUT.
pub const MAX_OCI_MANIFEST_BYTES: usize = 4 * 1024 * 1024;

/// How to talk to registries.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Use `http://` instead of `https://` (a registry on localhost, a test).
    pub plain_http: bool,
    /// Credentials to present; `None` looks them up in the standard files.
    pub credentials: Option<Credentials>,
    /// How long to wait; the defaults are safe for an agent's start-up.
    pub timeouts: Timeouts,
}

/// What a bundle's artifact says about it, for the manifest's annotations.
#[derive(Debug, Clone)]
pub struct BundleInfo {
    /// The bundle's name.
    pub name: String,
    /// The bundle's version.
    pub version: String,
    /// How many skills it holds.
    pub skills: usize,
}

/// The outcome of a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// `registry/repository:tag@sha256:…`
    pub reference: String,
    /// The manifest digest.
    pub digest: String,
    /// The tag already named this very manifest: nothing changed.
    pub unchanged: bool,
    /// The tag named other content before, and was moved (a non-version tag, or `--force`).
    pub moved: bool,
}

/// A verified download: the bundle bytes, not yet opened.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The bundle file's bytes.
    pub bytes: Vec<u8>,
    /// The release statement the manifest carries ([`crate::bundle::release_statement`]), not yet checked.
    pub release: Option<Vec<u8>>,
    /// The manifest digest (`sha256:…`).
    pub manifest_digest: String,
    /// `registry/repository@sha256:…`, the immutable name of what was pulled.
    pub pinned: String,
}

/// A parsed `[oci://]REGISTRY/REPOSITORY(:TAG|@sha256:…)`.
#[derive(Debug, Clone)]
pub struct ArtifactRef {
    inner: Reference,
    text: String,
}

impl ArtifactRef {
    /// Parse a reference, with or without the `oci://` scheme. The registry must be
    /// named (no implicit Docker Hub: a bundle reference is always explicit).
    pub fn parse(text: &str) -> Result<ArtifactRef, Finding> {
        let bare = text.strip_prefix(SCHEME).unwrap_or(text);
        // `user:password@registry/...`: credentials in a reference end up in shell
        // history, logs and findings. Refused, and the location does not repeat them.
        let host_part = bare.split('/').next().unwrap_or("");
        if let Some((_, host)) = host_part.rsplit_once('@') {
            let scheme = if text.starts_with(SCHEME) { SCHEME } else { "" };
            let rest = &bare[host_part.len()..];
            return Err(Finding::new(
                Code::ArtifactNotFound,
                "the reference carries user information (credentials before '@'); it is not used, nor repeated",
                location(&format!("{scheme}***@{host}{rest}")),
            )
            .with_help("put registry credentials in the credentials file (`docker login`, `skopeo login`, REGISTRY_AUTH_FILE), never in a reference"));
        }
        let bad = |why: &str| {
            Finding::new(Code::ArtifactNotFound, why.to_string(), location(text))
                .with_help("write REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST, e.g. oci://registry.example.com/skills/network:0.1.0")
        };
        let first = bare.split('/').next().unwrap_or("");
        let names_registry = bare.contains('/')
            && (first.contains('.') || first.contains(':') || first == "localhost");
        if !names_registry {
            return Err(bad("the reference does not start with a registry host"));
        }
        let inner: Reference = bare
            .parse()
            .map_err(|_| bad("the reference is not a valid registry reference"))?;
        Ok(ArtifactRef {
            inner,
            text: text.to_string(),
        })
    }

    /// The text as given, for locations.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The registry host (and port).
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository path.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The tag, when the reference has one.
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The manifest digest, when the reference pins one.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// `registry/repository`, the key of a source.
    pub fn repository_key(&self) -> String {
        format!("{}/{}", self.registry(), self.repository())
    }

    /// The manifest `digest` in the same repository.
    pub(crate) fn at_digest(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.registry().to_string(),
            self.repository().to_string(),
            digest.to_string(),
        )
    }

    /// The tag `tag` in the same repository.
    pub(crate) fn at_tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.registry().to_string(),
            self.repository().to_string(),
            tag.to_string(),
        )
    }
}

/// If `text` is an `oci://` reference, the reference without the scheme.
pub fn strip_scheme(text: &str) -> Option<&str> {
    text.strip_prefix(SCHEME)
}

fn location(reference: &str) -> Location {
    Location::file(reference)
}

/// Run a registry operation to completion on a small runtime of its own, for callers
/// that do not run tokio. (From inside a tokio runtime, await the async form instead.)
pub fn block_on<F: Future>(future: F) -> Result<F::Output, Finding> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Finding::new(
                Code::Io,
                format!("cannot start the network runtime: {e}"),
                Location::default(),
            )
        })?;
    Ok(runtime.block_on(future))
}

fn client(options: &Options) -> Client {
    Client::new(ClientConfig {
        protocol: if options.plain_http {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        connect_timeout: Some(options.timeouts.connect),
        read_timeout: Some(options.timeouts.read),
        ..ClientConfig::default()
    })
}

fn auth(reference: &ArtifactRef, options: &Options) -> Result<RegistryAuth, Finding> {
    let credentials = match &options.credentials {
        Some(c) => c.clone(),
        None => credentials::for_registry(reference.registry())?,
    };
    Ok(match credentials {
        Credentials::Anonymous => RegistryAuth::Anonymous,
        Credentials::Basic { username, password } => RegistryAuth::Basic(username, password),
        Credentials::Bearer(token) => RegistryAuth::Bearer(token),
    })
}

/// A client and the credentials for one reference's registry: the requests the
/// referrers need besides [`push`] and [`pull`] (crate-internal).
pub(crate) struct Session {
    client: Client,
    auth: RegistryAuth,
}

impl Session {
    /// A session for `reference`'s registry, credentials stored for every request.
    pub(crate) async fn new(
        reference: &ArtifactRef,
        options: &Options,
    ) -> Result<Session, Finding> {
        let auth = auth(reference, options)?;
        let client = client(options);
        client
            .store_auth_if_needed(reference.inner.resolve_registry(), &auth)
            .await;
        Ok(Session { client, auth })
    }

    /// Upload `bytes` as a blob of `reference`'s repository, unless it is there already.
    pub(crate) async fn upload_blob(
        &self,
        reference: &ArtifactRef,
        bytes: &[u8],
    ) -> Result<(), Finding> {
        let at = reference.as_str();
        let digest = sha256(bytes);
        let exists = self
            .client
            .blob_exists(&reference.inner, &digest)
            .await
            .map_err(|e| registry_finding(e, at))?;
        if !exists {
            self.client
                .push_blob(&reference.inner, bytes.to_vec(), &digest)
                .await
                .map_err(|e| registry_finding(e, at))?;
        }
        Ok(())
    }

    /// PUT `bytes` as a manifest of `media_type` at `target` (a tag or a digest).
    pub(crate) async fn put_manifest(
        &self,
        target: &Reference,
        bytes: Vec<u8>,
        media_type: &str,
        at: &str,
    ) -> Result<(), Finding> {
        let content_type = media_type.parse().map_err(|_| {
            Finding::new(Code::Io, "a media type is not a header value", location(at))
        })?;
        self.client
            .push_manifest_raw(target, bytes, content_type)
            .await
            .map_err(|e| registry_finding(e, at))?;
        Ok(())
    }

    /// GET the manifest at `target`, accepting `media_type`: `None` when there is none,
    /// a finding when it is larger than [`MAX_OCI_MANIFEST_BYTES`].
    pub(crate) async fn get_manifest(
        &self,
        target: &Reference,
        media_type: &str,
        at: &str,
    ) -> Result<Option<Vec<u8>>, Finding> {
        match self
            .client
            .pull_manifest_raw(target, &self.auth, &[media_type])
            .await
        {
            Ok((bytes, _)) if bytes.len() > MAX_OCI_MANIFEST_BYTES => Err(Finding::new(
                Code::ResourceLimitExceeded,
                format!("a manifest is larger than {MAX_OCI_MANIFEST_BYTES} bytes"),
                location(at),
            )),
            Ok((bytes, _)) => Ok(Some(bytes.to_vec())),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(registry_finding(e, at)),
        }
    }

    /// The descriptors of the referrers of the manifest `subject` (a digest reference)
    /// of type `artifact_type`: through the registry's referrers API, or — when it
    /// answers 404, as a registry without one does — the referrers tag schema's index
    /// (`sha256-<hex>`). No referrers is an empty list.
    pub(crate) async fn referrers(
        &self,
        subject: &Reference,
        artifact_type: &str,
        at: &str,
    ) -> Result<Vec<Value>, Finding> {
        let index = self
            .client
            .pull_referrers(subject, Some(artifact_type))
            .await
            .map_err(|e| registry_finding(e, at))?;
        Ok(index
            .manifests
            .into_iter()
            .filter_map(|entry| serde_json::to_value(entry).ok())
            .collect())
    }
}

/// `sha256:` + lowercase hex.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits (the only form we read).
pub fn is_sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The RFC 3339 time written as `org.opencontainers.image.created`: SOURCE_DATE_EPOCH
/// (0 when unset), so the same bundle always gets the same manifest.
pub fn created() -> String {
    let secs = crate::bundle::archive::source_date_epoch();
    let secs = i64::try_from(secs).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp(secs, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The manifest bytes pushed for a bundle: a fixed member order, so equal bundles give
/// equal manifests (and digests).
pub fn manifest_for(bundle_bytes: &[u8], info: &BundleInfo) -> Vec<u8> {
    manifest_with_release(bundle_bytes, info, None)
}

/// [`manifest_for`], with a release statement (the statement file's bytes, see
/// [`crate::bundle::release_statement`]) carried in the [`crate::bundle::release_statement::ANNOTATION`] annotation. Without
/// one the manifest is exactly [`manifest_for`]'s.
pub fn manifest_with_release(
    bundle_bytes: &[u8],
    info: &BundleInfo,
    release: Option<&[u8]>,
) -> Vec<u8> {
    let title = format!("{}-{}.tar.gz", info.name, info.version);
    let mut manifest = json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": {
            "mediaType": EMPTY_CONFIG_MEDIA_TYPE,
            "digest": sha256(EMPTY_CONFIG),
            "size": EMPTY_CONFIG.len(),
            "data": "e30=",
        },
        "layers": [{
            "mediaType": LAYER_MEDIA_TYPE,
            "digest": sha256(bundle_bytes),
            "size": bundle_bytes.len(),
            "annotations": {ANNOTATION_TITLE: title},
        }],
        "annotations": {
            ANNOTATION_BUNDLE_NAME: info.name,
            ANNOTATION_SKILL_COUNT: info.skills.to_string(),
            ANNOTATION_CREATED: created(),
            ANNOTATION_TITLE: title,
            ANNOTATION_VERSION: info.version,
        },
    });
    if let Some(statement) = release {
        // Compact, so the annotation is one line; the text is what was signed around.
        let compact = serde_json::from_slice::<Value>(statement)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| String::from_utf8_lossy(statement).into_owned());
        manifest["annotations"][crate::bundle::release_statement::ANNOTATION] =
            Value::String(compact);
    }
    serde_json::to_vec(&manifest).expect("a JSON value always serializes")
}

/// The release statement a manifest carries, if any (not yet checked).
pub fn release_statement(manifest: &[u8]) -> Option<Vec<u8>> {
    annotations(manifest)
        .remove(crate::bundle::release_statement::ANNOTATION)
        .map(String::into_bytes)
}

/// Push a verified bundle's bytes to `reference` (which must name a tag).
///
/// A tag that already names other content is moved only when it is not a release
/// version — neither the bundle's version nor the version annotated on what it names —
/// or when `force` is set; otherwise [`Code::TagImmutable`].
pub async fn push(
    bundle_bytes: &[u8],
    info: &BundleInfo,
    reference: &ArtifactRef,
    options: &Options,
    force: bool,
) -> Result<Pushed, Finding> {
    push_with_release(bundle_bytes, info, None, reference, options, force).await
}

/// [`push`], with a release statement in the manifest ([`manifest_with_release`]). A
/// release-version tag may move to a manifest of the *same layer* (the same bundle,
/// a re-issued statement) without `force`: the content the tag names is unchanged.
pub async fn push_with_release(
    bundle_bytes: &[u8],
    info: &BundleInfo,
    release: Option<&[u8]>,
    reference: &ArtifactRef,
    options: &Options,
    force: bool,
) -> Result<Pushed, Finding> {
    let at = reference.as_str();
    let Some(tag) = reference.tag().filter(|_| reference.digest().is_none()) else {
        return Err(Finding::new(
            Code::ArtifactNotFound,
            "a push needs a tag (REGISTRY/REPOSITORY:TAG), not a digest",
            location(at),
        ));
    };
    let tag = tag.to_string();
    let auth = auth(reference, options)?;
    let client = client(options);
    let manifest = manifest_with_release(bundle_bytes, info, release);
    let digest = sha256(&manifest);
    let image = &reference.inner;

    // What the tag names now.
    let mut moved = false;
    match client
        .pull_manifest_raw(image, &auth, &[MANIFEST_MEDIA_TYPE])
        .await
    {
        Ok((existing, existing_digest)) => {
            if existing_digest == digest {
                return Ok(Pushed {
                    reference: format!("{}:{tag}@{digest}", reference.repository_key()),
                    digest,
                    unchanged: true,
                    moved: false,
                });
            }
            let existing_version = serde_json::from_slice::<Value>(&existing)
                .ok()
                .and_then(|m| {
                    m.pointer("/annotations/org.opencontainers.image.version")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
            let version_tag =
                tag == info.version || existing_version.as_deref() == Some(tag.as_str());
            let same_layer = check_manifest(&existing, u64::MAX)
                .is_ok_and(|layer| layer.digest == sha256(bundle_bytes));
            if version_tag && !same_layer && !force {
                return Err(Finding::new(
                    Code::TagImmutable,
                    "the tag names a release version and already points to different content; release versions are immutable",
                    location(at),
                )
                .with_help("publish a new bundle version under a new tag, or pass --force to move the tag anyway"));
            }
            moved = true;
        }
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(registry_finding(e, at)),
    }

    for (bytes, blob_digest) in [
        (EMPTY_CONFIG, sha256(EMPTY_CONFIG)),
        (bundle_bytes, sha256(bundle_bytes)),
    ] {
        let exists = client
            .blob_exists(image, &blob_digest)
            .await
            .map_err(|e| registry_finding(e, at))?;
        if !exists {
            client
                .push_blob(image, bytes.to_vec(), &blob_digest)
                .await
                .map_err(|e| registry_finding(e, at))?;
        }
    }
    client
        .push_manifest_raw(
            image,
            manifest,
            MANIFEST_MEDIA_TYPE
                .parse()
                .expect("a media type is a header value"),
        )
        .await
        .map_err(|e| registry_finding(e, at))?;
    Ok(Pushed {
        reference: format!("{}:{tag}@{digest}", reference.repository_key()),
        digest,
        unchanged: false,
        moved,
    })
}

/// Fetch and check the manifest, then download the layer with its size and digest
/// checked as it streams. `max_layer_bytes` is the bundle size limit: a larger layer is
/// refused before a byte of it is downloaded. The bytes are not yet a verified bundle.
pub async fn pull(
    reference: &ArtifactRef,
    options: &Options,
    max_layer_bytes: u64,
) -> Result<Pulled, Finding> {
    within_deadline(
        options,
        reference.as_str(),
        pull_within(reference, options, max_layer_bytes),
    )
    .await
}

/// Run one registry operation under the overall deadline ([`Timeouts::total`]).
pub(crate) async fn within_deadline<T>(
    options: &Options,
    reference: &str,
    operation: impl Future<Output = Result<T, Finding>>,
) -> Result<T, Finding> {
    let total = options.timeouts.total;
    match tokio::time::timeout(total, operation).await {
        Ok(result) => result,
        Err(_) => Err(deadline_passed(reference, total)),
    }
}

/// The finding for an operation cut off by [`Timeouts::total`].
fn deadline_passed(reference: &str, total: Duration) -> Finding {
    Finding::new(
        Code::RegistryError,
        format!(
            "the registry did not complete the operation within the overall deadline ({} s)",
            total.as_secs_f64()
        ),
        location(reference),
    )
    .with_help("a registry that is down, overloaded or trickling bytes; raise --timeout if the bundle is large and the link slow")
}

/// A bounded, timed read session with `reference`'s repository
/// ([`distribution::Session`]), with the credentials of `options` or the standard files.
pub(crate) fn read_session(
    reference: &ArtifactRef,
    options: &Options,
) -> Result<distribution::Session, Finding> {
    let credentials = match &options.credentials {
        Some(c) => c.clone(),
        None => credentials::for_registry(reference.registry())?,
    };
    distribution::Session::new(
        reference.registry(),
        reference.repository(),
        options.plain_http,
        credentials,
        options.timeouts,
        location(reference.as_str()),
    )
}

async fn pull_within(
    reference: &ArtifactRef,
    options: &Options,
    max_layer_bytes: u64,
) -> Result<Pulled, Finding> {
    let at = reference.as_str();
    let mut session = read_session(reference, options)?;
    let target = reference
        .digest()
        .or(reference.tag())
        .unwrap_or("latest")
        .to_string();
    let (manifest_bytes, manifest_digest) = session
        .manifest(&target, &[MANIFEST_MEDIA_TYPE], MAX_OCI_MANIFEST_BYTES)
        .await?;
    let actual = sha256(&manifest_bytes);
    let asked_for = reference.digest().is_some_and(|d| d != actual);
    let announced = manifest_digest.is_some_and(|d| d != actual);
    if asked_for || announced {
        return Err(Finding::new(
            Code::DigestMismatch,
            "the manifest's bytes do not have the digest they were asked for by",
            location(at),
        ));
    }
    let layer = check_manifest(&manifest_bytes, max_layer_bytes).map_err(|(code, why)| {
        Finding::new(code, why, location(at))
            .with_help("the reference must name an artifact written by `skillbundle push`")
    })?;

    // The layer streams into its digest and a temporary file, never into memory: a
    // declared 1 GiB layer with the wrong digest costs disk up to its size, and is
    // gone when refused. Only verified bytes are read back for the caller.
    let io = |e: std::io::Error| {
        Finding::new(
            Code::Io,
            format!("cannot hold the layer while it downloads: {e}"),
            location(at),
        )
    };
    let mut file = tempfile::tempfile().map_err(io)?;
    session.blob(&layer.digest, layer.size, &mut file).await?;
    let mut bytes = Vec::with_capacity(usize::try_from(layer.size).unwrap_or(0));
    file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    file.read_to_end(&mut bytes).map_err(io)?;
    // (An anonymous temporary file: no other process can have changed it.)
    if bytes.len() as u64 != layer.size {
        return Err(Finding::new(
            Code::Io,
            "the downloaded layer could not be read back whole",
            location(at),
        ));
    }
    Ok(Pulled {
        bytes,
        release: release_statement(&manifest_bytes),
        pinned: format!("{}@{actual}", reference.repository_key()),
        manifest_digest: actual,
    })
}

/// The layer a manifest declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The layer's `sha256:` digest.
    pub digest: String,
    /// The layer's size in bytes.
    pub size: u64,
}

/// Check that manifest bytes describe a skillbundle artifact within the limits, and
/// return its one layer. Errors are `(code, message)`; the messages never echo what the
/// registry sent.
pub fn check_manifest(bytes: &[u8], max_layer_bytes: u64) -> Result<Layer, (Code, String)> {
    let invalid = |why: &str| Err((Code::ArtifactInvalid, why.to_string()));
    let Ok(manifest) = crate::wire::json::parse(bytes) else {
        return invalid("the manifest is not valid I-JSON");
    };
    let text = |pointer: &str| manifest.pointer(pointer).and_then(Value::as_str);
    if manifest.get("schemaVersion").and_then(Value::as_u64) != Some(2) {
        return invalid("the manifest's schemaVersion is not 2");
    }
    // Image-spec 1.0 made `mediaType` optional; when present it must name an image
    // manifest (an index or a Docker manifest is another document).
    if manifest.get("mediaType").is_some() && text("/mediaType") != Some(MANIFEST_MEDIA_TYPE) {
        return invalid("the manifest is not an OCI image manifest (mediaType)");
    }
    if manifest.get("manifests").is_some() {
        return invalid("the manifest is an index, not an OCI image manifest");
    }
    if let Err(why) = check_artifact_type(&manifest, ARTIFACT_TYPE) {
        return invalid(&why.to_string());
    }
    let Some(Value::Array(layers)) = manifest.get("layers") else {
        return invalid("the manifest has no layers array");
    };
    let [layer] = layers.as_slice() else {
        return invalid("a skillbundle artifact has exactly one layer");
    };
    if layer.get("mediaType").and_then(Value::as_str) != Some(LAYER_MEDIA_TYPE) {
        return invalid(&format!("the layer's media type is not {LAYER_MEDIA_TYPE}"));
    }
    let digest = layer.get("digest").and_then(Value::as_str).unwrap_or("");
    if !is_sha256_digest(digest) {
        return invalid("the layer's digest is not sha256: and 64 lowercase hex digits");
    }
    let Some(size) = layer.get("size").and_then(Value::as_u64) else {
        return invalid("the layer's size is not a non-negative integer");
    };
    if size > max_layer_bytes {
        return Err((
            Code::ResourceLimitExceeded,
            format!("the layer is larger than the bundle size limit ({max_layer_bytes} bytes)"),
        ));
    }
    Ok(Layer {
        digest: digest.to_string(),
        size,
    })
}

/// Check that an image manifest is an artifact of type `expected`, in either form the
/// OCI specifications allow:
///
/// - OCI 1.1: `artifactType` is `expected`, and the config is the empty descriptor
///   (or, equally plain, a config of media type `expected`);
/// - OCI 1.0, as the ORAS clients and older tools write it: no `artifactType`, and
///   `config.mediaType` is `expected`. The distribution spec's referrers API says that
///   "if the artifactType is empty or missing in the image manifest, the value of
///   artifactType MUST be set to the config descriptor mediaType value", and the
///   image-spec's artifact guidance tells tools to fall back to it the same way.
///
/// The config blob itself is never read: an artifact's type is all it says. An
/// `artifactType` and a config that name two different types is refused.
pub fn check_artifact_type(manifest: &Value, expected: &'static str) -> Result<(), NotOfType> {
    let config = manifest
        .pointer("/config/mediaType")
        .and_then(Value::as_str);
    match manifest.get("artifactType") {
        Some(Value::String(t)) if t == expected => {
            if config == Some(EMPTY_CONFIG_MEDIA_TYPE) || config == Some(expected) {
                Ok(())
            } else {
                Err(NotOfType::ConfigNotPlain)
            }
        }
        Some(_) => Err(NotOfType::OtherArtifactType { expected }),
        None if config == Some(expected) => Ok(()),
        None => Err(NotOfType::OtherConfigType { expected }),
    }
}

/// Why [`check_artifact_type`] refused a manifest. The words name the expected type,
/// never the one the registry sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotOfType {
    /// `artifactType` is right, but the config is neither empty nor of that type.
    #[error(
        "the manifest's config is neither the OCI empty descriptor nor of the artifact's type"
    )]
    ConfigNotPlain,
    /// `artifactType` names another type.
    #[error("the artifact is not of type {expected}: its artifactType is another")]
    OtherArtifactType {
        /// The type looked for.
        expected: &'static str,
    },
    /// No `artifactType`, and `config.mediaType` names another type.
    #[error("the artifact is not of type {expected}: it has no artifactType, and its config.mediaType (which then stands in for it) is another")]
    OtherConfigType {
        /// The type looked for.
        expected: &'static str,
    },
}

/// The annotations of a manifest, for display.
pub fn annotations(manifest: &[u8]) -> BTreeMap<String, String> {
    serde_json::from_slice::<Value>(manifest)
        .ok()
        .and_then(|m| m.get("annotations").cloned())
        .and_then(|a| serde_json::from_value(a).ok())
        .unwrap_or_default()
}

fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown
                    | OciErrorCode::BlobUnknown
                    | OciErrorCode::NameUnknown
                    | OciErrorCode::NotFound
            )
        }),
        _ => false,
    }
}

/// Turn a client error into a finding. The client's own messages carry URLs and
/// registry text; ours name the kind of failure, and the location names the reference.
fn registry_finding(e: OciDistributionError, reference: &str) -> Finding {
    let at = location(reference);
    let unauthorized = |status: &str| {
        Finding::new(
            Code::RegistryUnauthorized,
            format!("the registry refused access ({status})"),
            at.clone(),
        )
        .with_help("log in with `docker login` or `skopeo login`, or point REGISTRY_AUTH_FILE at a credentials file")
    };
    if is_not_found(&e) {
        return Finding::new(
            Code::ArtifactNotFound,
            "the registry has no artifact at this reference",
            at,
        );
    }
    match e {
        OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => unauthorized("401 Unauthorized"),
        OciDistributionError::ServerError { code: 401, .. } => unauthorized("401 Unauthorized"),
        OciDistributionError::ServerError { code: 403, .. } => unauthorized("403 Forbidden"),
        OciDistributionError::RegistryError { ref envelope, .. }
            if envelope
                .errors
                .iter()
                .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)) =>
        {
            unauthorized("denied")
        }
        OciDistributionError::ServerError { code, .. } => Finding::new(
            Code::RegistryError,
            format!("the registry answered with HTTP status {code}"),
            at,
        ),
        OciDistributionError::DigestError(_) => Finding::new(
            Code::DigestMismatch,
            "the registry's bytes do not match their declared digest",
            at,
        ),
        OciDistributionError::RequestError(e) => {
            let what = if e.is_connect() {
                "cannot connect to the registry"
            } else if e.is_timeout() {
                "the registry did not answer in time"
            } else if e.is_redirect() {
                "the registry redirected too many times"
            } else {
                "the request to the registry failed"
            };
            // The innermost cause ("Connection refused", "dns error: ..."): the outer
            // layers only repeat the URL.
            let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(&e);
            while let Some(next) = cause.and_then(std::error::Error::source) {
                cause = Some(next);
            }
            let cause = cause.map(|c| format!(": {c}")).unwrap_or_default();
            Finding::new(Code::RegistryError, format!("{what}{cause}"), at).with_help(
                "check the address and that the registry is up; a registry without TLS needs --plain-http",
            )
        }
        OciDistributionError::RegistryError { .. }
        | OciDistributionError::SpecViolationError(_)
        | OciDistributionError::RegistryNoLocationError
        | OciDistributionError::RegistryNoDigestError => Finding::new(
            Code::RegistryError,
            "the registry answered with an error or broke the distribution protocol",
            at,
        ),
        _ => Finding::new(
            Code::ArtifactInvalid,
            "the registry's answer is not a manifest this tool can read",
            at,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> BundleInfo {
        BundleInfo {
            name: "n".into(),
            version: "1.0.0".into(),
            skills: 3,
        }
    }

    #[test]
    fn the_manifest_we_write_passes_our_own_check() {
        let manifest = manifest_for(b"bundle bytes", &info());
        let layer = check_manifest(&manifest, 1 << 20).unwrap();
        assert_eq!(layer.digest, sha256(b"bundle bytes"));
        assert_eq!(layer.size, 12);
        // Same bundle, same manifest bytes.
        assert_eq!(manifest, manifest_for(b"bundle bytes", &info()));
        let annotations = annotations(&manifest);
        assert_eq!(annotations[ANNOTATION_SKILL_COUNT], "3");
        assert_eq!(annotations[ANNOTATION_TITLE], "n-1.0.0.tar.gz");
    }

    #[test]
    fn foreign_or_oversized_manifests_are_refused_before_download() {
        let good: Value = serde_json::from_slice(&manifest_for(b"x", &info())).unwrap();
        let edit = |pointer: &str, to: Value| {
            let mut m = good.clone();
            *m.pointer_mut(pointer).unwrap() = to;
            serde_json::to_vec(&m).unwrap()
        };
        for (bytes, code) in [
            (
                edit("/artifactType", json!("application/vnd.other")),
                Code::ArtifactInvalid,
            ),
            (
                edit("/layers/0/mediaType", json!("application/octet-stream")),
                Code::ArtifactInvalid,
            ),
            (
                edit("/layers/0/digest", json!("sha256:XYZ")),
                Code::ArtifactInvalid,
            ),
            (
                edit("/layers/0/size", json!(1_000_001)),
                Code::ResourceLimitExceeded,
            ),
            (edit("/layers", json!([])), Code::ArtifactInvalid),
            (
                edit(
                    "/mediaType",
                    json!("application/vnd.oci.image.index.v1+json"),
                ),
                Code::ArtifactInvalid,
            ),
            (
                edit(
                    "/config/mediaType",
                    json!("application/vnd.cncf.helm.config.v1+json"),
                ),
                Code::ArtifactInvalid,
            ),
            (
                b"{\"schemaVersion\":2,\"schemaVersion\":2}".to_vec(),
                Code::ArtifactInvalid,
            ),
        ] {
            assert_eq!(check_manifest(&bytes, 1_000_000).unwrap_err().0, code);
        }
    }

    #[test]
    fn the_oci_1_0_form_names_the_type_in_the_config() {
        let good: Value = serde_json::from_slice(&manifest_for(b"x", &info())).unwrap();
        let accepts = |m: &Value| check_manifest(&serde_json::to_vec(m).unwrap(), 10).is_ok();
        // As ORAS writes it: no artifactType, the type as config.mediaType, an empty
        // (or `{}`) config blob; image-spec 1.0 also let `mediaType` be left out.
        let mut oras = good.clone();
        oras.as_object_mut().unwrap().remove("artifactType");
        oras["config"] = json!({"mediaType": ARTIFACT_TYPE, "digest": sha256(b""), "size": 0});
        assert!(accepts(&oras));
        oras.as_object_mut().unwrap().remove("mediaType");
        assert!(accepts(&oras));
        // Both fields, naming the same type.
        let mut both = oras.clone();
        both["artifactType"] = json!(ARTIFACT_TYPE);
        assert!(accepts(&both));
        // Neither names ours: the empty config, ORAS's "unknown" config, another type.
        for config in [
            EMPTY_CONFIG_MEDIA_TYPE,
            "application/vnd.unknown.config.v1+json",
            "application/vnd.oci.image.config.v1+json",
        ] {
            let mut m = oras.clone();
            m["config"]["mediaType"] = json!(config);
            assert!(!accepts(&m), "{config}");
        }
        // artifactType and config disagree.
        let mut split = good.clone();
        split["config"]["mediaType"] = json!("application/vnd.oci.image.config.v1+json");
        assert!(!accepts(&split));
        let mut other = oras.clone();
        other["artifactType"] = json!("application/vnd.other");
        assert!(!accepts(&other));
        // An index is not a manifest, whatever else it carries.
        let mut index = good.clone();
        index["manifests"] = json!([]);
        assert!(!accepts(&index));
    }

    #[test]
    fn references_name_their_registry() {
        let r = ArtifactRef::parse("oci://127.0.0.1:5000/skills/net:0.1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "skills/net");
        assert_eq!(r.tag(), Some("0.1.0"));
        let d = format!("oci://registry.example/skills@{}", sha256(b""));
        assert!(ArtifactRef::parse(&d).unwrap().digest().is_some());
        let secret = ArtifactRef::parse("oci://ci:s3cret@reg.example/skills/net:1").unwrap_err();
        assert_eq!(
            secret.location.file.as_deref(),
            Some(std::path::Path::new("oci://***@reg.example/skills/net:1"))
        );
        assert!(!format!("{secret:?}").contains("s3cret"));
        for bad in [
            "oci://skills:1",
            "skills/net:1",
            "oci://reg.example/UPPER:1",
        ] {
            assert!(ArtifactRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn created_follows_source_date_epoch_when_unset_or_set() {
        // Only the format is asserted: the environment belongs to the whole test process.
        let c = created();
        assert!(c.ends_with('Z') && c.len() == 20, "{c}");
    }
}
