//! Version strings: canonical `MAJOR.MINOR`, compared numerically.
//!
//! The draft defines one syntax for skill_version and every Schema Reference version:
//! two dot-separated non-negative decimal integers, no leading zero unless the value is
//! zero. Canonical form makes numeric equality the same as string equality, so "1.10"
//! and "1.1" are different versions — which is exactly why an unquoted YAML `1.10`
//! (the float 1.1) must be an error and never silently become "1.1".

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A canonical `MAJOR.MINOR` version. Ordering is numeric: 1.9 < 1.10 < 2.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    /// The MAJOR number.
    pub major: u64,
    /// The MINOR number.
    pub minor: u64,
}

impl Version {
    /// The version `major.minor`.
    pub const fn new(major: u64, minor: u64) -> Self {
        Version { major, minor }
    }

    /// The next MINOR step (1.2 → 1.3).
    pub fn next_minor(self) -> Version {
        Version::new(self.major, self.minor + 1)
    }

    /// The next MAJOR step (1.2 → 2.0).
    pub fn next_major(self) -> Version {
        Version::new(self.major + 1, 0)
    }
}

/// A canonical version's value, or `None` for any other text.
fn canonical(s: &str) -> Option<Version> {
    let dot = s.bytes().position(|b| b == b'.')?;
    Some(Version::new(
        component(&s[..dot])?,
        component(&s[dot + 1..])?,
    ))
}

/// Why a string is not a canonical version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionError(pub String);

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for VersionError {}

/// The value of a canonical component: ASCII digits without a leading zero (but `0`),
/// within `u64`. Read digit by digit: `str::parse` would take a leading `+`.
fn component(s: &str) -> Option<u64> {
    let digits = s.as_bytes();
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
            .flatten()
    })
}

impl FromStr for Version {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, VersionError> {
        canonical(s).ok_or_else(|| {
            VersionError(format!(
                "{s:?} is not a canonical MAJOR.MINOR version (two decimal integers without leading zeros, like \"1.0\" or \"2.10\")"
            ))
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Marker at the start of a deserialization error message, so the manifest reader can
/// report such errors as `version_invalid` rather than `manifest_invalid`.
pub const ERROR_TAG: &str = "invalid version: ";

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quoted MAJOR.MINOR version string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Version, E> {
                s.parse()
                    .map_err(|e: VersionError| E::custom(format!("{ERROR_TAG}{e}")))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Version, E> {
                Err(E::custom(format!(
                    "{ERROR_TAG}the unquoted number {f} is read as a float, which loses the version's text (1.10 would become 1.1); quote it, for example \"1.0\""
                )))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Version, E> {
                Err(E::custom(format!(
                    "{ERROR_TAG}the unquoted number {n} is not a MAJOR.MINOR version; write a quoted string such as \"{n}.0\""
                )))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Version, E> {
                Err(E::custom(format!(
                    "{ERROR_TAG}{n} is not a MAJOR.MINOR version; write a quoted string such as \"1.0\""
                )))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Version, E> {
                Err(E::custom(format!(
                    "{ERROR_TAG}a boolean is not a version; write a quoted string such as \"1.0\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_canonical_versions() {
        assert_eq!("1.0".parse::<Version>().unwrap(), Version::new(1, 0));
        assert_eq!("0.0".parse::<Version>().unwrap(), Version::new(0, 0));
        assert_eq!("10.20".parse::<Version>().unwrap(), Version::new(10, 20));
    }

    #[test]
    fn refuses_non_canonical_versions() {
        for bad in [
            "01.0", "1.00", "1", "1.0.0", "1.", ".1", "latest", "", "v1.0", "1.-1", "+1.0", "1.0 ",
            "１.0",
        ] {
            assert!(bad.parse::<Version>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn orders_numerically() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(v("1.9") < v("1.10"));
        assert!(v("1.10") < v("2.0"));
        assert_eq!(v("1.2").next_minor(), v("1.3"));
        assert_eq!(v("1.2").next_major(), v("2.0"));
    }

    proptest::proptest! {
        /// The canonical form is the only form: a text is a version exactly when it is
        /// the version written out, so comparing a request's skill_version with the
        /// written-out text (as `Bundle::admit` does) is comparing versions.
        #[test]
        fn a_version_has_one_text(
            major in 0u64..1000,
            minor in 0u64..1000,
            text in "[0-9.]{0,9}",
        ) {
            let v = Version::new(major, minor);
            proptest::prop_assert_eq!(v.to_string().parse::<Version>().ok(), Some(v));
            proptest::prop_assert_eq!(text.parse::<Version>().ok() == Some(v), v.to_string() == text);
        }
    }

    #[test]
    fn a_version_has_one_text_at_the_edges() {
        let max = Version::new(u64::MAX, u64::MAX);
        assert_eq!(max.to_string().parse::<Version>().ok(), Some(max));
        for text in ["18446744073709551616.0", "01.0", "1.0 ", "+1.0", "1.00"] {
            assert!(text.parse::<Version>().is_err(), "{text}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["0.0", "1.10", "123.4"] {
            assert_eq!(s.parse::<Version>().unwrap().to_string(), s);
        }
    }
}
