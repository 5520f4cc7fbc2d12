//! The sensor pose of every frame of a run, as one CSV file.

use super::{write_atomic, OutputError, Viewpoint};
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
