//! Splitting work into shards that any scheduler can run, and putting them together.
//!
//! The work is a list of jobs, each a number of frames; its *units* are the (job, frame)
//! pairs in job order, then frame order. Shard `i/n` takes the contiguous units
//! `[U·i/n, U·(i+1)/n)`. A frame is simulated from its own index alone (poses from its
//! time, noise keyed by seed and frame number), so its bytes do not depend on which
//! shard made it or on what ran before it in the same process.
//!
//! A shard keeps a journal, `shards/shard-<i>-of-<n>.log` under the output folder: a
//! header line naming the inputs' digest, then one line per frame once all of that
//! frame's files are in place. A killed shard started again with the same inputs reads
//! it and simulates only the frames it lacks; with other inputs it refuses. At the end it
//! writes `shards/shard-<i>-of-<n>.json`, its record. [`merge`] checks that the records
//! cover every unit exactly once with the same inputs and writes what a single process
//! would have: each job's `poses.csv` (and `weather.csv` where its frames had weather,
//! from the journals' notes), and `index.json` listing every file with its
//! size and SHA-256 — nothing in either says how the work was split.

use crate::output::dataset::{write_dataset_run_files, DatasetOptions};
use crate::output::{
    frame_layer_file_name, merge_mcap, write_atomic, write_poses, write_sweep_end_poses,
    write_weather, Format, OutputError, PoseRow, Viewpoint, WeatherRow, RUN_BAG,
};
use crate::weather::Weather;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead as _, Read as _, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The folder of shard journals and records, under the output folder.
pub const SHARDS_DIR: &str = "shards";
/// The index `merge` writes into the output folder.
pub const INDEX_FILE: &str = "index.json";
/// The one MCAP file `merge` joins a job's per-frame MCAP files into, in its folder:
/// the bag a run made in one process writes, with the same bytes.
pub const JOINED_MCAP: &str = RUN_BAG;
/// Shards a split may have at most (five digits in the file names).
pub const MAX_SHARDS: u32 = 99_999;

/// Shard `index` of `count` (0-based, as Slurm array ids, Kubernetes completion
/// indexes and Ray task lists count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The whole work in one shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// The units of `total` this shard takes: contiguous, and together the shards of a
    /// count take each unit exactly once.
    pub fn units(self, total: u64) -> Range<u64> {
        let at = |i: u32| (u128::from(total) * u128::from(i) / u128::from(self.count)) as u64;
        at(self.index)..at(self.index + 1)
    }

    fn stem(self) -> String {
        format!("shard-{:05}-of-{:05}", self.index, self.count)
    }

    /// The shard's journal, relative to the output folder.
    pub fn journal_path(self) -> PathBuf {
        Path::new(SHARDS_DIR).join(format!("{}.log", self.stem()))
    }

    /// The shard's record, relative to the output folder.
    pub fn record_path(self) -> PathBuf {
        Path::new(SHARDS_DIR).join(format!("{}.json", self.stem()))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| ShardError::BadShard {
            given: s.to_string(),
            why: why.to_string(),
        };
        let (i, n) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| bad("it is not i/n"))?;
        let index: u32 = i
            .trim()
            .parse()
            .map_err(|_| bad("i is not a whole number"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| bad("n is not a whole number"))?;
        if count == 0 || count > MAX_SHARDS {
            return Err(bad(&format!("n must be 1 to {MAX_SHARDS}")));
        }
        if index >= count {
            return Err(bad("i counts from 0 and must be less than n"));
        }
        Ok(Shard { index, count })
    }
}

/// One job of the work: where its files go (relative to the output folder; empty for
/// the folder itself) and how many frames it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedJob {
    pub name: String,
    pub dir: PathBuf,
    pub frames: u64,
    /// Frames per second of the job's sensor: the times of its poses.
    pub frame_rate: f32,
    /// The job writes a dataset layout (`run --dataset`): `merge` writes its run files.
    #[serde(default)]
    pub dataset: Option<DatasetOptions>,
}

/// The frames of job `job` (an index into the work's jobs) that a shard runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSlice {
    pub job: usize,
    pub frames: Range<u64>,
}

/// The non-empty slices of `jobs` that `shard` runs, in work order.
pub fn slices(jobs: &[PlannedJob], shard: Shard) -> Vec<JobSlice> {
    let total = jobs.iter().map(|j| j.frames).sum();
    let units = shard.units(total);
    let mut first = 0;
    let mut out = Vec::new();
    for (job, j) in jobs.iter().enumerate() {
        let (lo, hi) = (units.start.max(first), units.end.min(first + j.frames));
        if lo < hi {
            out.push(JobSlice {
                job,
                frames: lo - first..hi - first,
            });
        }
        first += j.frames;
    }
    out
}

/// The SHA-256 of everything that decides a run's bytes: options and input files.
/// Shards with other digests do not belong together.
#[derive(Clone, Default)]
pub struct InputsDigest(Sha256);

impl InputsDigest {
    /// Adds a labelled value (the label keeps `a`+`bc` apart from `ab`+`c`).
    pub fn add(&mut self, label: &str, bytes: &[u8]) {
        for part in [label.as_bytes(), bytes] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
    }

    /// Adds the contents of the file at `path`.
    pub fn add_file(&mut self, label: &str, path: &Path) -> Result<(), ShardError> {
        let bytes = std::fs::read(path).map_err(|source| ShardError::Io {
            path: path.to_path_buf(),
            what: "reading an input to digest it",
            source,
        })?;
        self.add(label, &bytes);
        Ok(())
    }

    /// Adds `value`'s `Debug` text, streamed (a scene's is large). Only for types whose
    /// `Debug` is deterministic: no hash maps, floats printed exactly (Rust's are).
    pub fn add_debug(&mut self, label: &str, value: &dyn fmt::Debug) {
        struct Feed<'a>(&'a mut Sha256);
        impl fmt::Write for Feed<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0.update(s.as_bytes());
                Ok(())
            }
        }
        self.add(label, b"debug");
        // Writing into a hasher cannot fail.
        let _ = fmt::write(&mut Feed(&mut self.0), format_args!("{value:?}"));
    }

    pub fn hex(&self) -> String {
        hex(&self.0.clone().finalize())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One finished frame, as the journal and the record keep it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameEntry {
    pub job: usize,
    pub frame: u64,
    /// The frame's files, relative to the output folder, with `/` separators.
    pub files: Vec<String>,
    /// Each file's size and SHA-256 as the shard wrote it, in `files`' order: what
    /// `merge` holds the files on disk to.
    #[serde(default)]
    pub digests: Vec<(u64, String)>,
    /// The sensor's pose in the world at the frame's start: tx ty tz, qw qx qy qz.
    pub translation: [f32; 3],
    pub rotation: [f32; 4],
    /// Its pose when the frame's sweep ended; absent in journals of shards that did
    /// not record it (then `merge` writes no sweep-end poses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_end: Option<([f32; 3], [f32; 4])>,
    /// The frame's weather (the `--weather` form) and extinction (1/m); absent in clear
    /// air, so that clear runs' journals read as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weather: Option<(String, f32)>,
}

/// The journal's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct JournalHeader {
    inputs_digest: String,
    shard: Shard,
    units: u64,
}

/// What a finished shard writes: enough for `merge` to check it and to write the index
/// and the poses without running anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub beamtrace_version: String,
    pub inputs_digest: String,
    pub shard: Shard,
    /// Units of the whole work, and this shard's.
    pub units: u64,
    pub range: [u64; 2],
    /// Every job of the work (so any one record describes the whole split).
    pub jobs: Vec<PlannedJob>,
    /// The frames this shard finished, in work order.
    pub frames: Vec<FrameEntry>,
    /// Frames found finished in the journal of an earlier, interrupted start.
    pub resumed_frames: u64,
    pub device: Option<String>,
    pub seconds: f64,
    /// Of `seconds`, those spent writing files.
    pub write_seconds: f64,
}

/// A shard being run: its journal open for appending.
pub struct ShardRun {
    out: PathBuf,
    header: JournalHeader,
    jobs: Vec<PlannedJob>,
    done: Vec<FrameEntry>,
    resumed: u64,
    journal: std::fs::File,
    started: std::time::Instant,
}

impl ShardRun {
    /// Opens shard `shard` of `jobs` in `out`: reads the journal an earlier start left
    /// (refusing one of other inputs) and keeps the frames whose files are all still
    /// there as done.
    pub fn begin(
        out: &Path,
        shard: Shard,
        inputs_digest: String,
        jobs: Vec<PlannedJob>,
    ) -> Result<ShardRun, ShardError> {
        let header = JournalHeader {
            inputs_digest,
            shard,
            units: jobs.iter().map(|j| j.frames).sum(),
        };
        let path = out.join(shard.journal_path());
        let io = |what| {
            move |source| ShardError::Io {
                path: out.join(shard.journal_path()),
                what,
                source,
            }
        };
        std::fs::create_dir_all(out.join(SHARDS_DIR)).map_err(io("creating the folder"))?;
        let earlier = read_journal(&path)?;
        let done: Vec<FrameEntry> = match earlier {
            Some((h, _)) if h != header => {
                return Err(ShardError::OtherInputs {
                    journal: path,
                    found: h.inputs_digest,
                    now: header.inputs_digest,
                })
            }
            Some((_, entries)) => entries
                .into_iter()
                .filter(|e| sizes_as_written(out, e))
                .collect(),
            None => Vec::new(),
        };
        // Rewritten whole (atomically: a kill now keeps the old one): the header, then
        // the frames that are still complete; appended to from here on.
        let mut text = json_line(&header)?;
        for e in &done {
            text.push_str(&json_line(e)?);
        }
        write_atomic(&path, |w| w.write_all(text.as_bytes()))?;
        let journal = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io("opening"))?;
        Ok(ShardRun {
            out: out.to_path_buf(),
            resumed: done.len() as u64,
            header,
            jobs,
            done,
            journal,
            started: std::time::Instant::now(),
        })
    }

    /// The parts of the jobs this shard runs.
    pub fn slices(&self) -> Vec<JobSlice> {
        slices(&self.jobs, self.header.shard)
    }

    pub fn jobs(&self) -> &[PlannedJob] {
        &self.jobs
    }

    /// The frames of `job` finished before this start.
    pub fn done_frames(&self, job: usize) -> std::collections::BTreeSet<u64> {
        self.done
            .iter()
            .filter(|e| e.job == job)
            .map(|e| e.frame)
            .collect()
    }

    /// Frames found finished when the shard began.
    pub fn resumed_frames(&self) -> u64 {
        self.resumed
    }

    /// Notes a frame whose files are all in place (and synced: the caller's atomic
    /// writes), so that a restart does not make it again.
    /// With the frame's poses at its sweep's start and end, and its weather
    /// (`FrameDone`).
    pub fn frame_done(
        &mut self,
        job: usize,
        frame: u64,
        files: &[PathBuf],
        (pose, sweep_end, weather): (Viewpoint, Viewpoint, Option<(Weather, f32)>),
    ) -> Result<(), ShardError> {
        let digests = files
            .iter()
            .map(|f| file_digest(f))
            .collect::<Result<Vec<_>, _>>()?;
        let files = files
            .iter()
            .map(|f| relative(&self.out, f))
            .collect::<Result<Vec<_>, _>>()?;
        let entry = FrameEntry {
            job,
            frame,
            files,
            digests,
            translation: pose.translation,
            rotation: pose.rotation,
            sweep_end: Some((sweep_end.translation, sweep_end.rotation)),
            weather: weather.map(|(w, alpha)| (w.to_string(), alpha)),
        };
        let line = json_line(&entry)?;
        self.journal
            .write_all(line.as_bytes())
            .and_then(|()| self.journal.sync_data())
            .map_err(|source| ShardError::Io {
                path: self.out.join(self.header.shard.journal_path()),
                what: "appending to",
                source,
            })?;
        self.done.push(entry);
        Ok(())
    }

    /// Writes the shard's record and returns it. Every frame of the shard's slices must
    /// be done.
    /// `write_seconds`: of the shard's time, how much went to writing files.
    pub fn finish(
        mut self,
        device: Option<String>,
        write_seconds: f64,
    ) -> Result<ShardRecord, ShardError> {
        let shard = self.header.shard;
        let wanted: usize = self
            .slices()
            .iter()
            .map(|s| (s.frames.end - s.frames.start) as usize)
            .sum();
        if self.done.len() != wanted {
            return Err(ShardError::Unfinished {
                shard,
                done: self.done.len(),
                wanted,
            });
        }
        self.done.sort_by_key(|e| (e.job, e.frame));
        let units = shard.units(self.header.units);
        let record = ShardRecord {
            beamtrace_version: env!("CARGO_PKG_VERSION").to_string(),
            inputs_digest: self.header.inputs_digest.clone(),
            shard,
            units: self.header.units,
            range: [units.start, units.end],
            jobs: self.jobs,
            frames: self.done,
            resumed_frames: self.resumed,
            device,
            seconds: self.started.elapsed().as_secs_f64(),
            write_seconds,
        };
        let json = serde_json::to_vec_pretty(&record).map_err(ShardError::Json)?;
        write_atomic(&self.out.join(shard.record_path()), |w| w.write_all(&json))?;
        Ok(record)
    }
}

/// Whether each of a journal entry's files is still there at the size it was written
/// (a frame cut short by a kill or a full disk is made again; `merge` checks digests).
fn sizes_as_written(out: &Path, e: &FrameEntry) -> bool {
    e.digests.len() == e.files.len()
        && (e.files.iter().zip(&e.digests)).all(|(f, d)| {
            std::fs::metadata(out.join(f)).is_ok_and(|m| m.is_file() && m.len() == d.0)
        })
}

fn json_line<T: Serialize>(v: &T) -> Result<String, ShardError> {
    let mut s = serde_json::to_string(v).map_err(ShardError::Json)?;
    s.push('\n');
    Ok(s)
}

/// `file` relative to `out`, with `/` separators (the same on every machine).
fn relative(out: &Path, file: &Path) -> Result<String, ShardError> {
    let rel = file
        .strip_prefix(out)
        .map_err(|_| ShardError::OutsideOut(file.to_path_buf()))?;
    let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
    Ok(parts.join("/"))
}

/// The journal at `path`, if there is one. A last line cut short (the process was
/// killed while appending) is dropped; a bad line anywhere else is an error.
fn read_journal(path: &Path) -> Result<Option<(JournalHeader, Vec<FrameEntry>)>, ShardError> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ShardError::Io {
                path: path.to_path_buf(),
                what: "reading",
                source,
            })
        }
    };
    let lines: Vec<String> = std::io::BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|source| ShardError::Io {
            path: path.to_path_buf(),
            what: "reading",
            source,
        })?;
    let bad = |line: usize| ShardError::BadJournal {
        path: path.to_path_buf(),
        line: line + 1,
    };
    let Some(first) = lines.first() else {
        return Ok(None);
    };
    let header: JournalHeader = serde_json::from_str(first).map_err(|_| bad(0))?;
    let mut entries = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(1) {
        match serde_json::from_str(line) {
            Ok(e) => entries.push(e),
            Err(_) if i + 1 == lines.len() => break,
            Err(_) => return Err(bad(i)),
        }
    }
    Ok(Some((header, entries)))
}

/// What [`merge`] wrote.
#[derive(Debug, Clone)]
pub struct MergeSummary {
    pub shards: u32,
    pub jobs: usize,
    pub frames: u64,
    pub files: usize,
    pub bytes: u64,
    pub written: Vec<PathBuf>,
    /// The folder held a run made in one process, not shards (see [`merge`]).
    pub one_process: bool,
}

/// Checks that the shard records in `out` cover all the work exactly once with the same
/// inputs, that every file they list is there, and writes each job's `poses.csv` and the
/// folder's `index.json` (and joins a job's MCAP frames into its bag).
///
/// A folder with no `shards/` but a `run.json` holds a run made in one process: one
/// written with `--format mcap --split-files` gets its frame files joined into its bag,
/// [`JOINED_MCAP`]; any other is complete as it is, and the error says so.
pub fn merge(out: &Path) -> Result<MergeSummary, ShardError> {
    if !out.join(SHARDS_DIR).exists() && out.join(super::RUN_FILE).is_file() {
        return join_one_process_run(out);
    }
    let records = read_records(out)?;
    check_cover(&records)?;
    let first = &records[0].1;
    let mut frames: BTreeMap<(usize, u64), &FrameEntry> = BTreeMap::new();
    for (path, r) in &records {
        if r.jobs != first.jobs {
            return Err(ShardError::OtherWork {
                a: records[0].0.clone(),
                b: path.clone(),
            });
        }
        for e in &r.frames {
            frames.insert((e.job, e.frame), e);
        }
    }
    let mut summary = MergeSummary {
        shards: first.shard.count,
        jobs: first.jobs.len(),
        frames: frames.len() as u64,
        files: 0,
        bytes: 0,
        written: Vec::new(),
        one_process: false,
    };
    let mut jobs_json = Vec::new();
    for (job, planned) in first.jobs.iter().enumerate() {
        let entries: Vec<&FrameEntry> = (0..planned.frames)
            .map(|f| {
                frames
                    .get(&(job, f))
                    .copied()
                    .ok_or_else(|| ShardError::MissingFrame {
                        job: planned.name.clone(),
                        frame: f,
                    })
            })
            .collect::<Result<_, _>>()?;
        let mut job = job_index(out, planned, &entries, &mut summary)?;
        if let Some(joined) = join_mcap(out, planned, &entries)? {
            job["joined_mcap"] = joined;
            summary
                .written
                .push(out.join(&planned.dir).join(JOINED_MCAP));
        }
        if let Some((joined, path)) = join_osi(out, planned, &entries)? {
            job["joined_osi"] = joined;
            summary.written.push(path);
        }
        jobs_json.push(job);
        let poses = out.join(&planned.dir).join(super::POSES_FILE);
        write_poses(&poses, &pose_rows(planned, &entries))?;
        summary.written.push(poses);
        let ends = sweep_end_rows(planned, &entries);
        if let Some(rows) = &ends {
            let written = write_sweep_end_poses(&out.join(&planned.dir), rows)?;
            summary.written.extend(written);
        }
        if let Some(dataset) = &planned.dataset {
            summary
                .written
                .extend(dataset_run_files(out, planned, dataset, ends)?);
        }
        if entries.iter().any(|e| e.weather.is_some()) {
            let path = out.join(&planned.dir).join(super::WEATHER_FILE);
            write_weather(&path, &weather_rows(planned, &entries))?;
            summary.written.push(path);
        }
    }
    let index = serde_json::json!({
        "beamtrace_version": env!("CARGO_PKG_VERSION"),
        "inputs_digest": first.inputs_digest,
        "frames": summary.frames,
        "jobs": jobs_json,
    });
    let json = serde_json::to_vec_pretty(&index).map_err(ShardError::Json)?;
    let path = out.join(INDEX_FILE);
    write_atomic(&path, |w| w.write_all(&json))?;
    summary.written.push(path);
    Ok(summary)
}

/// A job's entry of the index: its files with sizes and digests, checked on disk.
fn job_index(
    out: &Path,
    planned: &PlannedJob,
    entries: &[&FrameEntry],
    summary: &mut MergeSummary,
) -> Result<serde_json::Value, ShardError> {
    let mut files = Vec::new();
    for e in entries {
        check_entry(planned, e)?;
        let bad = |why: String| ShardError::BadEntry {
            job: planned.name.clone(),
            frame: e.frame,
            why,
        };
        for (f, written) in e.files.iter().zip(&e.digests) {
            if let Some(link) = first_link(out, f) {
                return Err(bad(format!(
                    "its file `{f}` passes through the link `{link}`, which may lead out \
                     of the output folder: merge indexes only files in it"
                )));
            }
            let (bytes, sha256) = file_digest(&out.join(f))?;
            if (bytes, &sha256) != (written.0, &written.1) {
                return Err(ShardError::ChangedFile {
                    path: out.join(f),
                    job: planned.name.clone(),
                    frame: e.frame,
                    written: written.0,
                    now: bytes,
                });
            }
            super::readback::check_frame_file(&out.join(f)).map_err(|why| {
                bad(format!(
                    "its file `{f}` has the bytes it wrote, but they do not read back: {why}"
                ))
            })?;
            summary.files += 1;
            summary.bytes += bytes;
            files.push(serde_json::json!({ "path": f, "bytes": bytes, "sha256": sha256 }));
        }
    }
    Ok(serde_json::json!({
        "name": planned.name,
        "dir": relative_dir(&planned.dir),
        "frames": planned.frames,
        "frame_rate_hz": planned.frame_rate,
        "files": files,
    }))
}

/// The first part of the relative path `f` under `out` that is a symbolic link
/// (`a`, `a/b`, …), if any: a record's path is confined to the folder by its words
/// (`check_entry`) and by this, since a link inside may point anywhere.
fn first_link(out: &Path, f: &str) -> Option<String> {
    let mut at = out.to_path_buf();
    for part in Path::new(f).components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(relative_dir(at.strip_prefix(out).unwrap_or(&at)));
        }
    }
    None
}

/// What a record says of a frame before its files are opened: one digest per file,
/// every path a plain relative path inside the job's folder (no `..`, no root), a
/// finite pose.
fn check_entry(planned: &PlannedJob, e: &FrameEntry) -> Result<(), ShardError> {
    let bad = |why: String| ShardError::BadEntry {
        job: planned.name.clone(),
        frame: e.frame,
        why,
    };
    if e.digests.len() != e.files.len() {
        return Err(bad(format!(
            "{} files but {} sizes and digests (a record of an older beamtrace, or edited)",
            e.files.len(),
            e.digests.len()
        )));
    }
    let dir = relative_dir(&planned.dir);
    let plain_dir = (planned.dir.components()).all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    if !plain_dir {
        return Err(bad(format!(
            "the job's folder `{}` is not a folder inside the output folder",
            crate::config::shorten(&dir)
        )));
    }
    for f in &e.files {
        let path = Path::new(f);
        let plain = path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        let inside = dir.is_empty() || f.starts_with(&format!("{dir}/"));
        if !plain || !inside {
            return Err(bad(format!(
                "its file `{}` is not a path inside the job's folder `{dir}`",
                crate::config::shorten(f)
            )));
        }
    }
    let pose = e.translation.iter().chain(&e.rotation);
    if !pose.clone().all(|v| v.is_finite()) {
        return Err(bad("its pose is not finite".into()));
    }
    Ok(())
}

/// A job's per-frame MCAP files joined into one, in frame order (what Foxglove and
/// `ros2 bag` open as one recording), and its index entry; `None` when it has none.
fn join_mcap(
    out: &Path,
    planned: &PlannedJob,
    entries: &[&FrameEntry],
) -> Result<Option<serde_json::Value>, ShardError> {
    let inputs: Vec<PathBuf> = entries
        .iter()
        .flat_map(|e| &e.files)
        .filter(|f| f.ends_with(".mcap"))
        .map(|f| out.join(f))
        .collect();
    if inputs.is_empty() {
        return Ok(None);
    }
    let path = out.join(&planned.dir).join(JOINED_MCAP);
    merge_mcap(&inputs, &path)?;
    let (bytes, sha256) = file_digest(&path)?;
    let rel = relative(out, &path)?;
    Ok(Some(
        serde_json::json!({ "path": rel, "bytes": bytes, "sha256": sha256 }),
    ))
}

/// A job's per-frame OSI traces (`--format osi`: one SensorData each) joined into the
/// job's trace, named by OSI's convention, and its index entry; `None` when it has none.
fn join_osi(
    out: &Path,
    planned: &PlannedJob,
    entries: &[&FrameEntry],
) -> Result<Option<(serde_json::Value, PathBuf)>, ShardError> {
    let inputs: Vec<PathBuf> = (entries.iter())
        .flat_map(|e| &e.files)
        .filter(|f| f.ends_with(".osi"))
        .map(|f| out.join(f))
        .collect();
    if inputs.is_empty() {
        return Ok(None);
    }
    let dir = out.join(&planned.dir);
    let path = super::files::join_osi_files(&inputs, &dir).map_err(|e| ShardError::Io {
        path: dir.clone(),
        what: "joining the OSI frames into a trace in",
        source: std::io::Error::other(e.to_string()),
    })?;
    let (bytes, sha256) = file_digest(&path)?;
    let rel = relative(out, &path)?;
    let entry = serde_json::json!({ "path": rel, "bytes": bytes, "sha256": sha256 });
    Ok(Some((entry, path)))
}

/// `merge` of a one-process run (see [`merge`]).
fn join_one_process_run(out: &Path) -> Result<MergeSummary, ShardError> {
    let path = out.join(super::RUN_FILE);
    let text = std::fs::read(&path).map_err(|source| ShardError::Io {
        path: path.clone(),
        what: "reading",
        source,
    })?;
    let run: serde_json::Value =
        serde_json::from_slice(&text).map_err(|source| ShardError::BadRecord {
            path: path.clone(),
            source,
        })?;
    let frames = run["frames"].as_u64().unwrap_or(0);
    let format = run["format"].as_str().unwrap_or("?");
    let nothing = |why: String| ShardError::NothingToMerge {
        out: out.to_path_buf(),
        why,
    };
    if format != Format::Mcap.name() {
        return Err(nothing(format!(
            "it holds a run made in one process ({frames} frame(s) of --format {format}), \
             complete as it is"
        )));
    }
    if let Some(bag) = run["mcap"]["bag"].as_str() {
        return Err(nothing(format!(
            "it holds a run made in one process whose {frames} frame(s) are already one \
             bag, {}",
            out.join(bag).display()
        )));
    }
    let mut inputs = Vec::new();
    for frame in 0..frames {
        let first = out.join(frame_layer_file_name(frame, 0, Format::Mcap));
        if !first.is_file() {
            return Err(ShardError::MissingFrameFile(first));
        }
        inputs.push(first);
        // The other returns of an organized layout with a file per return.
        for layer in 1.. {
            let p = out.join(frame_layer_file_name(frame, layer, Format::Mcap));
            if !p.is_file() {
                break;
            }
            inputs.push(p);
        }
    }
    let bytes = inputs
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    let bag = out.join(JOINED_MCAP);
    merge_mcap(&inputs, &bag)?;
    Ok(MergeSummary {
        shards: 1,
        jobs: 1,
        frames,
        files: inputs.len(),
        bytes,
        written: vec![bag],
        one_process: true,
    })
}

fn relative_dir(dir: &Path) -> String {
    let parts: Vec<_> = dir.iter().map(|p| p.to_string_lossy()).collect();
    parts.join("/")
}

fn pose_rows(planned: &PlannedJob, entries: &[&FrameEntry]) -> Vec<PoseRow> {
    entries
        .iter()
        .map(|e| PoseRow {
            frame: e.frame,
            time: e.frame as f64 / f64::from(planned.frame_rate),
            pose: Viewpoint {
                translation: e.translation,
                rotation: e.rotation,
            },
        })
        .collect()
}

/// A dataset job's run files, from its record's class map checked again (a record is
/// another program's word) and the frames' sweep-end poses.
fn dataset_run_files(
    out: &Path,
    planned: &PlannedJob,
    dataset: &DatasetOptions,
    ends: Option<Vec<PoseRow>>,
) -> Result<Vec<PathBuf>, ShardError> {
    let bad = |why: String| ShardError::BadDataset {
        job: planned.name.clone(),
        why,
    };
    dataset.check().map_err(|e| bad(e.to_string()))?;
    let ends = ends.ok_or_else(|| {
        bad(
            "its frames carry no sweep-end poses, which the layout's poses need (records \
             of an older beamtrace: make the shards again)"
                .into(),
        )
    })?;
    let dir = out.join(&planned.dir);
    Ok(write_dataset_run_files(
        dataset,
        &dir,
        planned.frames,
        &ends,
    )?)
}

/// The frames' sweep-end poses, when every entry has one.
fn sweep_end_rows(planned: &PlannedJob, entries: &[&FrameEntry]) -> Option<Vec<PoseRow>> {
    let rate = f64::from(planned.frame_rate);
    (entries.iter())
        .map(|e| {
            let (translation, rotation) = e.sweep_end?;
            Some(PoseRow {
                frame: e.frame,
                time: (e.frame + 1) as f64 / rate,
                pose: Viewpoint {
                    translation,
                    rotation,
                },
            })
        })
        .collect()
}

/// Each frame's weather as the run that made it wrote it (clear where none is noted; a
/// form that no longer parses reads as clear with its extinction kept).
fn weather_rows(planned: &PlannedJob, entries: &[&FrameEntry]) -> Vec<WeatherRow> {
    entries
        .iter()
        .map(|e| {
            let (form, extinction) = e.weather.clone().unwrap_or(("clear".into(), 0.0));
            WeatherRow {
                frame: e.frame,
                time: e.frame as f64 / f64::from(planned.frame_rate),
                weather: Weather::parse(&form).unwrap_or(Weather::CLEAR),
                extinction,
            }
        })
        .collect()
}

fn file_digest(path: &Path) -> Result<(u64, String), ShardError> {
    let io = |source| ShardError::Io {
        path: path.to_path_buf(),
        what: "reading a listed file",
        source,
    };
    let mut f = std::fs::File::open(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ShardError::MissingFile(path.to_path_buf()),
        _ => io(source),
    })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((bytes, hex(&hasher.finalize())))
}

/// The records in `out/shards`, sorted by file name.
fn read_records(out: &Path) -> Result<Vec<(PathBuf, ShardRecord)>, ShardError> {
    let dir = out.join(SHARDS_DIR);
    let listing = std::fs::read_dir(&dir).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ShardError::NoShards(out.to_path_buf()),
        _ => ShardError::Io {
            path: dir.clone(),
            what: "listing",
            source,
        },
    })?;
    let mut paths: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut records = Vec::new();
    for path in paths {
        let text = std::fs::read(&path).map_err(|source| ShardError::Io {
            path: path.clone(),
            what: "reading",
            source,
        })?;
        let record = serde_json::from_slice(&text).map_err(|source| ShardError::BadRecord {
            path: path.clone(),
            source,
        })?;
        records.push((path, record));
    }
    if records.is_empty() {
        return Err(ShardError::NoShards(out.to_path_buf()));
    }
    Ok(records)
}

/// Same inputs everywhere, and the records' unit ranges tile the work: no two overlap,
/// none is missing.
fn check_cover(records: &[(PathBuf, ShardRecord)]) -> Result<(), ShardError> {
    let (path0, r0) = &records[0];
    for (path, r) in records {
        if r.inputs_digest != r0.inputs_digest || r.units != r0.units {
            return Err(ShardError::OtherWork {
                a: path0.clone(),
                b: path.clone(),
            });
        }
    }
    let mut by_start: Vec<&(PathBuf, ShardRecord)> = records
        .iter()
        .filter(|(_, r)| r.range[0] < r.range[1])
        .collect();
    by_start.sort_by_key(|(_, r)| (r.range[0], r.range[1]));
    // Overlaps first: a second split in the folder is the cause to name, even where it
    // also leaves gaps.
    for pair in by_start.windows(2) {
        let ((a, ra), (b, rb)) = (pair[0], pair[1]);
        if rb.range[0] < ra.range[1] {
            return Err(ShardError::Overlap {
                a: a.clone(),
                b: b.clone(),
            });
        }
    }
    let mut covered = 0u64;
    for (_, r) in by_start {
        if r.range[0] > covered {
            return Err(missing(r0, covered..r.range[0]));
        }
        covered = r.range[1];
    }
    if covered < r0.units {
        return Err(missing(r0, covered..r0.units));
    }
    Ok(())
}

/// The error for units `gap` that no record covers, naming the shards of the split
/// the first record belongs to that would cover them.
fn missing(r: &ShardRecord, gap: Range<u64>) -> ShardError {
    let count = r.shard.count;
    let shards: Vec<String> = (0..count)
        .map(|index| Shard { index, count })
        .filter(|s| {
            let u = s.units(r.units);
            u.start < gap.end && gap.start < u.end
        })
        .map(|s| s.to_string())
        .collect();
    ShardError::MissingShards {
        shards: shards.join(", "),
        units: gap,
        total: r.units,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard `{given}`: {why}; give i/n, shard i (0 to n−1) of n, e.g. 0/4")]
    BadShard { given: String, why: String },
    #[error("{what} {}", .path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is the journal of a shard of other inputs (digest {found}, now {now}): \
         options, sensor, scene or scenario changed since it ran. Write into another \
         --out, or remove that folder's frames and shards/ to start again",
        .journal.display()
    )]
    OtherInputs {
        journal: PathBuf,
        found: String,
        now: String,
    },
    #[error("line {line} of the shard journal {} is not a journal entry: remove the journal to run the shard from its start", .path.display())]
    BadJournal { path: PathBuf, line: usize },
    #[error("{} is not a shard record written by beamtrace", .path.display())]
    BadRecord {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("writing a shard journal or record")]
    Json(#[source] serde_json::Error),
    #[error("{} is outside the output folder", .0.display())]
    OutsideOut(PathBuf),
    #[error("shard {shard} finished {done} of its {wanted} frames")]
    Unfinished {
        shard: Shard,
        done: usize,
        wanted: usize,
    },
    #[error(
        "no shard records in {}/shards: run the shards (`--shard i/n`) into this \
         folder first; a shard writes its record when it finishes",
        .0.display()
    )]
    NoShards(PathBuf),
    #[error(
        "{} and {} are shards of different work (other inputs, or another list of \
         jobs): merge each into its own folder",
        .a.display(), .b.display()
    )]
    OtherWork { a: PathBuf, b: PathBuf },
    #[error(
        "{} and {} cover some of the same frames: the folder holds shards of two \
         different splits; keep one split (remove the other's records from shards/) and \
         merge again",
        .a.display(), .b.display()
    )]
    Overlap { a: PathBuf, b: PathBuf },
    #[error(
        "frames {}..{} of the {total} frames of the work have no finished shard: run \
         shard(s) {shards} (a shard that was stopped resumes where it stopped), then \
         merge again",
        .units.start, .units.end
    )]
    MissingShards {
        shards: String,
        units: Range<u64>,
        total: u64,
    },
    #[error(
        "{} (frame {frame} of job {job}) {}: it was changed or cut short after the \
         shard finished; run that shard again (remove its record and journal), then merge",
        .path.display(),
        if .now == .written {
            "holds other bytes than its shard wrote (its SHA-256 differs)".to_string()
        } else {
            format!("is {} bytes, not the {} bytes its shard wrote", .now, .written)
        }
    )]
    ChangedFile {
        path: PathBuf,
        job: String,
        frame: u64,
        written: u64,
        now: u64,
    },
    #[error("frame {frame} of job {job} in a shard record: {why}; run its shard again")]
    BadEntry {
        job: String,
        frame: u64,
        why: String,
    },
    #[error("the dataset of job {job} in the shard records: {why}")]
    BadDataset { job: String, why: String },
    #[error("frame {frame} of job {job} is in no shard record")]
    MissingFrame { job: String, frame: u64 },
    #[error(
        "{} is listed in a shard record but is missing: run its shard again (it \
         makes the missing frames), then merge again",
        .0.display()
    )]
    MissingFile(PathBuf),
    #[error(
        "nothing to merge in {}: {why}. merge puts together the shards of `run --shard \
         i/n` and `batch`, and joins the frame files of `run --format mcap --split-files` \
         into one bag",
        .out.display()
    )]
    NothingToMerge { out: PathBuf, why: String },
    #[error(
        "{} is missing: the run's run.json lists more frames than its folder holds; run it \
         again, then merge",
        .0.display()
    )]
    MissingFrameFile(PathBuf),
    #[error(transparent)]
    Output(#[from] OutputError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_is_not_i_of_n() {
        assert_eq!(
            "3/7".parse::<Shard>().unwrap(),
            Shard { index: 3, count: 7 }
        );
        for bad in ["7/7", "1/0", "x/2", "2", "-1/3", "1/100000"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("i/n"), "{e}");
        }
    }

    #[test]
    fn every_split_takes_each_unit_once_in_order() {
        for total in [0u64, 1, 6, 200, 1_000_003] {
            for count in [1u32, 2, 4, 7, 100] {
                let mut next = 0;
                for index in 0..count {
                    let u = Shard { index, count }.units(total);
                    assert_eq!(u.start, next, "{index}/{count} of {total}");
                    assert!(u.end - u.start <= total.div_ceil(u64::from(count)));
                    next = u.end;
                }
                assert_eq!(next, total);
            }
        }
    }

    fn job(name: &str, frames: u64) -> PlannedJob {
        PlannedJob {
            name: name.into(),
            dir: name.into(),
            frames,
            frame_rate: 10.0,
            dataset: None,
        }
    }

    #[test]
    fn slices_cross_job_boundaries() {
        // Units: a0..a4 (5), b0..b2 (3), c0..c3 (4) = 12; shard 1/3 takes units 4..8.
        let jobs = [job("a", 5), job("b", 3), job("c", 4)];
        let s = slices(&jobs, Shard { index: 1, count: 3 });
        assert_eq!(
            s,
            [
                JobSlice {
                    job: 0,
                    frames: 4..5
                },
                JobSlice {
                    job: 1,
                    frames: 0..3
                }
            ]
        );
        let last = slices(&jobs, Shard { index: 2, count: 3 });
        assert_eq!(
            last,
            [JobSlice {
                job: 2,
                frames: 0..4
            }]
        );
    }

    /// Runs `shard` of `jobs` in `out`, "making" each frame as a small file.
    fn fake_shard(out: &Path, shard: Shard, jobs: &[PlannedJob], digest: &str) -> ShardRecord {
        let mut run = ShardRun::begin(out, shard, digest.into(), jobs.to_vec()).unwrap();
        for s in run.slices() {
            let done = run.done_frames(s.job);
            for f in s.frames.clone().filter(|f| !done.contains(f)) {
                let dir = out.join(&jobs[s.job].dir);
                std::fs::create_dir_all(&dir).unwrap();
                let file = dir.join(format!("frame_{f:06}.txt"));
                std::fs::write(&file, format!("{} {f}", jobs[s.job].name)).unwrap();
                let pose = Viewpoint {
                    translation: [f as f32 * 0.1, 0.0, 1.8],
                    rotation: [1.0, 0.0, 0.0, 0.0],
                };
                // Job b in fog, job a in clear air.
                let fog = Weather::parse("fog:visibility=100").unwrap();
                let weather = (jobs[s.job].name == "b").then_some((fog, 0.0391));
                run.frame_done(s.job, f, &[file], (pose, pose, weather))
                    .unwrap();
            }
        }
        run.finish(None, 0.0).unwrap()
    }

    #[test]
    fn merged_shards_list_every_frame_once_and_say_nothing_of_the_split() {
        let jobs = [job("a", 5), job("b", 3)];
        let index = |count: u32| {
            let dir = tempfile::tempdir().unwrap();
            for index in 0..count {
                fake_shard(dir.path(), Shard { index, count }, &jobs, "d");
            }
            let m = merge(dir.path()).unwrap();
            assert_eq!((m.frames, m.files, m.jobs), (8, 8, 2));
            let poses = std::fs::read_to_string(dir.path().join("b/poses.csv")).unwrap();
            assert_eq!(poses.lines().count(), 1 + 3);
            // Frame 2 of job b: t = 2 / 10 Hz, x = 0.2 m.
            assert!(poses.contains("\n2,0.2,0.2,0,1.8,1,0,0,0\n"), "{poses}");
            // The weather the journals noted: job b's per frame, none for job a.
            let weather = std::fs::read_to_string(dir.path().join("b/weather.csv")).unwrap();
            assert_eq!(weather.lines().count(), 1 + 3);
            let row = "\n2,0.2,\"fog:visibility=100\",100,0,0,0.0391\n";
            assert!(weather.contains(row), "{weather}");
            assert!(!dir.path().join("a/weather.csv").exists());
            std::fs::read(dir.path().join(INDEX_FILE)).unwrap()
        };
        let one = index(1);
        assert_eq!(one, index(3));
        let v: serde_json::Value = serde_json::from_slice(&one).unwrap();
        let a = &v["jobs"][0]["files"][4];
        assert_eq!(a["path"], "a/frame_000004.txt");
        assert_eq!(a["bytes"], 3);
        // SHA-256 of "a 4", computed independently (sha256sum).
        assert_eq!(
            a["sha256"],
            "9d5767b985e85a42414fe740f17bbe51d2df388cdc98249c479b1e33cb00bee9"
        );
    }

    #[test]
    fn a_restarted_shard_keeps_what_its_journal_lists_and_drops_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = [job("a", 4)];
        let shard = Shard::WHOLE;
        let mut run = ShardRun::begin(dir.path(), shard, "d".into(), jobs.to_vec()).unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        for f in 0..2 {
            let file = dir.path().join(format!("a/frame_{f:06}.txt"));
            std::fs::write(&file, "x").unwrap();
            run.frame_done(
                0,
                f,
                &[file],
                (Viewpoint::IDENTITY, Viewpoint::IDENTITY, None),
            )
            .unwrap();
        }
        drop(run);
        // Killed while appending frame 2; frame 1's file lost since.
        let journal = dir.path().join(shard.journal_path());
        let mut text = std::fs::read_to_string(&journal).unwrap();
        let last = text.lines().last().unwrap().to_string();
        text.push_str(&last[..last.len() / 2]);
        std::fs::write(&journal, text).unwrap();
        std::fs::remove_file(dir.path().join("a/frame_000001.txt")).unwrap();
        let run = ShardRun::begin(dir.path(), shard, "d".into(), jobs.to_vec()).unwrap();
        assert_eq!(run.done_frames(0), [0].into());
        assert_eq!(run.resumed_frames(), 1);
        drop(run);
        let e = ShardRun::begin(dir.path(), shard, "e".into(), jobs.to_vec());
        assert!(matches!(e, Err(ShardError::OtherInputs { .. })));
        let e = ShardRun::begin(dir.path(), shard, "d".into(), jobs.to_vec())
            .unwrap()
            .finish(None, 0.0)
            .unwrap_err();
        assert!(e.to_string().contains("finished 1 of its 4 frames"), "{e}");
    }

    /// The first shard record in `out`, edited by `edit` and written back.
    fn edit_record(out: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
        let path = out.join(Shard::WHOLE.record_path());
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        edit(&mut v);
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    }

    /// A folder of one whole shard of a three-frame job `a`, as it finished.
    fn fresh_shard() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fake_shard(dir.path(), Shard::WHOLE, &[job("a", 3)], "d");
        dir
    }

    #[test]
    fn merge_refuses_frame_files_that_changed_since_their_shard_wrote_them() {
        // Cut short after the shard finished (same first bytes, one fewer).
        let dir = fresh_shard();
        std::fs::write(dir.path().join("a/frame_000001.txt"), "a ").unwrap();
        let e = merge(dir.path()).unwrap_err();
        assert!(
            matches!(
                e,
                ShardError::ChangedFile {
                    frame: 1,
                    written: 3,
                    now: 2,
                    ..
                }
            ),
            "{e}"
        );
        // Same size, other content.
        let dir = fresh_shard();
        std::fs::write(dir.path().join("a/frame_000002.txt"), "a 9").unwrap();
        let e = merge(dir.path()).unwrap_err();
        assert!(
            matches!(
                e,
                ShardError::ChangedFile {
                    frame: 2,
                    written: 3,
                    now: 3,
                    ..
                }
            ),
            "{e}"
        );
        // The files untouched merge.
        merge(fresh_shard().path()).unwrap();
    }

    #[test]
    fn merge_refuses_records_that_name_files_outside_the_job_or_poses_not_finite() {
        // Record paths outside the job's folder, absolute or climbing out.
        for path in [
            "/etc/hostname",
            "a/../../../etc/hostname",
            "b/frame_000000.txt",
        ] {
            let dir = fresh_shard();
            edit_record(dir.path(), |v| v["frames"][0]["files"][0] = path.into());
            let e = merge(dir.path()).unwrap_err();
            assert!(
                matches!(e, ShardError::BadEntry { frame: 0, .. }),
                "{path}: {e}"
            );
            assert!(e.to_string().contains("not a path inside"), "{e}");
        }
        // 1e39 reads as an f32 infinity.
        let dir = fresh_shard();
        edit_record(dir.path(), |v| {
            v["frames"][2]["translation"][0] = 1e39.into()
        });
        let e = merge(dir.path()).unwrap_err();
        assert!(e.to_string().contains("pose is not finite"), "{e}");
        // A record without digests (an older beamtrace's) vouches for nothing.
        let dir = fresh_shard();
        edit_record(dir.path(), |v| {
            v["frames"][0]["digests"] = serde_json::json!([])
        });
        let e = merge(dir.path()).unwrap_err();
        assert!(e.to_string().contains("1 files but 0 sizes"), "{e}");
        // The record untouched merges.
        merge(fresh_shard().path()).unwrap();
    }

    #[test]
    fn merge_refuses_files_behind_links_and_files_that_do_not_read_back() {
        // The same bytes, but reached through a link that could lead anywhere.
        let dir = fresh_shard();
        let elsewhere = tempfile::tempdir().unwrap();
        let frame = dir.path().join("a/frame_000001.txt");
        let moved = elsewhere.path().join("frame_000001.txt");
        std::fs::rename(&frame, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &frame).unwrap();
        let e = merge(dir.path()).unwrap_err();
        assert!(matches!(e, ShardError::BadEntry { frame: 1, .. }), "{e}");
        assert!(e.to_string().contains("link `a/frame_000001.txt`"), "{e}");
        // A link to the job's folder itself.
        let dir = fresh_shard();
        std::fs::rename(dir.path().join("a"), elsewhere.path().join("a")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("a"), dir.path().join("a")).unwrap();
        let e = merge(dir.path()).unwrap_err();
        assert!(e.to_string().contains("link `a`"), "{e}");
        // A file that is not text, and a record edited to vouch for it.
        let dir = fresh_shard();
        std::fs::write(dir.path().join("a/frame_000002.txt"), b"a \xff").unwrap();
        let digest = file_digest(&dir.path().join("a/frame_000002.txt")).unwrap();
        edit_record(dir.path(), |v| {
            v["frames"][2]["digests"][0] = serde_json::json!([digest.0, digest.1])
        });
        let e = merge(dir.path()).unwrap_err();
        assert!(matches!(e, ShardError::BadEntry { frame: 2, .. }), "{e}");
        assert!(
            e.to_string().contains("do not read back: it is not UTF-8"),
            "{e}"
        );
        assert!(!dir.path().join(INDEX_FILE).exists());
    }

    #[test]
    fn digests_keep_labels_and_values_apart() {
        let mut a = InputsDigest::default();
        a.add("x", b"ab");
        a.add("y", b"c");
        let mut b = InputsDigest::default();
        b.add("x", b"a");
        b.add("y", b"bc");
        assert_ne!(a.hex(), b.hex());
        assert_eq!(a.hex().len(), 64);
        // SHA-256 of the empty input (FIPS 180-4 test value).
        assert_eq!(
            hex(&Sha256::new().finalize()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
