//! Ouster OS0/OS1/OS2 lidar packets: the sensor they describe, checked.
//!
//! Sources: Ouster's Software User Manual and its firmware 2.x/3.x "Sensor Data"
//! chapter (lidar data packet formats, lidar modes, coordinate frames), and ouster-sdk
//! 1.0 (`PacketFormat`'s field tables, `make_xyz_lut`, the metadata parser), which the
//! tests decode our packets with.
//!
//! An Ouster frame is an image of `channels` rows × `columns` columns. All channels of
//! a column fire together; column `m` (its *measurement id*) is taken at encoder angle
//! 360° − 360°·m/columns in Ouster's lidar frame, which is azimuth 180° − 360°·m/columns
//! in beamtrace's sensor frame (see `ouster_meta` for the frames). A beamtrace sensor
//! fits when its beams are that grid in Ouster's order — column after column, channel 0
//! (the top beam) first — which is how the `os0-*`, `os1-*` and `os2-*` presets lay
//! them out. [`OusterSensor::new`] checks this once; the encoder
//! (`ouster_encode`) and the metadata (`ouster_meta`) then describe the same sensor.
//!
//! Returns: the LEGACY and RNG19_RFL8_SIG16_NIR16 profiles carry one return per pixel,
//! the beam's strongest (the largest echo peak, R_app/r²), as a real sensor in a
//! single-return profile reports it; RNG19_RFL8_SIG16_NIR16_DUAL carries the strongest
//! and the second strongest, in that order, as Ouster's dual-return firmware does.
//! A beam's further echoes (beamtrace points come in range order and a sensor may be
//! set to more returns) are not in any Ouster packet.

mod decode;
mod encode;
mod http;
mod imu;
mod meta;

pub use decode::{decode_ouster, OusterLayout};
pub use encode::{crc64, crc64_byte_table, OusterEncoder};
pub use http::{HttpExchange, OusterHttpError, OusterHttpServer, EXCHANGE_LOG};
pub use imu::{OusterImuEncoder, IMU_PACKET_LEN};
pub use meta::{OusterMetadata, FIRMWARE_VERSION};

use super::PacketError;
use crate::output::BeamDesc;
use std::fmt;

/// Columns of one Ouster lidar packet (`columns_per_packet` of the metadata; the
/// firmware's default, and what every lidar mode divides into).
pub const COLUMNS_PER_PACKET: usize = crate::contract::OUSTER_COLUMNS_PER_PACKET as usize;

/// The UDP port a sensor sends lidar packets to unless configured otherwise.
pub const LIDAR_PORT: u16 = 7502;

/// The UDP port a sensor sends IMU packets to unless configured otherwise.
pub const IMU_PORT: u16 = 7503;

/// The clock of a sensor's timestamps (the metadata's `timestamp_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OusterTimestampMode {
    /// `TIME_FROM_INTERNAL_OSC`: the sensor's own clock, counting from power-on (which
    /// the simulated sensor takes as its stream's start: timestamps from 0).
    #[default]
    InternalOsc,
    /// `TIME_FROM_PTP_1588`: a PTP grandmaster's time, Unix time in nanoseconds.
    Ptp1588,
}

impl OusterTimestampMode {
    /// The name the metadata's `timestamp_mode` gives it.
    pub fn name(self) -> &'static str {
        match self {
            OusterTimestampMode::InternalOsc => "TIME_FROM_INTERNAL_OSC",
            OusterTimestampMode::Ptp1588 => "TIME_FROM_PTP_1588",
        }
    }

    /// The clock of a stream whose first frame began at Unix time `unix_start`: from 0
    /// on the internal oscillator when no time is given (0, offline files that repeat
    /// byte for byte), else PTP's Unix time.
    pub fn for_start(unix_start: std::time::Duration) -> Self {
        match unix_start.is_zero() {
            true => OusterTimestampMode::InternalOsc,
            false => OusterTimestampMode::Ptp1588,
        }
    }

    /// The timestamp (ns) of the stream's start in this mode: 0 on the internal
    /// oscillator, `unix_start` in PTP time.
    pub fn start_ns(self, unix_start: std::time::Duration) -> u64 {
        match self {
            OusterTimestampMode::InternalOsc => 0,
            OusterTimestampMode::Ptp1588 => {
                u64::try_from(unix_start.as_nanos()).unwrap_or(u64::MAX)
            }
        }
    }
}

/// The product family; with the channel count it names the product line (`OS-1-128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OusterFamily {
    Os0,
    Os1,
    Os2,
}

impl OusterFamily {
    /// The family of a beamtrace preset by its name (`os1-128` → OS1), `None` for any
    /// other sensor name.
    pub fn of_preset(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        [
            ("os0-", OusterFamily::Os0),
            ("os1-", OusterFamily::Os1),
            ("os2-", OusterFamily::Os2),
        ]
        .into_iter()
        .find(|(prefix, _)| lower.starts_with(prefix))
        .map(|(_, f)| f)
    }

    /// The digit of the product line.
    fn digit(self) -> u32 {
        match self {
            OusterFamily::Os0 => 0,
            OusterFamily::Os1 => 1,
            OusterFamily::Os2 => 2,
        }
    }

    /// The channel counts the family is sold with (OS0/OS2: 32, 64, 128; OS1 also 16).
    pub fn channel_counts(self) -> &'static [usize] {
        match self {
            OusterFamily::Os1 => &[16, 32, 64, 128],
            OusterFamily::Os0 | OusterFamily::Os2 => &[32, 64, 128],
        }
    }

    /// The product line as the metadata's `prod_line` gives it, e.g. `OS-1-128`.
    pub fn product_line(self, channels: usize) -> String {
        format!("OS-{}-{channels}", self.digit())
    }
}

impl fmt::Display for OusterFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OS{}", self.digit())
    }
}

/// A lidar UDP profile: what each pixel of a packet holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OusterProfile {
    /// Firmware ≤ 2.1's format (and later firmware's `LEGACY`): per pixel a 20-bit
    /// range (mm), 16-bit reflectivity, signal and near-IR; no packet header.
    Legacy,
    /// Per pixel a 19-bit range (mm), 8-bit reflectivity, 16-bit signal and near-IR;
    /// a packet header and footer. One return: the strongest.
    Rng19Rfl8Sig16Nir16,
    /// As [`OusterProfile::Rng19Rfl8Sig16Nir16`] with a second return (range,
    /// reflectivity, signal): the strongest first, then the second strongest.
    Rng19Rfl8Sig16Nir16Dual,
}

impl OusterProfile {
    pub const ALL: [OusterProfile; 3] = [
        OusterProfile::Legacy,
        OusterProfile::Rng19Rfl8Sig16Nir16,
        OusterProfile::Rng19Rfl8Sig16Nir16Dual,
    ];

    /// The name the metadata's `udp_profile_lidar` gives it.
    pub fn name(self) -> &'static str {
        match self {
            OusterProfile::Legacy => "LEGACY",
            OusterProfile::Rng19Rfl8Sig16Nir16 => "RNG19_RFL8_SIG16_NIR16",
            OusterProfile::Rng19Rfl8Sig16Nir16Dual => "RNG19_RFL8_SIG16_NIR16_DUAL",
        }
    }

    /// What [`PacketError`]s call the format.
    pub fn format(self) -> &'static str {
        match self {
            OusterProfile::Legacy => "Ouster LEGACY",
            OusterProfile::Rng19Rfl8Sig16Nir16 => "Ouster RNG19_RFL8_SIG16_NIR16",
            OusterProfile::Rng19Rfl8Sig16Nir16Dual => "Ouster RNG19_RFL8_SIG16_NIR16_DUAL",
        }
    }

    /// Returns per pixel.
    pub fn returns(self) -> usize {
        match self {
            OusterProfile::Rng19Rfl8Sig16Nir16Dual => 2,
            _ => 1,
        }
    }

    /// The largest range (mm) a pixel's range field holds: 2²⁰ − 1 or 2¹⁹ − 1.
    pub fn max_range_mm(self) -> u32 {
        match self {
            OusterProfile::Legacy => (1 << 20) - 1,
            _ => (1 << 19) - 1,
        }
    }

    /// Bytes of packet header, column header, pixel, column footer and packet footer.
    pub(crate) fn sizes(self) -> Sizes {
        match self {
            OusterProfile::Legacy => Sizes {
                header: 0,
                column_header: 16,
                pixel: 12,
                column_footer: 4,
                footer: 0,
            },
            OusterProfile::Rng19Rfl8Sig16Nir16 => Sizes {
                pixel: 12,
                ..Sizes::EUDP
            },
            OusterProfile::Rng19Rfl8Sig16Nir16Dual => Sizes {
                pixel: 16,
                ..Sizes::EUDP
            },
        }
    }

    /// Bytes of one lidar packet of a `channels`-channel sensor.
    pub fn packet_size(self, channels: usize) -> usize {
        self.sizes().packet(channels)
    }
}

impl fmt::Display for OusterProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for OusterProfile {
    type Err = String;

    /// The metadata's name, in any case, or `legacy`, `rng19`, `rng19-dual`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_uppercase().replace('-', "_");
        let found = match t.as_str() {
            "RNG19" => Some(OusterProfile::Rng19Rfl8Sig16Nir16),
            "RNG19_DUAL" => Some(OusterProfile::Rng19Rfl8Sig16Nir16Dual),
            _ => Self::ALL.into_iter().find(|p| p.name() == t),
        };
        found.ok_or_else(|| {
            format!(
                "unknown Ouster lidar profile `{s}`: give LEGACY, RNG19_RFL8_SIG16_NIR16 \
                 (rng19) or RNG19_RFL8_SIG16_NIR16_DUAL (rng19-dual)"
            )
        })
    }
}

/// The byte layout of a profile's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    pub header: usize,
    pub column_header: usize,
    pub pixel: usize,
    pub column_footer: usize,
    pub footer: usize,
}

impl Sizes {
    /// The eUDP profiles': a 32-byte packet header and footer, 12-byte column headers.
    const EUDP: Sizes = Sizes {
        header: 32,
        column_header: 12,
        pixel: 0,
        column_footer: 0,
        footer: 32,
    };

    pub fn column(&self, channels: usize) -> usize {
        self.column_header + channels * self.pixel + self.column_footer
    }

    pub fn packet(&self, channels: usize) -> usize {
        self.header + COLUMNS_PER_PACKET * self.column(channels) + self.footer
    }
}

/// What the packets and metadata say besides the beams: the profile, the product, the
/// unit's identity and where the packets go.
#[derive(Debug, Clone, PartialEq)]
pub struct OusterOptions {
    pub family: OusterFamily,
    pub profile: OusterProfile,
    /// The unit's serial number (`prod_sn`; 40 bits in the packet header).
    pub serial: u64,
    /// The initialization id (`initialization_id`; 24 bits in the packet header), which
    /// a real sensor changes at every start.
    pub init_id: u32,
    /// Sensor time (ns) of the stream's start: a column's or an IMU sample's timestamp
    /// is this plus its time since the stream began. In `timestamp_mode`'s clock:
    /// `TIME_FROM_INTERNAL_OSC` counts from power-on, `TIME_FROM_PTP_1588` is Unix time
    /// ([`OusterTimestampMode::start_ns`] gives the value that goes with each).
    pub start_ns: u64,
    /// The metadata's `timestamp_mode`: the clock `start_ns` is in.
    pub timestamp_mode: OusterTimestampMode,
    /// Where the packets go (`udp_dest`, `udp_port_lidar`, `udp_port_imu` of the
    /// metadata).
    pub udp_dest: String,
    pub udp_port_lidar: u16,
    pub udp_port_imu: u16,
}

/// The serial number [`OusterOptions::new`] gives: 1, which no real unit has.
pub const DEFAULT_SERIAL: u64 = 1;

impl OusterOptions {
    /// `family` and `profile` with serial [`DEFAULT_SERIAL`], initialization id 1, the
    /// internal oscillator's clock starting at 0 and packets to 127.0.0.1, lidar on
    /// 7502, IMU on 7503.
    pub fn new(family: OusterFamily, profile: OusterProfile) -> Self {
        OusterOptions {
            family,
            profile,
            serial: DEFAULT_SERIAL,
            init_id: 1,
            start_ns: 0,
            timestamp_mode: OusterTimestampMode::InternalOsc,
            udp_dest: "127.0.0.1".to_string(),
            udp_port_lidar: LIDAR_PORT,
            udp_port_imu: IMU_PORT,
        }
    }
}

/// A beamtrace sensor checked against an Ouster product and lidar mode, with what the
/// packets and the metadata need of its beams.
#[derive(Debug, Clone)]
pub struct OusterSensor {
    pub(crate) options: OusterOptions,
    pub(crate) channels: usize,
    pub(crate) columns: usize,
    /// Frames per second: 10 or 20.
    pub(crate) frame_rate: u32,
    /// Per channel (row 0 = the top beam): elevation (deg).
    pub(crate) altitude_deg: Vec<f64>,
    /// Per channel: how far the beam points clockwise of its column's encoder angle
    /// (deg), Ouster's `beam_azimuth_angles`.
    pub(crate) azimuth_deg: Vec<f64>,
    /// Distance of every beam's origin from the spin axis (m).
    pub(crate) origin_offset: f32,
    /// Per column: its firing time since the frame began (s).
    pub(crate) column_time: Vec<f64>,
}

/// Elevations of one channel may differ across columns by this much (rad): the
/// presets' f32 angles are one value per laser.
const ELEVATION_TOLERANCE: f64 = 1e-6;
/// A channel's azimuth offset may differ across columns by this much (deg): f32
/// radians near π carry about 1.5·10⁻⁵°.
const AZIMUTH_TOLERANCE_DEG: f64 = 1e-3;
/// Beam origins may differ by this much (m).
const ORIGIN_TOLERANCE: f64 = 1e-6;
/// Ouster puts a beam's origin on its column's encoder angle: a beam's origin may lie
/// off it only as far as moves the origin by this much (m), well under the packets'
/// 1 mm.
const ORIGIN_SHIFT_TOLERANCE: f64 = 1e-4;
/// The channels of a column must fire within this much of each other (s).
const TIME_TOLERANCE: f64 = 1e-9;

impl OusterSensor {
    /// Checks that `beams` (in the pattern's order, a point's `beam` indexing it) of a
    /// pattern of `columns` columns turning at `frame_rate` are an Ouster lidar mode of
    /// `options.family` in Ouster's order; the error says what the format needs.
    pub fn new(
        options: OusterOptions,
        beams: &[BeamDesc],
        columns: u32,
        frame_rate: f32,
    ) -> Result<Self, PacketError> {
        let err = |message: String| PacketError::Sensor {
            format: options.profile.format(),
            message,
        };
        check_options(&options).map_err(err)?;
        let columns = columns as usize;
        let channels = check_size(options.family, beams.len(), columns).map_err(err)?;
        let frame_rate = check_rate(frame_rate, columns).map_err(err)?;
        check_order(beams, channels).map_err(err)?;
        let altitude_deg = altitudes(beams, channels).map_err(err)?;
        let origin_offset = origin_offset(beams).map_err(err)?;
        let azimuth_deg = azimuth_offsets(beams, channels).map_err(err)?;
        check_origins_on_columns(beams, channels, origin_offset).map_err(err)?;
        let column_time = column_times(beams, channels).map_err(err)?;
        Ok(OusterSensor {
            options,
            channels,
            columns,
            frame_rate,
            altitude_deg,
            azimuth_deg,
            origin_offset,
            column_time,
        })
    }

    pub fn options(&self) -> &OusterOptions {
        &self.options
    }

    pub fn channels(&self) -> usize {
        self.channels
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Ouster's name of the lidar mode, e.g. `1024x10`.
    pub fn lidar_mode(&self) -> String {
        format!("{}x{}", self.columns, self.frame_rate)
    }

    /// Bytes of each lidar packet.
    pub fn packet_size(&self) -> usize {
        self.options.profile.packet_size(self.channels)
    }

    /// Lidar packets per frame.
    pub fn packets_per_frame(&self) -> usize {
        self.columns / COLUMNS_PER_PACKET
    }

    /// Where the encoder puts what in a lidar packet, for a GPU pass that writes them.
    pub fn packet_layout(&self) -> OusterPacketLayout {
        let sizes = self.options.profile.sizes();
        let o = &self.options;
        OusterPacketLayout {
            channels: self.channels,
            columns: self.columns,
            columns_per_packet: COLUMNS_PER_PACKET,
            packet: sizes.packet(self.channels),
            header: sizes.header,
            column: sizes.column(self.channels),
            column_header: sizes.column_header,
            pixel: sizes.pixel,
            footer: sizes.footer,
            ids: u64::from(o.init_id) | (o.serial << 24),
            origin_offset: self.origin_offset,
            max_range_mm: o.profile.max_range_mm(),
        }
    }
}

/// The byte layout of an Ouster sensor's lidar packets (see `ouster_encode`): sizes in
/// bytes, every one a multiple of 4.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OusterPacketLayout {
    pub channels: usize,
    pub columns: usize,
    pub columns_per_packet: usize,
    pub packet: usize,
    /// The packet header (0: LEGACY), one column with its header and footer, a
    /// column's header, a pixel, the packet footer (whose last 8 bytes are the CRC).
    pub header: usize,
    pub column: usize,
    pub column_header: usize,
    pub pixel: usize,
    pub footer: usize,
    /// The header's initialization id and serial number word.
    pub ids: u64,
    /// Added to every range (m): Ouster measures from the lidar origin.
    pub origin_offset: f32,
    /// The range field's largest value.
    pub max_range_mm: u32,
}

fn check_options(o: &OusterOptions) -> Result<(), String> {
    if o.serial >= 1 << 40 {
        return Err(format!(
            "serial number {} does not fit the packet header's 40 bits: give one below {}",
            o.serial,
            1u64 << 40
        ));
    }
    if o.init_id >= 1 << 24 {
        return Err(format!(
            "initialization id {} does not fit the packet header's 24 bits: give one \
             below {}",
            o.init_id,
            1u32 << 24
        ));
    }
    Ok(())
}

/// The channel count of `beams` beams in `columns` columns.
fn check_size(family: OusterFamily, beams: usize, columns: usize) -> Result<usize, String> {
    if ![512, 1024, 2048].contains(&columns) {
        return Err(format!(
            "the sensor has {columns} columns; Ouster's lidar modes have 512, 1024 or 2048 \
             (the os0, os1 and os2 presets take `columns`)"
        ));
    }
    let allowed = family.channel_counts();
    let channels = beams / columns;
    if !beams.is_multiple_of(columns) || !allowed.contains(&channels) {
        return Err(format!(
            "the sensor has {beams} beams in {columns} columns; an {family} has {allowed:?} \
             channels in every column"
        ));
    }
    Ok(channels)
}

/// The lidar mode's frame rate: 10 or 20 Hz, and not 20 Hz at 2048 columns.
fn check_rate(frame_rate: f32, columns: usize) -> Result<u32, String> {
    let rate = [10u32, 20]
        .into_iter()
        .find(|&r| (f64::from(frame_rate) - f64::from(r)).abs() < 1e-6 * f64::from(r));
    match rate {
        Some(20) if columns == 2048 => Err(
            "the sensor turns at 20 Hz with 2048 columns; Ouster's 2048-column mode is \
             2048x10 only"
                .to_string(),
        ),
        Some(r) => Ok(r),
        None => Err(format!(
            "the sensor turns at {frame_rate} Hz; Ouster's lidar modes run at 10 or 20 Hz \
             (set `frame_rate`)"
        )),
    }
}

/// `a` and `b` differ by at most `tol` (false when either is NaN).
fn within(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// `a < b` (false when either is NaN).
fn below(a: f64, b: f64) -> bool {
    a < b
}

/// Beam `col · channels + ch` must be channel `ch`'s beam of column `col`.
fn check_order(beams: &[BeamDesc], channels: usize) -> Result<(), String> {
    for (i, b) in beams.iter().enumerate() {
        let want = i % channels;
        if b.ring as usize != want {
            return Err(format!(
                "beam {i} is ring {}; Ouster's order (column after column, channel 0 = \
                 the top beam first) needs ring {want} there",
                b.ring
            ));
        }
    }
    Ok(())
}

/// Each channel's elevation (deg), the same in every column, channel 0 the highest.
fn altitudes(beams: &[BeamDesc], channels: usize) -> Result<Vec<f64>, String> {
    let mut out: Vec<f64> = Vec::with_capacity(channels);
    for ch in 0..channels {
        let el = f64::from(beams[ch].elevation);
        let off = beams[ch..]
            .iter()
            .step_by(channels)
            .enumerate()
            .find(|(_, b)| !within(f64::from(b.elevation), el, ELEVATION_TOLERANCE));
        if let Some((col, b)) = off {
            return Err(format!(
                "ring {ch} points at elevation {}° in column 0 but {}° in column {col}; \
                 an Ouster channel keeps its elevation",
                el.to_degrees(),
                f64::from(b.elevation).to_degrees()
            ));
        }
        if let Some(&above) = out.last() {
            if !below(el.to_degrees(), above) {
                return Err(format!(
                    "ring {ch} (elevation {}°) is not below ring {} ({above}°); Ouster's \
                     channel 0 is the top beam and each next one lower",
                    el.to_degrees(),
                    ch - 1
                ));
            }
        }
        out.push(el.to_degrees());
    }
    Ok(out)
}

/// Every beam's origin offset, one value for the sensor.
fn origin_offset(beams: &[BeamDesc]) -> Result<f32, String> {
    let first = beams.first().map_or(0.0, |b| b.origin_offset);
    match beams.iter().position(|b| {
        !within(
            f64::from(b.origin_offset),
            f64::from(first),
            ORIGIN_TOLERANCE,
        )
    }) {
        Some(i) => Err(format!(
            "beam {i} starts {} m from the axis and beam 0 {first} m; Ouster's metadata has \
             one lidar_origin_to_beam_origin_mm for all beams",
            beams[i].origin_offset
        )),
        None => Ok(first),
    }
}

/// Column `col`'s encoder angle in beamtrace's frame (deg): 180° − 360°·col/columns.
pub(crate) fn column_azimuth_deg(col: usize, columns: usize) -> f64 {
    180.0 - 360.0 * col as f64 / columns as f64
}

/// `a` wrapped into (−180°, 180°].
fn wrap_deg(a: f64) -> f64 {
    let w = a.rem_euclid(360.0);
    if w > 180.0 {
        w - 360.0
    } else {
        w
    }
}

/// Each channel's azimuth offset (deg, clockwise of its column's encoder angle), the
/// same in every column: the mean over the columns.
fn azimuth_offsets(beams: &[BeamDesc], channels: usize) -> Result<Vec<f64>, String> {
    let columns = beams.len() / channels;
    let offset = |i: usize| {
        let az = f64::from(beams[i].azimuth).to_degrees();
        wrap_deg(column_azimuth_deg(i / channels, columns) - az)
    };
    let mut out = Vec::with_capacity(channels);
    for ch in 0..channels {
        let first = offset(ch);
        let all: Vec<f64> = (0..columns).map(|c| offset(c * channels + ch)).collect();
        if let Some(c) = all
            .iter()
            .position(|&o| !within(wrap_deg(o - first), 0.0, AZIMUTH_TOLERANCE_DEG))
        {
            return Err(format!(
                "ring {ch} points {first}° clockwise of column 0's angle but {}° of column \
                 {c}'s; Ouster's column {c} fires at {}° (180° − 360°·column/columns) and \
                 a channel keeps its offset from it",
                all[c],
                column_azimuth_deg(c, columns)
            ));
        }
        let mean = first + all.iter().map(|o| wrap_deg(o - first)).sum::<f64>() / columns as f64;
        out.push(mean);
    }
    Ok(out)
}

/// Ouster's beam origins lie on their column's encoder angle, whatever way the beam
/// points (ouster-sdk's XYZ: n·(cos θ_encoder, sin θ_encoder)); so must the beams'.
fn check_origins_on_columns(
    beams: &[BeamDesc],
    channels: usize,
    origin: f32,
) -> Result<(), String> {
    if origin <= 0.0 {
        return Ok(());
    }
    let columns = beams.len() / channels;
    for (i, b) in beams.iter().enumerate() {
        let column = column_azimuth_deg(i / channels, columns);
        let off = wrap_deg(f64::from(b.origin_azimuth).to_degrees() - column);
        let shift = f64::from(origin) * off.to_radians().abs();
        if shift > ORIGIN_SHIFT_TOLERANCE {
            return Err(format!(
                "beam {i}'s origin lies {off:.3}° off its column's angle, {origin} m off the \
                 axis; Ouster puts every beam's origin on its column's encoder angle, {:.2} \
                 mm from this one",
                shift * 1e3
            ));
        }
    }
    Ok(())
}

/// Each column's firing time: all its channels fire together, columns one after another.
fn column_times(beams: &[BeamDesc], channels: usize) -> Result<Vec<f64>, String> {
    let mut out: Vec<f64> = Vec::with_capacity(beams.len() / channels);
    for (col, column) in beams.chunks(channels).enumerate() {
        let t = f64::from(column[0].time);
        if let Some(ch) = column
            .iter()
            .position(|b| !within(f64::from(b.time), t, TIME_TOLERANCE))
        {
            return Err(format!(
                "column {col} fires ring 0 at {t} s and ring {ch} at {} s; all channels of \
                 an Ouster column fire together",
                column[ch].time
            ));
        }
        if let Some(&before) = out.last() {
            if !below(before, t) {
                return Err(format!(
                    "column {col} fires at {t} s, not after column {} ({before} s); Ouster's \
                     columns fire in measurement-id order",
                    col - 1
                ));
            }
        }
        out.push(t);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "tests/encode.rs"]
mod tests;
