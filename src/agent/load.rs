//! Loading a bundle in an agent: the draft's "Agent initialization", all or nothing.
//!
//! Before an agent advertises schema-interface support it must integrity-check the
//! packaged Skill Interface Schema, validate every document and inline-schema digest, and
//! retain each document's digest. A bundle is the vendor's already-assembled answer to
//! those steps, so loading one means *re-checking* every claim it makes rather than
//! believing it, in an order where nothing is parsed beyond the manifest before the
//! manifest is authenticated:
//!
//! 1. the archive is read in memory with limits ([`crate::bundle::archive::read`]: regular files
//!    only; links, `..`, absolute and duplicate entries, oversize and truncation refused);
//! 2. `manifest.json` is parsed as I-JSON and must have exactly the manifest's shape, a
//!    known `format` and `interface_version` "1.0", name the packaged Skill Interface
//!    Schema's digest, and a `bundle.name` and `bundle.version` the builder would accept
//!    ([`crate::fs::sandbox::is_safe_name`]: they become file names when pulled);
//! 3. its signatures are checked against the [`TrustedKeys`] (at least one trusted key
//!    verifies, a bad signature by a trusted key fails, unknown `kid`s are ignored; an
//!    unsigned bundle loads only when explicitly allowed);
//! 4. the archive holds exactly the files the manifest lists — none missing, none extra —
//!    and each file's SHA-256 matches;
//! 5. every Skill Interface Document is re-parsed and read as a typed
//!    [`Document`] (validated against the packaged schema, its interface_digest and
//!    inline-schema digests recomputed), and compared with the manifest and with the
//!    Agent Card fragment;
//! 6. every input, output and record schema is governed ([`crate::schema::govern_lazily`]:
//!    limits, dialect, closure, formats and regular expressions, meta-schema), which
//!    proves it compiles; its validator is compiled on first use.
//!
//! Steps 5 and 6 run for each skill on its own, so skills load in parallel (rayon; the
//! findings keep manifest order, and the loaded bundle is the same whatever the threads),
//! starting as the second pass over the archive decompresses each document.
//!
//! What stays in memory is the typed documents (each schema as its canonical bytes,
//! packed — see [`crate::wire::schema_bytes`] — never a tree) and, once compiled, the
//! validators in use: compiling every schema up front cost three quarters of `verify`'s
//! memory at 10,000 skills (1.6 GB) for validators an agent mostly never calls. At most
//! `MAX_QUEUED_DOCUMENT_BYTES` of read documents wait for a worker.
//!
//! Any failure refuses the whole bundle: [`Bundle::open`] returns every finding and no
//! partial bundle. `manifest.json` is authenticated as a JSON *value* (its JCS bytes are
//! what is signed), so insignificant whitespace in it is not covered; every other file is
//! covered byte for byte by its digest.

use crate::bundle::archive::{self, ReadLimits};
use crate::bundle::first_pass::{self, MAX_FLAT_FILE_DEPTH};
use crate::bundle::manifest::{Manifest, ManifestSchema, ManifestSkill};
use crate::bundle::sign::{into_signing_payload, SIGNATURES};
use crate::bundle::{interface_path, is_layout_path, CARD_FRAGMENT_PATH, FORMAT, MANIFEST_PATH};
use crate::card::a2a::EXTENSION_URI;
use crate::crypto::jws::{self, JwsSignature};
use crate::crypto::keys::TrustedKeys;
use crate::finding::{Code, Finding, Location};
use crate::interface::binding::Binding;
use crate::interface::packaged_schema::{InterfaceSchema, INTERFACE_VERSION};
use crate::interface::{Document, DESCRIBE_SKILL};
use crate::schema::dialect::DEFAULT_DIALECT;
use crate::schema::limits::Limits;
use crate::schema::validator::{Governed, PatternCache};
use crate::wire::digest::Digest;
use a2a_types::{AgentExtension, AgentSkill};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Nesting allowed in a loaded document: the inline schemas' own limit (64) plus the
/// few levels of the standard structure around them.
const MAX_INTERFACE_DOCUMENT_DEPTH: usize = 80;
/// How many bytes of documents may wait, read but not yet loaded. Inflating is faster
/// than loading, so without a bound the reading thread queued nearly every document of a
/// large bundle (some 200 MB at 10,000 skills) before the workers caught up; at the
/// bound it loads queued documents itself.
const MAX_QUEUED_DOCUMENT_BYTES: usize = 8 << 20;
/// What the signature check established about a loaded bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureStatus {
    /// Signed, and verified by these trusted keys (their `kid`s).
    Verified {
        /// The `kid`s of the keys whose signatures verified.
        by: Vec<String>,
    },
    /// Not signed; loaded because unsigned bundles were explicitly allowed.
    Unsigned,
    /// Signed, but no trusted key was given and unsigned bundles were allowed: the
    /// signatures were not checked, and the bundle is as unauthenticated as an unsigned one.
    NotVerified {
        /// How many signatures the manifest carries.
        signatures: usize,
    },
}

impl SignatureStatus {
    /// Whether a trusted key vouches for the bundle.
    pub fn is_verified(&self) -> bool {
        matches!(self, SignatureStatus::Verified { .. })
    }
}

impl fmt::Display for SignatureStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignatureStatus::Verified { by } => write!(f, "signed by {}", by.join(", ")),
            SignatureStatus::Unsigned => f.write_str("UNSIGNED: no signature, nothing vouches for this bundle"),
            SignatureStatus::NotVerified { signatures } => write!(
                f,
                "NOT VERIFIED: {signatures} signature(s) present but no trusted key was given, so nothing vouches for this bundle"
            ),
        }
    }
}

/// One skill of a loaded bundle: its validated document and its governed schemas.
pub(crate) struct LoadedSkill {
    pub(crate) document: Document,
    /// The document's skill_version as the draft writes it. The canonical form is the
    /// only form, so a request names this version exactly when its skill_version is
    /// these bytes: [`Bundle::admit`](crate::agent::Bundle::admit) compares, it does not
    /// parse.
    pub(crate) skill_version: String,
    /// One per Schema Reference, in document order (input, output, then the records),
    /// each compiled on first use.
    pub(crate) schemas: Vec<Governed>,
}

impl LoadedSkill {
    pub(crate) fn input(&self) -> &Governed {
        &self.schemas[0]
    }

    pub(crate) fn output(&self) -> &Governed {
        &self.schemas[1]
    }

    /// The schema of the supporting-record kind `kind`.
    pub(crate) fn record(&self, kind: &str) -> Option<&Governed> {
        let i = self
            .document
            .records()
            .iter()
            .position(|r| r.kind.as_deref() == Some(kind))?;
        self.schemas.get(2 + i)
    }
}

/// A verified, loaded bundle. Build one with [`Bundle::open`] or [`Bundle::open_path`];
/// what it serves (describe_skill, the Agent Card entries, invocation checks) is in
/// [`crate::agent`]. Immutable once loaded, and `Send + Sync`: share it across tasks.
pub struct Bundle {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) generator: String,
    pub(crate) signature: SignatureStatus,
    /// skill_id → skill, in manifest order by way of `order`.
    pub(crate) skills: BTreeMap<String, LoadedSkill>,
    pub(crate) order: Vec<String>,
    pub(crate) extension: AgentExtension,
    pub(crate) agent_skills: Vec<AgentSkill>,
    pub(crate) fragment: Value,
}

impl fmt::Debug for Bundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bundle")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("signature", &self.signature)
            .field("skills", &self.order)
            .finish_non_exhaustive()
    }
}

fn at(path: &str) -> Location {
    Location::file(path)
}

impl Bundle {
    /// Open a bundle held in memory, with the default archive limits.
    pub fn open(bytes: &[u8], trust: &TrustedKeys) -> Result<Bundle, Vec<Finding>> {
        Bundle::open_with_limits(bytes, trust, ReadLimits::default())
    }

    /// Read the bundle file at `path` and [`open`](Bundle::open) it. Findings about the
    /// archive as a whole point at `path`; the others at `path/entry`.
    pub fn open_path(path: &Path, trust: &TrustedKeys) -> Result<Bundle, Vec<Finding>> {
        let limit = ReadLimits::default().max_total_bytes;
        let bytes = crate::bundle::read_file(path, limit).map_err(|f| vec![f])?;
        Bundle::open_read(path, &bytes, trust)
    }

    /// [`open`](Bundle::open) `bytes`, read from the bundle file at `path` by a caller
    /// that needs them too (the digest a release statement binds): findings point as
    /// [`open_path`](Bundle::open_path)'s do.
    pub fn open_read(
        path: &Path,
        bytes: &[u8],
        trust: &TrustedKeys,
    ) -> Result<Bundle, Vec<Finding>> {
        Bundle::open(bytes, trust).map_err(|mut findings| {
            // An entry is named `BUNDLE/entry`: clear about which bundle it is in, and
            // never a path that leads to a same-named file in the working directory
            // (a renderer quoting a snippet from it would quote the operator's file).
            for f in &mut findings {
                f.location.file = Some(match f.location.file.take() {
                    Some(entry) => path.join(entry),
                    None => path.to_path_buf(),
                });
            }
            findings
        })
    }

    /// Open a bundle held in memory with explicit archive limits.
    pub fn open_with_limits(
        bytes: &[u8],
        trust: &TrustedKeys,
        limits: ReadLimits,
    ) -> Result<Bundle, Vec<Finding>> {
        let one =
            |code, message: String, location| Err(vec![Finding::new(code, message, location)]);

        // 1. The archive, first pass: the canonical form is checked, every entry hashed
        // as it streams by, and only manifest.json (bounded) kept.
        let (manifest, entries) = first_pass::read_manifest_and_digests(bytes, limits)?;

        // 2. The manifest.
        match manifest.get("format").and_then(Value::as_str) {
            Some(FORMAT) => {}
            other => {
                return one(
                    Code::BundleInvalid,
                    format!(
                    "unsupported bundle format {}; this version of skillbundle reads {FORMAT:?}",
                    other.map_or("(none)".to_string(), |s| format!("{s:?}"))
                ),
                    at(MANIFEST_PATH).with_pointer("/format"),
                )
            }
        }
        match manifest.get("interface_version").and_then(Value::as_str) {
            Some(INTERFACE_VERSION) => {}
            other => {
                return one(
                    Code::BundleInvalid,
                    format!(
                        "interface_version {} is not supported; this version of skillbundle supports {INTERFACE_VERSION:?}",
                        other.map_or("(none)".to_string(), |s| format!("{s:?}"))
                    ),
                    at(MANIFEST_PATH).with_pointer("/interface_version"),
                )
            }
        }
        let parsed: Manifest = match Manifest::deserialize(&manifest) {
            Ok(m) => m,
            Err(_) => {
                return one(
                    Code::BundleInvalid,
                    // serde's message would quote the offending value: not echoed.
                    "manifest.json does not have the shape of a bundle manifest (a member is missing, unknown, or of the wrong type)".into(),
                    at(MANIFEST_PATH),
                );
            }
        };

        // The name and version become file names (`pull` writes `<name>-<version>.tar.gz`,
        // an agent's state keys on them): they must be names the builder would have
        // accepted, signed or not. The values are not echoed.
        for (value, pointer, what) in [
            (&parsed.bundle.name, "/bundle/name", "bundle.name"),
            (&parsed.bundle.version, "/bundle/version", "bundle.version"),
        ] {
            if !crate::fs::sandbox::is_safe_name(value) {
                return one(
                    Code::BundleInvalid,
                    format!("{what} is not a name the builder accepts (letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 bytes)"),
                    at(MANIFEST_PATH).with_pointer(pointer),
                );
            }
        }

        // 3. Signatures, before anything else in the archive is looked at. The tree is
        // not needed after this (the typed manifest is), so it is given up here.
        let signature = check_signatures(manifest, parsed.signatures.as_deref(), trust)?;

        let schema = match InterfaceSchema::packaged() {
            Ok(s) => s,
            Err(e) => return Err(vec![Finding::from(&e)]),
        };
        if parsed.skill_interface_schema.digest != *schema.digest() {
            return one(
                Code::InterfaceInvalid,
                format!(
                    "the bundle was built against Skill Interface Schema {}, but this agent's packaged schema is {}",
                    parsed.skill_interface_schema.digest,
                    schema.digest()
                ),
                at(MANIFEST_PATH).with_pointer("/skill_interface_schema/digest"),
            );
        }

        // 4. Exactly the listed files, each with its digest (from the first pass: no
        // entry is kept before this holds).
        let digests: BTreeMap<&str, &Digest> = entries
            .iter()
            .map(|e| (e.path.as_str(), &e.digest))
            .collect();
        check_file_set(&parsed, &digests)?;

        // Second pass: the same canonical read, each (now authenticated) entry compared
        // with the first pass and handed to a worker as soon as it is decompressed, so
        // reading the archive overlaps with loading the skills (steps 5 and 6: each skill
        // on its own, so in parallel; the results, and so the findings, stay in
        // manifest order). The card fragment is checked alongside: it depends on none.
        let slots: BTreeMap<&str, usize> = parsed
            .skills
            .iter()
            .enumerate()
            .map(|(i, e)| (e.file.as_str(), i))
            .collect();
        let results: Vec<OnceLock<Result<LoadedSkill, Vec<Finding>>>> =
            parsed.skills.iter().map(|_| OnceLock::new()).collect();
        let fragment = OnceLock::new();
        // One regex cache for the bundle: its validators share compiled patterns.
        let patterns = PatternCache::new();
        let differently =
            || archive::ArchiveError::invalid("the archive read differently the second time");
        let mut seen = 0;
        let queued = AtomicUsize::new(0);
        let keep = |path: &str, _| {
            if is_layout_path(path) {
                Ok(archive::Disposition::Keep)
            } else {
                Err(differently())
            }
        };
        rayon::scope(|scope| {
            archive::scan_each(bytes, limits, keep, |entry| {
                let first = entries.get(seen);
                seen += 1;
                if first.is_none_or(|f| f.path != entry.path || f.digest != entry.digest) {
                    return Err(differently());
                }
                let data = entry.data.unwrap_or_default();
                while queued.load(Ordering::Acquire) > MAX_QUEUED_DOCUMENT_BYTES {
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::thread::yield_now();
                    }
                }
                let len = data.len();
                queued.fetch_add(len, Ordering::AcqRel);
                let (results, patterns, parsed, fragment, queued) =
                    (&results, &patterns, &parsed, &fragment, &queued);
                if entry.path == CARD_FRAGMENT_PATH {
                    scope.spawn(move |_| {
                        let _ = fragment.set(check_fragment(parsed, &data));
                        queued.fetch_sub(len, Ordering::AcqRel);
                    });
                } else if let Some(&i) = slots.get(entry.path.as_str()) {
                    scope.spawn(move |_| {
                        let _ =
                            results[i].set(load_skill(schema, patterns, &parsed.skills[i], data));
                        queued.fetch_sub(len, Ordering::AcqRel);
                    });
                } else {
                    queued.fetch_sub(len, Ordering::AcqRel);
                }
                Ok(())
            })
        })
        .map_err(|e| vec![Finding::from(e)])?;
        if seen != entries.len() {
            return Err(vec![Finding::from(differently())]);
        }
        let missing = || {
            vec![Finding::new(
                Code::BundleInvalid,
                "an entry listed in manifest.json was not read",
                Location::default(),
            )]
        };
        let loaded: Vec<Result<LoadedSkill, Vec<Finding>>> = results
            .into_iter()
            .map(|r| r.into_inner().unwrap_or_else(|| Err(missing())))
            .collect();
        let mut findings = Vec::new();
        let mut skills = BTreeMap::new();
        let mut order = Vec::new();
        for result in loaded {
            match result {
                Ok(skill) => {
                    order.push(skill.document.skill_id.clone());
                    skills.insert(skill.document.skill_id.clone(), skill);
                }
                Err(mut f) => findings.append(&mut f),
            }
        }
        if !findings.is_empty() {
            return Err(findings);
        }
        let (extension, agent_skills, fragment) =
            fragment.into_inner().unwrap_or_else(|| Err(missing()))?;

        Ok(Bundle {
            name: parsed.bundle.name,
            version: parsed.bundle.version,
            generator: parsed.generator,
            signature,
            skills,
            order,
            extension,
            agent_skills,
            fragment,
        })
    }

    /// The bundle's name, from its manifest.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bundle's version, from its manifest.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The tool that wrote the bundle.
    pub fn generator(&self) -> &str {
        &self.generator
    }

    /// What the signature check established.
    pub fn signature(&self) -> &SignatureStatus {
        &self.signature
    }

    /// The skill ids, in manifest order (describe_skill not included).
    pub fn skill_ids(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    /// What the extension advertises for each skill, in manifest order.
    pub fn advertised(&self) -> Vec<Binding> {
        self.order
            .iter()
            .map(|id| self.skills[id].document.binding())
            .collect()
    }
}

fn check_signatures(
    manifest: Value,
    signatures: Option<&[JwsSignature]>,
    trust: &TrustedKeys,
) -> Result<SignatureStatus, Vec<Finding>> {
    let location = || at(MANIFEST_PATH).with_pointer(format!("/{SIGNATURES}"));
    let signatures = signatures.unwrap_or_default();
    if signatures.is_empty() {
        if trust.allows_unsigned() {
            return Ok(SignatureStatus::Unsigned);
        }
        return Err(vec![Finding::new(
            Code::UntrustedKey,
            "the bundle is not signed, and unsigned bundles are not accepted",
            location(),
        )
        .with_help("sign it with `skillbundle build --sign-key KEY`, or accept unsigned bundles explicitly (--allow-unsigned, TrustedKeys::allow_unsigned)")]);
    }
    if trust.keys().is_empty() {
        if trust.allows_unsigned() {
            return Ok(SignatureStatus::NotVerified {
                signatures: signatures.len(),
            });
        }
        return Err(vec![Finding::new(
            Code::UntrustedKey,
            "no trusted keys were given, so no signature can be verified",
            location(),
        )
        .with_help(
            "pass the vendor's public key (--trust KEY.jwk.json, TrustedKeys::new)",
        )]);
    }
    match jws::verify_signatures(&into_signing_payload(manifest), signatures, trust.keys()) {
        Ok(by) => Ok(SignatureStatus::Verified {
            by: by.into_iter().map(|k| k.0).collect(),
        }),
        Err(e) => Err(vec![Finding::new(
            Code::from(&e),
            e.to_string(),
            location(),
        )]),
    }
}

fn check_file_set(
    manifest: &Manifest,
    files: &BTreeMap<&str, &Digest>,
) -> Result<(), Vec<Finding>> {
    let mut findings = Vec::new();
    // path → (declared digest, pointer of the declaration)
    let mut expected: BTreeMap<&str, (&Digest, String)> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    for (i, skill) in manifest.skills.iter().enumerate() {
        let pointer = format!("/skills/{i}");
        if !ids.insert(skill.skill_id.as_str()) {
            findings.push(Finding::new(
                Code::BundleInvalid,
                format!("skill_id {:?} is listed twice", skill.skill_id),
                at(MANIFEST_PATH).with_pointer(pointer.clone()),
            ));
        }
        if skill.file != interface_path(&skill.skill_id) {
            findings.push(Finding::new(
                Code::BundleInvalid,
                format!(
                    "the document of {:?} must be {:?}, not {:?}",
                    skill.skill_id,
                    interface_path(&skill.skill_id),
                    skill.file
                ),
                at(MANIFEST_PATH).with_pointer(format!("{pointer}/file")),
            ));
        }
        expected.insert(
            &skill.file,
            (
                &skill.interface_digest,
                format!("{pointer}/interface_digest"),
            ),
        );
    }
    for (path, digest) in &manifest.files {
        let pointer = format!("/files/{}", crate::wire::pointer::escape(path));
        if path == MANIFEST_PATH || expected.contains_key(path.as_str()) {
            findings.push(Finding::new(
                Code::BundleInvalid,
                format!("{path:?} is listed twice"),
                at(MANIFEST_PATH).with_pointer(pointer.clone()),
            ));
        }
        expected.insert(path, (digest, pointer));
    }
    if !manifest.files.contains_key(CARD_FRAGMENT_PATH) {
        findings.push(Finding::new(
            Code::BundleInvalid,
            format!("manifest.json does not list {CARD_FRAGMENT_PATH}"),
            at(MANIFEST_PATH).with_pointer("/files"),
        ));
    }
    for &path in files.keys() {
        if path != MANIFEST_PATH && !expected.contains_key(path) {
            findings.push(Finding::new(
                Code::BundleInvalid,
                format!("unexpected entry {path:?}: manifest.json does not list it"),
                at(path),
            ));
        }
    }
    for (path, (digest, pointer)) in &expected {
        match files.get(*path) {
            None => findings.push(Finding::new(
                Code::BundleInvalid,
                format!("{path:?} is listed in manifest.json but missing from the archive"),
                at(MANIFEST_PATH).with_pointer(pointer.clone()),
            )),
            Some(&actual) => {
                if actual != *digest {
                    findings.push(Finding::new(
                        Code::DigestMismatch,
                        format!(
                            "the file's sha256 is {actual}, but manifest.json declares {digest}"
                        ),
                        at(path),
                    ));
                }
            }
        }
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(findings)
    }
}

fn load_skill(
    schema: &InterfaceSchema,
    patterns: &PatternCache,
    entry: &ManifestSkill,
    bytes: Vec<u8>,
) -> Result<LoadedSkill, Vec<Finding>> {
    let file = entry.file.as_str();
    let value =
        crate::wire::json::parse_with_depth(&bytes, MAX_INTERFACE_DOCUMENT_DEPTH).map_err(|e| {
            vec![Finding::new(
                Code::limit_or(e.limit, Code::InterfaceInvalid),
                format!(
                    "the Skill Interface Document is not valid I-JSON: {}",
                    e.message
                ),
                at(file).with_position(e.line, e.column),
            )]
        })?;
    drop(bytes);
    let document = Document::read(schema, &value).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| {
                Finding::new(
                    Code::InterfaceInvalid,
                    p.message,
                    at(file).with_pointer(p.pointer),
                )
            })
            .collect::<Vec<_>>()
    })?;
    // Kept packed from here on (see crate::wire::schema_bytes); the validators share the bytes.
    let document = document.packed();
    let mut findings = Vec::new();
    if document.digest != entry.interface_digest {
        findings.push(Finding::new(
            Code::DigestMismatch,
            format!(
                "the interface_digest recomputed over the document's JCS bytes is {}, but manifest.json declares {}",
                document.digest, entry.interface_digest
            ),
            at(file),
        ));
    }
    if document.skill_id != entry.skill_id || document.skill_version != entry.skill_version {
        findings.push(Finding::new(
            Code::InterfaceInvalid,
            format!(
                "the document describes {} {}, but manifest.json lists it as {} {}",
                document.skill_id, document.skill_version, entry.skill_id, entry.skill_version
            ),
            at(file),
        ));
    }
    let declared: Vec<ManifestSchema> = document.schemas().iter().map(ManifestSchema::of).collect();
    if declared != entry.schemas {
        findings.push(Finding::new(
            Code::InterfaceInvalid,
            "the document's Schema References (role, kind, schema_uri, version, dialect, digest) differ from those manifest.json lists",
            at(file),
        ));
    }
    let mut governed = Vec::new();
    for (reference, pointer, inline) in document.inline_schemas(&value) {
        if reference.dialect != DEFAULT_DIALECT {
            findings.push(Finding::new(
                Code::InterfaceInvalid,
                format!(
                    "dialect {:?} is not supported; interface version 1.0 supports {DEFAULT_DIALECT}",
                    reference.dialect
                ),
                at(file).with_pointer(format!("{pointer}/dialect")),
            ));
            continue;
        }
        // The same governance as at build time, with the draft's default limits: a
        // bundle from elsewhere, signed or not, is not trusted to have passed it. The
        // validator is compiled when a request first needs it.
        match crate::schema::govern_lazily(
            inline,
            reference.jcs.clone(),
            &reference.dialect,
            &Limits::default(),
            patterns,
        ) {
            Ok(g) => governed.push(g),
            Err(problems) => findings.extend(problems.into_iter().map(|mut f| {
                let inner = f.location.pointer.take().unwrap_or_default();
                f.location = at(file).with_pointer(format!("{pointer}/resolution/schema{inner}"));
                f
            })),
        }
    }
    if !findings.is_empty() {
        return Err(findings);
    }
    Ok(LoadedSkill {
        skill_version: document.skill_version.to_string(),
        document,
        schemas: governed,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FragmentFile {
    capabilities: FragmentCapabilities,
    skills: Vec<AgentSkill>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FragmentCapabilities {
    extensions: Vec<AgentExtension>,
}

fn check_fragment(
    manifest: &Manifest,
    bytes: &[u8],
) -> Result<(AgentExtension, Vec<AgentSkill>, Value), Vec<Finding>> {
    let file = CARD_FRAGMENT_PATH;
    let invalid = |message: String, pointer: &str| {
        vec![Finding::new(
            Code::BundleInvalid,
            message,
            at(file).with_pointer(pointer),
        )]
    };
    let value = crate::wire::json::parse_with_depth(bytes, MAX_FLAT_FILE_DEPTH).map_err(|e| {
        vec![Finding::new(
            Code::BundleInvalid,
            format!("the Agent Card fragment is not valid I-JSON: {}", e.message),
            at(file).with_position(e.line, e.column),
        )]
    })?;
    let fragment: FragmentFile = serde_json::from_value(value.clone()).map_err(|e| {
        invalid(
            format!("not an A2A Agent Card fragment {{capabilities: {{extensions}}, skills}}: {e}"),
            "",
        )
    })?;
    let [extension] =
        <[AgentExtension; 1]>::try_from(fragment.capabilities.extensions).map_err(|v| {
            invalid(
                format!("expected exactly one extension, found {}", v.len()),
                "/capabilities/extensions",
            )
        })?;
    if extension.uri != EXTENSION_URI {
        return Err(invalid(
            format!(
                "the extension URI is {:?}, expected {EXTENSION_URI:?}",
                extension.uri
            ),
            "/capabilities/extensions/0/uri",
        ));
    }
    let params = extension.params.clone().unwrap_or_default();
    if params.get("interface_version").and_then(Value::as_str) != Some(INTERFACE_VERSION)
        || params.len() != 2
    {
        return Err(invalid(
            format!("the extension params must be exactly interface_version {INTERFACE_VERSION:?} and skills"),
            "/capabilities/extensions/0/params",
        ));
    }
    let advertised: &[Value] = params
        .get("skills")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut findings = Vec::new();
    if advertised.len() != manifest.skills.len() {
        findings.push(Finding::new(
            Code::BundleInvalid,
            format!(
                "the extension advertises {} skills, manifest.json lists {}",
                advertised.len(),
                manifest.skills.len()
            ),
            at(file).with_pointer("/capabilities/extensions/0/params/skills"),
        ));
    }
    for (i, (entry, adv)) in manifest.skills.iter().zip(advertised).enumerate() {
        let pointer = format!("/capabilities/extensions/0/params/skills/{i}");
        let expected = entry.binding().to_json();
        if *adv == expected {
            continue;
        }
        let mut same_but_digest = adv.clone();
        same_but_digest["interface_digest"] = expected["interface_digest"].clone();
        if same_but_digest == expected {
            findings.push(Finding::new(
                Code::DigestMismatch,
                format!(
                    "the extension advertises interface_digest {} for {}, but its document's digest is {}",
                    adv["interface_digest"], entry.skill_id, entry.interface_digest
                ),
                at(file).with_pointer(format!("{pointer}/interface_digest")),
            ));
        } else {
            findings.push(Finding::new(
                Code::BundleInvalid,
                format!(
                    "the extension entry is not exactly {{skill_id, skill_version, interface_digest}} of {} {} as manifest.json lists it",
                    entry.skill_id, entry.skill_version
                ),
                at(file).with_pointer(pointer),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, skill) in fragment.skills.iter().enumerate() {
        if !seen.insert(skill.id.as_str()) {
            findings.push(Finding::new(
                Code::BundleInvalid,
                format!("AgentSkill {:?} appears twice", skill.id),
                at(file).with_pointer(format!("/skills/{i}/id")),
            ));
        }
    }
    let mut wanted: BTreeSet<&str> = manifest
        .skills
        .iter()
        .map(|s| s.skill_id.as_str())
        .collect();
    wanted.insert(DESCRIBE_SKILL);
    if seen != wanted {
        findings.push(Finding::new(
            Code::BundleInvalid,
            format!(
                "the AgentSkill entries ({}) are not describe_skill plus the bundle's skills ({})",
                seen.iter().copied().collect::<Vec<_>>().join(", "),
                wanted.iter().copied().collect::<Vec<_>>().join(", ")
            ),
            at(file).with_pointer("/skills"),
        ));
    }
    if !findings.is_empty() {
        return Err(findings);
    }
    Ok((extension, fragment.skills, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_can_be_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Bundle>();
    }

    #[test]
    fn trusted_keys_constructors() {
        assert!(!TrustedKeys::new(Vec::new()).allows_unsigned());
        assert!(TrustedKeys::allow_unsigned().allows_unsigned());
        assert!(TrustedKeys::allow_unsigned().keys().is_empty());
        assert!(TrustedKeys::new(Vec::new())
            .and_allow_unsigned()
            .allows_unsigned());
    }
}
