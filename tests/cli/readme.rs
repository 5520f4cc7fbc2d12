//! What README.md shows is what beamtrace does: the sensor file is a working sensor file,
//! the field table is the fields the files carry, and the example command lines use
//! commands, options and values that exist.

use std::path::Path;

#[test]
fn readme_sensor_example_loads() {
    let readme = readme();
    // The sensor file: the yaml block that names a sensor.
    let start = readme
        .find("```yaml\nname:")
        .expect("a sensor's yaml block in README.md")
        + 8;
    let end = start + readme[start..].find("```").expect("closed yaml block");
    let sensor = beamtrace::sensor::parse_sensor(&readme[start..end], Path::new("README.md"))
        .unwrap_or_else(|e| panic!("README's sensor example: {e}"));
    assert_eq!(sensor.beams.len(), 128 * 1024);
    assert_eq!(sensor.subrays, 16);
    assert_eq!(sensor.detector.max_returns, 2);
    assert!(sensor
        .kernel
        .sample(sensor.subrays, sensor.sampling)
        .is_ok());
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md")
}

/// README's field table as (name, PCD TYPE letter, SIZE), one entry per field, in order.
fn readme_fields() -> Vec<(String, String, usize)> {
    let readme = readme();
    let start = readme
        .find("| field | type | meaning |")
        .expect("the field table in README.md");
    let mut fields = Vec::new();
    for row in readme[start..].lines().skip(2) {
        if !row.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (names, ty) = (cells[1], cells[2]);
        let (letter, size) = ty.split_at(1);
        let size: usize = size.parse().unwrap_or_else(|_| panic!("type {ty:?}"));
        for name in names.split([' ', ',']).filter(|n| !n.is_empty()) {
            fields.push((name.to_string(), letter.to_string(), size));
        }
    }
    fields
}

/// The header line of `header` that starts with `key`, split into its words.
fn header_line<'a>(header: &'a str, key: &str) -> Vec<&'a str> {
    header
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} line in\n{header}"))
        .split_whitespace()
        .collect()
}

#[test]
fn readme_field_table_is_what_the_files_carry() {
    use beamtrace::output::{pcd_header, ply_header, PcdEncoding, PlyEncoding};
    let documented = readme_fields();
    let pcd = pcd_header(1, PcdEncoding::Binary);
    let (names, types, sizes) = (
        header_line(&pcd, "FIELDS "),
        header_line(&pcd, "TYPE "),
        header_line(&pcd, "SIZE "),
    );
    let written: Vec<(String, String, usize)> = (0..names.len())
        .map(|i| {
            let size = sizes[i].parse().expect("SIZE is a number");
            (names[i].to_string(), types[i].to_string(), size)
        })
        .collect();
    assert_eq!(
        documented, written,
        "README's field table vs the PCD header"
    );
    // PLY names the same types by the sized names of the PLY readers (plyfile, Open3D).
    let ply = ply_header(1, PlyEncoding::BinaryLittleEndian);
    let properties: Vec<String> = ply
        .lines()
        .filter_map(|l| l.strip_prefix("property "))
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = documented
        .iter()
        .map(|(name, letter, size)| {
            let ty = match (letter.as_str(), size) {
                ("F", 4) => "float32",
                ("U", 1) => "uint8",
                ("U", 2) => "uint16",
                // Open3D's PLY reader skips uint32: 32-bit fields are int32 in PLY.
                ("U", 4) => "int32",
                other => panic!("README type {other:?} has no PLY name here"),
            };
            format!("{ty} {name}")
        })
        .collect();
    assert_eq!(
        properties, expected,
        "README's field table vs the PLY header"
    );
}

/// The `beamtrace …` command lines of README's "Using it" block, without comments.
fn readme_examples() -> Vec<Vec<String>> {
    let readme = readme();
    let start = readme.find("## Using it").expect("a Using it section");
    let block = &readme[start..];
    let block = &block[..block
        .find("`beamtrace <command> --help`")
        .expect("end of examples")];
    block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("beamtrace "))
        .map(|l| {
            let l = l.split(" #").next().unwrap_or(l);
            l.split_whitespace().map(str::to_string).collect()
        })
        .collect()
}

/// Every `beamtrace …` command line of README's "Using it" section (up to the next `## `
/// heading), in order: a line ending in `\` continues on the next, and `# …` comments
/// are dropped.
fn using_it_commands() -> Vec<Vec<String>> {
    let readme = readme();
    let start = readme.find("\n## Using it").expect("a Using it section") + 1;
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut commands = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        let Some(mut text) = line.strip_prefix("    beamtrace ").map(str::to_string) else {
            continue;
        };
        while text.trim_end().ends_with('\\') {
            text = text.trim_end().trim_end_matches('\\').to_string();
            text.push(' ');
            text.push_str(lines.next().unwrap_or_default().trim());
        }
        let text = text.split(" #").next().unwrap_or_default();
        commands.push(text.split_whitespace().map(str::to_string).collect());
    }
    commands
}

#[test]
fn readme_examples_use_real_commands_options_and_values() {
    use std::process::Command;
    let examples = using_it_commands();
    assert!(examples.len() > readme_examples().len(), "{examples:?}");
    assert!(examples.len() >= 10, "{examples:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for args in &examples {
        let out = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
            .arg(&args[0])
            .arg("--help")
            .output()
            .expect("the beamtrace binary starts");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`beamtrace {}`: not a command",
            args[0]
        );
        for (i, a) in args.iter().enumerate() {
            if a.starts_with("--") {
                assert!(
                    help.lines().any(|l| l.trim_start().starts_with(a.as_str())),
                    "`beamtrace {}`: {a} is not one of its options",
                    args.join(" ")
                );
            }
            let value = args.get(i + 1).map(String::as_str).unwrap_or_default();
            match a.as_str() {
                "--sensor" => {
                    let spec = if value.ends_with(".yaml") {
                        root.join(value).display().to_string()
                    } else {
                        value.to_string()
                    };
                    beamtrace::sensor::load_sensor(&spec)
                        .unwrap_or_else(|e| panic!("README's --sensor {value}: {e}"));
                }
                "--format" => {
                    value
                        .parse::<beamtrace::output::Format>()
                        .unwrap_or_else(|e| panic!("README's --format {value}: {e}"));
                }
                "--fields" => {
                    value
                        .parse::<beamtrace::output::FieldSet>()
                        .unwrap_or_else(|e| panic!("README's --fields {value}: {e}"));
                }
                "scene" if i == 0 => {
                    beamtrace::scene::by_name(value)
                        .unwrap_or_else(|e| panic!("README's scene {value}: {e}"));
                }
                _ => {}
            }
        }
    }
}

#[test]
fn readme_driver_field_table_is_the_field_table() {
    // Every driver field (keyed `vendor.name`) is in README's table with the name files
    // give it and its type, and the table holds no other.
    let readme = readme();
    let start = readme
        .find("| key | written as | type | meaning |")
        .expect("the drivers' field table in README.md");
    let rows: Vec<Vec<String>> = readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    let drivers: Vec<_> = beamtrace::output::FIELDS
        .iter()
        .filter(|f| f.key != f.name)
        .collect();
    assert_eq!(rows.len(), drivers.len(), "{rows:?}");
    for (row, f) in rows.iter().zip(drivers) {
        let ty = format!("{}{}", f.scalar.pcd_type(), f.scalar.size());
        assert_eq!(
            [row[1].as_str(), row[2].as_str(), row[3].as_str()],
            [f.key, f.name, ty.as_str()],
            "README's row for {}",
            f.key
        );
    }
}

#[test]
fn readme_convention_headers_are_what_the_files_carry() {
    // Each ```pcd block of README is the header `--fields <name>` writes, <name> the last
    // one named before the block; organized sizes as the sensors publish them: the
    // VLP-16's 16 lasers × 1808 firings, the OS1-64's 64 beams × 1024 columns.
    use beamtrace::output::{pcd_header_with, CloudMeta, FieldSet, PcdEncoding};
    let readme = readme();
    let mut seen = Vec::new();
    for (at, _) in readme.match_indices("```pcd\n") {
        let block = &readme[at + 7..];
        let block = &block[..block.find("```").expect("closed block")];
        let before = &readme[..at];
        let name = before
            .rfind("`--fields ")
            .map(|i| before[i + 10..].split([' ', '`']).next().unwrap())
            .expect("a --fields before the block");
        let fields: FieldSet = name.parse().expect("a convention");
        let number = |key: &str| -> usize {
            block
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {key} in README's {name} header"))
        };
        let (w, h, n) = (number("WIDTH "), number("HEIGHT "), number("POINTS "));
        let organized = (h > 1).then_some((w, h));
        let expected_size = match name {
            "velodyne" => Some((16, 1808)),
            "ouster" => Some((1024, 64)),
            _ => None,
        };
        assert_eq!(organized, expected_size, "README's {name} header");
        let meta = CloudMeta {
            organized,
            ..CloudMeta::plain(&fields)
        };
        assert_eq!(
            block,
            pcd_header_with(&meta, n, PcdEncoding::Binary),
            "README's {name} header"
        );
        seen.push(name.to_string());
    }
    assert_eq!(seen, ["velodyne", "ouster", "ros"]);
}

/// `args` scaled down to what a test machine (lavapipe, two cores) runs in seconds, and
/// made headless; each rule keeps the example's command and options, and only sizes it:
/// - `run`, `stream`, `view`, `render`: one frame (`--frames 1`, replacing the
///   example's count) of thin rays (`--thin`); `run` also `--overwrite`, since the
///   examples share one folder, one after another, as a reader trying them would;
/// - `stream`: `--fast` (no waiting for the sensor's clock; nobody needs to listen on
///   the UDP port), and `--http` on a free port instead of 8080, which the machine
///   may use; `--foxglove` on a free port too, and `--ros2` on the loopback interface
///   only (`ROS_LOCALHOST_ONLY=1`, see [`command_for`]) in a domain of its own;
/// - `view` needs a window: it runs under `xvfb-run` (a virtual X display) with
///   `--exit-after 1` (see [`command_for`]); a file pattern (`vlp/frame_*.ply`) is
///   expanded as a shell would ([`expand_globs`]);
/// - `bench`: one timed frame, no warm-up, the smallest case (`--cases 512x1`); a
///   `--suite` runs as `--suite quick --workloads limox` (the suite's CI size, one
///   workload; `bench_suite.rs` runs the whole quick suite);
/// - `batch`: the folder's copy of the manifest says `frames: 1` and `thin: true`
///   (see [`readme_examples_run`]).
fn scaled(args: &[String], http_port: u16) -> Vec<String> {
    let command = args[0].as_str();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    let set =
        |out: &mut Vec<String>, key: &str, value: &str| match out.iter().position(|a| a == key) {
            Some(k) => out[k + 1] = value.to_string(),
            None => out.extend([key.to_string(), value.to_string()]),
        };
    while i < args.len() {
        let a = &args[i];
        match (command, a.as_str()) {
            ("bench", "--suite") => {
                out.extend([
                    "--suite".into(),
                    "quick".into(),
                    "--workloads".into(),
                    "limox".into(),
                ]);
                i += 2;
                continue;
            }
            ("stream", "--http") => {
                out.extend(["--http".into(), format!("127.0.0.1:{http_port}")]);
                i += 2;
                continue;
            }
            ("stream", "--foxglove") => {
                // A value, when given, is the next argument; the flag alone takes none.
                let valued = args.get(i + 1).is_some_and(|v| !v.starts_with("--"));
                out.extend(["--foxglove".into(), format!("127.0.0.1:{http_port}")]);
                i += if valued { 2 } else { 1 };
                continue;
            }
            _ => out.push(a.clone()),
        }
        i += 1;
    }
    let has = |out: &Vec<String>, key: &str| out.iter().any(|a| a == key);
    match command {
        "run" | "stream" | "render" | "view" => {
            if command != "view" {
                set(&mut out, "--frames", "1");
            }
            if !has(&out, "--thin") {
                out.push("--thin".into());
            }
            if command == "run" && !has(&out, "--shard") {
                out.push("--overwrite".into());
            }
            if command == "stream" {
                out.push("--fast".into());
            }
            if command == "view" {
                out.extend(["--exit-after".into(), "1".into()]);
            }
        }
        "bench" if !has(&out, "--suite") => {
            set(&mut out, "--frames", "1");
            if !has(&out, "--hil") {
                set(&mut out, "--warmup", "0");
            }
            set(&mut out, "--cases", "512x1");
        }
        _ => {}
    }
    out
}

/// The process an example runs as: `view` under `xvfb-run`, the rest as they are.
fn command_for(args: &[String]) -> std::process::Command {
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_beamtrace");
    let mut cmd = if args[0] == "view" {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x800x24", bin]);
        c
    } else {
        Command::new(bin)
    };
    // Live ROS 2 topics (`stream --ros2`) stay on this machine, in a domain no other
    // test uses.
    cmd.args(args)
        .env_remove("RUST_BACKTRACE")
        .env("ROS_LOCALHOST_ONLY", "1")
        .env("ROS_DOMAIN_ID", (90 + std::process::id() % 10).to_string());
    cmd
}

/// `args` with each `dir/pre*post` replaced by the matching files of `dir` under
/// `root`, sorted, as a shell expands them (kept as written when none match).
fn expand_globs(args: &[String], root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        let (dir, name) = a.rsplit_once('/').unwrap_or((".", a.as_str()));
        let Some((pre, post)) = name.split_once('*') else {
            out.push(a.clone());
            continue;
        };
        let mut found: Vec<String> = std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                n.starts_with(pre) && n.ends_with(post) && n.len() >= pre.len() + post.len()
            })
            .map(|n| format!("{dir}/{n}"))
            .collect();
        found.sort();
        if found.is_empty() {
            found.push(a.clone());
        }
        out.extend(found);
    }
    out
}

/// A free TCP port on the loopback interface.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Every command line of README's "Using it" section runs, in order, in one folder
/// that holds a copy of the repository's `configs/` and `scenes/` (so `scene street
/// --out scenes/street.glb` does not overwrite the repository's), scaled down by
/// [`scaled`], and must exit 0 with something on stdout. `batch --shard i/n` is
/// followed by the manifest's other shards, which `merge` (the next example) needs.
#[test]
fn readme_examples_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    for dir in ["configs", "scenes"] {
        copy_tree(&root.join(dir), &work.path().join(dir));
    }
    let manifest = work.path().join("configs/batch/example.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let small: Vec<String> = text
        .lines()
        .map(|l| match l.split(':').next() {
            Some("frames") => "frames: 1".to_string(),
            Some("thin") => "thin: true".to_string(),
            _ => l.to_string(),
        })
        .collect();
    std::fs::write(&manifest, small.join("\n")).unwrap();

    let examples = using_it_commands();
    assert!(examples.len() >= 40, "{examples:?}");
    let mut failed = Vec::new();
    for example in &examples {
        let mut runs = vec![scaled(example, free_port())];
        let shard = example.iter().position(|a| a == "--shard");
        if let (Some(k), "batch") = (shard, example[0].as_str()) {
            let (i, n) = example[k + 1].split_once('/').unwrap();
            let (i, n): (u32, u32) = (i.parse().unwrap(), n.parse().unwrap());
            for other in (0..n).filter(|&j| j != i) {
                let mut a = runs[0].clone();
                a[k + 1] = format!("{other}/{n}");
                runs.push(a);
            }
        }
        for args in runs {
            let args = expand_globs(&args, work.path());
            let out = command_for(&args)
                .current_dir(work.path())
                .output()
                .expect("the beamtrace binary starts");
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() || out.stdout.is_empty() || stderr.contains("panicked") {
                failed.push(format!(
                    "`beamtrace {}` (README: `beamtrace {}`): {:?}, stdout {} bytes\n{stderr}",
                    args.join(" "),
                    example.join(" "),
                    out.status,
                    out.stdout.len()
                ));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} example(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
