//! Reading pcap captures back into UDP datagrams: [`read_pcap`].
//!
//! The classic libpcap format (pcap-savefile(5)) in either byte order, with microsecond
//! or nanosecond timestamps, of Ethernet II frames (802.1Q/802.1ad tags skipped), Linux
//! cooked captures (SLL, SLL2), raw IPv4 or BSD loopback. IPv4 fragments are put back
//! together by (source, destination, identification) as tshark and ouster-sdk do; what
//! is not IPv4/UDP (ARP, IPv6, TCP) is passed over. pcapng is refused with the command
//! that converts it.

use crate::output::OutputError;
use std::collections::HashMap;
use std::path::Path;

/// One UDP datagram of a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Datagram {
    /// Capture time (s since the Unix epoch, as the record stamps it).
    pub time_s: f64,
    pub source_port: u16,
    pub destination_port: u16,
    pub payload: Vec<u8>,
}

/// The UDP datagrams of the capture at `path`, in capture order (a fragmented one at
/// its last fragment's time).
pub fn read_pcap(path: &Path) -> Result<Vec<Datagram>, OutputError> {
    let bytes = std::fs::read(path).map_err(|e| OutputError::read(path, e))?;
    parse_pcap(&bytes).map_err(|(at, message)| OutputError::parse(path, at, message))
}

/// Where in the file and what went wrong.
type Fault = (String, String);

/// The capture's byte order, stamp unit and link type.
struct Global {
    little: bool,
    nanos: bool,
    link: u32,
}

fn global_header(bytes: &[u8]) -> Result<Global, Fault> {
    let header = |m: &str| ("global header".to_string(), m.to_string());
    let magic = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| header("the file is shorter than a pcap header: is it a capture?"))?;
    let (little, nanos) = match magic {
        0xa1b2_c3d4 => (true, false),
        0xd4c3_b2a1 => (false, false),
        0xa1b2_3c4d => (true, true),
        0x4d3c_b2a1 => (false, true),
        0x0a0d_0d0a => {
            return Err(header(
                "this is pcapng, not pcap: convert it with `editcap -F pcap IN OUT` \
                 (Wireshark's tools) or `tshark -F pcap -r IN -w OUT`",
            ))
        }
        _ => {
            return Err(header(
                "no pcap magic number: the file is not a pcap capture",
            ))
        }
    };
    if bytes.len() < 24 {
        return Err(header("the global header is cut short"));
    }
    let link = read_u32(&bytes[20..24], little) & 0x0fff_ffff;
    Ok(Global {
        little,
        nanos,
        link,
    })
}

fn read_u32(b: &[u8], little: bool) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if little {
        u32::from_le_bytes(a)
    } else {
        u32::from_be_bytes(a)
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn parse_pcap(bytes: &[u8]) -> Result<Vec<Datagram>, Fault> {
    let g = global_header(bytes)?;
    if !matches!(g.link, 0 | 1 | 101 | 113 | 228 | 276) {
        return Err((
            "global header".into(),
            format!(
                "link type {} is not read (Ethernet, Linux cooked, raw IPv4 and loopback \
                 captures are): capture on the sensor's Ethernet interface",
                g.link
            ),
        ));
    }
    let mut out = Vec::new();
    let mut fragments = Fragments::default();
    let mut at = 24;
    let mut record = 0usize;
    while at < bytes.len() {
        record += 1;
        let where_ = || format!("record {record} (byte {at})");
        let head = bytes.get(at..at + 16).ok_or_else(|| {
            (
                where_(),
                "the record header is cut short: the capture was not closed properly".into(),
            )
        })?;
        let seconds = read_u32(&head[0..4], g.little);
        let fraction = read_u32(&head[4..8], g.little);
        let captured = read_u32(&head[8..12], g.little) as usize;
        let frame = bytes.get(at + 16..at + 16 + captured).ok_or_else(|| {
            (
                where_(),
                format!(
                    "the record says {captured} bytes but the file ends first: the capture \
                     was cut short"
                ),
            )
        })?;
        let unit = if g.nanos { 1e-9 } else { 1e-6 };
        let time_s = f64::from(seconds) + f64::from(fraction) * unit;
        if let Some(ip) = ipv4_of(g.link, frame) {
            if let Some(d) = fragments.take(ip, time_s) {
                out.push(d);
            }
        }
        at += 16 + captured;
    }
    Ok(out)
}

/// The IPv4 packet a link-layer frame carries, if it carries one.
fn ipv4_of(link: u32, frame: &[u8]) -> Option<&[u8]> {
    let (ethertype, rest) = match link {
        1 => {
            let mut at = 12;
            let mut ty = be16(frame.get(at..at + 2)?);
            while ty == 0x8100 || ty == 0x88a8 {
                at += 4;
                ty = be16(frame.get(at..at + 2)?);
            }
            (ty, frame.get(at + 2..)?)
        }
        113 => (be16(frame.get(14..16)?), frame.get(16..)?),
        276 => (be16(frame.get(0..2)?), frame.get(20..)?),
        // BSD loopback: a 4-byte address family in the host's order; 2 = IPv4.
        0 => {
            let family = frame.get(..4)?;
            let v4 = family == [2, 0, 0, 0] || family == [0, 0, 0, 2];
            (if v4 { 0x0800 } else { 0 }, frame.get(4..)?)
        }
        _ => (0x0800, frame),
    };
    (ethertype == 0x0800 && rest.first()? >> 4 == 4).then_some(rest)
}

/// A datagram's identity: source, destination, identification.
type DatagramId = ([u8; 4], [u8; 4], u16);

/// A datagram's pieces so far (offset, bytes), and its length once the last came.
type Pieces = (Vec<(usize, Vec<u8>)>, Option<usize>);

/// IPv4 fragments waiting for the rest of their datagram.
#[derive(Default)]
struct Fragments {
    pending: HashMap<DatagramId, Pieces>,
}

impl Fragments {
    /// The UDP datagram `ip` completes, if any.
    fn take(&mut self, ip: &[u8], time_s: f64) -> Option<Datagram> {
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(be16(ip.get(2..4)?)).min(ip.len());
        if ip.get(9) != Some(&17) || ihl < 20 || total < ihl {
            return None;
        }
        let flags = be16(&ip[6..8]);
        let more = flags & 0x2000 != 0;
        let offset = usize::from(flags & 0x1fff) * 8;
        let data = &ip[ihl..total];
        if !more && offset == 0 {
            return udp(data, time_s);
        }
        let key = (
            ip[12..16].try_into().ok()?,
            ip[16..20].try_into().ok()?,
            be16(&ip[4..6]),
        );
        let entry = self.pending.entry(key).or_default();
        entry.0.push((offset, data.to_vec()));
        if !more {
            entry.1 = Some(offset + data.len());
        }
        let whole = entry.1?;
        let have: usize = entry.0.iter().map(|(_, d)| d.len()).sum();
        if have < whole {
            return None;
        }
        let (mut pieces, _) = self.pending.remove(&key)?;
        pieces.sort_by_key(|(o, _)| *o);
        let mut joined = vec![0u8; whole];
        for (o, d) in pieces {
            let end = (o + d.len()).min(whole);
            joined[o.min(end)..end].copy_from_slice(&d[..end - o.min(end)]);
        }
        udp(&joined, time_s)
    }
}

fn udp(data: &[u8], time_s: f64) -> Option<Datagram> {
    let length = usize::from(be16(data.get(4..6)?));
    let end = if length >= 8 {
        length.min(data.len())
    } else {
        data.len()
    };
    Some(Datagram {
        time_s,
        source_port: be16(&data[0..2]),
        destination_port: be16(&data[2..4]),
        payload: data.get(8..end)?.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::packets::{write_pcap_to, Packet, PcapOptions};

    /// What the writer put in, the reader gives back: a small payload and one that
    /// needs 17 IPv4 fragments (an OS1-128 LEGACY packet's size).
    #[test]
    fn datagrams_come_back_whole_and_in_order() {
        let packets: Vec<Packet> = [(0.5, 7502, 24_896usize), (0.75, 2368, 1206)]
            .iter()
            .map(|&(time_s, port, n)| Packet {
                time_s,
                port,
                payload: (0..n).map(|i| (i * 7 % 251) as u8).collect(),
            })
            .collect();
        let mut bytes = Vec::new();
        write_pcap_to(&mut bytes, &packets, &PcapOptions::default()).unwrap();
        let got = parse_pcap(&bytes).unwrap();
        assert_eq!(got.len(), 2);
        for (g, p) in got.iter().zip(&packets) {
            assert_eq!(g.payload, p.payload);
            assert_eq!(g.destination_port, p.port);
            assert!((g.time_s - p.time_s).abs() < 1e-6);
        }
    }

    #[test]
    fn a_cut_capture_and_pcapng_are_refused_with_what_to_do() {
        let mut bytes = Vec::new();
        let p = Packet {
            time_s: 0.0,
            port: 2368,
            payload: vec![1; 100],
        };
        write_pcap_to(&mut bytes, [&p], &PcapOptions::default()).unwrap();
        let (at, message) = parse_pcap(&bytes[..bytes.len() - 10]).unwrap_err();
        assert!(at.starts_with("record 1"), "{at}");
        assert!(message.contains("cut short"), "{message}");
        let (_, message) = parse_pcap(&[0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0]).unwrap_err();
        assert!(message.contains("editcap"), "{message}");
        let (_, message) = parse_pcap(b"hello world, not a capture").unwrap_err();
        assert!(message.contains("not a pcap"), "{message}");
    }
}
