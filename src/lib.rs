//! beamtrace — a physically based LiDAR simulator on Vulkan hardware ray tracing.
//!
//! The crate is layered so that each part knows one thing (see DESIGN.md §8):
//!
//! * [`config`] — YAML loading with errors that name the file, line and field.
//! * [`sensor`] — beam patterns, mounting pose, detection threshold (plain Rust).
//! * [`material`] — the IR material database and the glTF → IR material mapping.
//! * [`scene`] — glTF import (z-up world) and the procedural scene generator.
//! * [`gpu`] — Vulkan: device, memory, acceleration structures, pipelines. No LiDAR.
//! * [`sim`] — the frame pipeline: trace → returns → points. No raw Vulkan handles.
//! * [`reference`] — the CPU implementation of the same model, used to check the GPU.
//! * [`output`] — point clouds, PCD/PLY writers and the picture of a frame.

pub mod bench;
pub mod config;
pub mod gpu;
pub mod job;
pub mod material;
pub mod output;
pub mod reference;
pub mod scene;
pub mod sensor;
pub mod sim;
