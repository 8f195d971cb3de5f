//! JSON Pointers (RFC 6901): every finding about a place inside a JSON value names it
//! with one, so the same tiny helpers are shared by every check.

/// Escape one reference token (`~` → `~0`, `/` → `~1`).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Append a token to a pointer.
pub fn push(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape(token))
}

/// Split a pointer into unescaped tokens; `None` when it is not a valid pointer.
pub fn parse(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/')
        .map(|t| {
            // `~` must be followed by 0 or 1.
            let mut out = String::with_capacity(t.len());
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return None,
                    }
                } else {
                    out.push(c);
                }
            }
            Some(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_tokens() {
        assert_eq!(push("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(parse("/a/b~1c~0d"), Some(vec!["a".into(), "b/c~d".into()]));
        assert_eq!(parse(""), Some(vec![]));
        assert_eq!(parse("a"), None);
        assert_eq!(parse("/~2"), None);
    }
}
