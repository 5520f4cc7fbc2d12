//! What an output folder already holds of beamtrace's runs, so that a run never mixes
//! its frames with another run's: the caller refuses such a folder, or clears it — and
//! clearing removes only the files beamtrace writes, never anything else found there.

use super::shard::{INDEX_FILE, JOINED_MCAP, SHARDS_DIR};
use super::{JobError, POSES_FILE, RUN_FILE, WEATHER_FILE};
use crate::output::dataset::{is_dataset_frame_name, DATASET_FRAME_FOLDERS, DATASET_RUN_FILES};
use crate::output::{Format, KITTI_POSES_FILE, SWEEP_END_POSES_FILE, TUM_POSES_FILE};
use std::path::{Path, PathBuf};

/// The files of a run (or of shards) found in an output folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFiles {
    /// beamtrace's files: frames (`frame_000000.pcd`, `frame_000000_return2.pcd`, their
    /// pictures), `run.json`, `poses.csv`, `weather.csv`, `packets.pcap`, `packets.json`
    /// and `packets.yaml`, `index.json`, `run.mcap` and `run.partial.mcap` at the top of the
    /// folder, and the shard journals and
    /// records in its `shards/` folder. Sorted.
    pub files: Vec<PathBuf>,
    /// Some of them are shards' journals or records (`shards/`): the folder is being
    /// filled by shards, which recognise their own journal and resume.
    pub shards: bool,
    /// How many are a dataset layout's frame files (`training/velodyne/000000.bin`, …).
    pub dataset_frames: usize,
}

impl RunFiles {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// How many are frames' files (clouds, pictures, a dataset layout's frame files).
    pub fn frame_files(&self) -> usize {
        let named = self.files.iter().filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_frame_file)
        });
        named.count() + self.dataset_frames
    }

    /// Their names but the frames' (run files, shard journals), for messages.
    pub fn other_names(&self) -> Vec<String> {
        let frame = |n: &str| {
            is_frame_file(n)
                || (DATASET_FRAME_FOLDERS.iter()).any(|(_, e)| is_dataset_frame_name(n, e))
        };
        (self.files.iter())
            .filter_map(|f| f.file_name().and_then(|n| n.to_str()))
            .filter(|n| !frame(n))
            .map(str::to_string)
            .collect()
    }
}

/// The names of a run's own files at the top of its folder, besides its frames.
const RUN_FILE_NAMES: [&str; 13] = [
    RUN_FILE,
    POSES_FILE,
    SWEEP_END_POSES_FILE,
    KITTI_POSES_FILE,
    TUM_POSES_FILE,
    WEATHER_FILE,
    "packets.pcap",
    "packets.json",
    "packets.yaml",
    "packets.csv",
    INDEX_FILE,
    JOINED_MCAP,
    "run.partial.mcap",
];

/// `name` is a frame's file as beamtrace names it: `frame_` and six or more digits,
/// optionally `_return` and a layer number, then the extension of a cloud format or of
/// the picture; or the frame's objects, `frame_NNNNNN_objects.json`.
pub fn is_frame_file(name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if let Some(frame) = (ext == "json")
        .then(|| stem.strip_suffix("_objects"))
        .flatten()
    {
        return frame
            .strip_prefix("frame_")
            .is_some_and(|f| f.len() >= 6 && f.bytes().all(|b| b.is_ascii_digit()));
    }
    let known = ext == "png" || Format::ALL.iter().any(|f| f.extension() == ext);
    let Some(rest) = stem.strip_prefix("frame_") else {
        return false;
    };
    let (frame, layer) = match rest.split_once("_return") {
        Some((f, l)) => (f, Some(l)),
        None => (rest, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    known && frame.len() >= 6 && digits(frame) && layer.is_none_or(digits)
}

/// `name` is the OSI trace a run writes (`<created>_sd_…_beamtrace.osi`, see
/// `osi::trace`).
pub fn is_run_trace(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".osi") else {
        return false;
    };
    let parts: Vec<&str> = stem.split('_').collect();
    parts.len() == 6 && parts[1] == crate::osi::trace::SENSOR_DATA && parts[5] == "beamtrace"
}

/// `name` is a shard's journal or record (`shard-00000-of-00004.log`/`.json`).
fn is_shard_file(name: &str) -> bool {
    name.starts_with("shard-") && (name.ends_with(".log") || name.ends_with(".json"))
}

/// beamtrace's files in `dir` (none when it does not exist). Only plain files count;
/// sub-folders other than `shards/` are not looked into (a batch's job folders are
/// the batch's own business).
pub fn run_files_in(dir: &Path) -> Result<RunFiles, JobError> {
    let mut found = RunFiles::default();
    let names = |d: &Path| -> Result<Vec<(String, PathBuf)>, JobError> {
        let entries = match std::fs::read_dir(d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(Vec::new()),
            Err(source) => return Err(read_error(d, source)),
        };
        let mut out = Vec::new();
        for e in entries {
            let e = e.map_err(|source| read_error(d, source))?;
            if e.file_type().is_ok_and(|t| t.is_file()) {
                out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
            }
        }
        Ok(out)
    };
    for (name, path) in names(dir)? {
        let run_file = RUN_FILE_NAMES.contains(&name.as_str()) || is_run_trace(&name);
        if is_frame_file(&name) || run_file {
            found.files.push(path);
        }
    }
    for (folder, ext) in DATASET_FRAME_FOLDERS {
        for (name, path) in names(&dir.join(folder))? {
            if is_dataset_frame_name(&name, ext) {
                found.files.push(path);
                found.dataset_frames += 1;
            }
        }
    }
    for name in DATASET_RUN_FILES {
        let path = dir.join(name);
        if path.is_file() {
            found.files.push(path);
        }
    }
    for (name, path) in names(&dir.join(SHARDS_DIR))? {
        if is_shard_file(&name) {
            found.files.push(path);
            found.shards = true;
        }
    }
    found.files.sort();
    Ok(found)
}

fn read_error(dir: &Path, source: std::io::Error) -> JobError {
    JobError::ReadOut {
        path: dir.to_path_buf(),
        source,
    }
}

/// Removes `files` (what [`run_files_in`] found), and the `shards/` folder if that
/// leaves it empty. Nothing else in the folder is touched.
pub fn clear_run_files(dir: &Path, files: &RunFiles) -> Result<(), JobError> {
    for f in &files.files {
        match std::fs::remove_file(f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(JobError::ClearOut {
                    path: f.clone(),
                    source,
                })
            }
        }
    }
    // Each fails, as it should, when the folder still holds something.
    let _ = std::fs::remove_dir(dir.join(SHARDS_DIR));
    for folder in dataset_folders() {
        let _ = std::fs::remove_dir(dir.join(folder));
    }
    Ok(())
}

/// The folders the dataset layouts make, deepest first (`sequences/00/labels` before
/// `sequences/00` before `sequences`).
fn dataset_folders() -> Vec<&'static Path> {
    let frames = DATASET_FRAME_FOLDERS.iter().map(|(f, _)| Path::new(*f));
    let runs = DATASET_RUN_FILES
        .iter()
        .filter_map(|f| Path::new(f).parent());
    let mut folders: Vec<&Path> = (frames.chain(runs))
        .flat_map(Path::ancestors)
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    folders.sort_by_key(|f| (std::cmp::Reverse(f.components().count()), *f));
    folders.dedup();
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_files_are_recognised_by_beamtraces_names_only() {
        for name in [
            "frame_000000.pcd",
            "frame_000012.png",
            "frame_000003_return2.ply",
            "frame_1000000.las",
            "frame_000000.mcap",
            "frame_000000.csv",
            "frame_000007_objects.json",
        ] {
            assert!(is_frame_file(name), "{name}");
        }
        for name in [
            "frame_0.pcd",
            "frame_000000.txt",
            "frame_00000a.pcd",
            "frame_000000_return.pcd",
            "my_frame_000000.pcd",
            "frame_000000",
            "notes.pcd",
            "frame_000007_objects.pcd",
            "frame_7_objects.json",
            "frame_000007.json",
        ] {
            assert!(!is_frame_file(name), "{name}");
        }
    }
}
