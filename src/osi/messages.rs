//! The ASAM OSI messages beamtrace reads and writes, as `prost` structs derived from
//! the specification's field numbers and types (package `osi3`, proto2 syntax). The
//! tests round-trip them through ASAM's own bindings (osi-python 3.8.0): SensorViews it
//! writes are read here, SensorData written here are read there.
//!
//! Each message holds only the fields beamtrace uses. A message read from a file with
//! fields not listed here decodes all the same: protobuf skips unknown fields, so a
//! SensorView full of lanes, traffic signs and sensor-specific views gives its ground
//! truth's moving objects and nothing else. Enumerations are kept as their `int32`
//! wire values (constants below), which is how protobuf encodes them.
//!
//! Units are OSI's: metres, radians, seconds.

use prost::Message;

/// The OSI version these messages follow (written into every message's `version`).
pub const OSI_VERSION: (u32, u32, u32) = (3, 8, 0);

/// `SensorDetectionHeader.DataQualifier.DATA_QUALIFIER_AVAILABLE`.
pub const DATA_QUALIFIER_AVAILABLE: i32 = 2;
/// `Identifier` MAX(uint64): "no reference to an object" (LidarDetection.object_id).
pub const NO_OBJECT: u64 = u64::MAX;
/// `MovingObject.Type.TYPE_VEHICLE`.
pub const MOVING_OBJECT_TYPE_VEHICLE: i32 = 2;

/// `osi3.InterfaceVersion`.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct InterfaceVersion {
    #[prost(uint32, optional, tag = "1")]
    pub version_major: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub version_minor: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub version_patch: Option<u32>,
}

impl InterfaceVersion {
    /// The version these messages follow, [`OSI_VERSION`].
    pub fn current() -> Self {
        let (major, minor, patch) = OSI_VERSION;
        InterfaceVersion {
            version_major: Some(major),
            version_minor: Some(minor),
            version_patch: Some(patch),
        }
    }
}

/// `osi3.Timestamp`: seconds and nanoseconds (0..=999 999 999) since an origin OSI
/// leaves to the simulation.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Timestamp {
    #[prost(int64, optional, tag = "1")]
    pub seconds: Option<i64>,
    #[prost(uint32, optional, tag = "2")]
    pub nanos: Option<u32>,
}

impl Timestamp {
    /// `t` seconds, rounded to the nanosecond (negative times floor to the second
    /// below, nanos counting up from it, as OSI's range for `nanos` asks).
    pub fn from_secs(t: f64) -> Self {
        let total = (t * 1e9).round() as i128;
        let seconds = total.div_euclid(1_000_000_000);
        let nanos = total.rem_euclid(1_000_000_000);
        Timestamp {
            seconds: Some(seconds as i64),
            nanos: Some(nanos as u32),
        }
    }

    /// The time in seconds; an unset part reads 0.
    pub fn secs(&self) -> f64 {
        self.seconds.unwrap_or(0) as f64 + f64::from(self.nanos.unwrap_or(0)) * 1e-9
    }
}

/// `osi3.Identifier`.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Identifier {
    #[prost(uint64, optional, tag = "1")]
    pub value: Option<u64>,
}

impl Identifier {
    pub fn new(value: u64) -> Self {
        Identifier { value: Some(value) }
    }
}

/// `osi3.Vector3d` (m, m/s or m/s²).
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Vector3d {
    #[prost(double, optional, tag = "1")]
    pub x: Option<f64>,
    #[prost(double, optional, tag = "2")]
    pub y: Option<f64>,
    #[prost(double, optional, tag = "3")]
    pub z: Option<f64>,
}

impl Vector3d {
    pub fn new(v: glam::DVec3) -> Self {
        Vector3d {
            x: Some(v.x),
            y: Some(v.y),
            z: Some(v.z),
        }
    }

    /// The vector; an unset component reads 0.
    pub fn get(&self) -> glam::DVec3 {
        glam::DVec3::new(
            self.x.unwrap_or(0.0),
            self.y.unwrap_or(0.0),
            self.z.unwrap_or(0.0),
        )
    }
}

/// `osi3.Orientation3d`: roll, pitch, yaw (rad), applied yaw first, then pitch about
/// the new y axis, then roll about the new x axis (z-y'-x''): the rotation
/// Rz(yaw)·Ry(pitch)·Rx(roll) that beamtrace's mounts and tracks use.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Orientation3d {
    #[prost(double, optional, tag = "1")]
    pub roll: Option<f64>,
    #[prost(double, optional, tag = "2")]
    pub pitch: Option<f64>,
    #[prost(double, optional, tag = "3")]
    pub yaw: Option<f64>,
}

impl Orientation3d {
    /// From (roll, pitch, yaw) in radians.
    pub fn new(rpy: glam::DVec3) -> Self {
        Orientation3d {
            roll: Some(rpy.x),
            pitch: Some(rpy.y),
            yaw: Some(rpy.z),
        }
    }

    /// (roll, pitch, yaw) in radians; an unset angle reads 0.
    pub fn rpy(&self) -> glam::DVec3 {
        glam::DVec3::new(
            self.roll.unwrap_or(0.0),
            self.pitch.unwrap_or(0.0),
            self.yaw.unwrap_or(0.0),
        )
    }
}

/// `osi3.Dimension3d` (m).
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Dimension3d {
    #[prost(double, optional, tag = "1")]
    pub length: Option<f64>,
    #[prost(double, optional, tag = "2")]
    pub width: Option<f64>,
    #[prost(double, optional, tag = "3")]
    pub height: Option<f64>,
}

/// `osi3.Spherical3d`: distance (m), azimuth and elevation (rad). OSI defines the
/// angles as the rotations that turn the frame's x axis onto the point, azimuth about
/// z first, then elevation about the new y axis, each by the right-hand rule:
/// `p = distance · Ry(elevation) · Rz(azimuth) · x̂` in the turned frames, which is
/// `(cos el·cos az, cos el·sin az, −sin el)` — so, as a pitch, a positive elevation
/// points *below* the xy-plane.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct Spherical3d {
    #[prost(double, optional, tag = "1")]
    pub distance: Option<f64>,
    #[prost(double, optional, tag = "2")]
    pub azimuth: Option<f64>,
    #[prost(double, optional, tag = "3")]
    pub elevation: Option<f64>,
}

/// `osi3.MountingPosition`: a sensor's frame relative to the vehicle's reference point.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct MountingPosition {
    #[prost(message, optional, tag = "1")]
    pub position: Option<Vector3d>,
    #[prost(message, optional, tag = "2")]
    pub orientation: Option<Orientation3d>,
}

/// `osi3.BaseMoving`: a moving object's bounding box, its centre's position and its
/// orientation in the parent (here: the world) frame, and their rates.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct BaseMoving {
    #[prost(message, optional, tag = "1")]
    pub dimension: Option<Dimension3d>,
    #[prost(message, optional, tag = "2")]
    pub position: Option<Vector3d>,
    #[prost(message, optional, tag = "3")]
    pub orientation: Option<Orientation3d>,
    #[prost(message, optional, tag = "4")]
    pub velocity: Option<Vector3d>,
    #[prost(message, optional, tag = "5")]
    pub acceleration: Option<Vector3d>,
    #[prost(message, optional, tag = "6")]
    pub orientation_rate: Option<Orientation3d>,
}

/// `osi3.MovingObject.VehicleAttributes`, the part beamtrace reads: where the vehicle's
/// reference point (the rear axle's centre) lies from its bounding box's centre.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct VehicleAttributes {
    #[prost(message, optional, tag = "4")]
    pub bbcenter_to_rear: Option<Vector3d>,
}

/// `osi3.MovingObject`.
#[derive(Clone, PartialEq, Message)]
pub struct MovingObject {
    #[prost(message, optional, tag = "1")]
    pub id: Option<Identifier>,
    #[prost(message, optional, tag = "2")]
    pub base: Option<BaseMoving>,
    /// `MovingObject.Type` (`MOVING_OBJECT_TYPE_*`).
    #[prost(int32, optional, tag = "3")]
    pub r#type: Option<i32>,
    #[prost(message, optional, tag = "5")]
    pub vehicle_attributes: Option<VehicleAttributes>,
    #[prost(string, optional, tag = "7")]
    pub model_reference: Option<String>,
}

/// `osi3.GroundTruth`, the moving objects and the host vehicle's id.
#[derive(Clone, PartialEq, Message)]
pub struct GroundTruth {
    #[prost(message, optional, tag = "1")]
    pub version: Option<InterfaceVersion>,
    #[prost(message, optional, tag = "2")]
    pub timestamp: Option<Timestamp>,
    #[prost(message, optional, tag = "3")]
    pub host_vehicle_id: Option<Identifier>,
    #[prost(message, repeated, tag = "5")]
    pub moving_object: Vec<MovingObject>,
}

/// `osi3.HostVehicleData`, its location.
#[derive(Clone, PartialEq, Message)]
pub struct HostVehicleData {
    #[prost(message, optional, tag = "1")]
    pub location: Option<BaseMoving>,
    #[prost(message, optional, tag = "9")]
    pub version: Option<InterfaceVersion>,
    #[prost(message, optional, tag = "10")]
    pub timestamp: Option<Timestamp>,
    #[prost(message, optional, tag = "11")]
    pub host_vehicle_id: Option<Identifier>,
}

/// `osi3.SensorView`: what a sensor model is given — the ground truth and the sensor's
/// mount on the host vehicle.
#[derive(Clone, PartialEq, Message)]
pub struct SensorView {
    #[prost(message, optional, tag = "1")]
    pub version: Option<InterfaceVersion>,
    #[prost(message, optional, tag = "2")]
    pub timestamp: Option<Timestamp>,
    #[prost(message, optional, tag = "3")]
    pub sensor_id: Option<Identifier>,
    #[prost(message, optional, tag = "4")]
    pub mounting_position: Option<MountingPosition>,
    #[prost(message, optional, tag = "6")]
    pub host_vehicle_data: Option<HostVehicleData>,
    #[prost(message, optional, tag = "7")]
    pub global_ground_truth: Option<GroundTruth>,
    #[prost(message, optional, tag = "8")]
    pub host_vehicle_id: Option<Identifier>,
}

/// `osi3.SensorDetectionHeader`.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct SensorDetectionHeader {
    #[prost(message, optional, tag = "1")]
    pub measurement_time: Option<Timestamp>,
    #[prost(uint64, optional, tag = "2")]
    pub cycle_counter: Option<u64>,
    #[prost(message, optional, tag = "3")]
    pub mounting_position: Option<MountingPosition>,
    /// `DataQualifier` ([`DATA_QUALIFIER_AVAILABLE`]).
    #[prost(int32, optional, tag = "5")]
    pub data_qualifier: Option<i32>,
    #[prost(uint32, optional, tag = "6")]
    pub number_of_valid_detections: Option<u32>,
    #[prost(message, optional, tag = "7")]
    pub sensor_id: Option<Identifier>,
}

/// `osi3.LidarDetection`: one point of a lidar's cloud.
#[derive(Clone, Copy, PartialEq, Message)]
pub struct LidarDetection {
    #[prost(double, optional, tag = "1")]
    pub existence_probability: Option<f64>,
    #[prost(message, optional, tag = "2")]
    pub object_id: Option<Identifier>,
    #[prost(message, optional, tag = "3")]
    pub position: Option<Spherical3d>,
    /// Unit: % (OSI).
    #[prost(double, optional, tag = "7")]
    pub intensity: Option<f64>,
    #[prost(double, optional, tag = "10")]
    pub reflectivity: Option<f64>,
    #[prost(double, optional, tag = "11")]
    pub echo_pulse_width: Option<f64>,
    #[prost(message, optional, tag = "13")]
    pub beam_id: Option<Identifier>,
}

/// `osi3.LidarDetectionData`: one lidar's detections.
#[derive(Clone, PartialEq, Message)]
pub struct LidarDetectionData {
    #[prost(message, optional, tag = "1")]
    pub header: Option<SensorDetectionHeader>,
    #[prost(message, repeated, tag = "2")]
    pub detection: Vec<LidarDetection>,
}

/// `osi3.FeatureData`: the detections of the sensors, lidar only here.
#[derive(Clone, PartialEq, Message)]
pub struct FeatureData {
    #[prost(message, optional, tag = "1")]
    pub version: Option<InterfaceVersion>,
    #[prost(message, repeated, tag = "3")]
    pub lidar_sensor: Vec<LidarDetectionData>,
}

/// `osi3.SensorData`: what a sensor model returns.
#[derive(Clone, PartialEq, Message)]
pub struct SensorData {
    #[prost(message, optional, tag = "1")]
    pub version: Option<InterfaceVersion>,
    #[prost(message, optional, tag = "2")]
    pub timestamp: Option<Timestamp>,
    #[prost(message, optional, tag = "3")]
    pub host_vehicle_location: Option<BaseMoving>,
    #[prost(message, optional, tag = "5")]
    pub sensor_id: Option<Identifier>,
    #[prost(message, optional, tag = "6")]
    pub mounting_position: Option<MountingPosition>,
    #[prost(message, repeated, tag = "8")]
    pub sensor_view: Vec<SensorView>,
    #[prost(message, optional, tag = "9")]
    pub last_measurement_time: Option<Timestamp>,
    #[prost(message, optional, tag = "26")]
    pub feature_data: Option<FeatureData>,
}
