//! DESIGN §8 (the code layout) and the crate's own docs name every module: a folder or
//! module added to `src/` without a line there fails here.

use super::{design, section, src_dir};

/// The folders and top-level files of `src/` (`name/`, `name.rs`), the crate root and
/// the crate-level tests aside.
fn src_entries() -> Vec<String> {
    let mut entries: Vec<String> = std::fs::read_dir(src_dir())
        .expect("src/")
        .map(|e| e.expect("a folder entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            match p.is_dir() {
                true => (name != "tests").then(|| format!("{name}/")),
                false => (name.ends_with(".rs") && name != "lib.rs").then_some(name),
            }
        })
        .collect();
    entries.sort();
    entries
}

#[test]
fn design_8_names_every_folder_and_file_of_src() {
    let map = section(&design(), "## 8.").join("\n");
    let missing: Vec<String> = (src_entries().into_iter())
        .filter(|e| !map.contains(e.as_str()))
        .collect();
    assert!(missing.is_empty(), "DESIGN §8 does not name {missing:?}");
}

#[test]
fn the_crate_docs_name_every_module() {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).expect("src/lib.rs");
    let docs: String = (lib.lines())
        .filter(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let modules: Vec<&str> = (lib.lines())
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    assert!(
        modules.len() >= 12,
        "lib.rs declares {} modules",
        modules.len()
    );
    let missing: Vec<&&str> = (modules.iter())
        .filter(|m| !docs.contains(&format!("[`{m}`]")) && !docs.contains(&format!("(mod@{m})")))
        .collect();
    assert!(missing.is_empty(), "lib.rs's docs do not name {missing:?}");
}
