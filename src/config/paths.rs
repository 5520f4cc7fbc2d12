//! Where the files that a configuration or a scene names may lie.
//!
//! A sensor YAML's `pattern.csv` and a glTF's buffer and image URIs are read as data. A
//! file that could name any path would make beamtrace read any file on the machine (e.g.
//! `/etc/passwd` parsed as geometry), so by default a referenced file must lie inside the
//! folder of the file that names it; [`PathPolicy::Anywhere`] lifts that for trusted input.

use std::path::{Component, Path, PathBuf};

/// Whether referenced files must stay inside the referencing file's folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PathPolicy {
    /// Relative paths that stay inside the folder (also after following symbolic links).
    #[default]
    InsideFolder,
    /// Any path, absolute or climbing out with `..` (the `--allow-outside-paths` switch).
    Anywhere,
}

/// A referenced path that [`PathPolicy::InsideFolder`] refuses. The messages name the
/// reference as written, never the file's contents.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error(
        "{reference:?} is an absolute path, but referenced files must lie in {folder}; \
         use a path relative to it, or pass --allow-outside-paths if you trust the file"
    )]
    Absolute { reference: String, folder: PathBuf },
    #[error(
        "{reference:?} lies outside {folder}; move the file into that folder, or pass \
         --allow-outside-paths if you trust the file"
    )]
    Outside { reference: String, folder: PathBuf },
}

/// The file `reference` names, resolved against `folder` (the folder of the file that
/// names it) and checked against `policy`: lexically first (absolute, or `..` climbing
/// above `folder`), then — when the file exists — after resolving symbolic links.
pub fn confine(folder: &Path, reference: &Path, policy: PathPolicy) -> Result<PathBuf, PathError> {
    let joined = folder.join(reference);
    if policy == PathPolicy::Anywhere {
        return Ok(joined);
    }
    let shown = || reference.display().to_string();
    if reference.has_root() || reference.is_absolute() {
        return Err(PathError::Absolute {
            reference: shown(),
            folder: folder.to_path_buf(),
        });
    }
    let outside = || PathError::Outside {
        reference: shown(),
        folder: folder.to_path_buf(),
    };
    if climbs_out(reference) {
        return Err(outside());
    }
    // A symbolic link inside the folder may still point out of it.
    if let (Ok(real), Ok(real_folder)) = (joined.canonicalize(), folder.canonicalize()) {
        if !real.starts_with(&real_folder) {
            return Err(outside());
        }
    }
    Ok(joined)
}

/// Whether a relative path's `..` components reach above its starting folder.
fn climbs_out(reference: &Path) -> bool {
    let mut depth: i64 = 0;
    for c in reference.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return true,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(folder: &Path, reference: &str) -> Result<PathBuf, PathError> {
        confine(folder, Path::new(reference), PathPolicy::InsideFolder)
    }

    #[test]
    fn relative_paths_inside_the_folder_are_kept() {
        let folder = Path::new("scenes/city");
        assert_eq!(inside(folder, "a.bin").unwrap(), folder.join("a.bin"));
        assert_eq!(
            inside(folder, "sub/../b.bin").unwrap(),
            folder.join("sub/../b.bin")
        );
        assert_eq!(inside(folder, "./c.bin").unwrap(), folder.join("./c.bin"));
    }

    #[test]
    fn absolute_and_climbing_paths_are_refused_by_default() {
        let folder = Path::new("scenes/city");
        assert!(matches!(
            inside(folder, "/etc/passwd"),
            Err(PathError::Absolute { .. })
        ));
        for climbing in ["../a.bin", "../../etc/passwd", "sub/../../a.bin"] {
            let err = inside(folder, climbing).unwrap_err();
            assert!(matches!(err, PathError::Outside { .. }), "{climbing}");
            let text = err.to_string();
            assert!(text.contains(climbing) && text.contains("--allow-outside-paths"));
        }
    }

    #[test]
    fn anywhere_allows_every_path() {
        let folder = Path::new("scenes");
        let any = |r: &str| confine(folder, Path::new(r), PathPolicy::Anywhere).unwrap();
        assert_eq!(any("../x.bin"), folder.join("../x.bin"));
        assert_eq!(any("/tmp/x.bin"), PathBuf::from("/tmp/x.bin"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_out_of_the_folder_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("scene");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(root.path().join("secret.bin"), b"x").unwrap();
        std::fs::write(folder.join("ok.bin"), b"x").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.bin"), folder.join("link.bin"))
            .unwrap();
        assert!(inside(&folder, "ok.bin").is_ok());
        assert!(matches!(
            inside(&folder, "link.bin"),
            Err(PathError::Outside { .. })
        ));
    }
}
