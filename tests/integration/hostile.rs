//! The hostile-input corpus: every case is refused with one exact finding code, exit
//! status 1, within a bounded time, and without writing anything.
//!
//! Each table row names a case, how it is made — a small file from `tests/hostile/`
//! copied over a file of a fresh `example-skills` copy, a text edit, or a generator for
//! what is large, binary or a symbolic link — and the code every finding must carry.
//! Workspace cases run `skillbundle build`; bundle cases run `skillbundle verify` (and
//! `inspect`, for attacks on the archive itself) on bytes made from a valid signed bundle.

use crate::common;

use common::crafted::{fixture, gzip, Fixture};
use common::*;
use skillbundle::bundle;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A hang guard, not a speed target (speed is measured in `bench/`): the point is
/// "refused, not hung". A gzip bomb takes ~20 s to refuse in a debug build on an idle
/// 2-core machine and over 50 s on a loaded one, so the guard is far above both.
const HANG_GUARD: Duration = Duration::from_secs(300);

const ERC_INPUT: &str = "skills/evaluate_resource_condition/schemas/input.json";
const ERC_SKILL: &str = "skills/evaluate_resource_condition/skill.yaml";
const ERC_EXAMPLE: &str =
    "skills/evaluate_resource_condition/examples/input/valid/utilization-threshold.json";
const ERC_EXPECT: &str =
    "skills/evaluate_resource_condition/examples/input/invalid/missing-unit.expect.yaml";
const MIC_INPUT: &str = "skills/manage_interface_config/schemas/input.yaml";
const WORKSPACE: &str = "skillbundle.yaml";

/// How a workspace case is made from a fresh copy of example-skills.
enum Make {
    /// Copy `tests/hostile/<file>` over `<dest>`.
    File(&'static str, &'static str),
    /// Replace the first `from` with `to` in `<file>` (the text must be there).
    Edit(&'static str, &'static str, &'static str),
    /// Generated: (workspace, a directory outside it).
    Gen(fn(&Path, &Path)),
}

struct Case {
    name: &'static str,
    make: Make,
    code: &'static str,
}

const fn file(
    name: &'static str,
    src: &'static str,
    dest: &'static str,
    code: &'static str,
) -> Case {
    Case {
        name,
        make: Make::File(src, dest),
        code,
    }
}

const fn edit(
    name: &'static str,
    target: &'static str,
    from: &'static str,
    to: &'static str,
    code: &'static str,
) -> Case {
    Case {
        name,
        make: Make::Edit(target, from, to),
        code,
    }
}

const fn generated(name: &'static str, f: fn(&Path, &Path), code: &'static str) -> Case {
    Case {
        name,
        make: Make::Gen(f),
        code,
    }
}

#[rustfmt::skip]
const JSON_CASES: &[Case] = &[
    file("json: duplicate member name", "json-duplicate-key.json", ERC_INPUT, "json_invalid"),
    file("json: duplicate name, same value", "json-duplicate-key-same-value.json", ERC_INPUT, "json_invalid"),
    file("json: duplicate name spelled with an escape", "json-duplicate-key-escaped.json", ERC_INPUT, "json_invalid"),
    file("json: lone surrogate", "json-lone-surrogate.json", ERC_INPUT, "json_invalid"),
    file("json: integer beyond 2^53", "json-integer-beyond-2-53.json", ERC_INPUT, "json_invalid"),
    file("json: integral float JCS writes beyond 2^53", "json-integral-float-beyond-2-53.json", ERC_INPUT, "json_invalid"),
    file("json: NaN", "json-nan.json", ERC_INPUT, "json_invalid"),
    file("json: float overflow", "json-float-overflow.json", ERC_INPUT, "json_invalid"),
    file("json: trailing data", "json-trailing-data.json", ERC_INPUT, "json_invalid"),
    file("json: byte order mark", "json-bom.json", ERC_INPUT, "json_invalid"),
    file("json: Latin-1, not UTF-8", "json-latin1.json", ERC_INPUT, "json_invalid"),
    file("json: raw control character", "json-control-char.json", ERC_INPUT, "json_invalid"),
    file("json: truncated", "json-truncated.json", ERC_INPUT, "json_invalid"),
    file("json: empty file", "json-empty.json", ERC_INPUT, "json_invalid"),
    file("json: comment", "json-comment.json", ERC_INPUT, "json_invalid"),
    file("json: single quotes", "json-single-quotes.json", ERC_INPUT, "json_invalid"),
    file("json: leading zero", "json-leading-zero.json", ERC_INPUT, "json_invalid"),
    file("json: trailing comma", "json-trailing-comma.json", ERC_INPUT, "json_invalid"),
    generated("json: random binary", gen_binary_schema, "json_invalid"),
    generated("json: 100,000 levels of nesting", gen_deep_json, "resource_limit_exceeded"),
    generated("json: 64 MiB schema file", gen_huge_schema, "resource_limit_exceeded"),
    generated("json: 2 MiB string", gen_huge_string, "resource_limit_exceeded"),
    generated("json: 2 MiB example", gen_huge_example, "resource_limit_exceeded"),
];

#[rustfmt::skip]
const YAML_CASES: &[Case] = &[
    file("yaml schema: duplicate key", "yaml-schema-duplicate-key.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: merge key", "yaml-schema-merge-key.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: non-string key", "yaml-schema-non-string-key.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: .inf", "yaml-schema-infinity.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: two documents", "yaml-schema-two-documents.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: unknown tag", "yaml-schema-unknown-tag.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: integer beyond 2^53", "yaml-schema-integer-beyond-2-53.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: integral float JCS writes beyond 2^53", "yaml-schema-integral-float-beyond-2-53.yaml", MIC_INPUT, "json_invalid"),
    file("yaml schema: alias bomb", "yaml-schema-alias-bomb.yaml", MIC_INPUT, "resource_limit_exceeded"),
    edit("yaml: `yes` is not a boolean", ERC_SKILL, "cancellable: true", "cancellable: yes", "manifest_invalid"),
    edit("yaml: `off` is not a boolean", ERC_SKILL, "approval_may_be_required: false", "approval_may_be_required: off", "manifest_invalid"),
    edit("yaml: unquoted 1.10", ERC_SKILL, "skill_version: \"1.0\"", "skill_version: 1.10", "version_invalid"),
    edit("yaml: octal-looking 010", ERC_SKILL, "skill_version: \"1.0\"", "skill_version: 010", "version_invalid"),
    edit("yaml: unquoted 1.0 as a schema version", ERC_SKILL, "version: \"1.0\"}", "version: 1.0}", "version_invalid"),
    edit("yaml: null skill_id", ERC_SKILL, "skill_id: evaluate_resource_condition", "skill_id: ~", "manifest_invalid"),
    edit("yaml: duplicate key", ERC_SKILL, "skill_version: \"1.0\"", "skill_version: \"1.0\"\nskill_version: \"2.0\"", "manifest_invalid"),
    edit("yaml: merge key", ERC_SKILL, "interaction: {", "base: &b {cancellable: true}\ninteraction: {<<: *b, ", "manifest_invalid"),
    edit("yaml: second document", ERC_SKILL, "approval_may_be_required: false}", "approval_may_be_required: false}\n---\nskill_id: other\n", "manifest_invalid"),
    edit("yaml: unknown tag", ERC_SKILL, "skill_id: evaluate_resource_condition", "skill_id: !!python/object/apply:os.system [id]", "manifest_invalid"),
    edit("yaml: !include of a file outside", ERC_SKILL, "skill_id: evaluate_resource_condition", "skill_id: !include /etc/hostname", "manifest_invalid"),
    edit("yaml: misspelt field", ERC_SKILL, "interaction:", "interacton:", "manifest_invalid"),
    generated("yaml: alias bomb in a manifest", gen_manifest_alias_bomb, "manifest_invalid"),
    generated("yaml: 10,000 levels of nesting", gen_deep_yaml, "resource_limit_exceeded"),
    generated("yaml: 2 MiB manifest", gen_huge_manifest, "resource_limit_exceeded"),
    generated("yaml: manifest not UTF-8", gen_latin1_manifest, "manifest_invalid"),
];

#[rustfmt::skip]
const PATH_CASES: &[Case] = &[
    edit("path: `..` in a schema path", ERC_SKILL, "file: schemas/input.json", "file: ../../../../../etc/passwd", "path_invalid"),
    edit("path: absolute schema path", ERC_SKILL, "file: schemas/input.json", "file: /etc/passwd", "path_invalid"),
    edit("path: a directory as a schema", ERC_SKILL, "file: schemas/input.json", "file: schemas", "path_invalid"),
    edit("path: skills pattern leaving the workspace", WORKSPACE, "bundle:", "skills: [\"../*\"]\nbundle:", "path_invalid"),
    edit("path: bundle name that climbs out of dist/", WORKSPACE, "name: example-network-skills", "name: ../../escaped", "manifest_invalid"),
    generated("path: workspace over the size limit", gen_huge_workspace, "resource_limit_exceeded"),
];

#[cfg(unix)]
#[rustfmt::skip]
const LINK_CASES: &[Case] = &[
    generated("symlink: schema to a file outside", gen_link_schema, "path_invalid"),
    generated("symlink: example to a file outside", gen_link_example, "path_invalid"),
    generated("symlink: expectation sidecar to a file outside", gen_link_expectation, "path_invalid"),
    generated("symlink: skill.yaml to a file outside", gen_link_manifest, "path_invalid"),
    generated("symlink: skill directory to a directory outside", gen_link_skill_dir, "path_invalid"),
    generated("fifo: schema that would block a reader", gen_fifo_schema, "path_invalid"),
    generated("terminal escapes in a file name", gen_escape_file_name, "fixture_failed"),
    generated("symlink: examples directory to a directory outside", gen_link_examples_dir, "path_invalid"),
];

#[rustfmt::skip]
const REFERENCE_CASES: &[Case] = &[
    file("ref: https URL", "ref-network.json", ERC_INPUT, "ref_external"),
    file("ref: loopback URL", "ref-loopback.json", ERC_INPUT, "ref_external"),
    file("ref: file URL", "ref-file-url.json", ERC_INPUT, "ref_external"),
    // Relative file references are shared schemas: embedded only from inside the
    // workspace (tests/integration/shared_schemas.rs), path_invalid otherwise.
    file("ref: missing sibling schema file", "ref-relative-file.json", ERC_INPUT, "path_invalid"),
    file("ref: `..` path out of the workspace", "ref-parent-dir.json", ERC_INPUT, "path_invalid"),
    file("ref: the meta-schema", "ref-metaschema.json", ERC_INPUT, "ref_external"),
    file("ref: relative after a remote $id", "ref-id-rebase.json", ERC_INPUT, "ref_external"),
    file("ref: external $dynamicRef", "ref-dynamic-external.json", ERC_INPUT, "ref_external"),
    file("ref: two-step cycle", "ref-cycle.json", ERC_INPUT, "resource_limit_exceeded"),
    file("ref: self cycle", "ref-self.json", ERC_INPUT, "resource_limit_exceeded"),
    file("ref: dangling pointer", "ref-dangling.json", ERC_INPUT, "ref_unresolved"),
    file("ref: missing anchor", "ref-missing-anchor.json", ERC_INPUT, "ref_unresolved"),
    generated("ref: 1,001 references", gen_many_refs, "resource_limit_exceeded"),
    generated("ref: chain of 40 hops", gen_ref_chain, "resource_limit_exceeded"),
    file("regex: over the length limit", "pattern-too-long.json", ERC_INPUT, "resource_limit_exceeded"),
    file("regex: does not compile", "pattern-invalid.json", ERC_INPUT, "schema_invalid"),
    generated("regex: catastrophic backtracking", gen_backtracking, "fixture_failed"),
    file("format: unknown name", "schema-unknown-format.json", ERC_INPUT, "schema_invalid"),
    file("schema: an array is not a schema", "schema-not-a-schema.json", ERC_INPUT, "schema_invalid"),
];

#[rustfmt::skip]
const CONFLICT_CASES: &[Case] = &[
    file("dialect: draft-07 $schema", "dialect-draft-07.json", ERC_INPUT, "dialect_mismatch"),
    file("dialect: embedded resource switches", "dialect-embedded-switch.json", ERC_INPUT, "dialect_mismatch"),
    edit("dialect: manifest declares draft-07", ERC_SKILL, "file: schemas/input.json,", "file: schemas/input.json, dialect: \"http://json-schema.org/draft-07/schema#\",", "dialect_mismatch"),
    file("schema: one $id twice", "schema-duplicate-id.json", ERC_INPUT, "schema_invalid"),
    file("schema: one anchor twice", "schema-duplicate-anchor.json", ERC_INPUT, "schema_invalid"),
    generated("skill: one skill_id twice", gen_duplicate_skill, "duplicate_skill"),
    generated("skill: describe_skill is reserved", gen_reserved_skill, "duplicate_skill"),
    generated("schema: one schema_uri + version, two contents", gen_schema_conflict, "schema_conflict"),
    edit("record: one kind twice", ERC_SKILL, "supporting_records:\n", "supporting_records:\n  - {kind: resource-observation, file: schemas/resource-observation.json,\n     schema_uri: \"urn:example:other:1.0\", version: \"1.0\"}\n", "manifest_invalid"),
    edit("record: kind equal to the skill_id", ERC_SKILL, "kind: resource-observation", "kind: evaluate_resource_condition", "manifest_invalid"),
];

// ---------------------------------------------------------------------------------------
// Generators for workspace cases.

fn at(ws: &Path, rel: &str) -> PathBuf {
    ws.join(rel)
}

fn gen_binary_schema(ws: &Path, _: &Path) {
    // A fixed pseudo-random byte soup (xorshift), not UTF-8 and not JSON.
    let mut x: u32 = 0x9E37_79B9;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8 | 0x80
        })
        .collect();
    write(&at(ws, ERC_INPUT), bytes);
}

fn gen_deep_json(ws: &Path, _: &Path) {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    write(&at(ws, ERC_INPUT), format!("{{\"const\": {deep}}}"));
}

fn gen_huge_schema(ws: &Path, _: &Path) {
    // Sparse: refused by its size before a byte is read.
    let f = std::fs::File::create(at(ws, ERC_INPUT)).unwrap();
    f.set_len(64 << 20).unwrap();
}

fn gen_huge_string(ws: &Path, _: &Path) {
    let text = format!(
        "{{\"type\": \"object\", \"description\": \"{}\"}}",
        "x".repeat(2 << 20)
    );
    write(&at(ws, ERC_INPUT), text);
}

fn gen_huge_example(ws: &Path, _: &Path) {
    let text = format!(
        "{{\"resource_id\": \"{}\", \"condition\": {{\"metric\": \"m\", \"operator\": \"gt\", \"threshold\": 1, \"unit\": \"u\"}}}}",
        "x".repeat(2 << 20)
    );
    write(&at(ws, ERC_EXAMPLE), text);
}

fn gen_manifest_alias_bomb(ws: &Path, _: &Path) {
    // No member of skillbundle.yaml takes a free-form value any more, so the bomb sits
    // under an unknown member: refused at its key, before one alias is expanded. (The
    // alias budget itself is shown on YAML schemas, which take any value:
    // tests/hostile/yaml-schema-alias-bomb.yaml.)
    let mut bomb = String::from(
        "agent_card:\n  x:\n    - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("    - &a{i} [{refs}]\n"));
    }
    let text = read(&at(ws, WORKSPACE)) + &bomb;
    write(&at(ws, WORKSPACE), text);
}

fn gen_deep_yaml(ws: &Path, _: &Path) {
    let text = read(&at(ws, ERC_SKILL)).replace(
        "tags: [network, assurance]",
        &format!("tags: {}{}", "[".repeat(10_000), "]".repeat(10_000)),
    );
    write(&at(ws, ERC_SKILL), text);
}

fn gen_huge_manifest(ws: &Path, _: &Path) {
    let text = read(&at(ws, ERC_SKILL)).replace(
        "description: Checks",
        &format!("description: {} Checks", "x".repeat(2 << 20)),
    );
    write(&at(ws, ERC_SKILL), text);
}

fn gen_latin1_manifest(ws: &Path, _: &Path) {
    let mut bytes = std::fs::read(at(ws, ERC_SKILL)).unwrap();
    bytes.extend_from_slice(b"# caf\xe9\n");
    write(&at(ws, ERC_SKILL), bytes);
}

fn gen_huge_workspace(ws: &Path, _: &Path) {
    // Sparse, 300 MiB: over the default 256 MiB workspace limit without using the disk.
    let f = std::fs::File::create(ws.join("blob.bin")).unwrap();
    f.set_len(300 << 20).unwrap();
}

/// A file outside the workspace whose content must never show up anywhere.
#[cfg(unix)]
fn secret(outside: &Path) -> PathBuf {
    let path = outside.join("secret.json");
    write(&path, "{\"secret\": \"s3cr3t-outside-the-workspace\"}");
    path
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) {
    let _ = std::fs::remove_file(at);
    std::os::unix::fs::symlink(target, at).unwrap();
}

#[cfg(unix)]
fn gen_link_schema(ws: &Path, outside: &Path) {
    link(&secret(outside), &at(ws, ERC_INPUT));
}

#[cfg(unix)]
fn gen_link_example(ws: &Path, outside: &Path) {
    link(&secret(outside), &at(ws, ERC_EXAMPLE));
}

#[cfg(unix)]
fn gen_link_expectation(ws: &Path, outside: &Path) {
    link(&secret(outside), &at(ws, ERC_EXPECT));
}

#[cfg(unix)]
fn gen_link_manifest(ws: &Path, outside: &Path) {
    let real = outside.join("skill.yaml");
    std::fs::copy(at(ws, ERC_SKILL), &real).unwrap();
    link(&real, &at(ws, ERC_SKILL));
}

#[cfg(unix)]
fn gen_link_skill_dir(ws: &Path, outside: &Path) {
    let real = outside.join("skill");
    copy_tree(&ws.join(ERC), &real);
    std::fs::remove_dir_all(ws.join(ERC)).unwrap();
    std::os::unix::fs::symlink(&real, ws.join(ERC)).unwrap();
}

#[cfg(unix)]
fn gen_link_examples_dir(ws: &Path, outside: &Path) {
    // Its file names must not reach the report either.
    secret(outside);
    write(&outside.join("s3cr3t-name.txt"), "x");
    let valid = at(ws, ERC_EXAMPLE).parent().unwrap().to_path_buf();
    std::fs::remove_dir_all(&valid).unwrap();
    std::os::unix::fs::symlink(outside, &valid).unwrap();
}

#[cfg(unix)]
fn gen_fifo_schema(ws: &Path, _: &Path) {
    let path = at(ws, ERC_INPUT);
    std::fs::remove_file(&path).unwrap();
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[cfg(unix)]
fn gen_escape_file_name(ws: &Path, _: &Path) {
    // OSC 0 (set the window title) and a colour change, in a stray example's name.
    let dir = at(ws, ERC_EXAMPLE);
    let name = "x\u{1b}]0;pwned\u{7}\u{1b}[31m.txt";
    write(&dir.parent().unwrap().join(name), "{}");
}

fn gen_many_refs(ws: &Path, _: &Path) {
    let props: Vec<String> = (0..1001)
        .map(|i| format!("\"p{i}\": {{\"$ref\": \"#/$defs/s\"}}"))
        .collect();
    write(
        &at(ws, ERC_INPUT),
        format!(
            "{{\"$defs\": {{\"s\": {{\"type\": \"string\"}}}}, \"properties\": {{{}}}}}",
            props.join(", ")
        ),
    );
}

fn gen_ref_chain(ws: &Path, _: &Path) {
    let defs: Vec<String> = (0..40)
        .map(|i| format!("\"d{i}\": {{\"$ref\": \"#/$defs/d{}\"}}", i + 1))
        .chain(std::iter::once(
            "\"d40\": {\"type\": \"object\"}".to_string(),
        ))
        .collect();
    write(
        &at(ws, ERC_INPUT),
        format!(
            "{{\"$defs\": {{{}}}, \"$ref\": \"#/$defs/d0\"}}",
            defs.join(", ")
        ),
    );
}

fn gen_backtracking(ws: &Path, _: &Path) {
    // Nested quantifiers and a look-ahead force the backtracking engine; its budget turns
    // the valid example into a rejection (fixture_failed) instead of a hang.
    let schema = read(&at(ws, ERC_INPUT)).replacen(
        "\"resource_id\": {\n      \"type\": \"string\"",
        "\"resource_id\": {\n      \"type\": \"string\", \"pattern\": \"^(a|a)*(?!x)$\"",
        1,
    );
    write(&at(ws, ERC_INPUT), schema);
    let example =
        read(&at(ws, ERC_EXAMPLE)).replace("network-resource-123", &format!("{}!", "a".repeat(40)));
    write(&at(ws, ERC_EXAMPLE), example);
    // The schema still assembles, so the release rules would also (rightly) report the
    // edit as a changed published version; without a lock they have no baseline.
    std::fs::remove_file(ws.join("skillbundle.lock")).unwrap();
}

fn gen_duplicate_skill(ws: &Path, _: &Path) {
    copy_tree(&ws.join(ERC), &ws.join("skills/zz_copy"));
}

// A new skill named describe_skill (a copy): renaming a released skill instead would also,
// rightly, report the released one as removed (skill_removed).
fn gen_reserved_skill(ws: &Path, _: &Path) {
    let copy = ws.join("skills/zz_reserved");
    copy_tree(&ws.join(ERC), &copy);
    let manifest = read(&copy.join("skill.yaml")).replace(
        "skill_id: evaluate_resource_condition",
        "skill_id: describe_skill",
    );
    write(&copy.join("skill.yaml"), manifest);
}

fn gen_schema_conflict(ws: &Path, _: &Path) {
    let copy = ws.join("skills/zz_variant");
    copy_tree(&ws.join(ERC), &copy);
    let manifest = read(&copy.join("skill.yaml")).replace(
        "skill_id: evaluate_resource_condition",
        "skill_id: zz_variant",
    );
    write(&copy.join("skill.yaml"), manifest);
    let schema = read(&copy.join("schemas/input.json")).replacen(
        "\"type\": \"object\"",
        "\"type\": \"object\", \"title\": \"changed\"",
        1,
    );
    write(&copy.join("schemas/input.json"), schema);
}

// ---------------------------------------------------------------------------------------
// Running workspace cases.

/// Every entry under `root` (links not followed): kind, length, modification time.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (String, u64, Option<SystemTime>)> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.path().symlink_metadata().unwrap();
            (
                e.path().to_path_buf(),
                (
                    format!("{:?}", meta.file_type()),
                    meta.len(),
                    meta.modified().ok(),
                ),
            )
        })
        .collect()
}

/// The codes of a JSON report's findings.
fn codes(run: &Run) -> Result<Vec<String>, String> {
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("stdout is not JSON ({e}): {}{}", run.stdout, run.stderr))?;
    Ok(doc["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["code"].as_str().unwrap_or("?").to_string())
        .collect())
}

/// Check one run: exit 1, only `code`, within the bound.
fn judge(run: &Run, took: Duration, code: &str) -> Result<(), String> {
    let found = codes(run)?;
    if run.status != 1 {
        return Err(format!(
            "exit status {} (codes {found:?}); stderr: {}",
            run.status, run.stderr
        ));
    }
    if found.is_empty() || found.iter().any(|c| c != code) {
        return Err(format!(
            "expected only {code}, got {found:?}: {}",
            run.stdout
        ));
    }
    if took > HANG_GUARD {
        return Err(format!("took {took:?}"));
    }
    Ok(())
}

fn run_workspace_case(case: &Case) -> Result<(), String> {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    match &case.make {
        Make::File(src, dest) => {
            let from = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/hostile")
                .join(src);
            std::fs::copy(&from, ws.path().join(dest)).map_err(|e| format!("{src}: {e}"))?;
        }
        Make::Edit(target, from, to) => {
            let path = ws.path().join(target);
            let text = read(&path);
            if !text.contains(from) {
                return Err(format!("{target} does not contain {from:?}"));
            }
            write(&path, text.replacen(from, to, 1));
        }
        Make::Gen(f) => f(ws.path(), outside.path()),
    }
    let before = snapshot(ws.path());
    let outside_before = snapshot(outside.path());
    let start = Instant::now();
    let out = run(&["build", ".", "--format", "json"], ws.path());
    let took = start.elapsed();
    judge(&out, took, case.code)?;
    // The human report shows control characters from the input escaped.
    let human = run(&["check", "."], ws.path());
    if human.status != 1 {
        return Err(format!("check exited {}", human.status));
    }
    if let Some(c) = (human.stderr.clone() + &human.stdout)
        .chars()
        .find(|c| c.is_control() && *c != '\n')
    {
        return Err(format!("human output holds the control character {c:?}"));
    }
    if out.stdout.contains("s3cr3t") || out.stderr.contains("s3cr3t") {
        return Err("a file outside the workspace was read into the report".into());
    }
    if ws.path().join("dist").exists() {
        return Err("dist/ was created".into());
    }
    if snapshot(ws.path()) != before || snapshot(outside.path()) != outside_before {
        return Err("files changed".into());
    }
    Ok(())
}

fn run_table(cases: &[Case], runner: impl Fn(&Case) -> Result<(), String>) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| runner(case).err().map(|e| format!("{}: {e}", case.name)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn hostile_json() {
    run_table(JSON_CASES, run_workspace_case);
}

#[test]
fn hostile_yaml() {
    run_table(YAML_CASES, run_workspace_case);
}

#[test]
fn hostile_paths() {
    run_table(PATH_CASES, run_workspace_case);
    #[cfg(unix)]
    run_table(LINK_CASES, run_workspace_case);
}

#[test]
fn hostile_references_and_patterns() {
    run_table(REFERENCE_CASES, run_workspace_case);
}

#[test]
fn hostile_conflicts() {
    run_table(CONFLICT_CASES, run_workspace_case);
}

// ---------------------------------------------------------------------------------------
// Archive attacks.

impl Fixture {
    /// The valid files plus raw entries, packed with hostile headers kept as they are.
    fn with(&self, extra: &[Raw]) -> Vec<u8> {
        let mut entries: Vec<Raw> = self
            .files
            .iter()
            .map(|(p, d)| Raw::file(p.as_bytes(), d))
            .collect();
        entries.extend(extra.iter().cloned());
        gzip(&tar(&entries))
    }
}

#[derive(Clone)]
struct Raw<'a> {
    path: &'a [u8],
    kind: tar::EntryType,
    data: &'a [u8],
    link: Option<&'a str>,
    /// Declared size, when it differs from the data's.
    size: Option<u64>,
}

impl<'a> Raw<'a> {
    fn file(path: &'a [u8], data: &'a [u8]) -> Self {
        Raw {
            path,
            kind: tar::EntryType::Regular,
            data,
            link: None,
            size: None,
        }
    }
    fn kind(path: &'a [u8], kind: tar::EntryType, link: Option<&'a str>) -> Self {
        Raw {
            path,
            kind,
            data: b"",
            link,
            size: None,
        }
    }
}

fn tar(entries: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..e.path.len()].copy_from_slice(e.path);
        header.set_entry_type(e.kind);
        header.set_size(e.size.unwrap_or(e.data.len() as u64));
        header.set_mode(0o644);
        if let Some(l) = e.link {
            header.set_link_name(l).unwrap();
        }
        header.set_cksum();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(e.data);
        out.resize(out.len().next_multiple_of(512), 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

struct BundleCase {
    name: &'static str,
    make: fn(&Fixture, &Path),
    /// Also run `inspect`, which reads the archive and the manifest only.
    archive_level: bool,
    code: &'static str,
}

const fn bundle_case(
    name: &'static str,
    make: fn(&Fixture, &Path),
    archive_level: bool,
    code: &'static str,
) -> BundleCase {
    BundleCase {
        name,
        make,
        archive_level,
        code,
    }
}

#[rustfmt::skip]
const BUNDLE_CASES: &[BundleCase] = &[
    bundle_case("archive: `..` entry", |fx, p| write(p, fx.with(&[Raw::file(b"../evil.json", b"{}")])), true, "bundle_invalid"),
    bundle_case("archive: absolute entry", |fx, p| write(p, fx.with(&[Raw::file(b"/tmp/evil.json", b"{}")])), true, "bundle_invalid"),
    bundle_case("archive: `.` component", |fx, p| write(p, fx.with(&[Raw::file(b"a2a/./x.json", b"{}")])), true, "bundle_invalid"),
    bundle_case("archive: symbolic link", |fx, p| write(p, fx.with(&[Raw::kind(b"link", tar::EntryType::Symlink, Some("/etc/passwd"))])), true, "bundle_invalid"),
    bundle_case("archive: hard link", |fx, p| write(p, fx.with(&[Raw::kind(b"hard", tar::EntryType::Link, Some("manifest.json"))])), true, "bundle_invalid"),
    bundle_case("archive: directory", |fx, p| write(p, fx.with(&[Raw::kind(b"dir/", tar::EntryType::Directory, None)])), true, "bundle_invalid"),
    bundle_case("archive: device", |fx, p| write(p, fx.with(&[Raw::kind(b"dev", tar::EntryType::Char, None)])), true, "bundle_invalid"),
    bundle_case("archive: FIFO", |fx, p| write(p, fx.with(&[Raw::kind(b"fifo", tar::EntryType::Fifo, None)])), true, "bundle_invalid"),
    bundle_case("archive: pax header", |fx, p| write(p, fx.with(&[Raw::kind(b"pax", tar::EntryType::XHeader, None)])), true, "bundle_invalid"),
    bundle_case("archive: non-UTF-8 name", |fx, p| write(p, fx.with(&[Raw::file(b"caf\xe9.json", b"{}")])), true, "bundle_invalid"),
    bundle_case("archive: manifest.json twice", |fx, p| write(p, fx.with(&[Raw::file(b"manifest.json", b"{}")])), true, "bundle_invalid"),
    bundle_case("archive: truncated", |fx, p| { let v = fx.valid(); write(p, &v[..v.len() / 2]) }, true, "bundle_invalid"),
    bundle_case("archive: bytes after the gzip stream", |fx, p| write(p, [fx.valid(), b"trailing".to_vec()].concat()), true, "bundle_invalid"),
    bundle_case("archive: not gzip", |_, p| write(p, b"PK\x03\x04 a zip file, not a bundle"), true, "bundle_invalid"),
    bundle_case("archive: empty file", |_, p| write(p, b""), true, "bundle_invalid"),
    bundle_case("archive: corrupt deflate data", make_corrupt, true, "bundle_invalid"),
    // Zeros end a tar stream at its second block: what follows is refused at once.
    bundle_case("archive: gzip bomb of zeros", |_, p| write(p, gzip_bomb((1 << 30) + (1 << 20))), true, "bundle_invalid"),
    bundle_case("archive: gzip bomb behind an entry header", make_header_bomb, true, "resource_limit_exceeded"),
    bundle_case("archive: entry declared larger than the limit", |_, p| write(p, gzip(&[common::crafted::entry(&common::crafted::header("a2a/agent-card-fragment.json", 65 << 20, |_| {}), b"{}"), vec![0; 1024]].concat())), true, "resource_limit_exceeded"),
    bundle_case("archive: entry shorter than declared", |_, p| write(p, gzip(&tar(&[Raw { size: Some(100_000), ..Raw::file(b"manifest.json", b"{}") }]))), true, "bundle_invalid"),
    bundle_case("archive: bundle file over the size limit", |_, p| std::fs::File::create(p).unwrap().set_len((1 << 30) + 1).unwrap(), true, "resource_limit_exceeded"),
    bundle_case("archive: bundle path leads to /dev/zero", |_, p| link_to_dev_zero(p), true, "path_invalid"),
    bundle_case("archive: bundle path is a FIFO", |_, p| make_fifo(p), true, "path_invalid"),
    bundle_case("bundle: unlisted extra entry", |fx, p| write(p, fx.with(&[Raw::file(b"interfaces/extra.json", b"{}")])), false, "bundle_invalid"),
    bundle_case("bundle: interface document changed", make_changed_document, false, "digest_mismatch"),
    bundle_case("bundle: signatures removed", make_unsigned, false, "untrusted_key"),
    bundle_case("bundle: manifest nested deeply", make_deep_manifest, false, "resource_limit_exceeded"),
];

fn link_to_dev_zero(p: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink("/dev/zero", p).unwrap();
    #[cfg(not(unix))]
    write(p, b"");
}

fn make_fifo(p: &Path) {
    #[cfg(unix)]
    {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    #[cfg(not(unix))]
    write(p, b"");
}

/// A canonical header for an entry of 900 MiB, then a gzip bomb of its "data": the
/// header alone is refused (entry and total limits).
fn make_header_bomb(_: &Fixture, p: &Path) {
    let h = common::crafted::header("interfaces/a.json", 900 << 20, |_| {});
    write(p, gzip_bomb_after(h.as_bytes(), 900 << 20));
}

fn make_corrupt(fx: &Fixture, p: &Path) {
    let mut v = fx.valid();
    let mid = v.len() / 2;
    v[mid] ^= 0xff;
    v[mid + 1] ^= 0x55;
    write(p, v);
}

fn make_changed_document(fx: &Fixture, p: &Path) {
    let mut files = fx.files.clone();
    let doc = files
        .get_mut("interfaces/evaluate_resource_condition.json")
        .unwrap();
    let i = doc.iter().position(|&b| b == b'9').unwrap_or(10);
    doc[i] = b'8';
    write(p, pack(&files));
}

fn make_unsigned(fx: &Fixture, p: &Path) {
    let mut files = fx.files.clone();
    let mut m: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    m.as_object_mut().unwrap().remove("signatures");
    files.insert("manifest.json".into(), bundle::stable_pretty(&m));
    write(p, pack(&files));
}

fn make_deep_manifest(fx: &Fixture, p: &Path) {
    let mut files = fx.files.clone();
    let deep = format!(
        "{{\"format\": \"skillbundle/1\", \"x\": {}{}}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    files.insert("manifest.json".into(), deep.into_bytes());
    write(p, pack(&files));
}

fn pack(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    bundle::archive::write(
        Vec::new(),
        files.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
        0,
    )
    .unwrap()
}

fn run_bundle_case(case: &BundleCase) -> Result<(), String> {
    let fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("trust.jwk.json"),
        fx.key.public_key().to_jwk_json(),
    );
    let bundle = dir.path().join("bundle.tar.gz");
    (case.make)(fx, &bundle);
    let before = snapshot(dir.path());
    let mut commands: Vec<Vec<&str>> = vec![vec![
        "verify",
        "bundle.tar.gz",
        "--trust",
        "trust.jwk.json",
        "--format",
        "json",
    ]];
    if case.archive_level {
        commands.push(vec!["inspect", "bundle.tar.gz", "--format", "json"]);
    }
    for args in commands {
        let start = Instant::now();
        let out = run(&args, dir.path());
        judge(&out, start.elapsed(), case.code).map_err(|e| format!("{}: {e}", args[0]))?;
        if snapshot(dir.path()) != before {
            return Err(format!(
                "{}: files appeared or changed next to the bundle",
                args[0]
            ));
        }
    }
    Ok(())
}

#[test]
fn hostile_bundles() {
    let failures: Vec<String> = BUNDLE_CASES
        .iter()
        .filter_map(|case| {
            run_bundle_case(case)
                .err()
                .map(|e| format!("{}: {e}", case.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        BUNDLE_CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn the_corpus_has_at_least_forty_cases_and_every_file_is_used() {
    let mut tables: Vec<&[Case]> = vec![
        JSON_CASES,
        YAML_CASES,
        PATH_CASES,
        REFERENCE_CASES,
        CONFLICT_CASES,
    ];
    #[cfg(unix)]
    tables.push(LINK_CASES);
    let all: Vec<&Case> = tables.into_iter().flatten().collect();
    assert!(all.len() + BUNDLE_CASES.len() >= 40);
    let used: Vec<&str> = all
        .iter()
        .filter_map(|c| match c.make {
            Make::File(src, _) => Some(src),
            _ => None,
        })
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "README.md" || used.contains(&name.as_str()),
            "tests/hostile/{name} is not used by any case"
        );
    }
    let mut names: Vec<&str> = all
        .iter()
        .map(|c| c.name)
        .chain(BUNDLE_CASES.iter().map(|c| c.name))
        .collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "case names are unique");
}
