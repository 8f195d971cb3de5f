//! The archive format: deterministic `.tar.gz` out, hostile-input-proof `.tar.gz` in.
//!
//! Writing: entries sorted by path, regular files only, mode 0644, uid/gid 0, empty
//! owner names, mtime from SOURCE_DATE_EPOCH (0 when unset), ustar headers, gzip with no
//! file name and no time, a fixed compression level and the pure-Rust backend. The same
//! inputs therefore always give the same bytes, on any machine.
//!
//! Reading happens entirely in memory and refuses anything our writer would never
//! produce: links, directories, devices, extension headers, absolute or `..` paths,
//! duplicate entries, oversized entries or totals (a gzip bomb stops at the limit),
//! trailing bytes after the gzip stream, and truncated or corrupt data. Nothing from an
//! archive is ever written to disk by this module.

use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// Limits applied when reading an archive.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    pub max_entries: usize,
    pub max_entry_bytes: u64,
    pub max_total_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_entries: 100_000,
            max_entry_bytes: 64 * 1024 * 1024,
            max_total_bytes: 1024 * 1024 * 1024,
        }
    }
}

/// Why an archive was refused. `limit` distinguishes resource limits from malformation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveError {
    pub message: String,
    pub limit: bool,
}

impl ArchiveError {
    fn invalid(message: impl Into<String>) -> Self {
        ArchiveError {
            message: message.into(),
            limit: false,
        }
    }
    fn limit(message: impl Into<String>) -> Self {
        ArchiveError {
            message: message.into(),
            limit: true,
        }
    }
}

impl std::fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The modification time written into archives: SOURCE_DATE_EPOCH when set to an
/// integer, otherwise 0.
pub fn source_date_epoch() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Write `entries` (path → bytes) as a deterministic `.tar.gz` to `out`.
pub fn write<'a, W: Write>(
    out: W,
    entries: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    mtime: u64,
) -> std::io::Result<W> {
    let gz: GzEncoder<W> = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(out, Compression::new(6));
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    let mut sorted: Vec<(&str, &[u8])> = entries.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    for (path, data) in sorted {
        let mut header = tar::Header::new_ustar();
        header.set_path(path)?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(mtime);
        header.set_username("")?;
        header.set_groupname("")?;
        header.set_cksum();
        tar.append(&header, data)?;
    }
    let gz = tar.into_inner()?;
    gz.finish()
}

/// A reader that lets at most `left` bytes through and then fails, recording that the
/// limit (not malformed data) stopped it.
struct Limited<'a, R> {
    inner: R,
    left: u64,
    exceeded: &'a std::cell::Cell<bool>,
}

impl<R: Read> Read for Limited<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more than the limit allows means the limit is exceeded; end of
            // stream exactly at the limit is fine.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    self.exceeded.set(true);
                    Err(std::io::Error::other("the size limit is exceeded"))
                }
            };
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Read a `.tar.gz` held in memory into path → bytes, refusing anything unexpected.
///
/// Decompression is streamed: the tar reader pulls from the gzip decoder through a
/// byte budget of `max_total_bytes`, so a gzip bomb costs time up to the limit and never
/// memory — only the entries kept are held, each at most `max_entry_bytes`.
pub fn read(bytes: &[u8], limits: ReadLimits) -> Result<BTreeMap<String, Vec<u8>>, ArchiveError> {
    let exceeded = std::cell::Cell::new(false);
    let over = || {
        ArchiveError::limit(
            "the archive expands beyond the size limit (refused before it was fully decompressed)",
        )
    };
    let mut decoder = flate2::bufread::GzDecoder::new(bytes);
    let mut limited = Limited {
        inner: &mut decoder,
        left: limits.max_total_bytes,
        exceeded: &exceeded,
    };
    let files =
        read_entries(&mut limited, limits).map_err(|e| if exceeded.get() { over() } else { e })?;
    // What follows the end-of-archive blocks (padding) is decompressed within the same
    // budget, so that the gzip trailer (CRC and length) is checked and nothing hides
    // after it.
    if let Err(e) = std::io::copy(&mut limited, &mut std::io::sink()) {
        return Err(if exceeded.get() {
            over()
        } else {
            ArchiveError::invalid(format!("not a valid gzip stream: {e}"))
        });
    }
    if !decoder.into_inner().is_empty() {
        return Err(ArchiveError::invalid(
            "unexpected bytes after the gzip stream",
        ));
    }
    Ok(files)
}

fn read_entries(
    tar_stream: impl Read,
    limits: ReadLimits,
) -> Result<BTreeMap<String, Vec<u8>>, ArchiveError> {
    let mut archive = tar::Archive::new(tar_stream);
    let mut files = BTreeMap::new();
    let entries = archive
        .entries()
        .map_err(|e| ArchiveError::invalid(format!("not a valid tar archive: {e}")))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|e| ArchiveError::invalid(format!("not a valid tar archive: {e}")))?;
        if files.len() >= limits.max_entries {
            return Err(ArchiveError::limit(
                "the archive has more entries than the limit allows",
            ));
        }
        let raw_path = entry.path_bytes().into_owned();
        let path = String::from_utf8(raw_path)
            .map_err(|_| ArchiveError::invalid("an entry path is not UTF-8"))?;
        let kind = entry.header().entry_type();
        if kind != tar::EntryType::Regular {
            return Err(ArchiveError::invalid(format!(
                "entry {path:?} is not a regular file ({}); bundles hold regular files only",
                describe(kind)
            )));
        }
        check_path(&path)?;
        let size = entry
            .header()
            .size()
            .map_err(|e| ArchiveError::invalid(e.to_string()))?;
        if size > limits.max_entry_bytes {
            return Err(ArchiveError::limit(format!(
                "entry {path:?} is larger than the limit allows"
            )));
        }
        // The declared size is only a hint: a header may lie, so memory grows with the
        // bytes actually read.
        let mut data = Vec::with_capacity(size.min(1 << 20) as usize);
        entry
            .read_to_end(&mut data)
            .map_err(|e| ArchiveError::invalid(format!("entry {path:?} is truncated: {e}")))?;
        if data.len() as u64 != size {
            return Err(ArchiveError::invalid(format!(
                "entry {path:?} is truncated"
            )));
        }
        if files.insert(path.clone(), data).is_some() {
            return Err(ArchiveError::invalid(format!(
                "entry {path:?} appears twice"
            )));
        }
    }
    Ok(files)
}

fn describe(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Symlink => "a symbolic link",
        tar::EntryType::Link => "a hard link",
        tar::EntryType::Directory => "a directory",
        tar::EntryType::Char | tar::EntryType::Block => "a device",
        tar::EntryType::Fifo => "a FIFO",
        tar::EntryType::XHeader | tar::EntryType::XGlobalHeader => "a pax extension header",
        tar::EntryType::GNULongName | tar::EntryType::GNULongLink => "a GNU long-name header",
        _ => "an unsupported entry type",
    }
}

/// An entry path must be relative, `/`-separated, without `.`/`..`/empty components.
fn check_path(path: &str) -> Result<(), ArchiveError> {
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.contains('\0')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        Err(ArchiveError::invalid(format!(
            "entry path {path:?} is not a plain relative path (absolute, `..`, or empty components)"
        )))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        write(
            Vec::new(),
            [("b.json", &b"{}"[..]), ("a/x.json", &b"[1]"[..])],
            0,
        )
        .unwrap()
    }

    #[test]
    fn round_trips_sorted_entries() {
        let files = read(&sample(), ReadLimits::default()).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["a/x.json", "b.json"]);
        assert_eq!(files["a/x.json"], b"[1]");
    }

    #[test]
    fn writing_is_deterministic() {
        assert_eq!(sample(), sample());
        // gzip header: no name flag, mtime 0.
        let gz = sample();
        assert_eq!(&gz[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&gz[4..8], &[0, 0, 0, 0]);
    }

    fn raw_tar(path: &[u8], kind: tar::EntryType, data: &[u8], link: Option<&str>) -> Vec<u8> {
        let mut header = tar::Header::new_gnu();
        {
            let name = &mut header.as_old_mut().name;
            name[..path.len()].copy_from_slice(path);
        }
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        if let Some(l) = link {
            header.set_link_name(l).unwrap();
        }
        header.set_cksum();
        let mut b = tar::Builder::new(Vec::new());
        b.append(&header, data).unwrap();
        let tar = b.into_inner().unwrap();
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn refuses_hostile_entries() {
        let cases = [
            raw_tar(b"../evil.json", tar::EntryType::Regular, b"{}", None),
            raw_tar(b"/etc/evil", tar::EntryType::Regular, b"{}", None),
            raw_tar(b"a/./b", tar::EntryType::Regular, b"{}", None),
            raw_tar(b"link", tar::EntryType::Symlink, b"", Some("/etc/passwd")),
            raw_tar(b"hard", tar::EntryType::Link, b"", Some("manifest.json")),
            raw_tar(b"dir/", tar::EntryType::Directory, b"", None),
        ];
        for case in cases {
            let e = read(&case, ReadLimits::default()).unwrap_err();
            assert!(!e.limit, "{e:?}");
        }
    }

    #[test]
    fn refuses_duplicates_truncation_and_trailing_bytes() {
        let mut b = tar::Builder::new(Vec::new());
        for _ in 0..2 {
            let mut h = tar::Header::new_ustar();
            h.set_path("same.json").unwrap();
            h.set_size(2);
            h.set_cksum();
            b.append(&h, &b"{}"[..]).unwrap();
        }
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(&b.into_inner().unwrap()).unwrap();
        let dup = gz.finish().unwrap();
        assert!(read(&dup, ReadLimits::default())
            .unwrap_err()
            .message
            .contains("twice"));

        let good = sample();
        assert!(read(&good[..good.len() - 5], ReadLimits::default()).is_err());
        let mut trailing = good.clone();
        trailing.extend_from_slice(b"junk");
        assert!(read(&trailing, ReadLimits::default()).is_err());
        assert!(read(b"not gzip at all", ReadLimits::default()).is_err());
    }

    #[test]
    fn gzip_bombs_stop_at_the_limit() {
        let zeros = vec![0u8; 8 * 1024 * 1024];
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&zeros).unwrap();
        let bomb = gz.finish().unwrap();
        let limits = ReadLimits {
            max_total_bytes: 1024 * 1024,
            ..ReadLimits::default()
        };
        assert!(read(&bomb, limits).unwrap_err().limit);
        // An archive of exactly the limit's size is read; one byte less is refused.
        let good = sample();
        let size = {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(good.as_slice())
                .read_to_end(&mut out)
                .unwrap();
            out.len() as u64
        };
        let exact = ReadLimits {
            max_total_bytes: size,
            ..ReadLimits::default()
        };
        assert!(read(&good, exact).is_ok());
        let short = ReadLimits {
            max_total_bytes: size - 1,
            ..ReadLimits::default()
        };
        assert!(read(&good, short).unwrap_err().limit);
    }
}
