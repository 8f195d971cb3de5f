//! Findings: what every check returns instead of printing.
//!
//! A check never prints and never stops at the first problem. It returns a list of
//! [`Finding`]s — a stable machine code, a human message and a location — and the
//! binary decides how to render them (human, JSON, ...). Keeping findings as data is
//! what lets one run report every problem in every skill, and lets tests assert on
//! codes and locations instead of on text.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Stable finding codes. The string form ([`Code::as_str`]) is part of the CLI's
/// contract: CI scripts match on it, so a code is never renamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    /// A manifest (skillbundle.yaml, skill.yaml) is malformed or has unknown fields.
    ManifestInvalid,
    /// A version string is not canonical `MAJOR.MINOR`.
    VersionInvalid,
    /// A JSON (or YAML-authored JSON) value is not valid I-JSON.
    JsonInvalid,
    /// A path leaves the workspace, is absolute, or cannot be read as a regular file.
    PathInvalid,
    /// A domain schema or Skill Interface Document fails a schema rule.
    SchemaInvalid,
    /// A `$ref`/`$dynamicRef` does not resolve inside the inline schema.
    RefUnresolved,
    /// A `$ref`/`$dynamicRef` points outside the inline schema (network, file, meta-schema).
    RefExternal,
    /// `$schema` or an embedded resource selects a dialect other than the declared one.
    DialectMismatch,
    /// An example did not give the verdict its directory promises.
    FixtureFailed,
    /// One schema_uri + version carries two different contents.
    SchemaConflict,
    /// Two skills share a skill_id, or a skill uses a reserved id.
    DuplicateSkill,
    /// A recorded version's content changed.
    ImmutabilityViolation,
    /// A new version is not higher than the recorded ones.
    VersionNotIncreased,
    /// A change is breaking but the version step is not MAJOR.
    IncompatibleChange,
    /// An input exceeds a configured resource limit.
    ResourceLimitExceeded,
    /// The lock file would change under `--locked`.
    LockOutdated,
    /// The lock file is malformed, or an entry is inconsistent or duplicated.
    LockInvalid,
    /// A bundle archive is malformed or violates the bundle layout.
    BundleInvalid,
    /// A file or schema digest does not match what the manifest declares.
    DigestMismatch,
    /// A signature is malformed or does not verify.
    SignatureInvalid,
    /// No signature by a trusted key is present.
    UntrustedKey,
    /// A Skill Interface Document fails validation (draft condition `interface_invalid`).
    InterfaceInvalid,
    /// A base Agent Card is not an A2A 1.0 AgentCard or cannot take the bundle's fragment.
    CardInvalid,
    /// A registry could not be reached, or answered with a server or protocol error.
    RegistryError,
    /// A registry refused the credentials, or asked for some and none were found.
    RegistryUnauthorized,
    /// No manifest or blob at the reference.
    ArtifactNotFound,
    /// A registry artifact is not a skillbundle bundle (artifactType, media types, layers).
    ArtifactInvalid,
    /// A push would move a release-version tag to different content.
    TagImmutable,
    /// A bundle older than one already accepted was refused (anti-rollback).
    RollbackRefused,
    /// A release statement expired, is older than the age allowed, or is missing when required.
    ReleaseExpired,
    /// A pull that requires it found no signature referrer by a trusted key.
    ReferrerSignatureMissing,
    /// A build would replace a bundle of the same name and version with other content.
    ReleaseImmutable,
    /// An unsigned build would replace a signed bundle.
    SignatureDowngrade,
    /// A file could not be read or written (exit status 2).
    Io,
    /// A schema uses a keyword the dialect does not define (strict lint).
    UnknownKeyword,
    /// A closed schema requires a property it never declares (strict lint).
    RequiredUndeclared,
    /// A keyword cannot apply to any instance the schema's `type` admits (a warning).
    KeywordInapplicable,
    /// A file or folder is not where the workspace layout expects it: a misnamed or
    /// misplaced skill manifest, an unknown folder in a skill.
    LayoutUnexpected,
    /// A skill the lock records is missing from the workspace, and its removal is not
    /// stated.
    SkillRemoved,
    /// A relative `$ref` could name an embedded resource or a workspace file.
    RefAmbiguous,
}

impl Code {
    /// `resource_limit_exceeded` when a limit refused something, else `otherwise`: a
    /// lower error that knows only whether a limit stopped it picks its code with this.
    pub fn limit_or(limit: bool, otherwise: Code) -> Code {
        if limit {
            Code::ResourceLimitExceeded
        } else {
            otherwise
        }
    }

    /// Every code, in the order the reference table lists them.
    pub const ALL: &'static [Code] = &[
        Code::ManifestInvalid,
        Code::VersionInvalid,
        Code::JsonInvalid,
        Code::PathInvalid,
        Code::SchemaInvalid,
        Code::RefUnresolved,
        Code::RefExternal,
        Code::DialectMismatch,
        Code::FixtureFailed,
        Code::SchemaConflict,
        Code::DuplicateSkill,
        Code::ImmutabilityViolation,
        Code::VersionNotIncreased,
        Code::IncompatibleChange,
        Code::ResourceLimitExceeded,
        Code::LockOutdated,
        Code::LockInvalid,
        Code::BundleInvalid,
        Code::DigestMismatch,
        Code::SignatureInvalid,
        Code::UntrustedKey,
        Code::InterfaceInvalid,
        Code::CardInvalid,
        Code::RegistryError,
        Code::RegistryUnauthorized,
        Code::ArtifactNotFound,
        Code::ArtifactInvalid,
        Code::TagImmutable,
        Code::RollbackRefused,
        Code::ReleaseExpired,
        Code::ReferrerSignatureMissing,
        Code::ReleaseImmutable,
        Code::SignatureDowngrade,
        Code::Io,
        Code::UnknownKeyword,
        Code::RequiredUndeclared,
        Code::KeywordInapplicable,
        Code::LayoutUnexpected,
        Code::SkillRemoved,
        Code::RefAmbiguous,
    ];

    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::ManifestInvalid => "manifest_invalid",
            Code::VersionInvalid => "version_invalid",
            Code::JsonInvalid => "json_invalid",
            Code::PathInvalid => "path_invalid",
            Code::SchemaInvalid => "schema_invalid",
            Code::RefUnresolved => "ref_unresolved",
            Code::RefExternal => "ref_external",
            Code::DialectMismatch => "dialect_mismatch",
            Code::FixtureFailed => "fixture_failed",
            Code::SchemaConflict => "schema_conflict",
            Code::DuplicateSkill => "duplicate_skill",
            Code::ImmutabilityViolation => "immutability_violation",
            Code::VersionNotIncreased => "version_not_increased",
            Code::IncompatibleChange => "incompatible_change",
            Code::ResourceLimitExceeded => "resource_limit_exceeded",
            Code::LockOutdated => "lock_outdated",
            Code::LockInvalid => "lock_invalid",
            Code::BundleInvalid => "bundle_invalid",
            Code::DigestMismatch => "digest_mismatch",
            Code::SignatureInvalid => "signature_invalid",
            Code::UntrustedKey => "untrusted_key",
            Code::InterfaceInvalid => "interface_invalid",
            Code::CardInvalid => "card_invalid",
            Code::RegistryError => "registry_error",
            Code::RegistryUnauthorized => "registry_unauthorized",
            Code::ArtifactNotFound => "artifact_not_found",
            Code::ArtifactInvalid => "artifact_invalid",
            Code::TagImmutable => "tag_immutable",
            Code::RollbackRefused => "rollback_refused",
            Code::ReleaseExpired => "release_expired",
            Code::ReferrerSignatureMissing => "referrer_signature_missing",
            Code::ReleaseImmutable => "release_immutable",
            Code::SignatureDowngrade => "signature_downgrade",
            Code::Io => "io_error",
            Code::UnknownKeyword => "unknown_keyword",
            Code::RequiredUndeclared => "required_undeclared",
            Code::KeywordInapplicable => "keyword_inapplicable",
            Code::LayoutUnexpected => "layout_unexpected",
            Code::SkillRemoved => "skill_removed",
            Code::RefAmbiguous => "ref_ambiguous",
        }
    }

    /// A one-line description, as in the README's error-code table.
    pub fn description(self) -> &'static str {
        match self {
            Code::ManifestInvalid => {
                "a manifest is malformed, has an unknown field, or a name unfit for a file"
            }
            Code::VersionInvalid => "a version is not a canonical, quoted MAJOR.MINOR string",
            Code::JsonInvalid => "a JSON or YAML-authored value breaks the I-JSON rules",
            Code::PathInvalid => "a path leaves the workspace or is not a regular file",
            Code::SchemaInvalid => "a domain schema breaks a JSON Schema rule",
            Code::RefUnresolved => "a $ref/$dynamicRef target does not exist in the inline schema",
            Code::RefExternal => "a $ref/$dynamicRef points outside the inline schema",
            Code::DialectMismatch => "$schema or an embedded resource selects another dialect",
            Code::FixtureFailed => "an example did not give the verdict its directory promises",
            Code::SchemaConflict => "one schema_uri + version carries two different contents",
            Code::DuplicateSkill => {
                "two skills share a skill_id, or a skill uses the reserved describe_skill"
            }
            Code::ImmutabilityViolation => "a recorded version's content changed",
            Code::VersionNotIncreased => "a new version is not higher than the recorded ones",
            Code::IncompatibleChange => "a breaking change without a MAJOR version step",
            Code::ResourceLimitExceeded => "an input exceeds a resource limit",
            Code::LockOutdated => "--locked and the lock file would change",
            Code::BundleInvalid => "a bundle archive is malformed or breaks the layout",
            Code::DigestMismatch => "a file or schema digest differs from the one declared",
            Code::SignatureInvalid => "a signature is malformed or does not verify",
            Code::UntrustedKey => "no signature by a trusted key",
            Code::InterfaceInvalid => "a Skill Interface Document fails validation",
            Code::CardInvalid => {
                "a --base Agent Card is not an A2A 1.0 AgentCard, already has the extension, or carries signatures the merge would leave stale"
            }
            Code::LockInvalid => {
                "skillbundle.lock is malformed, or an entry is inconsistent or duplicated"
            }
            Code::RegistryError => {
                "a registry could not be reached or answered with an error (exit status 2)"
            }
            Code::RegistryUnauthorized => {
                "a registry refused the credentials, or none were found (exit status 2)"
            }
            Code::ArtifactNotFound => "no manifest or blob at the reference (exit status 2)",
            Code::ArtifactInvalid => {
                "a registry artifact is not a skillbundle bundle (artifactType, media types, layers)"
            }
            Code::TagImmutable => "a push would move a release-version tag to different content",
            Code::RollbackRefused => "a bundle older than the highest version already accepted",
            Code::ReleaseExpired => {
                "a release statement expired, is older than --max-age, or is missing when required"
            }
            Code::ReferrerSignatureMissing => {
                "--require-referrer-signature, and no OCI referrer of the bundle carries a trusted signature over it"
            }
            Code::ReleaseImmutable => {
                "a build would replace a bundle of the same name and version with other content (allowed with --force)"
            }
            Code::SignatureDowngrade => "an unsigned build would replace a signed bundle",
            Code::Io => "a file could not be read or written (exit status 2)",
            Code::UnknownKeyword => {
                "a schema keyword the dialect does not define (allow it in lint.allow_keywords)"
            }
            Code::RequiredUndeclared => {
                "a closed schema requires a property no properties entry declares"
            }
            Code::KeywordInapplicable => {
                "a keyword that cannot apply under the schema's type (a warning: the run still passes)"
            }
            Code::LayoutUnexpected => {
                "a misnamed or misplaced skill manifest, or an unknown folder in a skill"
            }
            Code::SkillRemoved => {
                "a skill the lock records is missing from the workspace and its removal is not stated"
            }
            Code::RefAmbiguous => {
                "a relative $ref could name an embedded resource or a workspace file"
            }
        }
    }

    /// The draft's machine-readable condition this finding implies, where it defines one.
    ///
    /// Anything wrong with a domain schema or the document built from it makes the Skill
    /// Interface Document invalid (draft: "Deliver schemas inline in version 1.0").
    pub fn condition(self) -> Option<&'static str> {
        match self {
            Code::SchemaInvalid
            | Code::RefUnresolved
            | Code::RefExternal
            | Code::DialectMismatch
            | Code::SchemaConflict
            | Code::InterfaceInvalid
            | Code::DigestMismatch => Some("interface_invalid"),
            Code::ResourceLimitExceeded => Some("resource_limit_exceeded"),
            _ => None,
        }
    }

    /// Whether the finding is an environment problem (exit status 2) rather than a
    /// failed check on the input (exit status 1).
    pub fn is_usage_or_io(self) -> bool {
        matches!(
            self,
            Code::Io | Code::RegistryError | Code::RegistryUnauthorized | Code::ArtifactNotFound
        )
    }

    /// How serious a finding with this code is: every code is an error except the
    /// lint's advice, which never fails a run.
    pub fn severity(self) -> Severity {
        match self {
            Code::KeywordInapplicable => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// Whether a finding fails the run (error) or is advice that does not (warning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Fails the run.
    Error,
    /// Advice: reported, and the run still passes.
    Warning,
}

impl Severity {
    /// The stable wire name (`error`, `warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }

    fn is_error(&self) -> bool {
        *self == Severity::Error
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Where a finding points: a file, optionally a JSON pointer inside it, and the
/// 1-based line and column when the source text could be mapped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file, as the user named it (relative to where they ran the tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A JSON Pointer into the file's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// 1-based line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Location {
    /// A location that is a whole file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Location {
            file: Some(path.into()),
            ..Location::default()
        }
    }

    /// The same location, at `pointer` inside the file.
    pub fn with_pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// The same location, at a 1-based line and column.
    pub fn with_position(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Whether the location names neither a file nor a pointer.
    pub fn is_empty(&self) -> bool {
        self.file.is_none() && self.pointer.is_none()
    }
}

/// One problem found by a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The stable machine code.
    pub code: Code,
    /// Serialized only for warnings: a finding without `severity` is an error, as
    /// before warnings existed.
    #[serde(skip_serializing_if = "Severity::is_error")]
    pub severity: Severity,
    /// The draft condition the code implies ([`Code::condition`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<&'static str>,
    /// What is wrong, for people.
    pub message: String,
    /// Where.
    #[serde(flatten)]
    pub location: Location,
    /// What to do about it, when there is a clear next step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl Finding {
    /// A finding with the severity and condition its code implies.
    pub fn new(code: Code, message: impl Into<String>, location: Location) -> Self {
        Finding {
            code,
            severity: code.severity(),
            condition: code.condition(),
            message: message.into(),
            location,
            help: None,
        }
    }

    /// A finding about a whole file.
    pub fn at_file(code: Code, message: impl Into<String>, file: &Path) -> Self {
        Finding::new(code, message, Location::file(file))
    }

    /// The finding with a next step to suggest.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Whether this finding fails the run.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Whether any of `findings` fails the run (warnings alone do not).
pub fn any_error(findings: &[Finding]) -> bool {
    findings.iter().any(Finding::is_error)
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.location.file {
            write!(f, "{}", file.display())?;
            if let (Some(l), Some(c)) = (self.location.line, self.location.column) {
                write!(f, ":{l}:{c}")?;
            }
            f.write_str(": ")?;
        }
        write!(
            f,
            "{}[{}]: {}",
            self.severity.as_str(),
            self.code,
            self.message
        )?;
        if let Some(p) = &self.location.pointer {
            write!(f, " (at {})", if p.is_empty() { "/" } else { p })?;
        }
        Ok(())
    }
}

/// Findings collected by a run, in a stable order.
pub type Findings = Vec<Finding>;

/// Sort findings for stable output: by file, then position, then code.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (
            &a.location.file,
            a.location.line,
            a.location.column,
            &a.location.pointer,
            a.code,
            &a.message,
        )
            .cmp(&(
                &b.location.file,
                b.location.line,
                b.location.column,
                &b.location.pointer,
                b.code,
                &b.message,
            ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_in_the_readme_table() {
        let readme = include_str!("../README.md");
        for code in Code::ALL {
            assert!(
                readme.contains(&format!("| `{}` |", code.as_str())),
                "README's error-code table lacks {code}"
            );
        }
    }
}
