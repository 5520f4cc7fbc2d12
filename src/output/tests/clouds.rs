//! Point clouds shared by the writer tests.

use super::{Point, PointCloud};

/// Values that trip naive float printing: shortest-repr edge cases, -0, subnormals,
/// the extremes of every integer type.
pub(crate) fn tricky_cloud() -> PointCloud {
    let mut points = Vec::new();
    let floats = [
        0.1f32,
        -0.0,
        1.0 / 3.0,
        f32::MIN_POSITIVE,
        1.0e-45,
        f32::MAX,
        -f32::MAX,
        123_456.79,
        f32::EPSILON,
        16_777_217.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for (i, &f) in floats.iter().enumerate() {
        points.push(Point {
            x: f,
            y: -f * 0.5,
            z: (i as f32).sqrt(),
            intensity: f.abs().sqrt(),
            range: 7.25 * i as f32,
            ring: [0, 1, u16::MAX][i % 3],
            azimuth: -std::f32::consts::PI + i as f32 * 0.3,
            elevation: 0.017_453_292 * i as f32,
            beam: [0, 42, u32::MAX][i % 3],
            instance: [u32::MAX, 7, 0][i % 3],
            class: [u16::MAX, 3, 0][i % 3],
            epw: 0.25 + 0.01 * i as f32,
            return_index: [0, 1, u16::MAX][i % 3],
            return_count: [1, 2, u16::MAX][i % 3],
            material: [u16::MAX, 5, 0][i % 3],
            ambient: f * 1e-3,
            time: 1e-5 * i as f32,
            reflectivity: [0, 101, u8::MAX][i % 3],
            bounce: [0, 1, u8::MAX][i % 3],
        });
    }
    PointCloud { points }
}

/// `tricky_cloud` with its 32-bit values capped at what PLY's int32 holds.
pub(crate) fn ply_safe_cloud() -> PointCloud {
    let mut c = tricky_cloud();
    for p in &mut c.points {
        p.beam = p.beam.min(super::PLY_INT32_MAX);
        p.instance = p.instance.min(super::PLY_INT32_MAX);
    }
    c
}

/// Every beamtrace field of every point, floats as their bits: equal exactly when the
/// clouds are equal bit for bit (NaN included).
pub(crate) fn bits(c: &PointCloud) -> Vec<Vec<u32>> {
    use super::fields::{BeamInfo, Value};
    let fields = super::FieldSet::default();
    c.points
        .iter()
        .map(|p| {
            fields
                .fields()
                .iter()
                .map(|f| match (f.get)(p, &BeamInfo::default()) {
                    Value::F32(v) => v.to_bits(),
                    Value::U8(v) => u32::from(v),
                    Value::U16(v) => u32::from(v),
                    Value::U32(v) => v,
                })
                .collect()
        })
        .collect()
}
