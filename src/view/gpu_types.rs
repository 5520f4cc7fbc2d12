//! Host mirrors of the structs in `shaders/view_common.glsl`, with the layouts the
//! reflection check compares against the SPIR-V when the view's pipelines are made.

use crate::gpu::HostLayout;
use bytemuck::{Pod, Zeroable};
use std::mem::{offset_of, size_of};

/// The points pass's push constants (128 bytes: every device takes that many).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct PointParams {
    /// Column-major, sensor frame → clip space.
    pub view_proj: [f32; 16],
    pub points_address: u64,
    pub count_address: u64,
    pub beams_address: u64,
    pub palette_address: u64,
    /// A [`colour_mode`](crate::contract::colour_mode) code.
    pub mode: u32,
    pub size: f32,
    pub size_in_metres: u32,
    pub viewport_height: f32,
    pub low: f32,
    pub high: f32,
    pub log_scale: u32,
    /// The sensor's index in a rig, for the sensor colour mode.
    pub source: u32,
}

/// The scene meshes pass's push constants (128 bytes: every device takes that many).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct MeshParams {
    /// Column-major, mesh frame → clip space.
    pub object_to_clip: [f32; 16],
    /// Mesh frame → sensor frame: the rows of a 3×4 matrix.
    pub object_to_sensor: [[f32; 4]; 3],
    /// The primitive's entry in the simulator's geometry table.
    pub geometry_address: u64,
    /// Base colour, RGBA8, red in the low byte.
    pub rgba: u32,
    pub pad0: u32,
}

/// One overlay rectangle, in pixels from the top-left corner.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct Rect {
    pub lo: [f32; 2],
    pub hi: [f32; 2],
    /// RGBA8, red in the low byte.
    pub rgba: u32,
}

/// The overlay pass's push constants.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct OverlayParams {
    pub rects_address: u64,
    pub viewport: [f32; 2],
}

macro_rules! layout {
    ($ty:ty, $name:literal, [$($field:ident),+]) => {
        HostLayout {
            name: $name,
            members: vec![$((stringify!($field), offset_of!($ty, $field) as u32)),+],
            size: size_of::<$ty>() as u32,
        }
    };
}

/// The layouts of the structs the view's shaders share with the host.
pub fn view_layouts() -> Vec<HostLayout> {
    vec![
        layout!(
            PointParams,
            "PointParams",
            [
                view_proj,
                points_address,
                count_address,
                beams_address,
                palette_address,
                mode,
                size,
                size_in_metres,
                viewport_height,
                low,
                high,
                log_scale,
                source
            ]
        ),
        layout!(
            MeshParams,
            "MeshParams",
            [
                object_to_clip,
                object_to_sensor,
                geometry_address,
                rgba,
                pad0
            ]
        ),
        layout!(Rect, "Rect", [lo, hi, rgba]),
        layout!(OverlayParams, "OverlayParams", [rects_address, viewport]),
    ]
}
