//! Rendering findings for people and for machines. The only place that prints.

use serde_json::Value;
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
                    "{n} problem{} found; nothing was written",
                    if n == 1 { "" } else { "s" }
                );
            }
        }
    }
    status(findings)
}

/// `skillbundle diff` for people: per skill, its changes and the version steps they need.
pub fn diff_lines(d: &skillbundle::evolution::Diff) -> Vec<String> {
    use skillbundle::evolution::{suggest, Step};
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
        let v = |x: &Option<skillbundle::version::Version>| {
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
