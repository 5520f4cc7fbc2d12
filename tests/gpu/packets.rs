//! Packets and clouds made on the GPU against the host's encoders and conversion, which
//! are the reference (tests/formats checks the encoders against ouster-sdk and
//! velodyne_decoder): frames of the bundled street traced on the GPU give byte for byte
//! the packets the host encodes from the same frames' points — for every Ouster profile
//! (headers, timestamps, frame ids, each pixel's ranked returns, reflectivity, signal,
//! near-IR, the footers' CRCs) and every Velodyne model and return mode (each beam's
//! channels, framed into packets whose firings straddle frames) — and the cloud the
//! compaction converts is the host's conversion of the same frame.

use crate::support::{assert_no_validation_messages, context};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::packets::{
    HesaiEncoder, HesaiModel, HesaiOptions, HesaiReturnMode, Made, OusterFamily, OusterOptions,
    OusterProfile, OusterSensor, PacketEncoder, VelodyneEncoder, VelodyneModel, VelodyneOptions,
    VelodyneReturnMode,
};
use beamtrace::output::BeamDesc;
use beamtrace::scene::{load_scene, Scene};
use beamtrace::sensor::{preset, Pose, Sensor};
use beamtrace::sensor::{DualPolicy, ReturnMode};
use beamtrace::sim::{
    to_point_cloud, DriverInputs, DriverSensor, FrameDriver, GpuPacketFormat, Play, Sun,
};
use glam::Vec3;
use std::path::Path;
use std::time::Duration;

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

/// A driver of `sensor` on the street, still, in sunlight.
fn street_driver(sensor: &Sensor) -> FrameDriver {
    let sun = Sun {
        direction: Vec3::new(0.3, 0.2, 1.0).normalize(),
        irradiance: 1.0,
    };
    driver_on(&street(), "street", sensor, Some(sun))
}

/// A driver of `sensor` on `scene`, still.
fn driver_on(scene: &Scene, name: &str, sensor: &Sensor, sun: Option<Sun>) -> FrameDriver {
    let materials = MaterialDb::builtin().expect("materials");
    let mapping = MaterialMapping::default();
    let inputs = DriverInputs {
        scene,
        scene_name: name,
        sensors: DriverSensor::one(sensor.clone(), 7),
        materials: &materials,
        mapping: &mapping,
        vehicle_pose: Pose::default(),
        play: Play::Still,
        sun,
        weather: None,
    };
    FrameDriver::new(&context(), inputs).expect("the scene on the device")
}

/// Frames `frames` of the driver's sensor: the packets of what the GPU made for
/// `format` through one encoder, beside the packets of the same frames' points through
/// another; asserts they are equal.
fn assert_gpu_packets_equal_the_encoders(
    driver: &mut FrameDriver,
    format: &GpuPacketFormat,
    mut encoders: [Box<dyn PacketEncoder>; 2],
    frames: &[u64],
) {
    driver.set_lane_packets(0, format).expect("packets");
    let beams = driver.sensor().beams.clone();
    let scale = driver.sensor().reflectivity;
    for &frame in frames {
        let submitted = driver.submit(frame).expect("submit");
        let done = driver.collect(submitted).expect("collect");
        let gpu = done.output.packets.as_ref().expect("the frame's packets");
        assert_eq!(gpu.unfit_beam, None, "every point fits the packets");
        let cloud = to_point_cloud(&beams, &done.output.points, scale).expect("cloud");
        assert!(cloud.points.len() > 1000, "the street fills the view");
        let t = driver.frame_time(frame);
        let host = encoders[0]
            .push_frame(frame, t, &cloud)
            .expect("host packets");
        let made = match format {
            GpuPacketFormat::Ouster(s) => Made::Packets(s.packets_from_bytes(t, &gpu.bytes)),
            GpuPacketFormat::Velodyne { .. } | GpuPacketFormat::Hesai { .. } => {
                Made::Channels(&gpu.channels)
            }
        };
        let made = encoders[1].push_made(frame, t, made).expect("GPU packets");
        assert_packets_equal(&made, &host, &format!("{format:?}, frame {frame}"));
    }
    let last = [encoders[0].finish(), encoders[1].finish()];
    assert_packets_equal(&last[1], &last[0], "the last held firings");
    assert_no_validation_messages(driver.context());
}

fn assert_packets_equal(
    gpu: &[beamtrace::output::packets::Packet],
    host: &[beamtrace::output::packets::Packet],
    what: &str,
) {
    let what = &what[..what.len().min(120)];
    assert_eq!(gpu.len(), host.len(), "{what}: packets");
    for (k, (g, h)) in gpu.iter().zip(host).enumerate() {
        assert_eq!((g.time_s, g.port), (h.time_s, h.port), "{what}: packet {k}");
        assert_eq!(
            g.payload.len(),
            h.payload.len(),
            "{what}: packet {k}'s size"
        );
        if let Some(at) = (0..h.payload.len()).find(|&i| g.payload[i] != h.payload[i]) {
            let end = (at + 16).min(h.payload.len());
            panic!(
                "{what}, packet {k}: byte {at} of {} differs (GPU {:?}, host {:?})",
                h.payload.len(),
                &g.payload[at..end],
                &h.payload[at..end]
            );
        }
    }
}

fn assert_ouster(sensor: Sensor, profile: OusterProfile, frames: &[u64]) {
    let mut driver = street_driver(&sensor);
    let ouster = ouster_of(&sensor, profile);
    let encoders: [Box<dyn PacketEncoder>; 2] =
        [Box::new(ouster.encoder()), Box::new(ouster.encoder())];
    let format = GpuPacketFormat::Ouster(ouster);
    assert_gpu_packets_equal_the_encoders(&mut driver, &format, encoders, frames);
}

#[test]
fn gpu_packets_of_the_dual_profile_are_the_encoders_bytes() {
    let sensor = preset("os1-64", Some(512)).expect("preset").thin();
    let dual = OusterProfile::Rng19Rfl8Sig16Nir16Dual;
    // Frame 65 537: its 16-bit frame id wraps to 1, its timestamps are 6 553.7 s in.
    assert_ouster(sensor, dual, &[0, 65_537]);
}

#[test]
fn gpu_packets_of_the_single_return_and_legacy_profiles_are_the_encoders_bytes() {
    // Two returns per beam, of which the single-return profiles carry the strongest.
    let sensor = preset("os1-32", Some(1024)).expect("preset").thin();
    assert_ouster(sensor.clone(), OusterProfile::Rng19Rfl8Sig16Nir16, &[3]);
    assert_ouster(sensor, OusterProfile::Legacy, &[2]);
}

/// Every return mode of `model`'s preset, made dual (two echoes a beam) so that each
/// mode has echoes to choose from; three frames, whose firings straddle packets.
fn assert_velodyne(model: VelodyneModel) {
    let mut sensor = preset(model.preset(), None).expect("preset").thin();
    sensor.detector.return_mode = ReturnMode::Dual(DualPolicy::StrongestLast);
    sensor.detector.max_returns = 2;
    let mut driver = street_driver(&sensor);
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    for mode in VelodyneReturnMode::ALL {
        let options = VelodyneOptions {
            model,
            return_mode: mode,
            start: Duration::from_secs_f64(1_700_000_123.25),
        };
        let encoder = || -> Box<dyn PacketEncoder> {
            Box::new(
                VelodyneEncoder::new(
                    options,
                    &beams,
                    sensor.columns,
                    f64::from(sensor.frame_rate),
                )
                .expect("the preset fits its packets"),
            )
        };
        let format = GpuPacketFormat::Velodyne { model, mode };
        assert_gpu_packets_equal_the_encoders(
            &mut driver,
            &format,
            [encoder(), encoder()],
            &[0, 1, 2],
        );
    }
}

#[test]
fn gpu_channels_of_the_vlp16_and_hdl32e_frame_the_encoders_packets_in_every_mode() {
    assert_velodyne(VelodyneModel::Vlp16);
    assert_velodyne(VelodyneModel::Hdl32e);
}

#[test]
fn gpu_channels_of_the_hdl64e_vlp32c_and_vls128_frame_the_encoders_packets_in_every_mode() {
    assert_velodyne(VelodyneModel::Hdl64e);
    assert_velodyne(VelodyneModel::Vlp32c);
    assert_velodyne(VelodyneModel::Vls128);
}

/// The PandarXT32's channels made on the GPU frame the same packets as the host's
/// encoder in each mode the GPU makes (last, strongest, dual), on a dual-return frame.
#[test]
fn gpu_channels_of_the_pandar_xt32_frame_the_encoders_packets() {
    let mut sensor = preset("pandar-xt32", None).expect("preset").thin();
    sensor.detector.return_mode = ReturnMode::Dual(DualPolicy::StrongestLast);
    sensor.detector.max_returns = 2;
    let mut driver = street_driver(&sensor);
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    let model = HesaiModel::PandarXt32;
    let modes = [
        (HesaiReturnMode::Last, VelodyneReturnMode::Last),
        (HesaiReturnMode::Strongest, VelodyneReturnMode::Strongest),
        (HesaiReturnMode::Dual, VelodyneReturnMode::Dual),
    ];
    for (hesai, mode) in modes {
        let options = HesaiOptions {
            model,
            return_mode: hesai,
            start: Duration::from_secs_f64(1_700_000_123.25),
        };
        let encoder = || -> Box<dyn PacketEncoder> {
            let frame_rate = f64::from(sensor.frame_rate);
            let e = HesaiEncoder::new(options, &beams, sensor.columns, frame_rate);
            Box::new(e.expect("the preset fits its packets"))
        };
        let format = GpuPacketFormat::Hesai { model, mode };
        assert_gpu_packets_equal_the_encoders(
            &mut driver,
            &format,
            [encoder(), encoder()],
            &[0, 1],
        );
    }
}

/// A point beyond what a VLP-16's packets carry (131.07 m): the GPU flags the frame,
/// its points are read back all the same, and the host's encoder names the point.
#[test]
fn a_point_the_packets_cannot_carry_is_flagged_and_the_encoder_says_why() {
    let mut sensor = preset("vlp-16", None).expect("preset").ideal().thin();
    sensor.max_range = 200.0;
    let spec = "wall:distance=150,size=400,material=sign_reflecting";
    let scene = beamtrace::job::procedural_scene(spec).expect("wall");
    let mut driver = driver_on(&scene, "wall", &sensor, None);
    let model = VelodyneModel::Vlp16;
    let mode = VelodyneReturnMode::Strongest;
    driver
        .set_lane_packets(0, &GpuPacketFormat::Velodyne { model, mode })
        .expect("packets");
    driver.set_read_points(beamtrace::sim::ReadPoints::CountOnly);
    let submitted = driver.submit(0).expect("submit");
    let done = driver.collect(submitted).expect("collect");
    let gpu = done.output.packets.as_ref().expect("the frame's packets");
    let cloud =
        to_point_cloud(&sensor.beams, &done.output.points, sensor.reflectivity).expect("cloud");
    let far = cloud.points.iter().map(|p| p.range).fold(0.0f32, f32::max);
    let beam = gpu.unfit_beam.unwrap_or_else(|| {
        panic!(
            "a point at 150 m does not fit ({} points, {far} m)",
            done.output.point_count
        )
    });
    assert_eq!(
        cloud.points.len(),
        done.output.point_count,
        "the points were read"
    );
    let first = cloud
        .points
        .iter()
        .find(|p| p.range > 131.07)
        .expect("a far point");
    assert_eq!(
        beam, first.beam,
        "the lowest beam beyond the packets' range"
    );
    let beams = beamtrace::job::beam_layout(&sensor).beams().to_vec();
    let options = VelodyneOptions {
        model,
        return_mode: mode,
        start: Duration::ZERO,
    };
    let mut encoder = VelodyneEncoder::new(
        options,
        &beams,
        sensor.columns,
        f64::from(sensor.frame_rate),
    )
    .expect("encoder");
    let e = encoder.push_frame(0, 0.0, &cloud).expect_err("refused");
    assert!(e.to_string().contains("beyond the 131.07 m"), "{e}");
    assert_no_validation_messages(driver.context());
}

/// The cloud the compaction converts into the host's points itself is, byte for byte,
/// what `to_point_cloud` makes of the same frame's GPU records: positions, the beams'
/// angles, rings and firing times, the reflectivity byte (retroreflective signs
/// included), the narrowed fields.
#[test]
fn the_cloud_converted_on_the_gpu_is_the_hosts_conversion() {
    use beamtrace::sim::ReadPoints;
    for sensor in [
        preset("os1-64", Some(512)).expect("preset").thin(),
        preset("vlp-16", None).expect("preset"),
    ] {
        let mut driver = street_driver(&sensor);
        let mut frames = Vec::new();
        for read in [ReadPoints::Records, ReadPoints::Cloud] {
            driver.set_read_points(read);
            let submitted = driver.submit(1).expect("submit");
            let mut done = driver.collect(submitted).expect("collect");
            frames.push(driver.take_cloud(&mut done).expect("cloud"));
        }
        let (host, gpu) = (&frames[0], &frames[1]);
        assert!(host.points.len() > 1000, "the street fills the view");
        assert_eq!(gpu.points.len(), host.points.len(), "{}", sensor.name);
        for (i, (g, h)) in gpu.points.iter().zip(&host.points).enumerate() {
            assert!(
                bytemuck::bytes_of(g) == bytemuck::bytes_of(h),
                "{} point {i}: GPU {g:?}, host {h:?}",
                sensor.name
            );
        }
        let retro = host.points.iter().filter(|p| p.reflectivity > 100).count();
        assert!(retro > 0, "{}: signs read above 100", sensor.name);
        assert_no_validation_messages(driver.context());
    }
}
