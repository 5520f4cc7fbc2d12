//! Where each layout puts a frame's files and the run's, and what goes in them.

use super::kitti::{label_line, point_row, to_camera, write_bin, write_calib};
use super::{Dataset, DatasetOptions};
use crate::model::Point;
use crate::output::objects::ObjectLabel;
use crate::output::poses::affine;
use crate::output::{write_atomic, write_npy_f32, AtomicFiles, OutputError, PoseRow};
use glam::{DAffine3, DMat3};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An object moves when its box moves faster than this (m/s, or rad/s about its centre):
/// SemanticKITTI's "moving" classes.
const MOVING_SPEED: f32 = 0.01;
/// The folders (inside the output folder) that hold the layouts' frame files, with
/// the files' extension: `<folder>/NNNNNN.<extension>` (SemanticKITTI's one sequence of a
/// run is `00`).
pub const DATASET_FRAME_FOLDERS: [(&str, &str); 7] = [
    ("training/velodyne", "bin"),
    ("training/label_2", "txt"),
    ("training/calib", "txt"),
    ("sequences/00/velodyne", "bin"),
    ("sequences/00/labels", "label"),
    ("points", "npy"),
    ("labels", "txt"),
];

/// The layouts' run files, inside the output folder.
pub const DATASET_RUN_FILES: [&str; 7] = [
    "ImageSets/train.txt",
    "ImageSets/val.txt",
    "ImageSets/trainval.txt",
    "sequences/00/calib.txt",
    "sequences/00/poses.txt",
    "sequences/00/times.txt",
    "poses/00.txt",
];

/// `name` is a layout's frame file name in a folder of extension `ext`: six or more
/// digits, then `.ext`.
pub fn is_dataset_frame_name(name: &str, ext: &str) -> bool {
    name.strip_suffix(ext)
        .and_then(|s| s.strip_suffix('.'))
        .is_some_and(|f| f.len() >= 6 && f.bytes().all(|b| b.is_ascii_digit()))
}

/// One frame as the layouts need it.
pub struct DatasetFrame<'a> {
    pub frame: u64,
    /// Sensor frame, as the simulation made them.
    pub points: &'a [Point],
    pub objects: &'a [ObjectLabel],
}

/// Writes frame `f`'s files of `opts`'s layout into `dir` among `files`; returns them.
pub fn write_dataset_frame(
    opts: &DatasetOptions,
    files: &mut AtomicFiles,
    dir: &Path,
    f: &DatasetFrame,
) -> Result<Vec<PathBuf>, OutputError> {
    let id = format!("{:06}", f.frame);
    let mut written = Vec::new();
    let mut put = |path: PathBuf, body: &dyn Fn(&mut dyn Write) -> std::io::Result<()>| {
        files.write(&path, |w| body(w))?;
        written.push(path);
        Ok::<_, OutputError>(())
    };
    match opts.dataset {
        Dataset::Kitti => {
            put(frame_path(dir, 0, &id), &|w| write_bin(w, f.points))?;
            let labels = kitti_labels(opts, f.objects);
            put(frame_path(dir, 1, &id), &|w| w.write_all(labels.as_bytes()))?;
            put(frame_path(dir, 2, &id), &|w| write_calib(w, false))?;
        }
        Dataset::SemanticKitti => {
            let labels = semantic_labels(opts, f)?;
            put(frame_path(dir, 3, &id), &|w| write_bin(w, f.points))?;
            put(frame_path(dir, 4, &id), &|w| {
                labels
                    .iter()
                    .try_for_each(|l| w.write_all(&l.to_le_bytes()))
            })?;
        }
        Dataset::Openpcdet => {
            let rows: Vec<f32> = f.points.iter().flat_map(point_row).collect();
            put(frame_path(dir, 5, &id), &|w| write_npy_f32(w, 4, &rows))?;
            let labels = openpcdet_labels(opts, f.objects);
            put(frame_path(dir, 6, &id), &|w| w.write_all(labels.as_bytes()))?;
        }
    }
    Ok(written)
}

/// Frame file `id` in folder `k` of [`DATASET_FRAME_FOLDERS`].
fn frame_path(dir: &Path, k: usize, id: &str) -> PathBuf {
    let (folder, ext) = DATASET_FRAME_FOLDERS[k];
    dir.join(folder).join(format!("{id}.{ext}"))
}

fn kitti_labels(opts: &DatasetOptions, objects: &[ObjectLabel]) -> String {
    (objects.iter())
        .filter_map(|o| label_line(o, &opts.object_label(o.class)?))
        .map(|l| l + "\n")
        .collect()
}

/// OpenPCDet's `x y z dx dy dz heading class` per object that a point hit (a box with
/// no point in it teaches a detector nothing).
fn openpcdet_labels(opts: &DatasetOptions, objects: &[ObjectLabel]) -> String {
    let mut out = String::new();
    for o in objects.iter().filter(|o| o.points() > 0) {
        let Some(class) = opts.object_label(o.class) else {
            continue;
        };
        let b = &o.sensor_box;
        let ([x, y, z], [dx, dy, dz]) = (b.center.to_array(), b.size.to_array());
        let heading = b.yaw();
        out += &format!("{x:.4} {y:.4} {z:.4} {dx:.4} {dy:.4} {dz:.4} {heading:.4} {class}\n");
    }
    out
}

/// Each point's SemanticKITTI label: the class in the low 16 bits, the object's
/// instance in the high 16 (0 off the objects).
fn semantic_labels(opts: &DatasetOptions, f: &DatasetFrame) -> Result<Vec<u32>, OutputError> {
    let mut objects = HashSet::new();
    let mut moving = HashSet::new();
    for o in f.objects {
        if o.id > 0xFFFF {
            return Err(OutputError::DatasetInstance { id: o.id });
        }
        objects.insert(o.id);
        if o.velocity.length() > MOVING_SPEED || o.angular_velocity.length() > MOVING_SPEED {
            moving.insert(o.id);
        }
    }
    Ok((f.points.iter())
        .map(|p| {
            let id = opts.semantic_id(p.class, moving.contains(&p.instance));
            let instance = if objects.contains(&p.instance) {
                p.instance
            } else {
                0
            };
            instance << 16 | u32::from(id)
        })
        .collect())
}

/// The run's files of the layout in `dir` for `frames` frames with their sweep-end
/// poses `ends` (one per frame, in order); returns them.
pub fn write_dataset_run_files(
    opts: &DatasetOptions,
    dir: &Path,
    frames: u64,
    ends: &[PoseRow],
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    let mut put = |path: PathBuf, body: &dyn Fn(&mut dyn Write) -> std::io::Result<()>| {
        write_atomic(&path, |w| body(w))?;
        written.push(path);
        Ok::<_, OutputError>(())
    };
    match opts.dataset {
        Dataset::Kitti | Dataset::Openpcdet => {
            let val = frames / 5;
            let ids =
                |r: std::ops::Range<u64>| -> String { r.map(|f| format!("{f:06}\n")).collect() };
            let (train, validation) = (ids(0..frames - val), ids(frames - val..frames));
            put(dir.join(DATASET_RUN_FILES[0]), &|w| {
                w.write_all(train.as_bytes())
            })?;
            put(dir.join(DATASET_RUN_FILES[1]), &|w| {
                w.write_all(validation.as_bytes())
            })?;
            let all = ids(0..frames);
            put(dir.join(DATASET_RUN_FILES[2]), &|w| {
                w.write_all(all.as_bytes())
            })?;
        }
        Dataset::SemanticKitti => {
            put(dir.join(DATASET_RUN_FILES[3]), &|w| write_calib(w, true))?;
            let poses = camera_poses(ends);
            put(dir.join(DATASET_RUN_FILES[4]), &|w| {
                w.write_all(poses.as_bytes())
            })?;
            put(dir.join(DATASET_RUN_FILES[6]), &|w| {
                w.write_all(poses.as_bytes())
            })?;
            let times: String = ends.iter().map(|r| format!("{:e}\n", r.time)).collect();
            put(dir.join(DATASET_RUN_FILES[5]), &|w| {
                w.write_all(times.as_bytes())
            })?;
        }
    }
    Ok(written)
}

/// KITTI odometry's poses: per frame the 3×4 matrix (row-major) that takes the virtual
/// camera's coordinates at the frame into the first frame's, `Tr · T₀⁻¹Tᵢ · Tr⁻¹`.
fn camera_poses(ends: &[PoseRow]) -> String {
    let axes = |v: glam::Vec3| to_camera(v).as_dvec3();
    let tr = DAffine3::from_mat3(DMat3::from_cols(
        axes(glam::Vec3::X),
        axes(glam::Vec3::Y),
        axes(glam::Vec3::Z),
    ));
    let first = ends.first().map_or(DAffine3::IDENTITY, |r| affine(&r.pose));
    let mut out = String::new();
    for r in ends {
        let m = tr * first.inverse() * affine(&r.pose) * tr.inverse();
        let (a, t) = (m.matrix3, m.translation);
        let row = |i: usize| {
            format!(
                "{:e} {:e} {:e} {:e}",
                a.col(0)[i],
                a.col(1)[i],
                a.col(2)[i],
                t[i]
            )
        };
        out += &format!("{} {} {}\n", row(0), row(1), row(2));
    }
    out
}
