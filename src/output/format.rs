//! The output format a run asks for, and the file names of its frames.

use super::{
    read_pcd, read_ply, write_csv_to, write_las_to, write_mcap_to, write_pcd_to_with,
    write_ply_to_with, AtomicFiles, CloudMeta, Convention, FieldSet, OutputError, PcdEncoding,
    PlyEncoding, PointCloud,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A point cloud file format. `pcd` is binary PCD, the format PCL and ROS tools load fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    #[default]
    Pcd,
    PcdAscii,
    Ply,
    /// ASPRS LAS 1.4, point data record format 6 with extra bytes (see `output::las`).
    Las,
    /// MCAP holding a ROS 2 `sensor_msgs/PointCloud2` and its `/tf` (see `output::mcap`).
    Mcap,
    /// Comma-separated text under a header of the fields' names (see `output::csv`).
    Csv,
    /// ASAM OSI `SensorData` messages in a binary `.osi` trace (see `osi::detections`),
    /// written by the job, which knows the sensor's mount and the ground truth.
    Osi,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::Pcd,
        Format::PcdAscii,
        Format::Ply,
        Format::Las,
        Format::Mcap,
        Format::Csv,
        Format::Osi,
    ];

    /// The name used on the command line and in YAML.
    pub fn name(self) -> &'static str {
        match self {
            Format::Pcd => "pcd",
            Format::PcdAscii => "pcd-ascii",
            Format::Ply => "ply",
            Format::Las => "las",
            Format::Mcap => "mcap",
            Format::Csv => "csv",
            Format::Osi => "osi",
        }
    }

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Pcd | Format::PcdAscii => "pcd",
            Format::Ply => "ply",
            Format::Las => "las",
            Format::Mcap => "mcap",
            Format::Csv => "csv",
            Format::Osi => "osi",
        }
    }

    /// Checks that clouds of `fields`, organized or not, can be written in this format —
    /// before a run simulates anything, and again by each write. LAS has one fixed point
    /// layout (beamtrace's own fields) and no place for the empty cells of an organized
    /// cloud: both are refused rather than silently changed.
    /// OSI's detections have their own fields and are a list: the same holds there.
    pub fn check_layout(self, fields: &FieldSet, organized: bool) -> Result<(), OutputError> {
        // Exactly beamtrace's own fields: LAS stores a fixed set, OSI its detections.
        let beamtrace = fields.convention() == Some(Convention::Beamtrace) && !fields.needs_flow();
        match self {
            Format::Las if !beamtrace => Err(OutputError::LasFields {
                given: fields.describe(),
            }),
            Format::Las if organized => Err(OutputError::LasOrganized),
            Format::Osi if !beamtrace || organized => Err(OutputError::OsiLayout {
                given: fields.describe(),
            }),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = OutputError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Format::ALL
            .into_iter()
            .find(|f| f.name() == wanted)
            .ok_or_else(|| OutputError::UnknownFormat {
                given: s.to_string(),
            })
    }
}

/// Writes `cloud` (beamtrace's fields, one row, sensor frame) to `path` in `format`,
/// atomically. PLY is written binary little-endian.
pub fn write_cloud(path: &Path, cloud: &PointCloud, format: Format) -> Result<(), OutputError> {
    write_cloud_with(path, cloud, format, &CloudMeta::plain(&FieldSet::default()))
}

/// Writes `cloud` to `path` in `format` with `meta`, atomically.
pub fn write_cloud_with(
    path: &Path,
    cloud: &PointCloud,
    format: Format,
    meta: &CloudMeta,
) -> Result<(), OutputError> {
    let mut files = AtomicFiles::default();
    write_cloud_into(&mut files, path, cloud, format, meta)?;
    files.commit()
}

/// Writes `cloud` into `files` as `path` (renamed into place when `files` is committed,
/// together with the rest of the group: a frame's clouds and its picture).
pub fn write_cloud_into(
    files: &mut AtomicFiles,
    path: &Path,
    cloud: &PointCloud,
    format: Format,
    meta: &CloudMeta,
) -> Result<(), OutputError> {
    meta.check(cloud)?;
    format.check_layout(meta.fields, meta.organized.is_some())?;
    files.write(path, |w| match format {
        Format::Pcd => write_pcd_to_with(w, cloud, PcdEncoding::Binary, meta),
        Format::PcdAscii => write_pcd_to_with(w, cloud, PcdEncoding::Ascii, meta),
        Format::Ply => write_ply_to_with(w, cloud, PlyEncoding::BinaryLittleEndian, meta),
        Format::Las => write_las_to(w, cloud, meta),
        Format::Mcap => write_mcap_to(w, cloud, meta),
        Format::Csv => write_csv_to(w, cloud, meta),
        // A SensorData needs the sensor's mount and the ground truth: the job writes it.
        Format::Osi => Err(std::io::Error::other(
            "OSI frames are written by the job (job::files), not as a plain cloud",
        )),
    })
}

/// Reads a `.pcd` or `.ply` file, chosen by its extension. LAS, MCAP and CSV files are
/// not read back: beamtrace only writes them.
pub fn read_cloud(path: &Path) -> Result<PointCloud, OutputError> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("pcd") => read_pcd(path),
        Some("ply") => read_ply(path),
        Some(ext @ ("las" | "mcap" | "csv" | "osi")) => Err(OutputError::parse(
            path,
            "file name",
            format!(
                "beamtrace writes .{ext} files but does not read them back: read it with \
                 laspy or PDAL (.las), the mcap tools (.mcap), pandas/numpy (.csv) or an \
                 OSI trace reader (.osi), or write .pcd or .ply"
            ),
        )),
        _ => Err(OutputError::parse(
            path,
            "file name",
            "the extension is neither .pcd nor .ply: rename the file or call read_pcd/read_ply",
        )),
    }
}

/// The file name of frame `frame`: `frame_000042.pcd`. Six digits sort correctly up to a
/// million frames; later frames get more digits and still sort within their length.
pub fn frame_file_name(frame: u64, format: Format) -> String {
    format!("frame_{frame:06}.{}", format.extension())
}

/// The file name of return layer `layer` (0-based) of an organized frame whose layers
/// are files of their own: layer 0 is [`frame_file_name`], layer 1
/// `frame_000042_return2.pcd`, and so on.
pub fn frame_layer_file_name(frame: u64, layer: usize, format: Format) -> String {
    match layer {
        0 => frame_file_name(frame, format),
        _ => format!(
            "frame_{frame:06}_return{}.{}",
            layer + 1,
            format.extension()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_clouds::{ply_safe_cloud, tricky_cloud};

    #[test]
    fn names_parse_and_print_both_ways() {
        for f in Format::ALL {
            assert_eq!(f.to_string().parse::<Format>().unwrap(), f);
            let yaml: Format = serde_norway::from_str(f.name()).unwrap();
            assert_eq!(yaml, f);
        }
        assert_eq!("PCD-ASCII".parse::<Format>().unwrap(), Format::PcdAscii);
        assert_eq!("LAS".parse::<Format>().unwrap(), Format::Las);
        let e = "xyz".parse::<Format>().unwrap_err().to_string();
        assert!(
            e.contains("`xyz`") && e.contains("pcd, pcd-ascii, ply, las, mcap, csv, osi"),
            "{e}"
        );
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(
            names,
            ["pcd", "pcd-ascii", "ply", "las", "mcap", "csv", "osi"]
        );
    }

    #[test]
    fn las_refuses_organized_clouds_and_other_field_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frame_000000.las");
        let fields = FieldSet::default();
        let cloud = PointCloud {
            points: vec![crate::output::Point::default(); 6],
        };
        let organized = CloudMeta {
            organized: Some((3, 2)),
            ..CloudMeta::plain(&fields)
        };
        let e = write_cloud_with(&path, &cloud, Format::Las, &organized).unwrap_err();
        assert!(matches!(e, OutputError::LasOrganized), "{e}");
        assert!(e.to_string().contains("--unorganized"), "{e}");
        let ros = FieldSet::of(Convention::Ros);
        let e = write_cloud_with(&path, &cloud, Format::Las, &CloudMeta::plain(&ros));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("--fields ros") && e.contains("mcap"), "{e}");
        assert!(!path.exists());
        // The same layouts are fine for the other formats.
        for f in [Format::Pcd, Format::Mcap] {
            assert!(f.check_layout(&ros, true).is_ok(), "{f}");
        }
    }

    #[test]
    fn las_and_mcap_are_not_read_back_and_say_so() {
        for name in ["a.las", "b.MCAP"] {
            let e = read_cloud(Path::new(name)).unwrap_err().to_string();
            assert!(e.contains("does not read them back"), "{e}");
        }
    }

    #[test]
    fn frame_names() {
        assert_eq!(frame_layer_file_name(3, 0, Format::Pcd), "frame_000003.pcd");
        assert_eq!(
            frame_layer_file_name(3, 1, Format::Ply),
            "frame_000003_return2.ply"
        );
        assert_eq!(frame_file_name(0, Format::Pcd), "frame_000000.pcd");
        assert_eq!(frame_file_name(42, Format::PcdAscii), "frame_000042.pcd");
        assert_eq!(frame_file_name(1_234_567, Format::Ply), "frame_1234567.ply");
    }

    #[test]
    fn write_cloud_round_trips_every_format() {
        let dir = tempfile::tempdir().unwrap();
        // LAS and MCAP are written only (their own tests read them with other readers).
        for f in [Format::Pcd, Format::PcdAscii, Format::Ply] {
            // PLY stores 32-bit fields as int32.
            let cloud = match f {
                Format::Ply => ply_safe_cloud(),
                _ => tricky_cloud(),
            };
            let path = dir.path().join(frame_file_name(7, f));
            write_cloud(&path, &cloud, f).unwrap();
            let back = read_cloud(&path).unwrap();
            assert_eq!(back.points.len(), cloud.points.len());
            for (a, b) in back.points.iter().zip(&cloud.points) {
                assert_eq!(a.x.to_bits(), b.x.to_bits(), "{f}");
                assert_eq!(
                    (a.ring, a.beam, a.instance, a.class),
                    (b.ring, b.beam, b.instance, b.class)
                );
            }
        }
        // PcdAscii was written last under the shared .pcd name.
        let text = std::fs::read(dir.path().join("frame_000007.pcd")).unwrap();
        assert!(text.windows(10).any(|w| w == b"DATA ascii"));
    }
}
