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
    let out = Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(args)
        .current_dir(cwd)
        .env_remove("SOURCE_DATE_EPOCH")
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
    skillbundle::digest::Digest::of_bytes(&std::fs::read(path).unwrap()).to_string()
}

pub const ERC: &str = "skills/evaluate_resource_condition";
