//! The skill binding: one skill_id bound to exactly one skill_version and one
//! interface_digest.
//!
//! The draft's "Agent Card Advertisement" section has the extension's `params.skills`
//! bind each skill_id to "exactly one skill_version and interface_digest", and the same
//! triple identifies a skill everywhere else: the skill request object (section "Skill
//! Request Object"), the client's interface cache ("Operational Considerations": an entry
//! is "bound to the same ... skill identifier, skill version, and interface digest"),
//! the bundle manifest, the lock file, and every report. It is one type here, with the
//! version and digest typed, so no side compares or prints them as loose strings.

use crate::wire::digest::Digest;
use crate::wire::version::Version;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A skill_id bound to one skill_version and interface_digest. Serialized as
/// `{"skill_id","skill_version","interface_digest"}`, in that order: the extension's
/// entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Binding {
    /// The AgentSkill id.
    pub skill_id: String,
    /// The one version of the skill bound.
    pub skill_version: Version,
    /// The digest of that version's Skill Interface Document.
    pub interface_digest: Digest,
}

impl Binding {
    /// The extension's entry: `{"skill_id","skill_version","interface_digest"}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "skill_id": self.skill_id,
            "skill_version": self.skill_version.to_string(),
            "interface_digest": self.interface_digest.as_str(),
        })
    }

    /// The human form of a report line: `ID VERSION DIGEST`.
    pub fn human(&self) -> String {
        format!(
            "{} {} {}",
            self.skill_id, self.skill_version, self.interface_digest
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_the_extension_entry() {
        let b = Binding {
            skill_id: "get_weather".into(),
            skill_version: "1.10".parse().unwrap(),
            interface_digest: Digest::of_bytes(b"x"),
        };
        let text = serde_json::to_string(&b).unwrap();
        assert_eq!(
            text,
            format!(
                "{{\"skill_id\":\"get_weather\",\"skill_version\":\"1.10\",\"interface_digest\":\"{}\"}}",
                b.interface_digest
            )
        );
        assert_eq!(serde_json::to_value(&b).unwrap(), b.to_json());
        assert_eq!(serde_json::from_str::<Binding>(&text).unwrap(), b);
    }
}
