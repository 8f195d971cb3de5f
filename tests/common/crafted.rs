//! Crafted bundle archives: a valid signed bundle of example-skills, and a corpus of
//! archives built from it at test time, one or more per class of archive trick (pax
//! and GNU extension headers, links, data after the end, second gzip members, names
//! and order the layout does not allow, oversized claims), each with the finding code
//! the loader must give. Shared by `tests/integration/hostile.rs`,
//! `tests/parts/canonical.rs` and `tests/resources.rs`.

use skillbundle::agent::{Bundle, TrustedKeys};

use skillbundle::bundle;
use skillbundle::crypto::keys::SigningKeyPair;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::OnceLock;

/// A valid bundle of example-skills signed with a fixed key, built in memory.
pub struct Fixture {
    pub files: BTreeMap<String, Vec<u8>>,
    pub key: SigningKeyPair,
}

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let checked = skillbundle::build::pipeline::check(&super::example_skills());
        assert!(checked.ok(), "{:?}", checked.findings);
        let ws = checked.workspace.as_ref().unwrap();
        let interfaces: Vec<_> = checked.skills.iter().map(|s| &s.interface).collect();
        let schema = skillbundle::interface::packaged_schema::InterfaceSchema::packaged().unwrap();
        let mut contents = bundle::contents(
            &ws.manifest.bundle.name,
            &ws.manifest.bundle.version,
            schema.digest(),
            &interfaces,
            &skillbundle::build::pipeline::card_fragment(&checked.skills),
        );
        let key = SigningKeyPair::from_seed(&[42; 32]);
        bundle::sign::sign(&mut contents, std::slice::from_ref(&key));
        let fx = Fixture {
            files: contents
                .files
                .into_iter()
                .map(|(path, body)| (path, body.bytes().to_vec()))
                .collect(),
            key,
        };
        Bundle::open(&fx.valid(), &fx.trust()).expect("the fixture opens");
        fx
    })
}

impl Fixture {
    /// The signed bundle as the builder writes it.
    pub fn valid(&self) -> Vec<u8> {
        pack(&self.files, 0)
    }

    /// Trust in the fixture's key only.
    pub fn trust(&self) -> TrustedKeys {
        TrustedKeys::new(vec![self.key.public_key()])
    }

    /// The decompressed (tar) stream of the valid bundle.
    pub fn tar(&self) -> Vec<u8> {
        gunzip(&self.valid())
    }
}

/// The largest manifest.json a loader reads.
const MANIFEST_CAP: u64 = skillbundle::bundle::first_pass::MAX_BUNDLE_MANIFEST_BYTES;

/// The builder's own writer.
pub fn pack(files: &BTreeMap<String, Vec<u8>>, mtime: u64) -> Vec<u8> {
    bundle::archive::write(
        Vec::new(),
        files.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
        mtime,
    )
    .unwrap()
}

pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// Gzip as the builder does (same header), so only the tar stream differs.
pub fn gzip(tar: &[u8]) -> Vec<u8> {
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::new(6));
    gz.write_all(tar).unwrap();
    gz.finish().unwrap()
}

/// A header as the builder writes it, then `edit` applied and the checksum reset.
pub fn header(path: &str, size: u64, edit: impl FnOnce(&mut tar::Header)) -> tar::Header {
    let mut h = tar::Header::new_ustar();
    h.set_path(path).unwrap();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(size);
    h.set_mode(0o644);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_username("").unwrap();
    h.set_groupname("").unwrap();
    edit(&mut h);
    h.set_cksum();
    h
}

/// One tar entry (header, data, zero padding).
pub fn entry(h: &tar::Header, data: &[u8]) -> Vec<u8> {
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(512), 0);
    out
}

/// A pax extended header entry holding `records` (each `key=value`).
pub fn pax(records: &[&str]) -> Vec<u8> {
    let mut body = Vec::new();
    for r in records {
        // "<len> <key>=<value>\n", where len counts itself.
        let rest = format!(" {r}\n");
        let mut len = rest.len() + 1;
        while format!("{len}{rest}").len() != len {
            len += 1;
        }
        body.extend_from_slice(format!("{len}{rest}").as_bytes());
    }
    let h = header("PaxHeaders/x", body.len() as u64, |h| {
        h.set_entry_type(tar::EntryType::XHeader)
    });
    entry(&h, &body)
}

/// A GNU long-name (`L`) or long-link (`K`) entry carrying `name`.
pub fn gnu_long(kind: tar::EntryType, name: &str) -> Vec<u8> {
    let mut data = name.as_bytes().to_vec();
    data.push(0);
    let mut h = tar::Header::new_gnu();
    h.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
    h.set_entry_type(kind);
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    entry(&h, &data)
}

/// The valid tar stream's entries, each as (path, bytes of header+data+padding).
pub fn entries(tar: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 512 <= tar.len() && tar[at..at + 512] != [0; 512] {
        let h = tar::Header::from_byte_slice(&tar[at..at + 512]);
        let size = h.size().unwrap() as usize;
        let end = at + 512 + size.next_multiple_of(512);
        out.push((
            String::from_utf8(h.path_bytes().into_owned()).unwrap(),
            tar[at..end].to_vec(),
        ));
        at = end;
    }
    out
}

pub struct Crafted {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    /// The code `Bundle::open` (with the fixture's key trusted) must give, or None when
    /// it must accept.
    pub code: Option<&'static str>,
}

const INVALID: Option<&str> = Some("bundle_invalid");
const LIMIT: Option<&str> = Some("resource_limit_exceeded");

/// The corpus: every class of archive trick, built from the fixture.
pub fn corpus(fx: &Fixture) -> Vec<Crafted> {
    let tar = fx.tar();
    let parts = entries(&tar);
    let body: Vec<u8> = parts.iter().flat_map(|(_, b)| b.clone()).collect();
    let end = vec![0u8; 1024];
    let find = |name: &str| parts.iter().find(|(p, _)| p == name).unwrap().1.clone();
    let manifest = find("manifest.json");
    let fragment = find("a2a/agent-card-fragment.json");
    let evil_manifest = entry(&header("manifest.json", 2, |_| {}), b"{}");
    let evil_fragment = entry(&header("a2a/agent-card-fragment.json", 2, |_| {}), b"{}");
    let first_len = parts[0].1.len();
    let with_prefix = |prefix: Vec<u8>| [prefix, body.clone(), end.clone()].concat();
    let mut unsigned = fx.files.clone();
    {
        let mut m: serde_json::Value = serde_json::from_slice(&unsigned["manifest.json"]).unwrap();
        m.as_object_mut().unwrap().remove("signatures");
        unsigned.insert("manifest.json".into(), bundle::stable_pretty(&m));
    }
    let c = |name, tar_stream: Vec<u8>, code| Crafted {
        name,
        bytes: gzip(&tar_stream),
        code,
    };
    vec![
        Crafted {
            name: "valid signed bundle",
            bytes: fx.valid(),
            code: None,
        },
        Crafted {
            name: "valid bundle written with a SOURCE_DATE_EPOCH mtime",
            bytes: pack(&fx.files, 1_700_000_000),
            code: None,
        },
        Crafted {
            name: "unsigned bundle",
            bytes: pack(&unsigned, 0),
            code: Some("untrusted_key"),
        },
        c(
            "pax header with two size records before the first entry",
            with_prefix(pax(&["size=2", "size=4096"])),
            INVALID,
        ),
        c(
            "pax record whose value holds a newline",
            with_prefix(pax(&["comment=a\n1 size=9"])),
            INVALID,
        ),
        c(
            "pax path override",
            with_prefix(pax(&["path=manifest.json"])),
            INVALID,
        ),
        c(
            "pax mtime-only header",
            with_prefix(pax(&["mtime=1"])),
            INVALID,
        ),
        c(
            "pax size beyond the entry limit",
            with_prefix(pax(&["size=104857600"])),
            INVALID,
        ),
        c(
            "pax global header",
            [
                {
                    let mut p = pax(&["comment=x"]);
                    let mut h = tar::Header::from_byte_slice(&p[..512]).clone();
                    h.set_entry_type(tar::EntryType::XGlobalHeader);
                    h.set_cksum();
                    p[..512].copy_from_slice(h.as_bytes());
                    p
                },
                body.clone(),
                end.clone(),
            ]
            .concat(),
            INVALID,
        ),
        c(
            "GNU long name",
            with_prefix(
                [
                    gnu_long(tar::EntryType::GNULongName, "manifest.json"),
                    evil_manifest.clone(),
                ]
                .concat(),
            ),
            INVALID,
        ),
        c(
            "GNU long link",
            with_prefix(
                [
                    gnu_long(tar::EntryType::GNULongLink, "manifest.json"),
                    entry(
                        &header("a", 0, |h| h.set_entry_type(tar::EntryType::Symlink)),
                        b"",
                    ),
                ]
                .concat(),
            ),
            INVALID,
        ),
        c(
            "manifest and fragment after the end-of-archive blocks",
            [
                body.clone(),
                end.clone(),
                evil_fragment.clone(),
                evil_manifest.clone(),
                end.clone(),
            ]
            .concat(),
            INVALID,
        ),
        c(
            "manifest after a single zero block",
            [
                body.clone(),
                vec![0; 512],
                evil_manifest.clone(),
                end.clone(),
            ]
            .concat(),
            INVALID,
        ),
        c(
            "zero record padding after the end blocks",
            [tar.clone(), vec![0; 8192]].concat(),
            INVALID,
        ),
        c(
            "symbolic link entry",
            with_prefix(entry(
                &header("a2a/link", 0, |h| {
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_link_name("../manifest.json").unwrap();
                }),
                b"",
            )),
            INVALID,
        ),
        c(
            "hard link entry",
            with_prefix(entry(
                &header("a2a/hard", 0, |h| {
                    h.set_entry_type(tar::EntryType::Link);
                    h.set_link_name("manifest.json").unwrap();
                }),
                b"",
            )),
            INVALID,
        ),
        c(
            "directory entry",
            with_prefix(entry(
                &header("a2a/", 0, |h| h.set_entry_type(tar::EntryType::Directory)),
                b"",
            )),
            INVALID,
        ),
        c(
            "FIFO entry",
            with_prefix(entry(
                &header("a2a/fifo", 0, |h| h.set_entry_type(tar::EntryType::Fifo)),
                b"",
            )),
            INVALID,
        ),
        c(
            "GNU-format header for a listed entry",
            {
                let mut t = tar.clone();
                let mut h = tar::Header::new_gnu();
                let orig = tar::Header::from_byte_slice(&t[..512]);
                h.set_path(orig.path().unwrap()).unwrap();
                h.set_size(orig.size().unwrap());
                h.set_mode(0o644);
                h.set_cksum();
                t[..512].copy_from_slice(h.as_bytes());
                t
            },
            INVALID,
        ),
        c(
            "executable mode on an entry",
            {
                let mut t = tar.clone();
                let mut h = tar::Header::from_byte_slice(&t[..512]).clone();
                h.set_mode(0o755);
                h.set_cksum();
                t[..512].copy_from_slice(h.as_bytes());
                t
            },
            INVALID,
        ),
        c(
            "entry name the layout does not allow",
            with_prefix(entry(&header("README", 2, |_| {}), b"hi")),
            INVALID,
        ),
        c(
            "entries out of the writer's order",
            [
                manifest.clone(),
                body[..body.len() - manifest.len()].to_vec(),
                end.clone(),
            ]
            .concat(),
            INVALID,
        ),
        c(
            "manifest.json twice",
            [body.clone(), manifest.clone(), end.clone()].concat(),
            INVALID,
        ),
        c(
            "non-zero entry padding",
            {
                let mut t = tar.clone();
                t[first_len - 1] = b' ';
                t
            },
            INVALID,
        ),
        c("no end-of-archive blocks", body.clone(), INVALID),
        c(
            "manifest.json declared larger than its cap",
            [
                fragment.clone(),
                entry(
                    &header("manifest.json", MANIFEST_CAP + 1, |_| {}),
                    &vec![b' '; MANIFEST_CAP as usize + 1],
                ),
                end.clone(),
            ]
            .concat(),
            LIMIT,
        ),
        c(
            "entry declared larger than the entry limit",
            [
                entry(
                    &header("a2a/agent-card-fragment.json", 65 << 20, |_| {}),
                    b"",
                ),
                end.clone(),
            ]
            .concat(),
            LIMIT,
        ),
        Crafted {
            name: "second gzip member with another manifest",
            bytes: [
                fx.valid(),
                gzip(&[evil_manifest.clone(), end.clone()].concat()),
            ]
            .concat(),
            code: INVALID,
        },
        Crafted {
            name: "bytes after the gzip stream",
            bytes: [fx.valid(), b"\0\0\0\0".to_vec()].concat(),
            code: INVALID,
        },
        Crafted {
            name: "gzip header with a file name",
            bytes: {
                let mut gz = flate2::GzBuilder::new()
                    .filename("manifest.json")
                    .write(Vec::new(), flate2::Compression::new(6));
                gz.write_all(&tar).unwrap();
                gz.finish().unwrap()
            },
            code: INVALID,
        },
        Crafted {
            name: "gzip header with an extra field",
            bytes: {
                let mut gz = flate2::GzBuilder::new()
                    .extra(b"ab\x02\0hi".to_vec())
                    .write(Vec::new(), flate2::Compression::new(6));
                gz.write_all(&tar).unwrap();
                gz.finish().unwrap()
            },
            code: INVALID,
        },
    ]
}

/// The example skills as a bundle named `name` at `version`, signed by `keys`, whatever
/// the name: what a vendor's key can sign although the builder refuses the name.
pub fn signed_example_bundle(name: &str, version: &str, keys: &[SigningKeyPair]) -> Vec<u8> {
    let checked = skillbundle::build::pipeline::check(&super::example_skills());
    let interfaces: Vec<_> = checked.skills.iter().map(|s| &s.interface).collect();
    let schema = skillbundle::interface::packaged_schema::InterfaceSchema::packaged().unwrap();
    let mut contents = bundle::contents(
        name,
        version,
        schema.digest(),
        &interfaces,
        &skillbundle::build::pipeline::card_fragment(&checked.skills),
    );
    bundle::sign::sign(&mut contents, keys);
    let files: BTreeMap<String, Vec<u8>> = contents
        .files
        .into_iter()
        .map(|(path, body)| (path, body.bytes().to_vec()))
        .collect();
    pack(&files, 0)
}
