//! The library on the GPU, in process: the frame pipeline, the waveform stage, frames in
//! flight, motion, the view's device buffers and the `run` job as a library call, on
//! whatever ray-tracing Vulkan device exists (lavapipe in CI) with the validation layer
//! on, against closed forms and the CPU reference.

#[path = "../support/mod.rs"]
mod support;

mod analytic;
mod binned;
mod bounces;
mod frames;
mod gltf_scenes;
mod job;
mod model;
mod motion;
mod packets;
mod view;
mod vs_reference;
mod waveform;
mod weather;
