//! What can go wrong reading OSI input: each error names the file and says what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OsiError {
    #[error("cannot read the OSI trace {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: message {index} at byte {offset} needs {needed} bytes but the file has \
         {left} left: the trace is cut short (its writer stopped early?) or is not a binary \
         OSI trace (4-byte little-endian length, then the message); write it again, or \
         cut it before that message"
    )]
    Truncated {
        path: PathBuf,
        index: usize,
        offset: u64,
        needed: u64,
        left: u64,
    },
    #[error(
        "{path}: message {index} at byte {offset} is not a valid OSI message ({source}); \
         check that the file is a binary OSI trace (.osi) of SensorView or GroundTruth \
         messages"
    )]
    Decode {
        path: PathBuf,
        index: usize,
        offset: u64,
        #[source]
        source: prost::DecodeError,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

impl OsiError {
    pub(super) fn invalid(path: &std::path::Path, message: impl Into<String>) -> Self {
        OsiError::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
