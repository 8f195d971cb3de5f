//! Reading a file the operator names: a bundle, a trusted key, a request, a base card.
//!
//! Such a path can lead anywhere: to a FIFO, where a plain `open()` blocks until a
//! writer appears (forever, in CI); to `/dev/zero` or `/dev/urandom`, where reading
//! never ends; to a file that grows while it is read. So every such file is opened
//! without blocking (`O_NONBLOCK`), checked with `fstat` on the open descriptor (no
//! race with a rename between a check and the open) to be a regular file before a byte
//! is read, checked for size, and read with a bound one byte past the limit.

use crate::finding::Code;
use std::io::Read;
use std::path::Path;

/// Why an operator-named file was not read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// Not a regular file (a FIFO, a device, a directory, a socket).
    NotRegular,
    /// Larger than the caller's limit.
    TooLarge,
    /// The operating system refused (missing file, permissions, ...).
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotRegular => f.write_str(
                "not a regular file (a pipe, a device or a directory is never read: it could block or never end)",
            ),
            ReadError::TooLarge => f.write_str("the file is larger than the size limit"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The one mapping of a refused read to a finding code: not a regular file is
/// `path_invalid`, too large is `resource_limit_exceeded`, anything else is `io`. The
/// caller words the message for what it was reading.
impl From<&ReadError> for Code {
    fn from(e: &ReadError) -> Code {
        match e {
            ReadError::NotRegular => Code::PathInvalid,
            ReadError::TooLarge => Code::ResourceLimitExceeded,
            ReadError::Io(_) => Code::Io,
        }
    }
}

impl std::error::Error for ReadError {}

/// Open `path` without blocking and without following it into anything but a regular
/// file, then read at most `max_bytes`.
pub fn read(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading would otherwise wait for a writer. On a regular
        // file the flag has no effect on reads.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > max_bytes {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read(&p, 5).unwrap(), b"12345");
        assert!(matches!(read(&p, 4), Err(ReadError::TooLarge)));
        assert!(matches!(read(dir.path(), 10), Err(ReadError::NotRegular)));
        assert!(matches!(
            read(&dir.path().join("missing"), 10),
            Err(ReadError::Io(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_blocking() {
        assert!(matches!(
            read(Path::new("/dev/zero"), 10),
            Err(ReadError::NotRegular)
        ));
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(read(&fifo, 10), Err(ReadError::NotRegular)));
    }
}
