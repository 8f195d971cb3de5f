//! One canonical archive form: the loader accepts exactly what the builder writes.
//!
//! Every crafted archive (`tests/common/crafted.rs`: pax and GNU extension headers,
//! links, data after the end-of-archive blocks, second gzip members, names and order
//! the layout does not allow, oversized claims) is refused by `Bundle::open` and by
//! `skillbundle verify` with its exact code and exit status 1. And the differential:
//! whenever the archive reader accepts an archive — the crafted ones and single-byte
//! mutations of the valid one — GNU tar and Python's `tarfile` extract exactly the
//! same files with the same bytes, and re-serializing the entries with the builder's
//! writer gives the same decompressed stream. GNU tar and Python's `tarfile` are parts
//! (tests/parts/harness.rs): without them the differential is reported as skipped.

use crate::common;
use crate::harness;

harness::tests! {
    every_crafted_archive_is_refused_with_its_code,
    other_readers_extract_exactly_what_the_loader_accepts needs [GnuTar, PythonTarfile],
}

use common::crafted::{corpus, fixture, gunzip, gzip, Crafted};
use common::*;
use skillbundle::agent::Bundle;
use skillbundle::bundle::{self, archive};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn every_crafted_archive_is_refused_with_its_code() {
    let fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("trust.jwk.json"),
        fx.key.public_key().to_jwk_json(),
    );
    let mut failures = Vec::new();
    for Crafted { name, bytes, code } in corpus(fx) {
        let got = match Bundle::open(&bytes, &fx.trust()) {
            Ok(_) => None,
            Err(findings) => {
                let codes: Vec<&str> = findings.iter().map(|f| f.code.as_str()).collect();
                if codes.iter().any(|c| Some(*c) != code) {
                    failures.push(format!("{name}: library gave {codes:?}, expected {code:?}"));
                }
                Some(codes[0])
            }
        };
        if got.is_none() && code.is_some() {
            failures.push(format!("{name}: accepted, expected {code:?}"));
        }
        // The CLI: exit status 0 for accepted, 1 with the code for refused.
        let path = dir.path().join("bundle.tar.gz");
        write(&path, &bytes);
        let run = run(
            &[
                "verify",
                "bundle.tar.gz",
                "--trust",
                "trust.jwk.json",
                "--format",
                "json",
            ],
            dir.path(),
        );
        let expected_status = if code.is_some() { 1 } else { 0 };
        if run.status != expected_status {
            failures.push(format!(
                "{name}: verify exited {}, expected {expected_status}",
                run.status
            ));
        }
        if let Some(code) = code {
            if !run.stdout.contains(&format!("\"code\": \"{code}\"")) {
                failures.push(format!(
                    "{name}: verify did not report {code}: {}",
                    run.stdout
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// path → bytes of every regular file under `root`; anything else is recorded too.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1) {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if e.file_type().is_file() {
            out.insert(rel, std::fs::read(e.path()).unwrap());
        } else if !e.file_type().is_dir() {
            out.insert(rel, b"<not a regular file>".to_vec());
        }
    }
    out
}

/// The files a reader extracts, or why it cannot run here.
type Extract = fn(&Path, &Path) -> Result<(), String>;

fn gnu_tar(archive: &Path, into: &Path) -> Result<(), String> {
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .output()
        .map_err(|e| format!("cannot run GNU tar: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn python_tarfile(archive: &Path, into: &Path) -> Result<(), String> {
    let script = "import sys, tarfile\n\
                  with tarfile.open(sys.argv[1], 'r:gz') as t:\n    \
                  t.extractall(sys.argv[2], filter='data')\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(archive)
        .arg(into)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn other_readers_extract_exactly_what_the_loader_accepts() {
    let fx = fixture();
    let readers: [(&str, Extract); 2] = [
        ("GNU tar", gnu_tar as Extract),
        ("Python tarfile", python_tarfile as Extract),
    ];

    // The crafted corpus, plus single-byte changes of the valid bundle's tar stream at
    // every header field and in the data, recompressed with the builder's gzip header.
    let mut cases: Vec<(String, Vec<u8>)> = corpus(fx)
        .into_iter()
        .map(|c| (c.name.to_string(), c.bytes))
        .collect();
    let tar = fx.tar();
    let headers: Vec<usize> = {
        let mut at = 0;
        let mut starts = Vec::new();
        while tar[at..at + 512] != [0; 512] {
            starts.push(at);
            let size = tar::Header::from_byte_slice(&tar[at..at + 512])
                .size()
                .unwrap();
            at += 512 + (size as usize).next_multiple_of(512);
        }
        starts
    };
    let mut positions: Vec<usize> = headers
        .iter()
        .flat_map(|&h| (h..h + 512).step_by(11))
        .collect();
    // A few data bytes (accepted by the archive layer, refused later by digests) and
    // the end-of-archive blocks.
    positions.extend((0..tar.len()).step_by(tar.len() / 16).skip(1));
    positions.extend([tar.len() - 1024, tar.len() - 1]);
    for at in positions {
        for value in [b'0', 0xff] {
            if tar[at] != value {
                let mut t = tar.clone();
                t[at] = value;
                cases.push((format!("byte {at} set to {value:#x}"), gzip(&t)));
            }
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let mut accepted = 0;
    let mut failures = Vec::new();
    for (name, bytes) in &cases {
        let Ok(entries) = archive::read_entries(
            bytes,
            archive::ReadLimits::default(),
            bundle::is_layout_path,
        ) else {
            continue;
        };
        accepted += 1;
        let ours: BTreeMap<String, Vec<u8>> = entries
            .iter()
            .map(|e| (e.path.clone(), e.data.clone().unwrap()))
            .collect();
        // Re-serialized with the builder's own writer: the same decompressed stream.
        let mtime = tar::Header::from_byte_slice(&gunzip(bytes)[..512])
            .mtime()
            .unwrap();
        let again = bundle::archive::write(
            Vec::new(),
            ours.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
            mtime,
        )
        .unwrap();
        if gunzip(&again) != gunzip(bytes) {
            failures.push(format!("{name}: re-serializing gives another stream"));
        }
        let archive_path = dir.path().join("case.tar.gz");
        write(&archive_path, bytes);
        for (reader, extract) in &readers {
            let into = tempfile::tempdir_in(dir.path()).unwrap();
            match extract(&archive_path, into.path()) {
                Ok(()) if tree(into.path()) == ours => {}
                Ok(()) => failures.push(format!("{name}: {reader} extracts other files")),
                Err(e) => failures.push(format!("{name}: {reader} refuses it: {e}")),
            }
        }
    }
    println!(
        "{accepted} of {} archives accepted and compared",
        cases.len()
    );
    assert!(accepted >= 2, "the valid bundles are accepted");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
