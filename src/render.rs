//! Rendering findings for people and for machines. The only place that prints.

use serde_json::Value;
use skillbundle::condition::ErrorObject;
use skillbundle::finding::Finding;
use std::io::Write;
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

/// One finding as a few lines of text, compiler-style.
pub fn human(f: &Finding) -> String {
    let mut s = format!("error[{}]: {}", f.code, f.message);
    if let Some(file) = &f.location.file {
        s.push_str(&format!("\n  --> {}", file.display()));
        if let (Some(l), Some(c)) = (f.location.line, f.location.column) {
            s.push_str(&format!(":{l}:{c}"));
        } else if let Some(l) = f.location.line {
            s.push_str(&format!(":{l}"));
        }
    }
    if let Some(p) = &f.location.pointer {
        s.push_str(&format!(
            "\n   = at: {}",
            if p.is_empty() { "/ (the root)" } else { p }
        ));
    }
    if let Some(c) = f.condition {
        s.push_str(&format!("\n   = condition: {c}"));
    }
    if let Some(h) = &f.help {
        s.push_str(&format!("\n   = help: {h}"));
    }
    s
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
    report_with(format, findings, doc, success, "nothing was written")
}

/// [`report`], ending the human list of findings with `outcome` (what the failure meant).
pub fn report_with(
    format: Format,
    findings: &[Finding],
    doc: &Value,
    success: impl FnOnce() -> Vec<String>,
    outcome: &str,
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
                let mut err = std::io::stderr().lock();
                for f in findings {
                    let _ = writeln!(err, "{}\n", human(f));
                }
                let n = findings.len();
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
    if format == Format::Human {
        let _ = writeln!(std::io::stderr().lock(), "warning: {message}");
    }
}

/// Print one of the draft's error objects on stdout (it is the command's output in
/// both formats) and, for people, a one-line summary on stderr. Exit status 1.
pub fn error_object(format: Format, error: &ErrorObject) -> ExitCode {
    print_json(&error.to_json());
    if format == Format::Human {
        let _ = writeln!(
            std::io::stderr().lock(),
            "error[{}]: {}",
            error.code(),
            error.message()
        );
    }
    ExitCode::from(1)
}
