//! beamtrace — a physically based LiDAR simulator on Vulkan hardware ray tracing.
//!
//! The crate is layered so that each part knows one thing (see DESIGN.md §8):
//!
//! * [`contract`] — the numbers the host and the shaders share (limits, codes, binding
//!   numbers, hit-group order), written once; the shaders include them as a generated
//!   header. Depends on nothing.
//! * [`config`] — YAML loading with errors that name the file, line and field.
//! * [`sensor`] — beam patterns, mounting pose, sub-rays, the receiver (plain Rust).
//! * [`material`] — the IR material database and the glTF → IR material mapping.
//! * [`scene`] — glTF import (z-up world) and the procedural scene generator.
//! * [`model`] — what the two engines share: frame settings, scene tables, return
//!   records and echoes (plain Rust).
//! * [`gpu`] — Vulkan: device, memory, acceleration structures, pipelines. No LiDAR.
//! * [`sim`] — the frame pipeline: trace → returns → points. No raw Vulkan handles;
//!   owns the `#[repr(C)]` structs the shaders read and the conversions into them.
//! * [`reference`](mod@reference) — the CPU implementation of the same model, used to check the GPU.
//! * [`fit`] — calibration: the pose and reflectances that make the CPU reference
//!   reproduce a measured scan (least squares, Levenberg–Marquardt).
//! * [`output`] — point clouds, PCD/PLY writers and the picture of a frame.
//! * [`view`] — the point cloud drawn as it comes off the GPU: offscreen pictures, and
//!   the live window (feature `window`). Uses `sim` and `gpu`; prints nothing.
//!
//! The plain layers (`config`, `sensor`, `material`, `scene`, `model`, `output`,
//! `reference`, `fit`) import nothing from `sim` or `gpu`.

pub mod bench;
pub mod config;
pub mod contract;
pub mod fit;
pub mod gpu;
pub mod job;
pub mod material;
pub mod model;
pub mod output;
pub mod reference;
pub mod scene;
pub mod sensor;
pub mod sim;
pub mod view;
