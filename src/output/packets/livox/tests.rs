use super::*;
use crate::output::organize::BeamLayout;
use crate::output::packets::pcap_read::Datagram;
use crate::output::packets::PacketEncoder;
use crate::output::{Point, PointCloud};
use crate::sensor::preset;

/// A frame of the Mid-360 with every 7th beam returning from 10 m along its beam.
fn frame() -> (crate::sensor::Sensor, PointCloud) {
    let s = preset("livox-mid-360", None).expect("preset");
    let points = s
        .beams
        .iter()
        .enumerate()
        .step_by(7)
        .map(|(i, b)| {
            let d = b.direction() * 10.0;
            Point {
                x: d.x,
                y: d.y,
                z: d.z,
                range: 10.0,
                beam: i as u32,
                reflectivity: 42,
                ..Point::default()
            }
        })
        .collect();
    (s, PointCloud { points })
}

fn encoder(data_type: LivoxDataType, s: &crate::sensor::Sensor) -> LivoxEncoder {
    let layout = BeamLayout::of_sensor(s);
    let options = LivoxOptions {
        data_type,
        start: std::time::Duration::ZERO,
    };
    LivoxEncoder::new(options, layout.beams()).expect("encoder")
}

/// The protocol's sizes: 36 + 96 × 14 (Cartesian 32-bit), × 8 (16-bit), × 10
/// (spherical); 20 000 samples a frame make 208 packets and hold 32 for the next;
/// `udp_cnt` restarts at each frame's first packet and `frame_cnt` counts frames.
#[test]
fn packets_have_the_protocols_sizes_and_counters() {
    let (s, cloud) = frame();
    for (kind, len) in [
        (LivoxDataType::CartesianHigh, 1380),
        (LivoxDataType::CartesianLow, 804),
        (LivoxDataType::Spherical, 996),
    ] {
        let mut e = encoder(kind, &s);
        let first = e.push_frame(0, 0.0, &cloud).unwrap();
        assert_eq!(first.len(), 208);
        assert!(first
            .iter()
            .all(|p| p.payload.len() == len && p.port == 56301));
        let second = e.push_frame(1, 0.1, &cloud).unwrap();
        // 32 held + 20 000 = 20 032: 208 packets, 64 held.
        assert_eq!(second.len(), 208);
        let cnt =
            |p: &crate::output::packets::Packet| u16::from_le_bytes([p.payload[7], p.payload[8]]);
        assert_eq!(cnt(&first[207]), 207);
        // The second frame's first packet still starts with frame 0's last samples.
        assert_eq!((cnt(&second[0]), second[0].payload[9]), (208, 0));
        assert_eq!((cnt(&second[1]), second[1].payload[9]), (0, 1));
        let rest = e.finish();
        assert_eq!(rest.len(), 1);
        assert_eq!(
            u16::from_le_bytes([rest[0].payload[5], rest[0].payload[6]]),
            64
        );
    }
}

/// Decoded, the packets give back every returned point (to the data type's
/// resolution: 1 mm, 10 mm, and 0.01° of 10 m) and no zero points.
#[test]
fn decoded_packets_give_back_the_points() {
    let (s, cloud) = frame();
    for (kind, tol) in [
        (LivoxDataType::CartesianHigh, 1e-3),
        (LivoxDataType::CartesianLow, 1e-2),
        (LivoxDataType::Spherical, 3e-3),
    ] {
        let mut e = encoder(kind, &s);
        let mut packets = e.push_frame(0, 0.0, &cloud).unwrap();
        packets.extend(e.finish());
        let datagrams: Vec<Datagram> = packets
            .iter()
            .map(|p| Datagram {
                time_s: p.time_s,
                source_port: 56300,
                destination_port: p.port,
                payload: p.payload.clone(),
            })
            .collect();
        let frames = decode_livox(&datagrams);
        assert_eq!(frames.len(), 1);
        let got = &frames[0].cloud.points;
        assert_eq!(got.len(), cloud.points.len());
        for (a, b) in got.iter().zip(&cloud.points) {
            let d = ((a.x - b.x).powi(2) + (a.y - b.y).powi(2) + (a.z - b.z).powi(2)).sqrt();
            assert!(d < tol, "{kind:?}: {d} m off");
            assert_eq!(a.reflectivity, 42);
        }
        let mut bad = datagrams[0].payload.clone();
        bad[40] ^= 1;
        assert!(
            is_livox_data(&bad).is_none(),
            "a damaged packet passes its CRC"
        );
    }
}
