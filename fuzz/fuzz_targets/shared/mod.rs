//! What the bundle_open and request targets share: a valid bundle built in memory from
//! example-skills and signed with a fixed key, and a few byte-editing helpers.
#![allow(dead_code)]

use skillbundle::agent::{Bundle, TrustedKeys};

use skillbundle::bundle;
use skillbundle::interface::Document;
use skillbundle::interface::packaged_schema::InterfaceSchema;
use skillbundle::crypto::keys::SigningKeyPair;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

pub struct Fixture {
    pub key: SigningKeyPair,
    pub trust: TrustedKeys,
    /// The archive's files.
    pub files: BTreeMap<String, Vec<u8>>,
    /// The archive as the builder writes it.
    pub archive: Vec<u8>,
    /// The uncompressed tar of `archive`.
    pub tar: Vec<u8>,
    pub bundle: Bundle,
    /// What `bundle` serves (see [`served`]), computed once.
    pub served: serde_json::Value,
}

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-skills");
        let checked = skillbundle::build::pipeline::check(&root);
        assert!(
            checked.ok(),
            "example-skills must check: {:?}",
            checked.findings
        );
        let ws = checked.workspace.as_ref().unwrap();
        let schema = InterfaceSchema::packaged().unwrap();
        let interfaces: Vec<&Document> = checked.skills.iter().map(|s| &s.interface).collect();
        let mut contents = bundle::contents(
            &ws.manifest.bundle.name,
            &ws.manifest.bundle.version,
            schema.digest(),
            &interfaces,
            &skillbundle::build::pipeline::card_fragment(&checked.skills),
        );
        let key = SigningKeyPair::from_seed(&[7; 32]);
        bundle::sign::sign(&mut contents, std::slice::from_ref(&key));
        let files: BTreeMap<String, Vec<u8>> = contents
            .files
            .into_iter()
            .map(|(path, body)| (path, body.bytes().to_vec()))
            .collect();
        let archive = pack(&files);
        let tar = gunzip(&archive);
        let trust = TrustedKeys::new(vec![key.public_key()]);
        let bundle = Bundle::open(&archive, &trust).expect("the fixture bundle opens");
        let served = served(&bundle);
        Fixture {
            key,
            trust,
            files,
            archive,
            tar,
            bundle,
            served,
        }
    })
}

pub fn pack(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    bundle::archive::write(
        Vec::new(),
        files.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
        0,
    )
    .unwrap()
}

pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

pub fn gzip_stored(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// Apply edits to `target`: the script is read in chunks of five bytes
/// `op, offset (3 bytes, big-endian), value`, with the offset taken modulo the length.
/// op % 4: 0 set the byte, 1 insert the byte, 2 delete a byte, 3 truncate.
pub fn edit(target: &mut Vec<u8>, script: &[u8]) {
    for chunk in script.chunks_exact(5) {
        let len = target.len();
        let offset =
            (usize::from(chunk[1]) << 16) | (usize::from(chunk[2]) << 8) | usize::from(chunk[3]);
        let value = chunk[4];
        match chunk[0] % 4 {
            0 if len > 0 => target[offset % len] = value,
            1 => target.insert(offset % (len + 1), value),
            2 if len > 0 => {
                target.remove(offset % len);
            }
            3 => target.truncate(offset % (len + 1)),
            _ => {}
        }
    }
}

/// Everything a loaded bundle serves, as one comparable value.
pub fn served(bundle: &Bundle) -> serde_json::Value {
    let describe: Vec<serde_json::Value> = bundle
        .skill_ids()
        .map(|id| {
            bundle
                .describe_skill(id)
                .expect("advertised skills describe")
        })
        .collect();
    serde_json::json!({
        "name": bundle.name(),
        "version": bundle.version(),
        "generator": bundle.generator(),
        "skills": bundle.skill_ids().collect::<Vec<_>>(),
        "describe": describe,
        "fragment": bundle.card_fragment(),
        "extension": serde_json::to_value(bundle.extension()).unwrap(),
        "agent_skills": serde_json::to_value(bundle.agent_skills()).unwrap(),
    })
}
