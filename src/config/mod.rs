//! YAML loading shared by every configuration file (sensors, materials, runs).
//!
//! Every schema struct uses `#[serde(deny_unknown_fields)]`; this module turns serde's
//! errors into messages that name the file, the line and column, and the field path
//! (`pattern.columns`), so a typo in a sensor file is found in seconds.

mod paths;

pub use paths::{confine, PathError, PathPolicy};

use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// A configuration file could not be read or did not match its schema.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: field `{field}`: {message}")]
    Schema {
        path: PathBuf,
        line: usize,
        column: usize,
        field: String,
        message: String,
    },
    #[error("{path}: field `{field}`: {message}")]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
}

impl ConfigError {
    /// A value that parsed but makes no sense (a NaN pose, zero beams, …).
    pub fn invalid(path: &Path, field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The first of the `given` (name, present) fields that is not `allowed`: a field of
/// another variant (kernel type, material class) than the one chosen.
pub(crate) fn first_foreign<'a>(given: &[(&'a str, bool)], allowed: &[&str]) -> Option<&'a str> {
    given
        .iter()
        .find(|(name, set)| *set && !allowed.contains(name))
        .map(|(name, _)| *name)
}

/// Overrides a default with a value the file gives; a field left out keeps the default.
pub(crate) fn set_given<T>(dst: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *dst = v;
    }
}

/// Reads and parses a YAML file into `T`.
pub fn load_yaml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_yaml(&text, path)
}

/// Parses YAML text into `T`; `origin` names the text in error messages.
pub fn parse_yaml<T: DeserializeOwned>(text: &str, origin: &Path) -> Result<T, ConfigError> {
    let de = serde_norway::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let field = err.path().to_string();
        let inner = err.into_inner();
        let (line, column) = inner
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        ConfigError::Schema {
            path: origin.to_path_buf(),
            line,
            column,
            field: if field.is_empty() || field == "." {
                "(top level)".into()
            } else {
                field
            },
            message: strip_location(&inner.to_string()),
        }
    })
}

/// serde_norway appends " at line L column C" to its messages; the error already
/// carries them, so drop the duplicate.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        columns: u32,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        pattern: Inner,
    }

    #[test]
    fn unknown_key_names_line_and_field() {
        let err = parse_yaml::<Outer>("name: a\npattern:\n  colums: 3\n", Path::new("s.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.yaml:3:"), "{err}");
        assert!(err.contains("colums"), "{err}");
        assert!(err.contains("pattern"), "{err}");
    }

    #[test]
    fn wrong_type_names_field() {
        let err = parse_yaml::<Outer>("name: a\npattern:\n  columns: many\n", Path::new("s.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("pattern.columns"), "{err}");
        assert!(err.contains(":3:"), "{err}");
    }
}
