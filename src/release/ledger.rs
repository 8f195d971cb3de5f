//! The release ledger: `skillbundle.lock`, the record of every published version.
//!
//! The draft makes a published schema version and digest immutable, and a changed
//! interface a new skill_version. A promise like that needs a memory: the lock file at the
//! workspace root records every schema (schema_uri, version, dialect, digest, and the
//! schema itself) and every skill version (skill_id, skill_version, interface_digest, the
//! Schema References it used, its interaction and authority) that `build` has produced.
//! The ledger — not a git branch — is the baseline the release rules compare against
//! (see [`crate::release::rules`]); it holds the schemas themselves so that a later version can
//! be diffed structurally against the one it replaces.
//!
//! The file is deterministic, pretty-printed JSON with sorted members and entries sorted
//! by identity, so a release shows up in `git diff` as a few added entries. It is
//! append-only: the tool adds entries, never edits or drops one. It is read with the
//! strict I-JSON reader and checked on every read — a malformed file, a bad digest or
//! version string, a duplicate entry, a schema that does not hash to its recorded digest
//! or a skill entry that does not reproduce its interface_digest is `lock_invalid`, never
//! ignored — and written atomically (temporary file in the same directory, then rename).

use crate::finding::{Code, Finding, Location};
use crate::interface::packaged_schema::INTERFACE_VERSION;
use crate::interface::Role;
use crate::interface::{Authority, DefaultMode, Interaction, ResponseMode};
use crate::interface::{Document, SchemaReference};
use crate::wire::digest::Digest;
use crate::wire::schema_bytes::SchemaBytes;
use crate::wire::version::Version;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The lock file's name, at the workspace root.
pub const LOCK_FILE: &str = "skillbundle.lock";
/// The lock format this version reads and writes.
pub const FORMAT: &str = "skillbundle-lock/1";

/// One published schema: its identity, digest and content.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaEntry {
    /// The schema's identity URI.
    pub schema_uri: String,
    /// Its version.
    pub version: Version,
    /// Its JSON Schema dialect.
    pub dialect: String,
    /// SHA-256 of its canonical bytes.
    pub digest: Digest,
    /// The schema's canonical (JCS) bytes; `digest` is their SHA-256. Bytes, not a tree:
    /// the lock of 10,000 skills holds 30,000 schemas, and as trees they took more than a
    /// gigabyte. [`SchemaEntry::schema`] parses one when a comparison needs it.
    pub jcs: SchemaBytes,
}

impl SchemaEntry {
    /// An entry for `schema`, canonicalized and digested here.
    pub fn new(schema_uri: String, version: Version, dialect: String, schema: &Value) -> Self {
        let jcs = crate::wire::digest::jcs(schema);
        SchemaEntry {
            schema_uri,
            version,
            dialect,
            digest: Digest::of_bytes(&jcs),
            jcs: jcs.into(),
        }
    }

    /// The schema as a value (parsed from its canonical bytes, members in JCS order).
    pub fn schema(&self) -> Value {
        crate::interface::parse_canonical(&self.jcs.bytes())
    }
}

/// A Schema Reference as a skill version used it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaUse {
    /// The schema's role in the skill.
    pub role: Role,
    /// The supporting-record kind, for [`Role::Record`].
    pub kind: Option<String>,
    /// The schema's identity URI.
    pub schema_uri: String,
    /// Its version.
    pub version: Version,
    /// Its digest.
    pub digest: Digest,
}

impl SchemaUse {
    /// `input`, `output`, or `record <kind>`.
    pub fn label(&self) -> String {
        match &self.kind {
            Some(k) => format!("record {k}"),
            None => self.role.as_str().to_string(),
        }
    }
}

/// One published skill version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    /// The skill's id.
    pub skill_id: String,
    /// The skill's version.
    pub skill_version: Version,
    /// The draft interface version its document follows.
    pub interface_version: String,
    /// The digest of its Skill Interface Document.
    pub interface_digest: Digest,
    /// Input, output, then the records, in document order.
    pub schemas: Vec<SchemaUse>,
    /// The document's `interaction.supported_response_modes`.
    pub supported_response_modes: Vec<ResponseMode>,
    /// The document's `interaction.cancellable`.
    pub cancellable: bool,
    /// The document's `authority.default_mode`.
    pub default_mode: DefaultMode,
    /// The document's `authority.approval_may_be_required`.
    pub approval_may_be_required: bool,
}

/// Key of a schema entry: (schema_uri, version).
pub type SchemaKey = (String, Version);
/// Key of a skill entry: (skill_id, skill_version).
pub type SkillKey = (String, Version);

/// A set of published schemas and skill versions: the lock's content, or what a
/// workspace or bundle would publish.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    /// Every schema version, by (schema_uri, version).
    pub schemas: BTreeMap<SchemaKey, SchemaEntry>,
    /// Every skill version, by (skill_id, skill_version).
    pub skills: BTreeMap<SkillKey, SkillEntry>,
}

/// The versions recorded under `name` in a map keyed by (name, version), ascending.
fn versions_of<T>(map: &BTreeMap<(String, Version), T>, name: &str) -> Vec<Version> {
    let lowest = (name.to_string(), Version::new(0, 0));
    let highest = (name.to_string(), Version::new(u64::MAX, u64::MAX));
    map.range(lowest..=highest).map(|((_, v), _)| *v).collect()
}

/// An attempt to record an identity that is already recorded with other content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The identity: `schema <uri> version <v>` or `skill <id> version <v>`.
    pub what: String,
    /// The digest recorded first.
    pub recorded: Digest,
    /// The other digest offered for it.
    pub offered: Digest,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} appears twice with different content ({} and {})",
            self.what, self.recorded, self.offered
        )
    }
}

impl std::error::Error for Conflict {}

impl Ledger {
    /// Every recorded version of a schema_uri, ascending. A range of the sorted keys, not
    /// a scan: the release rules ask this once per schema, and a scan made a check of
    /// 10,000 skills quadratic in the size of the lock.
    pub fn schema_versions(&self, schema_uri: &str) -> Vec<Version> {
        versions_of(&self.schemas, schema_uri)
    }

    /// Every recorded version of a skill_id, ascending (a range, as above).
    pub fn skill_versions(&self, skill_id: &str) -> Vec<Version> {
        versions_of(&self.skills, skill_id)
    }

    /// The entry of `schema_uri` at `version`, if recorded.
    pub fn schema(&self, schema_uri: &str, version: Version) -> Option<&SchemaEntry> {
        self.schemas.get(&(schema_uri.to_string(), version))
    }

    /// The entry of `skill_id` at `version`, if recorded.
    pub fn skill(&self, skill_id: &str, version: Version) -> Option<&SkillEntry> {
        self.skills.get(&(skill_id.to_string(), version))
    }

    /// Add a schema entry. `Ok(true)` when added, `Ok(false)` when the same entry was
    /// already there; an entry is never replaced.
    pub fn add_schema(&mut self, entry: SchemaEntry) -> Result<bool, Conflict> {
        let key = (entry.schema_uri.clone(), entry.version);
        match self.schemas.get(&key) {
            Some(old) if old.digest == entry.digest && old.dialect == entry.dialect => Ok(false),
            Some(old) => Err(Conflict {
                what: format!("schema {} version {}", entry.schema_uri, entry.version),
                recorded: old.digest.clone(),
                offered: entry.digest,
            }),
            None => {
                self.schemas.insert(key, entry);
                Ok(true)
            }
        }
    }

    /// Add a skill entry, under the same rules as [`Ledger::add_schema`].
    pub fn add_skill(&mut self, entry: SkillEntry) -> Result<bool, Conflict> {
        let key = (entry.skill_id.clone(), entry.skill_version);
        match self.skills.get(&key) {
            Some(old) if old.interface_digest == entry.interface_digest => Ok(false),
            Some(old) => Err(Conflict {
                what: format!("skill {} version {}", entry.skill_id, entry.skill_version),
                recorded: old.interface_digest.clone(),
                offered: entry.interface_digest,
            }),
            None => {
                self.skills.insert(key, entry);
                Ok(true)
            }
        }
    }

    /// Add a skill and the schemas it uses, as its Skill Interface Document names them
    /// (the schemas' canonical bytes are shared with the document, not copied).
    pub fn add_document(&mut self, document: &Document) -> Result<(), Conflict> {
        let (skill, schemas) = entries_of(document);
        for s in schemas {
            self.add_schema(s)?;
        }
        self.add_skill(skill)?;
        Ok(())
    }

    /// Hold `reference`'s canonical bytes as this ledger's copy when it records the same
    /// schema (identity and digest): a lock and the workspace it records mostly hold the
    /// same schemas, and at 10,000 skills with large schemas each copy is some 200 MB.
    pub fn share(&self, reference: &mut SchemaReference) {
        let recorded = self.schema(&reference.schema_uri, reference.version);
        if let Some(same) = recorded.filter(|s| s.digest == reference.digest) {
            reference.jcs = same.jcs.clone();
        }
    }

    /// The Skill Interface Document a skill entry describes, rebuilt from the entry and
    /// the schema entries it uses; `None` when a schema it uses is not recorded.
    pub fn document(&self, skill: &SkillEntry) -> Option<Document> {
        let mut refs = Vec::new();
        for u in &skill.schemas {
            let s = self.schema(&u.schema_uri, u.version)?;
            refs.push(SchemaReference::from_canonical(
                u.role,
                u.kind.clone(),
                s.schema_uri.clone(),
                s.version,
                s.dialect.clone(),
                s.digest.clone(),
                s.jcs.clone(),
            ));
        }
        Document::new(
            skill.skill_id.clone(),
            skill.skill_version,
            Interaction {
                supported_response_modes: skill.supported_response_modes.clone(),
                cancellable: skill.cancellable,
            },
            Authority {
                default_mode: skill.default_mode,
                approval_may_be_required: skill.approval_may_be_required,
            },
            refs,
            true,
        )
    }

    /// The lock file's JSON value: entries sorted by identity, members in a fixed
    /// order (identity first, the inline schema last, with its own members sorted).
    pub fn to_json(&self) -> Value {
        let schemas: Vec<Value> = self.schemas.values().map(schema_json).collect();
        let skills: Vec<Value> = self.skills.values().map(skill_json).collect();
        json!({"format": FORMAT, "schemas": schemas, "skills": skills})
    }

    /// The lock file's bytes: [`Ledger::to_json`] pretty-printed, with a final newline.
    /// The same ledger always gives the same bytes. They are written an entry at a time
    /// (each entry is pretty-printed and indented to its place), so the whole lock never
    /// exists as one tree; a test checks they equal printing `to_json` whole.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Write [`Ledger::to_bytes`] to `out` an entry at a time, never holding them all:
    /// the lock of 10,000 skills is over 100 MB.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(b"{\n  \"format\": ")?;
        out.write_all(&serde_json::to_vec(FORMAT).expect("a string serializes"))?;
        out.write_all(b",\n  \"schemas\": ")?;
        pretty_list(out, self.schemas.values().map(schema_json))?;
        out.write_all(b",\n  \"skills\": ")?;
        pretty_list(out, self.skills.values().map(skill_json))?;
        out.write_all(b"\n}\n")
    }

    /// The SHA-256 of [`Ledger::to_bytes`], computed as they are written, not held.
    pub fn digest(&self) -> Digest {
        let mut hasher = sha2::Sha256::default();
        self.write_to(&mut hasher).expect("hashing cannot fail");
        Digest::of_hash(&sha2::Digest::finalize(hasher))
    }

    /// Parse and check a lock file. `display` names it in findings.
    pub fn parse(bytes: &[u8], display: &Path) -> Result<Ledger, Vec<Finding>> {
        // Each recorded schema is canonicalized as soon as it is read and kept only as
        // its JCS bytes (in `canonical`, by entry index, with `null` in its place), and
        // each entry of `schemas` and `skills` is read into its typed form as soon as it
        // is parsed (`null` in its place too), so the lock never exists as one tree: at
        // 10,000 skills the entries' trees alone were some 130 MB.
        let mut r = Reader::new(bytes, display);
        let mut read_in_place = |path: &[String], value: Value| -> Value {
            match path {
                [list, i, schema] if list == "schemas" && schema == "schema" => {
                    if let (Ok(i), Some(jcs)) = (i.parse::<usize>(), canonical_schema(&value)) {
                        r.canonical.insert(i, jcs);
                        return Value::Null;
                    }
                }
                [list, i] if list == "schemas" => {
                    if let Ok(i) = i.parse::<usize>() {
                        let entry = r.schema_entry(&value, &format!("/schemas/{i}"), i);
                        r.read_schemas.insert(i, entry);
                        return Value::Null;
                    }
                }
                [list, i] if list == "skills" => {
                    if let Ok(i) = i.parse::<usize>() {
                        let entry = r.skill_entry(&value, &format!("/skills/{i}"));
                        r.read_skills.insert(i, entry);
                        return Value::Null;
                    }
                }
                _ => {}
            }
            value
        };
        let value =
            crate::wire::json::parse_with_hook(bytes, 3, &mut read_in_place).map_err(|e| {
                vec![lock_finding(
                    Location::file(display).with_position(e.line, e.column),
                    format!("the lock file is not valid I-JSON: {}", e.message),
                )]
            })?;
        let ledger = r.ledger(&value);
        if r.findings.is_empty() {
            Ok(ledger)
        } else {
            Err(r.findings)
        }
    }

    /// Read `root/skillbundle.lock`; an absent file is an empty ledger.
    ///
    /// The file is read a piece at a time (`Ledger::read_streamed`): the lock of 10,000
    /// skills with large schemas is some 400 MB, more than a build may hold besides
    /// everything else. Only when that finds something to report is the file read whole
    /// and parsed by [`Ledger::parse`], which says what and where; so the findings are
    /// those of one reader, whichever path a file takes.
    pub fn load(root: &Path) -> Result<LockFile, Vec<Finding>> {
        let path = root.join(LOCK_FILE);
        let io_finding = |e: std::io::Error| {
            vec![Finding::at_file(
                Code::Io,
                format!("cannot read the lock file: {e}"),
                &path,
            )]
        };
        let streamed = match std::fs::File::open(&path) {
            Ok(mut file) => Ledger::read_streamed(&mut file, &path).map_err(io_finding)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(LockFile {
                    path,
                    content: None,
                    ledger: Ledger::default(),
                })
            }
            Err(e) => return Err(io_finding(e)),
        };
        let (ledger, content) = match streamed {
            Some(read) => read,
            None => {
                let bytes = std::fs::read(&path).map_err(io_finding)?;
                (Ledger::parse(&bytes, &path)?, lf_digest(&bytes))
            }
        };
        Ok(LockFile {
            path,
            content: Some(content),
            ledger,
        })
    }

    /// Read a lock file from `file` without holding it: each entry of `schemas` and
    /// `skills` is cut out as it arrives ([`crate::wire::json::split_arrays`]), and batches of
    /// entries are parsed, checked and reduced to their typed form in parallel, exactly as
    /// [`Ledger::parse`] reads them in place. Returns the ledger and the file's
    /// [`lf_digest`]; `None` when anything would be reported (the caller then asks
    /// [`Ledger::parse`] what), so this path only ever accepts what that one accepts.
    fn read_streamed(
        file: &mut impl std::io::Read,
        display: &Path,
    ) -> std::io::Result<Option<(Ledger, Digest)>> {
        use rayon::prelude::*;
        /// Entries are read in batches of about this many bytes of text.
        const BATCH: usize = 4 << 20;
        const LISTS: [&str; 2] = ["schemas", "skills"];
        let mut hasher = LfDigest::default();
        let mut batch: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        let mut batch_bytes = 0;
        let mut r = Reader::new(b"", display);
        let mut counts = [0usize; 2];
        let mut refused = false;
        let mut run_batch = |batch: &mut Vec<(usize, usize, Vec<u8>)>, r: &mut Reader| -> bool {
            let read: Vec<_> = batch
                .par_drain(..)
                .map(|(list, i, text)| (list, i, read_entry(list == 0, i, &text, display)))
                .collect();
            for (list, i, entry) in read {
                match entry {
                    Some(Entry::Schema(e)) => _ = r.read_schemas.insert(i, Some(e)),
                    Some(Entry::Skill(e)) => _ = r.read_skills.insert(i, Some(e)),
                    None => return false,
                }
                counts[list] += 1;
            }
            true
        };
        let skeleton = crate::wire::json::split_arrays(
            file,
            &LISTS,
            &mut |chunk| hasher.update(chunk),
            &mut |list, i, text| {
                batch_bytes += text.len();
                batch.push((list, i, text));
                if batch_bytes >= BATCH {
                    batch_bytes = 0;
                    refused |= !run_batch(&mut batch, &mut r);
                }
                !refused
            },
        )?;
        let Some(skeleton) = skeleton else {
            return Ok(None);
        };
        if !run_batch(&mut batch, &mut r) {
            return Ok(None);
        }
        let Ok(value) = crate::wire::json::parse(&skeleton) else {
            return Ok(None);
        };
        // Every entry must have been cut out (a list named with an escape in its name is
        // not, and is left to the whole-file reader).
        for (list, name) in LISTS.iter().enumerate() {
            let cut = value
                .get(name)
                .and_then(Value::as_array)
                .is_some_and(|a| a.len() == counts[list] && a.iter().all(Value::is_null));
            if !cut {
                return Ok(None);
            }
        }
        let ledger = r.ledger(&value);
        Ok(r.findings.is_empty().then(|| (ledger, hasher.finish())))
    }
}

/// The canonical bytes of a recorded schema read in place of its tree (both lock
/// readers keep them instead); `None` for what is not a schema, left for the entry's
/// check to report.
fn canonical_schema(value: &Value) -> Option<Arc<[u8]>> {
    (value.is_object() || value.is_boolean()).then(|| crate::wire::digest::jcs(value).into())
}

/// A lock entry read on its own.
enum Entry {
    Schema(SchemaEntry),
    Skill(SkillEntry),
}

/// Entry `i` of the lock's `schemas` (or `skills`) list, from its text; `None` when
/// anything about it would be reported.
fn read_entry(schema: bool, i: usize, text: &[u8], display: &Path) -> Option<Entry> {
    let mut r = Reader::new(b"", display);
    let mut canonical = None;
    let mut read_in_place = |path: &[String], value: Value| -> Value {
        if schema && path == ["schema"] {
            if let Some(jcs) = canonical_schema(&value) {
                canonical = Some(jcs);
                return Value::Null;
            }
        }
        value
    };
    // The entry sits in the root object's list: two containers deep.
    let value = crate::wire::json::parse_nested_with_hook(text, 2, 1, &mut read_in_place).ok()?;
    if let Some(jcs) = canonical {
        r.canonical.insert(i, jcs);
    }
    let entry = if schema {
        r.schema_entry(&value, "", i).map(Entry::Schema)
    } else {
        r.skill_entry(&value, "").map(Entry::Skill)
    };
    entry.filter(|_| r.findings.is_empty())
}

/// The SHA-256 of bytes given a piece at a time, each CRLF read as LF (a CR that ends a
/// piece waits for the next one).
#[derive(Default)]
struct LfDigest {
    hasher: sha2::Sha256,
    cr: bool,
}

impl LfDigest {
    fn update(&mut self, piece: &[u8]) {
        use sha2::Digest as _;
        if piece.is_empty() {
            return;
        }
        if std::mem::take(&mut self.cr) && piece.first() != Some(&b'\n') {
            self.hasher.update(b"\r");
        }
        let mut start = 0;
        while let Some(at) = piece[start..].windows(2).position(|w| w == b"\r\n") {
            self.hasher.update(&piece[start..start + at]);
            start += at + 1;
        }
        let rest = &piece[start..];
        match rest.strip_suffix(b"\r") {
            Some(before) => {
                self.hasher.update(before);
                self.cr = true;
            }
            None => self.hasher.update(rest),
        }
    }

    fn finish(mut self) -> Digest {
        use sha2::Digest as _;
        if self.cr {
            self.hasher.update(b"\r");
        }
        Digest::of_hash(&self.hasher.finalize())
    }
}

/// A lock file as found on disk.
#[derive(Debug, Clone)]
pub struct LockFile {
    /// Where the lock is (or would be).
    pub path: PathBuf,
    /// The digest of the bytes read, each CRLF read as LF (a lock checked out with
    /// Windows line endings is unchanged); `None` when there is no lock file yet. Only
    /// whether a rewrite would change the file is ever asked, so the bytes are not kept.
    pub content: Option<Digest>,
    /// What it records (empty when there is no lock yet).
    pub ledger: Ledger,
}

/// The SHA-256 of `bytes` with every CRLF read as LF, without copying them.
pub fn lf_digest(bytes: &[u8]) -> Digest {
    let mut d = LfDigest::default();
    d.update(bytes);
    d.finish()
}

/// A schema entry as the lock writes it (the schema's members in JCS order, as parsed
/// from its canonical bytes).
fn schema_json(s: &SchemaEntry) -> Value {
    json!({
        "schema_uri": s.schema_uri,
        "version": s.version.to_string(),
        "dialect": s.dialect,
        "digest": s.digest.as_str(),
        "schema": s.schema(),
    })
}

/// A skill entry as the lock writes it.
fn skill_json(s: &SkillEntry) -> Value {
    let uses: Vec<Value> = s
        .schemas
        .iter()
        .map(|u| {
            let mut v = json!({"role": u.role.as_str()});
            if let Some(k) = &u.kind {
                v["kind"] = json!(k);
            }
            v["schema_uri"] = json!(u.schema_uri);
            v["version"] = json!(u.version.to_string());
            v["digest"] = json!(u.digest.as_str());
            v
        })
        .collect();
    json!({
        "skill_id": s.skill_id,
        "skill_version": s.skill_version.to_string(),
        "interface_version": s.interface_version,
        "interface_digest": s.interface_digest.as_str(),
        "interaction": {
            "supported_response_modes": s.supported_response_modes,
            "cancellable": s.cancellable,
        },
        "authority": {
            "default_mode": s.default_mode,
            "approval_may_be_required": s.approval_may_be_required,
        },
        "schemas": uses,
    })
}

/// A member array of the lock's top-level object, as serde_json's pretty printer writes
/// it there, one element at a time: `[]` when empty, else each element on its own lines
/// indented by four spaces. (No JSON string holds a raw newline, so re-indenting by
/// lines is exact.)
fn pretty_list(out: &mut impl Write, items: impl Iterator<Item = Value>) -> std::io::Result<()> {
    let mut any = false;
    for item in items {
        out.write_all(if any { b",\n    " } else { b"[\n    " })?;
        any = true;
        let text = serde_json::to_vec_pretty(&item).expect("a Value always serializes");
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                out.write_all(b"\n    ")?;
            }
            out.write_all(line)?;
        }
    }
    out.write_all(if any { b"\n  ]" } else { b"[]" })
}

fn lock_finding(location: Location, message: String) -> Finding {
    Finding::new(Code::LockInvalid, message, location).with_help(
        "skillbundle.lock is written by `skillbundle build`; restore it from version control instead of editing it by hand",
    )
}

/// Write `ledger`'s lock file to `path` atomically: streamed into a temporary file in
/// the same directory, flushed and renamed over `path`. A failure leaves the old file
/// untouched and nothing behind.
pub fn write_atomically(path: &Path, ledger: &Ledger) -> std::io::Result<()> {
    crate::fs::atomic_file::replace(path, ".skillbundle-lock-", |file| {
        let mut out = std::io::BufWriter::new(file);
        ledger.write_to(&mut out)?;
        out.flush()
    })
}

/// The ledger entries a Skill Interface Document describes: the skill and its schemas.
fn entries_of(document: &Document) -> (SkillEntry, Vec<SchemaEntry>) {
    let schemas: Vec<SchemaEntry> = document
        .schemas()
        .iter()
        .map(|r| SchemaEntry {
            schema_uri: r.schema_uri.clone(),
            version: r.version,
            dialect: r.dialect.clone(),
            digest: r.digest.clone(),
            jcs: r.jcs.clone(),
        })
        .collect();
    let uses = document
        .schemas()
        .iter()
        .map(|r| SchemaUse {
            role: r.role,
            kind: r.kind.clone(),
            schema_uri: r.schema_uri.clone(),
            version: r.version,
            digest: r.digest.clone(),
        })
        .collect();
    let skill = SkillEntry {
        skill_id: document.skill_id.clone(),
        skill_version: document.skill_version,
        interface_version: INTERFACE_VERSION.to_string(),
        interface_digest: document.digest.clone(),
        schemas: uses,
        supported_response_modes: document.interaction.supported_response_modes.clone(),
        cancellable: document.interaction.cancellable,
        default_mode: document.authority.default_mode,
        approval_may_be_required: document.authority.approval_may_be_required,
    };
    (skill, schemas)
}

/// Reads a lock file's value, collecting every problem with its pointer.
struct Reader<'a> {
    bytes: &'a [u8],
    display: &'a Path,
    /// The canonical bytes of `/schemas/<i>/schema`, read in place of the tree.
    canonical: BTreeMap<usize, Arc<[u8]>>,
    /// `/schemas/<i>` and `/skills/<i>`, read as they were parsed (`None`: refused, with
    /// the findings already recorded).
    read_schemas: BTreeMap<usize, Option<SchemaEntry>>,
    read_skills: BTreeMap<usize, Option<SkillEntry>>,
    findings: Vec<Finding>,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], display: &'a Path) -> Self {
        Reader {
            bytes,
            display,
            canonical: BTreeMap::new(),
            read_schemas: BTreeMap::new(),
            read_skills: BTreeMap::new(),
            findings: Vec::new(),
        }
    }

    fn fail(&mut self, pointer: &str, message: impl Into<String>) {
        let mut loc = Location::file(self.display).with_pointer(pointer);
        if let Some((l, c)) = crate::wire::json::locate(self.bytes, pointer) {
            loc = loc.with_position(l, c);
        }
        self.findings.push(lock_finding(loc, message.into()));
    }

    /// The object at `pointer`, checking it has exactly the `required` members plus
    /// any of `optional`.
    fn object<'v>(
        &mut self,
        v: &'v Value,
        pointer: &str,
        required: &[&str],
        optional: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(m) = v.as_object() else {
            self.fail(pointer, "expected an object");
            return None;
        };
        let mut ok = true;
        for k in m.keys() {
            if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
                self.fail(
                    &crate::wire::pointer::child(pointer, k),
                    format!("unknown member `{k}`"),
                );
                ok = false;
            }
        }
        for k in required {
            if !m.contains_key(*k) {
                self.fail(pointer, format!("missing member `{k}`"));
                ok = false;
            }
        }
        ok.then_some(m)
    }

    fn string(&mut self, m: &Map<String, Value>, pointer: &str, key: &str) -> Option<String> {
        match m.get(key).and_then(Value::as_str) {
            Some(s) if !s.is_empty() => Some(s.to_string()),
            _ => {
                self.fail(
                    &crate::wire::pointer::child(pointer, key),
                    format!("`{key}` must be a non-empty string"),
                );
                None
            }
        }
    }

    fn version(&mut self, m: &Map<String, Value>, pointer: &str, key: &str) -> Option<Version> {
        let s = self.string(m, pointer, key)?;
        match s.parse() {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(&crate::wire::pointer::child(pointer, key), format!("{e}"));
                None
            }
        }
    }

    fn digest(&mut self, m: &Map<String, Value>, pointer: &str, key: &str) -> Option<Digest> {
        let s = self.string(m, pointer, key)?;
        match s.parse() {
            Ok(d) => Some(d),
            Err(e) => {
                self.fail(&crate::wire::pointer::child(pointer, key), e.to_string());
                None
            }
        }
    }

    fn boolean(&mut self, m: &Map<String, Value>, pointer: &str, key: &str) -> Option<bool> {
        let b = m.get(key).and_then(Value::as_bool);
        if b.is_none() {
            self.fail(
                &crate::wire::pointer::child(pointer, key),
                format!("`{key}` must be a boolean"),
            );
        }
        b
    }

    fn typed<T: serde::de::DeserializeOwned>(
        &mut self,
        m: &Map<String, Value>,
        pointer: &str,
        key: &str,
    ) -> Option<T> {
        let v = m.get(key)?.clone();
        match serde_json::from_value(v) {
            Ok(t) => Some(t),
            Err(e) => {
                self.fail(&crate::wire::pointer::child(pointer, key), format!("{e}"));
                None
            }
        }
    }

    fn array<'v>(&mut self, m: &'v Map<String, Value>, pointer: &str, key: &str) -> &'v [Value] {
        match m.get(key).and_then(Value::as_array) {
            Some(a) => a,
            None => {
                self.fail(
                    &crate::wire::pointer::child(pointer, key),
                    format!("`{key}` must be an array"),
                );
                &[]
            }
        }
    }

    fn ledger(&mut self, value: &Value) -> Ledger {
        let mut ledger = Ledger::default();
        // What reading the entries found is reported only when the lock is one this
        // version reads at all.
        let entry_findings = std::mem::take(&mut self.findings);
        let Some(top) = self.object(value, "", &["format", "schemas", "skills"], &[]) else {
            return ledger;
        };
        if top.get("format").and_then(Value::as_str) != Some(FORMAT) {
            self.fail(
                "/format",
                format!(
                    "unsupported lock format {}; this skillbundle reads {FORMAT:?}",
                    top.get("format").map_or("(none)".into(), Value::to_string)
                ),
            );
            return ledger;
        }
        self.findings.extend(entry_findings);
        let mut first_at: BTreeMap<SchemaKey, String> = BTreeMap::new();
        // A refused schema entry is reported once, not again by every skill using it.
        let mut schemas_refused = false;
        for (i, v) in self.array(top, "", "schemas").iter().enumerate() {
            let p = format!("/schemas/{i}");
            let entry = match self.read_schemas.remove(&i) {
                Some(read) => read,
                None => self.schema_entry(v, &p, i),
            };
            schemas_refused |= entry.is_none();
            if let Some(entry) = entry {
                let key = (entry.schema_uri.clone(), entry.version);
                if let Some(first) = first_at.get(&key) {
                    self.fail(
                        &p,
                        format!(
                            "duplicate entry for schema {} version {} (first at {first})",
                            key.0, key.1
                        ),
                    );
                    continue;
                }
                first_at.insert(key.clone(), p);
                ledger.schemas.insert(key, entry);
            }
        }
        let mut first_skill: BTreeMap<SkillKey, String> = BTreeMap::new();
        for (i, v) in self.array(top, "", "skills").iter().enumerate() {
            let p = format!("/skills/{i}");
            let read = match self.read_skills.remove(&i) {
                Some(read) => read,
                None => self.skill_entry(v, &p),
            };
            let Some(entry) = read else {
                continue;
            };
            let key = (entry.skill_id.clone(), entry.skill_version);
            if let Some(first) = first_skill.get(&key) {
                self.fail(
                    &p,
                    format!(
                        "duplicate entry for skill {} version {} (first at {first})",
                        key.0, key.1
                    ),
                );
                continue;
            }
            // Every schema it used is recorded, with the same digest, and together they
            // reproduce the recorded interface_digest.
            let mut complete = true;
            for (j, u) in entry.schemas.iter().enumerate() {
                match ledger.schema(&u.schema_uri, u.version) {
                    Some(s) if s.digest == u.digest => {}
                    Some(s) => {
                        self.fail(
                            &format!("{p}/schemas/{j}/digest"),
                            format!(
                                "the skill used schema {} version {} with digest {}, but the lock records it with digest {}",
                                u.schema_uri, u.version, u.digest, s.digest
                            ),
                        );
                        complete = false;
                    }
                    None if schemas_refused => complete = false,
                    None => {
                        self.fail(
                            &format!("{p}/schemas/{j}"),
                            format!(
                                "the skill uses schema {} version {}, which has no entry in `schemas`",
                                u.schema_uri, u.version
                            ),
                        );
                        complete = false;
                    }
                }
            }
            if complete {
                let rebuilt = ledger.document(&entry).map(|d| d.digest);
                if rebuilt.as_ref() != Some(&entry.interface_digest) {
                    self.fail(
                        &format!("{p}/interface_digest"),
                        format!(
                            "the entry does not reproduce its interface_digest {} (rebuilt: {})",
                            entry.interface_digest,
                            rebuilt.map_or("nothing".into(), |d| d.to_string())
                        ),
                    );
                    continue;
                }
            }
            first_skill.insert(key.clone(), p);
            ledger.skills.insert(key, entry);
        }
        ledger
    }

    fn schema_entry(&mut self, v: &Value, p: &str, i: usize) -> Option<SchemaEntry> {
        let m = self.object(
            v,
            p,
            &["schema_uri", "version", "dialect", "digest", "schema"],
            &[],
        )?;
        let schema_uri = self.string(m, p, "schema_uri");
        let version = self.version(m, p, "version");
        let dialect = self.string(m, p, "dialect");
        let digest = self.digest(m, p, "digest");
        let jcs: Arc<[u8]> = match (m.get("schema")?, self.canonical.remove(&i)) {
            (Value::Null, Some(jcs)) => jcs,
            (schema, _) if schema.is_object() || schema.is_boolean() => {
                crate::wire::digest::jcs(schema).into()
            }
            _ => {
                self.fail(
                    &format!("{p}/schema"),
                    "`schema` must be a JSON Schema (object or boolean)",
                );
                return None;
            }
        };
        let digest = digest?;
        let actual = Digest::of_bytes(&jcs);
        if actual != digest {
            self.fail(
                &format!("{p}/digest"),
                format!("the recorded digest {digest} does not match the recorded schema, which hashes to {actual}"),
            );
            return None;
        }
        // Held packed (see crate::wire::schema_bytes): a lock records every schema ever
        // published, and only those a new version is compared with are read again.
        Some(SchemaEntry {
            schema_uri: schema_uri?,
            version: version?,
            dialect: dialect?,
            digest,
            jcs: SchemaBytes::from(jcs).packed(),
        })
    }

    fn skill_entry(&mut self, v: &Value, p: &str) -> Option<SkillEntry> {
        let m = self.object(
            v,
            p,
            &[
                "skill_id",
                "skill_version",
                "interface_version",
                "interface_digest",
                "schemas",
                "interaction",
                "authority",
            ],
            &[],
        )?;
        let skill_id = self.string(m, p, "skill_id");
        let skill_version = self.version(m, p, "skill_version");
        let interface_version = self.string(m, p, "interface_version");
        if interface_version
            .as_deref()
            .is_some_and(|v| v != INTERFACE_VERSION)
        {
            self.fail(
                &format!("{p}/interface_version"),
                format!(
                    "unsupported interface_version; this skillbundle writes {INTERFACE_VERSION:?}"
                ),
            );
        }
        let interface_digest = self.digest(m, p, "interface_digest");
        let mut uses = Vec::new();
        let mut ok = true;
        for (j, u) in self.array(m, p, "schemas").iter().enumerate() {
            let up = format!("{p}/schemas/{j}");
            match self.schema_use(u, &up) {
                Some(u) => uses.push(u),
                None => ok = false,
            }
        }
        let roles: Vec<Role> = uses.iter().map(|u| u.role).collect();
        let count = |r| roles.iter().filter(|x| **x == r).count();
        if ok && (count(Role::Input) != 1 || count(Role::Output) != 1) {
            self.fail(
                &format!("{p}/schemas"),
                "a skill entry uses exactly one input and one output schema",
            );
            ok = false;
        }
        let ip = format!("{p}/interaction");
        let interaction = self.object(
            m.get("interaction")?,
            &ip,
            &["supported_response_modes", "cancellable"],
            &[],
        );
        let (modes, cancellable) = match interaction {
            Some(i) => (
                self.typed::<Vec<ResponseMode>>(i, &ip, "supported_response_modes"),
                self.boolean(i, &ip, "cancellable"),
            ),
            None => (None, None),
        };
        let ap = format!("{p}/authority");
        let authority = self.object(
            m.get("authority")?,
            &ap,
            &["default_mode", "approval_may_be_required"],
            &[],
        );
        let (mode, approval) = match authority {
            Some(a) => (
                self.typed::<DefaultMode>(a, &ap, "default_mode"),
                self.boolean(a, &ap, "approval_may_be_required"),
            ),
            None => (None, None),
        };
        if !ok {
            return None;
        }
        Some(SkillEntry {
            skill_id: skill_id?,
            skill_version: skill_version?,
            interface_version: interface_version?,
            interface_digest: interface_digest?,
            schemas: uses,
            supported_response_modes: modes?,
            cancellable: cancellable?,
            default_mode: mode?,
            approval_may_be_required: approval?,
        })
    }

    fn schema_use(&mut self, v: &Value, p: &str) -> Option<SchemaUse> {
        let m = self.object(
            v,
            p,
            &["role", "schema_uri", "version", "digest"],
            &["kind"],
        )?;
        let role = match m.get("role").and_then(Value::as_str) {
            Some("input") => Some(Role::Input),
            Some("output") => Some(Role::Output),
            Some("record") => Some(Role::Record),
            _ => {
                self.fail(
                    &format!("{p}/role"),
                    "`role` must be \"input\", \"output\" or \"record\"",
                );
                None
            }
        };
        let kind = match m.get("kind") {
            None => None,
            Some(_) => Some(self.string(m, p, "kind")?),
        };
        if let Some(r) = role {
            if (r == Role::Record) != kind.is_some() {
                self.fail(
                    p,
                    "a record schema has a `kind`; input and output schemas do not",
                );
                return None;
            }
        }
        Some(SchemaUse {
            role: role?,
            kind,
            schema_uri: self.string(m, p, "schema_uri")?,
            version: self.version(m, p, "version")?,
            digest: self.digest(m, p, "digest")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_reads_as_lf_and_nothing_else_changes() {
        let lf = lf_digest(b"{\n  \"a\": 1\n}\n");
        assert_eq!(lf, Digest::of_bytes(b"{\n  \"a\": 1\n}\n"));
        assert_eq!(lf_digest(b"{\r\n  \"a\": 1\r\n}\r\n"), lf);
        assert_ne!(lf_digest(b"{\r  \"a\": 1\n}\n"), lf);
        assert_eq!(lf_digest(b"\r\r\n"), Digest::of_bytes(b"\r\n"));
        assert_eq!(lf_digest(b""), Digest::of_bytes(b""));
        // Given in pieces, a CR at a piece's end waits for what follows (even nothing).
        let mut d = LfDigest::default();
        for piece in [&b"a\r"[..], b"", b"\nb\r"] {
            d.update(piece);
        }
        assert_eq!(d.finish(), Digest::of_bytes(b"a\nb\r"));
    }

    #[test]
    fn versions_of_one_name_only() {
        let map: BTreeMap<(String, Version), ()> = [
            ("a", Version::new(1, 0)),
            ("a", Version::new(1, 10)),
            ("a", Version::new(u64::MAX, u64::MAX)),
            ("a/b", Version::new(0, 1)),
            ("ab", Version::new(2, 0)),
            ("", Version::new(0, 0)),
        ]
        .into_iter()
        .map(|(n, v)| ((n.to_string(), v), ()))
        .collect();
        assert_eq!(
            versions_of(&map, "a"),
            [
                Version::new(1, 0),
                Version::new(1, 10),
                Version::new(u64::MAX, u64::MAX)
            ]
        );
        assert_eq!(versions_of(&map, ""), [Version::new(0, 0)]);
        assert!(versions_of(&map, "b").is_empty());
    }

    fn sample() -> Ledger {
        let mut l = Ledger::default();
        let doc = json!({
            "interface_version": "1.0",
            "skill_id": "s",
            "skill_version": "1.0",
            "input_schema": {"schema_uri": "urn:in", "version": "1.0", "dialect": "https://json-schema.org/draft/2020-12/schema", "digest": Digest::of_value(&json!({"type": "object"})).as_str(), "resolution": {"type": "inline", "schema": {"type": "object"}}},
            "output_schema": {"schema_uri": "urn:out", "version": "1.0", "dialect": "https://json-schema.org/draft/2020-12/schema", "digest": Digest::of_value(&json!(true)).as_str(), "resolution": {"type": "inline", "schema": true}},
            "supporting_record_schemas": [],
            "interaction": {"supported_response_modes": ["sync"], "cancellable": false},
            "authority": {"default_mode": "observe_only", "approval_may_be_required": false},
        });
        let schema = crate::interface::packaged_schema::InterfaceSchema::packaged().unwrap();
        let document = Document::read(schema, &doc).unwrap();
        assert_eq!(document.digest, Digest::of_value(&doc));
        l.add_document(&document).unwrap();
        l
    }

    #[test]
    fn round_trips_and_rebuilds_the_document() {
        let l = sample();
        let bytes = l.to_bytes();
        let back = Ledger::parse(&bytes, Path::new("skillbundle.lock")).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.to_bytes(), bytes);
        // Written an entry at a time, the bytes are those of printing the tree whole.
        let mut whole = serde_json::to_vec_pretty(&l.to_json()).unwrap();
        whole.push(b'\n');
        assert_eq!(bytes, whole);
        let mut empty = serde_json::to_vec_pretty(&Ledger::default().to_json()).unwrap();
        empty.push(b'\n');
        assert_eq!(Ledger::default().to_bytes(), empty);
        let skill = back.skill("s", Version::new(1, 0)).unwrap();
        assert_eq!(back.document(skill).unwrap().digest, skill.interface_digest);
    }

    #[test]
    fn entries_are_never_replaced() {
        let mut l = sample();
        let entry = l.schemas.values().next().unwrap().clone();
        assert_eq!(l.add_schema(entry.clone()), Ok(false));
        let entry = SchemaEntry::new(
            entry.schema_uri,
            entry.version,
            entry.dialect,
            &json!({"type": "string"}),
        );
        assert!(l.add_schema(entry).is_err());
    }

    fn refused(edit: impl FnOnce(&mut Value)) -> Vec<Finding> {
        let mut v = sample().to_json();
        edit(&mut v);
        let bytes = serde_json::to_vec_pretty(&v).unwrap();
        Ledger::parse(&bytes, Path::new("skillbundle.lock")).unwrap_err()
    }

    #[test]
    fn refuses_bad_locks_with_pointers() {
        let f = refused(|v| v["schemas"][0]["digest"] = json!("sha256:XYZ"));
        assert_eq!(f[0].code, Code::LockInvalid);
        assert_eq!(f[0].location.pointer.as_deref(), Some("/schemas/0/digest"));
        assert!(f[0].location.line.is_some());
        let f = refused(|v| v["schemas"][0]["version"] = json!("1.00"));
        assert_eq!(f[0].location.pointer.as_deref(), Some("/schemas/0/version"));
        let f = refused(|v| {
            let dup = v["schemas"][0].clone();
            v["schemas"].as_array_mut().unwrap().push(dup);
        });
        assert!(f[0].message.contains("duplicate entry"), "{f:?}");
        let f = refused(|v| v["schemas"][1]["schema"] = json!({"type": "string"}));
        assert!(
            f[0].message.contains("does not match the recorded schema"),
            "{f:?}"
        );
        let f = refused(|v| v["skills"][0]["authority"]["default_mode"] = json!("execute"));
        assert!(
            f[0].message
                .contains("does not reproduce its interface_digest"),
            "{f:?}"
        );
        let f = refused(|v| v["format"] = json!("skillbundle-lock/9"));
        assert!(f[0].message.contains("unsupported lock format"));
        let f = refused(|v| v["extra"] = json!(1));
        assert!(f[0].message.contains("unknown member"));
        assert!(Ledger::parse(b"{\"format\": 1,", Path::new("l")).is_err());
    }

    fn streamed(bytes: &[u8], step: usize) -> Option<(Ledger, Digest)> {
        Ledger::read_streamed(&mut crate::wire::json::Trickle(bytes, step), Path::new("l")).unwrap()
    }

    #[test]
    fn a_streamed_read_agrees_with_the_whole_file_reader() {
        let bytes = sample().to_bytes();
        let crlf = String::from_utf8(bytes.clone())
            .unwrap()
            .replace('\n', "\r\n")
            .into_bytes();
        for text in [&bytes, &crlf] {
            for step in [1, 2, 7, 1 << 20] {
                let (ledger, digest) = streamed(text, step).expect("read streamed");
                assert_eq!(ledger, Ledger::parse(text, Path::new("l")).unwrap());
                assert_eq!(digest, lf_digest(&bytes));
            }
        }
        let empty = Ledger::default().to_bytes();
        assert_eq!(streamed(&empty, 3).unwrap().0, Ledger::default());
        // Whatever the whole-file reader refuses, the streamed one leaves to it.
        let edits: [fn(&mut Value); 6] = [
            |v| v["schemas"][0]["digest"] = json!("sha256:XYZ"),
            |v| {
                let dup = v["schemas"][0].clone();
                v["schemas"].as_array_mut().unwrap().push(dup);
            },
            |v| v["schemas"][1]["schema"] = json!({"type": "string"}),
            |v| v["skills"][0]["authority"]["default_mode"] = json!("execute"),
            |v| v["format"] = json!("skillbundle-lock/9"),
            |v| v["extra"] = json!([1]),
        ];
        for edit in edits {
            let mut v = sample().to_json();
            edit(&mut v);
            let text = serde_json::to_vec_pretty(&v).unwrap();
            assert!(Ledger::parse(&text, Path::new("l")).is_err());
            assert!(streamed(&text, 5).is_none());
        }
        for text in [
            &b"{\"format\": 1,"[..],
            b"{\"format\": \"skillbundle-lock/1\", \"schemas\": [,], \"skills\": []}",
            b"{\"format\": \"skillbundle-lock/1\", \"schemas\": [], \"skills\": [1,]}",
            b"\xef\xbb\xbf{\"format\": \"skillbundle-lock/1\", \"schemas\": [], \"skills\": []}",
        ] {
            assert!(
                streamed(text, 4).is_none(),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // A list named through an escape is not cut out: left to the whole-file reader,
        // which accepts it.
        let escaped = String::from_utf8(bytes.clone()).unwrap().replacen(
            "\"schemas\"",
            "\"sch\\u0065mas\"",
            1,
        );
        assert!(streamed(escaped.as_bytes(), 9).is_none());
        assert_eq!(
            Ledger::parse(escaped.as_bytes(), Path::new("l")).unwrap(),
            sample()
        );
    }

    #[test]
    fn writes_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        write_atomically(&path, &Ledger::default()).unwrap();
        write_atomically(&path, &sample()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), sample().to_bytes());
        assert_eq!(sample().digest(), Digest::of_bytes(&sample().to_bytes()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
