//! Host mirrors of the structs in `shaders/common.glsl`. This is the one place where the
//! host side of the shader interface lives; `host_layouts` feeds the reflection check
//! that runs whenever the pipelines are made.

use crate::gpu::HostLayout;
use bytemuck::{Pod, Zeroable};
use std::mem::{offset_of, size_of};

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuBeam {
    pub direction: [f32; 3],
    pub time: f32,
    pub origin: [f32; 3],
    pub ring: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuSubRay {
    pub dh: f32,
    pub dv: f32,
    pub weight: f32,
    pub pad: f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuGeometry {
    pub index_address: u64,
    pub position_address: u64,
    pub normal_address: u64,
    pub material: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuInstanceInfo {
    pub instance_id: u32,
    pub class_id: u32,
    pub pad0: u32,
    pub pad1: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuMaterial {
    pub reflectance: f32,
    pub pad0: f32,
    pub pad1: f32,
    pub pad2: f32,
}

/// What one sub-ray returned (written by the GPU, or by the CPU reference).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct ReturnRecord {
    /// Range (m); 0 when nothing was hit.
    pub range: f32,
    /// s_i = w_i R(θ) / r².
    pub signal: f32,
    /// R(θ) of the surface, Lambertian units.
    pub reflectance: f32,
    pub cos_incidence: f32,
    /// World-frame shading normal facing the ray.
    pub normal: [f32; 3],
    /// Scene instance id (0 = no hit).
    pub instance_id: u32,
    pub material: u32,
    pub class_id: u32,
    pub flags: u32,
    pub pad: u32,
}

impl ReturnRecord {
    pub const HIT: u32 = 1;
    pub const DETECTED: u32 = 2;

    pub fn hit(&self) -> bool {
        self.flags & Self::HIT != 0
    }

    pub fn detected(&self) -> bool {
        self.flags & Self::DETECTED != 0
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct FrameParams {
    pub sensor_to_world: [f32; 16],
    pub beam_count: u32,
    pub subray_count: u32,
    pub min_range: f32,
    pub max_range: f32,
    pub threshold: f32,
    pub pad0: u32,
    pub pad1: u32,
    pub pad2: u32,
}

macro_rules! layout {
    ($t:ty, $name:literal, [$($field:ident),* $(,)?]) => {
        HostLayout {
            name: $name,
            members: vec![$((stringify!($field), offset_of!($t, $field) as u32)),*],
            size: size_of::<$t>() as u32,
        }
    };
}

/// Every struct shared with the shaders, with its host layout.
pub fn host_layouts() -> Vec<HostLayout> {
    vec![
        layout!(GpuBeam, "Beam", [direction, time, origin, ring]),
        layout!(GpuSubRay, "SubRay", [dh, dv, weight, pad]),
        layout!(
            GpuGeometry,
            "Geometry",
            [
                index_address,
                position_address,
                normal_address,
                material,
                pad
            ]
        ),
        layout!(
            GpuInstanceInfo,
            "InstanceInfo",
            [instance_id, class_id, pad0, pad1]
        ),
        layout!(GpuMaterial, "Material", [reflectance, pad0, pad1, pad2]),
        layout!(
            ReturnRecord,
            "ReturnRecord",
            [
                range,
                signal,
                reflectance,
                cos_incidence,
                normal,
                instance_id,
                material,
                class_id,
                flags,
                pad
            ]
        ),
        layout!(
            FrameParams,
            "FrameParams",
            [
                sensor_to_world,
                beam_count,
                subray_count,
                min_range,
                max_range,
                threshold,
                pad0,
                pad1,
                pad2
            ]
        ),
    ]
}
