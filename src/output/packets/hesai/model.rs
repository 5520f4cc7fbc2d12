//! The Hesai models whose point cloud data packets beamtrace writes and reads, as a
//! table: one [`HesaiLayout`] per model says how its packets lay out what the
//! encoder and decoder share (`hesai`'s docs give the sources). A model of the same
//! packet generation (pre-header, header, blocks of one azimuth and the channels,
//! tail, UDP sequence) is a new row here and a laser table in `sensor::hesai`.

use crate::output::packets::spinning::{name_key, Spin};
use crate::output::packets::PacketError;
use crate::sensor::hesai::PANDAR_XT32;
use crate::sensor::spinning::SpinningLasers;

/// The Hesai sensors whose packets beamtrace writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HesaiModel {
    PandarXt32,
}

/// How one model's point cloud data packets are laid out.
#[derive(Debug, Clone, Copy)]
pub struct HesaiLayout {
    /// The vendor's name (`PandarXT32`).
    pub name: &'static str,
    /// The beamtrace preset whose beams the packets carry.
    pub preset: &'static str,
    /// The `--packets` name.
    pub format: &'static str,
    pub manual: &'static str,
    pub(crate) lasers: &'static SpinningLasers,
    /// The pre-header's protocol version (major, minor): what a decoder tells models by.
    pub protocol: (u8, u8),
    /// Blocks per packet: one firing each in single return, two per firing in dual.
    pub blocks: usize,
    /// Bytes of a channel in a block: distance (u16), reflectivity, then reserved or
    /// confidence bytes.
    pub channel_bytes: usize,
    /// The distance unit (m) as the header's "Dis Unit" byte gives it in mm.
    pub unit_mm: u8,
    /// Bytes of the tail, and where in it the return mode, the motor speed, the
    /// date & time, the µs timestamp and the factory information sit.
    pub tail_bytes: usize,
    pub tail_return_mode: usize,
    pub tail_motor_speed: usize,
    pub tail_date_time: usize,
    pub tail_timestamp: usize,
    pub tail_factory: usize,
    /// The factory information byte.
    pub factory: u8,
    /// The date's year counts from this year.
    pub year_base: i64,
    /// The packet's absolute time t0 is this long before its last firing starts (s)
    /// (the manual's block start time t0 + 3.28 µs − …).
    pub lead_s: f64,
}

const XT32: HesaiLayout = HesaiLayout {
    name: "PandarXT32",
    preset: "pandar-xt32",
    format: "xt32",
    manual: "PandarXT user manual",
    lasers: &PANDAR_XT32,
    protocol: (6, 1),
    blocks: 8,
    channel_bytes: 4,
    unit_mm: 4,
    tail_bytes: 24,
    tail_return_mode: 10,
    tail_motor_speed: 11,
    tail_date_time: 13,
    tail_timestamp: 19,
    tail_factory: 23,
    factory: 0x42,
    year_base: 1900,
    lead_s: 3.28e-6,
};

/// Bytes of the pre-header (start of packet, protocol version, reserved) and header.
pub(crate) const PRE_HEADER: usize = 6;
pub(crate) const HEADER: usize = 6;
/// The start of packet: `EE FF`.
pub(crate) const SOP: [u8; 2] = [0xEE, 0xFF];
/// Bytes of the UDP sequence after the tail.
pub(crate) const UDP_SEQUENCE: usize = 4;

impl HesaiModel {
    pub const ALL: [HesaiModel; 1] = [HesaiModel::PandarXt32];

    pub fn layout(self) -> &'static HesaiLayout {
        match self {
            HesaiModel::PandarXt32 => &XT32,
        }
    }

    pub fn name(self) -> &'static str {
        self.layout().name
    }

    pub fn preset(self) -> &'static str {
        self.layout().preset
    }

    pub fn format_name(self) -> &'static str {
        self.layout().format
    }

    /// A preset, format or vendor name (`xt32`, `pandar-xt32`, `PandarXT32`), in any
    /// case.
    pub fn parse(name: &str) -> Result<Self, PacketError> {
        let key = name_key;
        let k = key(name);
        Self::ALL
            .into_iter()
            .find(|m| {
                [m.preset(), m.name(), m.format_name()]
                    .map(key)
                    .contains(&k)
            })
            .ok_or_else(|| PacketError::Sensor {
                format: "Hesai",
                message: format!(
                    "unknown Hesai model `{name}`: use {}",
                    Self::ALL
                        .map(|m| format!("{} ({})", m.format_name(), m.name()))
                        .join(", ")
                ),
            })
    }

    /// The model whose pre-header names `protocol` (major, minor).
    pub fn of_protocol(protocol: (u8, u8)) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.layout().protocol == protocol)
    }

    /// The model as the spinning sensors' checks see it.
    pub(crate) fn spin(self) -> Spin {
        let l = self.layout();
        Spin {
            name: l.name,
            preset: l.preset,
            manual: l.manual,
            table: l.lasers,
            unit_m: f64::from(l.unit_mm) * 1e-3,
            units_per_m: 1000.0 / f64::from(l.unit_mm),
        }
    }

    pub fn lasers(self) -> usize {
        self.layout().lasers.count
    }

    /// Bytes of a block: the azimuth and every channel.
    pub(crate) fn block_bytes(self) -> usize {
        2 + self.lasers() * self.layout().channel_bytes
    }

    /// Where the tail begins.
    pub(crate) fn tail_at(self) -> usize {
        PRE_HEADER + HEADER + self.layout().blocks * self.block_bytes()
    }

    /// Bytes of a packet's UDP payload (the PandarXT32's 1080).
    pub fn payload_len(self) -> usize {
        self.tail_at() + self.layout().tail_bytes + UDP_SEQUENCE
    }
}
