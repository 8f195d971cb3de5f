//! The strict YAML readers: `skillbundle.yaml`, `skill.yaml`, and YAML-authored schemas.
//!
//! Properties: no input panics or hangs (the alias, node and depth budgets hold); a
//! YAML-authored value satisfies the I-JSON number rule, and its JCS bytes are read back
//! by the strict JSON reader to the same value (what the builder digests, the loader can
//! read); a parsed skill manifest's versions print in canonical MAJOR.MINOR form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillbundle::build::manifest::{SkillManifest, WorkspaceManifest};
use skillbundle::wire::yaml;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = yaml::from_str::<WorkspaceManifest>(text);
    if let Ok(skill) = yaml::from_str::<SkillManifest>(text) {
        for v in [
            skill.skill_version,
            skill.input.version,
            skill.output.version,
        ] {
            let shown = v.to_string();
            assert!(
                shown.parse::<skillbundle::wire::version::Version>().ok() == Some(v),
                "version {shown} does not round-trip"
            );
        }
    }
    let _ = yaml::from_str::<skillbundle::build::examples::Expectation>(text);
    if let Ok(value) = yaml::to_json(text, 64) {
        skillbundle::wire::json::check_numbers(&value).expect("I-JSON numbers");
        let canonical = skillbundle::wire::digest::jcs(&value);
        let reread = skillbundle::wire::json::parse(&canonical).unwrap_or_else(|e| {
            panic!(
                "JCS bytes {:?} of a YAML value are not read back: {e}",
                String::from_utf8_lossy(&canonical)
            )
        });
        assert_eq!(
            skillbundle::wire::digest::jcs(&reread),
            canonical,
            "JCS bytes read back to another value"
        );
    }
});
