//! Frames into Livox point data packets, and IMU samples into IMU packets (layout in
//! the module docs of `livox`).

use super::{
    LIVOX_HEADER_LEN, LIVOX_HOST_IMU_PORT, LIVOX_HOST_POINT_PORT, LIVOX_POINTS_PER_PACKET,
};
use crate::model::ImuSample;
use crate::output::organize::BeamDesc;
use crate::output::packets::{Packet, PacketEncoder, PacketError};
use crate::output::{Point, PointCloud};
use crate::sensor::STANDARD_GRAVITY;
use std::time::Duration;

const FORMAT: &str = "Livox";

/// The point data type (`pcl_data_type`, key 0x0000 of the device's parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LivoxDataType {
    /// Cartesian, 32-bit mm (type 1, the device's default).
    #[default]
    CartesianHigh,
    /// Cartesian, 16-bit 10 mm (type 2).
    CartesianLow,
    /// Spherical: depth (mm) and zenith and azimuth (0.01°) (type 3).
    Spherical,
}

impl LivoxDataType {
    /// The protocol's `data_type` byte.
    pub fn code(self) -> u8 {
        match self {
            LivoxDataType::CartesianHigh => 1,
            LivoxDataType::CartesianLow => 2,
            LivoxDataType::Spherical => 3,
        }
    }

    pub fn of_code(code: u8) -> Option<LivoxDataType> {
        match code {
            1 => Some(LivoxDataType::CartesianHigh),
            2 => Some(LivoxDataType::CartesianLow),
            3 => Some(LivoxDataType::Spherical),
            _ => None,
        }
    }

    /// Bytes of one sample.
    pub fn sample_len(self) -> usize {
        match self {
            LivoxDataType::CartesianHigh => 14,
            LivoxDataType::CartesianLow => 8,
            LivoxDataType::Spherical => 10,
        }
    }

    /// The sample of `p` (sensor frame), or the zero sample of a firing without one.
    fn sample(self, p: Option<&Point>) -> Result<Vec<u8>, PacketError> {
        let Some(p) = p else {
            return Ok(vec![0; self.sample_len()]);
        };
        let mut out = Vec::with_capacity(self.sample_len());
        match self {
            LivoxDataType::CartesianHigh => {
                for v in [p.x, p.y, p.z] {
                    out.extend_from_slice(&fixed::<i32>(v, 1e3)?.to_le_bytes());
                }
            }
            LivoxDataType::CartesianLow => {
                for v in [p.x, p.y, p.z] {
                    out.extend_from_slice(&fixed::<i16>(v, 1e2)?.to_le_bytes());
                }
            }
            LivoxDataType::Spherical => {
                let depth = (p.x * p.x + p.y * p.y + p.z * p.z).sqrt();
                let zenith = (f64::from(p.z) / f64::from(depth).max(1e-9))
                    .acos()
                    .to_degrees();
                let azimuth = f64::from(p.y)
                    .atan2(f64::from(p.x))
                    .to_degrees()
                    .rem_euclid(360.0);
                out.extend_from_slice(&fixed::<u32>(depth, 1e3)?.to_le_bytes());
                out.extend_from_slice(&((zenith * 100.0).round() as u16).to_le_bytes());
                out.extend_from_slice(&((azimuth * 100.0).round() as u16 % 36000).to_le_bytes());
            }
        }
        out.push(p.reflectivity);
        out.push(0);
        Ok(out)
    }
}

/// `v` (m) in units of 1/`per_m` m, refused where the type cannot hold it.
fn fixed<T: TryFrom<i64>>(v: f32, per_m: f64) -> Result<T, PacketError> {
    let units = (f64::from(v) * per_m).round();
    let out_of_range = || PacketError::Point {
        format: FORMAT,
        message: format!(
            "a coordinate of {v} m does not fit the data type's field (units of {} mm); \
             use the 32-bit Cartesian type for such ranges",
            1e3 / per_m
        ),
    };
    if !units.is_finite() {
        return Err(out_of_range());
    }
    T::try_from(units as i64).map_err(|_| out_of_range())
}

/// How a stream's packets are made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LivoxOptions {
    pub data_type: LivoxDataType,
    /// Unix time of the stream's start: 0 stamps packets with the time since power-on
    /// (`time_type` 0), else with PTP's Unix time (`time_type` 1).
    pub start: Duration,
}

impl LivoxOptions {
    fn time_type(&self) -> u8 {
        u8::from(!self.start.is_zero())
    }

    fn stamp_ns(&self, t: f64) -> u64 {
        let since = (t.max(0.0) * 1e9).round() as u64;
        (self.start.as_nanos() as u64).saturating_add(since)
    }
}

/// One sample waiting for its packet: its stream time and frame, and its bytes.
struct Sample {
    t: f64,
    frame: u64,
    bytes: Vec<u8>,
}

/// A Livox preset's frames into point data packets of 96 samples (module docs).
pub struct LivoxEncoder {
    options: LivoxOptions,
    /// Each beam's firing time within the frame (s).
    times: Vec<f64>,
    held: Vec<Sample>,
    udp_cnt: u16,
    /// The frame of the last packet's first sample.
    frame: Option<u64>,
}

impl LivoxEncoder {
    /// An encoder for a sensor of `beams` (in firing order, equally spaced in time, as
    /// the Livox presets' are).
    pub fn new(options: LivoxOptions, beams: &[BeamDesc]) -> Result<LivoxEncoder, PacketError> {
        let times: Vec<f64> = beams.iter().map(|b| f64::from(b.time)).collect();
        let in_order = times.windows(2).all(|w| w[1] > w[0]);
        if beams.len() < 2 || !in_order {
            return Err(PacketError::Sensor {
                format: FORMAT,
                message: "the sensor's beams must fire one after the other, as a Livox \
                          preset's do: use --sensor livox-mid-360"
                    .into(),
            });
        }
        Ok(LivoxEncoder {
            options,
            times,
            held: Vec::new(),
            udp_cnt: 0,
            frame: None,
        })
    }

    /// The packet of `samples` (at most 96, the first starting it).
    fn packet(&mut self, samples: &[Sample]) -> Packet {
        let first = &samples[0];
        let last = &samples[samples.len() - 1];
        if self.frame != Some(first.frame) {
            self.frame = Some(first.frame);
            self.udp_cnt = 0;
        }
        let interval = ((last.t - first.t) * 1e7).round().clamp(0.0, 65535.0) as u16;
        let data: Vec<u8> = samples
            .iter()
            .flat_map(|s| s.bytes.iter().copied())
            .collect();
        let header = Header {
            time_interval: interval,
            dot_num: samples.len() as u16,
            udp_cnt: self.udp_cnt,
            frame_cnt: first.frame as u8,
            data_type: self.options.data_type.code(),
            time_type: self.options.time_type(),
            timestamp_ns: self.options.stamp_ns(first.t),
        };
        self.udp_cnt = self.udp_cnt.wrapping_add(1);
        Packet {
            time_s: last.t,
            port: LIVOX_HOST_POINT_PORT,
            payload: header.payload(&data),
        }
    }

    /// The full packets of the held samples, keeping the rest.
    fn full_packets(&mut self) -> Vec<Packet> {
        let full = self.held.len() / LIVOX_POINTS_PER_PACKET * LIVOX_POINTS_PER_PACKET;
        let samples: Vec<Sample> = self.held.drain(..full).collect();
        samples
            .chunks(LIVOX_POINTS_PER_PACKET)
            .map(|c| self.packet(c))
            .collect()
    }
}

/// Each beam's first echo (the nearest), by beam index.
fn first_echoes(beams: usize, cloud: &PointCloud) -> Result<Vec<Option<&Point>>, PacketError> {
    let mut first: Vec<Option<&Point>> = vec![None; beams];
    for p in &cloud.points {
        let slot = first
            .get_mut(p.beam as usize)
            .ok_or_else(|| PacketError::Point {
                format: FORMAT,
                message: format!("a point of beam {} of a {beams}-beam sensor", p.beam),
            })?;
        if slot.is_none_or(|q| p.range < q.range) {
            *slot = Some(p);
        }
    }
    Ok(first)
}

impl PacketEncoder for LivoxEncoder {
    fn push_frame(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        cloud: &PointCloud,
    ) -> Result<Vec<Packet>, PacketError> {
        let first = first_echoes(self.times.len(), cloud)?;
        for (t, p) in self.times.iter().zip(first) {
            self.held.push(Sample {
                t: frame_start_s + t,
                frame,
                bytes: self.options.data_type.sample(p)?,
            });
        }
        Ok(self.full_packets())
    }

    fn finish(&mut self) -> Vec<Packet> {
        let mut packets = self.full_packets();
        let rest: Vec<Sample> = self.held.drain(..).collect();
        if !rest.is_empty() {
            packets.push(self.packet(&rest));
        }
        packets
    }
}

/// The 36-byte header's fields that vary.
struct Header {
    time_interval: u16,
    dot_num: u16,
    udp_cnt: u16,
    frame_cnt: u8,
    data_type: u8,
    time_type: u8,
    timestamp_ns: u64,
}

impl Header {
    /// The whole payload: this header, its CRC-32 of timestamp and data, the data.
    fn payload(&self, data: &[u8]) -> Vec<u8> {
        let len = LIVOX_HEADER_LEN + data.len();
        let mut p = Vec::with_capacity(len);
        p.push(0);
        p.extend_from_slice(&(len as u16).to_le_bytes());
        p.extend_from_slice(&self.time_interval.to_le_bytes());
        p.extend_from_slice(&self.dot_num.to_le_bytes());
        p.extend_from_slice(&self.udp_cnt.to_le_bytes());
        p.push(self.frame_cnt);
        p.push(self.data_type);
        p.push(self.time_type);
        p.extend_from_slice(&[0; 12]);
        let stamp = self.timestamp_ns.to_le_bytes();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&stamp);
        crc.update(data);
        p.extend_from_slice(&crc.finalize().to_le_bytes());
        p.extend_from_slice(&stamp);
        p.extend_from_slice(data);
        p
    }
}

/// A Mid-360's IMU samples into IMU packets (data type 0), in the clock of its point
/// packets.
pub struct LivoxImuEncoder {
    pub options: LivoxOptions,
}

impl LivoxImuEncoder {
    /// The packet of one sample, sent at its time: gyro (rad/s), then acceleration (g).
    pub fn packet(&self, s: &ImuSample) -> Packet {
        let mut data = Vec::with_capacity(24);
        let accel = s.accel / STANDARD_GRAVITY;
        for v in s.gyro.to_array().into_iter().chain(accel.to_array()) {
            data.extend_from_slice(&(v as f32).to_le_bytes());
        }
        let header = Header {
            time_interval: 0,
            dot_num: 1,
            udp_cnt: 0,
            frame_cnt: 0,
            data_type: 0,
            time_type: self.options.time_type(),
            timestamp_ns: self.options.stamp_ns(s.t),
        };
        Packet {
            time_s: s.t,
            port: LIVOX_HOST_IMU_PORT,
            payload: header.payload(&data),
        }
    }
}
