//! Pattern generators shared by the presets and the YAML schema: column sweeps of
//! rotating and scanning sensors, regular grids, explicit angle lists and the
//! non-repetitive rosette.

use super::{domain, Beam, SensorError};
use glam::Vec3;
use std::f64::consts::PI;

/// Beams plus the pattern's shape; the rest of a [`super::Sensor`] comes from elsewhere.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    pub beams: Vec<Beam>,
    pub channels: u32,
    pub columns: u32,
}

/// One laser of a column: elevation (deg) and vendor ring index, in firing order.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Laser {
    pub elevation_deg: f64,
    pub ring: u32,
    /// Height of the laser's origin above the sensor origin (m): the vertical offsets
    /// a manual lists per laser (0 where it lists none).
    pub height_m: f32,
    /// Azimuth of the laser from its column's (deg, counter-clockwise): the azimuth
    /// offsets of a manual's laser table (0 where it lists none).
    pub azimuth_deg: f64,
    /// When the laser fires after its column begins (s): a manual's firing timing
    /// within a sequence (0: the column's lasers fire together).
    pub delay_s: f64,
}

/// Wraps an angle (rad) into (−π, π].
fn wrap(a: f64) -> f64 {
    let w = a.rem_euclid(2.0 * PI);
    if w > PI {
        w - 2.0 * PI
    } else {
        w
    }
}

fn channels_of(lasers: &[Laser]) -> u32 {
    lasers.iter().map(|l| l.ring + 1).max().unwrap_or(0)
}

/// Column-major sweep: every laser fires once per column at `azimuth_deg(col)` and
/// `time_s(col)`, offset by its own `azimuth_deg` and `delay_s`. `origin_radius` (m)
/// puts each beam's origin on a circle around the spin axis at its column's azimuth, as
/// on sensors whose optics sit off the axis: the lens turns with the column, and a
/// laser's own azimuth offset is where it points through it (Ouster's beam intrinsics:
/// the origin on the encoder angle, the direction off it by `beam_azimuth_angles`).
/// Callers bound `lasers × columns` with [`domain::beams`] first: this allocates them.
pub(crate) fn column_sweep(
    lasers: &[Laser],
    columns: u32,
    azimuth_deg: impl Fn(u32) -> f64,
    time_s: impl Fn(u32) -> f64,
    origin_radius: f32,
) -> Pattern {
    let mut beams = Vec::with_capacity(lasers.len() * columns as usize);
    for col in 0..columns {
        let (column_az, t) = (azimuth_deg(col), time_s(col));
        for l in lasers {
            let az = wrap((column_az + l.azimuth_deg).to_radians());
            let lens = column_az.to_radians();
            let radial = Vec3::new(lens.cos() as f32, lens.sin() as f32, 0.0) * origin_radius;
            beams.push(Beam {
                azimuth: az as f32,
                elevation: l.elevation_deg.to_radians() as f32,
                time: (t + l.delay_s) as f32,
                ring: l.ring,
                origin: radial + Vec3::Z * l.height_m,
            });
        }
    }
    Pattern {
        beams,
        channels: channels_of(lasers),
        columns,
    }
}

/// A full turn of a clockwise-spinning sensor: column 0 at azimuth +180° (behind),
/// then decreasing; column m fires at m / columns / frame_rate, a laser fired `delay_s`
/// later points that much further on in the turn.
pub(crate) fn rotating(
    lasers: &[Laser],
    columns: u32,
    frame_rate: f64,
    origin_radius: f32,
) -> Pattern {
    let w = f64::from(columns);
    let turned: Vec<Laser> = lasers
        .iter()
        .map(|l| Laser {
            azimuth_deg: l.azimuth_deg - 360.0 * frame_rate * l.delay_s,
            ..*l
        })
        .collect();
    column_sweep(
        &turned,
        columns,
        |m| 180.0 - 360.0 * f64::from(m) / w,
        |m| f64::from(m) / w / frame_rate,
        origin_radius,
    )
}

/// Lasers evenly spaced from `top_deg` down to `bottom_deg`, ring 0 at the top.
pub(crate) fn uniform_lasers(top_deg: f64, bottom_deg: f64, count: u32) -> Vec<Laser> {
    (0..count)
        .map(|j| Laser {
            elevation_deg: if count > 1 {
                top_deg + (bottom_deg - top_deg) * f64::from(j) / f64::from(count - 1)
            } else {
                0.5 * (top_deg + bottom_deg)
            },
            ring: j,
            ..Laser::default()
        })
        .collect()
}

/// Number of grid points `step` apart over `span`, both ends included. Steps come from
/// f32 YAML values (0.2 is 0.2000000030), so a relative tolerance keeps the end point.
/// Saturates (at u64::MAX) rather than wraps, for the caller to refuse.
pub(crate) fn steps_inclusive(span: f64, step: f64) -> u64 {
    let r = span / step;
    ((r + r.abs().max(1.0) * 1e-6).floor() as u64).saturating_add(1)
}

/// A regular grid over an azimuth and elevation field of view (degrees).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GridSpec {
    /// Azimuth field of view [min, max] (deg). A span of 360° makes a full turn.
    pub h_fov_deg: [f32; 2],
    /// Elevation field of view [min, max] (deg) of the outermost beam centres.
    pub v_fov_deg: [f32; 2],
    /// Azimuth step (deg).
    pub h_res_deg: f32,
    /// Elevation step (deg); give this or `channels`.
    pub v_res_deg: Option<f32>,
    /// Number of rows evenly spread over `v_fov_deg`; give this or `v_res_deg`.
    pub channels: Option<u32>,
}

/// Grid beams: column-major, azimuth decreasing from the left edge (clockwise, like the
/// spinning presets), ring 0 at the top; columns spread evenly over the frame.
/// Errors name the field relative to the grid block.
pub(crate) fn grid(spec: &GridSpec, frame_rate: f64) -> Result<Pattern, SensorError> {
    let [h0, h1] = spec.h_fov_deg.map(f64::from);
    let [v0, v1] = spec.v_fov_deg.map(f64::from);
    check_fov([h0, h1], [v0, v1])?;
    let h_res = f64::from(spec.h_res_deg);
    domain::H_RESOLUTION.check("h_res_deg", h_res)?;
    let h_span = h1 - h0;
    if h_span > 360.0 + 1e-6 {
        return Err(SensorError::invalid(
            "h_fov_deg",
            format!("spans {h_span}°, more than a full turn"),
        ));
    }
    // A full turn must not fire the seam twice.
    let full_turn = (h_span - 360.0).abs() < 1e-6;
    let columns = if full_turn {
        ((360.0 / h_res).round() as u64).max(1)
    } else {
        steps_inclusive(h_span, h_res)
    };
    let columns = domain::count("h_res_deg (columns)", columns, domain::MAX_COLUMNS)?;
    let lasers = grid_lasers(spec, v0, v1)?;
    domain::beams("h_res_deg", lasers.len() as u64, u64::from(columns))?;
    let w = f64::from(columns);
    Ok(column_sweep(
        &lasers,
        columns,
        |k| {
            if full_turn {
                180.0 - 360.0 * f64::from(k) / w
            } else {
                h1 - h_res * f64::from(k)
            }
        },
        |k| f64::from(k) / w / frame_rate,
        0.0,
    ))
}

/// Both fields of view finite and ordered; elevations within ±90°.
fn check_fov(h: [f64; 2], v: [f64; 2]) -> Result<(), SensorError> {
    for (field, v, d) in [
        ("h_fov_deg", h, domain::AZIMUTH),
        ("v_fov_deg", v, domain::ELEVATION),
    ] {
        for (i, x) in v.iter().enumerate() {
            d.check(&format!("{field}[{i}]"), *x)?;
        }
        if v[0] > v[1] {
            return Err(SensorError::invalid(
                field,
                format!("must be finite [min, max] with min ≤ max, got {v:?}"),
            ));
        }
    }
    Ok(())
}

/// The grid's rows from the top `v1` down to `v0`: `v_res_deg` apart, or `channels`
/// of them spread evenly.
fn grid_lasers(spec: &GridSpec, v0: f64, v1: f64) -> Result<Vec<Laser>, SensorError> {
    match (spec.v_res_deg, spec.channels) {
        (Some(v_res), None) => {
            let v_res = f64::from(v_res);
            domain::V_RESOLUTION.check("v_res_deg", v_res)?;
            let rows = domain::count(
                "v_res_deg (rows)",
                steps_inclusive(v1 - v0, v_res),
                domain::MAX_CHANNELS,
            )?;
            Ok((0..rows)
                .map(|j| Laser {
                    elevation_deg: v1 - v_res * f64::from(j),
                    ring: j,
                    ..Laser::default()
                })
                .collect())
        }
        (None, Some(n)) => {
            let n = domain::count("channels", u64::from(n), domain::MAX_CHANNELS)?;
            Ok(uniform_lasers(v1, v0, n))
        }
        _ => Err(SensorError::invalid(
            "v_res_deg",
            "give exactly one of `v_res_deg` and `channels`",
        )),
    }
}

/// Explicit angles (degrees): either every combination of `azimuth_deg` × `elevation_deg`
/// or a list of `[az, el]` / `[az, el, t]` beams.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExplicitSpec {
    #[serde(alias = "azimuth")]
    pub azimuth_deg: Option<Vec<f32>>,
    #[serde(alias = "elevation")]
    pub elevation_deg: Option<Vec<f32>>,
    /// `[az, el]` pairs (deg) or `[az, el, t]` with t in seconds.
    #[serde(alias = "beams")]
    pub beams_deg: Option<Vec<Vec<f32>>>,
}

pub(crate) fn explicit(spec: &ExplicitSpec, frame_rate: f64) -> Result<Pattern, SensorError> {
    match (&spec.azimuth_deg, &spec.elevation_deg, &spec.beams_deg) {
        (Some(az), Some(el), None) => {
            if az.is_empty() || el.is_empty() {
                return Err(SensorError::invalid(
                    if az.is_empty() {
                        "azimuth_deg"
                    } else {
                        "elevation_deg"
                    },
                    "is empty: the pattern would have zero beams",
                ));
            }
            domain::count("elevation_deg", el.len() as u64, domain::MAX_CHANNELS)?;
            domain::count("azimuth_deg", az.len() as u64, domain::MAX_COLUMNS)?;
            domain::beams("azimuth_deg", el.len() as u64, az.len() as u64)?;
            check_angles("azimuth_deg", az, domain::AZIMUTH)?;
            check_angles("elevation_deg", el, domain::ELEVATION)?;
            let lasers: Vec<Laser> = el
                .iter()
                .enumerate()
                .map(|(j, &e)| Laser {
                    elevation_deg: f64::from(e),
                    ring: j as u32,
                    ..Laser::default()
                })
                .collect();
            let columns = az.len() as u32;
            let w = f64::from(columns);
            Ok(column_sweep(
                &lasers,
                columns,
                |k| f64::from(az[k as usize]),
                |k| f64::from(k) / w / frame_rate,
                0.0,
            ))
        }
        (None, None, Some(list)) => {
            if list.is_empty() {
                return Err(SensorError::invalid(
                    "beams_deg",
                    "is empty: the pattern would have zero beams",
                ));
            }
            domain::beams("beams_deg", list.len() as u64, 1)?;
            let n = list.len() as f64;
            let mut beams = Vec::with_capacity(list.len());
            for (i, b) in list.iter().enumerate() {
                let time = match b.as_slice() {
                    [_, _] => (i as f64 / n / frame_rate) as f32,
                    [_, _, t] => *t,
                    _ => {
                        return Err(SensorError::invalid(
                            format!("beams_deg[{i}]"),
                            format!("expected [az, el] or [az, el, t], got {} numbers", b.len()),
                        ))
                    }
                };
                domain::AZIMUTH.check(&format!("beams_deg[{i}][0]"), f64::from(b[0]))?;
                domain::ELEVATION.check(&format!("beams_deg[{i}][1]"), f64::from(b[1]))?;
                beams.push(Beam {
                    azimuth: wrap(f64::from(b[0]).to_radians()) as f32,
                    elevation: b[1].to_radians(),
                    time,
                    ring: 0,
                    origin: Vec3::ZERO,
                });
            }
            Ok(Pattern {
                beams,
                channels: 1,
                columns: 1,
            })
        }
        _ => Err(SensorError::invalid(
            "explicit",
            "give either `azimuth_deg` and `elevation_deg` (every combination) \
             or `beams_deg` ([az, el] pairs), not a mix",
        )),
    }
}

/// Every angle of an explicit list within `d`; the error names the first outside.
fn check_angles(field: &str, v: &[f32], d: domain::Domain) -> Result<(), SensorError> {
    for (i, x) in v.iter().enumerate() {
        d.check(&format!("{field}[{i}]"), f64::from(*x))?;
    }
    Ok(())
}

/// Livox-style non-repetitive rosette around +x. The beam's off-axis angle follows the
/// rose curve ρ = R·cos(k·φ) while φ turns `turns` times per frame; with an irrational k
/// the curve never closes, so the frame covers the disc instead of retracing petals,
/// and it is densest near the axis, as the Risley-prism scanners are.
/// The caller bounds `points` (it allocates them).
pub(crate) fn rosette(radius_deg: f64, points: u32, frame_rate: f64) -> Pattern {
    // k = 3·golden ratio: ~9.7 petal passes per turn of φ, never closing.
    let k = 3.0 * (1.0 + 5f64.sqrt()) / 2.0;
    let turns = 10.0;
    let r = radius_deg.to_radians();
    let n = f64::from(points);
    let beams = (0..points)
        .map(|i| {
            let s = f64::from(i) / n;
            let phi = 2.0 * PI * turns * s;
            let rho = r * (k * phi).cos();
            // Direction at angle ρ from +x, in the plane at angle φ around x.
            let d = [rho.cos(), rho.sin() * phi.cos(), rho.sin() * phi.sin()];
            Beam {
                azimuth: d[1].atan2(d[0]) as f32,
                elevation: d[2].clamp(-1.0, 1.0).asin() as f32,
                time: (s / frame_rate) as f32,
                ring: 0,
                origin: Vec3::ZERO,
            }
        })
        .collect();
    Pattern {
        beams,
        channels: 1,
        columns: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_is_half_open() {
        assert!((wrap(PI) - PI).abs() < 1e-12);
        assert!((wrap(-PI) - PI).abs() < 1e-12);
        assert!((wrap(3.0 * PI / 2.0) + PI / 2.0).abs() < 1e-12);
    }

    #[test]
    fn grid_counts_and_edges() {
        let spec = GridSpec {
            h_fov_deg: [-60.0, 50.0],
            v_fov_deg: [-10.0, 10.0],
            h_res_deg: 0.25,
            v_res_deg: Some(0.5),
            channels: None,
        };
        let p = grid(&spec, 10.0).unwrap();
        assert_eq!(p.columns, 441);
        assert_eq!(p.channels, 41);
        assert_eq!(p.beams.len(), 441 * 41);
        let first = p.beams[0];
        let last = p.beams[p.beams.len() - 1];
        assert!((first.azimuth.to_degrees() - 50.0).abs() < 1e-4);
        assert!((first.elevation.to_degrees() - 10.0).abs() < 1e-4);
        assert!((last.azimuth.to_degrees() + 60.0).abs() < 1e-4);
        assert!((last.elevation.to_degrees() + 10.0).abs() < 1e-4);
        assert!(last.time < 0.1 && last.time > 0.099);
    }

    #[test]
    fn full_turn_grid_does_not_repeat_the_seam() {
        let spec = GridSpec {
            h_fov_deg: [-180.0, 180.0],
            v_fov_deg: [0.0, 0.0],
            h_res_deg: 1.0,
            v_res_deg: None,
            channels: Some(1),
        };
        let p = grid(&spec, 10.0).unwrap();
        assert_eq!(p.columns, 360);
        let mut az: Vec<i64> = p
            .beams
            .iter()
            .map(|b| (b.azimuth.to_degrees().round() as i64).rem_euclid(360))
            .collect();
        az.sort_unstable();
        az.dedup();
        assert_eq!(az.len(), 360);
    }

    #[test]
    fn grid_rejects_zero_resolution() {
        let spec = GridSpec {
            h_fov_deg: [-10.0, 10.0],
            v_fov_deg: [0.0, 1.0],
            h_res_deg: 0.0,
            v_res_deg: Some(0.5),
            channels: None,
        };
        let err = grid(&spec, 10.0).unwrap_err().to_string();
        assert!(err.contains("h_res_deg"), "{err}");
    }

    #[test]
    fn explicit_combinations_are_column_major() {
        let spec = ExplicitSpec {
            azimuth_deg: Some(vec![10.0, 0.0, -10.0]),
            elevation_deg: Some(vec![5.0, -5.0]),
            beams_deg: None,
        };
        let p = explicit(&spec, 10.0).unwrap();
        assert_eq!((p.channels, p.columns, p.beams.len()), (2, 3, 6));
        let deg: Vec<(i32, i32, u32)> = p
            .beams
            .iter()
            .map(|b| {
                (
                    b.azimuth.to_degrees().round() as i32,
                    b.elevation.to_degrees().round() as i32,
                    b.ring,
                )
            })
            .collect();
        assert_eq!(
            deg,
            vec![
                (10, 5, 0),
                (10, -5, 1),
                (0, 5, 0),
                (0, -5, 1),
                (-10, 5, 0),
                (-10, -5, 1)
            ]
        );
    }

    #[test]
    fn rosette_stays_in_its_circle_and_fills_it() {
        let p = rosette(19.2, 20_000, 10.0);
        let mut max_off = 0f32;
        for b in &p.beams {
            let off = b.direction().angle_between(Vec3::X).to_degrees();
            assert!(off <= 19.2 + 1e-3, "{off}");
            max_off = max_off.max(off);
        }
        assert!(max_off > 19.15, "{max_off}");
        // The curve must not retrace itself: nearly all directions are distinct.
        let mut keys: Vec<(i32, i32)> = p
            .beams
            .iter()
            .map(|b| {
                (
                    (b.azimuth.to_degrees() * 100.0) as i32,
                    (b.elevation.to_degrees() * 100.0) as i32,
                )
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        assert!(keys.len() > 19_000, "{}", keys.len());
    }
}
