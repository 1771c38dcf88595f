//! The macro must never panic on user input: no `unwrap`, `expect`, `panic!`
//! and the like outside the tests.

use std::fs;
use std::path::Path;

#[test]
fn no_panics_outside_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let forbidden = [
        concat!(".unwrap", "("),
        concat!(".expect", "("),
        concat!("panic", "!"),
        concat!("unreachable", "!"),
        concat!("todo", "!"),
        concat!("unimplemented", "!"),
    ];
    let mut found = Vec::new();
    for entry in fs::read_dir(&src).expect("cannot read src/") {
        let path = entry.expect("cannot read src/").path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let text = fs::read_to_string(&path).expect("cannot read a source file");
        for (i, line) in text.lines().enumerate() {
            for word in forbidden {
                if line.contains(word) {
                    found.push(format!("{}:{}: {word}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "possible panics:\n{}", found.join("\n"));
}
