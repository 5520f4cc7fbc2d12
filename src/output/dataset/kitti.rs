//! KITTI's files: the velodyne `.bin`, the virtual camera's `calib` text and the
//! `label_2` lines (the object development kit's readme gives every column).

use crate::model::Point;
use crate::output::objects::{ObjectLabel, OrientedBox};
use glam::{Vec2, Vec3};
use std::io::{self, Write};

/// The virtual camera's focal length (px): KITTI's object benchmark's camera 2.
pub const KITTI_FOCAL_PX: f32 = 721.5377;
/// Its principal point (px).
pub const KITTI_CENTER_PX: [f32; 2] = [609.5593, 172.854];
/// Its image (width, height in px).
pub const KITTI_IMAGE: [u32; 2] = [1242, 375];
/// Cells per box axis for the share of an object outside the image.
const TRUNCATION_GRID: usize = 6;
/// The nearest depth a box corner is projected from (m).
const NEAR_M: f32 = 0.05;

/// Points as KITTI's velodyne scans hold them: `x y z reflectance`, float32 each.
pub(super) fn write_bin<W: Write + ?Sized>(w: &mut W, points: &[Point]) -> io::Result<()> {
    for p in points {
        for v in point_row(p) {
            w.write_all(&v.to_le_bytes())?;
        }
    }
    Ok(())
}

/// A point's `x y z reflectance` (module docs of `dataset`).
pub(super) fn point_row(p: &Point) -> [f32; 4] {
    [p.x, p.y, p.z, p.intensity.clamp(0.0, 1.0)]
}

/// The lidar frame (x forward, y left, z up) in the virtual camera's (x right, y
/// down, z forward): `Tr_velo_to_cam`'s rotation.
pub(super) fn to_camera(v: Vec3) -> Vec3 {
    Vec3::new(-v.y, -v.z, v.x)
}

/// The calib file: P0–P3, R0_rect, Tr_velo_to_cam, Tr_imu_to_velo (the identity: the
/// virtual IMU sits at the lidar). `odometry`: KITTI odometry's form (P0–P3, Tr).
pub(super) fn write_calib<W: Write + ?Sized>(w: &mut W, odometry: bool) -> io::Result<()> {
    let (f, [cx, cy]) = (KITTI_FOCAL_PX, KITTI_CENTER_PX);
    let p = [f, 0.0, cx, 0.0, 0.0, f, cy, 0.0, 0.0, 0.0, 1.0, 0.0];
    let tr = [0.0, -1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    let line = |w: &mut W, key: &str, v: &[f32]| {
        let v: Vec<String> = v.iter().map(|x| format!("{x:e}")).collect();
        writeln!(w, "{key}: {}", v.join(" "))
    };
    for k in ["P0", "P1", "P2", "P3"] {
        line(w, k, &p)?;
    }
    if odometry {
        return line(w, "Tr", &tr);
    }
    line(w, "R0_rect", &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])?;
    line(w, "Tr_velo_to_cam", &tr)?;
    let identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    line(w, "Tr_imu_to_velo", &identity)
}

/// `object`'s `label_2` line as type `kind`, or `None` where no part of its box is in
/// the virtual image (KITTI labels what the camera sees).
pub(super) fn label_line(o: &ObjectLabel, kind: &str) -> Option<String> {
    let b = &o.sensor_box;
    let [left, top, right, bottom] = image_box(b)?;
    let inside = (b.grid(TRUNCATION_GRID))
        .filter(|p| project(to_camera(*p)).is_some_and(in_image))
        .count();
    let truncated = 1.0 - inside as f32 / TRUNCATION_GRID.pow(3) as f32;
    let (l, w, h) = (b.size.x, b.size.y, b.size.z);
    // KITTI's location is the bottom face's centre; its yaw turns about the camera's y.
    let bottom_centre = to_camera(b.center - Vec3::Z * h * 0.5);
    let ry = wrap(-b.yaw() - std::f32::consts::FRAC_PI_2);
    let alpha = wrap(ry - bottom_centre.x.atan2(bottom_centre.z));
    // (+ 0: a box on the lidar's axis is at x = 0, not −0.)
    let [x, y, z] = (bottom_centre + Vec3::ZERO).to_array();
    Some(format!(
        "{kind} {truncated:.2} {} {alpha:.4} {left:.2} {top:.2} {right:.2} {bottom:.2} \
         {h:.4} {w:.4} {l:.4} {x:.4} {y:.4} {z:.4} {ry:.4}",
        o.occlusion as u8
    ))
}

/// The box's 2D bounds in the image (left, top, right, bottom px), clipped to it: its
/// corners in front of the camera and where its edges cross the near plane.
fn image_box(b: &OrientedBox) -> Option<[f32; 4]> {
    let corners: Vec<Vec3> = (0..8)
        .map(|k| {
            let s = Vec3::new(
                if k & 1 == 0 { -0.5 } else { 0.5 },
                if k & 2 == 0 { -0.5 } else { 0.5 },
                if k & 4 == 0 { -0.5 } else { 0.5 },
            );
            to_camera(b.center + b.rotation * (s * b.size))
        })
        .collect();
    let mut seen: Vec<Vec2> = corners.iter().filter_map(|c| project(*c)).collect();
    for a in 0..8 {
        for bit in [1, 2, 4] {
            let (p, q) = (corners[a], corners[a ^ bit]);
            if a & bit == 0 && (p.z - NEAR_M) * (q.z - NEAR_M) < 0.0 {
                let t = (NEAR_M - p.z) / (q.z - p.z);
                seen.extend(project(p + (q - p) * t * 1.0001));
            }
        }
    }
    let [w, h] = KITTI_IMAGE.map(|v| v as f32 - 1.0);
    let min = seen
        .iter()
        .fold(Vec2::INFINITY, |m, p| m.min(*p))
        .max(Vec2::ZERO);
    let max = (seen.iter().fold(Vec2::NEG_INFINITY, |m, p| m.max(*p))).min(Vec2::new(w, h));
    (min.x < max.x && min.y < max.y).then_some([min.x, min.y, max.x, max.y])
}

/// A point of the camera frame in the image (px), if in front of the camera.
fn project(c: Vec3) -> Option<Vec2> {
    (c.z >= NEAR_M).then(|| {
        let [cx, cy] = KITTI_CENTER_PX;
        Vec2::new(
            KITTI_FOCAL_PX * c.x / c.z + cx,
            KITTI_FOCAL_PX * c.y / c.z + cy,
        )
    })
}

fn in_image(p: Vec2) -> bool {
    let [w, h] = KITTI_IMAGE.map(|v| v as f32);
    p.x >= 0.0 && p.y >= 0.0 && p.x < w && p.y < h
}

/// An angle in [-π, π).
fn wrap(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    (a + PI).rem_euclid(TAU) - PI
}
