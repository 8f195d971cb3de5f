//! Version steps: what a change to a published schema or skill requires of its version.
//!
//! The draft ("Schema Evolution and Compatibility"): a published version and digest are
//! immutable; a change that is not backward compatible "increments MAJOR and resets MINOR
//! to zero", a backward-compatible one "increments MINOR". This module is that
//! arithmetic: the step between two versions, the smallest version that takes a step
//! above everything recorded, and why a proposed next version is not allowed. The rules
//! ([`crate::release::rules`]) and `diff` ([`crate::release::diff`]) both use it.

use crate::wire::version::Version;
use serde::Serialize;
use std::fmt;

/// A version step, ordered: none < minor < major.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// The same version.
    None,
    /// A higher MINOR in the same MAJOR.
    Minor,
    /// A higher MAJOR.
    Major,
}

impl Step {
    /// The step from `old` to `new`; `None` (the Option) when `new` is lower.
    pub fn between(old: Version, new: Version) -> Option<Step> {
        if new.major > old.major {
            Some(Step::Major)
        } else if new.major == old.major && new.minor > old.minor {
            Some(Step::Minor)
        } else if new == old {
            Some(Step::None)
        } else {
            None
        }
    }

    /// The wire name (`none`, `minor`, `major`).
    pub fn as_str(self) -> &'static str {
        match self {
            Step::None => "none",
            Step::Minor => "MINOR",
            Step::Major => "MAJOR",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The skill_version a breaking interface change needs: `current` itself when it is
/// unpublished and already a MAJOR step above every recorded version (`X.0` with X above
/// each recorded MAJOR), else the next MAJOR version above everything recorded.
pub fn major_step_from(recorded: &[Version], current: Version) -> Version {
    let already = current.minor == 0 && recorded.iter().all(|v| v.major < current.major);
    if already {
        current
    } else {
        suggest(recorded, current, Step::Major)
    }
}

/// The smallest version that takes `step` from `current`, above everything recorded.
pub fn suggest(recorded: &[Version], current: Version, step: Step) -> Version {
    match step {
        Step::None => current,
        Step::Minor => {
            let top = recorded
                .iter()
                .filter(|v| v.major == current.major)
                .map(|v| v.minor)
                .chain([current.minor])
                .max()
                .unwrap_or(current.minor);
            Version::new(current.major, top + 1)
        }
        Step::Major => {
            let top = recorded
                .iter()
                .map(|v| v.major)
                .chain([current.major])
                .max()
                .unwrap_or(current.major);
            Version::new(top + 1, 0)
        }
    }
}

/// Why `new` (not yet recorded) is not an allowed next version, given the recorded ones.
pub fn version_problem(recorded: &[Version], new: Version) -> Option<String> {
    if recorded.is_empty() || recorded.contains(&new) {
        return None;
    }
    let line_top = recorded
        .iter()
        .filter(|v| v.major == new.major)
        .map(|v| v.minor)
        .max();
    if let Some(top) = line_top {
        if new.minor <= top {
            return Some(format!(
                "{new} is not higher than {}.{top}, the highest recorded in the {}.x line; use {}",
                new.major,
                new.major,
                Version::new(new.major, top + 1)
            ));
        }
        return None;
    }
    let max_major = recorded.iter().map(|v| v.major).max().unwrap_or(0);
    if new.major < max_major {
        return Some(format!(
            "{new} starts a MAJOR line below the highest recorded one ({max_major}.x); a new MAJOR version must be higher: use {}",
            Version::new(max_major + 1, 0)
        ));
    }
    if new.minor != 0 {
        return Some(format!(
            "{new} starts a new MAJOR line, which begins at MINOR 0: use {}",
            Version::new(new.major, 0)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn new_versions_must_be_higher() {
        let recorded = [v("1.0"), v("1.1"), v("2.0")];
        assert_eq!(version_problem(&recorded, v("1.2")), None);
        assert!(version_problem(&recorded, v("1.1")).is_none()); // recorded: immutability decides
        assert!(version_problem(&[v("1.0"), v("1.2")], v("1.1"))
            .unwrap()
            .contains("use 1.3"));
        assert_eq!(version_problem(&recorded, v("3.0")), None);
        assert!(version_problem(&recorded, v("3.1"))
            .unwrap()
            .contains("use 3.0"));
        assert!(version_problem(&[v("2.0")], v("1.0"))
            .unwrap()
            .contains("use 3.0"));
        assert_eq!(version_problem(&[], v("4.7")), None);
    }

    #[test]
    fn suggestions_clear_every_recorded_version() {
        let recorded = [v("1.0"), v("1.3"), v("2.0")];
        assert_eq!(suggest(&recorded, v("1.0"), Step::Minor), v("1.4"));
        assert_eq!(suggest(&recorded, v("1.0"), Step::Major), v("3.0"));
        assert_eq!(suggest(&[], v("1.0"), Step::Major), v("2.0"));
        assert_eq!(Step::between(v("1.9"), v("1.10")), Some(Step::Minor));
        assert_eq!(Step::between(v("1.9"), v("2.0")), Some(Step::Major));
        assert_eq!(Step::between(v("2.0"), v("1.9")), None);
    }
}
