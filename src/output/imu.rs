//! An IMU's samples as a CSV file, `imu.csv`.

use super::{write_atomic, OutputError};
use crate::model::ImuSample;
use std::path::Path;

/// The name of an IMU's CSV file in a run's output folder.
pub const IMU_FILE: &str = "imu.csv";

/// The header row of `imu.csv`.
pub const IMU_HEADER: &str = "t,ax,ay,az,gx,gy,gz";

/// Writes `samples` to `path` as CSV — the header row, then per sample its time (s),
/// specific force (m/s², gravity's reaction included) and angular rate (rad/s) in the
/// IMU's frame, each number in the shortest form that reads back to the same f64 —
/// atomically.
pub fn write_imu_csv(path: &Path, samples: &[ImuSample]) -> Result<(), OutputError> {
    write_atomic(path, |w| {
        writeln!(w, "{IMU_HEADER}")?;
        for s in samples {
            let [ax, ay, az] = s.accel.to_array();
            let [gx, gy, gz] = s.gyro.to_array();
            writeln!(w, "{},{ax},{ay},{az},{gx},{gy},{gz}", s.t)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn rows_read_back_to_the_same_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(IMU_FILE);
        let samples = [
            ImuSample {
                index: 3,
                t: 0.03,
                accel: DVec3::new(0.1, -2.5e-7, 9.80665),
                gyro: DVec3::new(1.0 / 3.0, 0.0, -0.5),
            },
            ImuSample {
                index: 4,
                t: 0.04,
                accel: DVec3::new(1e300, -0.0, 1.0),
                gyro: DVec3::ZERO,
            },
        ];
        write_imu_csv(&path, &samples).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("t,ax,ay,az,gx,gy,gz"));
        for s in &samples {
            let row: Vec<f64> = lines
                .next()
                .unwrap()
                .split(',')
                .map(|v| v.parse().unwrap())
                .collect();
            let want: Vec<f64> = std::iter::once(s.t)
                .chain(s.accel.to_array())
                .chain(s.gyro.to_array())
                .collect();
            assert_eq!(row, want);
        }
        assert_eq!(lines.next(), None);
    }
}
