//! Lidar packets made on the GPU against the host's encoders, which are the reference
//! (tests/formats checks those against ouster-sdk): for every Ouster profile, frames of
//! the bundled street traced on the GPU give byte for byte the packets the host encodes
//! from the same frames' points — headers, timestamps, frame ids, each pixel's ranked
//! returns, reflectivity, signal, near-IR and the footers' CRCs.

use crate::support::{assert_no_validation_messages, context};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::packets::{
    OusterFamily, OusterOptions, OusterProfile, OusterSensor, PacketEncoder,
};
use beamtrace::output::BeamDesc;
use beamtrace::scene::{load_scene, Scene};
use beamtrace::sensor::{preset, Pose, Sensor};
use beamtrace::sim::{to_point_cloud, DriverInputs, DriverSensor, FrameDriver, Play, Sun};
use glam::Vec3;
use std::path::Path;

fn street() -> Scene {
    load_scene(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/street.glb"))
        .expect("the bundled street")
}

fn ouster_of(sensor: &Sensor, profile: OusterProfile) -> OusterSensor {
    let mut options = OusterOptions::new(OusterFamily::Os1, profile);
    options.serial = 992_146_000_760;
    options.init_id = 4_321_987;
    options.start_ns = 1_700_000_000_123_456_789;
    let beams: Vec<BeamDesc> = beamtrace::job::beam_layout(sensor).beams().to_vec();
    OusterSensor::new(options, &beams, sensor.columns, sensor.frame_rate)
        .expect("an Ouster preset fits Ouster's packets")
}

/// Frames `frames` of `sensor` on the street, the GPU's packets beside the host
/// encoder's from the same frames' points; asserts they are equal.
fn assert_gpu_packets_equal_the_encoders(sensor: Sensor, profile: OusterProfile, frames: &[u64]) {
    let ctx = context();
    let scene = street();
    let materials = MaterialDb::builtin().expect("materials");
    let mapping = MaterialMapping::default();
    let inputs = DriverInputs {
        scene: &scene,
        scene_name: "street",
        sensors: DriverSensor::one(sensor.clone(), 7),
        materials: &materials,
        mapping: &mapping,
        vehicle_pose: Pose::default(),
        play: Play::Still,
        sun: Some(Sun {
            direction: Vec3::new(0.3, 0.2, 1.0).normalize(),
            irradiance: 1.0,
        }),
        weather: None,
    };
    let mut driver = FrameDriver::new(&ctx, inputs).expect("the street on the device");
    let ouster = ouster_of(&sensor, profile);
    driver.set_lane_packets(0, &ouster).expect("packets");
    let mut encoder = ouster.encoder();
    for &frame in frames {
        let submitted = driver.submit(frame).expect("submit");
        let done = driver.collect(submitted).expect("collect");
        let gpu = done.output.packets.as_ref().expect("the frame's packets");
        assert_eq!(gpu.unfit_beam, None, "every point fits the packets");
        let cloud = to_point_cloud(&sensor.beams, &done.output.points).expect("cloud");
        assert!(cloud.points.len() > 1000, "the street fills the view");
        let t = driver.frame_time(frame);
        let host = encoder.push_frame(frame, t, &cloud).expect("host packets");
        let made = ouster.packets_from_bytes(t, &gpu.bytes);
        assert_eq!(made.len(), host.len(), "{profile}: packets per frame");
        for (k, (g, h)) in made.iter().zip(&host).enumerate() {
            assert_eq!((g.time_s, g.port), (h.time_s, h.port), "packet {k}");
            if let Some(at) = (0..h.payload.len()).find(|&i| g.payload[i] != h.payload[i]) {
                panic!(
                    "{profile}, frame {frame}, packet {k}: byte {at} of {} differs \
                     (GPU {:?}, host {:?})",
                    h.payload.len(),
                    &g.payload[at..(at + 16).min(h.payload.len())],
                    &h.payload[at..(at + 16).min(h.payload.len())]
                );
            }
        }
    }
    assert_no_validation_messages(&ctx);
}

#[test]
fn gpu_packets_of_the_dual_profile_are_the_encoders_bytes() {
    let sensor = preset("os1-64", Some(512)).expect("preset").thin();
    let dual = OusterProfile::Rng19Rfl8Sig16Nir16Dual;
    // Frame 65 537: its 16-bit frame id wraps to 1, its timestamps are 6 553.7 s in.
    assert_gpu_packets_equal_the_encoders(sensor, dual, &[0, 65_537]);
}

#[test]
fn gpu_packets_of_the_single_return_and_legacy_profiles_are_the_encoders_bytes() {
    // Two returns per beam, of which the single-return profiles carry the strongest.
    let sensor = preset("os1-32", Some(1024)).expect("preset").thin();
    assert_gpu_packets_equal_the_encoders(sensor.clone(), OusterProfile::Rng19Rfl8Sig16Nir16, &[3]);
    assert_gpu_packets_equal_the_encoders(sensor, OusterProfile::Legacy, &[2]);
}
