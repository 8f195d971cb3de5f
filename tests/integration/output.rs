//! What every command does when its standard output fails (issue 14): a reader that
//! closed the pipe (`skillbundle inspect B | head -1`) ends the run quietly, with the
//! status the command had; any other write failure (`> /dev/full`) is `io_error`, exit
//! status 2 — never a panic, never a silent success.
#![cfg(unix)]

use crate::common;

use common::{run, workspace};
use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};

/// Where a command's stdout goes.
#[derive(Clone, Copy, Debug)]
enum Sink {
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
    /// A pipe whose read end is closed before the command starts: every write fails
    /// with EPIPE.
    ClosedPipe,
}

fn stdout_for(sink: Sink) -> Stdio {
    match sink {
        Sink::Full => File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
            .into(),
        Sink::ClosedPipe => {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            // SAFETY: both descriptors were just created and are owned here alone.
            let (read, write) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            drop(read);
            write.into()
        }
    }
}

/// Run the binary with stdout on `sink`: (exit status, stderr).
fn run_into(sink: Sink, args: &[&str], cwd: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout_for(sink))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Each command, in a form that succeeds (exit 0) with a writable stdout. `{n}` is
/// replaced by a number unique to the run, for commands that write files.
const COMMANDS: &[&[&str]] = &[
    &["completions", "bash"],
    &["man"],
    &["man", "build"],
    &["--help"],
    &["build", "--help"],
    &["init", "new-{n}"],
    &["keygen", "--out", "keys/k{n}"],
    &["build", ".", "--out", "out-{n}"],
    &["check", "."],
    &["diff", "dist/bundle.tar.gz", "."],
    &[
        "digest",
        "skills/evaluate_resource_condition/schemas/input.json",
    ],
    &["inspect", "dist/bundle.tar.gz"],
    &[
        "verify",
        "dist/bundle.tar.gz",
        "--trust",
        "keys/release.jwk.json",
    ],
    &[
        "describe",
        "dist/bundle.tar.gz",
        "evaluate_resource_condition",
        "--trust",
        "keys/release.jwk.json",
    ],
    &[
        "card",
        "dist/bundle.tar.gz",
        "--trust",
        "keys/release.jwk.json",
    ],
    &[
        "validate",
        "dist/bundle.tar.gz",
        "--trust",
        "keys/release.jwk.json",
        "--request",
        "requests/evaluate.json",
    ],
];

#[test]
fn a_failed_write_is_io_error_and_a_closed_pipe_is_quiet() {
    let ws = workspace();
    let dir = ws.path();
    let setup = |args: &[&str]| {
        let r = run(args, dir);
        assert_eq!(r.status, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    };
    setup(&["keygen", "--out", "keys/release"]);
    setup(&[
        "build",
        ".",
        "--sign-key",
        "keys/release.key",
        "--out",
        "dist",
    ]);
    let built = std::fs::read_dir(dir.join("dist"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::rename(built, dir.join("dist/bundle.tar.gz")).unwrap();

    let mut n = 0;
    let mut failures = Vec::new();
    for command in COMMANDS {
        let formats: &[&[&str]] = match command[0] {
            "completions" | "man" | "--help" | "describe" | "card" => &[&[]],
            _ if command.contains(&"--help") => &[&[]],
            _ => &[
                &[],
                &["--format", "json"],
                &["--format", "github"],
                &["--format", "sarif"],
            ],
        };
        for format in formats {
            for sink in [Sink::Full, Sink::ClosedPipe] {
                n += 1;
                let unique = n.to_string();
                let mut args: Vec<String> =
                    command.iter().map(|a| a.replace("{n}", &unique)).collect();
                args.extend(format.iter().map(|s| s.to_string()));
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let (status, stderr) = run_into(sink, &args, dir);
                let ok = match sink {
                    Sink::Full => {
                        status == 2
                            && stderr.contains("error[io_error]: cannot write to standard output")
                            && !stderr.contains("panicked")
                    }
                    Sink::ClosedPipe => status == 0 && stderr.is_empty(),
                };
                if !ok {
                    failures.push(format!(
                        "{args:?} > {sink:?}: exit {status}, stderr: {stderr}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_closed_pipe_keeps_a_failing_status() {
    // The run's verdict is not the reader's business: `check` that finds a problem still
    // exits 1 when nobody reads its report (a CI step with `set -o pipefail` sees it).
    let ws = workspace();
    common::write(
        &ws.path()
            .join("skills/evaluate_resource_condition/schemas/input.json"),
        "{",
    );
    let (status, stderr) = run_into(
        Sink::ClosedPipe,
        &["check", ".", "--format", "json"],
        ws.path(),
    );
    assert_eq!((status, stderr.as_str()), (1, ""));
}
