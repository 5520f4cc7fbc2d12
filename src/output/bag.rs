//! A run's MCAP bag: every frame's messages in one file, `run.mcap`, written as the run
//! goes and put in place only when it is whole.
//!
//! The bag grows in a hidden temporary file beside its final name. [`McapBag::finish`]
//! writes its summary and renames it into place. A run that stops early — a signal
//! ([`finish_bags_before_exit`]) or an error ([`McapBag::finish_partial`]) — gets a
//! bag of the frames appended so far, complete and indexed (any MCAP reader opens it)
//! but named `<name>.partial.mcap` and holding a `beamtrace` metadata record that says
//! `complete: false`, how many frames it holds and why it stopped: never mistaken for
//! the whole run. A bag dropped without either is removed.

use super::atomic::{sync_dir, temp_path};
use super::mcap::{file_writer, mcap_io, write_messages, FileWriter, FrameMessage};
use super::OutputError;
use ::mcap::records::Metadata;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// The name of the bag a run writes in its output folder.
pub const RUN_BAG: &str = "run.mcap";

/// A bag being written. Frames are appended whole, in order.
pub struct McapBag {
    state: Arc<Mutex<BagState>>,
    path: PathBuf,
}

struct BagState {
    /// `None` once finished (whole, partial or abandoned).
    writer: Option<FileWriter<BufWriter<File>>>,
    tmp: PathBuf,
    path: PathBuf,
    frames: u64,
}

/// Every bag being written, for a signal handler that ends the process at once.
static OPEN: Mutex<Vec<Weak<Mutex<BagState>>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves the state itself usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `run.mcap` → `run.partial.mcap`: where a bag of part of a run goes.
pub fn partial_bag_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{stem}.partial.mcap"))
}

impl McapBag {
    /// Starts the bag that [`finish`](Self::finish) puts at `path`.
    pub fn create(path: &Path) -> Result<Self, OutputError> {
        let io = |e| OutputError::write(path, e);
        let tmp = temp_path(path).map_err(io)?;
        let file = File::create(&tmp).map_err(io)?;
        let writer = file_writer(BufWriter::with_capacity(1 << 20, file)).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io(mcap_io(e))
        })?;
        let state = Arc::new(Mutex::new(BagState {
            writer: Some(writer),
            tmp,
            path: path.to_path_buf(),
            frames: 0,
        }));
        let mut open = lock(&OPEN);
        open.retain(|w| w.strong_count() > 0);
        open.push(Arc::downgrade(&state));
        Ok(McapBag {
            state,
            path: path.to_path_buf(),
        })
    }

    /// Where the whole bag goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one frame's messages. A caller that commits other files of the frame
    /// appends inside `AtomicFiles::commit_then`, so a signal sees the frame's files and
    /// its messages together or neither.
    pub fn append(&self, messages: &[FrameMessage]) -> Result<(), OutputError> {
        let mut s = lock(&self.state);
        let Some(writer) = s.writer.as_mut() else {
            return Err(OutputError::write(
                &self.path,
                io::Error::other("the bag was already closed (the run was interrupted)"),
            ));
        };
        write_messages(writer, messages).map_err(|e| OutputError::write(&self.path, mcap_io(e)))?;
        s.frames += 1;
        Ok(())
    }

    /// Appends messages that belong to no frame (a rig's `/tf_static` before the first
    /// frame, its IMU's samples between frames).
    pub fn append_static(&self, messages: &[FrameMessage]) -> Result<(), OutputError> {
        self.append(messages)?;
        lock(&self.state).frames -= 1;
        Ok(())
    }

    /// Writes the summary and puts the whole bag in place; a partial bag of the same
    /// name left by an earlier, interrupted run is removed (it is of an older run).
    pub fn finish(self) -> Result<PathBuf, OutputError> {
        let mut s = lock(&self.state);
        s.close(None, &self.path)?;
        let _ = fs::remove_file(partial_bag_path(&self.path));
        Ok(self.path.clone())
    }

    /// Puts the frames appended so far in place as a partial bag (see the module);
    /// `why` says why the run stopped. `None` when no frame was appended (no file).
    pub fn finish_partial(self, why: &str) -> Result<Option<PathBuf>, OutputError> {
        lock(&self.state).finish_partial(why)
    }
}

impl BagState {
    /// Finishes the writer into the temporary file and renames it to `to`; with a
    /// `note`, a metadata record first. On any error the temporary file is removed.
    fn close(&mut self, note: Option<Metadata>, to: &Path) -> Result<(), OutputError> {
        let Some(mut writer) = self.writer.take() else {
            return Err(OutputError::write(
                to,
                io::Error::other("the bag was already closed (the run was interrupted)"),
            ));
        };
        let result = (|| {
            if let Some(note) = &note {
                writer.write_metadata(note).map_err(mcap_io)?;
            }
            writer.finish().map_err(mcap_io)?;
            let file = writer.into_inner().into_inner().into_inner();
            file.map_err(|e| e.into_error())?.sync_all()?;
            fs::rename(&self.tmp, to)
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&self.tmp);
            return Err(OutputError::write(to, e));
        }
        sync_dir(to.parent().unwrap_or(Path::new(".")));
        Ok(())
    }

    fn finish_partial(&mut self, why: &str) -> Result<Option<PathBuf>, OutputError> {
        if self.writer.is_none() {
            return Ok(None);
        }
        if self.frames == 0 {
            self.abandon();
            return Ok(None);
        }
        let note = Metadata {
            name: "beamtrace".into(),
            metadata: BTreeMap::from([
                ("complete".to_string(), "false".to_string()),
                ("frames".to_string(), self.frames.to_string()),
                ("stopped".to_string(), why.to_string()),
            ]),
        };
        let to = partial_bag_path(&self.path);
        self.close(Some(note), &to)?;
        Ok(Some(to))
    }

    fn abandon(&mut self) {
        if let Some(writer) = self.writer.take() {
            // Dropping the writer finishes it into the temporary file, removed next.
            drop(writer);
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

impl Drop for McapBag {
    fn drop(&mut self) {
        lock(&self.state).abandon();
    }
}

/// Finishes every bag being written as a partial bag (`why`: the signal), for a handler
/// that ends the process right after; call it after `abandon_writes_before_exit`, which
/// stops further frames from being committed. Returns the partial bags written.
pub fn finish_bags_before_exit(why: &str) -> Vec<PathBuf> {
    let open: Vec<_> = lock(&OPEN).iter().filter_map(Weak::upgrade).collect();
    open.iter()
        .filter_map(|bag| lock(bag).finish_partial(why).ok().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{frame_messages, CloudMeta, FieldSet, PointCloud, RosNames};

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn one_frame() -> Vec<FrameMessage> {
        let fields = FieldSet::default();
        let cloud = PointCloud::default();
        frame_messages(
            &[(0, &cloud, CloudMeta::plain(&fields))],
            &RosNames::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_bag_appears_only_when_finished_and_a_dropped_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RUN_BAG);
        let bag = McapBag::create(&path).unwrap();
        bag.append(&one_frame()).unwrap();
        let hidden = names_in(dir.path());
        assert!(
            hidden.len() == 1 && hidden[0].starts_with(".run.mcap.tmp-"),
            "{hidden:?}"
        );
        drop(bag);
        assert!(names_in(dir.path()).is_empty());

        // A stale partial bag of an earlier run goes when a whole one is in place.
        fs::write(dir.path().join("run.partial.mcap"), b"old").unwrap();
        let bag = McapBag::create(&path).unwrap();
        bag.append(&one_frame()).unwrap();
        assert_eq!(bag.finish().unwrap(), path);
        assert_eq!(names_in(dir.path()), ["run.mcap"]);
        // Magic at both ends: the summary and footer were written.
        let bytes = fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"\x89MCAP0\r\n") && bytes.ends_with(b"\x89MCAP0\r\n"));
    }

    #[test]
    fn a_partial_bag_of_no_frames_is_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let bag = McapBag::create(&dir.path().join(RUN_BAG)).unwrap();
        assert_eq!(bag.finish_partial("stopped").unwrap(), None);
        assert!(names_in(dir.path()).is_empty());
        let bag = McapBag::create(&dir.path().join(RUN_BAG)).unwrap();
        bag.append(&one_frame()).unwrap();
        let partial = bag.finish_partial("stopped").unwrap().unwrap();
        assert_eq!(partial, dir.path().join("run.partial.mcap"));
        assert_eq!(names_in(dir.path()), ["run.partial.mcap"]);
    }
}
