//! The sensor presets: elevation tables and timing from the vendors' public datasheets
//! and manuals. Each builder names its source; where a sheet gives no figure (minimum
//! range, the reflectance behind a bare "up to 100 m") the value is marked as ours.

use super::detector::{Detector, DualPolicy, Noise, ReturnMode};
use super::hesai::PANDAR_XT32;
use super::kernel::{fwhm_to_1e2, BeamKernel};
use super::livox::MID_360;
use super::patterns::{self, column_sweep, rotating, steps_inclusive, uniform_lasers, Laser};
use super::spinning::{MotorSpeeds, SpinningLasers};
use super::velodyne::{HDL32E, HDL64E_S3, VLP16, VLP32C, VLS128};
use super::{
    default_mount, domain, CwSettings, Detection, PresetOptions, ReflectivityScale, Sampling,
    Sensor, SensorError,
};

/// Sensor-wide defaults of a preset.
struct Defaults {
    min_range: f32,
    max_range: f32,
    frame_rate: f32,
    wavelength_nm: f32,
    detection: (f32, f32),
    /// Beam kernel and its sub-rays (grid sampling).
    beam: (BeamKernel, u32),
    detector: Detector,
    /// The sheet's measurement noise ([`Noise`]); the preset's detector carries it.
    noise: Noise,
}

// Beams and receivers. Few sheets give more than a divergence, so most of what follows
// is marked as an estimate. Pulse durations: 905 nm pulsed laser diodes of automotive
// sensors emit 3–6 ns pulses; where a vendor gives no figure we take 5 ns. The range
// resolution of the detector is the bin width of our waveform sampling (5 cm), not the
// output quantisation a sheet quotes. Noise is on in every preset, at the sheet's range
// accuracy where it gives one (read as 1σ) and at the estimates below where it does not;
// `Sensor::ideal` switches it off. Every preset with a datasheet divergence traces the
// beam with sub-rays ([`DIVERGENCE_SUBRAYS`], or [`HALO_SUBRAYS`] for kernels with the
// wide halo that makes retroreflectors bloom); `Sensor::thin` traces one ray per beam.
// Dual returns (`Detector::native_dual`, what `return_mode: dual` selects): Velodyne
// and Ouster document theirs (see their receivers below); the other sheets describe no
// dual mode, so those presets take the default, strongest + last.

/// Sub-rays of a preset whose kernel is its datasheet divergence only: a 3 × 3 grid,
/// enough for the mixed pixels at edges and the echo widening on slanted surfaces
/// (paper 000 Fig. 6C) without the cost of the halo presets' tails.
pub(crate) const DIVERGENCE_SUBRAYS: u32 = 9;

/// Relative amplitude noise of every preset: pulse-energy and receiver-gain jitter of a
/// few percent. An estimate: no sheet publishes it.
const AMPLITUDE_REL: f32 = 0.05;
/// Detection-probability roll-off of every preset: P_d rises from 16 % to 84 % between
/// 0.9 and 1.1 × the threshold, through 50 % at it — where the sheets that name a
/// detection probability at their range (Ouster: "> 50 % detection probability") put
/// it. The width is an estimate: sheets give P_d only at one range.
const PD_WIDTH: f32 = 0.1;

/// The receivers' saturation (largest waveform amplitude) in every preset: a white
/// Lambertian target at 1 m just clips, so diffuse targets read true from the minimum
/// range out while retroreflectors (10²–10³ × white) clip within 10–30 m, as signs do on
/// real sensors. An estimate: no sheet states a dynamic range.
const SATURATION: f32 = 1.0;

/// A sheet's noise: range σ (m) plus an SNR-dependent part, false echoes per beam.
fn sheet_noise(range_sigma_m: f32, range_sigma_snr_m: f32, false_alarm_rate: f32) -> Noise {
    Noise {
        range_sigma_m,
        range_sigma_snr_m,
        amplitude_rel: AMPLITUDE_REL,
        pd_width: PD_WIDTH,
        false_alarm_rate,
    }
}

/// Halo of the core+halo kernels: 10⁻³ of the power in a Gaussian of 3° full angle at
/// 1/e² (the last 10⁻⁴ of it lies beyond 3.2°). An estimate: paper 000
/// measured a kernel spanning six orders of magnitude over about 3°, six times its core
/// (Blickfeld Cube 1); no vendor publishes its halo.
const HALO_FULL_ANGLE_DEG: f32 = 3.0;
const HALO_FRACTION: f32 = 1e-3;
/// Sub-rays of a core+halo preset: four sample the core and twelve the halo, in three
/// rings of four at 0.9°, 1.9° and 2.5° (sensor/halo.rs), so the bloom reaches as far
/// as the halo's last percent; cheap enough for a CPU Vulkan driver.
const HALO_SUBRAYS: u32 = 16;

fn core_halo(core_h_deg: f32, core_v_deg: f32) -> BeamKernel {
    BeamKernel::CoreHalo {
        core_h: core_h_deg.to_radians(),
        core_v: core_v_deg.to_radians(),
        halo_h: HALO_FULL_ANGLE_DEG.to_radians(),
        halo_v: HALO_FULL_ANGLE_DEG.to_radians(),
        halo_fraction: HALO_FRACTION,
    }
}

/// Velodyne gives 3.0 mrad horizontal × 1.5 mrad vertical beam divergence (VLS-128
/// manual, table F-1); we use it for the VLP-16, HDL-32E and HDL-64E too and read it as
/// the full angle at 1/e² (the manual does not say) — both are assumptions.
fn velodyne_beam() -> (BeamKernel, u32) {
    (
        BeamKernel::Gaussian {
            div_h: 3.0e-3,
            div_v: 1.5e-3,
        },
        DIVERGENCE_SUBRAYS,
    )
}

/// Velodyne's typical range accuracy (±3 cm VLP-16, ±2 cm HDL-32E, < 2 cm HDL-64E per
/// the sheets) read as 1σ; the sheets give no false-alarm rate (none drawn).
fn velodyne_noise(accuracy_m: f32) -> Noise {
    sheet_noise(accuracy_m, 0.0, 0.0)
}

/// Velodyne's receiver: the factory default return mode `strongest`; the sensor's dual
/// mode (`return_mode: dual`) is Velodyne's: the strongest and the last echo, and the
/// second strongest and the last when the strongest is the last (VLP-16, HDL-32E and
/// HDL-64E manuals, "dual return mode"; their packets carry the last return first, our
/// points come in range order).
fn velodyne_detector() -> Detector {
    Detector {
        return_mode: ReturnMode::Strongest,
        native_dual: DualPolicy::StrongestLast,
        ..Detector::default()
    }
}

fn assemble(name: &str, p: patterns::Pattern, d: &Defaults, frame_rate: f32) -> Sensor {
    Sensor {
        name: name.to_string(),
        beams: p.beams,
        channels: p.channels,
        columns: p.columns,
        mount: default_mount(),
        min_range: d.min_range,
        max_range: d.max_range,
        frame_rate,
        wavelength_nm: d.wavelength_nm,
        detection: Detection {
            reference_reflectance: d.detection.0,
            reference_range: d.detection.1,
        },
        kernel: d.beam.0.clone(),
        subrays: d.beam.1,
        sampling: Sampling::Stratified,
        detector: Detector {
            noise: d.noise,
            saturation: SATURATION,
            ..d.detector
        },
        cw: None,
        max_bounces: 1,
        reflectivity: ReflectivityScale::STANDARD,
    }
}

/// Rejects options a preset has no use for, so a typo'd intent is not silently dropped.
fn only(name: &str, o: &PresetOptions, allowed: &[&str]) -> Result<(), SensorError> {
    let given = [
        ("columns", o.columns.is_some()),
        (
            "horizontal_resolution_deg",
            o.horizontal_resolution_deg.is_some(),
        ),
        ("lines", o.lines.is_some()),
        ("points", o.points.is_some()),
    ];
    for (field, set) in given {
        if set && !allowed.contains(&field) {
            let takes = if allowed.is_empty() {
                "no pattern options".to_string()
            } else {
                allowed.join(", ")
            };
            return Err(SensorError::invalid(
                field,
                format!("preset `{name}` does not take `{field}`; it takes: {takes}"),
            ));
        }
    }
    Ok(())
}

fn frame_rate(o: &PresetOptions, default: f32) -> Result<f32, SensorError> {
    let f = o.frame_rate.unwrap_or(default);
    domain::FRAME_RATE.check("frame_rate", f64::from(f))?;
    Ok(f)
}

/// The frame rates (Hz) a scanner's sheet lists, with the sheet.
#[derive(Debug)]
pub(crate) struct ScanRates {
    pub hz: &'static [f32],
    pub source: &'static str,
}

/// Refuses a frame rate outside `rates` (unless `any_mode`), naming them.
fn scan_rate(name: &str, f: f32, rates: &ScanRates, o: &PresetOptions) -> Result<(), SensorError> {
    if o.any_mode || rates.hz.iter().any(|&r| (r - f).abs() < 1e-3) {
        return Ok(());
    }
    let listed: Vec<String> = rates.hz.iter().map(|r| r.to_string()).collect();
    Err(SensorError::invalid(
        "frame_rate",
        format!(
            "{name} scans at {} Hz ({}); {f} Hz is not a mode it has",
            listed.join(", "),
            rates.source
        ),
    ))
}

fn resolution(field: &str, v: f32) -> Result<f64, SensorError> {
    domain::H_RESOLUTION.check(field, f64::from(v))?;
    Ok(f64::from(v))
}

fn columns(v: u64) -> Result<u32, SensorError> {
    domain::count("columns", v, domain::MAX_COLUMNS)
}

/// Columns of a rotating sensor from `columns`, or `horizontal_resolution_deg`, or the
/// default.
fn turn_columns(
    o: &PresetOptions,
    default: impl FnOnce() -> Result<u32, SensorError>,
) -> Result<u32, SensorError> {
    match (o.columns, o.horizontal_resolution_deg) {
        (Some(_), Some(_)) => Err(SensorError::invalid(
            "columns",
            "give `columns` or `horizontal_resolution_deg`, not both",
        )),
        (Some(c), None) => columns(u64::from(c)),
        (None, Some(r)) => {
            let r = resolution("horizontal_resolution_deg", r)?;
            columns(((360.0 / r).round() as u64).max(1))
        }
        (None, None) => default(),
    }
}

/// Columns of a partial sweep over `span_deg`, returning (columns, step in degrees).
fn sweep_columns(
    o: &PresetOptions,
    span_deg: f64,
    default_res_deg: f64,
) -> Result<(u32, f64), SensorError> {
    match (o.columns, o.horizontal_resolution_deg) {
        (Some(_), Some(_)) => Err(SensorError::invalid(
            "columns",
            "give `columns` or `horizontal_resolution_deg`, not both",
        )),
        (Some(c), None) => {
            let c = columns(u64::from(c))?;
            let step = if c > 1 {
                span_deg / f64::from(c - 1)
            } else {
                0.0
            };
            Ok((c, step))
        }
        (None, r) => {
            let res = match r {
                Some(r) => resolution("horizontal_resolution_deg", r)?,
                None => default_res_deg,
            };
            Ok((columns(steps_inclusive(span_deg, res))?, res))
        }
    }
}

/// A rotating pattern of `lasers` × `columns`, refused before it is made when too large.
fn turning(
    lasers: &[Laser],
    columns: u32,
    frame_rate: f32,
    origin_radius: f32,
) -> Result<patterns::Pattern, SensorError> {
    domain::beams("columns", lasers.len() as u64, u64::from(columns))?;
    Ok(rotating(
        lasers,
        columns,
        f64::from(frame_rate),
        origin_radius,
    ))
}

// ---------------------------------------------------------------- Velodyne

/// The lasers of a column of `table`, in the order the preset fires them.
fn spinning_lasers(table: &SpinningLasers) -> Vec<Laser> {
    (0..table.count)
        .map(|k| {
            let id = (table.laser_at)(k);
            Laser {
                elevation_deg: (table.elevation_deg)(id),
                ring: id as u32,
                height_m: (table.height_m)(id),
                // The manuals' offsets turn clockwise; beamtrace's azimuth anticlockwise.
                azimuth_deg: -(table.azimuth_offset_deg)(id),
                delay_s: (table.delay_s)(id),
            }
        })
        .collect()
}

/// Velodyne VLP-16 (Puck). Source: VLP-16 User Manual (63-9243) and datasheet: the
/// laser table of `sensor::velodyne::VLP16`; 0.1°..0.4° azimuth resolution at 5..20 Hz;
/// 903 nm; "up to 100 m".
pub(crate) fn vlp16(o: &PresetOptions) -> Result<Sensor, SensorError> {
    spinning("vlp-16", &VLP16, o, velodyne_100m_defaults(0.03))
}

/// VLP-16 and HDL-32E: 0.9–100 m at 10 Hz, 903 nm. The sheets' "up to 100 m" names no
/// target; we read it as a bright (80 %) target, which with 1/r² puts a 10 % target at
/// ≈ 35 m. `accuracy_m`: the sheet's typical range accuracy.
fn velodyne_100m_defaults(accuracy_m: f32) -> Defaults {
    velodyne_defaults(100.0, accuracy_m)
}

/// A Velodyne of 903 nm whose sheet says "up to `range_m`" (read as an 80 % target,
/// as for the VLP-16) with `accuracy_m` typical accuracy; `min_range` 0.9 m is
/// velodyne_pointcloud's default cut-off (the sheets give none).
fn velodyne_defaults(range_m: f32, accuracy_m: f32) -> Defaults {
    Defaults {
        min_range: 0.9,
        max_range: range_m,
        frame_rate: 10.0,
        wavelength_nm: 903.0,
        detection: (0.80, range_m),
        beam: velodyne_beam(),
        detector: velodyne_detector(),
        noise: velodyne_noise(accuracy_m),
    }
}

/// Velodyne HDL-32E. Source: HDL-32E User Manual (63-9113) and datasheet: the laser
/// table of `sensor::velodyne::HDL32E`; 903 nm; "80 m–100 m" range.
pub(crate) fn hdl32e(o: &PresetOptions) -> Result<Sensor, SensorError> {
    spinning("hdl-32e", &HDL32E, o, velodyne_100m_defaults(0.02))
}

/// Velodyne HDL-64E S3. Source: HDL-64E S3 user's manual: the laser table and firing
/// times of `sensor::velodyne::HDL64E_S3` (the nominal layout; each unit ships its own
/// calibration, which the datasheet's "+2° to −24.9°" field of view includes — load it
/// as a CSV for a specific unit). Rings are the laser ids, numbered top to bottom here,
/// not as a unit numbers them; a column fires upper and lower block in pairs (0, 32, 1,
/// 33, …). 905 nm; "50 m for pavement (~0.10 reflectivity), 120 m for cars and foliage
/// (~0.80)". Points per second: the S3 manual's laser firing time table fires an upper
/// and lower pair every 57.6 µs (velodyne_decoder's S3 timing follows the same table),
/// 1 736 columns a turn at 10 Hz, 1.11 M points/s in single return; the sheet's "~
/// 1.3 M" matches the S2's 48 µs cycle (2 083 columns), not the S3 manual's timing.
pub(crate) fn hdl64e(o: &PresetOptions) -> Result<Sensor, SensorError> {
    spinning(
        "hdl-64e",
        &HDL64E_S3,
        o,
        Defaults {
            min_range: 0.9,
            max_range: 120.0,
            frame_rate: 10.0,
            wavelength_nm: 905.0,
            detection: (0.10, 50.0),
            beam: velodyne_beam(),
            detector: velodyne_detector(),
            noise: velodyne_noise(0.02),
        },
    )
}

/// Velodyne VLP-32C (Ultra Puck). Source: VLP-32C User Manual (63-9325) and datasheet:
/// the laser table of `sensor::velodyne::VLP32C` (+15°..−25°, azimuth
/// offsets ±1.4° and ±4.2°, pairs fired 2.304 µs apart, 55.296 µs per sequence);
/// 903 nm; "up to 200 m" (read as for the VLP-16); range accuracy "up to ±3 cm".
pub(crate) fn vlp32c(o: &PresetOptions) -> Result<Sensor, SensorError> {
    spinning("vlp-32c", &VLP32C, o, velodyne_defaults(200.0, 0.03))
}

/// Velodyne VLS-128 (Alpha Prime). Source: VLS-128 User Manual and the Alpha
/// Prime datasheet: the laser table of `sensor::velodyne::VLS128` (+15°..−25°, eight
/// azimuth offsets up to ±6.354°, groups of eight lasers 2.665 µs apart, 53.3 µs per
/// sequence); 903 nm; "up to 245 m" (read as for the VLP-16); range accuracy ±3 cm.
/// Its calibrated reflectivity reads diffuse 0–100 % as 0–110 and retroreflectors as
/// 111–255 (VLS-128 user manual, "Calibrated Reflectivity").
pub(crate) fn vls128(o: &PresetOptions) -> Result<Sensor, SensorError> {
    let mut s = spinning("vls-128", &VLS128, o, velodyne_defaults(245.0, 0.03))?;
    s.reflectivity = ReflectivityScale::VLS128;
    Ok(s)
}

/// A spinning sensor of laser table `table` (Velodyne, Hesai): a firing sequence every
/// cycle at the chosen motor speed (one of the manual's), so the columns follow from
/// the frame rate unless given.
fn spinning(
    name: &str,
    table: &SpinningLasers,
    o: &PresetOptions,
    d: Defaults,
) -> Result<Sensor, SensorError> {
    only(name, o, &["columns", "horizontal_resolution_deg"])?;
    let f = frame_rate(o, d.frame_rate)?;
    if !o.any_mode {
        motor_speed(name, f, table.speeds)?;
    }
    let from_rpm = || {
        domain::count(
            "frame_rate (columns at this rate)",
            ((1.0 / (f64::from(f) * table.cycle_s)).round() as u64).max(1),
            domain::MAX_COLUMNS,
        )
    };
    let columns = turn_columns(o, from_rpm)?;
    let lasers = spinning_lasers(table);
    Ok(assemble(name, turning(&lasers, columns, f, 0.0)?, &d, f))
}

/// Refuses a frame rate outside the motor speeds the model's manual allows.
fn motor_speed(name: &str, f: f32, speeds: MotorSpeeds) -> Result<(), SensorError> {
    if speeds.allows(f64::from(f)) {
        return Ok(());
    }
    Err(SensorError::invalid(
        "frame_rate",
        format!(
            "{name} spins at {}; {f} Hz ({:.0} rpm) is not one of its motor speeds",
            speeds.describe(),
            f64::from(f) * 60.0
        ),
    ))
}

// ---------------------------------------------------------------- Hesai

/// Hesai's receivers: single return, the last echo, by default (our reading: the
/// PandarXT manual's web control lists Last, Strongest and First and names no
/// default; Hesai's PTC `return_mode` code 0 is "last return"); `return_mode: dual` is
/// Hesai's "Last and Strongest" (0x39: the last echo and the strongest, the second
/// strongest when the strongest is the last — Velodyne's policy).
fn hesai_detector() -> Detector {
    Detector {
        return_mode: ReturnMode::Last,
        native_dual: DualPolicy::StrongestLast,
        max_returns: 1,
        ..Detector::default()
    }
}

/// Hesai PandarXT32. Source: PandarXT32 datasheet and the PandarXT user manual: the
/// laser table of `sensor::hesai::PANDAR_XT32` (+15°..−16° at 1°, a block every
/// 50 µs, channels fired 1.512 µs apart); 905 nm; range 0.05–120 m, "80 m @ 10 %
/// reflectivity"; range precision 0.5 cm (1σ), accuracy ±1 cm; spin rates 5, 10 and
/// 20 Hz. Hesai publishes no beam divergence for it nor a range in sunlight: the beam
/// is Velodyne's estimate, and sunlight does not shorten its range here.
pub(crate) fn pandar_xt32(o: &PresetOptions) -> Result<Sensor, SensorError> {
    let mut s = spinning(
        "pandar-xt32",
        &PANDAR_XT32,
        o,
        Defaults {
            min_range: 0.05,
            max_range: 120.0,
            frame_rate: 10.0,
            wavelength_nm: 905.0,
            detection: (0.10, 80.0),
            beam: velodyne_beam(),
            detector: hesai_detector(),
            noise: sheet_noise(0.005, 0.0, 0.0),
        },
    )?;
    s.reflectivity = ReflectivityScale::HESAI_LINEAR;
    Ok(s)
}

// ---------------------------------------------------------------- Ouster

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ouster {
    Os0,
    Os1,
    Os2,
}

/// Ouster OS0/OS1/OS2, rev-7 datasheets: beams uniformly spaced over the vertical FOV
/// (OS0 90° = ±45°, OS1 45° = ±22.5°, OS2 22.5° = ±11.25°), ring 0 = top beam;
/// 512/1024/2048 columns at 10 or 20 Hz; 865 nm. All channels of a column fire
/// together. The OS1's beams leave 15.806 mm off the spin axis
/// (`lidar_origin_to_beam_origin_mm` of its metadata); the OS0/OS2 offsets are left at
/// zero. Ranges: the sheets' "10 % target, > 50 % detection probability, no sunlight"
/// figures as we read them (OS0 50 m, OS1 120 m, OS2 240 m) — check the revision of
/// your unit's sheet — at the mode the sheet quotes, other modes by
/// [`ouster_dwell_range`]. Minimum range 0.5 m: the firmware's default
/// `min_range_threshold_cm` of 50 (firmware user manual, configuration parameters). The 16-channel OS1 is laid out on the same 45° here; the
/// gen-1 OS-1-16 had 33.2° (±16.6°): load its beam table as a CSV for that unit.
/// Returns: the firmware's default lidar profile, `udp_profile_lidar:
/// RNG19_RFL8_SIG16_NIR16`, carries one return per pixel, the strongest; that is the
/// presets' default. Its dual profile (`RNG19_RFL8_SIG16_NIR16_DUAL`: the strongest and
/// the second strongest, in that order in its packets; our points come in range order)
/// is what `return_mode: dual` and `--return-mode dual` select.
fn ouster_detector() -> Detector {
    Detector {
        return_mode: ReturnMode::Strongest,
        native_dual: DualPolicy::StrongestSecond,
        max_returns: 1,
        ..Detector::default()
    }
}

pub(crate) fn ouster_sensor(
    family: Ouster,
    channels: u32,
    columns: u32,
    f: f32,
) -> Result<Sensor, SensorError> {
    domain::beams("columns", u64::from(channels), u64::from(columns))?;
    Ok(ouster_within_bounds(family, channels, columns, f))
}

/// [`ouster_sensor`] for `channels × columns` already within [`domain::MAX_BEAMS`].
pub(crate) fn ouster_within_bounds(family: Ouster, channels: u32, columns: u32, f: f32) -> Sensor {
    let (half, radius, d) = match family {
        Ouster::Os0 => (
            45.0,
            0.0,
            Defaults {
                min_range: 0.5,
                max_range: 100.0,
                frame_rate: 10.0,
                wavelength_nm: 865.0,
                detection: (0.10, 50.0),
                beam: ouster_beam(channels),
                detector: ouster_detector(),
                noise: ouster_noise(),
            },
        ),
        Ouster::Os1 => (
            22.5,
            0.015_806,
            Defaults {
                min_range: 0.5,
                max_range: 200.0,
                frame_rate: 10.0,
                wavelength_nm: 865.0,
                detection: (0.10, 120.0),
                beam: ouster_beam(channels),
                detector: ouster_detector(),
                noise: ouster_noise(),
            },
        ),
        Ouster::Os2 => (
            11.25,
            0.0,
            Defaults {
                min_range: 0.5,
                max_range: 400.0,
                frame_rate: 10.0,
                wavelength_nm: 865.0,
                detection: (0.10, 240.0),
                beam: ouster_beam(channels),
                detector: ouster_detector(),
                noise: ouster_noise(),
            },
        ),
    };
    let mut lasers = uniform_lasers(half, -half, channels);
    for l in &mut lasers {
        // Laser azimuths are counter-clockwise, Ouster's clockwise.
        l.azimuth_deg = -ouster_beam_azimuth_deg(family, l.ring);
    }
    let mut sensor = assemble(
        &ouster_name(family, channels),
        rotating(&lasers, columns, f64::from(f), radius),
        &d,
        f,
    );
    let dwell = ouster_dwell_range(family, columns, f);
    sensor.detection.reference_range *= dwell;
    if let Some((reflectance, range)) = ouster_sun_figure(family) {
        sensor.detector.ambient_k = sun_coupling(&sensor.detection, reflectance, range * dwell);
    }
    sensor
}

/// Where channel `ring` points clockwise of its column's encoder angle (deg), Ouster's
/// `beam_azimuth_angles`: the channels sit in four columns of the detector, so the
/// offsets repeat every four rows. OS1: a rev 06 OS1's intrinsics, 4.23°, 1.41°,
/// −1.41°, −4.23° (to 0.02°, the example intrinsics of rev 06 OS1 sensor descriptions;
/// every unit's differ slightly — load its metadata's for a unit). The OS0 and OS2 put
/// the same detector behind a lens of twice and half the OS1's field of view (90°,
/// 22.5°): twice and half the angles, our estimate.
fn ouster_beam_azimuth_deg(family: Ouster, ring: u32) -> f64 {
    const OS1: [f64; 4] = [4.23, 1.41, -1.41, -4.23];
    let scale = match family {
        Ouster::Os0 => 2.0,
        Ouster::Os1 => 1.0,
        Ouster::Os2 => 0.5,
    };
    scale * OS1[(ring % 4) as usize]
}

/// The Ouster rev 06 sheets' ranges in full sun: "Range (10 % Lambertian reflectivity,
/// 1024 @ 10 Hz mode) … @ > 50 % detection probability, 100 klx sunlight" — OS0 20 m,
/// OS1 55 m (datasheet-rev06-v2p4-os0, -os1, optical performance). Their 80 % figures
/// (OS0 50 m, OS1 120 m) are what the model is checked against. The OS2 sheets we have
/// quote no range in sunlight: its sun coupling is left at 0.
fn ouster_sun_figure(family: Ouster) -> Option<(f32, f32)> {
    match family {
        Ouster::Os0 => Some((0.10, 20.0)),
        Ouster::Os1 => Some((0.10, 55.0)),
        Ouster::Os2 => None,
    }
}

/// The ambient factor k of the noise floor T + k·√A_b (paper 000 §II-A: the sun's
/// background is shot noise, its σ grows as √A) that makes a Lambertian target of
/// `reflectance` lit head-on by a full sun (irradiance 1 = 100 klx, so A_b =
/// `reflectance`) reach `range` at half detection, where the night's threshold is
/// `detection`'s: reflectance/range² = T + k·√reflectance.
fn sun_coupling(detection: &Detection, reflectance: f32, range: f32) -> f32 {
    let night =
        detection.reference_reflectance / (detection.reference_range * detection.reference_range);
    let in_sun = reflectance / (range * range);
    ((in_sun - night) / reflectance.sqrt()).max(0.0)
}

/// How far a lidar mode reaches against the mode the sheet's range is given for
/// (OS0/OS1 1024 × 10, OS2 2048 × 10). Ouster's lasers fire at a fixed rate, so a pixel
/// averages N ∝ 1 / (columns × Hz) pulses; averaging N pulses lowers the noise, and so
/// the threshold, by √N, and a 1/r² echo then reaches N^¼ as far: 2^¼ = 1.19 per
/// halving of the pixel rate. Ouster's "Estimated Range Multiplier" table (firmware user
/// manual, "Sensor Performance by Operating Configuration", signal multiplier 1×) gives
/// 1.19 (512 × 10), 1.00 (1024 × 10, 512 × 20) and 0.84 (2048 × 10, 1024 × 20) for the
/// OS0/OS1, and the same steps from 2048 × 10 for the OS2.
fn ouster_dwell_range(family: Ouster, columns: u32, f: f32) -> f32 {
    let sheet_rate = match family {
        Ouster::Os2 => 2048.0 * 10.0,
        Ouster::Os0 | Ouster::Os1 => 1024.0 * 10.0,
    };
    let pulses = sheet_rate / (f64::from(columns) * f64::from(f));
    pulses.powf(0.25) as f32
}

/// Ouster beams: the OS1 sheet gives 0.18° FWHM divergence for 128 channels and 0.13°
/// for 64 and 16 (OS1 datasheet, gen. 1); we use the same figures for the OS0 and OS2
/// (an estimate; their sheets we have give none), plus the estimated halo of
/// [`core_halo`]: Ouster sensors show pronounced blooming around retroreflectors. The
/// sheet's returns: 1 (strongest). Range repeatability ±1.5 cm at SNR > 250, ±10 cm at
/// SNR 12 (1σ, same sheet). Pulse duration not published (5 ns, our estimate).
fn ouster_beam(channels: u32) -> (BeamKernel, u32) {
    let fwhm_deg = if channels >= 128 { 0.18 } else { 0.13 };
    let core = fwhm_to_1e2(fwhm_deg);
    (core_halo(core, core), HALO_SUBRAYS)
}

/// The sheet's repeatability, ±1.5 cm at SNR 250 and ±10 cm at SNR 12 (1σ), fitted
/// by σ² = σ₀² + (k/SNR)²: σ₀ = 1.42 cm, k = 1.19 m. Our SNR is the echo's amplitude
/// over its threshold, Ouster's a photon-count ratio: taking one for the other is an
/// assumption. False positives: the rev 7 sheets' 1 in 10 000 points. The detection
/// roll-off from the sheets' two probabilities: the OS1 rev 6 sheet reaches 80 %
/// targets at 120 m with > 50 % and at 100 m with > 90 % detection probability, so a
/// 1/r² echo (120/100)² = 1.44 × the threshold is found 90 % of the time: pd_width =
/// 0.44 / Φ⁻¹(0.9) = 0.44 / 1.2816 = 0.34.
fn ouster_noise() -> Noise {
    Noise {
        pd_width: OUSTER_PD_WIDTH,
        ..sheet_noise(0.0142, 1.19, 1e-4)
    }
}

/// [`ouster_noise`]'s roll-off: ((120 m / 100 m)² − 1) / Φ⁻¹(0.9).
const OUSTER_PD_WIDTH: f32 = 0.34;

fn ouster_name(family: Ouster, channels: u32) -> String {
    let prefix = match family {
        Ouster::Os0 => "os0",
        Ouster::Os1 => "os1",
        Ouster::Os2 => "os2",
    };
    format!("{prefix}-{channels}")
}

pub(crate) fn ouster(
    family: Ouster,
    channels: u32,
    o: &PresetOptions,
) -> Result<Sensor, SensorError> {
    let name = ouster_name(family, channels);
    only(&name, o, &["columns"])?;
    let f = frame_rate(o, 10.0)?;
    let columns = columns(u64::from(o.columns.unwrap_or(1024)))?;
    if !o.any_mode {
        ouster_lidar_mode(&name, columns, f)?;
    }
    ouster_sensor(family, channels, columns, f)
}

/// The `lidar_mode`s of Ouster's firmware (columns × Hz): the firmware accepts no other
/// column count or rate (Ouster firmware user manual, `lidar_mode`). 4096 × 5 is left
/// out: only some OS1 hardware takes it.
pub(crate) const OUSTER_LIDAR_MODES: [(u32, u32); 5] =
    [(512, 10), (512, 20), (1024, 10), (1024, 20), (2048, 10)];

/// Refuses columns × rate that is not one of [`OUSTER_LIDAR_MODES`], naming those.
fn ouster_lidar_mode(name: &str, columns: u32, f: f32) -> Result<(), SensorError> {
    let known = OUSTER_LIDAR_MODES
        .iter()
        .any(|&(c, r)| c == columns && f == r as f32);
    if known {
        return Ok(());
    }
    let modes = OUSTER_LIDAR_MODES
        .iter()
        .map(|(c, r)| format!("{c}x{r}"))
        .collect::<Vec<_>>()
        .join(", ");
    let field = match OUSTER_LIDAR_MODES.iter().any(|&(c, _)| c == columns) {
        true => "frame_rate",
        false => "columns",
    };
    Err(SensorError::invalid(
        field,
        format!(
            "{name} has no lidar mode of {columns} columns at {f} Hz; its firmware's modes \
             (columns x Hz) are {modes}"
        ),
    ))
}

// ---------------------------------------------------------------- scanners

/// The ibeo LUX's scan frequencies (ibeo LUX datasheet: 12.5, 25 or 50 Hz).
pub(crate) const LUX_RATES: ScanRates = ScanRates {
    hz: &[12.5, 25.0, 50.0],
    source: "ibeo LUX datasheet: scan frequency 12.5, 25 or 50 Hz",
};

/// The Scala 2's (Valeo Scala gen. 2 product sheet: 25 Hz).
pub(crate) const SCALA2_RATES: ScanRates = ScanRates {
    hz: &[25.0],
    source: "Valeo Scala gen. 2 product sheet: 25 Hz",
};

/// The URG-04LX's one (URG-04LX specification: scan time 100 ms/scan).
pub(crate) const URG04LX_RATES: ScanRates = ScanRates {
    hz: &[10.0],
    source: "URG-04LX specification: scan time 100 ms/scan",
};

/// The Mid-360's point cloud frames (Livox Mid-360 User Manual v1.0, p. 20: 10 Hz).
pub(crate) const MID360_RATES: ScanRates = ScanRates {
    hz: &[10.0],
    source: "Livox Mid-360 User Manual v1.0, p. 20: a point cloud frame every 0.1 s",
};

/// Ibeo LUX 4L. Source: ibeo LUX datasheet: 4 layers, 3.2° vertical aperture (0.8° per
/// layer, so centres at ±0.4° and ±1.2°), 110° horizontal FOV from +50° to −60°, 0.25°
/// at 12.5 Hz, 905 nm, 0.3–200 m, "50 m at 10 % remission". Simplified: all four layers
/// cover the full 110° (the sheet gives 85° for four layers, 110° for two); layer 0 =
/// bottom. Timing: as if the scan mirror turned once per frame.
pub(crate) fn ibeo_lux_4l(o: &PresetOptions) -> Result<Sensor, SensorError> {
    only("ibeo-lux-4l", o, &["columns", "horizontal_resolution_deg"])?;
    let f = frame_rate(o, 12.5)?;
    scan_rate("ibeo-lux-4l", f, &LUX_RATES, o)?;
    let lasers: Vec<Laser> = (0..4u32)
        .map(|i| Laser {
            elevation_deg: -1.2 + 0.8 * f64::from(i),
            ring: i,
            ..Laser::default()
        })
        .collect();
    let p = partial_sweep(&lasers, 50.0, -60.0, 0.25, o, f)?;
    Ok(assemble(
        "ibeo-lux-4l",
        p,
        &Defaults {
            min_range: 0.3,
            max_range: 200.0,
            frame_rate: 12.5,
            wavelength_nm: 905.0,
            detection: (0.10, 50.0),
            // Layers are 0.8° tall (the sheet's vertical aperture per layer); 0.08°
            // horizontally is our estimate. The LUX reports up to three echoes per
            // layer (multi-echo, datasheet).
            beam: (
                BeamKernel::Gaussian {
                    div_h: 0.08f32.to_radians(),
                    div_v: 0.8f32.to_radians(),
                },
                DIVERGENCE_SUBRAYS,
            ),
            detector: Detector {
                return_mode: ReturnMode::All,
                max_returns: 3,
                ..Detector::default()
            },
            // The sheet's 4 cm distance resolution read as 1σ (an estimate).
            noise: sheet_noise(0.04, 0.0, 0.0),
        },
        f,
    ))
}

/// Valeo Scala gen. 2. Source: Valeo SCALA 2 product sheet: 16 layers over a 10°
/// vertical FOV (0.625° per layer, centres ±4.6875°), 133° horizontal FOV (±66.5°),
/// 0.125° typical horizontal resolution, 25 Hz, 905 nm. The sheet gives no reflectance
/// pair; 10 % at 80 m and the 200 m maximum are our estimates. Layer 0 = bottom.
pub(crate) fn scala2(o: &PresetOptions) -> Result<Sensor, SensorError> {
    only("scala-2", o, &["columns", "horizontal_resolution_deg"])?;
    let f = frame_rate(o, 25.0)?;
    scan_rate("scala-2", f, &SCALA2_RATES, o)?;
    let lasers: Vec<Laser> = (0..16u32)
        .map(|i| Laser {
            elevation_deg: -4.6875 + 0.625 * f64::from(i),
            ring: i,
            ..Laser::default()
        })
        .collect();
    let p = partial_sweep(&lasers, 66.5, -66.5, 0.125, o, f)?;
    Ok(assemble(
        "scala-2",
        p,
        &Defaults {
            min_range: 0.3,
            max_range: 200.0,
            frame_rate: 25.0,
            wavelength_nm: 905.0,
            detection: (0.10, 80.0),
            // Layers 0.625° tall (16 over 10°); 0.1° horizontally is our estimate.
            beam: (
                BeamKernel::Gaussian {
                    div_h: 0.1f32.to_radians(),
                    div_v: 0.625f32.to_radians(),
                },
                DIVERGENCE_SUBRAYS,
            ),
            detector: Detector::default(),
            // No accuracy on the sheet: 5 cm (1σ), our estimate for this class.
            noise: sheet_noise(0.05, 0.0, 0.0),
        },
        f,
    ))
}

/// A clockwise sweep from `left` to `right` (deg) whose mirror turns once per frame.
fn partial_sweep(
    lasers: &[Laser],
    left: f64,
    right: f64,
    default_res: f64,
    o: &PresetOptions,
    f: f32,
) -> Result<patterns::Pattern, SensorError> {
    let span = left - right;
    let (columns, step) = sweep_columns(o, span, default_res)?;
    domain::beams("columns", lasers.len() as u64, u64::from(columns))?;
    let period = 1.0 / f64::from(f);
    Ok(column_sweep(
        lasers,
        columns,
        |k| left - step * f64::from(k),
        |k| step * f64::from(k) / 360.0 * period,
        0.0,
    ))
}

/// Hokuyo URG-04LX. Source: URG-04LX specification and its SCIP 2.0 parameters
/// (ARES 1024, AFRT 384, AMIN 44, AMAX 725): 1024 steps per turn (0.3515625° ≈ 0.36°),
/// measured steps 44..=725 = 682 directions over ≈ 240° (paper 002 also counts 682), 100 ms per scan, counter-clockwise (azimuth increases with time), 785 nm,
/// 20–5600 mm, 4 m guaranteed on white Kent paper (taken as 90 %). A 2-D scanner: one
/// plane at elevation 0.
pub(crate) fn urg04lx(o: &PresetOptions) -> Result<Sensor, SensorError> {
    only("urg-04lx", o, &[])?;
    let f = frame_rate(o, 10.0)?;
    scan_rate("urg-04lx", f, &URG04LX_RATES, o)?;
    let step = 360.0 / 1024.0;
    let period = 1.0 / f64::from(f);
    let lasers = [Laser::default()];
    let p = column_sweep(
        &lasers,
        682,
        |k| (f64::from(44 + k) - 384.0) * step,
        |k| f64::from(k) / 1024.0 * period,
        0.0,
    );
    let mut sensor = assemble(
        "urg-04lx",
        p,
        &Defaults {
            min_range: 0.02,
            max_range: 5.6,
            frame_rate: 10.0,
            wavelength_nm: 785.0,
            detection: (0.90, 4.0),
            // Paper 002: the beam is 40 mm wide at 4 m, a cone of 5 mrad radius; its
            // mixed pixels need sub-rays (the paper uses three), here a 2 × 2 grid.
            beam: (BeamKernel::Disc { radius: 5e-3 }, 4),
            detector: Detector::default(),
            // A continuous-wave sensor: its range noise comes from the noise of the
            // phase samples (CwSettings::URG_04LX), which grows as the return weakens
            // (sheet: ±30 mm to 1 m, ±3 % beyond); no pulsed jitter on top.
            noise: sheet_noise(0.0, 0.0, 0.0),
        },
        f,
    );
    // Paper 002: two modulation frequencies, 30 samples, a radiance-dependent bias.
    sensor.cw = Some(CwSettings::URG_04LX);
    Ok(sensor)
}

/// Blickfeld Cube 1 (MEMS mirror). Source: Cube 1 datasheet: 70° × 30° FOV, scan
/// lines and horizontal resolution configurable (`lines`, `horizontal_resolution_deg`
/// or `columns`), 905 nm, up to 250 m; the 10 % reference at 75 m is approximate.
/// Defaults (ours, a typical set-up): 50 lines, 0.4°, 6 Hz. Lines run from the top
/// down and alternate direction, as the resonant mirror swings back and forth; `ring`
/// = line index.
pub(crate) fn cube1(o: &PresetOptions) -> Result<Sensor, SensorError> {
    only(
        "cube-1",
        o,
        &["columns", "horizontal_resolution_deg", "lines"],
    )?;
    let f = frame_rate(o, 6.0)?;
    let lines = domain::count(
        "lines",
        u64::from(o.lines.unwrap_or(50)),
        domain::MAX_CHANNELS,
    )?;
    let (columns, step) = sweep_columns(o, 70.0, 0.4)?;
    domain::beams("lines", u64::from(lines), u64::from(columns))?;
    let total = f64::from(lines) * f64::from(columns);
    let lasers = uniform_lasers(15.0, -15.0, lines);
    let period = 1.0 / f64::from(f);
    let mut beams = Vec::with_capacity(total as usize);
    for (j, l) in lasers.iter().enumerate() {
        for c in 0..columns {
            let k = if j % 2 == 0 { c } else { columns - 1 - c };
            let index = j as f64 * f64::from(columns) + f64::from(c);
            beams.push(super::Beam {
                azimuth: (35.0 - step * f64::from(k)).to_radians() as f32,
                elevation: l.elevation_deg.to_radians() as f32,
                time: (index / total * period) as f32,
                ring: l.ring,
                origin: glam::Vec3::ZERO,
            });
        }
    }
    let p = patterns::Pattern {
        beams,
        channels: lines,
        columns,
    };
    Ok(assemble(
        "cube-1",
        p,
        &Defaults {
            min_range: 1.5,
            max_range: 250.0,
            frame_rate: 6.0,
            wavelength_nm: 905.0,
            detection: (0.10, 75.0),
            // Paper 000 measured this sensor: a core of about 0.5° inside an
            // effective extent of about 3° — our core+halo estimate of that kernel.
            beam: (core_halo(0.5, 0.5), HALO_SUBRAYS),
            detector: Detector::default(),
            // Sheet: range precision < 2 cm (1σ).
            noise: sheet_noise(0.02, 0.0, 0.0),
        },
        f,
    ))
}

/// Livox Mid-360 (sensor::livox, Livox Mid-360 User Manual v1.0, "Specifications"
/// p. 20): 40 m at 10 % and 70 m at 80 % reflectivity, both at 100 klx — two figures
/// in sun that fix both the night threshold and the sun coupling
/// ([`livox_sun_threshold`]; 70/40 is 8^¼, the reach of a receiver whose noise is the
/// sunlit target's own shot noise, not the 8^½ of a 1/r² echo at night), blind zone
/// 0.1 m, range precision 2 cm (1σ at 10 m), false alarms < 0.01 % (at 100 klx),
/// 905 nm, 10 Hz frames, one return: the first (its points per second are quoted
/// "first return"). Beam: the 0.03° × 0.28° of Livox's Mid-40 and HAP sheets — the
/// Mid-360's gives no divergence, an estimate. Maximum range 200 m is ours (beyond
/// what the 80 % figure reaches, so the detector ends it).
pub(crate) fn livox_mid360(o: &PresetOptions) -> Result<Sensor, SensorError> {
    only("livox-mid-360", o, &[])?;
    let f = frame_rate(o, 10.0)?;
    scan_rate("livox-mid-360", f, &MID360_RATES, o)?;
    let mut s = assemble(
        "livox-mid-360",
        MID_360.pattern(f64::from(f)),
        &Defaults {
            min_range: 0.1,
            max_range: 200.0,
            frame_rate: 10.0,
            wavelength_nm: 905.0,
            detection: (0.10, 40.0),
            beam: (
                BeamKernel::Gaussian {
                    div_h: 0.03f32.to_radians(),
                    div_v: 0.28f32.to_radians(),
                },
                DIVERGENCE_SUBRAYS,
            ),
            detector: Detector {
                return_mode: ReturnMode::First,
                max_returns: 1,
                ..Detector::default()
            },
            noise: sheet_noise(0.02, 0.0, 1e-4),
        },
        f,
    );
    let (night, k) = livox_sun_threshold((0.10, 40.0), (0.80, 70.0));
    s.detection = night;
    s.detector.ambient_k = k;
    s.reflectivity = ReflectivityScale::LIVOX;
    Ok(s)
}

/// The night detection and the ambient factor k that put two sheet figures taken in
/// full sun (reflectance, range at half detection) on the model's threshold: with
/// A_b = reflectance at 100 klx, R/r² = T + k·√R at both (see [`sun_coupling`]), two
/// equations in T and k.
fn livox_sun_threshold(a: (f32, f32), b: (f32, f32)) -> (Detection, f32) {
    let level = |(r, range): (f32, f32)| r / (range * range);
    let k = (level(b) - level(a)) / (b.0.sqrt() - a.0.sqrt());
    let t = level(a) - k * a.0.sqrt();
    let night = Detection {
        reference_reflectance: a.0,
        reference_range: (a.0 / t).sqrt(),
    };
    (night, k)
}

/// Livox Mid-40-like rosette. Source: Livox Mid-40 datasheet: 38.4° circular FOV,
/// 100 000 points/s (10 000 per frame at 10 Hz), 905 nm, 90 m at 10 %, 260 m at 80 %.
/// `points` sets the points per frame. Minimum range 1 m is ours.
pub(crate) fn livox_rosette(o: &PresetOptions) -> Result<Sensor, SensorError> {
    only("livox-mid-40", o, &["points"])?;
    let f = frame_rate(o, 10.0)?;
    let points = domain::count(
        "points",
        u64::from(o.points.unwrap_or(10_000)),
        domain::MAX_BEAMS as u32,
    )?;
    Ok(assemble(
        "livox-mid-40",
        patterns::rosette(19.2, points, f64::from(f)),
        &Defaults {
            min_range: 1.0,
            max_range: 260.0,
            frame_rate: 10.0,
            wavelength_nm: 905.0,
            detection: (0.10, 90.0),
            // Mid-40 sheet: beam divergence 0.28° (vertical) × 0.03° (horizontal), read
            // as full angles at 1/e²; single return.
            beam: (
                BeamKernel::Gaussian {
                    div_h: 0.03f32.to_radians(),
                    div_v: 0.28f32.to_radians(),
                },
                DIVERGENCE_SUBRAYS,
            ),
            detector: Detector::default(),
            // Sheet: range precision 2 cm (1σ at 20 m); false alarm rate < 0.01 %.
            noise: sheet_noise(0.02, 0.0, 1e-4),
        },
        f,
    ))
}
