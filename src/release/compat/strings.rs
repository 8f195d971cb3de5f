//! String keywords: lengths (as counts), `pattern` (only equality is decided: regular
//! language inclusion is not) and `format` (a few known inclusions between formats).

use super::*;

impl<'a> Cx<'a> {
    // -- strings -----------------------------------------------------------------------

    pub(super) fn cmp_strings(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        self.cmp_count(o, n, pol, "minLength", true, "min-length");
        self.cmp_count(o, n, pol, "maxLength", false, "max-length");
        let (op, np) = (Self::ptr_of(o, &["pattern"]), Self::ptr_of(n, &["pattern"]));
        match (o.v.get("pattern"), n.v.get("pattern")) {
            (None, None) => {}
            (None, Some(p)) => self.emit(
                pol,
                "pattern-added",
                Direction::Narrowing,
                &op,
                &np,
                format!("strings must now match {}", short(p)),
            ),
            (Some(p), None) => self.emit(
                pol,
                "pattern-removed",
                Direction::Widening,
                &op,
                &np,
                format!("strings need no longer match {}", short(p)),
            ),
            (Some(a), Some(b)) if a != b => self.emit(
                pol,
                "pattern-changed",
                Direction::Undecided,
                &op,
                &np,
                format!(
                    "the pattern changed from {} to {}; whether one language contains the other is not decided",
                    short(a),
                    short(b)
                ),
            ),
            _ => {}
        }
        let (op, np) = (Self::ptr_of(o, &["format"]), Self::ptr_of(n, &["format"]));
        match (o.v.get("format"), n.v.get("format")) {
            (None, None) => {}
            (None, Some(f)) => self.emit(
                pol,
                "format-added",
                Direction::Narrowing,
                &op,
                &np,
                format!("format {} is now asserted", short(f)),
            ),
            (Some(f), None) => self.emit(
                pol,
                "format-removed",
                Direction::Widening,
                &op,
                &np,
                format!("format {} is no longer asserted", short(f)),
            ),
            (Some(a), Some(b)) if a != b => {
                let (rule, dir) = match (a.as_str(), b.as_str()) {
                    (Some(x), Some(y)) if format_within(x, y) => {
                        ("format-widened", Direction::Widening)
                    }
                    (Some(x), Some(y)) if format_within(y, x) => {
                        ("format-narrowed", Direction::Narrowing)
                    }
                    _ => ("format-changed", Direction::Undecided),
                };
                self.emit(
                    pol,
                    rule,
                    dir,
                    &op,
                    &np,
                    format!("the format changed from {} to {}", short(a), short(b)),
                );
            }
            _ => {}
        }
    }
}

/// Whether every string valid for format `a` is valid for format `b`.
fn format_within(a: &str, b: &str) -> bool {
    matches!(
        (a, b),
        ("hostname", "idn-hostname")
            | ("email", "idn-email")
            | ("uri", "iri")
            | ("uri", "uri-reference")
            | ("uri", "iri-reference")
            | ("uri-reference", "iri-reference")
            | ("iri", "iri-reference")
    )
}
