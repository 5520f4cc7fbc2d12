//! Which wire format a run's packets take, and the encoder for the run's sensor.

use super::beam_layout;
use crate::output::packets::{
    hdl64e_calibration_yaml, OusterFamily, OusterMetadata, OusterOptions, OusterProfile,
    OusterSensor, PacketEncoder, PacketError, VelodyneEncoder, VelodyneModel, VelodyneOptions,
    VelodyneReturnMode, WithPositionPackets, LIDAR_PORT, VELODYNE_DATA_PORT,
};
use crate::sensor::{DualPolicy, ReturnMode, Sensor};
use std::net::SocketAddr;
use std::time::Duration;

/// A real sensor's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFormat {
    Velodyne(VelodyneModel),
    Ouster(OusterProfile),
}

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
    format!("{velodyne}, ouster-legacy/ouster-rng19/ouster-rng19-dual (the os0/os1/os2 presets)")
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
            PacketFormat::Velodyne(_) => Ok(None),
            PacketFormat::Ouster(profile) => {
                Ok(Some(ouster_sensor(sensor, profile, start, to)?.metadata()))
            }
        }
    }

    /// An encoder of `sensor`'s frames, its packets timed from `start` (Unix time of the
    /// first frame) and addressed to `to` (Ouster: the metadata's destination, which
    /// a pcap file's UDP port shows). Refuses sensors the format cannot carry, before
    /// anything is sent.
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
        }
    }
}

/// `sensor` checked as an Ouster product in `profile`, its clock starting at `start`,
/// its packets going to `to` (the options' default when `None`).
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
    let mut options = OusterOptions {
        start_ns: start.as_nanos() as u64,
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
