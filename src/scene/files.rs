//! The files a glTF names (buffers, images) and the scene file itself: where they may
//! lie and how much of them is read.
//!
//! * A referenced file goes through [`confine`]: by default it must lie inside the
//!   glTF's folder (`PathPolicy::Anywhere` lifts that).
//! * Only regular files are read. A device (`/dev/zero`), a pipe or a folder is refused
//!   before a byte is read: they never end, or block, or are not data.
//! * A buffer reads at most the `byteLength` it declares; a shorter file is an error.
//!
//! Messages name the reference as written and sizes, never the contents.

use crate::config::{confine, PathPolicy};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Where the referenced files of one glTF are looked for.
#[derive(Debug, Clone, Copy)]
pub(super) struct FileRefs<'a> {
    /// The folder of the glTF file.
    pub base: &'a Path,
    pub policy: PathPolicy,
}

impl FileRefs<'_> {
    /// The bytes a URI names: a base64 `data:` URI, or a file beside the glTF. `limit`:
    /// read exactly this many bytes (a buffer's byteLength), or the whole file if None.
    pub fn read(&self, uri: &str, limit: Option<u64>) -> Result<Vec<u8>, String> {
        if let Some(rest) = uri.strip_prefix("data:") {
            let payload = rest.split_once(";base64,").map(|(_, p)| p).ok_or_else(|| {
                "data URI is not base64; re-export with embedded base64 or a separate file"
                    .to_string()
            })?;
            return super::base64::decode(payload).map_err(|e| format!("data URI: {e}"));
        }
        if uri.contains("://") && !uri.starts_with("file://") {
            return Err(format!(
                "URI {uri:?} is not a local file; download it next to the .gltf and use a \
                 relative path"
            ));
        }
        let rel = percent_decode(uri.strip_prefix("file://").unwrap_or(uri));
        let file = confine(self.base, Path::new(&rel), self.policy).map_err(|e| e.to_string())?;
        let named = |e: String| format!("{}: {e} (the glTF names {uri:?})", file.display());
        let mut opened = open_regular(&file).map_err(named)?;
        match limit {
            Some(n) => read_exactly(&mut opened, n).map_err(named),
            None => {
                let mut bytes = Vec::new();
                opened
                    .read_to_end(&mut bytes)
                    .map_err(|e| named(format!("cannot read: {e}")))?;
                Ok(bytes)
            }
        }
    }
}

/// Opens `path` for reading if it is a regular file. Opening does not block on a pipe
/// (O_NONBLOCK) and the check is made on the opened file, so nothing is read from a
/// device or a pipe.
pub(super) fn open_regular(path: &Path) -> Result<File, String> {
    let file = open_nonblocking(path).map_err(|e| format!("cannot open: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot open: {e}"))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a folder"
        } else {
            "a device, pipe or socket"
        };
        return Err(format!(
            "not a regular file ({kind}); name a file that holds the data"
        ));
    }
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    // Without O_NONBLOCK, refuse what is not a regular file before opening it.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    File::open(path)
}

/// Exactly `n` bytes from the start of `file`: more are not read, fewer are an error.
fn read_exactly(file: &mut File, n: u64) -> Result<Vec<u8>, String> {
    // Trust the file's size, not the declared one, for the allocation.
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(size.min(n) as usize);
    file.take(n)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if (bytes.len() as u64) < n {
        return Err(format!(
            "holds {} bytes but byteLength says {n}; the file is truncated or the wrong one",
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// URIs in glTF are percent-encoded ("my%20mesh.bin").
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
