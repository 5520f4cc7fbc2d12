//! beamtrace's own decoder reads the HDL-64E S3's, VLP-32C's and VLS-128's packets back
//! into the points their presets' beams place: each beam's origin plus its direction
//! times the range, the beams as `sensor::Beam` gives them (the preset's tables, which
//! the presets' own tests check against the manuals); velodyne_decoder's view is in
//! tests/formats/velodyne_models.rs.
use super::*;
use crate::output::packets::{PacketEncoder, VelodyneEncoder, VelodyneOptions};
use crate::sensor::preset;
use std::collections::HashMap;
use std::time::Duration;

const START: Duration = Duration::new(1_700_002_799, 900_000_000);

#[test]
fn the_timed_models_decode_to_where_their_presets_beams_put_the_points() {
    for model in [
        VelodyneModel::Hdl64e,
        VelodyneModel::Vlp32c,
        VelodyneModel::Vls128,
    ] {
        let sensor = preset(model.preset(), None).unwrap();
        let beams = crate::output::BeamLayout::of_sensor(&sensor)
            .beams()
            .to_vec();
        // Every 13th beam echoes, 3 to 51 m away.
        let expected: Vec<Point> = (0..sensor.beams.len())
            .step_by(13)
            .map(|i| {
                let b = sensor.beams[i];
                let range = 3.0 + (i % 97) as f32 * 0.5;
                let p = b.origin + b.direction() * range;
                Point {
                    x: p.x,
                    y: p.y,
                    z: p.z,
                    range,
                    beam: i as u32,
                    ring: b.ring as u16,
                    time: b.time,
                    reflectivity: 42,
                    ..Point::default()
                }
            })
            .collect();
        let options = VelodyneOptions {
            model,
            return_mode: VelodyneReturnMode::Strongest,
            start: START,
        };
        let rate = f64::from(sensor.frame_rate);
        let mut e = VelodyneEncoder::new(options, &beams, sensor.columns, rate).unwrap();
        let cloud = PointCloud {
            points: expected.clone(),
        };
        let mut packets = e.push_frame(0, 0.0, &cloud).unwrap();
        packets.extend(e.finish());
        let datagrams: Vec<Datagram> = packets
            .into_iter()
            .map(|p| Datagram {
                time_s: START.as_secs_f64() + p.time_s,
                source_port: p.port,
                destination_port: p.port,
                payload: p.payload,
            })
            .collect();
        assert_eq!(velodyne_model_of(&datagrams[0].payload), Some(model));
        let frames = decode_velodyne(model, &datagrams);
        let count: usize = frames.iter().map(|f| f.cloud.points.len()).sum();
        assert_eq!(count, expected.len(), "{}", model.name());
        let mut by_ring: HashMap<u16, Vec<&Point>> = HashMap::new();
        for p in &expected {
            by_ring.entry(p.ring).or_default().push(p);
        }
        let distance = |a: &Point, b: &Point| {
            ((a.x - b.x).powi(2) + (a.y - b.y).powi(2) + (a.z - b.z).powi(2)).sqrt()
        };
        // Frames split where the azimuth wraps, each timed from its first firing: a
        // frame's points keep the beams' time differences.
        for f in &frames {
            let mut lag = None;
            for d in &f.cloud.points {
                let w = by_ring[&d.ring]
                    .iter()
                    .min_by(|a, b| distance(d, a).total_cmp(&distance(d, b)))
                    .unwrap();
                let off = distance(d, w);
                // Azimuths and the rotation over a laser's delay to 0.01°, ranges to
                // half a distance unit.
                let tol = w.range * 0.012f32.to_radians() + model.distance_unit_m() as f32;
                assert!(off <= tol, "{}: {d:?} is {off} m from {w:?}", model.name());
                let lag = *lag.get_or_insert(w.time - d.time);
                assert!(
                    (w.time - d.time - lag).abs() < 1e-6,
                    "{}: {d:?}",
                    model.name()
                );
            }
        }
    }
}
