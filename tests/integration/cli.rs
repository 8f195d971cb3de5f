//! CLI behaviour as files: each tests/cmd/*.toml (or .md) is a command line with the exact
//! output a user sees.

#[test]
fn cli() {
    trycmd::TestCases::new()
        .case("tests/cmd/*.toml")
        .case("tests/cmd/*.md");
}
