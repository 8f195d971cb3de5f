//! Bounded resources: the largest hostile inputs are refused with peak memory under a
//! stated bound. Each case runs the binary as a child and reads the child's own peak
//! resident set size from `wait4` (Linux reports it in KiB), so other tests running in
//! parallel do not blur the measurement. A forked child inherits its parent's peak as a
//! starting point, so this test never holds large inputs in memory itself.

mod common;

use common::*;

/// The stated bound on peak resident memory for refusing any case below, in MiB: a
/// debug build of the binary with its embedded schemas starts at about 10 MiB.
/// SECURITY.md states this bound.
const BOUND_MIB: u64 = 128;

#[cfg(target_os = "linux")]
struct Measured {
    status: i32,
    peak_mib: u64,
    stdout: String,
}

#[cfg(target_os = "linux")]
// The child is reaped by wait4 below, which also returns its resource usage.
#[allow(clippy::zombie_processes)]
fn measure(args: &[&str], cwd: &std::path::Path) -> Measured {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; the pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    assert!(libc::WIFEXITED(status), "the child did not exit normally");
    Measured {
        status: libc::WEXITSTATUS(status),
        peak_mib: (usage.ru_maxrss as u64).div_ceil(1024),
        stdout,
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_largest_hostile_inputs_stay_under_the_memory_bound() {
    use std::path::Path;
    type Make = fn(&Path);
    let build_cases: [(&str, Make, &str); 6] = [
        (
            "100,000-level nested schema",
            |ws| {
                let deep = "[".repeat(100_000) + &"]".repeat(100_000);
                write(
                    &ws.join(ERC).join("schemas/input.json"),
                    format!("{{\"const\": {deep}}}"),
                );
            },
            "resource_limit_exceeded",
        ),
        (
            "schema just under the size limit with 40,000 subschemas",
            |ws| {
                let props: Vec<String> = (0..40_000).map(|i| format!("\"{i}\":{{}}")).collect();
                write(
                    &ws.join(ERC).join("schemas/input.json"),
                    format!("{{\"properties\":{{{}}}}}", props.join(",")),
                );
            },
            "resource_limit_exceeded",
        ),
        (
            "YAML alias bomb in a schema",
            |ws| {
                let mut text = String::from("enum:\n  - &a0 [x, x, x, x, x, x, x, x, x, x]\n");
                for i in 1..12 {
                    let refs = vec![format!("*a{}", i - 1); 10].join(", ");
                    text.push_str(&format!("  - &a{i} [{refs}]\n"));
                }
                write(
                    &ws.join("skills/manage_interface_config/schemas/input.yaml"),
                    text,
                );
            },
            "resource_limit_exceeded",
        ),
        (
            "200 MB skill manifest",
            |ws| {
                // Written in pieces: a child's peak memory as wait4 reports it starts
                // from this process's peak at fork, so the test itself stays small.
                use std::io::Write;
                let path = ws.join(ERC).join("skill.yaml");
                let (head, tail) = read(&path)
                    .split_once("description: Checks")
                    .map(|(h, t)| (h.to_string(), t.to_string()))
                    .unwrap();
                let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
                out.write_all(head.as_bytes()).unwrap();
                out.write_all(b"description: ").unwrap();
                let chunk = vec![b'x'; 1 << 20];
                for _ in 0..200 {
                    out.write_all(&chunk).unwrap();
                }
                out.write_all(b" Checks").unwrap();
                out.write_all(tail.as_bytes()).unwrap();
            },
            "resource_limit_exceeded",
        ),
        (
            "64 MiB schema file",
            |ws| {
                let f = std::fs::File::create(ws.join(ERC).join("schemas/input.json")).unwrap();
                f.set_len(64 << 20).unwrap();
            },
            "resource_limit_exceeded",
        ),
        (
            "300 MiB workspace",
            |ws| {
                let f = std::fs::File::create(ws.join("blob.bin")).unwrap();
                f.set_len(300 << 20).unwrap();
            },
            "resource_limit_exceeded",
        ),
    ];
    let mut report: Vec<(&str, u64)> = Vec::new();
    for (name, make, code) in build_cases {
        let ws = workspace();
        make(ws.path());
        let m = measure(&["check", ".", "--format", "json"], ws.path());
        assert_eq!(m.status, 1, "{name}: {}", m.stdout);
        assert!(m.stdout.contains(code), "{name}: {}", m.stdout);
        report.push((name, m.peak_mib));
    }

    // Hostile bundles: what each claims to expand to is refused from the headers, or
    // streamed and hashed without being kept, before anything is authenticated.
    let dir = tempfile::tempdir().unwrap();
    let fx = common::crafted::fixture();
    write(
        &dir.path().join("trust.jwk.json"),
        fx.key.public_key().to_jwk_json(),
    );
    let header = |path: &str, size: u64| common::crafted::header(path, size, |_| {});
    let bundles: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "gzip bomb of zeros past 1 GiB",
            gzip_bomb((1 << 30) + (1 << 20)),
            "bundle_invalid",
        ),
        (
            "64 MiB manifest.json",
            gzip_bomb_after(header("manifest.json", 64 << 20).as_bytes(), 64 << 20),
            "resource_limit_exceeded",
        ),
        (
            "manifest.json at the byte cap, all empty objects",
            {
                let cap = skillbundle::bundle::first_pass::MAX_BUNDLE_MANIFEST_BYTES as usize;
                let mut body = b"[".to_vec();
                while body.len() + 4 < cap {
                    body.extend_from_slice(b"{},");
                }
                body.extend_from_slice(b"{}]");
                let mut files = fx.files.clone();
                files.insert("manifest.json".into(), body);
                common::crafted::pack(&files, 0)
            },
            "resource_limit_exceeded",
        ),
        (
            "900 MiB entry behind a canonical header",
            gzip_bomb_after(header("interfaces/a.json", 900 << 20).as_bytes(), 900 << 20),
            "resource_limit_exceeded",
        ),
        (
            "900 MiB GNU long name",
            {
                let mut h = tar::Header::new_gnu();
                h.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
                h.set_entry_type(tar::EntryType::GNULongName);
                h.set_size(900 << 20);
                h.set_cksum();
                gzip_bomb_after(h.as_bytes(), 900 << 20)
            },
            "resource_limit_exceeded",
        ),
        (
            "pax size beyond the entry limit",
            {
                let pax = common::crafted::pax(&["size=943718400"]);
                gzip_bomb_after(&pax, 900 << 20)
            },
            "bundle_invalid",
        ),
    ];
    let signed_by_nobody = |path: &Path| {
        // Two 64 MiB entries before a manifest whose signature no trusted key made,
        // compressed as they are written, so this process never holds them.
        let out = std::fs::File::create(path).unwrap();
        let mut gz = flate2::GzBuilder::new()
            .mtime(0)
            .operating_system(255)
            .write(std::io::BufWriter::new(out), flate2::Compression::new(6));
        use std::io::Write;
        let zeros = vec![0u8; 1 << 20];
        for name in ["a", "b"] {
            gz.write_all(header(&format!("interfaces/{name}.json"), 64 << 20).as_bytes())
                .unwrap();
            for _ in 0..64 {
                gz.write_all(&zeros).unwrap();
            }
        }
        let mut m: serde_json::Value = serde_json::from_slice(&fx.files["manifest.json"]).unwrap();
        m["signatures"][0]["signature"] = serde_json::json!("AAAA");
        let m = skillbundle::bundle::stable_pretty(&m);
        gz.write_all(&common::crafted::entry(
            &header("manifest.json", m.len() as u64),
            &m,
        ))
        .unwrap();
        gz.write_all(&[0u8; 1024]).unwrap();
        gz.finish().unwrap().flush().unwrap();
    };
    let cases = bundles
        .into_iter()
        .map(|(name, bytes, code)| (name, Some(bytes), code))
        .chain([(
            "two 64 MiB entries before a manifest no trusted key signed",
            None,
            "signature_invalid",
        )]);
    for (name, bytes, code) in cases {
        let path = dir.path().join("bundle.tar.gz");
        match bytes {
            Some(bytes) => write(&path, bytes),
            None => signed_by_nobody(&path),
        }
        let runs: [&[&str]; 3] = [
            &[
                "verify",
                "bundle.tar.gz",
                "--trust",
                "trust.jwk.json",
                "--format",
                "json",
            ],
            &[
                "verify",
                "bundle.tar.gz",
                "--allow-unsigned",
                "--format",
                "json",
            ],
            &["inspect", "bundle.tar.gz", "--format", "json"],
        ];
        for args in runs {
            let m = measure(args, dir.path());
            let expected = if code == "signature_invalid" && args[0] != "verify" {
                None
            } else if code == "signature_invalid" && args[2] == "--allow-unsigned" {
                Some("bundle_invalid")
            } else {
                Some(code)
            };
            if let Some(code) = expected {
                assert_eq!(m.status, 1, "{name} ({}): {}", args[0], m.stdout);
                assert!(
                    m.stdout.contains(code),
                    "{name} ({}): {}",
                    args[0],
                    m.stdout
                );
            }
            report.push((name, m.peak_mib));
        }
    }

    let over: Vec<_> = report.iter().filter(|(_, mib)| *mib > BOUND_MIB).collect();
    assert!(
        over.is_empty(),
        "over the {BOUND_MIB} MiB bound: {over:?} (all: {report:?})"
    );
    // Shown with --nocapture: the measured peaks, for SECURITY.md.
    for (name, mib) in &report {
        println!("{mib:>5} MiB  {name}");
    }
}

#[cfg(not(target_os = "linux"))]
#[test]
fn the_largest_hostile_inputs_stay_under_the_memory_bound() {
    println!(
        "skipped: peak memory is read with wait4's ru_maxrss, whose unit is only KiB on Linux"
    );
}
