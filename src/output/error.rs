//! The one error type of the output module.

use std::io;
use std::path::{Path, PathBuf};

/// Writing or reading a point cloud / picture failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Nothing was left under `path`: the temporary file was removed.
    #[error("cannot write {path}: {source}; {hint} (no partial file was left)")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
        hint: String,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file was read but its contents do not follow the format; `at` is where
    /// (`header line 3`, `line 17`, `binary data`).
    #[error("{path}: {at}: {message}")]
    Parse {
        path: PathBuf,
        at: String,
        message: String,
    },
    #[error(
        "unknown output format `{given}`: use one of pcd, pcd-ascii, ply, las, mcap, csv, osi"
    )]
    UnknownFormat { given: String },
    #[error(
        "LAS files hold one fixed set of fields (x y z, intensity, returns, GPS time and \
         class in LAS's own slots, beamtrace's other fields as extra bytes), so --fields \
         {given} cannot be written as LAS: leave out --fields (beamtrace), or write pcd, \
         ply or mcap, which take any field set"
    )]
    LasFields { given: String },
    #[error(
        "LAS has no organized layout (its empty cells would be points at NaN): write the \
         cloud unorganized (--unorganized, or leave out --organized)"
    )]
    LasOrganized,
    #[error("--class-map entry `{given}`: {why}")]
    ClassMap { given: String, why: String },
    #[error(
        "instance {id} is an object, but SemanticKITTI's labels hold instance ids up to \
         65535 (the high 16 bits): a scene with fewer nodes, or another --dataset"
    )]
    DatasetInstance { id: u32 },
    #[error(
        "OSI detections have OSI's own fields (spherical position, intensity, echo pulse \
         width, beam and object ids) and are a list, so --fields {given} or an organized \
         cloud cannot be written as OSI: leave out --fields, --organized and --unorganized"
    )]
    OsiLayout { given: String },
    #[error("unknown field `{given}`: use {valid}")]
    UnknownField { given: String, valid: String },
    /// A list of fields that cannot make a file; the message says why and what to do.
    #[error("field list: {0}")]
    FieldList(String),
    #[error(
        "an organized cloud needs a sensor whose beams form a grid of rings × columns, \
         but {why}; write it unorganized (--unorganized)"
    )]
    NotGrid { why: String },
    /// Points that do not fit the organized layout; never dropped, refused.
    #[error("organizing the frame: {0}")]
    Organize(String),
    #[error(
        "field `{field}` needs the sensor's beams (ring order, beam origins): pass a \
         BeamLayout in CloudMeta::beams"
    )]
    NeedsBeams { field: &'static str },
    /// A scene flow field where the writer has no frame motion.
    #[error(
        "the field `{field}` is the scene flow, which only a simulated frame has: write it \
         with `run --flow` (or the Python API's flow=True)"
    )]
    NeedsFlow { field: &'static str },
    /// Points whose values the records cannot hold (a derived field past 32 bits), or a
    /// buffer of the wrong size.
    #[error("the frame's records: {0}")]
    Records(String),
    /// MCAP files that cannot be merged; the message names the file and why.
    #[error("merging MCAP files: {0}")]
    Merge(String),
    /// A `--topic` or `--frame-id` that ROS 2 would not accept.
    #[error("{option} `{given}`: {why}")]
    RosName {
        option: &'static str,
        given: String,
        why: String,
    },
    #[error("picture option `{field}`: {message}")]
    PictureOptions {
        field: &'static str,
        message: String,
    },
}

impl OutputError {
    pub(crate) fn write(path: &Path, source: io::Error) -> Self {
        let hint = write_hint(&source).to_string();
        OutputError::Write {
            path: path.to_path_buf(),
            source,
            hint,
        }
    }

    pub(crate) fn read(path: &Path, source: io::Error) -> Self {
        OutputError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn parse(path: &Path, at: impl Into<String>, message: impl Into<String>) -> Self {
        OutputError::Parse {
            path: path.to_path_buf(),
            at: at.into(),
            message: message.into(),
        }
    }
}

/// What the user can do about a failed write. ENOSPC/EROFS are matched by number because
/// their `ErrorKind`s are newer than the crate's minimum Rust version.
fn write_hint(e: &io::Error) -> &'static str {
    #[cfg(unix)]
    match e.raw_os_error() {
        Some(28) => return "the disk is full: free some space or write to another folder",
        Some(30) => return "the file system is read-only: write to another folder",
        _ => {}
    }
    match e.kind() {
        io::ErrorKind::PermissionDenied => {
            "permission denied: write to a folder you own or fix its permissions"
        }
        io::ErrorKind::NotFound => "the folder could not be created: check the output path",
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput => {
            "the values do not fit the format"
        }
        _ => "check that the output folder exists, is writable and has free space",
    }
}
