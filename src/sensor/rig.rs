//! Rig files: a vehicle's LiDARs, each at its mount, and the rig's clock.
//!
//! ```yaml
//! name: roof-and-corners
//! sensors:
//!   - { name: top, sensor: os1-128, mount: { translation: [0, 0, 1.9] } }
//!   - name: front_left
//!     sensor: vlp-16                  # a preset, or a sensor YAML relative to this file
//!     mount: { translation: [2.0, 0.8, 0.6], rotation_deg: [0, 0, 45] }
//!     frame_rate: 20                  # optional overrides of the sensor's own values
//!     seed: 7                         # its noise's seed (default: the run's seed + index)
//!     packets: vlp16                  # its wire format in `stream` and `--pcap`
//!     port: 2369                      # its UDP port (default: the format's)
//! imu: { name: imu, mount: { translation: [0, 0, 0.5] }, rate_hz: 100 }   # optional
//! clock: { start_unix_s: 1700000000.0 }
//! ```
//!
//! The `imu` entry is [`ImuSpec`]'s YAML (noise defaults: the OS1's ICM-20948).
//!
//! A member's `mount` places it on the vehicle and replaces the one its sensor file
//! gives; its name names its output folder, its MCAP topic (`/<name>/points`) and its
//! frame id, so it must be a ROS name: a letter, then letters, digits and `_`.

use super::domain::{self, MAX_NAME_CHARS};
use super::file::{load_sensor_with, names_a_file, MountSpec};
use super::{ImuSpec, Sensor, SensorError};
use crate::config::{load_yaml, ConfigError, PathPolicy};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Sensors a rig may hold: more than any vehicle carries, few enough that every
/// member's buffers are checked before any is made.
pub const MAX_RIG_SENSORS: usize = 32;

/// A vehicle's sensors and its clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Rig {
    pub name: String,
    pub sensors: Vec<RigSensor>,
    /// The vehicle's IMU, if it has one.
    pub imu: Option<ImuSpec>,
    pub clock: RigClock,
    /// The file it came from (`None`: a rig of the `--sensor` shorthand).
    pub path: Option<PathBuf>,
}

/// One LiDAR of a rig.
#[derive(Debug, Clone, PartialEq)]
pub struct RigSensor {
    /// Its output folder, MCAP topic prefix and frame id.
    pub name: String,
    /// The sensor at its mount on the vehicle, with the entry's frame rate.
    pub sensor: Sensor,
    /// The seed of its noise; `None`: the run's seed plus its index in the rig.
    pub seed: Option<u64>,
    /// Its `--packets` format name, checked where packets are made.
    pub packets: Option<String>,
    /// Its UDP port; `None`: the format's own.
    pub port: Option<u16>,
}

/// One clock for every sensor of the rig.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RigClock {
    /// Unix time (s) of scenario time 0; `None`: the run's own (`--start-time`).
    pub start_unix_s: Option<f64>,
}

/// The latest rig clock start (s): pcap records hold 32-bit Unix seconds.
pub const MAX_UNIX_S: f64 = u32::MAX as f64;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RigFile {
    name: Option<String>,
    sensors: Vec<SensorEntry>,
    imu: Option<ImuSpec>,
    clock: Option<ClockEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SensorEntry {
    name: String,
    sensor: String,
    mount: Option<MountSpec>,
    frame_rate: Option<f32>,
    seed: Option<u64>,
    packets: Option<String>,
    port: Option<u16>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockEntry {
    start_unix_s: f64,
}

impl Rig {
    /// The rig of one sensor (the `--sensor` shorthand), named as ROS drivers name the
    /// sensor's frame: its name with `-` as `_`.
    pub fn single(sensor: Sensor) -> Rig {
        Rig {
            name: ros_name(&sensor.name),
            sensors: vec![RigSensor {
                name: ros_name(&sensor.name),
                sensor,
                seed: None,
                packets: None,
                port: None,
            }],
            imu: None,
            clock: RigClock::default(),
            path: None,
        }
    }

    /// Member `index`'s seed in a run of `seed`.
    pub fn seed_of(&self, index: usize, seed: u64) -> u64 {
        self.sensors[index]
            .seed
            .unwrap_or_else(|| seed.wrapping_add(index as u64))
    }
}

/// `name` as a ROS name: characters other than letters, digits and `_` become `_`,
/// and a leading digit gets an `_` before it.
pub fn ros_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c,
            false => '_',
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

/// Loads and checks a rig file; its members' sensor files are found relative to it.
pub fn load_rig(path: &Path) -> Result<Rig, SensorError> {
    let file: RigFile = load_yaml(path)?;
    let invalid = |field: String, message: String| -> SensorError {
        ConfigError::invalid(path, field, message).into()
    };
    if file.sensors.is_empty() {
        return Err(invalid(
            "sensors".into(),
            "a rig needs at least one sensor: add an entry `- { name: top, sensor: vlp-16 }`"
                .into(),
        ));
    }
    if file.sensors.len() > MAX_RIG_SENSORS {
        return Err(invalid(
            "sensors".into(),
            format!(
                "{} sensors; a rig holds at most {MAX_RIG_SENSORS}",
                file.sensors.len()
            ),
        ));
    }
    check_entries(&file.sensors).map_err(|(f, m)| invalid(f, m))?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let sensors = (file.sensors.iter().enumerate())
        .map(|(i, e)| member(e, i, folder, path))
        .collect::<Result<Vec<_>, _>>()?;
    let clock = match file.clock {
        Some(c) if !(0.0..=MAX_UNIX_S).contains(&c.start_unix_s) => {
            return Err(invalid(
                "clock.start_unix_s".into(),
                format!(
                    "{:e} is not a Unix time of 0 to {MAX_UNIX_S} s (pcap's 32-bit seconds, \
                     the year 2106)",
                    c.start_unix_s
                ),
            ))
        }
        c => RigClock {
            start_unix_s: c.map(|c| c.start_unix_s),
        },
    };
    let name = file.name.unwrap_or_else(|| {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("rig");
        ros_name(stem)
    });
    domain::check_name(&name).map_err(|e| in_rig(path, e))?;
    if let Some(imu) = &file.imu {
        if sensors.iter().any(|s| s.name == imu.name) {
            return Err(invalid(
                "imu.name".into(),
                format!(
                    "`{}` is also a sensor's name: the IMU needs its own",
                    imu.name
                ),
            ));
        }
    }
    Ok(Rig {
        name,
        sensors,
        imu: file.imu,
        clock,
        path: Some(path.to_path_buf()),
    })
}

/// The entries' names (ROS names, each once) and explicit ports (each once).
fn check_entries(entries: &[SensorEntry]) -> Result<(), (String, String)> {
    for (i, e) in entries.iter().enumerate() {
        let field = format!("sensors[{i}].name");
        if let Some(why) = not_a_ros_name(&e.name) {
            return Err((field, format!("`{}` {why}", e.name)));
        }
        if let Some(j) = entries[..i].iter().position(|o| o.name == e.name) {
            return Err((
                field,
                format!(
                    "`{}` is also the name of sensors[{j}]: each sensor of a rig needs a \
                     name of its own (its folder, topic and frame id)",
                    e.name
                ),
            ));
        }
        let earlier = entries[..i]
            .iter()
            .position(|o| o.port.is_some() && o.port == e.port);
        if let (Some(j), Some(port)) = (earlier, e.port) {
            return Err((
                format!("sensors[{i}].port"),
                format!(
                    "UDP port {port} is also sensors[{j}]'s (`{}`): give each sensor a \
                     port of its own",
                    entries[j].name
                ),
            ));
        }
    }
    Ok(())
}

/// Why `name` is no ROS name (a topic's and a frame id's part), if it is not.
fn not_a_ros_name(name: &str) -> Option<String> {
    let first_ok = name.starts_with(|c: char| c.is_ascii_alphabetic());
    let rest_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if name.chars().count() > MAX_NAME_CHARS {
        return Some(format!("is longer than {MAX_NAME_CHARS} characters"));
    }
    (!first_ok || !rest_ok).then(|| {
        "is no ROS name: it names the sensor's folder, topic and frame id, so use a letter, \
         then letters, digits and `_` (e.g. `front_left`)"
            .to_string()
    })
}

/// Entry `index` as a member: its sensor loaded (a file relative to the rig's folder),
/// at its mount and rate.
fn member(
    e: &SensorEntry,
    index: usize,
    folder: &Path,
    rig: &Path,
) -> Result<RigSensor, SensorError> {
    let spec = match names_a_file(&e.sensor) && Path::new(&e.sensor).is_relative() {
        true => folder.join(&e.sensor).to_string_lossy().into_owned(),
        false => e.sensor.clone(),
    };
    let at = |e: SensorError| -> SensorError {
        ConfigError::invalid(rig, format!("sensors[{index}].sensor"), e.to_string()).into()
    };
    let mut sensor = load_sensor_with(&spec, PathPolicy::default()).map_err(at)?;
    if let Some(m) = &e.mount {
        sensor.mount = m.pose_in(rig, &format!("sensors[{index}].mount"))?;
    }
    if let Some(rate) = e.frame_rate {
        let field = format!("sensors[{index}].frame_rate");
        domain::FRAME_RATE
            .check(&field, f64::from(rate))
            .map_err(|e| in_rig(rig, e))?;
        sensor.frame_rate = rate;
    }
    Ok(RigSensor {
        name: e.name.clone(),
        sensor,
        seed: e.seed,
        packets: e.packets.clone(),
        port: e.port,
    })
}

/// A value's error as the rig file's.
fn in_rig(rig: &Path, e: SensorError) -> SensorError {
    match e {
        SensorError::Invalid { field, message } => ConfigError::invalid(rig, field, message).into(),
        other => other,
    }
}
