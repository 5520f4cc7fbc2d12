//! The CPU reference: the same geometry the GPU traces, in plain Rust.
//!
//! Tests use it to check the GPU trace hit for hit, and the benchmarks use it as the CPU
//! baseline. It favours being right over being fast: a watertight ray/triangle test
//! (no ray slips through a shared edge of a closed mesh), a conservative box test, and
//! a closest-hit rule that does not depend on the tree's shape (equal distances go to the
//! triangle that comes first in scene order), so its answers equal a brute-force loop
//! over every triangle.
//!
//! [`Bvh::new`] takes a [`Scene`](crate::scene::Scene) to world space once;
//! [`Bvh::trace`] / [`Bvh::trace_many`] give the closest [`Hit`] (distance, barycentrics,
//! normals, instance/primitive/triangle/material), [`Bvh::occluded`] answers shadow rays.

pub mod binned;
mod build;
mod bvh;
mod error;
mod flatten;
mod medium;
mod path;
mod simulate;
pub mod stacking;
mod triangle;
pub mod waveform;

pub use binned::{binned_beam_echoes, BeamBins};
pub use bvh::{Bvh, Hit};
pub use error::ReferenceError;
pub use simulate::{subray_direction, CpuSimulator};
pub use waveform::{beam_echoes, echo_slots, frame_echoes};

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "tests/datasheet.rs"]
mod datasheet_tests;

#[cfg(test)]
#[path = "tests/slanted.rs"]
mod slanted_tests;
