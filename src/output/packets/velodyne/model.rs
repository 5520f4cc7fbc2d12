//! The Velodyne models whose data packets beamtrace writes and reads, and how each lays
//! its firings out in a packet's twelve blocks (see `velodyne`'s docs for the sources).

use super::VelodyneReturnMode;
use crate::output::packets::spinning::{name_key, Spin};
use crate::output::packets::PacketError;
use crate::sensor::spinning::SpinningLasers;
use crate::sensor::velodyne::{HDL32E, HDL64E_S3, VLP16, VLP32C, VLS128};
use crate::sensor::ReflectivityScale;

/// Blocks of a data packet.
pub(crate) const BLOCKS: usize = 12;
/// Channels (distance and reflectivity) of a block.
pub(crate) const CHANNELS: usize = 32;

/// The Velodyne sensors whose data packets beamtrace writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VelodyneModel {
    Vlp16,
    Hdl32e,
    /// The HDL-64E S3: upper and lower blocks, status bytes instead of factory bytes.
    Hdl64e,
    Vlp32c,
    Vls128,
}

/// Which return a block carries in [`BlockSlot::copy`].
pub(crate) const SINGLE_OR_LAST: usize = 0;
pub(crate) const STRONGEST: usize = 1;

/// What one block of a packet holds: the firing sequences from `firing` on (counted
/// from the packet's first), lasers `32·bank …` of them, the return `copy`
/// ([`SINGLE_OR_LAST`] or [`STRONGEST`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockSlot {
    pub firing: usize,
    pub bank: usize,
    pub copy: usize,
}

impl VelodyneModel {
    pub const ALL: [VelodyneModel; 5] = [
        VelodyneModel::Vlp16,
        VelodyneModel::Hdl32e,
        VelodyneModel::Hdl64e,
        VelodyneModel::Vlp32c,
        VelodyneModel::Vls128,
    ];

    /// The vendor's name: `VLP-16`, `HDL-32E`, `HDL-64E S3`, `VLP-32C`, `VLS-128`.
    pub fn name(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "VLP-16",
            VelodyneModel::Hdl32e => "HDL-32E",
            VelodyneModel::Hdl64e => "HDL-64E S3",
            VelodyneModel::Vlp32c => "VLP-32C",
            VelodyneModel::Vls128 => "VLS-128",
        }
    }

    /// The beamtrace preset whose beams the packets carry.
    pub fn preset(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "vlp-16",
            VelodyneModel::Hdl32e => "hdl-32e",
            VelodyneModel::Hdl64e => "hdl-64e",
            VelodyneModel::Vlp32c => "vlp-32c",
            VelodyneModel::Vls128 => "vls-128",
        }
    }

    /// The `--packets` name: the preset's without its dash (`vlp16`, `hdl64e`, …).
    pub fn format_name(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "vlp16",
            VelodyneModel::Hdl32e => "hdl32e",
            VelodyneModel::Hdl64e => "hdl64e",
            VelodyneModel::Vlp32c => "vlp32c",
            VelodyneModel::Vls128 => "vls128",
        }
    }

    /// A preset, format or vendor name (`vlp16`, `vlp-16`, `VLP-16`, `hdl-64e-s3`, …),
    /// in any case.
    pub fn parse(name: &str) -> Result<Self, PacketError> {
        let key = name_key;
        let k = key(name);
        Self::ALL
            .into_iter()
            .find(|m| key(m.preset()) == k || key(m.name()) == k)
            .ok_or_else(|| PacketError::Sensor {
                format: "Velodyne",
                message: format!(
                    "unknown Velodyne model `{name}`: use {}",
                    Self::ALL
                        .map(|m| format!("{} ({})", m.format_name(), m.name()))
                        .join(", ")
                ),
            })
    }

    pub(crate) fn lasers_table(self) -> &'static SpinningLasers {
        match self {
            VelodyneModel::Vlp16 => &VLP16,
            VelodyneModel::Hdl32e => &HDL32E,
            VelodyneModel::Hdl64e => &HDL64E_S3,
            VelodyneModel::Vlp32c => &VLP32C,
            VelodyneModel::Vls128 => &VLS128,
        }
    }

    /// The model as the spinning sensors' checks see it.
    pub(crate) fn spin(self) -> Spin {
        Spin {
            name: self.name(),
            preset: self.preset(),
            manual: self.manual(),
            table: self.lasers_table(),
            unit_m: self.distance_unit_m(),
            units_per_m: self.units_per_m(),
        }
    }

    /// Lasers fired per firing sequence.
    pub fn lasers(self) -> usize {
        self.lasers_table().count
    }

    /// The product id factory byte (VLP-16 manual Table 9-2; the VLS-128's 0xA1 is what
    /// the unit sends and decoders expect, where that table says 0x63). The HDL-64E has
    /// none: its last two bytes are status bytes.
    pub fn product_id(self) -> Option<u8> {
        match self {
            VelodyneModel::Vlp16 => Some(0x22),
            VelodyneModel::Hdl32e => Some(0x21),
            VelodyneModel::Hdl64e => None,
            VelodyneModel::Vlp32c => Some(0x28),
            VelodyneModel::Vls128 => Some(0xA1),
        }
    }

    /// Time from one firing sequence to the next (s).
    pub fn firing_cycle_s(self) -> f64 {
        self.lasers_table().cycle_s
    }

    /// The elevation of laser `laser` (deg) in the manual's table.
    pub fn laser_elevation_deg(self, laser: usize) -> f64 {
        (self.lasers_table().elevation_deg)(laser)
    }

    /// The manual's azimuth offset δ of laser `laser` (deg, clockwise seen from above).
    pub fn laser_azimuth_offset_deg(self, laser: usize) -> f64 {
        (self.lasers_table().azimuth_offset_deg)(laser)
    }

    /// When laser `laser` fires after its sequence begins (s), as the preset fires it.
    pub fn laser_delay_s(self, laser: usize) -> f64 {
        (self.lasers_table().delay_s)(laser)
    }

    /// Height of laser `laser`'s origin above the sensor origin (m).
    pub fn laser_height_m(self, laser: usize) -> f32 {
        (self.lasers_table().height_m)(laser)
    }

    /// The laser id a column of the preset fires `k`-th.
    pub fn laser_at(self, k: usize) -> usize {
        (self.lasers_table().laser_at)(k)
    }

    /// The distance field's unit (m): 2 mm, or 4 mm on the VLP-32C and VLS-128 (their
    /// manuals §9.3.1.3).
    pub fn distance_unit_m(self) -> f64 {
        match self {
            VelodyneModel::Vlp32c | VelodyneModel::Vls128 => 0.004,
            _ => 0.002,
        }
    }

    /// Distance units per metre: 500 (2 mm) or 250 (4 mm).
    pub fn units_per_m(self) -> f64 {
        match self {
            VelodyneModel::Vlp32c | VelodyneModel::Vls128 => 250.0,
            _ => 500.0,
        }
    }

    /// The scale of the reflectivity byte its packets carry: the VLS-128's own
    /// (0–110 diffuse), the others' 0–100 (their manuals, "Calibrated Reflectivity").
    pub fn reflectivity_scale(self) -> ReflectivityScale {
        match self {
            VelodyneModel::Vls128 => ReflectivityScale::VLS128,
            _ => ReflectivityScale::STANDARD,
        }
    }

    /// The farthest range a data packet carries (m): 65535 distance units.
    pub fn max_range_m(self) -> f64 {
        65535.0 * self.distance_unit_m()
    }

    pub(crate) fn manual(self) -> &'static str {
        match self {
            VelodyneModel::Vlp16 => "VLP-16 User Manual 63-9243",
            VelodyneModel::Hdl32e => "HDL-32E User Manual 63-9113",
            VelodyneModel::Hdl64e => "HDL-64E S3 User's Manual 63-HDL64ES3",
            VelodyneModel::Vlp32c => "VLP-32C User Manual 63-9325",
            VelodyneModel::Vls128 => "VLS-128 User Manual",
        }
    }

    /// Blocks of 32 channels one firing sequence fills: 2 on the HDL-64E (upper,
    /// lower), 4 on the VLS-128, else 1.
    pub(crate) fn banks(self) -> usize {
        self.lasers().div_ceil(CHANNELS)
    }

    /// Lasers of one firing in a block: 16 on the VLP-16 (a block holds two firings).
    pub(crate) fn lasers_per_block(self) -> usize {
        self.lasers().min(CHANNELS)
    }

    /// The block flag of laser bank `bank`: `FF EE` (lasers 0–31, the HDL-64E's upper
    /// block), `FF DD`, `FF CC`, `FF BB` (lasers 96–127 of the VLS-128).
    pub(crate) fn bank_flag(bank: usize) -> [u8; 2] {
        [0xFF, 0xEE - 0x11 * bank as u8]
    }

    /// What each of a packet's twelve blocks holds in `mode` (`None`: a block left
    /// empty, the last four of a VLS-128 dual-return packet). Dual return: the VLP-16,
    /// HDL-32E and VLP-32C pair blocks, last then strongest (VLP-16 manual §9.3.1.6);
    /// the HDL-64E S3 gives a firing's upper and lower strongest, then its upper and
    /// lower last (its manual's dual return packet); the VLS-128 gives each bank's last
    /// then strongest, one firing per packet (its manual's dual return data structure).
    pub(crate) fn block_slots(self, mode: VelodyneReturnMode) -> [Option<BlockSlot>; BLOCKS] {
        let (banks, per_block) = (self.banks(), CHANNELS / self.lasers_per_block());
        std::array::from_fn(|b| {
            let slot = |firing, bank, copy| Some(BlockSlot { firing, bank, copy });
            let paired = if b % 2 == 0 {
                SINGLE_OR_LAST
            } else {
                STRONGEST
            };
            match (mode, self) {
                (VelodyneReturnMode::Dual, VelodyneModel::Hdl64e) => {
                    let copy = [STRONGEST, SINGLE_OR_LAST][(b / 2) % 2];
                    slot(b / 4, b % 2, copy)
                }
                (VelodyneReturnMode::Dual, VelodyneModel::Vls128) if b < 8 => {
                    slot(0, b / 2, paired)
                }
                (VelodyneReturnMode::Dual, VelodyneModel::Vls128) => None,
                (VelodyneReturnMode::Dual, _) => slot(b / 2 * per_block, 0, paired),
                _ => slot(b / banks * per_block, b % banks, SINGLE_OR_LAST),
            }
        })
    }

    /// Firing sequences a packet holds in `mode`: VLP-16 24, HDL-32E and VLP-32C 12,
    /// HDL-64E 6, VLS-128 3; half as many (the VLS-128: one) in dual mode.
    pub(crate) fn firings_per_packet(self, mode: VelodyneReturnMode) -> usize {
        let per_block = CHANNELS / self.lasers_per_block();
        self.block_slots(mode)
            .iter()
            .flatten()
            .map(|s| s.firing + per_block)
            .max()
            .unwrap_or(0)
    }
}
