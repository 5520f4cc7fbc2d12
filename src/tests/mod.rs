//! Tests of the crate as a whole: its layers and its map.

mod layers;
mod map;

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, with its path relative to `src/`, sorted.
fn rust_files(dir: &Path) -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a readable source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(&src).expect("under src/");
                let text = std::fs::read_to_string(&path).expect("a readable source file");
                files.push((rel.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    files.sort();
    files
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn design() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/DESIGN.md");
    std::fs::read_to_string(path).expect("docs/DESIGN.md")
}

/// The lines of the section of `doc` whose heading starts with `heading`, up to the next
/// heading of the same or a higher level.
fn section<'a>(doc: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut lines = doc.lines().skip_while(|l| !l.starts_with(heading));
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    for line in lines {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            break;
        }
        out.push(line);
    }
    out
}
