//! Which wire format a run's packets take, and the encoder for the run's sensor.

use super::rig::Member;
use super::{beam_layout, JobError, JobOptions, PacketOutput};
use crate::model::ImuSample;
use crate::model::{ImuGenerator, Standing, Trajectory};
use crate::output::packets::{
    hdl64e_calibration_yaml, hesai_correction_csv, HesaiEncoder, HesaiModel, HesaiOptions,
    HesaiReturnMode, LivoxDataType, LivoxEncoder, LivoxImuEncoder, LivoxOptions, OusterFamily,
    OusterMetadata, OusterOptions, OusterProfile, OusterSensor, OusterTimestampMode, Packet,
    PacketEncoder, PacketError, SidePackets, VelodyneEncoder, VelodyneModel, VelodyneOptions,
    VelodyneReturnMode, WithPositionPackets, WithSide, HESAI_DATA_PORT, LIDAR_PORT,
    LIVOX_HOST_POINT_PORT, LIVOX_IMU_RATE_HZ, MID_360_IMU_POSITION_M, VELODYNE_DATA_PORT,
};
use crate::sensor::{DualPolicy, ImuNoise, ImuSpec, Pose, ReturnMode, Sensor, OS1_IMU_RATE_HZ};
use crate::sim::GpuPacketFormat;
use glam::DVec3;
use std::net::SocketAddr;
use std::time::Duration;

/// A real sensor's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFormat {
    Velodyne(VelodyneModel),
    Ouster(OusterProfile),
    Hesai(HesaiModel),
    /// Livox SDK2's point data (Mid-360), with its IMU packets.
    Livox,
}

/// The Livox preset the `mid360` format carries.
const LIVOX_PRESET: &str = "livox-mid-360";

/// `--packets` names, with what each is.
pub const PACKET_FORMATS: &[(&str, &str)] = &[
    (
        "vlp16",
        "Velodyne VLP-16 data (UDP 2368) and position packets (8308), for --sensor vlp-16",
    ),
    (
        "hdl32e",
        "Velodyne HDL-32E data (UDP 2368) and position packets (8308), for --sensor hdl-32e",
    ),
    (
        "hdl64e",
        "Velodyne HDL-64E S3 data packets (UDP 2368; its calibration and clock in the \
         status bytes, packets.yaml beside a pcap), for --sensor hdl-64e",
    ),
    (
        "vlp32c",
        "Velodyne VLP-32C data (UDP 2368) and position packets (8308), for --sensor vlp-32c",
    ),
    (
        "vls128",
        "Velodyne VLS-128 data (UDP 2368) and position packets (8308), for --sensor vls-128",
    ),
    (
        "xt32",
        "Hesai PandarXT32 point cloud data (UDP 2368; its angle correction file, \
         packets.csv, beside a pcap), for --sensor pandar-xt32",
    ),
    (
        "mid360",
        "Livox Mid-360 SDK2 point data (UDP 56301, from the lidar's 56300) and IMU packets \
         (56401), for --sensor livox-mid-360; stream --livox-device answers the SDK",
    ),
    (
        "ouster-legacy",
        "Ouster lidar packets, LEGACY profile (UDP 7502), for the os0/os1/os2 presets",
    ),
    (
        "ouster-rng19",
        "Ouster RNG19_RFL8_SIG16_NIR16 (strongest return), for the os0/os1/os2 presets",
    ),
    (
        "ouster-rng19-dual",
        "Ouster RNG19_RFL8_SIG16_NIR16_DUAL (two returns), for the os0/os1/os2 presets",
    ),
];

/// The packet formats and the sensors each carries, in one line: `vlp16 (--sensor
/// vlp-16), …, ouster-legacy/ouster-rng19/ouster-rng19-dual (the os0/os1/os2 presets)`.
fn formats_and_sensors() -> String {
    let velodyne = VelodyneModel::ALL
        .map(|m| format!("{} (--sensor {})", m.format_name(), m.preset()))
        .join(", ");
    let hesai = HesaiModel::ALL
        .map(|m| format!("{} (--sensor {})", m.format_name(), m.preset()))
        .join(", ");
    format!(
        "{velodyne}, {hesai}, mid360 (--sensor {LIVOX_PRESET}), \
         ouster-legacy/ouster-rng19/ouster-rng19-dual (the os0/os1/os2 presets)"
    )
}

impl PacketFormat {
    /// One of [`PACKET_FORMATS`]' names: a Velodyne model, or `ouster-` and an Ouster
    /// profile (its metadata name or short name), each parsed by its format's module.
    pub fn parse(name: &str) -> Result<PacketFormat, PacketError> {
        if let Some(profile) = name.to_ascii_lowercase().strip_prefix("ouster-") {
            if let Ok(p) = profile.parse::<OusterProfile>() {
                return Ok(PacketFormat::Ouster(p));
            }
        } else if let Ok(model) = VelodyneModel::parse(name) {
            return Ok(PacketFormat::Velodyne(model));
        } else if let Ok(model) = HesaiModel::parse(name) {
            return Ok(PacketFormat::Hesai(model));
        } else if ["mid360", LIVOX_PRESET].contains(&name.to_ascii_lowercase().as_str()) {
            return Ok(PacketFormat::Livox);
        }
        Err(PacketError::Sensor {
            format: "--packets",
            message: format!(
                "unknown packet format `{name}`: use {}",
                PACKET_FORMATS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }

    /// The format of the sensor a preset is: vlp-16 → vlp16, hdl-32e → hdl32e, …, the
    /// Ouster presets → their dual-return profile (as they are dual by default) or
    /// RNG19 single return; `None` for sensors no supported format carries.
    pub fn for_sensor(sensor: &Sensor) -> Option<PacketFormat> {
        if OusterFamily::of_preset(&sensor.name).is_some() {
            let dual = sensor.detector.max_returns >= 2;
            return Some(PacketFormat::Ouster(match dual {
                true => OusterProfile::Rng19Rfl8Sig16Nir16Dual,
                false => OusterProfile::Rng19Rfl8Sig16Nir16,
            }));
        }
        PacketFormat::parse(&sensor.name).ok()
    }

    /// [`for_sensor`](Self::for_sensor), or why there is none: in one line, the formats
    /// there are and the sensors they carry.
    pub fn of_sensor(sensor: &Sensor) -> Result<PacketFormat, PacketError> {
        PacketFormat::for_sensor(sensor).ok_or_else(|| PacketError::Sensor {
            format: "UDP",
            message: format!(
                "sensor {} has no packet format; the formats are {}",
                crate::config::shorten(&sensor.name),
                formats_and_sensors()
            ),
        })
    }

    /// Whether the packets carry the ambient level: Ouster's near-IR channel does;
    /// Velodyne's packets have no such field.
    pub fn carries_ambient(self) -> bool {
        matches!(self, PacketFormat::Ouster(_))
    }

    pub fn name(self) -> &'static str {
        match self {
            PacketFormat::Velodyne(model) => model.format_name(),
            PacketFormat::Hesai(model) => model.format_name(),
            PacketFormat::Livox => "mid360",
            PacketFormat::Ouster(OusterProfile::Legacy) => "ouster-legacy",
            PacketFormat::Ouster(OusterProfile::Rng19Rfl8Sig16Nir16) => "ouster-rng19",
            PacketFormat::Ouster(OusterProfile::Rng19Rfl8Sig16Nir16Dual) => "ouster-rng19-dual",
        }
    }

    /// The port the format's point data goes to (Velodyne 2368, Ouster 7502 or the
    /// metadata's `udp_port_lidar`); its other packets (Velodyne position packets, …)
    /// go to their own ports on the same host.
    pub fn data_port(self, to: Option<SocketAddr>) -> u16 {
        match (self, to) {
            (PacketFormat::Velodyne(_), _) => VELODYNE_DATA_PORT,
            (PacketFormat::Hesai(_), _) => HESAI_DATA_PORT,
            (PacketFormat::Livox, _) => LIVOX_HOST_POINT_PORT,
            (PacketFormat::Ouster(_), Some(to)) => to.port(),
            (PacketFormat::Ouster(_), None) => LIDAR_PORT,
        }
    }

    /// The calibration file a decoder reads beside a capture of these packets, and
    /// its extension: the HDL-64E S3's, as ROS velodyne_pointcloud reads it (the same
    /// calibration its packets' status bytes carry); `None` for the others.
    pub fn calibration(self) -> Option<(String, &'static str)> {
        match self {
            PacketFormat::Velodyne(VelodyneModel::Hdl64e) => {
                Some((hdl64e_calibration_yaml(), "yaml"))
            }
            PacketFormat::Hesai(model) => Some((hesai_correction_csv(model), "csv")),
            _ => None,
        }
    }

    /// Whether the sensor answers an HTTP API (the Ouster sensors' metadata and
    /// configuration) that a stream of these packets can serve.
    pub fn has_http_api(self) -> bool {
        matches!(self, PacketFormat::Ouster(_))
    }

    /// What a decoder needs besides the packets: Ouster's sensor metadata (the JSON
    /// ouster-sdk and ouster-ros read, and the sensor's HTTP API serves), naming `to`
    /// as the packets' destination (default 127.0.0.1:7502); `None` for Velodyne,
    /// whose decoders know the model's geometry.
    pub fn metadata(
        self,
        sensor: &Sensor,
        start: Duration,
        to: Option<SocketAddr>,
    ) -> Result<Option<OusterMetadata>, PacketError> {
        match self {
            PacketFormat::Velodyne(_) | PacketFormat::Hesai(_) | PacketFormat::Livox => Ok(None),
            PacketFormat::Ouster(profile) => {
                Ok(Some(ouster_sensor(sensor, profile, start, to)?.metadata()))
            }
        }
    }

    /// An encoder of `sensor`'s frames, its packets timed from `start` (Unix time of the
    /// first frame; 0: an Ouster's internal oscillator from 0, else PTP's Unix time, as
    /// its metadata's `timestamp_mode` says) and addressed to `to` (Ouster: the
    /// metadata's destination, which a pcap file's UDP port shows). Refuses sensors the
    /// format cannot carry, before anything is sent.
    pub fn encoder(
        self,
        sensor: &Sensor,
        start: Duration,
        to: Option<SocketAddr>,
    ) -> Result<Box<dyn PacketEncoder>, PacketError> {
        let layout = beam_layout(sensor);
        match self {
            PacketFormat::Velodyne(model) => {
                let options = VelodyneOptions {
                    model,
                    return_mode: velodyne_return_mode(sensor, model)?,
                    start,
                };
                let encoder = VelodyneEncoder::new(
                    options,
                    layout.beams(),
                    sensor.columns,
                    f64::from(sensor.frame_rate),
                )?;
                Ok(with_position_packets(model, Box::new(encoder), start))
            }
            PacketFormat::Ouster(profile) => Ok(Box::new(
                ouster_sensor(sensor, profile, start, to)?.encoder(),
            )),
            PacketFormat::Hesai(model) => {
                let options = HesaiOptions {
                    model,
                    return_mode: hesai_return_mode(sensor, model)?,
                    start,
                };
                let encoder = HesaiEncoder::new(
                    options,
                    layout.beams(),
                    sensor.columns,
                    f64::from(sensor.frame_rate),
                )?;
                Ok(Box::new(encoder))
            }
            PacketFormat::Livox => {
                livox_preset(sensor)?;
                let options = LivoxOptions {
                    data_type: LivoxDataType::default(),
                    start,
                };
                Ok(Box::new(LivoxEncoder::new(options, layout.beams())?))
            }
        }
    }
}

/// Refuses a sensor the Livox format does not carry.
fn livox_preset(sensor: &Sensor) -> Result<(), PacketError> {
    if sensor.name == LIVOX_PRESET {
        return Ok(());
    }
    Err(PacketError::Sensor {
        format: "Livox",
        message: format!(
            "sensor {} is not the {LIVOX_PRESET} preset: use --sensor {LIVOX_PRESET}; the \
             formats are {}",
            crate::config::shorten(&sensor.name),
            formats_and_sensors()
        ),
    })
}

/// `sensor` checked as an Ouster product in `profile`, its clock starting at `start`,
/// its packets going to `to` (the options' default when `None`).
/// What a member's frames make on the GPU for their packets: Ouster's lidar packets,
/// Velodyne's channels; nothing for packets encoded on the host (`on_host`) or a
/// continuous-wave sensor (its points are not the GPU's).
pub(super) fn gpu_packet_format(m: &Member) -> Result<Option<GpuPacketFormat>, JobError> {
    let Some(p) = &m.packets else {
        return Ok(None);
    };
    if p.on_host || m.sensor.cw.is_some() {
        return Ok(None);
    }
    Ok(Some(match p.format {
        PacketFormat::Ouster(profile) => {
            GpuPacketFormat::Ouster(ouster_sensor(&m.sensor, profile, p.start, p.udp)?)
        }
        // Encoded on the host: a sample per beam in firing order, no GPU pass needed.
        PacketFormat::Livox => return Ok(None),
        PacketFormat::Velodyne(model) => GpuPacketFormat::Velodyne {
            model,
            mode: velodyne_return_mode(&m.sensor, model)?,
        },
        // The GPU's channels choose as Velodyne's modes do: the first echo is the host's.
        PacketFormat::Hesai(model) => match hesai_return_mode(&m.sensor, model)? {
            HesaiReturnMode::First => return Ok(None),
            HesaiReturnMode::Last => GpuPacketFormat::Hesai {
                model,
                mode: VelodyneReturnMode::Last,
            },
            HesaiReturnMode::Strongest => GpuPacketFormat::Hesai {
                model,
                mode: VelodyneReturnMode::Strongest,
            },
            HesaiReturnMode::Dual => GpuPacketFormat::Hesai {
                model,
                mode: VelodyneReturnMode::Dual,
            },
        },
    }))
}

fn ouster_sensor(
    sensor: &Sensor,
    profile: OusterProfile,
    start: Duration,
    to: Option<SocketAddr>,
) -> Result<OusterSensor, PacketError> {
    let family = OusterFamily::of_preset(&sensor.name).ok_or_else(|| PacketError::Sensor {
        format: profile.format(),
        message: format!(
            "sensor {} is not an Ouster preset (os0-…, os1-…, os2-…): use --sensor \
             os1-128 or another Ouster preset; the formats are {}",
            crate::config::shorten(&sensor.name),
            formats_and_sensors()
        ),
    })?;
    let mode = OusterTimestampMode::for_start(start);
    let mut options = OusterOptions {
        start_ns: mode.start_ns(start),
        timestamp_mode: mode,
        ..OusterOptions::new(family, profile)
    };
    if let Some(to) = to {
        // The metadata tells clients where to listen: where the packets really go.
        options.udp_dest = to.ip().to_string();
        options.udp_port_lidar = to.port();
    }
    let layout = beam_layout(sensor);
    OusterSensor::new(options, layout.beams(), sensor.columns, sensor.frame_rate)
}

/// A Velodyne's data packets with its position packets of the same clock (`start` +
/// stream time) between them, as the unit sends them once a second on port 8308. The
/// HDL-64E S3 sends none: its status bytes carry the clock.
fn with_position_packets(
    model: VelodyneModel,
    data: Box<dyn PacketEncoder>,
    start: Duration,
) -> Box<dyn PacketEncoder> {
    match model {
        VelodyneModel::Hdl64e => data,
        _ => Box::new(WithPositionPackets::new(data, start)),
    }
}

/// The Velodyne return mode setting that gives the sensor's configured returns.
fn velodyne_return_mode(
    sensor: &Sensor,
    model: VelodyneModel,
) -> Result<VelodyneReturnMode, PacketError> {
    match sensor.detector.return_mode {
        ReturnMode::Strongest => Ok(VelodyneReturnMode::Strongest),
        ReturnMode::Last => Ok(VelodyneReturnMode::Last),
        ReturnMode::Dual(DualPolicy::StrongestLast) => Ok(VelodyneReturnMode::Dual),
        other => Err(PacketError::Sensor {
            format: model.name(),
            message: format!(
                "the sensor's detector.return_mode is {other:?}, which a {} does not \
                 send: use strongest, last or dual_strongest_last",
                model.name()
            ),
        }),
    }
}

/// The Hesai return mode that gives the sensor's configured returns.
fn hesai_return_mode(sensor: &Sensor, model: HesaiModel) -> Result<HesaiReturnMode, PacketError> {
    match sensor.detector.return_mode {
        ReturnMode::Last => Ok(HesaiReturnMode::Last),
        ReturnMode::Strongest => Ok(HesaiReturnMode::Strongest),
        ReturnMode::First => Ok(HesaiReturnMode::First),
        ReturnMode::Dual(DualPolicy::StrongestLast) => Ok(HesaiReturnMode::Dual),
        other => Err(PacketError::Sensor {
            format: model.name(),
            message: format!(
                "the sensor's detector.return_mode is {other:?}, which a {} does not \
                 send: use last, strongest, first or dual_strongest_last",
                model.name()
            ),
        }),
    }
}

/// The encoder of a job's sensor's packets: the format's, and with an Ouster format the sensor's
/// own IMU packets on its `udp_port_imu`, measured along the run's vehicle trajectory
/// (the scenario's vehicle track, else standing at the job's vehicle pose).
pub(super) fn job_encoder(
    opts: &JobOptions,
    m: &Member,
    p: &PacketOutput,
) -> Result<Box<dyn PacketEncoder>, JobError> {
    let lidar = p.format.encoder(&m.sensor, p.start, p.udp)?;
    let (spec, encode): (ImuSpec, ImuEncode) = match p.format {
        PacketFormat::Ouster(profile) => {
            let ouster = ouster_sensor(&m.sensor, profile, p.start, p.udp)?;
            let imu = ouster.imu_encoder();
            let spec = ouster_imu(&m.sensor, ouster.options().family);
            (spec, Box::new(move |s| imu.packet(s)))
        }
        PacketFormat::Livox => {
            let imu = LivoxImuEncoder {
                options: LivoxOptions {
                    data_type: LivoxDataType::default(),
                    start: p.start,
                },
            };
            (livox_imu(&m.sensor), Box::new(move |s| imu.packet(s)))
        }
        _ => return Ok(lidar),
    };
    let vehicle = opts.scenario.as_ref().and_then(|s| s.vehicle());
    let trajectory: Box<dyn Trajectory + Send> = match vehicle {
        Some(track) => Box::new(track.clone()),
        None => Box::new(Standing::at(opts.vehicle_pose)),
    };
    Ok(Box::new(WithSide {
        encoder: lidar,
        side: ImuPackets {
            encode,
            first_s: spec.period(),
            generator: ImuGenerator::new(&spec, m.seed)?,
            trajectory,
            period: 1.0 / f64::from(m.sensor.frame_rate),
        },
    }))
}

/// One IMU sample's packet in a format's layout.
type ImuEncode = Box<dyn Fn(&ImuSample) -> Packet + Send>;

/// The Mid-360's IMU (an ICM40609): 200 Hz, where the manual puts it in the point
/// cloud's frame, on the sensor's mount. Its noise is the ICM-20948's of the Ouster
/// IMU (an estimate: Livox gives none).
fn livox_imu(sensor: &Sensor) -> ImuSpec {
    housed_imu(sensor, MID_360_IMU_POSITION_M, LIVOX_IMU_RATE_HZ)
}

/// An Ouster sensor's internal IMU: the OS1's rate and noise (the ICM-20948's,
/// `sensor::ImuNoise`), where the metadata's `imu_to_sensor_transform` puts it in the
/// housing, on the sensor's mount.
pub fn ouster_imu(sensor: &Sensor, family: OusterFamily) -> ImuSpec {
    housed_imu(sensor, family.imu_position_m(), OS1_IMU_RATE_HZ)
}

/// A sensor's own IMU at `at` (m) in its housing, on its mount, at `rate_hz`, with the
/// ICM-20948's noise.
fn housed_imu(sensor: &Sensor, at: [f64; 3], rate_hz: f64) -> ImuSpec {
    let at = DVec3::from(at).as_vec3();
    let m = sensor.mount;
    ImuSpec {
        name: format!("{}_imu", sensor.name),
        mount: Pose {
            translation: m.translation + m.rotation * at,
            rotation: m.rotation,
        },
        rate_hz,
        noise: ImuNoise::ICM_20948,
    }
}

/// The IMU packets of each frame's time, [t, t + period), merged into its lidar
/// packets by send time. Frames not pushed (dropped in real time) send no IMU packets
/// either.
struct ImuPackets {
    encode: ImuEncode,
    /// When the first sample is due (s): one period in.
    first_s: f64,
    generator: ImuGenerator,
    trajectory: Box<dyn Trajectory + Send>,
    period: f64,
}

impl SidePackets for ImuPackets {
    fn frame(&mut self, frame_start_s: f64, mut packets: Vec<Packet>) -> Vec<Packet> {
        // Each sample is its interval's mean: the first interval ends one period in, as
        // a rig's imu.csv (sample 0 would average time before the run, where a moving
        // vehicle's track stands still).
        self.generator.skip_to(frame_start_s.max(self.first_s));
        let samples = self
            .generator
            .until(self.trajectory.as_ref(), frame_start_s + self.period);
        packets.extend(samples.iter().map(&self.encode));
        // Stable: a lidar packet and an IMU packet of one time keep that order.
        packets.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::ContextOptions;
    use crate::material::{MaterialDb, MaterialMapping};
    use crate::output::{FieldSet, Format, PointCloud};
    use crate::scene::Scene;
    use crate::sensor::preset;
    use glam::Vec3;
    use std::path::PathBuf;

    const G: f64 = crate::sensor::STANDARD_GRAVITY;

    fn options(start: Duration) -> (JobOptions, PacketOutput) {
        let sensor = preset("os1-16", None).expect("os1-16");
        let packets = PacketOutput {
            format: PacketFormat::parse("ouster-rng19").expect("format"),
            udp: None,
            pcap: None,
            real_time: false,
            start,
            preload: false,
            http: None,
            livox_device: None,
            on_host: false,
        };
        let opts = JobOptions {
            scene: Scene::default(),
            scene_name: "empty".into(),
            sensor,
            rig: None,
            frames: 3,
            out_dir: PathBuf::new(),
            format: Format::Pcd,
            mcap: Default::default(),
            picture: false,
            objects: false,
            dataset: None,
            vehicle_pose: Pose::from_translation_rpy(Vec3::new(3.0, 1.0, 0.0), 0.0, 0.0, 2.0),
            materials: MaterialDb::builtin().expect("materials"),
            mapping: MaterialMapping::default(),
            device: ContextOptions::default(),
            sun: None,
            weather: None,
            seed: 4,
            world_frame: false,
            fields: FieldSet::default(),
            organized: None,
            command_line: Vec::new(),
            scenario: None,
            osi: None,
            clouds: false,
            packets: Some(packets.clone()),
            part: None,
        };
        (opts, packets)
    }

    fn u64_at(p: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(p[at..at + 8].try_into().unwrap())
    }

    fn f32_at(p: &[u8], at: usize) -> f64 {
        f64::from(f32::from_le_bytes(p[at..at + 4].try_into().unwrap()))
    }

    /// Three frames of an OS1-16 at 10 Hz (empty clouds): per frame its 64 lidar packets
    /// on 7502 and the IMU samples that end within its 100 ms on 7503 (the first 0.01 s
    /// in: each sample is its interval's mean), merged in time order; the
    /// IMU packets in the lidar packets' clock; a vehicle at rest reads +1 g up (the
    /// sensor stands upright) within 5σ of the ICM-20948's white noise, no rotation.
    #[test]
    fn ouster_packets_carry_the_sensors_own_imu_in_their_clock() {
        for (start, mode) in [
            (Duration::ZERO, "TIME_FROM_INTERNAL_OSC"),
            (Duration::from_secs(1_700_000_000), "TIME_FROM_PTP_1588"),
        ] {
            let (opts, p) = options(start);
            let meta = p
                .format
                .metadata(&opts.sensor, start, None)
                .unwrap()
                .unwrap();
            assert_eq!(
                meta.section("config_params").unwrap()["timestamp_mode"],
                mode
            );
            let start_ns = start.as_nanos() as u64;
            let members = crate::job::rig::members(&opts).unwrap();
            let mut encoder = job_encoder(&opts, &members[0], &p).unwrap();
            let cloud = PointCloud::default();
            let mut imu = Vec::new();
            for frame in 0..3u64 {
                let t = frame as f64 * 0.1;
                let packets = encoder.push_frame(frame, t, &cloud).unwrap();
                assert!(packets.windows(2).all(|w| w[0].time_s <= w[1].time_s));
                let lidar: Vec<&Packet> = packets.iter().filter(|p| p.port == 7502).collect();
                assert_eq!(lidar.len(), 64);
                // RNG19: the first column's timestamp after the 32-byte packet header.
                assert_eq!(
                    u64_at(&lidar[0].payload, 32),
                    start_ns + frame * 100_000_000
                );
                imu.extend(packets.into_iter().filter(|p| p.port == 7503));
            }
            // Samples end their intervals: 0.01 s in is the first, 0.29 s the last.
            assert_eq!(imu.len(), 29);
            let sigma_g = 2.2555e-3 * 10.0 / G;
            let sigma_dps = 2.618e-4 * 10.0 * 180.0 / std::f64::consts::PI;
            for (k, p) in (1..).zip(&imu) {
                assert_eq!(p.payload.len(), 48);
                assert!((p.time_s - k as f64 * 0.01).abs() < 1e-12);
                let since = k as u64 * 10_000_000;
                assert_eq!(u64_at(&p.payload, 0), since);
                assert_eq!(u64_at(&p.payload, 8), start_ns + since);
                assert_eq!(u64_at(&p.payload, 16), start_ns + since);
                let accel = [24, 28, 32].map(|at| f32_at(&p.payload, at));
                let gyro = [36, 40, 44].map(|at| f32_at(&p.payload, at));
                for (got, want) in accel.iter().zip([0.0, 0.0, 1.0]) {
                    assert!((got - want).abs() < 5.0 * sigma_g, "{k}: {accel:?}");
                }
                assert!(gyro.iter().all(|w| w.abs() < 5.0 * sigma_dps), "{gyro:?}");
            }
        }
    }

    /// The IMU sits where `imu_to_sensor_transform` puts it, lowered by the lidar
    /// origin's height, on the sensor's mount (36.18 mm, 7.645 mm: ouster-sdk's rev-6
    /// OS1 metadata).
    #[test]
    fn the_ouster_imu_sits_in_the_housing_on_the_sensors_mount() {
        let sensor = preset("os1-16", None)
            .unwrap()
            .with_mount(Pose::from_translation_rpy(
                Vec3::new(1.0, 0.0, 2.0),
                0.0,
                0.0,
                std::f32::consts::FRAC_PI_2,
            ));
        let spec = ouster_imu(&sensor, OusterFamily::Os1);
        // Turned 90° left: the housing's (x, y) = (6.253, −11.775) mm lies at vehicle
        // (11.775, 6.253) mm from the mount.
        let want = Vec3::new(1.011775, 0.006253, 2.0 + (0.007645 - 0.03618));
        assert!(
            (spec.mount.translation - want).length() < 1e-6,
            "{:?}",
            spec.mount
        );
        assert_eq!(spec.mount.rotation, sensor.mount.rotation);
        assert_eq!(spec.rate_hz, 100.0);
        spec.validate().unwrap();
    }
}
