//! Which wire format a run's packets take, and the encoder for the run's sensor.

use super::beam_layout;
use crate::output::packets::{
    OusterFamily, OusterMetadata, OusterOptions, OusterProfile, OusterSensor, PacketEncoder,
    PacketError, VelodyneEncoder, VelodyneModel, VelodyneOptions, VelodyneReturnMode, LIDAR_PORT,
    VELODYNE_DATA_PORT,
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
        "Velodyne VLP-16 data packets (UDP 2368), for --sensor vlp-16",
    ),
    (
        "hdl32e",
        "Velodyne HDL-32E data packets (UDP 2368), for --sensor hdl-32e",
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

    /// The format of the sensor a preset is: vlp-16 → vlp16, hdl-32e → hdl32e, the
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

    /// The error for a sensor no format carries, naming the formats there are.
    pub fn no_format(sensor: &Sensor) -> PacketError {
        let names: Vec<&str> = PACKET_FORMATS.iter().map(|(n, _)| *n).collect();
        PacketError::Sensor {
            format: "--packets",
            message: format!(
                "no packet format is known for sensor {}: name one of {}",
                sensor.name,
                names.join(", ")
            ),
        }
    }

    /// The UDP port the vendor sends the data packets to.
    pub fn data_port(self) -> u16 {
        match self {
            PacketFormat::Velodyne(_) => VELODYNE_DATA_PORT,
            PacketFormat::Ouster(_) => LIDAR_PORT,
        }
    }

    /// Whether the packets carry the ambient level: Ouster's near-IR channel does;
    /// Velodyne's packets have no such field.
    pub fn carries_ambient(self) -> bool {
        matches!(self, PacketFormat::Ouster(_))
    }

    pub fn name(self) -> &'static str {
        match self {
            PacketFormat::Velodyne(VelodyneModel::Vlp16) => "vlp16",
            PacketFormat::Velodyne(VelodyneModel::Hdl32e) => "hdl32e",
            PacketFormat::Ouster(OusterProfile::Legacy) => "ouster-legacy",
            PacketFormat::Ouster(OusterProfile::Rng19Rfl8Sig16Nir16) => "ouster-rng19",
            PacketFormat::Ouster(OusterProfile::Rng19Rfl8Sig16Nir16Dual) => "ouster-rng19-dual",
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
                Ok(Box::new(encoder))
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
             os1-128 or another Ouster preset, or --packets vlp16/hdl32e for a Velodyne",
            sensor.name
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
