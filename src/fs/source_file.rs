//! A source file of the workspace that findings point into: a JSON pointer inside it
//! becomes a line and column only when a finding needs one.
//!
//! Why a module of its own: the build reads the files ([`crate::build::workspace`]) and
//! the release rules report on them ([`crate::release`]); both hold this type, and
//! neither may import the other. Findings locate a problem in the instance by JSON
//! pointer (draft, "Schema References" and RFC 6901), mapped back to the author's text.

use crate::finding::Location;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A domain schema read from disk, with everything needed to report on it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path shown in findings.
    pub display: PathBuf,
    /// Where it was read from.
    real: PathBuf,
    /// The raw bytes (for mapping pointers to positions) while the skill is checked;
    /// `None` once [`SourceFile::release`]d.
    bytes: Option<Arc<Vec<u8>>>,
    /// Authored as YAML (positions are mapped through the YAML parser).
    pub yaml: bool,
}

impl SourceFile {
    /// A file read from `real`, shown in findings as `display`; `yaml` when it was
    /// authored as YAML (positions are then mapped through the YAML parser).
    pub fn new(display: &Path, real: &Path, bytes: Vec<u8>, yaml: bool) -> SourceFile {
        SourceFile {
            display: display.to_path_buf(),
            real: real.to_path_buf(),
            bytes: Some(Arc::new(bytes)),
            yaml,
        }
    }

    /// Stop holding the file's bytes: a position asked for later reads the file again.
    /// The checks that run on every skill are over by then, and only a finding needs a
    /// position; held until the end, the bytes were the largest part of a 10,000-skill
    /// build's memory (74 MB of 390).
    pub fn release(&mut self) {
        self.bytes = None;
    }

    /// A location for `pointer` inside this file, with line and column when known.
    pub fn locate(&self, pointer: &str) -> Location {
        let loc = Location::file(&self.display).with_pointer(pointer);
        let reread;
        let bytes: &[u8] = match &self.bytes {
            Some(bytes) => bytes,
            None => match std::fs::read(&self.real) {
                Ok(b) => {
                    reread = b;
                    &reread
                }
                Err(_) => return loc,
            },
        };
        let position = if self.yaml {
            std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| crate::wire::yaml::locate(text, pointer))
        } else {
            crate::wire::json::locate(bytes, pointer)
        };
        match position {
            Some((line, column)) => loc.with_position(line, column),
            None => loc,
        }
    }
}
