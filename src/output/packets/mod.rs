//! Real sensors' wire formats: the UDP payloads a Velodyne or Ouster sensor sends for
//! the points of a frame (with a Velodyne's position packets of its clock, and an
//! Ouster sensor's IMU samples, [`OusterImuEncoder`]), and the pcap files that hold
//! them offline.
//!
//! An encoder turns frames (a [`PointCloud`] each, in frame order) into [`Packet`]s:
//! payloads with the sensor time at which the real sensor would send them. Packets do
//! not align with frames on every sensor (a VLP-16 at 10 Hz sends 75⅓ packets per
//! turn), so an encoder keeps the columns that do not fill a packet for the next frame
//! and sends them with [`PacketEncoder::finish`] at the end of a stream.
//!
//! Back the other way, [`read_pcap`] gives a capture's UDP datagrams, and
//! [`decode_velodyne`] and [`decode_ouster`] (with the sensor's metadata,
//! [`OusterLayout`]) turn them into frames of points, as VeloView and Ouster Studio do.

mod hesai;
mod livox;
mod ouster;
mod pcap;
mod pcap_read;
mod spinning;
mod udp;
mod utc;
mod velodyne;

pub use hesai::{
    decode_hesai, hesai_correction_csv, hesai_model_of, HesaiEncoder, HesaiLayout, HesaiModel,
    HesaiOptions, HesaiReturnMode, HESAI_DATA_PORT,
};
pub use livox::{
    decode_livox, is_livox_data, protocol as livox_protocol, LivoxDataType, LivoxDevice,
    LivoxDeviceReport, LivoxEncoder, LivoxImuEncoder, LivoxOptions, LIVOX_HOST_IMU_PORT,
    LIVOX_HOST_POINT_PORT, LIVOX_IMU_PORT, LIVOX_IMU_RATE_HZ, LIVOX_POINTS_PER_PACKET,
    LIVOX_POINT_PORT, MID_360_IMU_POSITION_M,
};
pub use ouster::{
    crc64, crc64_byte_table, decode_ouster, HttpExchange, OusterEncoder, OusterFamily,
    OusterHttpError, OusterHttpServer, OusterImuEncoder, OusterLayout, OusterMetadata,
    OusterOptions, OusterPacketLayout, OusterProfile, OusterSensor, OusterTimestampMode,
    COLUMNS_PER_PACKET, DEFAULT_SERIAL, EXCHANGE_LOG, FIRMWARE_VERSION, IMU_PACKET_LEN, IMU_PORT,
    LIDAR_PORT,
};
pub use pcap::{
    write_pcap, write_pcap_to, PcapError, PcapOptions, PcapWriter, MAX_UDP_PAYLOAD, MTU,
};
pub use pcap_read::{read_pcap, Datagram};
pub use udp::{Pacing, SendStats, SinkError, UdpSink};
pub use utc::Utc;
pub use velodyne::{
    decode_velodyne, gprmc_sentence, hdl64e_calibration_yaml, is_velodyne_data, position_packet,
    reflectance_of_byte, velodyne_model_of, PositionPackets, VelodyneEncoder, VelodyneModel,
    VelodyneOptions, VelodyneReturnMode, WithPositionPackets, VELODYNE_DATA_PORT,
    VELODYNE_MAX_RANGE_M, VELODYNE_PAYLOAD_LEN, VELODYNE_POSITION_LEN, VELODYNE_POSITION_PORT,
};

use super::PointCloud;

/// One frame of points decoded from a capture's packets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecodedFrame {
    /// Capture time (s) of the packet that began the frame.
    pub time_s: f64,
    pub cloud: PointCloud,
}

/// One UDP payload and when the real sensor sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    /// Sensor time (s since the stream's first frame began) at which the payload is
    /// sent: after the last firing it holds.
    pub time_s: f64,
    /// The UDP port the vendor sends it to (Velodyne data 2368, Ouster lidar 7502,
    /// Ouster IMU 7503).
    pub port: u16,
    pub payload: Vec<u8>,
}

/// A frame that cannot be put into the chosen wire format.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    /// The sensor does not match the format (e.g. VLP-16 packets for a 128-beam
    /// pattern); the message says what the format needs.
    #[error("{format} packets: {message}")]
    Sensor {
        format: &'static str,
        message: String,
    },
    /// A point that the format cannot carry (its beam is not in the pattern, its range
    /// is beyond what the format encodes, …); never dropped silently.
    #[error("{format} packets: {message}")]
    Point {
        format: &'static str,
        message: String,
    },
}

/// Turns frames into packets; one per stream, fed every frame in order.
pub trait PacketEncoder: Send {
    /// The packets of `cloud`, frame `frame` of the stream, which began `frame_start_s`
    /// seconds (sensor time) after the stream's first frame began.
    fn push_frame(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        cloud: &PointCloud,
    ) -> Result<Vec<Packet>, PacketError>;

    /// The packets still held (a partly filled last packet), at the end of a stream.
    fn finish(&mut self) -> Vec<Packet>;

    /// The packets of frame `frame` from what the GPU made of it (see [`Made`]), with
    /// what the encoder adds (an Ouster sensor's IMU packets, a Velodyne's position
    /// packets): the same packets as [`push_frame`](Self::push_frame) of the frame's
    /// points. By default, lidar packets pass as they are and channels are refused.
    fn push_made(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        made: Made<'_>,
    ) -> Result<Vec<Packet>, PacketError> {
        let _ = (frame, frame_start_s);
        match made {
            Made::Packets(lidar) => Ok(lidar),
            Made::Channels(_) => Err(PacketError::Sensor {
                format: "packets",
                message: "this encoder takes no Velodyne channels".into(),
            }),
        }
    }
}

/// Packets a sensor sends beside its encoder's (a Velodyne's position packets, an
/// Ouster's IMU packets), merged in by [`WithSide`].
pub trait SidePackets: Send {
    /// A frame's packets (it began `frame_start_s` into the stream) with this side's
    /// packets of its time merged in by send time.
    fn frame(&mut self, frame_start_s: f64, packets: Vec<Packet>) -> Vec<Packet>;

    /// The encoder's last packets, at the end of a stream, with what is due among
    /// them; by default they pass as they are.
    fn finish(&mut self, packets: Vec<Packet>) -> Vec<Packet> {
        packets
    }
}

/// An encoder with a side's packets merged into each frame's.
pub struct WithSide<S> {
    pub encoder: Box<dyn PacketEncoder>,
    pub side: S,
}

impl<S: SidePackets> PacketEncoder for WithSide<S> {
    fn push_frame(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        cloud: &PointCloud,
    ) -> Result<Vec<Packet>, PacketError> {
        let packets = self.encoder.push_frame(frame, frame_start_s, cloud)?;
        Ok(self.side.frame(frame_start_s, packets))
    }

    fn push_made(
        &mut self,
        frame: u64,
        frame_start_s: f64,
        made: Made<'_>,
    ) -> Result<Vec<Packet>, PacketError> {
        let packets = self.encoder.push_made(frame, frame_start_s, made)?;
        Ok(self.side.frame(frame_start_s, packets))
    }

    fn finish(&mut self) -> Vec<Packet> {
        let packets = self.encoder.finish();
        self.side.finish(packets)
    }
}

/// What the GPU made of a frame for its packets.
pub enum Made<'a> {
    /// The lidar packets themselves (Ouster's).
    Packets(Vec<Packet>),
    /// Per beam, the two channels a Velodyne or Hesai return mode reports ([single or
    /// last, strongest]), each `distance | reflectivity << 16` (see
    /// [`VelodyneEncoder::push_made`]).
    Channels(&'a [[u32; 2]]),
}
