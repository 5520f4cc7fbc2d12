//! Atomic file writing: temporary file in the same folder, fsync, rename.
//!
//! Every temporary file in progress is also listed process-wide, so that a signal handler
//! that ends the process at once (no destructor runs then) can remove them first:
//! [`abandon_writes_before_exit`].

use super::OutputError;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporary files being written now. A rename to the final name happens while this
/// lock is held, so a file is either renamed whole or removed by the handler, never both.
static IN_PROGRESS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn in_progress() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere while holding the lock leaves the list itself intact.
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every temporary file in progress and keeps the list locked for good, so no
/// write can start or be renamed into place afterwards. For a handler that ends the
/// process right after (SIGINT, SIGTERM): finished files stay, partial ones vanish.
/// Returns how many temporary files were removed.
pub fn abandon_writes_before_exit() -> usize {
    let list = in_progress();
    let removed = list.iter().filter(|p| fs::remove_file(p).is_ok()).count();
    // Never unlocked: the process is about to end, and nothing may commit until it does.
    std::mem::forget(list);
    removed
}

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
    let mut files = AtomicFiles::default();
    files.write(path, f)?;
    files.commit()
}

/// Files that appear together or not at all (a frame's cloud and its picture): each is
/// written to its temporary file by [`AtomicFiles::write`], and [`AtomicFiles::commit`]
/// renames them all into place at once. Dropped uncommitted, it removes its temporaries.
#[derive(Default)]
pub struct AtomicFiles {
    pending: Vec<(RemoveOnDrop, PathBuf)>,
}

impl AtomicFiles {
    /// Writes `path`'s bytes through `f` into its temporary file (see [`write_atomic`]).
    pub fn write(
        &mut self,
        path: &Path,
        f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let tmp = temp_path(path).map_err(|e| OutputError::write(path, e))?;
        let guard = RemoveOnDrop::register(tmp.clone());
        write_temp(&tmp, f).map_err(|e| OutputError::write(path, e))?;
        self.pending.push((guard, path.to_path_buf()));
        Ok(())
    }

    /// Renames every file into place under the in-progress lock, so a signal handler sees
    /// all of them finished or none. If one rename fails, the ones before it are removed
    /// again: the group stays all or nothing.
    pub fn commit(self) -> Result<(), OutputError> {
        self.commit_then(|| {})
    }

    /// [`commit`](Self::commit), then `on_commit` while the in-progress lock is still
    /// held: a signal handler that reads what `on_commit` records (a count of finished
    /// frames) never sees the files without the record or the record without the files.
    pub fn commit_then(self, on_commit: impl FnOnce()) -> Result<(), OutputError> {
        let mut list = in_progress();
        let mut done: Vec<&Path> = Vec::new();
        for (tmp, path) in &self.pending {
            if let Err(e) = fs::rename(&tmp.0, path) {
                for p in done {
                    let _ = fs::remove_file(p);
                }
                return Err(OutputError::write(path, e));
            }
            list.retain(|p| p != &tmp.0);
            done.push(path);
        }
        on_commit();
        drop(list);
        // Once per folder: a frame's files share one.
        let mut folders: Vec<&Path> = self
            .pending
            .iter()
            .map(|(_, path)| path.parent().unwrap_or(Path::new(".")))
            .collect();
        folders.dedup();
        for folder in folders {
            sync_dir(folder);
        }
        Ok(())
    }
}

/// `.<name>.tmp-<pid>` next to `path`, its folder created if missing.
pub(super) fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let Some(name) = path.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        ));
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    Ok(dir.join(tmp_name))
}

/// A temporary file listed in [`IN_PROGRESS`]; removed (and unlisted) on every way out
/// but a committed rename — an error or a panic in the caller's closure alike.
struct RemoveOnDrop(PathBuf);

impl RemoveOnDrop {
    fn register(tmp: PathBuf) -> Self {
        in_progress().push(tmp.clone());
        RemoveOnDrop(tmp)
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let mut list = in_progress();
        if let Some(i) = list.iter().position(|p| p == &self.0) {
            list.swap_remove(i);
            // It may not exist (the open failed); there is nothing else to clean then.
            let _ = fs::remove_file(&self.0);
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
pub(super) fn sync_dir(dir: &Path) {
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
    fn a_group_appears_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("f.pcd"), dir.path().join("f.png"));
        let mut files = AtomicFiles::default();
        files.write(&a, |w| w.write_all(b"cloud")).unwrap();
        files.write(&b, |w| w.write_all(b"picture")).unwrap();
        // Written but not committed: only the two hidden temporaries exist.
        assert!(names_in(dir.path()).iter().all(|n| n.starts_with('.')));
        files.commit().unwrap();
        assert_eq!(names_in(dir.path()), vec!["f.pcd", "f.png"]);
        assert_eq!(fs::read(&b).unwrap(), b"picture");

        let mut dropped = AtomicFiles::default();
        dropped
            .write(&dir.path().join("g.pcd"), |w| w.write_all(b"x"))
            .unwrap();
        drop(dropped);
        assert_eq!(names_in(dir.path()), vec!["f.pcd", "f.png"]);
    }

    #[test]
    fn path_without_file_name_is_an_error() {
        assert!(write_atomic(Path::new("/"), |_| Ok(())).is_err());
    }
}
