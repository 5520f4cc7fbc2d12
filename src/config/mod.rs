//! YAML loading shared by every configuration file (sensors, materials, runs).
//!
//! Every schema struct uses `#[serde(deny_unknown_fields)]`; this module turns serde's
//! errors into messages that name the file, the line and column, and the field path
//! (`pattern.columns`), so a typo in a sensor file is found in seconds.

mod depth;
mod paths;

pub use depth::{nesting_error, TooDeep, MAX_DEPTH};
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
    #[error(
        "{path} is larger than {max} bytes, more than a configuration file of its kind \
         needs; check that it is the file you meant"
    )]
    TooLarge { path: PathBuf, max: u64 },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
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

/// YAML configuration files beyond this size are refused unread: the largest a sensor
/// needs is an explicit list of many beams, a few MB.
pub const MAX_YAML_BYTES: u64 = 64 << 20;

/// Reads and parses a YAML file into `T`.
pub fn load_yaml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = read_text(path, MAX_YAML_BYTES)?;
    parse_yaml(&text, path)
}

/// Reads a text file of at most `max` bytes. It reads at most `max + 1` bytes whatever
/// the file claims to be (a device such as /dev/zero never ends), and refuses the rest.
pub fn read_text(path: &Path, max: u64) -> Result<String, ConfigError> {
    use std::io::Read;
    let read_err = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .map_err(read_err)?;
    if text.len() as u64 > max {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            max,
        });
    }
    Ok(text)
}

/// Parses YAML text into `T`; `origin` names the text in error messages. Text nested
/// deeper than [`MAX_DEPTH`] is refused before the parser sees it (the parser's time
/// grows with the square of the depth).
pub fn parse_yaml<T: DeserializeOwned>(text: &str, origin: &Path) -> Result<T, ConfigError> {
    if let Some(e) = nesting_error(text) {
        return Err(ConfigError::Syntax {
            path: origin.to_path_buf(),
            line: e.line,
            column: e.column,
            message: e.to_string(),
        });
    }
    let de = serde_norway::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|err| {
        if let Some(e) = syntax_error(text, origin) {
            return e;
        }
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
                shorten(&field)
            },
            message: shorten_quotes(&strip_location(&inner.to_string())),
        }
    })
}

/// The YAML syntax error in `text`, if its failure to match a schema was one: the text
/// is not YAML at all, whatever the schema (parsed again, as plain YAML, only once the
/// typed parse has failed). Such an error has no field to name; the message says what
/// the parser expected, where, and what usually causes it.
fn syntax_error(text: &str, origin: &Path) -> Option<ConfigError> {
    let err = serde_norway::from_str::<serde_norway::Value>(text).err()?;
    let location = err.location()?;
    Some(ConfigError::Syntax {
        path: origin.to_path_buf(),
        line: location.line(),
        column: location.column(),
        message: syntax_message(&err.to_string()),
    })
}

/// libyaml's "PROBLEM at line L column C, while parsing X at line M column N" as
/// "YAML syntax error: PROBLEM (while parsing X that starts at line M column N); HINT".
fn syntax_message(raw: &str) -> String {
    let (problem, context) = match raw.split_once(", ") {
        Some((p, c)) => (strip_location(p), Some(c)),
        None => (strip_location(raw), None),
    };
    let mut msg = format!("YAML syntax error: {problem}");
    if let Some(c) = context {
        msg.push_str(&format!(
            " ({})",
            c.replace(" at line ", " that starts at line ")
        ));
    }
    let hint = match problem.as_str() {
        "did not find expected key" => Some(
            "expected another `key: value` at the indentation of that mapping; check this \
             line's indentation",
        ),
        "mapping values are not allowed in this context" => Some(
            "a `key: value` where a plain value was expected; check the indentation, or \
             quote a value that contains `: `",
        ),
        "found character that cannot start any token" => {
            Some("indent with spaces, not tabs, and quote values that start with `@` or `` ` ``")
        }
        p if p.starts_with("did not find expected ',' or") => {
            Some("a list or mapping in brackets is not closed, or lacks a comma")
        }
        _ => None,
    };
    if let Some(h) = hint {
        msg.push_str("; ");
        msg.push_str(h);
    }
    msg
}

/// serde_norway appends " at line L column C" to its messages; the error already
/// carries them, so drop the duplicate.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Characters of a value from a file that a message quotes at most.
const QUOTE_CHARS: usize = 40;

/// `text` cut to `QUOTE_CHARS` (40) characters (with "…"): a message may quote a short value
/// from a file to point at it, but never echoes a long one.
pub fn shorten(text: &str) -> String {
    if text.chars().count() <= QUOTE_CHARS {
        return text.to_string();
    }
    let mut s: String = text.chars().take(QUOTE_CHARS).collect();
    s.push('…');
    s
}

/// serde's messages quote the file's values in backticks or double quotes (an unknown
/// key, a string of the wrong type); each quoted span is cut with [`shorten`].
fn shorten_quotes(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = &rest[open..open + 1];
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(quote) {
            Some(close) => {
                out.push_str(&shorten(&after[..close]));
                out.push_str(quote);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&shorten(after));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
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
    fn long_values_are_not_echoed() {
        // An unknown key (YAML keys end at 1024 characters) and a long string value.
        let key = "x".repeat(1000);
        let err = parse_yaml::<Outer>(&format!("{key}: 1\n"), Path::new("s.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.len() < 400, "{} bytes: {}", err.len(), &err[..400]);
        assert!(err.contains(&format!("`{}…`", "x".repeat(40))), "{err}");
        let long = "x".repeat(10_000);
        let err = parse_yaml::<Outer>(
            &format!("name: a\npattern: {{ columns: \"{long}\" }}\n"),
            Path::new("s.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.len() < 400 && err.contains("pattern.columns"), "{err}");
    }

    #[test]
    fn files_beyond_the_bound_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.yaml");
        std::fs::write(&p, "a".repeat(101)).unwrap();
        assert_eq!(read_text(&p, 101).unwrap().len(), 101);
        let err = read_text(&p, 100).unwrap_err().to_string();
        assert!(
            err.contains("big.yaml") && err.contains("100 bytes"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_is_refused() {
        let err = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(err, ConfigError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_quickly_with_its_line() {
        let text = format!("name: a\npattern: {}", "[".repeat(100_000));
        let t = std::time::Instant::now();
        let err = parse_yaml::<Outer>(&text, Path::new("deep.yaml"))
            .unwrap_err()
            .to_string();
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
        assert!(err.starts_with("deep.yaml:2:"), "{err}");
        assert!(err.contains(&MAX_DEPTH.to_string()), "{err}");
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
