//! The preset registry: names, aliases and the summary shown by `presets()`.

use super::preset_builders::{self as b, Ouster, ScanRates, OUSTER_LIDAR_MODES};
use super::spinning::MotorSpeeds;
use super::{hesai, velodyne, Sensor, SensorError};

/// What a preset is, for listings and help texts. Angles are the extents of the beam
/// centres (deg) at the default settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PresetInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub channels: u32,
    pub default_columns: u32,
    /// Azimuth extent (min, max) of the beam centres (deg).
    pub h_fov_deg: (f32, f32),
    /// Elevation extent (min, max) of the beam centres (deg).
    pub v_fov_deg: (f32, f32),
}

/// Settings a preset may take; a preset rejects the ones it has no use for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PresetOptions {
    /// Azimuth steps per frame (rotating sensors, scanners' points per line).
    pub columns: Option<u32>,
    /// Azimuth step (deg), instead of `columns`.
    pub horizontal_resolution_deg: Option<f32>,
    /// Scan lines per frame (Blickfeld Cube 1).
    pub lines: Option<u32>,
    /// Points per frame (rosette).
    pub points: Option<u32>,
    /// Frame rate (Hz); a Velodyne's columns follow from it.
    pub frame_rate: Option<f32>,
    /// Columns and rates outside the modes the device has, for benchmarks that scale a
    /// preset's pattern. No sensor file or command line sets it: a preset refuses modes
    /// its device does not have.
    pub any_mode: bool,
}

type Builder = fn(&PresetOptions) -> Result<Sensor, SensorError>;

struct Entry {
    info: PresetInfo,
    aliases: &'static [&'static str],
    build: Builder,
    /// The return modes the device has (`Sensor::with_return_mode`'s names).
    return_modes: &'static [&'static str],
    /// How the vendor numbers rings and returns, and what our fields mean for this
    /// preset where that differs from the vendor's driver (`beamtrace sensors --detail`).
    conventions: &'static str,
    /// The frame rates the device has: the ones its builder accepts.
    modes: Modes,
}

/// The frame rates (with Ouster, the column counts) a device has, as its builder checks
/// them.
#[derive(Debug, Clone, Copy)]
enum Modes {
    /// A spinning sensor's motor speeds (its laser table's).
    Motor(MotorSpeeds),
    /// Ouster's `lidar_mode`s.
    Ouster,
    /// A scanner's frame rates from its sheet.
    Scan(&'static ScanRates),
    /// Any rate: the device streams points and a frame is what a tool gathers of them.
    Any,
}

impl Modes {
    fn describe(self) -> String {
        match self {
            Modes::Motor(speeds) => format!("spins at {}", speeds.describe()),
            Modes::Ouster => {
                let modes: Vec<String> = OUSTER_LIDAR_MODES
                    .iter()
                    .map(|(c, r)| format!("{c}x{r}"))
                    .collect();
                format!(
                    "lidar modes (columns x Hz) {} (Ouster firmware user manual, `lidar_mode`)",
                    modes.join(", ")
                )
            }
            Modes::Scan(rates) => {
                let hz: Vec<String> = rates.hz.iter().map(|r| r.to_string()).collect();
                format!("{} Hz ({})", hz.join(", "), rates.source)
            }
            Modes::Any => "any frame rate (the device streams points; a frame is what a \
                 tool gathers of them)"
                .into(),
        }
    }
}

/// A preset as `beamtrace sensors --detail` shows it: the listing, the vendor's
/// conventions, and the sensor with its default settings (kernel, detector, noise).
#[derive(Debug, Clone)]
pub struct PresetDetail {
    pub info: PresetInfo,
    pub aliases: &'static [&'static str],
    pub conventions: &'static str,
    /// The return modes the device has.
    pub return_modes: &'static [&'static str],
    /// The frame rates (and lidar modes) it has, in words.
    pub modes: String,
    pub sensor: Sensor,
}

const VELODYNE: &str = "ring = the laser id of the vendor's firing order; the lasers of a \
column fire together at its azimuth (decoders turn each by its firing delay, up to 0.13° \
at 10 Hz); azimuth counter-clockwise from x (the vendor's packets count clockwise from \
y, in hundredths of a degree); `intensity` is the apparent reflectance, `reflectivity` \
the vendor's 8-bit calibrated scale (0–100 diffuse %, 101–255 retroreflectors).";

const VELODYNE_TIMED: &str = "ring = the laser id of the vendor's data packets (the \
HDL-64E S3: upper block 0–31, lower 32–63, each top to bottom in its nominal \
calibration); each laser fires at its own time in the sequence, as the manual's timing \
table gives it, and points its azimuth offset away from the column (VLP-32C, VLS-128), \
where decoders place it from the packets' block azimuth; azimuth counter-clockwise from \
x (the vendor's packets count clockwise from y, in hundredths of a degree); \
`intensity` is the apparent reflectance, `reflectivity` the vendor's 8-bit calibrated \
scale (0–100 diffuse %, 101–255 retroreflectors).";

/// Velodyne's return mode settings (VLP-16, HDL-32E, HDL-64E S3, VLP-32C and VLS-128
/// manuals: strongest, last, dual).
const VELODYNE_MODES: &[&str] = &["strongest", "last", "dual"];

/// Ouster's lidar profiles: single return (the strongest) and dual.
const OUSTER_MODES: &[&str] = &["strongest", "dual"];

const OUSTER: &str = "ring 0 = the top beam, as in Ouster's data; azimuth counter-clockwise \
from x; `intensity` is the \
apparent reflectance, `reflectivity` Ouster's 8-bit calibrated scale; range in m \
(Ouster packets: mm).";

/// Hesai's return modes: single (last, strongest, first) and dual (last and strongest).
const HESAI_MODES: &[&str] = &["last", "strongest", "first", "dual"];

const HESAI: &str = "ring = the channel of the vendor's data blocks less one (channel 1, \
ring 0, is the top laser); each channel fires at its own time in the block, as the \
manual's firing time table gives it, and points where the rotor has turned by then \
(decoders that apply the firing times place it there; those that do not, up to 0.17° \
behind at 10 Hz); azimuth counter-clockwise from x (Hesai's packets count clockwise \
from y, in hundredths of a degree); `intensity` is the apparent reflectance, \
`reflectivity` Hesai's linear 0–255 % byte.";

const SCANNER: &str = "ring = layer, 0 = the bottom layer; azimuth counter-clockwise from \
x, the sweep runs clockwise from left to right; multi-echo as the sheet gives it.";

const fn info(
    name: &'static str,
    description: &'static str,
    channels: u32,
    default_columns: u32,
    h_fov_deg: (f32, f32),
    v_fov_deg: (f32, f32),
) -> PresetInfo {
    PresetInfo {
        name,
        description,
        channels,
        default_columns,
        h_fov_deg,
        v_fov_deg,
    }
}

macro_rules! ouster_entry {
    ($name:literal, $desc:literal, $fam:expr, $ch:literal, $half:literal, $aliases:expr) => {
        Entry {
            info: info($name, $desc, $ch, 1024, (-180.0, 180.0), (-$half, $half)),
            aliases: $aliases,
            build: |o| b::ouster($fam, $ch, o),
            return_modes: OUSTER_MODES,
            conventions: OUSTER,
            modes: Modes::Ouster,
        }
    };
}

const FULL: (f32, f32) = (-180.0, 180.0);

/// Every preset, in the order of listings.
const REGISTRY: &[Entry] = &[
    Entry {
        info: info(
            "vlp-16",
            "Velodyne VLP-16 (Puck): 16 lasers, ±15°, 360°",
            16,
            1808,
            FULL,
            (-15.0, 15.0),
        ),
        aliases: &["velodyne-vlp-16", "puck"],
        build: b::vlp16,
        return_modes: VELODYNE_MODES,
        conventions: VELODYNE,
        modes: Modes::Motor(velodyne::VLP16.speeds),
    },
    Entry {
        info: info(
            "hdl-32e",
            "Velodyne HDL-32E: 32 lasers, +10.67°..−30.67°, 360°",
            32,
            2170,
            FULL,
            (-30.667, 10.667),
        ),
        aliases: &["velodyne-hdl-32e", "hdl-32"],
        build: b::hdl32e,
        return_modes: VELODYNE_MODES,
        conventions: VELODYNE,
        modes: Modes::Motor(velodyne::HDL32E.speeds),
    },
    Entry {
        info: info(
            "hdl-64e",
            "Velodyne HDL-64E S3: 64 lasers, +2°..−24.33° (nominal), 360°",
            64,
            1736,
            FULL,
            (-24.333, 2.0),
        ),
        aliases: &["velodyne-hdl-64e", "hdl-64", "hdl-64e-s2", "hdl-64e-s3"],
        build: b::hdl64e,
        return_modes: VELODYNE_MODES,
        conventions: VELODYNE_TIMED,
        modes: Modes::Motor(velodyne::HDL64E_S3.speeds),
    },
    Entry {
        info: info(
            "vlp-32c",
            "Velodyne VLP-32C (Ultra Puck): 32 lasers, +15°..−25°, 360°",
            32,
            1808,
            FULL,
            (-25.0, 15.0),
        ),
        aliases: &["velodyne-vlp-32c", "ultra-puck", "vlp-32"],
        build: b::vlp32c,
        return_modes: VELODYNE_MODES,
        conventions: VELODYNE_TIMED,
        modes: Modes::Motor(velodyne::VLP32C.speeds),
    },
    Entry {
        info: info(
            "vls-128",
            "Velodyne VLS-128 (Alpha Prime): 128 lasers, +15°..−25°, 360°",
            128,
            1876,
            FULL,
            (-25.0, 15.0),
        ),
        aliases: &["velodyne-vls-128", "alpha-prime", "vls128"],
        build: b::vls128,
        return_modes: VELODYNE_MODES,
        conventions: VELODYNE_TIMED,
        modes: Modes::Motor(velodyne::VLS128.speeds),
    },
    Entry {
        info: info(
            "pandar-xt32",
            "Hesai PandarXT32: 32 lasers, +15°..−16°, 360°",
            32,
            2000,
            FULL,
            (-16.0, 15.0),
        ),
        aliases: &["hesai-xt32", "xt32", "pandarxt-32", "pandar-xt-32"],
        build: b::pandar_xt32,
        return_modes: HESAI_MODES,
        conventions: HESAI,
        modes: Modes::Motor(hesai::PANDAR_XT32.speeds),
    },
    ouster_entry!(
        "os0-32",
        "Ouster OS0-32 (rev 7): 32 beams uniform over 90°, 360°",
        Ouster::Os0,
        32,
        45.0,
        &[]
    ),
    ouster_entry!(
        "os0-64",
        "Ouster OS0-64 (rev 7): 64 beams uniform over 90°, 360°",
        Ouster::Os0,
        64,
        45.0,
        &[]
    ),
    ouster_entry!(
        "os0-128",
        "Ouster OS0-128 (rev 7): 128 beams uniform over 90°, 360°",
        Ouster::Os0,
        128,
        45.0,
        &["ouster-os0-128"]
    ),
    ouster_entry!(
        "os1-16",
        "Ouster OS1-16: 16 beams uniform over 45°, 360°",
        Ouster::Os1,
        16,
        22.5,
        &["ouster-os1-16"]
    ),
    ouster_entry!(
        "os1-32",
        "Ouster OS1-32 (rev 7): 32 beams uniform over 45°, 360°",
        Ouster::Os1,
        32,
        22.5,
        &[]
    ),
    ouster_entry!(
        "os1-64",
        "Ouster OS1-64 (rev 7): 64 beams uniform over 45°, 360°",
        Ouster::Os1,
        64,
        22.5,
        &["ouster-os1-64"]
    ),
    ouster_entry!(
        "os1-128",
        "Ouster OS1-128 (rev 7): 128 beams uniform over 45°, 360°",
        Ouster::Os1,
        128,
        22.5,
        &["ouster-os1-128", "ouster"]
    ),
    ouster_entry!(
        "os2-32",
        "Ouster OS2-32 (rev 7): 32 beams uniform over 22.5°, 360°",
        Ouster::Os2,
        32,
        11.25,
        &[]
    ),
    ouster_entry!(
        "os2-64",
        "Ouster OS2-64 (rev 7): 64 beams uniform over 22.5°, 360°",
        Ouster::Os2,
        64,
        11.25,
        &[]
    ),
    ouster_entry!(
        "os2-128",
        "Ouster OS2-128 (rev 7): 128 beams uniform over 22.5°, 360°",
        Ouster::Os2,
        128,
        11.25,
        &["ouster-os2-128"]
    ),
    Entry {
        info: info(
            "ibeo-lux-4l",
            "Ibeo LUX 4L: 4 layers 0.8° apart, +50°..−60° at 0.25°, 12.5 Hz",
            4,
            441,
            (-60.0, 50.0),
            (-1.2, 1.2),
        ),
        aliases: &["lux-4l", "ibeo-4l", "ibeo-lux"],
        build: b::ibeo_lux_4l,
        return_modes: &["strongest", "first", "last", "all"],
        conventions: SCANNER,
        modes: Modes::Scan(&b::LUX_RATES),
    },
    Entry {
        info: info(
            "urg-04lx",
            "Hokuyo URG-04LX: single plane, 240° in 682 steps of 0.352°, 10 Hz",
            1,
            682,
            (-119.531_25, 119.882_81),
            (0.0, 0.0),
        ),
        aliases: &["hokuyo-urg-04lx", "hokuyo"],
        build: b::urg04lx,
        return_modes: &["strongest"],
        conventions: "one plane at elevation 0, ring 0; azimuth counter-clockwise from x, \
            swept counter-clockwise as the URG's steps 44..=725 (step 384 = straight \
            ahead); single return; range in m (SCIP: mm).",
        modes: Modes::Scan(&b::URG04LX_RATES),
    },
    Entry {
        info: info(
            "cube-1",
            "Blickfeld Cube 1 (MEMS): 70° × 30°, lines and resolution configurable",
            50,
            176,
            (-35.0, 35.0),
            (-15.0, 15.0),
        ),
        aliases: &["blickfeld-cube-1", "cube1", "blickfeld"],
        build: b::cube1,
        return_modes: &["strongest"],
        conventions: "ring = scan line, 0 = the top line; lines alternate direction as \
            the resonant mirror swings; azimuth counter-clockwise from x; single return.",
        modes: Modes::Any,
    },
    Entry {
        info: info(
            "scala-2",
            "Valeo Scala gen. 2: 16 layers over 10°, 133° at 0.125°, 25 Hz",
            16,
            1065,
            (-66.5, 66.5),
            (-4.6875, 4.6875),
        ),
        aliases: &["valeo-scala-2", "scala-gen2", "scala2"],
        build: b::scala2,
        return_modes: &["strongest"],
        conventions: SCANNER,
        modes: Modes::Scan(&b::SCALA2_RATES),
    },
    Entry {
        info: info(
            "livox-mid-360",
            "Livox Mid-360: 4 lines, non-repetitive, 360° × −7°..52°, 200 000 points/s",
            4,
            1,
            FULL,
            (-7.0, 52.0),
        ),
        aliases: &["mid-360", "mid360", "livox-mid360"],
        build: b::livox_mid360,
        return_modes: &["first"],
        conventions: "ring = the SDK's line (0–3), the four lasers, fired in turn every 5 µs; \
            points in firing order, one return (the first); x forward, z up as Livox's \
            own frame; `reflectivity` Livox's byte (0–150 diffuse, 151–255 \
            retroreflectors); each frame repeats the pattern (the real head runs on \
            across frames).",
        modes: Modes::Scan(&b::MID360_RATES),
    },
    Entry {
        info: info(
            "livox-mid-40",
            "Livox Mid-40-style non-repetitive rosette, 38.4° circular FOV",
            1,
            1,
            (-19.2, 19.2),
            (-19.2, 19.2),
        ),
        aliases: &["mid-40", "livox", "rosette"],
        build: b::livox_rosette,
        return_modes: &["strongest"],
        conventions: "one ring (0): a non-repetitive rosette, points in firing order; \
            x forward as Livox's own frame; single return.",
        modes: Modes::Any,
    },
];

/// Case-, dash- and underscore-insensitive key: "OS1_128" = "os1-128" = "os1128".
fn key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Every preset, in a stable order.
pub fn presets() -> Vec<PresetInfo> {
    REGISTRY.iter().map(|e| e.info).collect()
}

pub(crate) fn known_names() -> String {
    presets()
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A preset with its default settings except `columns`.
pub fn preset(name: &str, columns: Option<u32>) -> Result<Sensor, SensorError> {
    preset_with(
        name,
        &PresetOptions {
            columns,
            ..PresetOptions::default()
        },
    )
}

/// A preset with the given settings; settings the preset has no use for are errors.
pub fn preset_with(name: &str, options: &PresetOptions) -> Result<Sensor, SensorError> {
    let sensor = (entry(name)?.build)(options)?;
    sensor.validate()?;
    Ok(sensor)
}

/// The return modes of the device preset `name` is, `None` when no preset has that
/// name (a sensor of the user's own, which takes every mode).
pub fn preset_return_modes(name: &str) -> Option<&'static [&'static str]> {
    entry(name).ok().map(|e| e.return_modes)
}

/// A preset's listing, conventions and default sensor, by name or alias.
pub fn preset_detail(name: &str) -> Result<PresetDetail, SensorError> {
    let e = entry(name)?;
    Ok(PresetDetail {
        info: e.info,
        aliases: e.aliases,
        conventions: e.conventions,
        return_modes: e.return_modes,
        modes: e.modes.describe(),
        sensor: preset_with(e.info.name, &PresetOptions::default())?,
    })
}

fn entry(name: &str) -> Result<&'static Entry, SensorError> {
    let k = key(name);
    REGISTRY
        .iter()
        .find(|e| key(e.info.name) == k || e.aliases.iter().any(|a| key(a) == k))
        .ok_or_else(|| SensorError::UnknownPreset {
            // The name may come from a file: quoted, never echoed at length.
            name: crate::config::shorten(name),
            known: known_names(),
        })
}
