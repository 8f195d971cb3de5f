//! Rendering findings for people and for machines. The only place that prints.

use crate::output;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use serde::Serialize;
use serde_json::Value;
use skillbundle::finding::{Finding, Severity};
use skillbundle::interface::condition::ErrorObject;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// How a run is reported.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Diagnostics for people, with source snippets (stderr) and results (stdout).
    Human,
    /// One JSON document on stdout with every finding.
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`) on stdout.
    Github,
    /// A SARIF 2.1.0 log on stdout, for code scanning.
    Sarif,
}

/// `--quiet`: report only findings that fail the run.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// `text` with every control character except a line feed shown as a `\u{…}` escape.
///
/// File names, JSON pointers and quoted values in findings come from the input; printed
/// raw, an escape sequence in a file name or a schema key would reach the terminal or
/// the CI log and could retitle it, rewrite lines or forge output.
pub fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// [`visible`] for one line of output, line feeds included: strings from a bundle, a
/// workspace or a request (bundle names, skill ids, schema URIs) cannot start a line
/// of their own.
pub fn visible_line(text: &str) -> String {
    visible(text).replace('\n', "\\u{a}")
}

/// One line of plain output in `github` format: [`visible_line`], with `%`, CR, LF and
/// `::` encoded, so that no string from the input can form a workflow command (the
/// runner treats any line starting with `::` as one).
pub fn github_line(text: &str) -> String {
    gh_escape(&visible_line(text), false)
}

/// [`visible`] for a path, line feeds included.
fn visible_path(path: &Path) -> String {
    visible(&path.display().to_string()).replace('\n', "\\u{a}")
}

/// One finding as a compiler-style diagnostic: the code, the message, and — when the
/// finding has a file, line and column we can read back — the source line with the
/// offending token underlined and the JSON pointer as its label. Control characters
/// from the input are shown escaped (see [`visible`]).
pub fn human(f: &Finding, styled: bool) -> String {
    let title = visible(&f.message);
    let pointer = f.location.pointer.as_ref().map(|p| {
        if p.is_empty() {
            "/ (the root)".to_string()
        } else {
            visible(p).replace('\n', "\\u{a}")
        }
    });
    let source = f
        .location
        .file
        .as_ref()
        .zip(f.location.line.zip(f.location.column))
        .and_then(|(file, (line, col))| source_line(file, line, col).map(|s| (file, line, s)));
    let mut notes: Vec<String> = Vec::new();
    let level = match f.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let mut group = Group::with_title(level.primary_title(title).id(f.code.as_str()));
    match &source {
        Some((file, line, (text, span))) => {
            let mut annotation = AnnotationKind::Primary.span(span.clone());
            if let Some(p) = &pointer {
                annotation = annotation.label(format!("at {p}"));
            }
            group = group.element(
                Snippet::source(text.as_str())
                    .line_start(*line)
                    .path(visible_path(file))
                    .annotation(annotation),
            );
        }
        None => {
            if let Some(file) = &f.location.file {
                let mut at = visible_path(file);
                if let Some(l) = f.location.line {
                    at.push_str(&format!(":{l}"));
                    if let Some(c) = f.location.column {
                        at.push_str(&format!(":{c}"));
                    }
                }
                group = group.element(Origin::path(at));
            }
            if let Some(p) = &pointer {
                notes.push(format!("at {p}"));
            }
        }
    }
    if let Some(c) = f.condition {
        notes.push(format!("condition: {c}"));
    }
    for n in &notes {
        group = group.element(Level::NOTE.message(n.as_str()));
    }
    let help = f.help.as_deref().map(visible);
    if let Some(h) = &help {
        group = group.element(Level::HELP.message(h.as_str()));
    }
    let renderer = if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    renderer.render(&[group])
}

/// The text of `line` in `file` and the byte span of the token starting at `column`.
fn source_line(
    file: &Path,
    line: usize,
    column: usize,
) -> Option<(String, std::ops::Range<usize>)> {
    let meta = std::fs::metadata(file).ok()?;
    if meta.len() > 64 * 1024 * 1024 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let raw_line = text.lines().nth(line.checked_sub(1)?)?;
    // Escape control characters (a schema string holding ESC or OSC is quoted in the
    // snippet) and carry the column over to the escaped text.
    let column = column.checked_sub(1)?;
    let before: String = raw_line.chars().take(column).collect();
    let column = visible(&before).chars().count() + 1;
    let line_text = visible(raw_line);
    let start = line_text
        .char_indices()
        .nth(column.checked_sub(1)?)
        .map(|(i, _)| i)
        .unwrap_or(line_text.len());
    let rest = &line_text[start..];
    let len = if let Some(body) = rest.strip_prefix('"') {
        // A JSON string: up to its closing quote.
        let mut escaped = false;
        let mut end = None;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i + 2);
                    break;
                }
                _ => escaped = false,
            }
        }
        end.unwrap_or(rest.len())
    } else {
        rest.find(|c: char| c.is_whitespace() || matches!(c, ',' | '}' | ']' | ':'))
            .unwrap_or(rest.len())
            .max(rest.chars().next().map_or(0, char::len_utf8))
    };
    Some((line_text.clone(), start..start + len))
}

/// The exit status for a set of findings: 0 no error (warnings do not count), 2 any
/// I/O problem, 1 otherwise.
pub fn status(findings: &[Finding]) -> ExitCode {
    if !skillbundle::finding::any_error(findings) {
        ExitCode::SUCCESS
    } else if findings.iter().any(|f| f.code.is_usage_or_io()) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}

/// Report a run: in JSON, the document; for people, findings on stderr then — when
/// there are none — the success lines on stdout.
pub fn report(
    format: Format,
    findings: &[Finding],
    doc: &impl Serialize,
    success: impl FnOnce() -> Vec<String>,
) -> ExitCode {
    report_with(format, findings, doc, success, "nothing was written")
}

/// [`report`], ending the human list of findings with `outcome` (what the failure meant).
pub fn report_with(
    format: Format,
    findings: &[Finding],
    doc: &impl Serialize,
    success: impl FnOnce() -> Vec<String>,
    outcome: &str,
) -> ExitCode {
    let failed = skillbundle::finding::any_error(findings);
    let quiet = quiet();
    let shown: Vec<&Finding> = findings.iter().filter(|f| !quiet || f.is_error()).collect();
    match format {
        Format::Json => output::json(doc),
        Format::Sarif => output::json(&sarif(findings)),
        Format::Github => {
            output::lines(&shown.iter().map(|f| github(f)).collect::<Vec<_>>());
            if !failed && !quiet {
                output::lines(&success().iter().map(|l| github_line(l)).collect::<Vec<_>>());
            }
        }
        Format::Human => {
            let styled = use_color();
            if !failed {
                let mut err = std::io::stderr().lock();
                for f in &shown {
                    let _ = writeln!(err, "{}\n", human(f, styled));
                }
                let lines = if quiet { Vec::new() } else { success() };
                output::lines(&lines.iter().map(|l| visible_line(l)).collect::<Vec<_>>());
            } else {
                let mut err = std::io::stderr().lock();
                for f in &shown {
                    let _ = writeln!(err, "{}\n", human(f, styled));
                }
                let n = findings.iter().filter(|f| f.is_error()).count();
                let _ = writeln!(
                    err,
                    "{n} problem{} found; {outcome}",
                    if n == 1 { "" } else { "s" }
                );
            }
        }
    }
    status(findings)
}

/// Print a warning for people on stderr (in JSON output, warnings go in the document).
pub fn warn(format: Format, message: &str) {
    if format == Format::Human && !quiet() {
        let _ = writeln!(std::io::stderr().lock(), "warning: {}", visible(message));
    }
}

/// Print one of the draft's error objects on stdout (it is the command's output in
/// every format) and, for people, a one-line summary on stderr. Exit status 1.
pub fn error_object(format: Format, error: &ErrorObject) -> ExitCode {
    output::json(&error.to_json());
    if format == Format::Human {
        let _ = writeln!(
            std::io::stderr().lock(),
            "error[{}]: {}",
            error.code(),
            visible(error.message())
        );
    }
    ExitCode::from(1)
}

/// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// Escape workflow-command data (`%`, CR, LF, and `::` so that no line of it can start a
/// command) and, for properties, also `:` and `,`.
fn gh_escape(s: &str, property: bool) -> String {
    let mut out = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
        .replace("::", ":%3A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// One finding as a GitHub Actions `::error` workflow command, so it shows on the pull
/// request's line. The JSON pointer and the help go into the message.
pub fn github(f: &Finding) -> String {
    let mut props = Vec::new();
    if let Some(file) = &f.location.file {
        let file = file.to_string_lossy();
        let file = file.strip_prefix("./").unwrap_or(&file);
        props.push(format!("file={}", gh_escape(&visible(file), true)));
        if let Some(l) = f.location.line {
            props.push(format!("line={l}"));
        }
        if let Some(c) = f.location.column {
            props.push(format!("col={c}"));
        }
    }
    props.push(format!("title={}", gh_escape(f.code.as_str(), true)));
    let mut message = f.message.clone();
    if let Some(p) = &f.location.pointer {
        message.push_str(&format!(" (at {})", if p.is_empty() { "/" } else { p }));
    }
    if let Some(h) = &f.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    format!(
        "::{} {}::{}",
        f.severity.as_str(),
        props.join(","),
        gh_escape(&visible(&message), false)
    )
}

/// Findings as a SARIF 2.1.0 log: one rule per code, one result per finding.
pub fn sarif(findings: &[Finding]) -> Value {
    let mut codes: Vec<_> = findings.iter().map(|f| f.code).collect();
    codes.sort();
    codes.dedup();
    let rules: Vec<Value> = codes
        .iter()
        .map(|c| {
            serde_json::json!({
                "id": c.as_str(),
                "name": c.as_str(),
                "shortDescription": {"text": c.description()},
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut result = serde_json::json!({
                "ruleId": f.code.as_str(),
                "ruleIndex": codes.iter().position(|c| *c == f.code),
                "level": f.severity.as_str(),
                "message": {"text": match &f.help {
                    Some(h) => format!("{} (help: {h})", f.message),
                    None => f.message.clone(),
                }},
            });
            if let Some(file) = &f.location.file {
                let uri = file.to_string_lossy().replace('\\', "/");
                let uri = uri.strip_prefix("./").unwrap_or(&uri).to_string();
                let mut physical = serde_json::json!({"artifactLocation": {"uri": uri}});
                if let Some(line) = f.location.line {
                    let mut region = serde_json::json!({"startLine": line});
                    if let Some(col) = f.location.column {
                        region["startColumn"] = serde_json::json!(col);
                    }
                    physical["region"] = region;
                }
                result["locations"] = serde_json::json!([{"physicalLocation": physical}]);
            }
            let mut props = serde_json::Map::new();
            if let Some(p) = &f.location.pointer {
                props.insert("pointer".into(), serde_json::json!(p));
            }
            if let Some(c) = f.condition {
                props.insert("condition".into(), serde_json::json!(c));
            }
            if !props.is_empty() {
                result["properties"] = Value::Object(props);
            }
            result
        })
        .collect();
    serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillbundle",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

/// `skillbundle diff` for people: per skill, its changes and the version steps they need.
pub fn diff_lines(d: &skillbundle::release::diff::Diff) -> Vec<String> {
    use skillbundle::release::step::{suggest, Step};
    let step_taken = |a: Option<Step>| match a {
        Some(Step::None) => "kept its version".to_string(),
        Some(s) => format!("took a {s} step"),
        None => "went down".to_string(),
    };
    let mut lines = Vec::new();
    if d.skills.is_empty() {
        lines.push("no skills on either side".to_string());
    }
    for s in &d.skills {
        let v = |x: &Option<skillbundle::wire::version::Version>| {
            x.map_or("-".to_string(), |v| v.to_string())
        };
        match s.status {
            "added" => {
                lines.push(format!("{} {}: added", s.skill_id, v(&s.new_version)));
                continue;
            }
            "removed" => {
                lines.push(format!("{} {}: removed", s.skill_id, v(&s.old_version)));
                continue;
            }
            "unchanged" => {
                lines.push(format!("{} {}: unchanged", s.skill_id, v(&s.new_version)));
                continue;
            }
            "not_compared" => {
                lines.push(format!(
                    "{} {} → {}: not compared (a side has problems: see the warnings)",
                    s.skill_id,
                    v(&s.old_version),
                    v(&s.new_version)
                ));
                continue;
            }
            _ => {}
        }
        let mut head = format!(
            "{} {} → {}: needs {}",
            s.skill_id,
            v(&s.old_version),
            v(&s.new_version),
            match s.required {
                Step::None => "no version step".to_string(),
                r => format!("a {r} step"),
            }
        );
        head.push_str(&format!(", {}", step_taken(s.actual)));
        if let Some(sug) = s.suggested {
            head.push_str(&format!(" — not enough: use {sug}"));
        }
        lines.push(head);
        for c in &s.changes {
            lines.push(format!("  - {} [{}]", c.what, c.required));
        }
        for sd in &s.schemas {
            let (Some(o), Some(n)) = (&sd.old, &sd.new) else {
                continue;
            };
            let target = if o.schema_uri == n.schema_uri {
                format!("{} {} → {}", o.schema_uri, o.version, n.version)
            } else {
                format!(
                    "{} {} → {} {}",
                    o.schema_uri, o.version, n.schema_uri, n.version
                )
            };
            let mut line = format!(
                "  {} {target}: {}, needs {}",
                sd.label(),
                if sd.breaking {
                    "breaking"
                } else {
                    "compatible"
                },
                match sd.required {
                    Step::None => "no version step".to_string(),
                    r => format!("a {r} step"),
                }
            );
            if o.schema_uri == n.schema_uri {
                line.push_str(&format!(", {}", step_taken(sd.actual)));
                if !sd.satisfied {
                    line.push_str(&format!(
                        " — not enough: use {}",
                        suggest(&[o.version], o.version, sd.required)
                    ));
                }
            }
            lines.push(line);
            for classified in &sd.changes {
                let c = &classified.change;
                let pointer = |p: &str| {
                    if p.is_empty() {
                        "/".to_string()
                    } else {
                        p.to_string()
                    }
                };
                lines.push(format!(
                    "    {:<10} {} ({}) {} → {}: {}",
                    if classified.breaking {
                        "breaking"
                    } else {
                        "compatible"
                    },
                    c.rule,
                    c.direction,
                    pointer(&c.old_pointer),
                    pointer(&c.new_pointer),
                    c.why
                ));
            }
        }
    }
    lines
}

/// The exit status of the run once stdout is flushed ([`output::finish`]): `status`,
/// or 2 with the `io_error` on stderr when the output could not be delivered.
pub fn finish(status: std::process::ExitCode) -> std::process::ExitCode {
    match output::finish() {
        None => status,
        Some(f) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "{}", human(&f, use_color()));
            std::process::ExitCode::from(2)
        }
    }
}
