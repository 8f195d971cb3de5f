//! Shared helpers for the CLI tests: copy the example workspace, run the binary,
//! read its JSON report.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn example_skills() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("example-skills")
}

/// Copy a directory tree (regular files and directories only).
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        if rel.starts_with("dist") {
            continue;
        }
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A fresh copy of example-skills in a temporary directory.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example_skills(), dir.path());
    dir
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The findings of a `--format json` run.
    pub fn findings(&self) -> Vec<Value> {
        self.json()["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The one finding with `code`; panics (showing all findings) when not exactly one.
    pub fn finding(&self, code: &str) -> Value {
        let all = self.findings();
        let matching: Vec<&Value> = all.iter().filter(|f| f["code"] == code).collect();
        assert_eq!(
            matching.len(),
            1,
            "expected exactly one {code} finding, got:\n{}",
            serde_json::to_string_pretty(&all).unwrap()
        );
        matching[0].clone()
    }
}

pub fn run(args: &[&str], cwd: &Path) -> Run {
    run_env(args, cwd, &[])
}

/// [`run`] with these environment variables set.
pub fn run_env(args: &[&str], cwd: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(args)
        .current_dir(cwd)
        .env_remove("SOURCE_DATE_EPOCH")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn write(path: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

pub fn sha256_file(path: &Path) -> String {
    skillbundle::wire::digest::Digest::of_bytes(&std::fs::read(path).unwrap()).to_string()
}

pub const ERC: &str = "skills/evaluate_resource_condition";

/// A gzip member whose deflate stream expands to `bytes` zeros (rounded up to 258):
/// one fixed-Huffman block holding a literal 0 and then length-258, distance-1 matches,
/// 13 bits each — about 2,000 times smaller than its output, written directly so that
/// no test has to compress a gigabyte. The trailer's CRC is not that of the output: a
/// reader with a size limit stops long before it would check it.
pub fn gzip_bomb(bytes: u64) -> Vec<u8> {
    gzip_bomb_after(&[], bytes)
}

/// [`gzip_bomb`] whose output starts with `prefix` (as literals), then a zero and the
/// zeros: a tar header declaring a huge entry, then that entry's "data".
pub fn gzip_bomb_after(prefix: &[u8], bytes: u64) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        /// Append `count` bits of `value`, least significant first.
        fn put(&mut self, value: u64, count: u32) {
            self.acc |= value << self.n;
            self.n += count;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// Append a Huffman code (most significant bit first).
        fn code(&mut self, code: u64, len: u32) {
            let mut reversed = 0;
            for i in 0..len {
                reversed |= ((code >> i) & 1) << (len - 1 - i);
            }
            self.put(reversed, len);
        }
    }
    let mut b = Bits {
        out: vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255],
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // final block
    b.put(1, 2); // fixed Huffman codes
    for &byte in prefix {
        // Fixed Huffman literal codes: 0..=143 in 8 bits, 144..=255 in 9.
        if byte < 144 {
            b.code(0b0011_0000 + u64::from(byte), 8);
        } else {
            b.code(0b1_1001_0000 + u64::from(byte - 144), 9);
        }
    }
    b.code(0b0011_0000, 8); // literal 0
    for _ in 0..bytes.div_ceil(258) {
        b.code(0b1100_0101, 8); // length code 285: 258 bytes
        b.code(0, 5); // distance code 0: distance 1
    }
    b.code(0, 7); // end of block
    if b.n > 0 {
        b.out.push(b.acc as u8);
    }
    b.out.extend_from_slice(&[0; 8]);
    b.out
}

/// The example workspace built unsigned, opened as an agent does (with
/// `--allow-unsigned` trust): for tests of what a loaded bundle serves.
pub fn example_bundle() -> skillbundle::agent::Bundle {
    let ws = workspace();
    let built = run(&["build", "."], ws.path());
    assert_eq!(built.status, 0, "{}", built.stderr);
    let path = ws.path().join("dist/example-network-skills-0.1.0.tar.gz");
    let trust = skillbundle::agent::TrustedKeys::new(vec![]).and_allow_unsigned();
    skillbundle::agent::Bundle::open_path(&path, &trust).unwrap()
}

pub mod crafted;

/// An HTTP/1.1 response head (the bytes before the blank line): its status code and its
/// headers in their order, names lowercased.
pub fn response_head(head: &[u8]) -> (u16, Vec<(String, String)>) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers)
}
