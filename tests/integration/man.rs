//! `skillbundle man`: a page for the command and one per subcommand (the pages
//! skillbundle(1) lists), examples kept line for line.

use crate::common;

use common::run;

#[test]
fn every_page_skillbundle_1_lists_can_be_produced() {
    let dir = tempfile::tempdir().unwrap();
    let top = run(&["man"], dir.path());
    assert_eq!(top.status, 0, "{}", top.stderr);
    let list = run(&["man", "--list"], dir.path());
    assert_eq!(list.status, 0, "{}", list.stderr);
    let names: Vec<&str> = list.stdout.lines().collect();
    assert!(
        names.contains(&"build") && !names.contains(&"help"),
        "{names:?}"
    );
    for name in names {
        assert!(
            top.stdout
                .contains(&format!("skillbundle\\-{}(1)", name.replace('-', "\\-"))),
            "skillbundle(1) does not list {name}"
        );
        let page = run(&["man", name], dir.path());
        assert_eq!(page.status, 0, "{name}: {}", page.stderr);
        assert!(
            page.stdout.contains(&format!(".TH skillbundle-{name} 1")),
            "{name}: {}",
            &page.stdout[..200.min(page.stdout.len())]
        );
    }
    let unknown = run(&["man", "no-such-command"], dir.path());
    assert_eq!(unknown.status, 2);
    assert!(unknown.stdout.is_empty());
}

#[test]
fn examples_are_set_line_for_line() {
    let dir = tempfile::tempdir().unwrap();
    let page = run(&["man", "build"], dir.path()).stdout;
    let expected =
        ".nf\n  skillbundle build example\\-skills\n  skillbundle build . \\-\\-out /tmp/release\n";
    assert!(page.contains(expected), "{page}");
    assert!(page.contains(
        "  skillbundle build . \\-\\-locked                       in CI: the committed lock must already record this release\n"
    ));
    assert!(page.contains(".fi\n"));
}
