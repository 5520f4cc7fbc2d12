use super::*;
use crate::output::packets::ouster::encode::crc64;
use crate::output::packets::{Packet, PacketEncoder};
use crate::output::{Point, PointCloud};

/// An Ouster grid as the datasheets describe it: `channels` beams evenly spread over
/// ±`half` degrees, channel 0 on top, all firing at column m's angle 180° − 360°·m/w
/// (beamtrace's frame) at time m/(w·rate), `offset` m off the axis.
fn grid(channels: usize, columns: usize, rate: f32, half: f32, offset: f32) -> Vec<BeamDesc> {
    let mut beams = Vec::new();
    for m in 0..columns {
        for ch in 0..channels {
            let el = half - 2.0 * half * ch as f32 / (channels - 1) as f32;
            let az = 180.0 - 360.0 * m as f32 / columns as f32;
            beams.push(BeamDesc {
                ring: ch as u32,
                azimuth: az.to_radians(),
                elevation: el.to_radians(),
                time: m as f32 / columns as f32 / rate,
                origin_offset: offset,
                origin_azimuth: az.to_radians(),
            });
        }
    }
    beams
}

fn sensor(profile: OusterProfile, channels: usize, columns: usize) -> OusterSensor {
    let options = OusterOptions::new(OusterFamily::Os1, profile);
    let beams = grid(channels, columns, 10.0, 22.5, 0.015_806);
    OusterSensor::new(options, &beams, columns as u32, 10.0).expect("a datasheet grid")
}

#[test]
fn crc_is_crc64_xz() {
    // The CRC catalogue's check value of CRC-64/XZ (ECMA-182 reflected) for "123456789".
    assert_eq!(crc64(b"123456789"), 0x995D_C9BB_DF19_39FA);
    assert_eq!(crc64(b""), 0);
    // Eight bytes at a time equals the bitwise definition at every length and offset.
    let bytes: Vec<u8> = (0..100u32).map(|i| (i * 37 + 11) as u8).collect();
    for len in 0..bytes.len() {
        assert_eq!(
            crc64(&bytes[..len]),
            crc64_bitwise(&bytes[..len]),
            "length {len}"
        );
    }
}

#[test]
fn packet_sizes_follow_the_manuals_layouts() {
    // LEGACY: 16 columns × (16-byte header + 12 bytes per channel + 4-byte status);
    // eUDP: 32 + 16 × (12 + 12 or 16 per channel) + 32.
    let sizes: Vec<[usize; 3]> = [16, 32, 64, 128]
        .into_iter()
        .map(|n| OusterProfile::ALL.map(|p| p.packet_size(n)))
        .collect();
    assert_eq!(
        sizes,
        [
            [3_392, 3_328, 4_352],
            [6_464, 6_400, 8_448],
            [12_608, 12_544, 16_640],
            [24_896, 24_832, 33_024],
        ]
    );
    assert_eq!(OusterProfile::Legacy.max_range_mm(), 1_048_575);
    assert_eq!(OusterProfile::Rng19Rfl8Sig16Nir16.max_range_mm(), 524_287);
}

#[test]
fn profiles_parse_by_their_names_and_short_names() {
    for p in OusterProfile::ALL {
        assert_eq!(p.name().parse::<OusterProfile>(), Ok(p));
        assert_eq!(p.name().to_lowercase().parse::<OusterProfile>(), Ok(p));
    }
    assert_eq!("rng19".parse(), Ok(OusterProfile::Rng19Rfl8Sig16Nir16));
    assert_eq!(
        "rng19-dual".parse(),
        Ok(OusterProfile::Rng19Rfl8Sig16Nir16Dual)
    );
    let e = "rng15".parse::<OusterProfile>().unwrap_err();
    assert!(e.contains("`rng15`") && e.contains("LEGACY"), "{e}");
}

#[test]
fn families_name_their_product_lines() {
    assert_eq!(OusterFamily::Os1.product_line(128), "OS-1-128");
    assert_eq!(OusterFamily::of_preset("os2-64"), Some(OusterFamily::Os2));
    assert_eq!(OusterFamily::of_preset("OS0-32"), Some(OusterFamily::Os0));
    assert_eq!(OusterFamily::of_preset("vlp-16"), None);
}

#[test]
fn lidar_modes_are_ousters() {
    let at = |columns: usize, rate: f32| {
        let beams = grid(64, columns, rate, 22.5, 0.0);
        let options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Legacy);
        OusterSensor::new(options, &beams, columns as u32, rate).map(|s| s.lidar_mode())
    };
    assert_eq!(at(512, 20.0).unwrap(), "512x20");
    assert_eq!(at(2048, 10.0).unwrap(), "2048x10");
    let e = at(2048, 20.0).unwrap_err().to_string();
    assert!(e.contains("2048x10 only"), "{e}");
}

#[test]
fn a_beam_origin_off_its_column_is_refused_a_beam_pointing_off_it_is_not() {
    // Ouster puts the origin on the column's angle: 15.8 mm × 1° = 0.28 mm off.
    let mut beams = grid(16, 512, 10.0, 22.5, 0.015_806);
    for b in beams.iter_mut().filter(|b| b.ring == 2) {
        b.origin_azimuth += 1f32.to_radians();
    }
    let options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Legacy);
    let e = OusterSensor::new(options.clone(), &beams, 512, 10.0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("beam 2's origin") && e.contains("0.28 mm"),
        "{e}"
    );
    // Pointing 4.23° off its column from an origin on it is what a real OS1's beam does.
    let mut beams = grid(16, 512, 10.0, 22.5, 0.015_806);
    for b in beams.iter_mut().filter(|b| b.ring == 2) {
        b.azimuth -= 4.23f32.to_radians();
    }
    let sensor = OusterSensor::new(options, &beams, 512, 10.0).expect("staggered beams");
    assert!((sensor.azimuth_deg[2] - 4.23).abs() < 1e-3);
}

#[test]
fn columns_that_do_not_fire_together_are_refused() {
    let mut beams = grid(16, 512, 10.0, 22.5, 0.0);
    beams[16 * 7 + 3].time += 1e-6;
    let options = OusterOptions::new(OusterFamily::Os1, OusterProfile::Legacy);
    let e = OusterSensor::new(options, &beams, 512, 10.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("column 7") && e.contains("fire together"), "{e}");
}

fn point(beam: u32, range: f32, counts: f32) -> Point {
    Point {
        beam,
        range,
        intensity: counts * range * range / 1e6,
        reflectivity: 42,
        ambient: 0.25,
        ..Point::default()
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn a_legacy_column_is_laid_out_as_the_manual_says() {
    // Beam of column 17, channel 3 of a 16 × 512 sensor: packet 1, its column 1.
    let s = sensor(OusterProfile::Legacy, 16, 512);
    let cloud = PointCloud {
        points: vec![point(17 * 16 + 3, 10.0, 500.0)],
    };
    let packets = s.encoder().push_frame(65_537, 2.0, &cloud).unwrap();
    assert_eq!(packets.len(), 32);
    let b = &packets[1].payload;
    let col = 16 + 16 * 12 + 4; // bytes per column
    let c = col;
    assert_eq!(
        u64_at(b, c),
        ((2.0 + 17.0 / 5120.0) * 1e9_f64).round() as u64
    );
    assert_eq!(u16_at(b, c + 8), 17, "measurement id");
    assert_eq!(u16_at(b, c + 10), 1, "frame id 65537 wraps to 1");
    assert_eq!(u32_at(b, c + 12), 17 * 90_112 / 512, "encoder count");
    let px = c + 16 + 3 * 12;
    // 10 m + 15.806 mm from the lidar origin, reflectivity, 500 counts, 0.25 → 250.
    assert_eq!(u32_at(b, px), 10_016);
    assert_eq!(
        [u16_at(b, px + 4), u16_at(b, px + 6), u16_at(b, px + 8)],
        [42, 500, 250]
    );
    assert_eq!(u32_at(b, c + col - 4), u32::MAX, "status: valid");
    assert!(
        b[px + 12..c + col - 4].iter().all(|&x| x == 0),
        "other pixels empty"
    );
    // Sent when its last column (31) has fired.
    assert!((packets[1].time_s - (2.0 + 31.0 / 5120.0)).abs() < 1e-9);
}

#[test]
fn an_eudp_packet_has_its_header_returns_in_order_and_its_crc() {
    let s = sensor(OusterProfile::Rng19Rfl8Sig16Nir16Dual, 16, 512);
    // Three echoes of beam 5: the middle one strongest, then the far one.
    let mut weak = point(5, 3.0, 100.0);
    weak.reflectivity = 7;
    let mut strong = point(5, 5.0, 900.0);
    strong.reflectivity = 9;
    let mut second = point(5, 8.0, 400.0);
    second.reflectivity = 8;
    let cloud = PointCloud {
        points: vec![weak, strong, second],
    };
    let p = &s.encoder().push_frame(3, 0.0, &cloud).unwrap()[0].payload;
    assert_eq!(u16_at(p, 0), 1, "packet type: lidar");
    assert_eq!(u16_at(p, 2), 3, "frame id");
    assert_eq!(u32_at(p, 4) & 0xff_ffff, 1, "initialization id");
    assert_eq!(u64_at(p, 4) >> 24, DEFAULT_SERIAL, "serial number");
    assert_eq!(u16_at(p, 32 + 10), 1, "column status: valid");
    let px = 32 + 12 + 5 * 16;
    assert_eq!(
        u32_at(p, px),
        5_016 | (9 << 24),
        "strongest: range | reflectivity"
    );
    assert_eq!(u32_at(p, px + 4), 8_016 | (8 << 24), "second strongest");
    assert_eq!([u16_at(p, px + 8), u16_at(p, px + 10)], [900, 400]);
    assert_eq!(u16_at(p, px + 12), 250, "near-IR");
    let end = p.len() - 8;
    assert_eq!(u64_at(p, end), crc64(&p[..end]));
}

#[test]
fn equal_peaks_put_the_nearer_return_first() {
    let s = sensor(OusterProfile::Rng19Rfl8Sig16Nir16, 16, 512);
    let cloud = PointCloud {
        points: vec![point(0, 9.0, 300.0), point(0, 4.0, 300.0)],
    };
    let p = &s.encoder().push_frame(0, 0.0, &cloud).unwrap()[0].payload;
    assert_eq!(u32_at(p, 32 + 12) & 0x7_ffff, 4_016);
}

#[test]
fn a_point_without_a_peak_ranks_last() {
    let s = sensor(OusterProfile::Rng19Rfl8Sig16Nir16, 16, 512);
    let mut dark = point(0, 2.0, 0.0);
    dark.intensity = f32::NAN;
    let cloud = PointCloud {
        points: vec![dark, point(0, 6.0, 10.0)],
    };
    let p = &s.encoder().push_frame(0, 0.0, &cloud).unwrap()[0].payload;
    assert_eq!(u32_at(p, 32 + 12) & 0x7_ffff, 6_016);
}

#[test]
fn points_out_of_beam_order_encode_as_in_beam_order() {
    // The GPU writes points in beam order; any other order gives the same packets.
    let s = sensor(OusterProfile::Rng19Rfl8Sig16Nir16Dual, 16, 512);
    let mut points: Vec<Point> = (0..16 * 512u32)
        .filter(|b| b % 7 != 3)
        .flat_map(|b| {
            let far = point(b, 20.0 + (b % 13) as f32, 50.0 + (b % 5) as f32);
            [point(b, 5.0 + (b % 11) as f32, 300.0), far]
        })
        .collect();
    let in_order = s.encoder().push_frame(
        1,
        0.5,
        &PointCloud {
            points: points.clone(),
        },
    );
    // A fixed shuffle that moves every point: reverse, then interleave the halves.
    points.reverse();
    let (a, b) = points.split_at(points.len() / 2);
    let shuffled: Vec<Point> = b.iter().zip(a).flat_map(|(x, y)| [*x, *y]).collect();
    let out_of_order = s
        .encoder()
        .push_frame(1, 0.5, &PointCloud { points: shuffled });
    let payloads = |r: Result<Vec<Packet>, PacketError>| -> Vec<Vec<u8>> {
        r.unwrap().into_iter().map(|p| p.payload).collect()
    };
    let (x, y) = (payloads(in_order), payloads(out_of_order));
    assert_eq!(x.len(), 32);
    assert!(x == y, "the same packets whatever the points' order");
    // And a point of a beam the sensor lacks is named, whatever its place.
    let mut bad = vec![point(3, 4.0, 10.0); 5];
    bad[2].beam = 16 * 512;
    let e = s
        .encoder()
        .push_frame(0, 0.0, &PointCloud { points: bad })
        .unwrap_err();
    assert!(e.to_string().contains("point 2 names beam 8192"), "{e}");
}

mod http {
    use super::*;
    use crate::output::packets::{OusterHttpError, OusterHttpServer};
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn server() -> OusterHttpServer {
        let metadata = sensor(OusterProfile::Legacy, 16, 512).metadata();
        OusterHttpServer::bind("127.0.0.1:0", &metadata).expect("a free port")
    }

    /// Sends `raw` and returns the whole answer.
    fn ask(server: &OusterHttpServer, raw: &str) -> String {
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    fn get(server: &OusterHttpServer, path: &str) -> String {
        ask(server, &format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n"))
    }

    /// Posts `body` as curl does a large one: it waits for the interim 100 answer.
    fn post(server: &OusterHttpServer, path: &str, body: &str) -> String {
        let head = format!("POST {path} HTTP/1.1\r\nContent-Length: {}\r\n", body.len());
        let a = ask(server, &format!("{head}Expect: 100-continue\r\n\r\n{body}"));
        let interim = "HTTP/1.1 100 Continue\r\n\r\n";
        assert!(a.starts_with(interim), "{a}");
        a[interim.len()..].to_string()
    }

    #[test]
    fn sections_and_firmware_are_served_as_json() {
        let s = server();
        let a = get(&s, "/api/v1/sensor/metadata/lidar_data_format");
        assert!(a.starts_with("HTTP/1.1 200 OK\r\n"), "{a}");
        assert!(a.contains("Content-Type: application/json"), "{a}");
        assert!(a.contains("\"columns_per_frame\":512"), "{a}");
        let fw = get(&s, "/api/v1/system/firmware");
        assert!(
            fw.ends_with("{\"fw\":\"beamtrace-sim-v3.1.0+beamtrace.0.1.0\"}"),
            "{fw}"
        );
    }

    #[test]
    fn what_is_not_served_says_what_is() {
        let s = server();
        let a = get(&s, "/api/v1/sensor/metadata/nothing");
        assert!(
            a.starts_with("HTTP/1.1 404") && a.contains("/api/v1/sensor/config"),
            "{a}"
        );
        let a = ask(&s, "DELETE /api/v1/user/data HTTP/1.1\r\n\r\n");
        assert!(a.starts_with("HTTP/1.1 405") && a.contains("DELETE"), "{a}");
        let a = ask(&s, "HELLO\r\n\r\n");
        assert!(
            a.starts_with("HTTP/1.1 400") && a.contains("request line"),
            "{a}"
        );
        let a = post(&s, "/api/v1/sensor/config", "[1]");
        assert!(
            a.starts_with("HTTP/1.1 400") && a.contains("JSON object"),
            "{a}"
        );
        // The server logs an exchange once its answer is written, which the client may
        // have read a moment before.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut log = s.exchanges();
        while log.len() < 4 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            log = s.exchanges();
        }
        assert_eq!(log.len(), 4);
        assert_eq!(log[1].request, "DELETE /api/v1/user/data");
        assert_eq!(log[1].status, 405);
    }

    #[test]
    fn heads_past_their_bounds_are_refused() {
        let s = server();
        let many: String = (0..40).map(|i| format!("X-{i}: 1\r\n")).collect();
        let a = ask(&s, &format!("GET / HTTP/1.1\r\n{many}\r\n"));
        assert!(
            a.starts_with("HTTP/1.1 400") && a.contains("more than 32 headers"),
            "{a}"
        );
        // A header line that never ends is cut off at the bound (16 KiB), not buffered.
        let long = "a".repeat(20 * 1024);
        let a = ask(&s, &format!("GET / HTTP/1.1\r\nX-Long: {long}"));
        assert!(
            a.starts_with("HTTP/1.1 400") && a.contains("longer than 16384 bytes"),
            "{a}"
        );
    }

    /// A client that trickles its request a byte at a time (each byte well within the
    /// read timeout) is answered 400 once the request's time is up, and the
    /// server's shutdown does not wait on it.
    #[test]
    fn a_trickling_client_holds_neither_the_server_nor_its_shutdown() {
        use std::time::{Duration, Instant};
        let s = server();
        let mut c = TcpStream::connect(s.local_addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_millis(400)))
            .unwrap();
        let started = Instant::now();
        let mut answer = Vec::new();
        for b in "GET /api/v1/sensor/metadata HTTP/1.1\r\n".bytes().cycle() {
            if c.write_all(&[b]).is_err() || started.elapsed() > Duration::from_secs(20) {
                break;
            }
            let mut chunk = [0u8; 4096];
            match c.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&chunk[..n]),
                Err(_) => {}
            }
        }
        let t = started.elapsed();
        let a = String::from_utf8_lossy(&answer);
        assert!(
            a.starts_with("HTTP/1.1 400") && a.contains("within 2 s"),
            "{a}"
        );
        // The request's 2 s, the linger and a loaded machine's slack; not 20 s.
        assert!(t < Duration::from_secs(6), "held for {t:?}");
        let started = Instant::now();
        s.shutdown();
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_staged_destination_applies_on_reinit() {
        let s = server();
        let a = post(
            &s,
            "/api/v1/sensor/config?staging=true&reinit=false",
            r#"{"udp_dest": "10.1.2.3", "lidar_mode": "512x10"}"#,
        );
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
        assert_eq!(s.udp_dest(), "127.0.0.1", "staged, not applied");
        assert!(get(&s, "/api/v1/sensor/config?staging=true").contains("10.1.2.3"));
        post(&s, "/api/v1/sensor/config?staging=true&reinit=true", "{}");
        assert_eq!(s.udp_dest(), "10.1.2.3");
        assert_eq!(s.metadata()["config_params"]["udp_dest"], "10.1.2.3");
    }

    #[test]
    fn a_taken_address_is_an_error_naming_it() {
        let s = server();
        let addr = s.local_addr().to_string();
        let metadata = sensor(OusterProfile::Legacy, 16, 512).metadata();
        let e = OusterHttpServer::bind(addr.as_str(), &metadata).unwrap_err();
        assert!(matches!(e, OusterHttpError::Bind { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains(&addr) && msg.contains("choose another address"),
            "{msg}"
        );
        drop(s);
        assert!(
            TcpStream::connect(&addr).is_err(),
            "dropped: the port is closed"
        );
    }
}

/// CRC-64/XZ from its definition, one bit at a time (reflected ECMA-182, init and xorout
/// all ones): what the table-driven crc64 must equal.
fn crc64_bitwise(bytes: &[u8]) -> u64 {
    let mut crc = !0u64;
    for &b in bytes {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xC96C_5795_D787_0F42
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
