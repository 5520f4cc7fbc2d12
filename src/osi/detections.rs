//! A frame's points as an OSI `SensorData`: one `LidarDetectionData` in
//! `feature_data.lidar_sensor[0]`, a `LidarDetection` per point.
//!
//! Per detection:
//!
//! * `position`: the point in the sensor frame (x forward, y left, z up, DESIGN §1) in
//!   OSI's spherical coordinates — `distance` = |p| from the sensor's origin,
//!   `azimuth` = atan2(y, x), `elevation` = −atan2(z, √(x² + y²)): OSI turns the
//!   frame's x axis onto the point by azimuth about z, then elevation about the new y
//!   axis by the right-hand rule, so points above the xy-plane have negative elevation
//!   (`Spherical3d`). `distance` is the point's distance from the sensor's origin, which
//!   differs from the `range` field where beams start off it (the OS1's 15.8 mm).
//! * `intensity`: the apparent reflectance R_app in % (OSI's unit; 100 = a white
//!   Lambertian target at normal incidence), and `reflectivity` the same as a fraction;
//! * `echo_pulse_width`: the echo's width in metres (beamtrace's `epw`, × 2/c for
//!   seconds);
//! * `beam_id`: the beam's index in the pattern (beamtrace's `beam`);
//! * `object_id`: the ground-truth object the echo's dominant return hit — its OSI id
//!   when its node (or an ancestor) has one, from `--osi-ground-truth` or
//!   `extras.osi_id`, else beamtrace's instance id; MAX(uint64), OSI's "no object",
//!   for echoes of the air (fog, rain, snow) and false alarms;
//! * `existence_probability`: 1, but 0 for false alarms (noise echoes with no target,
//!   which the simulation knows to be false).
//!
//! The header and the message carry the frame's timestamp, its number
//! (`cycle_counter`), the sensor's id and its mounting position on the vehicle
//! (position and roll, pitch, yaw from the sensor's `mount`), and the vehicle's
//! location in the world when the frame began.

use super::messages::*;
use crate::model::Point;
use crate::sensor::Pose;
use glam::{Affine3A, DVec3};
use std::collections::HashMap;

/// Semantic class of echoes of the medium (`scene::SemanticClass::Weather`).
const WEATHER_CLASS: u16 = 13;

/// What a frame's SensorData says besides its points.
pub struct FrameStamp<'a> {
    /// The frame's timestamp (s): its scenario time, from the input trace's origin
    /// when one drives the scene.
    pub time: f64,
    /// The frame's number.
    pub frame: u64,
    /// The sensor's id (its index in a rig; 0 alone).
    pub sensor_id: u64,
    /// The sensor's mount on the vehicle.
    pub mount: &'a Pose,
    /// The vehicle's pose (vehicle → world) when the frame began.
    pub vehicle: Affine3A,
    /// OSI id per instance id, where an instance has one.
    pub object_ids: &'a HashMap<u32, u64>,
    /// The frame's ground truth, embedded as `sensor_view[0]`.
    pub sensor_view: Option<SensorView>,
}

/// The mounting position of `mount`: its translation and roll, pitch, yaw.
pub fn mounting_position(mount: &Pose) -> MountingPosition {
    let (yaw, pitch, roll) = mount.rotation.as_dquat().to_euler(glam::EulerRot::ZYX);
    MountingPosition {
        position: Some(Vector3d::new(mount.translation.as_dvec3())),
        orientation: Some(Orientation3d::new(DVec3::new(roll, pitch, yaw))),
    }
}

/// The point's OSI spherical position in the sensor frame (see the module).
pub fn spherical(p: &Point) -> Spherical3d {
    let (x, y, z) = (f64::from(p.x), f64::from(p.y), f64::from(p.z));
    Spherical3d {
        distance: Some((x * x + y * y + z * z).sqrt()),
        azimuth: Some(y.atan2(x)),
        elevation: Some(-z.atan2(x.hypot(y))),
    }
}

/// One point as a detection.
pub fn detection(p: &Point, object_ids: &HashMap<u32, u64>) -> LidarDetection {
    let false_alarm = p.instance == 0 && p.class != WEATHER_CLASS;
    let object = match p.instance {
        0 => NO_OBJECT,
        i => object_ids.get(&i).copied().unwrap_or(u64::from(i)),
    };
    LidarDetection {
        existence_probability: Some(if false_alarm { 0.0 } else { 1.0 }),
        object_id: Some(Identifier::new(object)),
        position: Some(spherical(p)),
        intensity: Some(f64::from(p.intensity) * 100.0),
        reflectivity: Some(f64::from(p.intensity)),
        echo_pulse_width: Some(f64::from(p.epw)),
        beam_id: Some(Identifier::new(u64::from(p.beam))),
    }
}

/// The vehicle's pose as OSI's `BaseMoving` (its reference point's position and its
/// orientation).
pub fn base_of(pose: Affine3A) -> BaseMoving {
    let (_, q, t) = pose.to_scale_rotation_translation();
    let (yaw, pitch, roll) = q.as_dquat().to_euler(glam::EulerRot::ZYX);
    BaseMoving {
        position: Some(Vector3d::new(t.as_dvec3())),
        orientation: Some(Orientation3d::new(DVec3::new(roll, pitch, yaw))),
        ..Default::default()
    }
}

/// The SensorData of a frame of `points` (sensor frame).
pub fn sensor_data(points: &[Point], stamp: FrameStamp) -> SensorData {
    let time = Timestamp::from_secs(stamp.time);
    let mount = mounting_position(stamp.mount);
    let sensor_id = Identifier::new(stamp.sensor_id);
    let header = SensorDetectionHeader {
        measurement_time: Some(time),
        cycle_counter: Some(stamp.frame),
        mounting_position: Some(mount),
        data_qualifier: Some(DATA_QUALIFIER_AVAILABLE),
        number_of_valid_detections: Some(u32::try_from(points.len()).unwrap_or(u32::MAX)),
        sensor_id: Some(sensor_id),
    };
    let detection = (points.iter())
        .map(|p| detection(p, stamp.object_ids))
        .collect();
    SensorData {
        version: Some(InterfaceVersion::current()),
        timestamp: Some(time),
        host_vehicle_location: Some(base_of(stamp.vehicle)),
        sensor_id: Some(sensor_id),
        mounting_position: Some(mount),
        sensor_view: stamp.sensor_view.into_iter().collect(),
        last_measurement_time: Some(time),
        feature_data: Some(FeatureData {
            version: Some(InterfaceVersion::current()),
            lidar_sensor: vec![LidarDetectionData {
                header: Some(header),
                detection,
            }],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f32, y: f32, z: f32) -> Point {
        Point {
            x,
            y,
            z,
            instance: 3,
            ..Default::default()
        }
    }

    /// OSI's formula, p = d·(cos el·cos az, cos el·sin az, −sin el), gives the point
    /// back: above the sensor a negative elevation, to the left a positive azimuth.
    #[test]
    fn spherical_positions_follow_osis_rotations() {
        for p in [
            point(3.0, 4.0, 1.0),
            point(-2.0, -1.0, -0.5),
            point(0.0, 5.0, 2.0),
        ] {
            let s = spherical(&p);
            let (d, az, el) = (
                s.distance.unwrap(),
                s.azimuth.unwrap(),
                s.elevation.unwrap(),
            );
            let back = DVec3::new(el.cos() * az.cos(), el.cos() * az.sin(), -el.sin()) * d;
            let want = DVec3::new(p.x.into(), p.y.into(), p.z.into());
            assert!((back - want).length() < 1e-9, "{back} vs {want}");
        }
        let up = spherical(&point(1.0, 1.0, 1.0));
        assert!(up.elevation.unwrap() < 0.0 && up.azimuth.unwrap() > 0.0);
    }

    #[test]
    fn false_alarms_and_air_echoes_have_no_object() {
        let ids = HashMap::from([(3u32, 42u64)]);
        let hit = detection(&point(1.0, 0.0, 0.0), &ids);
        assert_eq!(hit.object_id.unwrap().value, Some(42));
        let mut other = point(1.0, 0.0, 0.0);
        other.instance = 5;
        assert_eq!(detection(&other, &ids).object_id.unwrap().value, Some(5));
        let mut noise = point(1.0, 0.0, 0.0);
        noise.instance = 0;
        let d = detection(&noise, &ids);
        assert_eq!(
            (d.object_id.unwrap().value, d.existence_probability),
            (Some(NO_OBJECT), Some(0.0))
        );
        noise.class = WEATHER_CLASS;
        assert_eq!(detection(&noise, &ids).existence_probability, Some(1.0));
    }
}
