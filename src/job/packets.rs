//! Which wire format a run's packets take, and the encoder for the run's sensor.

use super::beam_layout;
use crate::output::packets::{
    PacketEncoder, PacketError, VelodyneEncoder, VelodyneModel, VelodyneOptions,
    VelodyneReturnMode,
};
use crate::sensor::{DualPolicy, ReturnMode, Sensor};
use std::time::Duration;

/// A real sensor's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFormat {
    Velodyne(VelodyneModel),
}

/// `--packets` names, with what each is.
pub const PACKET_FORMATS: &[(&str, &str)] = &[
    ("vlp16", "Velodyne VLP-16 data packets (UDP 2368), for --sensor vlp-16"),
    ("hdl32e", "Velodyne HDL-32E data packets (UDP 2368), for --sensor hdl-32e"),
];

impl PacketFormat {
    /// One of [`PACKET_FORMATS`]' names.
    pub fn parse(name: &str) -> Result<PacketFormat, PacketError> {
        match name.to_ascii_lowercase().as_str() {
            "vlp16" | "vlp-16" => Ok(PacketFormat::Velodyne(VelodyneModel::Vlp16)),
            "hdl32e" | "hdl-32e" => Ok(PacketFormat::Velodyne(VelodyneModel::Hdl32e)),
            _ => Err(PacketError::Sensor {
                format: "--packets",
                message: format!(
                    "unknown packet format `{name}`: use {}",
                    PACKET_FORMATS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    /// The format of the sensor a preset is: vlp-16 → vlp16, …; `None` for sensors no
    /// supported format carries.
    pub fn for_sensor(sensor: &Sensor) -> Option<PacketFormat> {
        PacketFormat::parse(&sensor.name).ok()
    }

    pub fn name(self) -> &'static str {
        match self {
            PacketFormat::Velodyne(VelodyneModel::Vlp16) => "vlp16",
            PacketFormat::Velodyne(VelodyneModel::Hdl32e) => "hdl32e",
        }
    }

    /// An encoder of `sensor`'s frames, its packets timed from `start` (Unix time of the
    /// first frame). Refuses sensors the format cannot carry, before anything is sent.
    pub fn encoder(
        self,
        sensor: &Sensor,
        start: Duration,
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
        }
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
