//! Standard output, written so that the CLI never lies about it.
//!
//! Every byte a command prints on stdout goes through here. A write that fails is
//! remembered and nothing more is written; [`finish`] then decides the exit: a reader
//! that closed the pipe (`skillbundle inspect B | head -1`) ends the run quietly with
//! the status the command had, and any other failure (`> /dev/full`, a vanished disk)
//! is reported as `io_error` on stderr with exit status 2, since the output the caller
//! asked for was not delivered.

use serde::Serialize;
use skillbundle::finding::{Code, Finding, Location};
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Mutex;

/// The first stdout write that failed, if any.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

fn failed() -> bool {
    FAILED.lock().map_or(true, |f| f.is_some())
}

fn remember(e: io::Error) {
    if let Ok(mut f) = FAILED.lock() {
        f.get_or_insert(e);
    }
}

/// Write on stdout with `write`, unless an earlier write failed.
pub fn with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
    if failed() {
        return;
    }
    if let Err(e) = write(&mut io::stdout().lock()) {
        remember(e);
    }
}

/// Print lines on stdout.
pub fn lines(lines: &[String]) {
    with(|out| lines.iter().try_for_each(|l| writeln!(out, "{l}")));
}

/// Print bytes on stdout as they are.
pub fn bytes(bytes: &[u8]) {
    with(|out| out.write_all(bytes));
}

/// Print a value on stdout as pretty JSON and a line feed.
pub fn json(doc: &impl Serialize) {
    with(|out| {
        serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::from)?;
        writeln!(out)
    });
}

/// What clap's own exit (`--help`, `--version`, a usage error) prints, and its status:
/// help and version are the command's output and go through this module; usage errors
/// go to stderr as clap prints them (exit status 2).
pub fn clap_exit(e: &clap::Error) -> ExitCode {
    let status = ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    if e.use_stderr() {
        let _ = e.print();
        return status;
    }
    use std::io::IsTerminal;
    let text = e.render();
    let text = if io::stdout().is_terminal() {
        text.ansi().to_string()
    } else {
        text.to_string()
    };
    bytes(text.as_bytes());
    status
}

/// Flush stdout and say whether the output was delivered: `None` when every write
/// succeeded or the reader closed the pipe, else the `io_error` finding to report (on
/// stderr, by the caller, with exit status 2), since the output the caller asked for was
/// not delivered.
pub fn finish() -> Option<Finding> {
    if let Err(e) = io::stdout().lock().flush() {
        remember(e);
    }
    let failure = FAILED.lock().ok().and_then(|mut f| f.take());
    match failure {
        None => None,
        Some(e) if e.kind() == io::ErrorKind::BrokenPipe => None,
        Some(e) => Some(
            Finding::new(
                Code::Io,
                format!("cannot write to standard output: {e}"),
                Location::default(),
            )
            .with_help("the command's output is incomplete: rerun it with stdout on a file or pipe that can take it"),
        ),
    }
}
