//! What each preset's datasheet states, with the document it comes from: the figures
//! `beamtrace sensors --detail NAME` prints beside the model's, and that the tests in
//! `reference/tests/datasheet.rs` measure from simulation (a wall moved through the
//! detection edge, noise and sub-rays on) and hold to the sheet within `tolerance`.
//!
//! Only what a sheet (or its manual) states is listed; where a preset reads a figure
//! (a range without a named target, an accuracy as 1σ), `source` says how.

use super::{BeamKernel, Sensor};

/// A figure a datasheet states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// Range (m) at which half the beams detect a Lambertian target of `reflectance`
    /// facing the sensor, at night ("> 50 % detection probability" where the sheet says).
    Range { reflectance: f32 },
    /// The same, the target lit head-on by 100 klx of sunlight.
    RangeInSun { reflectance: f32 },
    /// Range noise (m, 1σ) on a facing wall.
    RangeSigma,
    /// The nearest range reported (m).
    MinRange,
    /// Points per second of one return at the preset's default mode.
    PointsPerSecond,
    /// Points per second in the device's dual return mode, every beam meeting two
    /// surfaces.
    PointsPerSecondDual,
    /// Beam divergence (mrad): full angle at 1/e² of the power, or at half maximum
    /// (`fwhm`) where the sheet gives that.
    Divergence { vertical: bool, fwhm: bool },
    /// The 8-bit reflectivity a facing Lambertian target of `reflectance` reads (the
    /// vendor's calibrated scale), the median of the facing beams' at 10 m.
    Reflectivity { reflectance: f32 },
}

/// One figure of a sheet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SheetFigure {
    pub figure: Figure,
    /// The sheet's value, in [`Figure::unit`].
    pub value: f64,
    /// How far (relative) the simulated figure may lie from the sheet's, and why.
    pub tolerance: f64,
    /// Document and place, and how the preset reads it.
    pub source: &'static str,
}

impl Figure {
    /// What the figure is, in words.
    pub fn label(&self) -> String {
        let pct = |r: f32| (r * 100.0).round();
        match *self {
            Figure::Range { reflectance } => format!("range, {} % target, night", pct(reflectance)),
            Figure::RangeInSun { reflectance } => {
                format!("range, {} % target, 100 klx sun", pct(reflectance))
            }
            Figure::RangeSigma => "range noise (1σ)".into(),
            Figure::MinRange => "minimum range".into(),
            Figure::PointsPerSecond => "points per second (one return)".into(),
            Figure::PointsPerSecondDual => "points per second (dual return)".into(),
            Figure::Divergence { vertical, fwhm } => format!(
                "divergence, {} ({})",
                if vertical { "vertical" } else { "horizontal" },
                if fwhm { "FWHM" } else { "1/e²" }
            ),
            Figure::Reflectivity { reflectance } => {
                format!("reflectivity byte, {} % target", pct(reflectance))
            }
        }
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Figure::PointsPerSecond | Figure::PointsPerSecondDual => "/s",
            Figure::Divergence { .. } => "mrad",
            Figure::Reflectivity { .. } => "",
            _ => "m",
        }
    }

    /// What the model of `sensor` gives by its parameters, before any simulation: the
    /// range where a facing Lambertian target's peak meets the threshold (with the sun's
    /// noise T + k·√ρ lit by 100 klx; at most the maximum range), the noise's constant σ, the minimum range, beams
    /// per second, the kernel's angles, the scale's byte of the reflectance. `None` where
    /// the model has no such parameter.
    pub fn model(&self, s: &Sensor) -> Option<f64> {
        let t = f64::from(s.detection.threshold());
        let noise = &s.detector.noise;
        let within = |r: f64| r.min(f64::from(s.max_range));
        match *self {
            Figure::Range { reflectance } => Some(within((f64::from(reflectance) / t).sqrt())),
            Figure::RangeInSun { reflectance } => {
                let r = f64::from(reflectance);
                let k = f64::from(s.detector.ambient_k);
                Some(within((r / (t + k * r.sqrt())).sqrt()))
            }
            Figure::RangeSigma => (s.cw.is_none()).then_some(f64::from(noise.range_sigma_m)),
            Figure::MinRange => Some(f64::from(s.min_range)),
            Figure::PointsPerSecond => Some(s.beams.len() as f64 * f64::from(s.frame_rate)),
            Figure::PointsPerSecondDual => {
                Some(2.0 * s.beams.len() as f64 * f64::from(s.frame_rate))
            }
            Figure::Divergence { vertical, fwhm } => {
                let (h, v) = match s.kernel {
                    BeamKernel::Gaussian { div_h, div_v } => (div_h, div_v),
                    BeamKernel::CoreHalo { core_h, core_v, .. } => (core_h, core_v),
                    _ => return None,
                };
                let full = f64::from(if vertical { v } else { h }) * 1e3;
                // A Gaussian's FWHM over its full 1/e² width: √(2 ln 2)/2.
                Some(if fwhm {
                    full * (2.0 * std::f64::consts::LN_2).sqrt() / 2.0
                } else {
                    full
                })
            }
            Figure::Reflectivity { reflectance } => {
                Some(f64::from(s.reflectivity.byte(reflectance)))
            }
        }
    }
}

const fn fig(figure: Figure, value: f64, tolerance: f64, source: &'static str) -> SheetFigure {
    SheetFigure {
        figure,
        value,
        tolerance,
        source,
    }
}

const fn range(reflectance: f32) -> Figure {
    Figure::Range { reflectance }
}

const fn sun(reflectance: f32) -> Figure {
    Figure::RangeInSun { reflectance }
}

/// Velodyne's divergence, VLS-128 manual table F-1, read as 1/e² full angles and used
/// for all its presets.
const VELODYNE_DIVERGENCE: [SheetFigure; 2] = [
    fig(
        Figure::Divergence { vertical: false, fwhm: false },
        3.0,
        0.01,
        "VLS-128 user manual, table F-1: 3.0 mrad horizontal (read as 1/e² full angle; used for every Velodyne)",
    ),
    fig(
        Figure::Divergence { vertical: true, fwhm: false },
        1.5,
        0.01,
        "VLS-128 user manual, table F-1: 1.5 mrad vertical",
    ),
];

/// A range figure's tolerance: the beams' power off the facing cone and the roll-off's
/// sampling move the half-detection point by a few per cent.
const RANGE_TOL: f64 = 0.05;
/// A noise figure's tolerance: σ measured from 2 000 returns is within 5 % (3σ of its
/// sampling error); the rest is the wall's slant across the facing beams' sub-rays.
const SIGMA_TOL: f64 = 0.15;
/// Sheets round their points per second ("~300 000").
const PPS_TOL: f64 = 0.05;

/// The reflectivity bytes of a dark (10 %) and a white (90 %) Lambertian target on a
/// scale whose white diffuse target reads `white`, as the vendor's manual states the
/// scale (`source`), each held to one byte: the byte's rounding and the facing beams'
/// slant of up to 2°.
const fn reflectivity(white: f64, source: &'static str) -> [SheetFigure; 2] {
    [
        reflectivity_at(white, 0.1, source),
        reflectivity_at(white, 0.9, source),
    ]
}

const fn reflectivity_at(white: f64, reflectance: f32, source: &'static str) -> SheetFigure {
    // The nearest byte (white · reflectance is positive).
    let byte = (white * reflectance as f64 + 0.5) as u32 as f64;
    fig(
        Figure::Reflectivity { reflectance },
        byte,
        1.0 / byte,
        source,
    )
}

const VELODYNE_REFLECTIVITY: [SheetFigure; 2] = reflectivity(
    100.0,
    "VLP-16 and VLP-32C user manuals, \"Calibrated Reflectivity\": diffuse reflectors 0–100 for 0–100 %, \
     retroreflectors 101–255",
);
const VLS128_REFLECTIVITY: [SheetFigure; 2] = reflectivity(
    110.0,
    "VLS-128 user manual §6.1, \"Calibrated Reflectivity\": diffuse 0–100 % as 0–110, \
     retroreflectors 111–255",
);
const HESAI_REFLECTIVITY: [SheetFigure; 2] = reflectivity(
    100.0,
    "PandarXT user manual §3.1.2 \"Body\": reflectivity in per cent, 0–255 (linear \
     mapping, the default)",
);
const OUSTER_REFLECTIVITY: [SheetFigure; 2] = reflectivity(
    100.0,
    "Ouster firmware user manual, \"Calibrated Reflectivity\": Lambertian targets 0–100, \
     retroreflectors 101–255",
);
const LIVOX_REFLECTIVITY: [SheetFigure; 2] = reflectivity(
    150.0,
    "Livox Mid-360 User Manual v1.0, point cloud data: reflectivity 0–150 for diffuse \
     0–100 %, 151–255 retroreflectors",
);

const VLP16: &[SheetFigure] = &[
    fig(
        range(0.8),
        100.0,
        RANGE_TOL,
        "VLP-16 datasheet: \"up to 100 m\", no target named (read as 80 %)",
    ),
    fig(
        Figure::RangeSigma,
        0.03,
        SIGMA_TOL,
        "VLP-16 datasheet: range accuracy \"up to ±3 cm (typical)\" (read as 1σ)",
    ),
    fig(
        Figure::PointsPerSecond,
        300_000.0,
        PPS_TOL,
        "VLP-16 datasheet: \"~300,000 points/second\" (single return)",
    ),
    VELODYNE_DIVERGENCE[0],
    VELODYNE_DIVERGENCE[1],
    VELODYNE_REFLECTIVITY[0],
    VELODYNE_REFLECTIVITY[1],
    fig(
        Figure::PointsPerSecondDual,
        600_000.0,
        PPS_TOL,
        "VLP-16 datasheet: \"~600,000 points/second\" (dual return)",
    ),
];

const HDL32E: &[SheetFigure] = &[
    fig(
        range(0.8),
        100.0,
        RANGE_TOL,
        "HDL-32E datasheet: \"80 m–100 m range\" (the far end read as 80 %)",
    ),
    fig(
        Figure::RangeSigma,
        0.02,
        SIGMA_TOL,
        "HDL-32E datasheet: typical accuracy ±2 cm (read as 1σ)",
    ),
    fig(
        Figure::PointsPerSecond,
        700_000.0,
        PPS_TOL,
        "HDL-32E datasheet: \"~700,000 points per second\"",
    ),
    VELODYNE_DIVERGENCE[0],
    VELODYNE_DIVERGENCE[1],
    fig(
        Figure::PointsPerSecondDual,
        1_390_000.0,
        PPS_TOL,
        "HDL-32E datasheet: \"~1,390,000 points per second\" (dual return)",
    ),
];

const HDL64E: &[SheetFigure] = &[
    fig(
        range(0.1),
        50.0,
        RANGE_TOL,
        "HDL-64E S3 datasheet: \"50 m for pavement (~0.10 reflectivity)\"",
    ),
    fig(
        range(0.8),
        120.0,
        RANGE_TOL,
        "HDL-64E S3 datasheet: \"120 m for cars and foliage (~0.80)\"",
    ),
    fig(
        Figure::RangeSigma,
        0.02,
        SIGMA_TOL,
        "HDL-64E S3 datasheet: accuracy < 2 cm (read as 1σ)",
    ),
    fig(
        Figure::PointsPerSecond,
        1_300_000.0,
        0.16,
        "HDL-64E S3 datasheet: ~1.3 million points per second; the S3 manual's firing time \
         table (57.6 µs a pair, as velodyne_decoder's S3 timing) gives 1.11 M, which the preset \
         follows (the sheet's figure is the S2's 48 µs cycle): held within 16 %",
    ),
    VELODYNE_DIVERGENCE[0],
    VELODYNE_DIVERGENCE[1],
];

const VLP32C: &[SheetFigure] = &[
    fig(
        range(0.8),
        200.0,
        RANGE_TOL,
        "VLP-32C datasheet: \"up to 200 m\" (read as 80 %)",
    ),
    fig(
        Figure::RangeSigma,
        0.03,
        SIGMA_TOL,
        "VLP-32C datasheet: range accuracy \"up to ±3 cm\" (read as 1σ)",
    ),
    fig(
        Figure::PointsPerSecond,
        600_000.0,
        PPS_TOL,
        "VLP-32C datasheet: \"~600,000 points per second\" (single return)",
    ),
    VELODYNE_DIVERGENCE[0],
    VELODYNE_DIVERGENCE[1],
    VELODYNE_REFLECTIVITY[0],
    VELODYNE_REFLECTIVITY[1],
    fig(
        Figure::PointsPerSecondDual,
        1_200_000.0,
        PPS_TOL,
        "VLP-32C datasheet: \"~1,200,000 points per second\" (dual return)",
    ),
];

const VLS128: &[SheetFigure] = &[
    fig(
        range(0.8),
        245.0,
        RANGE_TOL,
        "Alpha Prime datasheet: \"up to 245 m\" (read as 80 %)",
    ),
    fig(
        Figure::RangeSigma,
        0.03,
        SIGMA_TOL,
        "Alpha Prime datasheet: range accuracy ±3 cm (read as 1σ)",
    ),
    fig(
        Figure::PointsPerSecond,
        2_400_000.0,
        PPS_TOL,
        "Alpha Prime datasheet: \"~2,400,000 points per second\" (single return)",
    ),
    VELODYNE_DIVERGENCE[0],
    VELODYNE_DIVERGENCE[1],
    VLS128_REFLECTIVITY[0],
    VLS128_REFLECTIVITY[1],
    fig(
        Figure::PointsPerSecondDual,
        4_800_000.0,
        PPS_TOL,
        "Alpha Prime datasheet: \"~4,800,000 points per second\" (dual return)",
    ),
];

const PANDAR_XT32: &[SheetFigure] = &[
    fig(
        range(0.1),
        80.0,
        RANGE_TOL,
        "PandarXT32 datasheet: \"80 m @ 10 % reflectivity\"",
    ),
    fig(
        Figure::RangeSigma,
        0.005,
        SIGMA_TOL,
        "PandarXT32 datasheet: range precision 0.5 cm (1σ)",
    ),
    fig(
        Figure::MinRange,
        0.05,
        0.05,
        "PandarXT32 datasheet: range 0.05 m to 120 m",
    ),
    fig(
        Figure::PointsPerSecond,
        640_000.0,
        PPS_TOL,
        "PandarXT32 datasheet: 640,000 points/s (single return)",
    ),
    HESAI_REFLECTIVITY[0],
    HESAI_REFLECTIVITY[1],
    fig(
        Figure::PointsPerSecondDual,
        1_280_000.0,
        PPS_TOL,
        "PandarXT32 datasheet: 1,280,000 points/s (dual return)",
    ),
];

/// The Ouster figures every family shares.
const OUSTER_MIN_RANGE: SheetFigure = fig(
    Figure::MinRange,
    0.5,
    0.05,
    "Ouster firmware user manual, configuration parameters: `min_range_threshold_cm` 50 by default",
);
const OUSTER_SIGMA: SheetFigure = fig(
    Figure::RangeSigma,
    0.015,
    SIGMA_TOL,
    "Ouster OS1 datasheet (gen. 1): range repeatability ±1.5 cm at SNR > 250 (1σ)",
);

const OS0: &[SheetFigure] = &[
    fig(range(0.1), 50.0, RANGE_TOL, "Ouster OS0 rev 7 datasheet: 10 % target, > 50 % detection probability, no sunlight (1024 @ 10 Hz)"),
    fig(sun(0.1), 20.0, 0.03, "Ouster datasheet-rev06-v2p4-os0, optical performance: 10 % at 20 m in 100 klx sunlight"),
    fig(
        sun(0.8),
        50.0,
        0.35,
        "Ouster datasheet-rev06-v2p4-os0: 80 % at 50 m in 100 klx sunlight; the model's √A_b sun noise reaches 35 m (benches/RESULTS.md): held within 35 %",
    ),
    OUSTER_SIGMA,
    OUSTER_MIN_RANGE,
    OUSTER_REFLECTIVITY[0],
    OUSTER_REFLECTIVITY[1],
];

/// The OS1 figures of every channel count.
const OS1_COMMON: [SheetFigure; 5] = [
    fig(range(0.1), 120.0, RANGE_TOL, "Ouster OS1 rev 7 datasheet: 10 % target, > 50 % detection probability, no sunlight (1024 @ 10 Hz)"),
    fig(sun(0.1), 55.0, 0.03, "Ouster datasheet-rev06-v2p4-os1, optical performance: 10 % at 55 m in 100 klx sunlight"),
    fig(
        sun(0.8),
        120.0,
        0.25,
        "Ouster datasheet-rev06-v2p4-os1: 80 % at 120 m in 100 klx sunlight; the model's √A_b sun noise reaches 98 m (benches/RESULTS.md): held within 25 %",
    ),
    OUSTER_SIGMA,
    OUSTER_MIN_RANGE,
];

/// The OS1 gen. 1 sheet's divergence (FWHM): 0.13° for 16–64 channels, 0.18° for 128.
const fn ouster_divergence(fwhm_deg: f64, source: &'static str) -> [SheetFigure; 2] {
    let mrad = fwhm_deg * std::f64::consts::PI / 180.0 * 1e3;
    [
        fig(
            Figure::Divergence {
                vertical: false,
                fwhm: true,
            },
            mrad,
            0.01,
            source,
        ),
        fig(
            Figure::Divergence {
                vertical: true,
                fwhm: true,
            },
            mrad,
            0.01,
            source,
        ),
    ]
}

const OS1_DIVERGENCE: [SheetFigure; 2] = ouster_divergence(
    0.13,
    "Ouster OS1 datasheet (gen. 1): beam divergence 0.13° FWHM (16–64 channels)",
);
const OS1_128_DIVERGENCE: [SheetFigure; 2] = ouster_divergence(
    0.18,
    "Ouster OS1 datasheet (gen. 1): beam divergence 0.18° FWHM (128 channels)",
);

const OS1: &[SheetFigure] = &[
    OS1_COMMON[0],
    OS1_COMMON[1],
    OS1_COMMON[2],
    OS1_COMMON[3],
    OS1_COMMON[4],
    OS1_DIVERGENCE[0],
    OS1_DIVERGENCE[1],
    OUSTER_REFLECTIVITY[0],
    OUSTER_REFLECTIVITY[1],
];

const OS1_128: &[SheetFigure] = &[
    OS1_COMMON[0],
    OS1_COMMON[1],
    OS1_COMMON[2],
    OS1_COMMON[3],
    OS1_COMMON[4],
    OS1_128_DIVERGENCE[0],
    OS1_128_DIVERGENCE[1],
    OUSTER_REFLECTIVITY[0],
    OUSTER_REFLECTIVITY[1],
];

const OS2: &[SheetFigure] = &[
    fig(
        range(0.1),
        240.0 * 1.19,
        RANGE_TOL,
        "Ouster OS2 rev 7 datasheet: 10 % target at 240 m, > 50 % detection probability, no sunlight, at 2048 @ 10 Hz; × 1.19 for the preset's 1024 @ 10 Hz (firmware user manual, \"Estimated Range Multiplier\")",
    ),
    OUSTER_SIGMA,
    OUSTER_MIN_RANGE,
    OUSTER_REFLECTIVITY[0],
    OUSTER_REFLECTIVITY[1],
];

const IBEO_LUX: &[SheetFigure] = &[
    fig(
        range(0.1),
        50.0,
        RANGE_TOL,
        "ibeo LUX datasheet: \"50 m at 10 % remission\"",
    ),
    fig(
        Figure::MinRange,
        0.3,
        0.05,
        "ibeo LUX datasheet: range 0.3 m to 200 m",
    ),
    fig(
        Figure::RangeSigma,
        0.04,
        SIGMA_TOL,
        "ibeo LUX datasheet: distance resolution 4 cm (read as 1σ, an estimate)",
    ),
    fig(
        Figure::Divergence {
            vertical: true,
            fwhm: false,
        },
        13.96,
        0.01,
        "ibeo LUX datasheet: vertical aperture 0.8° per layer (13.96 mrad)",
    ),
];

const URG04LX: &[SheetFigure] = &[
    fig(
        range(0.9),
        4.0,
        RANGE_TOL,
        "Hokuyo URG-04LX specification: 4 m guaranteed on white Kent paper (read as 90 %)",
    ),
    fig(
        Figure::MinRange,
        0.02,
        0.05,
        "Hokuyo URG-04LX specification: measuring range 20 mm to 5600 mm",
    ),
];

const CUBE1: &[SheetFigure] = &[
    fig(
        range(0.1),
        75.0,
        RANGE_TOL,
        "Blickfeld Cube 1 datasheet: up to 250 m; 10 % at about 75 m (approximate, our reading)",
    ),
    fig(
        Figure::RangeSigma,
        0.02,
        SIGMA_TOL,
        "Blickfeld Cube 1 datasheet: range precision < 2 cm (1σ)",
    ),
];

const LIVOX_MID40: &[SheetFigure] = &[
    fig(
        range(0.1),
        90.0,
        RANGE_TOL,
        "Livox Mid-40 datasheet: 90 m at 10 % reflectivity",
    ),
    fig(
        range(0.8),
        260.0,
        RANGE_TOL,
        "Livox Mid-40 datasheet: 260 m at 80 % reflectivity",
    ),
    fig(
        Figure::RangeSigma,
        0.02,
        SIGMA_TOL,
        "Livox Mid-40 datasheet: range precision 2 cm (1σ at 20 m)",
    ),
    fig(
        Figure::PointsPerSecond,
        100_000.0,
        PPS_TOL,
        "Livox Mid-40 datasheet: 100,000 points/s",
    ),
    fig(
        Figure::Divergence {
            vertical: false,
            fwhm: false,
        },
        0.524,
        0.01,
        "Livox Mid-40 datasheet: divergence 0.03° horizontal (read as 1/e² full angle)",
    ),
    fig(
        Figure::Divergence {
            vertical: true,
            fwhm: false,
        },
        4.887,
        0.01,
        "Livox Mid-40 datasheet: divergence 0.28° vertical",
    ),
];

const LIVOX_MID360: &[SheetFigure] = &[
    fig(
        sun(0.1),
        40.0,
        RANGE_TOL,
        "Livox Mid-360 User Manual v1.0, Specifications p. 20: detection range \
         (@ 100 klx) 40 m @ 10 % reflectivity",
    ),
    fig(
        sun(0.8),
        70.0,
        RANGE_TOL,
        "Livox Mid-360 User Manual v1.0, Specifications p. 20: detection range \
         (@ 100 klx) 70 m @ 80 % reflectivity",
    ),
    fig(
        Figure::RangeSigma,
        0.02,
        SIGMA_TOL,
        "Livox Mid-360 User Manual v1.0, Specifications p. 20: range precision ≤ 2 cm \
         (1σ @ 10 m)",
    ),
    fig(
        Figure::MinRange,
        0.1,
        0.05,
        "Livox Mid-360 User Manual v1.0, Specifications p. 20: close proximity blind \
         zone 0.1 m",
    ),
    fig(
        Figure::PointsPerSecond,
        200_000.0,
        PPS_TOL,
        "Livox Mid-360 User Manual v1.0, Specifications p. 20: 200,000 points/s \
         (first return)",
    ),
    LIVOX_REFLECTIVITY[0],
    LIVOX_REFLECTIVITY[1],
];

/// The sheet figures of preset `name` (its canonical name); empty where the sheet
/// states none the model has (the Valeo Scala 2's product sheet gives no range pair).
pub fn datasheet(name: &str) -> &'static [SheetFigure] {
    match name {
        "vlp-16" => VLP16,
        "hdl-32e" => HDL32E,
        "hdl-64e" => HDL64E,
        "vlp-32c" => VLP32C,
        "vls-128" => VLS128,
        "pandar-xt32" => PANDAR_XT32,
        "os0-32" | "os0-64" | "os0-128" => OS0,
        "os1-16" | "os1-32" | "os1-64" => OS1,
        "os1-128" => OS1_128,
        "os2-32" | "os2-64" | "os2-128" => OS2,
        "ibeo-lux-4l" => IBEO_LUX,
        "urg-04lx" => URG04LX,
        "cube-1" => CUBE1,
        "livox-mid-40" => LIVOX_MID40,
        "livox-mid-360" => LIVOX_MID360,
        _ => &[],
    }
}
