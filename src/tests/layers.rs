//! DESIGN §9.1's layer rule, checked: every `crate::<module>` a file of the library names
//! in code must be an arrow the table there allows. The table is read from DESIGN.md, so
//! the rule is stated once and a module missing from it fails too.

use super::{design, rust_files, section, src_dir};
use std::collections::{BTreeMap, BTreeSet};

type Table = BTreeMap<String, BTreeSet<String>>;

/// The rows `| `layer` | `a`, `b` |` of DESIGN §9.1 ("—": imports nothing).
fn allowed(design: &str) -> Table {
    let mut table = Table::new();
    for line in section(design, "### 9.1") {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        let [layer, imports] = cells[..] else {
            continue;
        };
        let Some(layer) = backticked(layer).into_iter().next() else {
            continue;
        };
        table.insert(layer, backticked(imports).into_iter().collect());
    }
    table
}

/// The `names` in backticks of a table cell.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The top-level modules a source file names as `crate::<module>` outside comments,
/// grouped imports (`crate::{a, b::c}`) included.
fn imports(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let names = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for name in names {
                let module: String = (name.trim().chars())
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !module.is_empty() {
                    found.insert(module);
                }
            }
        }
    }
    found
}

/// The layer a file under `src/` belongs to: its top-level folder or file stem. `None`
/// for the crate root, the binary (`main.rs`, `cli/`) and the crate-level tests.
fn layer_of(path: &str) -> Option<String> {
    let first = path.split('/').next()?;
    let layer = first.strip_suffix(".rs").unwrap_or(first);
    (!["lib", "main", "cli", "tests"].contains(&layer)).then(|| layer.to_string())
}

/// Every arrow of `files` the table does not allow, and every layer it has no row for.
fn violations(files: &[(String, String)], table: &Table) -> Vec<String> {
    let mut out = Vec::new();
    for (path, source) in files {
        let Some(layer) = layer_of(path) else {
            continue;
        };
        let Some(may) = table.get(&layer) else {
            out.push(format!("{path}: layer `{layer}` has no row in DESIGN §9.1"));
            continue;
        };
        for module in imports(source) {
            if module != layer && !may.contains(&module) {
                out.push(format!("{path}: `{layer}` imports `crate::{module}`"));
            }
        }
    }
    out
}

#[test]
fn the_library_keeps_the_layers_of_design_9_1() {
    let table = allowed(&design());
    assert!(
        table.len() >= 12,
        "DESIGN §9.1's table has {} rows",
        table.len()
    );
    let files = rust_files(&src_dir());
    let wrong = violations(&files, &table);
    assert!(
        wrong.is_empty(),
        "arrows DESIGN §9.1 forbids:\n{}",
        wrong.join("\n")
    );
    // Every row is a module that exists: the table says what is.
    let layers: BTreeSet<String> = files.iter().filter_map(|(p, _)| layer_of(p)).collect();
    let stale: Vec<&String> = table.keys().filter(|l| !layers.contains(*l)).collect();
    assert!(
        stale.is_empty(),
        "DESIGN §9.1 has rows for no module: {stale:?}"
    );
}

#[test]
fn a_wrong_import_is_caught() {
    let table = allowed(&design());
    let file = |path: &str, source: &str| (path.to_string(), source.to_string());
    let files = [
        file("gpu/buffer.rs", "use crate::sim::Simulator;\n"),
        file(
            "output/pcd.rs",
            "    let t = crate::{model::Point, job::JobError};\n",
        ),
        file(
            "sensor/mod.rs",
            "// crate::sim is only named in a comment\n",
        ),
        file("climate/mod.rs", "use crate::model::Sun;\n"),
    ];
    let wrong = violations(&files, &table);
    assert_eq!(
        wrong,
        [
            "gpu/buffer.rs: `gpu` imports `crate::sim`",
            "output/pcd.rs: `output` imports `crate::job`",
            "climate/mod.rs: layer `climate` has no row in DESIGN §9.1",
        ]
    );
}
