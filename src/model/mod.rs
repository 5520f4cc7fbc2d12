//! The plain model both engines share: what the GPU pipeline (`sim`) and the CPU
//! reference (`reference`) read and produce, in plain Rust with physical units and enums.
//!
//! The inputs have their own homes — the sensor (beams, sub-rays, the receiver's
//! [`WaveformSettings`](crate::sensor::WaveformSettings)) in `sensor`, surfaces in
//! `material`, geometry in `scene`. What lives here is what joins them for a simulation
//! and what comes out of one:
//!
//! * [`FrameSettings`] (pose, range window, sun, seed, frame, receiver settings) and
//!   [`RecordLayout`] (how a frame's records are laid out; the one place that derives
//!   the records per beam),
//! * [`SceneTables`]: the per-geometry and per-material tables the hit shaders and the
//!   reference's tracer both read, built once from a scene and a material database,
//! * [`SubRayRecord`] and [`Echo`]: a sub-ray's return and a beam's echo,
//! * [`Point`] and [`PointCloud`]: the points a frame's echoes become, which both
//!   simulators make and every writer in `output` takes,
//! * [`ImuSample`]s: what an IMU on the vehicle measures along a [`Trajectory`]
//!   ([`ImuGenerator`], `imu.rs`).
//!
//! Nothing here knows a GPU: `sim` owns the `#[repr(C)]` structs the shaders read
//! (padding, device addresses, codes instead of enums) and converts from these types.
//! The numbers the shaders also know (limits, codes) come from [`crate::contract`].

pub mod cw;
mod frame;
mod imu;
mod medium;
mod points;
mod records;
mod tables;

/// Standard gravity g₀ (m/s²), which the IMU adds and Ouster's IMU packets count in.
pub use crate::sensor::STANDARD_GRAVITY;
pub use frame::{BinGrid, FrameExtent, FrameSettings, RecordLayout, Sun, Sweep};
pub use imu::{
    imu_variances, simulate_imu, ImuGenerator, ImuSample, Sampled, Standing, Trajectory, FD_STEP_S,
};
pub use medium::{
    half_divergence, DropCell, DropField, FogNode, Medium, MediumSlots, EXIT_RADIUS_M,
    FOG_MATERIAL, WEATHER_CLASS,
};
pub use points::{Point, PointCloud};
pub use records::{Echo, SubRayRecord};
pub use tables::{AlphaTexture, GeometryInfo, MaterialEntry, SceneTables, TablesError};
