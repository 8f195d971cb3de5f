//! Rendering findings for people and for machines. The only place that prints.

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use serde_json::Value;
use skillbundle::finding::Finding;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

/// Print a JSON document on stdout.
pub fn print_json(doc: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, doc);
    let _ = writeln!(out);
}

/// One finding as a compiler-style diagnostic: the code, the message, and — when the
/// finding has a file, line and column we can read back — the source line with the
/// offending token underlined and the JSON pointer as its label.
pub fn human(f: &Finding, styled: bool) -> String {
    let title = f.message.clone();
    let pointer = f.location.pointer.as_ref().map(|p| {
        if p.is_empty() {
            "/ (the root)".to_string()
        } else {
            p.clone()
        }
    });
    let source = f
        .location
        .file
        .as_ref()
        .zip(f.location.line.zip(f.location.column))
        .and_then(|(file, (line, col))| source_line(file, line, col).map(|s| (file, line, s)));
    let mut notes: Vec<String> = Vec::new();
    let mut group = Group::with_title(Level::ERROR.primary_title(title).id(f.code.as_str()));
    match &source {
        Some((file, line, (text, span))) => {
            let mut annotation = AnnotationKind::Primary.span(span.clone());
            if let Some(p) = &pointer {
                annotation = annotation.label(format!("at {p}"));
            }
            group = group.element(
                Snippet::source(text.as_str())
                    .line_start(*line)
                    .path(file.display().to_string())
                    .annotation(annotation),
            );
        }
        None => {
            if let Some(file) = &f.location.file {
                let mut at = file.display().to_string();
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
    if let Some(h) = &f.help {
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
    let line_text = text.lines().nth(line.checked_sub(1)?)?.to_string();
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

/// The exit status for a set of findings: 0 none, 2 any I/O problem, 1 otherwise.
pub fn status(findings: &[Finding]) -> ExitCode {
    if findings.is_empty() {
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
    doc: &Value,
    success: impl FnOnce() -> Vec<String>,
) -> ExitCode {
    match format {
        Format::Json => print_json(doc),
        Format::Human => {
            if findings.is_empty() {
                let mut out = std::io::stdout().lock();
                for line in success() {
                    let _ = writeln!(out, "{line}");
                }
            } else {
                let styled = use_color();
                let mut err = std::io::stderr().lock();
                for f in findings {
                    let _ = writeln!(err, "{}\n", human(f, styled));
                }
                let n = findings.len();
                let _ = writeln!(
                    err,
                    "{n} problem{} found; nothing was written",
                    if n == 1 { "" } else { "s" }
                );
            }
        }
    }
    status(findings)
}

/// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}
