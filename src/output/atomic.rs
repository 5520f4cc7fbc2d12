//! Atomic file writing: temporary file in the same folder, fsync, rename.

use super::OutputError;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` through `f` so that the final name only ever holds a complete file.
///
/// The bytes go to `.<name>.tmp-<pid>` in the same folder (a rename is only atomic within
/// one file system), are flushed and fsynced, and the temporary file is then renamed over
/// `path`. On any error — from `f`, a full disk, the rename — the temporary file is removed
/// and `path` is left as it was. A missing parent folder is created.
pub fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), OutputError> {
    let Some(name) = path.file_name() else {
        return Err(OutputError::write(
            path,
            io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"),
        ));
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| OutputError::write(path, e))?;

    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);

    let guard = RemoveOnDrop(Some(tmp.clone()));
    match write_temp(&tmp, f).and_then(|()| fs::rename(&tmp, path)) {
        Ok(()) => {
            guard.disarm();
            sync_dir(&dir);
            Ok(())
        }
        Err(e) => {
            drop(guard);
            Err(OutputError::write(path, e))
        }
    }
}

/// Removes the temporary file on every way out but success — an error or a panic in the
/// caller's closure alike.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            // It may not exist (the open failed); there is nothing else to clean then.
            let _ = fs::remove_file(p);
        }
    }
}

fn write_temp(tmp: &Path, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(tmp)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    f(&mut w)?;
    // into_inner flushes; an ENOSPC that only shows up on the last buffer surfaces here.
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}

/// Makes the rename itself durable. Best effort: some file systems refuse to fsync a
/// folder, and the file's contents are already safe by then.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = (dir, File::open);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_complete_file_and_creates_parent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/out.bin");
        write_atomic(&path, |w| w.write_all(b"hello")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"hello");
        assert_eq!(names_in(&dir.path().join("a/b")), vec!["out.bin"]);
    }

    #[test]
    fn failing_closure_leaves_no_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frame.pcd");
        let err = write_atomic(&path, |w| {
            // More than the BufWriter holds, so part of it really reaches the temp file.
            w.write_all(&vec![7u8; 3 << 20])?;
            Err(io::Error::other("encoder broke half-way"))
        })
        .unwrap_err();
        assert!(!path.exists());
        assert!(
            names_in(dir.path()).is_empty(),
            "{:?}",
            names_in(dir.path())
        );
        let msg = err.to_string();
        assert!(msg.contains("frame.pcd"), "{msg}");
        assert!(msg.contains("encoder broke half-way"), "{msg}");
    }

    #[test]
    fn failure_keeps_the_previous_file_intact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frame.ply");
        fs::write(&path, b"old complete file").unwrap();
        let r = write_atomic(&path, |w| {
            w.write_all(b"new but trunc")?;
            Err(io::Error::from_raw_os_error(28))
        });
        assert_eq!(fs::read(&path).unwrap(), b"old complete file");
        assert_eq!(names_in(dir.path()), vec!["frame.ply"]);
        let msg = r.unwrap_err().to_string();
        #[cfg(unix)]
        assert!(msg.contains("disk is full"), "{msg}");
        assert!(msg.contains("no partial file"), "{msg}");
    }

    #[test]
    fn temp_file_is_named_after_target_and_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.png");
        let mut seen = Vec::new();
        write_atomic(&path, |w| {
            w.write_all(b"1")?;
            seen = names_in(dir.path());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![format!(".x.png.tmp-{}", std::process::id())]);
    }

    #[test]
    fn panicking_closure_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pcd");
        let r = std::panic::catch_unwind(|| {
            write_atomic(&path, |w| {
                w.write_all(&[1u8; 2 << 20])?;
                panic!("writer bug");
            })
        });
        assert!(r.is_err());
        assert!(
            names_in(dir.path()).is_empty(),
            "{:?}",
            names_in(dir.path())
        );
    }

    #[test]
    fn path_without_file_name_is_an_error() {
        assert!(write_atomic(Path::new("/"), |_| Ok(())).is_err());
    }
}
