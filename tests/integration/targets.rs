//! Every test file is in a test target. Cargo.toml sets `autotests = false` and names
//! three targets (integration, parts, resources), so a file added directly under tests/
//! that is no target's `path`, or a module file in tests/integration/ or tests/parts/ that
//! its main.rs does not declare, would compile into nothing and never run, silently.
//! (A parts module that main.rs declares but whose list it does not gather leaves its
//! `tests()` unused, which the lints refuse.)

use std::path::Path;

fn rust_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".rs"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_test_file_belongs_to_a_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut strays = Vec::new();
    for name in rust_files(&root.join("tests")) {
        if !manifest.contains(&format!("path = \"tests/{name}\"")) {
            strays.push(format!(
                "tests/{name} is the `path` of no [[test]] in Cargo.toml"
            ));
        }
    }
    for target in ["integration", "parts"] {
        let dir = root.join("tests").join(target);
        let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
        let declared: Vec<&str> = main
            .lines()
            .filter_map(|line| line.trim().strip_prefix("mod ")?.strip_suffix(';'))
            .collect();
        for name in rust_files(&dir) {
            let module = name.trim_end_matches(".rs");
            if name != "main.rs" && !declared.contains(&module) {
                strays.push(format!(
                    "tests/{target}/{name} is not a module of tests/{target}/main.rs"
                ));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "test files that no target compiles (add them to a target, or move them \
         into tests/integration/ or tests/parts/ and declare them):\n{}",
        strays.join("\n")
    );
}
