//! Recorded point clouds, read back for playing: [`Recording::open`] takes files as a
//! user gives them — a sequence of per-frame PCD, PLY or LAS files, an MCAP file of
//! `sensor_msgs/msg/PointCloud2` messages, or a pcap capture of Velodyne or Ouster
//! packets (Ouster's with the sensor metadata JSON beside it) — and gives frames.
//!
//! Per-frame files are read when their frame is asked for (a long sequence does not
//! sit in memory); an MCAP file or a capture is decoded whole when opened. A point
//! whose file has no range gets the distance from the origin, so colouring by range
//! works on any file.

mod cloud2;
mod las;
mod numeric;

use super::packets::{
    decode_hesai, decode_livox, decode_ouster, decode_velodyne, hesai_model_of, is_livox_data,
    is_velodyne_data, read_pcap, velodyne_model_of, DecodedFrame, OusterLayout, VelodyneModel,
};
use super::{read_pcd, read_ply, OutputError, PointCloud};
use std::path::{Path, PathBuf};

/// How to read what the files alone do not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordingOptions {
    /// The Velodyne model of a capture's packets; `None`: the packets' product id.
    pub velodyne: Option<VelodyneModel>,
    /// Frames per second to play per-frame files at (MCAP and captures carry their
    /// own times); `None`: 10.
    pub frame_rate: Option<f32>,
}

/// Frames per second of per-frame files when none is given: most spinning LiDARs'.
pub const DEFAULT_FRAME_RATE: f32 = 10.0;

/// Where one frame's points are.
#[derive(Debug, Clone)]
enum Source {
    File(PathBuf),
    Decoded(PointCloud),
}

/// One frame of a recording.
#[derive(Debug, Clone)]
pub struct RecordedFrame {
    /// The name of the file it comes from.
    pub label: String,
    source: Source,
}

/// Frames read back from files, in the order given.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// What was opened, by file name (`frame_000000.pcd ... frame_000011.pcd (12
    /// files)`, `run.mcap`, …).
    pub name: String,
    /// What made the points (`VLP-16 packets`, `PointCloud2`, `PCD files`).
    pub kind: String,
    pub frames: Vec<RecordedFrame>,
    /// Frames per second they were recorded at.
    pub frame_rate: f32,
}

impl Recording {
    /// Opens `paths`. Per-frame files are checked by reading each (and dropping its
    /// points); every MCAP file and capture is decoded. An error names the file and what to do.
    pub fn open(paths: &[PathBuf], options: &RecordingOptions) -> Result<Recording, OutputError> {
        let first = paths.first().ok_or_else(|| {
            OutputError::parse(
                Path::new(""),
                "arguments",
                "no files given: name a recording",
            )
        })?;
        let mut frames = Vec::new();
        let mut kinds: Vec<String> = Vec::new();
        let mut times: Vec<f64> = Vec::new();
        for path in paths {
            let (kind, mut got, mut at) = open_one(path, options)?;
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            frames.append(&mut got);
            times.append(&mut at);
        }
        // Every per-frame file is read whole now (one at a time per core, each dropped),
        // so that a broken one fails here, not in the window.
        {
            use rayon::prelude::*;
            let read: Vec<Result<(), OutputError>> = (frames.par_iter())
                .filter(|f| matches!(f.source, Source::File(_)))
                .map(|f| f.cloud().map(drop))
                .collect();
            // The first broken file in the order given.
            read.into_iter().collect::<Result<(), _>>()?;
        }
        if frames.is_empty() {
            return Err(OutputError::parse(
                first,
                "frames",
                "no frames in it: the capture holds no packets of the sensor",
            ));
        }
        let name = match paths {
            [one] => file_name(one),
            [a, .., b] => format!(
                "{} ... {} ({} files)",
                file_name(a),
                file_name(b),
                paths.len()
            ),
            [] => String::new(),
        };
        Ok(Recording {
            name,
            kind: kinds.join(", "),
            frames,
            frame_rate: options
                .frame_rate
                .or_else(|| rate_of(&times))
                .unwrap_or(DEFAULT_FRAME_RATE),
        })
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

impl RecordedFrame {
    /// The frame's points (a per-frame file is read now).
    pub fn cloud(&self) -> Result<PointCloud, OutputError> {
        let mut cloud = match &self.source {
            Source::File(path) => read_frame_file(path)?,
            Source::Decoded(cloud) => cloud.clone(),
        };
        fill_ranges(&mut cloud);
        Ok(cloud)
    }
}

/// The median frame period of frame times (s) as a rate, if they give one.
fn rate_of(times: &[f64]) -> Option<f32> {
    let mut periods: Vec<f64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 1e-4)
        .collect();
    if periods.is_empty() {
        return None;
    }
    periods.sort_by(f64::total_cmp);
    Some((1.0 / periods[periods.len() / 2]) as f32)
}

/// Gives points without a range (every one 0 in the file) their distance from the
/// origin.
fn fill_ranges(cloud: &mut PointCloud) {
    if cloud.points.iter().all(|p| p.range == 0.0) {
        for p in &mut cloud.points {
            p.range = (p.x * p.x + p.y * p.y + p.z * p.z).sqrt();
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

fn read_frame_file(path: &Path) -> Result<PointCloud, OutputError> {
    match extension(path).as_str() {
        "pcd" => read_pcd(path),
        "ply" => read_ply(path),
        _ => las::read_las(path),
    }
}

/// Frames and their times (empty for per-frame files)
type Opened = (String, Vec<RecordedFrame>, Vec<f64>);

fn open_one(path: &Path, options: &RecordingOptions) -> Result<Opened, OutputError> {
    if !path.is_file() {
        let e = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file: check the path (a quoted `frame_*.pcd` is not expanded: let the shell expand it)",
        );
        return Err(OutputError::read(path, e));
    }
    let label = file_name(path);
    let decoded = |kind: String, frames: Vec<(f64, PointCloud)>| -> Opened {
        let (times, frames) = frames
            .into_iter()
            .map(|(t, cloud)| {
                let frame = RecordedFrame {
                    label: label.clone(),
                    source: Source::Decoded(cloud),
                };
                (t, frame)
            })
            .unzip();
        (kind, frames, times)
    };
    match extension(path).as_str() {
        ext @ ("pcd" | "ply" | "las") => {
            let frame = RecordedFrame {
                label,
                source: Source::File(path.to_path_buf()),
            };
            Ok((
                format!("{} files", ext.to_uppercase()),
                vec![frame],
                Vec::new(),
            ))
        }
        "mcap" => Ok(decoded(
            "PointCloud2".into(),
            cloud2::read_mcap_clouds(path)?,
        )),
        "pcap" => {
            let (kind, frames) = read_capture(path, options)?;
            let frames = frames.into_iter().map(|f| (f.time_s, f.cloud)).collect();
            Ok(decoded(kind, frames))
        }
        "pcapng" => Err(OutputError::parse(
            path,
            "file name",
            "pcapng is not read: convert it with `editcap -F pcap IN OUT.pcap`",
        )),
        "laz" => Err(OutputError::parse(
            path,
            "file name",
            "LAZ is not read: decompress it to .las (laszip, or `pdal translate IN OUT.las`)",
        )),
        _ => Err(OutputError::parse(
            path,
            "file name",
            "not a recording beamtrace reads: give .pcd, .ply, .las, .mcap (PointCloud2) \
             or .pcap (Velodyne, Hesai, Livox, or Ouster with its metadata .json beside it) \
             files",
        )),
    }
}

/// The Ouster metadata beside a capture: `NAME.json` for `NAME.pcap`.
pub fn metadata_path(pcap: &Path) -> PathBuf {
    pcap.with_extension("json")
}

/// The frames of a capture: Ouster's when its metadata lies beside it, else Hesai's
/// (told by their pre-header), Livox's (by their header's length and CRC) or
/// Velodyne's.
fn read_capture(
    path: &Path,
    options: &RecordingOptions,
) -> Result<(String, Vec<DecodedFrame>), OutputError> {
    let datagrams = read_pcap(path)?;
    let json = metadata_path(path);
    if json.is_file() {
        let text = std::fs::read_to_string(&json).map_err(|e| OutputError::read(&json, e))?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            OutputError::parse(
                &json,
                format!("line {}", e.line()),
                format!("not JSON: {e}"),
            )
        })?;
        let layout = OusterLayout::from_metadata(&value)
            .map_err(|m| OutputError::parse(&json, "Ouster metadata", m))?;
        let frames = decode_ouster(&layout, &datagrams);
        if frames.is_empty() {
            return Err(OutputError::parse(
                path,
                "packets",
                format!(
                    "no Ouster lidar packets of {} bytes ({}, {} channels, as {} says): is \
                     that this capture's metadata?",
                    layout.packet_size(),
                    layout.profile,
                    layout.channels,
                    json.display()
                ),
            ));
        }
        return Ok((format!("{} packets", layout.product), frames));
    }
    let hesai = datagrams.iter().find_map(|d| hesai_model_of(&d.payload));
    if let Some(model) = hesai {
        return Ok((
            format!("{} packets", model.name()),
            decode_hesai(model, &datagrams),
        ));
    }
    if datagrams
        .iter()
        .any(|d| is_livox_data(&d.payload).is_some())
    {
        return Ok(("Livox Mid-360 packets".into(), decode_livox(&datagrams)));
    }
    let first = datagrams.iter().find(|d| is_velodyne_data(&d.payload));
    let Some(first) = first else {
        return Err(OutputError::parse(
            path,
            "packets",
            format!(
                "no Velodyne, Hesai or Livox data packets, and no Ouster metadata at {}: for an Ouster \
                 capture put the sensor's metadata JSON there (ouster-cli saves it beside \
                 its captures; `beamtrace run --pcap` writes it)",
                json.display()
            ),
        ));
    };
    let model = match options
        .velodyne
        .or_else(|| velodyne_model_of(&first.payload))
    {
        Some(m) => m,
        None => {
            return Err(OutputError::parse(
                path,
                "packets",
                format!(
                    "Velodyne packets of product id 0x{:02x}, which is not read: give the \
                     model with --packets ({}) if it is one of them",
                    first.payload[first.payload.len() - 1],
                    VelodyneModel::ALL.map(|m| m.format_name()).join(", ")
                ),
            ))
        }
    };
    Ok((
        format!("{} packets", model.name()),
        decode_velodyne(model, &datagrams),
    ))
}
