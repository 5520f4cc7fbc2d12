//! A frame file read back as the tool that opens it would, before `merge` lists it in
//! the index as whole: a digest proves the bytes are the ones the shard wrote, this
//! proves those bytes are a file of their kind (a shard killed between writing and
//! renaming, or a record edited to match a broken file, would pass the digest alone).

use crate::osi::{read_trace, SensorData};
use crate::output::{npy_f32_shape, Recording, RecordingOptions};
use std::path::Path;

/// Reads the frame file at `path` whole by its kind (the extension beamtrace gave it);
/// the error says what does not read.
pub(super) fn check_frame_file(path: &Path) -> Result<(), String> {
    let ext = (path.extension().and_then(|e| e.to_str())).unwrap_or("");
    match ext {
        "pcd" | "ply" | "las" | "mcap" => {
            Recording::open(&[path.to_path_buf()], &RecordingOptions::default())
                .map(drop)
                .map_err(|e| e.to_string())
        }
        "osi" => match read_trace::<SensorData>(path, |_, _| Ok(())) {
            Ok(1) => Ok(()),
            Ok(n) => Err(format!("it holds {n} SensorData messages, not one")),
            Err(e) => Err(e.to_string()),
        },
        "png" => check_png(path),
        _ => check_bytes(ext, &read(path)?),
    }
}

/// The kinds read from their bytes at once (small files: text, raw records, `.npy`).
fn check_bytes(ext: &str, bytes: &[u8]) -> Result<(), String> {
    let records = |size: usize, what: &str| {
        (bytes.len().is_multiple_of(size))
            .then_some(())
            .ok_or(format!(
                "its {} bytes are not whole {size}-byte {what}",
                bytes.len()
            ))
    };
    match ext {
        "json" => serde_json::from_slice::<serde_json::Value>(bytes)
            .map(drop)
            .map_err(|e| format!("it is not JSON ({e})")),
        "csv" => check_csv(bytes),
        "txt" => (std::str::from_utf8(bytes).map(drop))
            .map_err(|e| format!("it is not UTF-8 text ({e})")),
        "bin" => records(16, "points (x y z reflectance, float32)"),
        "label" => records(4, "labels (uint32)"),
        "npy" => npy_f32_shape(bytes).map(drop),
        _ => Err(format!(
            "`.{ext}` is no kind of file a frame of beamtrace has"
        )),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("it cannot be read ({e})"))
}

/// A CSV cloud: a header of names, then one line of as many values per point.
fn check_csv(bytes: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("it is not UTF-8 text ({e})"))?;
    let body = text
        .strip_suffix('\n')
        .ok_or("its last line is not ended (a file cut short)")?;
    let mut lines = body.split('\n');
    let columns = lines.next().unwrap_or("").split(',').count();
    match lines.position(|l| l.split(',').count() != columns) {
        Some(i) => Err(format!(
            "line {} holds another number of values than the header's {columns}",
            i + 2
        )),
        None => Ok(()),
    }
}

/// Deflate's largest compression ratio (RFC 1951: a 258-byte match in 2 bits, about
/// 1032:1): no PNG decodes to more than this many times its own bytes.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// A picture: PNG's header and every row of its image data, decoded into no more
/// than its bytes could hold.
fn check_png(path: &Path) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("it cannot be read ({e})"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("it cannot be read ({e})"))?
        .len();
    let not_png = |e: png::DecodingError| format!("it is not a whole PNG ({e})");
    let mut reader =
        (png::Decoder::new(std::io::BufReader::new(file)).read_info()).map_err(not_png)?;
    let size = (reader.output_buffer_size())
        .filter(|&s| s as u64 <= len.saturating_mul(DEFLATE_MAX_RATIO))
        .ok_or("its PNG header claims an image larger than its bytes can hold")?;
    let mut image = vec![0; size];
    reader.next_frame(&mut image).map_err(not_png)?;
    reader.finish().map_err(not_png)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    /// Files cut or changed the way a killed writer or an editor leaves them are
    /// refused, each kind by its own rule; whole ones of every kind read.
    #[test]
    fn whole_files_read_and_broken_ones_are_refused_by_their_kind() {
        let whole: [(&str, &[u8]); 6] = [
            ("a.json", b"{\"objects\": []}"),
            ("a.csv", b"x,y,z\n1,2,3\n4,5,6\n"),
            ("a.txt", b"Car 0.00 0 -1.57\n"),
            ("a.bin", &[0; 32]),
            ("a.label", &[0; 8]),
            ("a.pcd", b"# .PCD v0.7\nVERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 1\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 1\nDATA ascii\n1 2 3\n"),
        ];
        for (name, bytes) in whole {
            let (_dir, path) = written(name, bytes);
            assert_eq!(check_frame_file(&path), Ok(()), "{name}");
        }
        let broken: [(&str, &[u8], &str); 9] = [
            ("a.json", b"{\"objects\": [", "not JSON"),
            ("a.csv", b"x,y,z\n1,2,3\n4,5", "not ended"),
            ("a.csv", b"x,y,z\n1,2,3\n4,5\n", "line 3"),
            ("a.txt", b"Car \xff\n", "UTF-8"),
            ("a.bin", &[0; 31], "16-byte"),
            ("a.label", &[0; 6], "4-byte"),
            ("a.npy", b"\x93NUMPY\x01\x00", "magic"),
            ("a.osi", &[9, 0, 0, 0, 1], "cut short"),
            ("a.exe", b"MZ", "no kind of file"),
        ];
        for (name, bytes, why) in broken {
            let (_dir, path) = written(name, bytes);
            let e = check_frame_file(&path).unwrap_err();
            assert!(e.contains(why), "{name}: {e}");
        }
        let pcd = b"# .PCD v0.7\nVERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 2\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 2\nDATA binary\n";
        let (_dir, path) = written("cut.pcd", &[&pcd[..], &[0; 12]].concat());
        assert!(check_frame_file(&path).is_err());
        let (_dir, path) = written("cut.png", b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR");
        assert!(check_frame_file(&path).unwrap_err().contains("PNG"));
    }
}
