//! pcap files of a sensor's packets, as a capture on the sensor's network would hold them.
//!
//! The classic libpcap format (the pcap-savefile(5) man page): a 24-byte header (magic
//! 0xa1b2c3d4 in the writer's byte order, here little endian, version 2.4, microsecond
//! timestamps, link type 1 = Ethernet), then per frame a 16-byte record (seconds, µs,
//! captured and original length) and the frame: Ethernet II, IPv4 (RFC 791, header
//! checksum set), UDP (RFC 768, checksum set over the pseudo-header, 0xFFFF for a sum of
//! 0). A packet is captured at `start + Packet::time_s`.
//!
//! A payload that does not fit one 1500-byte Ethernet frame (an Ouster OS1-128 LEGACY
//! packet is 24 896 bytes) is sent as IPv4 fragments, as the sensor's network stack sends
//! it: every fragment but the last carries 1480 bytes and the "more fragments" flag, its
//! offset in 8-byte units, and all share the datagram's identification (which counts up
//! per datagram). Wireshark/tshark and ouster-sdk's pcap reader reassemble them. A payload
//! beyond the 65 507 bytes one IPv4 datagram carries is refused.
//!
//! Addresses default to a VLP-16's (192.168.1.201 broadcasting to 255.255.255.255, VLP-16
//! manual §9.3); UDP ports to the packet's port at both ends. MAC addresses are
//! locally administered ones (02:…), not a vendor's; the destination's follows from the
//! destination address (broadcast ff:ff:ff:ff:ff:ff, IPv4 multicast 01:00:5e:…) unless
//! given.

use super::Packet;
use crate::output::{write_atomic, OutputError};
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

/// Largest Ethernet payload (bytes): an IPv4 header and its data.
pub const MTU: usize = 1500;
/// The largest UDP payload one IPv4 datagram carries: 65535 − 20 (IPv4) − 8 (UDP).
pub const MAX_UDP_PAYLOAD: usize = 65_507;

const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
const LINKTYPE_ETHERNET: u32 = 1;
const SNAPLEN: u32 = 65_535;
const ETHERTYPE_IPV4: u16 = 0x0800;
const IPV4_HEADER: usize = 20;
const UDP_HEADER: usize = 8;
const PROTOCOL_UDP: u8 = 17;
const TTL: u8 = 64;
/// Data bytes of every fragment but the last: the MTU less the IPv4 header, in whole
/// 8-byte units (fragment offsets count those).
const FRAGMENT_DATA: usize = (MTU - IPV4_HEADER) / 8 * 8;
const MORE_FRAGMENTS: u16 = 0x2000;
const BROADCAST_MAC: [u8; 6] = [0xff; 6];
/// Locally administered (bit 1 of the first byte) unicast addresses.
const SOURCE_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const UNICAST_DESTINATION_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// The capture's addresses and start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapOptions {
    /// The sensor's address (default 192.168.1.201, a VLP-16's factory setting).
    pub source: Ipv4Addr,
    /// Where the sensor sends (default 255.255.255.255, a VLP-16's broadcast).
    pub destination: Ipv4Addr,
    /// UDP source port; `None`: the packet's port.
    pub source_port: Option<u16>,
    /// UDP destination port; `None`: the packet's port.
    pub destination_port: Option<u16>,
    pub source_mac: [u8; 6],
    /// `None`: broadcast for 255.255.255.255, the IPv4 multicast MAC for 224.0.0.0/4,
    /// 02:00:00:00:00:02 for any other address.
    pub destination_mac: Option<[u8; 6]>,
    /// Unix time at which the stream began: a packet is captured at start + its time.
    pub start: Duration,
}

impl Default for PcapOptions {
    fn default() -> Self {
        PcapOptions {
            source: Ipv4Addr::new(192, 168, 1, 201),
            destination: Ipv4Addr::BROADCAST,
            source_port: None,
            destination_port: None,
            source_mac: SOURCE_MAC,
            destination_mac: None,
            start: Duration::ZERO,
        }
    }
}

impl PcapOptions {
    fn destination_mac(&self) -> [u8; 6] {
        if let Some(mac) = self.destination_mac {
            return mac;
        }
        let d = self.destination;
        if d.is_broadcast() {
            BROADCAST_MAC
        } else if d.is_multicast() {
            let o = d.octets();
            [0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]]
        } else {
            UNICAST_DESTINATION_MAC
        }
    }
}

/// A packet that cannot go into a pcap file, or the file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error(
        "pcap: packet {index} (port {port}) has a UDP payload of {len} bytes, more than \
         the {MAX_UDP_PAYLOAD} bytes one IPv4 datagram carries; the encoder must split \
         it into the vendor's packets"
    )]
    TooLarge { index: u64, port: u16, len: usize },
    #[error(
        "pcap: packet {index} is sent {time_s} s after the capture start (Unix time \
         {start_s} s), which is not a time pcap holds (1970 to 2106); give packets finite \
         times and a start after 1970"
    )]
    Time {
        index: u64,
        time_s: f64,
        start_s: f64,
    },
    #[error("pcap: {0}")]
    Io(#[from] io::Error),
}

/// Writes packets into a pcap stream: the header when made, then the frames of each
/// packet. Writes go straight to `out`: give it a buffered writer.
pub struct PcapWriter<W: Write> {
    out: W,
    options: PcapOptions,
    destination_mac: [u8; 6],
    next_id: u16,
    written: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header to `out`.
    pub fn new(mut out: W, options: PcapOptions) -> Result<Self, PcapError> {
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&PCAP_MAGIC.to_le_bytes());
        header.extend_from_slice(&2u16.to_le_bytes());
        header.extend_from_slice(&4u16.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes()); // thiszone: UTC
        header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        header.extend_from_slice(&SNAPLEN.to_le_bytes());
        header.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            destination_mac: options.destination_mac(),
            options,
            next_id: 0,
            written: 0,
        })
    }

    /// Writes `packet` as one Ethernet frame, or as IPv4 fragments when it does not fit.
    pub fn write(&mut self, packet: &Packet) -> Result<(), PcapError> {
        let index = self.written;
        if packet.payload.len() > MAX_UDP_PAYLOAD {
            return Err(PcapError::TooLarge {
                index,
                port: packet.port,
                len: packet.payload.len(),
            });
        }
        let (sec, usec) = self.capture_time(index, packet.time_s)?;
        let datagram = self.udp_datagram(packet);
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        for (offset, end) in fragments(datagram.len()) {
            let more = end < datagram.len();
            let frame = self.frame(&datagram[offset..end], id, offset, more);
            let len = (frame.len() as u32).to_le_bytes();
            let mut record = Vec::with_capacity(16);
            record.extend_from_slice(&sec.to_le_bytes());
            record.extend_from_slice(&usec.to_le_bytes());
            record.extend_from_slice(&len);
            record.extend_from_slice(&len);
            self.out.write_all(&record)?;
            self.out.write_all(&frame)?;
        }
        self.written += 1;
        Ok(())
    }

    /// Packets written so far.
    pub fn packets_written(&self) -> u64 {
        self.written
    }

    /// Flushes and hands back the writer.
    pub fn into_inner(mut self) -> Result<W, PcapError> {
        self.out.flush()?;
        Ok(self.out)
    }

    /// (seconds, µs) of the capture time of packet `index`, sent `time_s` after start.
    fn capture_time(&self, index: u64, time_s: f64) -> Result<(u32, u32), PcapError> {
        let start = self.options.start;
        let micros = (time_s * 1e6).round();
        let total = start.as_micros() as f64 + micros;
        let sec = (total / 1e6).floor();
        if !(time_s.is_finite() && sec >= 0.0 && sec <= f64::from(u32::MAX)) {
            return Err(PcapError::Time {
                index,
                time_s,
                start_s: start.as_secs_f64(),
            });
        }
        // Exact in integers: both parts are whole µs well inside i128.
        let total = start.as_micros() as i128 + micros as i128;
        Ok(((total / 1_000_000) as u32, (total % 1_000_000) as u32))
    }

    /// The UDP header and payload of `packet`, its checksum set.
    fn udp_datagram(&self, packet: &Packet) -> Vec<u8> {
        let o = &self.options;
        let len = (UDP_HEADER + packet.payload.len()) as u16;
        let mut d = Vec::with_capacity(usize::from(len));
        d.extend_from_slice(&o.source_port.unwrap_or(packet.port).to_be_bytes());
        d.extend_from_slice(&o.destination_port.unwrap_or(packet.port).to_be_bytes());
        d.extend_from_slice(&len.to_be_bytes());
        d.extend_from_slice(&[0, 0]);
        d.extend_from_slice(&packet.payload);
        let mut pseudo = Vec::with_capacity(12);
        pseudo.extend_from_slice(&o.source.octets());
        pseudo.extend_from_slice(&o.destination.octets());
        pseudo.extend_from_slice(&[0, PROTOCOL_UDP]);
        pseudo.extend_from_slice(&len.to_be_bytes());
        // RFC 768: a computed 0 is sent as all ones (0 means "no checksum").
        let sum = match internet_checksum(&[&pseudo, &d]) {
            0 => 0xffff,
            s => s,
        };
        d[6..8].copy_from_slice(&sum.to_be_bytes());
        d
    }

    /// One Ethernet frame: the IPv4 fragment of the datagram at `offset`.
    fn frame(&self, data: &[u8], id: u16, offset: usize, more: bool) -> Vec<u8> {
        let o = &self.options;
        let mut f = Vec::with_capacity(14 + IPV4_HEADER + data.len());
        f.extend_from_slice(&self.destination_mac);
        f.extend_from_slice(&o.source_mac);
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let flags = (offset / 8) as u16 | if more { MORE_FRAGMENTS } else { 0 };
        let mut ip = [0u8; IPV4_HEADER];
        ip[0] = 0x45; // version 4, 5 words of header
        ip[2..4].copy_from_slice(&((IPV4_HEADER + data.len()) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[6..8].copy_from_slice(&flags.to_be_bytes());
        ip[8] = TTL;
        ip[9] = PROTOCOL_UDP;
        ip[12..16].copy_from_slice(&o.source.octets());
        ip[16..20].copy_from_slice(&o.destination.octets());
        let sum = internet_checksum(&[&ip]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(data);
        f
    }
}

/// Writes `packets` to the pcap file `path` atomically: a failed write leaves no file.
pub fn write_pcap<'a>(
    path: &Path,
    packets: impl IntoIterator<Item = &'a Packet>,
    options: &PcapOptions,
) -> Result<(), OutputError> {
    write_atomic(path, |out| {
        write_pcap_to(out, packets, options)
            .map(drop)
            .map_err(|e| match e {
                PcapError::Io(e) => e,
                other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
            })
    })
}

/// Writes a whole pcap stream of `packets` to `out`.
pub fn write_pcap_to<'a, W: Write>(
    out: W,
    packets: impl IntoIterator<Item = &'a Packet>,
    options: &PcapOptions,
) -> Result<W, PcapError> {
    let mut w = PcapWriter::new(out, options.clone())?;
    for p in packets {
        w.write(p)?;
    }
    w.into_inner()
}

/// (start, end) of each fragment's share of a datagram of `len` bytes.
fn fragments(len: usize) -> impl Iterator<Item = (usize, usize)> {
    let per = if len <= MTU - IPV4_HEADER {
        len.max(1)
    } else {
        FRAGMENT_DATA
    };
    (0..len.max(1))
        .step_by(per)
        .map(move |start| (start, (start + per).min(len)))
}

/// RFC 1071: the ones' complement of the ones' complement sum of 16-bit words; the
/// parts are summed as one byte string.
fn internet_checksum(parts: &[&[u8]]) -> u16 {
    let mut sum: u64 = 0;
    let mut odd: Option<u8> = None;
    for &byte in parts.iter().flat_map(|p| p.iter()) {
        match odd.take() {
            Some(high) => sum += u64::from(u16::from_be_bytes([high, byte])),
            None => odd = Some(byte),
        }
    }
    if let Some(high) = odd {
        sum += u64::from(high) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    //! Layouts from pcap-savefile(5), RFC 791 and RFC 768; tshark reads the files in
    //! tests/formats/velodyne_packets.rs.
    use super::*;

    fn packet(time_s: f64, port: u16, len: usize) -> Packet {
        Packet {
            time_s,
            port,
            payload: (0..len).map(|i| (i * 7 % 256) as u8).collect(),
        }
    }

    fn pcap(packets: &[Packet], options: &PcapOptions) -> Vec<u8> {
        write_pcap_to(Vec::new(), packets, options).expect("pcap")
    }

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn le32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// The frames after the file header: (seconds, µs, frame bytes).
    fn frames(file: &[u8]) -> Vec<(u32, u32, &[u8])> {
        let mut out = Vec::new();
        let mut at = 24;
        while at < file.len() {
            let len = le32(file, at + 8) as usize;
            assert_eq!(le32(file, at + 12) as usize, len, "captured whole");
            out.push((
                le32(file, at),
                le32(file, at + 4),
                &file[at + 16..at + 16 + len],
            ));
            at += 16 + len;
        }
        out
    }

    #[test]
    fn the_file_header_is_classic_libpcap_with_ethernet_frames() {
        let file = pcap(&[], &PcapOptions::default());
        assert_eq!(
            file,
            [
                0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0,
                0, 0
            ]
        );
    }

    #[test]
    fn a_velodyne_packet_is_one_broadcast_frame_from_the_sensors_address() {
        let options = PcapOptions {
            start: Duration::new(1_700_000_000, 250_000_000),
            ..PcapOptions::default()
        };
        let p = packet(0.001_327_4, 2368, 1206);
        let file = pcap(std::slice::from_ref(&p), &options);
        let got = frames(&file);
        assert_eq!(got.len(), 1);
        let (sec, usec, f) = got[0];
        assert_eq!((sec, usec), (1_700_000_000, 251_327));
        assert_eq!(f.len(), 14 + 20 + 8 + 1206);
        assert_eq!(f[0..6], [0xff; 6], "broadcast MAC");
        assert_eq!(be16(f, 12), 0x0800, "IPv4");
        let ip = &f[14..34];
        assert_eq!(ip[0], 0x45);
        assert_eq!(be16(ip, 2), 20 + 8 + 1206);
        assert_eq!(be16(ip, 6), 0, "not a fragment");
        assert_eq!(ip[9], 17, "UDP");
        assert_eq!(ip[12..16], [192, 168, 1, 201]);
        assert_eq!(ip[16..20], [255, 255, 255, 255]);
        assert_eq!(
            internet_checksum(&[ip]),
            0,
            "a valid header sums to all ones"
        );
        let udp = &f[34..];
        assert_eq!(
            (be16(udp, 0), be16(udp, 2), be16(udp, 4)),
            (2368, 2368, 1214)
        );
        let pseudo = [&ip[12..20], &[0, 17], &1214u16.to_be_bytes()[..]].concat();
        assert_eq!(internet_checksum(&[&pseudo, udp]), 0, "UDP checksum");
        assert_eq!(udp[8..], p.payload[..]);
    }

    #[test]
    fn the_checksum_is_rfc_1071s() {
        // The usual worked example: 192.168.0.1 → 192.168.0.199, 115 bytes, DF, UDP.
        let header = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(internet_checksum(&[&header]), 0xb861);
        // Odd lengths pad with a zero byte; parts join as one string.
        assert_eq!(
            internet_checksum(&[&[0x12, 0x34, 0x56]]),
            internet_checksum(&[&[0x12], &[0x34, 0x56, 0x00]])
        );
    }

    #[test]
    fn a_large_payload_becomes_ipv4_fragments_of_one_datagram() {
        // An Ouster OS1-128 LEGACY packet, sent twice: identifications count up.
        let big = packet(0.5, 7502, 24_896);
        let options = PcapOptions {
            destination: Ipv4Addr::new(192, 168, 1, 10),
            ..PcapOptions::default()
        };
        let file = pcap(&[big.clone(), big.clone()], &options);
        let got = frames(&file);
        let per = (8 + 24_896usize).div_ceil(1480);
        assert_eq!(got.len(), 2 * per);
        let mut datagram = Vec::new();
        for (k, (_, _, f)) in got[..per].iter().enumerate() {
            assert_eq!(f[0..6], UNICAST_DESTINATION_MAC);
            assert!(f.len() <= 14 + MTU);
            let ip = &f[14..34];
            let flags = be16(ip, 6);
            assert_eq!(usize::from(flags & 0x1fff) * 8, k * 1480, "offset of {k}");
            assert_eq!(flags & 0x2000 != 0, k + 1 < per, "more fragments");
            assert_eq!(be16(ip, 4), 0, "one identification");
            assert_eq!(usize::from(be16(ip, 2)), f.len() - 14);
            assert_eq!(internet_checksum(&[ip]), 0);
            datagram.extend_from_slice(&f[34..]);
        }
        assert_eq!(be16(&got[per].2[14..], 4), 1, "the next datagram's id");
        assert_eq!(datagram.len(), 8 + 24_896);
        assert_eq!(be16(&datagram, 4), 8 + 24_896);
        assert_eq!(datagram[8..], big.payload[..]);
    }

    #[test]
    fn fragments_start_exactly_where_a_frame_overflows() {
        let frames_of = |len| frames(&pcap(&[packet(0.0, 1, len)], &PcapOptions::default())).len();
        assert_eq!(frames_of(1472), 1, "1472 + 8 + 20 = 1500");
        assert_eq!(frames_of(1473), 2);
        assert_eq!(frames_of(MAX_UDP_PAYLOAD), 45);
    }

    #[test]
    fn payloads_and_times_pcap_cannot_hold_are_refused() {
        let mut w = PcapWriter::new(Vec::new(), PcapOptions::default()).unwrap();
        w.write(&packet(0.0, 7502, 100)).unwrap();
        let e = w
            .write(&packet(0.0, 7502, MAX_UDP_PAYLOAD + 1))
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("packet 1") && msg.contains("65508 bytes"),
            "{msg}"
        );
        for t in [f64::NAN, -1.0, 5e9] {
            let msg = w.write(&packet(t, 2368, 10)).unwrap_err().to_string();
            assert!(msg.contains("1970 to 2106"), "{msg}");
        }
        assert_eq!(w.packets_written(), 1);
    }

    #[test]
    fn a_refused_file_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("capture.pcap");
        let packets = [packet(0.0, 2368, 1206), packet(0.1, 2368, 70_000)];
        let msg = write_pcap(&path, &packets, &PcapOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("capture.pcap") && msg.contains("70000 bytes"),
            "{msg}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_pcap(&path, &packets[..1], &PcapOptions::default()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), 24 + 16 + 1248);
    }

    #[test]
    fn multicast_destinations_get_the_ipv4_multicast_mac() {
        let options = PcapOptions {
            destination: Ipv4Addr::new(239, 201, 2, 3),
            ..PcapOptions::default()
        };
        let file = pcap(&[packet(0.0, 2368, 10)], &options);
        assert_eq!(frames(&file)[0].2[0..6], [0x01, 0x00, 0x5e, 0x49, 2, 3]);
    }
}
