//! The archive format: deterministic `.tar.gz` out, exactly that form in.
//!
//! Writing: entries sorted by path, regular files only, mode 0644, uid/gid 0, empty
//! owner names, mtime from SOURCE_DATE_EPOCH (0 when unset), ustar headers, gzip with no
//! file name and no time, a fixed compression level and the pure-Rust backend. The same
//! inputs therefore always give the same bytes, on any machine.
//!
//! Reading accepts **one canonical form** and nothing else, because an archive that two
//! readers can read differently is an archive whose signed contents a second reader
//! (GNU tar, Python's `tarfile`, an agent in another language) may not see: one gzip
//! member with this writer's header and nothing after it; then, for every entry, the
//! very ustar header [`write`](fn@write) produces for that path, size and mtime (so no pax or GNU
//! extension headers, links, directories or devices can appear: their headers differ),
//! the data, zero padding to the block; the entries in the writer's order; and the two
//! zero blocks the writer ends with, followed by nothing. Since every header is
//! regenerated with the writer's own code and compared byte for byte, the decompressed
//! stream of an accepted archive *is* what [`write`](fn@write) produces for its entries — the
//! proof that no other reader can disagree (`tests/parts/canonical.rs` checks it against
//! GNU tar and Python).
//!
//! Reading is streamed and bounded before anything is spent: sizes come from the header
//! and are checked against [`ReadLimits`] before a byte of data is read; entries are
//! hashed as they stream by and kept only when the caller asks (so a loader can keep
//! the manifest alone, authenticate it, and only then read the rest). Nothing from an
//! archive is ever written to disk by this module.

use crate::finding::{Code, Finding, Location};
use crate::wire::digest::Digest;
use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use sha2::{Digest as _, Sha256};
use std::io::{Read, Write};

/// Limits applied when reading an archive.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    /// The most entries an archive may hold.
    pub max_entries: usize,
    /// The most bytes one entry may hold, uncompressed.
    pub max_entry_bytes: u64,
    /// The most bytes all entries may hold together, uncompressed.
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
/// Messages name entries by their position, never by the name the archive gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveError {
    /// What is wrong (no entry name the archive gave).
    pub message: String,
    /// True when a limit refused the archive (`resource_limit_exceeded`).
    pub limit: bool,
}

impl ArchiveError {
    /// A malformed archive (`bundle_invalid`).
    pub fn invalid(message: impl Into<String>) -> Self {
        ArchiveError {
            message: message.into(),
            limit: false,
        }
    }
    /// An archive beyond a [`ReadLimits`] limit (`resource_limit_exceeded`).
    pub fn limit(message: impl Into<String>) -> Self {
        ArchiveError {
            message: message.into(),
            limit: true,
        }
    }
}

/// An archive refused is `resource_limit_exceeded` when a limit refused it, otherwise
/// `bundle_invalid`; the message names entries by position only.
impl From<ArchiveError> for Finding {
    fn from(e: ArchiveError) -> Finding {
        Finding::new(
            Code::limit_or(e.limit, Code::BundleInvalid),
            format!("the archive is refused: {e}"),
            Location::default(),
        )
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

/// The gzip encoder every archive is written with.
fn gzip_encoder<W: Write>(out: W) -> GzEncoder<W> {
    GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(out, Compression::new(6))
}

/// The ustar header the writer gives an entry: the one definition both writing and
/// reading use.
fn header(path: &str, size: u64, mtime: u64) -> std::io::Result<tar::Header> {
    let mut header = tar::Header::new_ustar();
    header.set_path(path)?;
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(mtime);
    header.set_username("")?;
    header.set_groupname("")?;
    header.set_cksum();
    Ok(header)
}

/// Write `entries` (path → bytes) as a deterministic `.tar.gz` to `out`, sorted by
/// path. Each entry's bytes are asked for ([`Content::bytes`]) only when it is written,
/// so a caller can make them one at a time.
pub fn write<'a, W: Write, C: Content>(
    out: W,
    entries: impl IntoIterator<Item = (&'a str, C)>,
    mtime: u64,
) -> std::io::Result<W> {
    let mut tar = tar::Builder::new(gzip_encoder(out));
    tar.mode(tar::HeaderMode::Deterministic);
    let mut sorted: Vec<(&str, C)> = entries.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    for (path, content) in sorted {
        let data = content.bytes();
        tar.append(&header(path, data.len() as u64, mtime)?, &data[..])?;
    }
    let gz = tar.into_inner()?;
    gz.finish()
}

/// An entry's content for [`write`](fn@write): bytes, or something that makes them when asked.
pub trait Content {
    /// The entry's bytes, made now if they were not kept.
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]>;
}

impl Content for &[u8] {
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(self)
    }
}

/// The ten bytes of gzip header [`write`] starts every archive with.
fn canonical_gzip_header() -> [u8; 10] {
    let empty = gzip_encoder(Vec::new())
        .finish()
        .expect("writing to memory cannot fail");
    empty[..10].try_into().expect("a gzip header is ten bytes")
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

/// What a reader wants done with one entry, decided from its path and declared size
/// before any of its data is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Hash the data as it streams by and drop it.
    Hash,
    /// Hash the data and keep it.
    Keep,
}

/// One entry of an archive as [`scan`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's path inside the archive.
    pub path: String,
    /// Its size in bytes, uncompressed.
    pub size: u64,
    /// SHA-256 of the entry's data.
    pub digest: Digest,
    /// The data, when the caller asked to keep it.
    pub data: Option<Vec<u8>>,
}

/// Read a `.tar.gz` held in memory, accepting only the canonical form (see the module
/// documentation), into path → bytes.
pub fn read(
    bytes: &[u8],
    limits: ReadLimits,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, ArchiveError> {
    Ok(read_entries(bytes, limits, |_| true)?
        .into_iter()
        .map(|e| (e.path, e.data.unwrap_or_default()))
        .collect())
}

/// Read a `.tar.gz` held in memory, accepting only the canonical form (see the module
/// documentation), and keep every entry. Every path must satisfy `allowed`.
pub fn read_entries(
    bytes: &[u8],
    limits: ReadLimits,
    allowed: impl Fn(&str) -> bool,
) -> Result<Vec<Entry>, ArchiveError> {
    scan(bytes, limits, |path, _| {
        if allowed(path) {
            Ok(Disposition::Keep)
        } else {
            Err(ArchiveError::invalid(
                "an entry has a name the bundle layout does not allow",
            ))
        }
    })
}

/// Stream through a `.tar.gz` held in memory, accepting only the canonical form, and
/// return every entry with its digest; `decide` sees each path and declared size
/// before a byte of its data is read, and may refuse the archive or ask to keep the
/// entry.
///
/// Decompression is streamed through a byte budget of `max_total_bytes`, and each
/// entry's declared size is checked against `max_entry_bytes` and the remaining budget
/// before its data is read: a gzip bomb or a lying header costs time up to the limit,
/// never memory. Only kept entries are held.
pub fn scan(
    bytes: &[u8],
    limits: ReadLimits,
    decide: impl FnMut(&str, u64) -> Result<Disposition, ArchiveError>,
) -> Result<Vec<Entry>, ArchiveError> {
    let mut entries = Vec::new();
    scan_each(bytes, limits, decide, |entry| {
        entries.push(entry);
        Ok(())
    })?;
    Ok(entries)
}

/// [`scan`], handing each entry to `visit` as soon as its data is read instead of
/// collecting them: a caller can start on one entry while the next decompresses.
pub fn scan_each(
    bytes: &[u8],
    limits: ReadLimits,
    mut decide: impl FnMut(&str, u64) -> Result<Disposition, ArchiveError>,
    mut visit: impl FnMut(Entry) -> Result<(), ArchiveError>,
) -> Result<(), ArchiveError> {
    if bytes.len() < 10 || bytes[..10] != canonical_gzip_header() {
        return Err(ArchiveError::invalid(
            "not a bundle archive: the gzip header is not the one skillbundle writes (one member, no name, no time, no extra fields)",
        ));
    }
    let exceeded = std::cell::Cell::new(false);
    let mut decoder = flate2::bufread::GzDecoder::new(bytes);
    let mut limited = Limited {
        inner: &mut decoder,
        left: limits.max_total_bytes,
        exceeded: &exceeded,
    };
    scan_tar(&mut limited, limits, &mut decide, &mut visit).map_err(|e| {
        if exceeded.get() {
            ArchiveError::limit(
                "the archive expands beyond the size limit (refused before it was fully decompressed)",
            )
        } else {
            e
        }
    })?;
    if !decoder.into_inner().is_empty() {
        return Err(ArchiveError::invalid(
            "unexpected bytes after the gzip stream (a bundle is a single gzip member)",
        ));
    }
    Ok(())
}

const BLOCK: usize = 512;

fn io_error(e: std::io::Error) -> ArchiveError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        ArchiveError::invalid("the archive is truncated")
    } else {
        ArchiveError::invalid(format!("not a valid gzip stream: {e}"))
    }
}

fn scan_tar(
    stream: &mut impl Read,
    limits: ReadLimits,
    decide: &mut impl FnMut(&str, u64) -> Result<Disposition, ArchiveError>,
    visit: &mut impl FnMut(Entry) -> Result<(), ArchiveError>,
) -> Result<(), ArchiveError> {
    let mut count = 0usize;
    let mut previous: Option<String> = None;
    let mut total: u64 = 0;
    let mut mtime = None;
    let mut block = [0u8; BLOCK];
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        stream.read_exact(&mut block).map_err(io_error)?;
        if block == [0u8; BLOCK] {
            break;
        }
        let n = count + 1;
        if count >= limits.max_entries {
            return Err(ArchiveError::limit(
                "the archive has more entries than the limit allows",
            ));
        }
        let raw = tar::Header::from_byte_slice(&block);
        let non_canonical = || {
            let kind = match raw.entry_type() {
                tar::EntryType::Regular => "a header",
                tar::EntryType::Symlink => "a symbolic link",
                tar::EntryType::Link => "a hard link",
                tar::EntryType::Directory => "a directory",
                tar::EntryType::Char | tar::EntryType::Block => "a device",
                tar::EntryType::Fifo => "a FIFO",
                tar::EntryType::XHeader | tar::EntryType::XGlobalHeader => "a pax extended header",
                tar::EntryType::GNULongName | tar::EntryType::GNULongLink => {
                    "a GNU long-name or long-link header"
                }
                _ => "an unsupported entry type",
            };
            ArchiveError::invalid(format!(
                "entry {n} is {kind} not in the canonical form skillbundle writes (bundles hold ustar regular files only, with fixed metadata)"
            ))
        };
        let size = raw.size().map_err(|_| non_canonical())?;
        if size > limits.max_entry_bytes {
            return Err(ArchiveError::limit(format!(
                "entry {n} is larger than the limit allows"
            )));
        }
        total = total.saturating_add(size);
        if total > limits.max_total_bytes {
            return Err(ArchiveError::limit(
                "the entries add up to more than the archive size limit",
            ));
        }
        let path = String::from_utf8(raw.path_bytes().into_owned())
            .map_err(|_| ArchiveError::invalid(format!("entry {n}'s name is not UTF-8")))?;
        let entry_mtime = raw.mtime().map_err(|_| non_canonical())?;
        let expected =
            header(&path, size, *mtime.get_or_insert(entry_mtime)).map_err(|_| non_canonical())?;
        if expected.as_bytes()[..] != block[..] {
            return Err(non_canonical());
        }
        check_path(&path).map_err(|e| ArchiveError::invalid(format!("entry {n}: {e}")))?;
        if let Some(previous) = &previous {
            if previous.as_str() >= path.as_str() {
                return Err(ArchiveError::invalid(format!(
                    "entry {n} is out of order or repeats an earlier name (the writer sorts entries by name, each once)"
                )));
            }
        }
        let disposition = decide(&path, size)?;
        let mut data = (disposition == Disposition::Keep)
            .then(|| Vec::with_capacity(size.min(1 << 20) as usize));
        let mut hasher = Sha256::new();
        let mut left = size;
        while left > 0 {
            let want = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            stream.read_exact(&mut chunk[..want]).map_err(io_error)?;
            hasher.update(&chunk[..want]);
            if let Some(d) = data.as_mut() {
                d.extend_from_slice(&chunk[..want]);
            }
            left -= want as u64;
        }
        let padding = (BLOCK - (size % BLOCK as u64) as usize) % BLOCK;
        stream.read_exact(&mut block[..padding]).map_err(io_error)?;
        if block[..padding].iter().any(|&b| b != 0) {
            return Err(ArchiveError::invalid(format!(
                "entry {n} is followed by non-zero padding"
            )));
        }
        let digest = Digest::of_hash(&hasher.finalize());
        count += 1;
        previous = Some(path.clone());
        visit(Entry {
            path,
            size,
            digest,
            data,
        })?;
    }
    // The end: a second zero block, then nothing (the writer adds no record padding).
    stream.read_exact(&mut block).map_err(io_error)?;
    if block != [0u8; BLOCK] {
        return Err(ArchiveError::invalid(
            "the end-of-archive marker is not two zero blocks (data after a single zero block)",
        ));
    }
    let mut probe = [0u8; 1];
    match stream.read(&mut probe) {
        Ok(0) => {}
        Ok(_) => {
            return Err(ArchiveError::invalid(
                "data follows the end-of-archive blocks",
            ))
        }
        Err(e) => return Err(io_error(e)),
    }
    if count == 0 {
        return Err(ArchiveError::invalid("the archive has no entries"));
    }
    Ok(())
}

/// An entry path must be relative, `/`-separated, without `.`/`..`/empty components.
fn check_path(path: &str) -> Result<(), ArchiveError> {
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.contains('\0')
        || path.chars().any(char::is_control)
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        Err(ArchiveError::invalid(
            "the entry path is not a plain relative path (absolute, `..`, control characters or empty components)",
        ))
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

    fn read_all(bytes: &[u8], limits: ReadLimits) -> Result<Vec<Entry>, ArchiveError> {
        read_entries(bytes, limits, |_| true)
    }

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = gzip_encoder(Vec::new());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn round_trips_sorted_entries() {
        let entries = read_all(&sample(), ReadLimits::default()).unwrap();
        let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["a/x.json", "b.json"]);
        assert_eq!(entries[0].data.as_deref(), Some(&b"[1]"[..]));
        assert_eq!(entries[0].digest, Digest::of_bytes(b"[1]"));
    }

    #[test]
    fn writing_is_deterministic() {
        assert_eq!(sample(), sample());
        // gzip header: no name flag, mtime 0.
        let gz = sample();
        assert_eq!(&gz[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&gz[4..8], &[0, 0, 0, 0]);
        assert_eq!(gz[..10], canonical_gzip_header());
    }

    #[test]
    fn a_nonzero_mtime_is_accepted_when_every_entry_has_it() {
        let tar = gunzip(&write(Vec::new(), [("a", &b"1"[..]), ("b", &b"2"[..])], 7).unwrap());
        assert!(read_all(&gzip(&tar), ReadLimits::default()).is_ok());
        // One entry with another mtime: not what the writer produces.
        let mut mixed = tar.clone();
        let second = 1024;
        let mut h = tar::Header::from_byte_slice(&mixed[second..second + 512]).clone();
        h.set_mtime(8);
        h.set_cksum();
        mixed[second..second + 512].copy_from_slice(h.as_bytes());
        assert!(read_all(&gzip(&mixed), ReadLimits::default()).is_err());
    }

    #[test]
    fn refuses_what_the_writer_never_writes() {
        let canonical = gunzip(&sample());
        let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
        // Data after the two zero blocks, after a single zero block, and record padding.
        cases.push((
            "trailing entry",
            [canonical.clone(), canonical[..1024].to_vec()].concat(),
        ));
        let single = [
            &canonical[..canonical.len() - 512],
            &canonical[..1024],
            &[0u8; 1024][..],
        ]
        .concat();
        cases.push(("after one zero block", single));
        cases.push(("record padding", [canonical.clone(), vec![0; 512]].concat()));
        // Non-zero entry padding.
        let mut pad = canonical.clone();
        pad[512 + 10] = b'x';
        cases.push(("padding", pad));
        // Out of order and duplicate.
        let swapped = [
            &canonical[1024..2048],
            &canonical[..1024],
            &canonical[2048..],
        ]
        .concat();
        cases.push(("order", swapped));
        let dup = [&canonical[..1024], &canonical[..1024], &canonical[2048..]].concat();
        cases.push(("duplicate", dup));
        // A GNU header for the same entry.
        let mut gnu = canonical.clone();
        let mut h = tar::Header::new_gnu();
        h.set_path("a/x.json").unwrap();
        h.set_size(3);
        h.set_mode(0o644);
        h.set_cksum();
        gnu[..512].copy_from_slice(h.as_bytes());
        cases.push(("gnu header", gnu));
        // Mode, owner and type changes.
        for (what, f) in [
            (
                "mode",
                (|h: &mut tar::Header| h.set_mode(0o755)) as fn(&mut tar::Header),
            ),
            ("uid", |h| h.set_uid(1)),
            ("symlink", |h| h.set_entry_type(tar::EntryType::Symlink)),
            ("pax", |h| h.set_entry_type(tar::EntryType::XHeader)),
            ("directory", |h| h.set_entry_type(tar::EntryType::Directory)),
        ] {
            let mut t = canonical.clone();
            let mut h = tar::Header::from_byte_slice(&t[..512]).clone();
            f(&mut h);
            h.set_cksum();
            t[..512].copy_from_slice(h.as_bytes());
            cases.push((what, t));
        }
        for (what, tar) in cases {
            let e = read_all(&gzip(&tar), ReadLimits::default()).unwrap_err();
            assert!(!e.limit, "{what}: {e:?}");
        }
        // Gzip-level: a second member, a name in the header, bytes after the stream.
        let good = sample();
        assert!(read_all(
            &[good.clone(), good.clone()].concat(),
            ReadLimits::default()
        )
        .is_err());
        assert!(read_all(
            &[good.clone(), b"junk".to_vec()].concat(),
            ReadLimits::default()
        )
        .is_err());
        let mut named = flate2::GzBuilder::new()
            .filename("x")
            .write(Vec::new(), Compression::new(6));
        named.write_all(&canonical).unwrap();
        assert!(read_all(&named.finish().unwrap(), ReadLimits::default()).is_err());
        assert!(read_all(&good[..good.len() - 5], ReadLimits::default()).is_err());
        assert!(read_all(b"not gzip at all", ReadLimits::default()).is_err());
    }

    #[test]
    fn refuses_hostile_paths_and_disallowed_names() {
        for path in ["../evil.json", "a/./b", "a//b", "a\u{1b}b"] {
            let mut h = tar::Header::new_ustar();
            // Bypass set_path's normalization: write the raw name.
            h.as_ustar_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_size(0);
            h.set_mode(0o644);
            h.set_uid(0);
            h.set_gid(0);
            h.set_mtime(0);
            h.set_cksum();
            let tar = [h.as_bytes().to_vec(), vec![0; 1024]].concat();
            assert!(
                read_all(&gzip(&tar), ReadLimits::default()).is_err(),
                "{path}"
            );
        }
        assert!(read_entries(&sample(), ReadLimits::default(), |p| p != "b.json").is_err());
    }

    #[test]
    fn sizes_are_checked_before_data_is_read() {
        let limits = ReadLimits {
            max_entry_bytes: 2,
            ..ReadLimits::default()
        };
        assert!(read_all(&sample(), limits).unwrap_err().limit);
        let mut seen = Vec::new();
        let refused = scan(&sample(), ReadLimits::default(), |p, size| {
            seen.push((p.to_string(), size));
            Err(ArchiveError::limit("no"))
        });
        assert!(refused.is_err());
        assert_eq!(seen, [("a/x.json".to_string(), 3)]);
        let hashed = scan(&sample(), ReadLimits::default(), |_, _| {
            Ok(Disposition::Hash)
        })
        .unwrap();
        assert!(hashed.iter().all(|e| e.data.is_none()));
    }

    #[test]
    fn gzip_bombs_stop_at_the_limit() {
        let limits = ReadLimits {
            max_total_bytes: 1024 * 1024,
            ..ReadLimits::default()
        };
        // Zeros end the archive at the second block: what follows is refused at once.
        let zeros = gzip(&vec![0u8; 8 * 1024 * 1024]);
        assert!(!read_all(&zeros, limits).unwrap_err().limit);
        // An entry whose header claims more than the budget: refused from the header.
        let big = header("a", 8 << 20, 0).unwrap();
        let bomb = gzip(&[big.as_bytes().to_vec(), vec![0u8; 8 << 20]].concat());
        assert!(read_all(&bomb, limits).unwrap_err().limit);
        // An archive of exactly the limit's size is read; one byte less is refused.
        let good = sample();
        let size = gunzip(&good).len() as u64;
        let exact = ReadLimits {
            max_total_bytes: size,
            ..ReadLimits::default()
        };
        assert!(read_all(&good, exact).is_ok());
        let short = ReadLimits {
            max_total_bytes: size - 1,
            ..ReadLimits::default()
        };
        assert!(read_all(&good, short).unwrap_err().limit);
    }
}
