//! The sensor pose of every frame of a run, and its weather, as CSV files.

use super::{write_atomic, OutputError, Viewpoint};
use crate::weather::Weather;
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
