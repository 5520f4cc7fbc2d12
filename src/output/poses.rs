//! The sensor pose of every frame of a run, and its weather, as CSV files.

use super::{write_atomic, OutputError, Viewpoint};
use crate::weather::Weather;
use glam::{DAffine3, DQuat, DVec3};
use std::path::Path;

/// One frame's row of `poses.csv`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseRow {
    pub frame: u64,
    /// The frame's start since the run's first frame (s).
    pub time: f64,
    /// The sensor's pose in the world.
    pub pose: Viewpoint,
}

/// The header row of `poses.csv`.
pub const POSES_HEADER: &str = "frame,time,x,y,z,qw,qx,qy,qz";

/// Writes `rows` to `path` as CSV — a header row, then `frame,time,x,y,z,qw,qx,qy,qz`
/// per frame (s, m, unit quaternion) — atomically.
pub fn write_poses(path: &Path, rows: &[PoseRow]) -> Result<(), OutputError> {
    write_atomic(path, |w| {
        writeln!(w, "{POSES_HEADER}")?;
        for r in rows {
            let [x, y, z] = r.pose.translation;
            let [qw, qx, qy, qz] = r.pose.rotation;
            writeln!(w, "{},{},{x},{y},{z},{qw},{qx},{qy},{qz}", r.frame, r.time)?;
        }
        Ok(())
    })
}

/// The header row of a rig's `poses.csv`: each sensor's frames, by its name.
pub const RIG_POSES_HEADER: &str = "sensor,frame,time,x,y,z,qw,qx,qy,qz";

/// Writes a rig's `rows` (each sensor's name with its frame's row) to `path` as CSV —
/// [`RIG_POSES_HEADER`], then a row per sensor frame — atomically.
pub fn write_rig_poses(path: &Path, rows: &[(&str, PoseRow)]) -> Result<(), OutputError> {
    write_atomic(path, |w| {
        writeln!(w, "{RIG_POSES_HEADER}")?;
        for (name, r) in rows {
            let [x, y, z] = r.pose.translation;
            let [qw, qx, qy, qz] = r.pose.rotation;
            let (f, t) = (r.frame, r.time);
            writeln!(w, "{name},{f},{t},{x},{y},{z},{qw},{qx},{qy},{qz}")?;
        }
        Ok(())
    })
}

/// One frame's row of `weather.csv`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeatherRow {
    pub frame: u64,
    /// The frame's start since the run's first frame (s).
    pub time: f64,
    pub weather: Weather,
    /// The medium's extinction α at the sensor's wavelength (1/m).
    pub extinction: f32,
}

/// The header row of `weather.csv`.
pub const WEATHER_HEADER: &str =
    "frame,time,weather,visibility_m,rain_mm_h,snow_mm_h,extinction_per_m";

/// Writes `rows` to `path` as CSV — a header row, then per frame its weather in the
/// `--weather` form (quoted: it holds commas), the visibility (empty without fog), the
/// rain and snow rates and the extinction — atomically.
pub fn write_weather(path: &Path, rows: &[WeatherRow]) -> Result<(), OutputError> {
    write_atomic(path, |w| {
        writeln!(w, "{WEATHER_HEADER}")?;
        for r in rows {
            let v = r
                .weather
                .visibility_m
                .map(|v| v.to_string())
                .unwrap_or_default();
            let (rain, snow) = (r.weather.rain_mm_h, r.weather.snow_mm_h);
            let (f, t, e) = (r.frame, r.time, r.extinction);
            writeln!(w, "{f},{t},\"{}\",{v},{rain},{snow},{e}", r.weather)?;
        }
        Ok(())
    })
}

/// The sweep-end poses (`poses_end.csv`): a row per frame as in `poses.csv`, the time
/// and pose those of the frame's last beam — where a lidar odometry's estimate for the
/// frame stands (KISS-ICP and most others deskew to the sweep's end).
pub const SWEEP_END_POSES_FILE: &str = "poses_end.csv";
/// The sweep-end poses in KITTI odometry's form: per frame the 3×4 matrix, row-major,
/// that takes the frame's sensor coordinates into the first frame's.
pub const KITTI_POSES_FILE: &str = "poses_kitti.txt";
/// The sweep-end poses in TUM's trajectory form: `time tx ty tz qx qy qz qw` (world).
pub const TUM_POSES_FILE: &str = "poses_tum.txt";

/// Writes `rows` (sweep-end poses) as [`SWEEP_END_POSES_FILE`], [`KITTI_POSES_FILE`] and
/// [`TUM_POSES_FILE`] into `dir`, each atomically; returns their paths.
pub fn write_sweep_end_poses(
    dir: &Path,
    rows: &[PoseRow],
) -> Result<Vec<std::path::PathBuf>, OutputError> {
    let csv = dir.join(SWEEP_END_POSES_FILE);
    write_poses(&csv, rows)?;
    let kitti = dir.join(KITTI_POSES_FILE);
    let first = rows.first().map_or(DAffine3::IDENTITY, |r| affine(&r.pose));
    write_atomic(&kitti, |w| {
        for r in rows {
            let m = first.inverse() * affine(&r.pose);
            let (a, t) = (m.matrix3, m.translation);
            let row =
                |i: usize| format!("{} {} {} {}", a.col(0)[i], a.col(1)[i], a.col(2)[i], t[i]);
            writeln!(w, "{} {} {}", row(0), row(1), row(2))?;
        }
        Ok(())
    })?;
    let tum = dir.join(TUM_POSES_FILE);
    write_atomic(&tum, |w| {
        for r in rows {
            let [x, y, z] = r.pose.translation;
            let [qw, qx, qy, qz] = r.pose.rotation;
            writeln!(w, "{} {x} {y} {z} {qx} {qy} {qz} {qw}", r.time)?;
        }
        Ok(())
    })?;
    Ok(vec![csv, kitti, tum])
}

/// A pose as an affine map in f64 (the KITTI matrices are products of two poses).
pub(crate) fn affine(p: &Viewpoint) -> DAffine3 {
    let [qw, qx, qy, qz] = p.rotation.map(f64::from);
    let rotation = DQuat::from_xyzw(qx, qy, qz, qw).normalize();
    DAffine3::from_rotation_translation(rotation, DVec3::from(p.translation.map(f64::from)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_header_row_then_a_row_per_frame() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("poses.csv");
        let pose = Viewpoint {
            translation: [5.0, 2.0, 1.8],
            rotation: [0.5, 0.0, 0.0, -0.25],
        };
        let rows = [
            PoseRow {
                frame: 0,
                time: 0.0,
                pose,
            },
            PoseRow {
                frame: 1,
                time: 0.1,
                pose,
            },
        ];
        write_poses(&path, &rows).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "frame,time,x,y,z,qw,qx,qy,qz\n0,0,5,2,1.8,0.5,0,0,-0.25\n1,0.1,5,2,1.8,0.5,0,0,-0.25\n"
        );
    }
}
