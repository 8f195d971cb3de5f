//! Manifests: `skillbundle.yaml` and `skills/<dir>/skill.yaml`, the vendor's contract.
//!
//! The field names here are a user contract (README, "The workspace"), so they are declared once, as
//! serde structs with `deny_unknown_fields`: a typo is an error with a "did you mean",
//! never a silently ignored setting. Versions use [`Version`], so an unquoted `1.10`
//! is refused. Every path a manifest names is checked to stay inside the workspace.

use crate::card::a2a::CardFields;
use crate::finding::{Code, Finding, Location};
use crate::interface::{Authority, Document, Interaction, SchemaReference};
use crate::wire::version::Version;
use crate::wire::yaml::YamlError;
use serde::Deserialize;
use std::path::Path;

/// `skillbundle.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceManifest {
    /// The bundle's name and release version.
    pub bundle: BundleId,
    /// Skill directories, as paths or `*` patterns relative to the workspace.
    /// Default: every `skills/*` directory that holds a `skill.yaml`.
    #[serde(default)]
    pub skills: Option<Vec<String>>,
    /// Resource limits; omitted members keep their defaults.
    #[serde(default)]
    pub limits: crate::schema::limits::Limits,
    /// The strict schema lint's settings (`lint: {allow_keywords: [...]}`).
    #[serde(default)]
    pub lint: crate::schema::lint::Config,
    /// A skill without any example is an error (default: examples are optional).
    #[serde(default)]
    pub require_examples: bool,
    /// Skills the lock records that this workspace removes on purpose. Removal breaks
    /// every caller of the skill, so a recorded skill missing from the workspace is
    /// refused (`skill_removed`) unless it is listed here.
    #[serde(default)]
    pub removed_skills: Vec<String>,
}

/// The bundle's name and version, which name the archive `<name>-<version>.tar.gz`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleId {
    /// The bundle's name (also its file name).
    pub name: String,
    /// The bundle's release version.
    pub version: String,
}

/// `skills/<dir>/skill.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillManifest {
    /// The skill's id.
    pub skill_id: String,
    /// The skill's version, MAJOR.MINOR.
    pub skill_version: Version,
    /// The A2A AgentSkill fields of its card entry.
    pub card: CardFields,
    /// The skill input schema.
    pub input: SchemaSource,
    /// The skill output schema.
    pub output: SchemaSource,
    /// The supporting-record schemas, each with its kind.
    #[serde(default)]
    pub supporting_records: Vec<RecordSource>,
    /// The document's `interaction`.
    pub interaction: Interaction,
    /// The document's `authority`.
    pub authority: Authority,
}

impl SkillManifest {
    /// Assemble the Skill Interface Document for this skill from its manifest and its schema references
    /// (the input and output reference and the records', records in manifest order).
    /// `None` when the input or output reference is missing.
    pub fn assemble(&self, schemas: Vec<SchemaReference>) -> Option<Document> {
        let manifest = self;
        Document::new(
            manifest.skill_id.clone(),
            manifest.skill_version,
            manifest.interaction.clone(),
            manifest.authority.clone(),
            schemas,
            true,
        )
    }
}

/// Where a role's schema comes from and the identity it is published under.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaSource {
    /// The schema file, relative to the skill's folder.
    pub file: String,
    /// The identity URI it is published under.
    pub schema_uri: String,
    /// Its version, MAJOR.MINOR.
    pub version: Version,
    /// The JSON Schema dialect; the default one when absent.
    #[serde(default)]
    pub dialect: Option<String>,
}

/// A supporting-record schema: a kind plus a [`SchemaSource`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSource {
    /// The supporting-record kind.
    pub kind: String,
    /// The schema file, relative to the skill's folder.
    pub file: String,
    /// The identity URI it is published under.
    pub schema_uri: String,
    /// Its version, MAJOR.MINOR.
    pub version: Version,
    /// The JSON Schema dialect; the default one when absent.
    #[serde(default)]
    pub dialect: Option<String>,
}

impl RecordSource {
    /// The schema part, without the kind.
    pub fn source(&self) -> SchemaSource {
        SchemaSource {
            file: self.file.clone(),
            schema_uri: self.schema_uri.clone(),
            version: self.version,
            dialect: self.dialect.clone(),
        }
    }
}

/// The largest manifest (`skillbundle.yaml`, `skill.yaml`, an `.expect.yaml` sidecar)
/// read, in bytes. Real ones are a few kilobytes; the bound is checked before the file is
/// read, so a huge one costs neither memory nor parsing time.
pub const MAX_SOURCE_MANIFEST_BYTES: u64 = 1 << 20;

/// Read and parse a manifest file; every problem becomes a finding on `display`.
pub fn read<T: serde::de::DeserializeOwned>(path: &Path, display: &Path) -> Result<T, Finding> {
    let io = |e: std::io::Error| {
        Finding::at_file(Code::Io, format!("cannot read the manifest: {e}"), display)
    };
    if std::fs::metadata(path).map_err(io)?.len() > MAX_SOURCE_MANIFEST_BYTES {
        return Err(Finding::at_file(
            Code::ResourceLimitExceeded,
            "the manifest is larger than the size limit for manifests",
            display,
        ));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        Finding::at_file(
            Code::ManifestInvalid,
            "the manifest is not UTF-8 text",
            display,
        )
    })?;
    crate::wire::yaml::from_str(text)
        .map_err(|e| quote_as_written(yaml_finding(e, display, Code::ManifestInvalid), text))
}

/// For an unquoted version such as `1.10`, YAML hands over the float 1.1: suggest the
/// quoted text as written, read back from the source at the finding's position.
fn quote_as_written(mut finding: Finding, text: &str) -> Finding {
    let (Some(line), Some(column)) = (finding.location.line, finding.location.column) else {
        return finding;
    };
    if finding.code != Code::VersionInvalid || !finding.message.contains("read as a float") {
        return finding;
    }
    let token: String = text
        .lines()
        .nth(line - 1)
        .unwrap_or_default()
        .chars()
        .skip(column - 1)
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if let Ok(version) = token.parse::<Version>() {
        finding.message = format!(
            "the unquoted number {token} is read as a float, which loses the version's text; quote it: \"{version}\""
        );
        finding = finding.with_help(format!("write \"{version}\" (with the quotes)"));
    }
    finding
}

/// Turn a YAML error into a finding, classifying version and limit errors.
pub fn yaml_finding(e: YamlError, display: &Path, default: Code) -> Finding {
    let mut location = Location::file(display);
    location.line = e.line;
    location.column = e.column;
    let (code, mut message) = if e.limit {
        (Code::ResourceLimitExceeded, e.message.clone())
    } else if let Some(i) = e.message.find(crate::wire::version::ERROR_TAG) {
        (
            Code::VersionInvalid,
            e.message[i + crate::wire::version::ERROR_TAG.len()..].to_string(),
        )
    } else {
        (default, e.message.clone())
    };
    let mut finding = Finding::new(code, String::new(), location);
    if let Some((field, expected)) = &e.unknown_field {
        message = format!("unknown field `{field}`");
        match did_you_mean(field, expected) {
            Some(s) => finding = finding.with_help(format!("did you mean `{s}`?")),
            None => {
                finding = finding.with_help(format!("expected one of: {}", expected.join(", ")))
            }
        }
    }
    finding.message = message;
    finding
}

/// The closest expected name to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The archive file name of bundle `name` at `version`: `<name>-<version>.tar.gz`.
/// Both must satisfy [`crate::fs::sandbox::is_safe_name`]; the result is then one file name component.
pub fn archive_file_name(name: &str, version: &str) -> String {
    format!("{name}-{version}.tar.gz")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let fields = ["skill_id", "skill_version", "card", "input", "output"];
        assert_eq!(
            did_you_mean("skill_verison", &fields),
            Some("skill_version")
        );
        assert_eq!(did_you_mean("ouput", &fields), Some("output"));
        assert_eq!(did_you_mean("zzzzzzzz", &fields), None);
    }
}
