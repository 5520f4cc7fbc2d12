//! beamtrace — a physically based LiDAR simulator on Vulkan hardware ray tracing.
//!
//! The crate is layered so that each part knows one thing (DESIGN.md §8 is the map, and
//! §9.1's table the arrows allowed between layers, which a test checks):
//!
//! * [`contract`] — the numbers the host and the shaders share (limits, codes, binding
//!   numbers, hit-group order), written once; the shaders include them as a generated
//!   header. Depends on nothing.
//! * [`config`] — YAML loading with errors that name the file, line and field.
//! * [`sensor`] — beam patterns, mounting pose, sub-rays, the receiver (plain Rust).
//! * [`material`] — the IR material database and the glTF → IR material mapping.
//! * [`scene`] — glTF import (z-up world), scenarios and motion, the procedural scenes.
//! * [`weather`] — the medium: fog, rain and snow, their forms, keyframes and optical
//!   coefficients (plain Rust).
//! * [`model`] — what the two engines share: frame settings, scene tables, return
//!   records, echoes and points (plain Rust).
//! * [`gpu`] — Vulkan: device, memory, acceleration structures, pipelines. No LiDAR.
//! * [`sim`] — the frame pipeline: trace → returns → points, and the frame driver every
//!   command simulates through (scene upload, sensor set-up, motion, two frames in
//!   flight). No raw Vulkan handles; owns the `#[repr(C)]` structs the shaders read.
//! * [`reference`](mod@reference) — the CPU implementation of the same model, used to
//!   check the GPU.
//! * [`fit`] — calibration: the pose and reflectances that make the CPU reference
//!   reproduce a measured scan (least squares, Levenberg–Marquardt).
//! * [`output`] — the field table, the file writers and readers (PCD, PLY, LAS, MCAP,
//!   CSV), organized clouds, the picture of a frame, the vendors' packets
//!   (`output::packets`: Velodyne and Ouster UDP, pcap, the Ouster HTTP API, and their
//!   decoders), and recordings read back for playing (`output::recorded`).
//! * [`osi`] — ASAM OSI: the SensorView/GroundTruth and SensorData messages (`prost`,
//!   from the specification's field numbers), binary `.osi` traces and their naming, a
//!   frame as lidar detections, a ground-truth trace as a scenario (plain Rust).
//! * [`job`] — `run`, `stream` and `batch` as library calls: the frame loop over the
//!   driver, the output plan and run files, the packet stream, shards and manifests;
//!   and frames in memory by scenario time (`job::Session`), which the Python package
//!   (`python/`, a crate of its own) binds.
//! * [`live`] — live topics: a run's ROS 2 messages (the bytes a bag holds) published
//!   as it runs, over DDS (RustDDS: no ROS installation needed) and Foxglove's WebSocket
//!   protocol, paced by the stream's clock, never waiting for a subscriber.
//! * [`bench`](mod@bench) — `beamtrace bench`: pass times against the raw trace ceiling and the
//!   CPU reference, the HiL and peer measurements, the benchmark suite.
//! * [`view`] — the point cloud drawn as it comes off the GPU: offscreen pictures, and
//!   the live window (feature `window`). Uses `sim` and `gpu`; prints nothing.
//!
//! The plain layers (`config`, `sensor`, `material`, `scene`, `weather`, `model`, `output`,
//! `osi`, `reference`, `fit`) import nothing from `sim` or `gpu`; the library prints nothing
//! and parses no command line (that is the binary's `cli`).

pub mod bench;
pub mod config;
pub mod contract;
pub mod fit;
pub mod gpu;
pub mod job;
pub mod live;
pub mod material;
pub mod model;
pub mod osi;
pub mod output;
pub mod reference;
pub mod scene;
pub mod sensor;
pub mod sim;
pub mod view;
pub mod weather;

#[cfg(test)]
mod tests;
