//! Examples: the vendor's own test cases for each schema, run on every check.
//!
//! The draft's release pipeline "tests representative inputs and outputs against" the
//! schemas. A skill keeps them next to its manifest:
//!
//! ```text
//! examples/input/{valid,invalid}/*.json
//! examples/output/{valid,invalid}/*.json
//! examples/records/<kind>/{valid,invalid}/*.json
//! ```
//!
//! Each valid example must pass and each invalid one must fail, with `format` asserted.
//! An invalid example may pin *why* it must fail in a sidecar `<name>.expect.yaml`
//! (`keyword:` and/or `instance_path:`), so an example rejected for the wrong reason —
//! the classic silent rot of negative tests — is caught too.

use crate::build::workspace;
use crate::finding::{Code, Finding};
use crate::interface::Role;
use crate::schema::validator::{ValidationDetail, Validator};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The sidecar that pins why an invalid example must fail.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The JSON Schema keyword that must reject the example (e.g. `required`).
    #[serde(default)]
    pub keyword: Option<String>,
    /// The JSON Pointer into the example where the rejection must be reported.
    #[serde(default)]
    pub instance_path: Option<String>,
}

impl Expectation {
    fn matches(&self, d: &ValidationDetail) -> bool {
        self.keyword.as_deref().is_none_or(|k| k == d.keyword)
            && self
                .instance_path
                .as_deref()
                .is_none_or(|p| p == d.instance_path)
    }
}

/// One example file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// The role whose schema judges it (from its folder).
    pub role: Role,
    /// The supporting-record kind, for a record example.
    pub kind: Option<String>,
    /// Whether its folder promises a valid instance (`valid/`) or an invalid one.
    pub valid: bool,
    /// The file.
    pub path: PathBuf,
}

const EXPECT_SUFFIX: &str = ".expect.yaml";

/// List the examples of a skill, reporting stray files and undeclared record kinds.
pub fn discover(skill_dir: &Path, kinds: &[&str]) -> (Vec<Example>, Vec<Finding>) {
    let root = skill_dir.join("examples");
    let mut examples = Vec::new();
    let mut findings = Vec::new();
    if !root.is_dir() {
        return (examples, findings);
    }
    // Every directory listed must resolve inside the skill directory: a symbolic link
    // out of it would otherwise list (and report the names of) files elsewhere.
    let Ok(base) = skill_dir.canonicalize() else {
        return (examples, findings);
    };
    let stray = |path: &Path, why: String| {
        Finding::at_file(Code::FixtureFailed, why, path).with_help(
            "examples live in examples/input|output/valid|invalid/*.json and examples/records/<kind>/valid|invalid/*.json",
        )
    };
    for (role_dir, role_path) in sorted_entries(&root, &base, &mut findings) {
        match role_dir.as_str() {
            "input" | "output" => {
                let role = if role_dir == "input" {
                    Role::Input
                } else {
                    Role::Output
                };
                collect(&role_path, &base, role, None, &mut examples, &mut findings);
            }
            "records" => {
                for (kind, kind_path) in sorted_entries(&role_path, &base, &mut findings) {
                    if !kind_path.is_dir() {
                        findings.push(stray(
                            &kind_path,
                            "a file directly under examples/records/".into(),
                        ));
                    } else if kinds.contains(&kind.as_str()) {
                        collect(
                            &kind_path,
                            &base,
                            Role::Record,
                            Some(kind),
                            &mut examples,
                            &mut findings,
                        );
                    } else {
                        let mut f = Finding::at_file(
                            Code::FixtureFailed,
                            format!("examples for record kind {kind:?}, which the manifest does not declare"),
                            &kind_path,
                        );
                        if let Some(s) = crate::build::manifest::did_you_mean(&kind, kinds) {
                            f = f.with_help(format!("did you mean `{s}`?"));
                        }
                        findings.push(f);
                    }
                }
            }
            other => findings.push(stray(
                &role_path,
                format!("unexpected {other:?} under examples/"),
            )),
        }
    }
    (examples, findings)
}

/// The entries of `dir`, sorted; none (and a finding) when `dir` resolves outside `base`.
fn sorted_entries(dir: &Path, base: &Path, findings: &mut Vec<Finding>) -> Vec<(String, PathBuf)> {
    if !dir.canonicalize().is_ok_and(|real| real.starts_with(base)) {
        findings.push(Finding::at_file(
            Code::PathInvalid,
            "this examples directory resolves (through a symbolic link) outside the skill directory; it is not read",
            dir,
        ));
        return Vec::new();
    }
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map(|it| {
            it.flatten()
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn collect(
    dir: &Path,
    base: &Path,
    role: Role,
    kind: Option<String>,
    examples: &mut Vec<Example>,
    findings: &mut Vec<Finding>,
) {
    for (verdict, verdict_path) in sorted_entries(dir, base, findings) {
        let valid = match verdict.as_str() {
            "valid" => true,
            "invalid" => false,
            _ => {
                findings.push(Finding::at_file(
                    Code::FixtureFailed,
                    format!("unexpected {verdict:?}: example folders are named valid or invalid"),
                    &verdict_path,
                ));
                continue;
            }
        };
        for (name, path) in sorted_entries(&verdict_path, base, findings) {
            if name.ends_with(".json") && path.is_file() {
                examples.push(Example {
                    role,
                    kind: kind.clone(),
                    valid,
                    path,
                });
            } else if name.ends_with(EXPECT_SUFFIX) && !valid {
                let stem = &name[..name.len() - EXPECT_SUFFIX.len()];
                if !verdict_path.join(format!("{stem}.json")).is_file() {
                    findings.push(Finding::at_file(
                        Code::FixtureFailed,
                        format!("{name} pins the failure of {stem}.json, which does not exist"),
                        &path,
                    ));
                }
            } else {
                findings.push(Finding::at_file(
                    Code::FixtureFailed,
                    format!("{name:?} is not an example: examples are .json files (and <name>{EXPECT_SUFFIX} beside an invalid one)"),
                    &path,
                ));
            }
        }
    }
}

/// The real path of an example file, which must resolve inside the workspace at `root`:
/// an example (or sidecar) that is a symbolic link to a file elsewhere is refused before
/// it is read, so no byte from outside the workspace reaches a finding.
fn inside(root: &Path, path: &Path) -> Result<PathBuf, Finding> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Finding::at_file(Code::PathInvalid, "not a file path", path));
    };
    crate::fs::sandbox::resolve_inside(root, dir, &name.to_string_lossy())
        .map_err(|e| Finding::at_file(Code::from(&e), e.to_string(), path))
}

/// Run one example against its compiled schema. `root` is the workspace: examples are
/// only read from inside it.
pub fn run(
    root: &Path,
    example: &Example,
    validator: &Validator,
    max_bytes: u64,
    max_depth: usize,
) -> Vec<Finding> {
    let real = match inside(root, &example.path) {
        Ok(real) => real,
        Err(f) => return vec![f],
    };
    let (instance, source) = match workspace::read_value(&real, &example.path, max_bytes, max_depth)
    {
        Ok(v) => v,
        Err(f) => return vec![f],
    };
    let errors = validator.errors(&instance);
    let what = match &example.kind {
        Some(k) => format!("record kind {k:?}"),
        None => format!("{} schema", example.role.as_str()),
    };
    if example.valid {
        return errors
            .iter()
            .map(|d| {
                Finding::new(
                    Code::FixtureFailed,
                    format!(
                        "this valid example is rejected by the {what}: {} (keyword `{}`, schema path {})",
                        d.message, d.keyword, d.schema_path
                    ),
                    source.locate(&d.instance_path),
                )
                .with_help("fix the example, or move it to invalid/ if it should be rejected")
            })
            .collect();
    }
    if errors.is_empty() {
        return vec![Finding::at_file(
            Code::FixtureFailed,
            format!("this invalid example is accepted by the {what}"),
            &example.path,
        )
        .with_help("tighten the schema, or move the example to valid/ if it should be accepted")];
    }
    let expect_path = example.path.with_file_name(format!(
        "{}{EXPECT_SUFFIX}",
        example
            .path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
    ));
    if !expect_path.is_file() {
        return Vec::new();
    }
    let expect_real = match inside(root, &expect_path) {
        Ok(real) => real,
        Err(f) => return vec![f],
    };
    let expectation: Expectation = match crate::build::manifest::read(&expect_real, &expect_path) {
        Ok(e) => e,
        Err(f) => return vec![f],
    };
    if expectation.keyword.is_none() && expectation.instance_path.is_none() {
        return vec![Finding::at_file(
            Code::FixtureFailed,
            "the expectation pins nothing: give keyword, instance_path, or both",
            &expect_path,
        )];
    }
    if errors.iter().any(|d| expectation.matches(d)) {
        return Vec::new();
    }
    let actual: Vec<String> = errors
        .iter()
        .map(|d| format!("`{}` at {:?}", d.keyword, d.instance_path))
        .collect();
    vec![Finding::at_file(
        Code::FixtureFailed,
        format!(
            "this invalid example is rejected for another reason than {} pins: {}",
            expect_path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy(),
            actual.join(", ")
        ),
        &example.path,
    )
    .with_help(
        "the example may no longer test what it was written for; fix it or update the expectation",
    )]
}
