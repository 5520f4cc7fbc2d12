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

/// One return of one sub-ray (the full model's trace output; `docs` of the fields in
/// shaders/common.glsl). An empty slot has `signal == 0.0 && range == 0.0`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct SubRayRecord {
    /// Range (m).
    pub range: f32,
    /// s_i = w_i · T_trans · R(θ_i) / r_i².
    pub signal: f32,
    /// a_i = w_i · E_sun · R(θ_sun) · visible.
    pub ambient: f32,
    pub instance_id: u32,
    pub class_id: u32,
    pub material: u32,
}

impl SubRayRecord {
    pub fn is_empty(&self) -> bool {
        self.signal == 0.0 && self.range == 0.0
    }
}

/// One echo extracted from a beam's waveform.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct Echo {
    /// Range (m) by the chosen estimator.
    pub range: f32,
    /// Peak of the pulse-convolved waveform.
    pub amplitude: f32,
    /// Echo pulse width (m): r1 − r0 of the run above the threshold.
    pub epw: f32,
    /// Apparent reflectance R_app = amplitude · range².
    pub reflectance: f32,
    /// The beam's ambient level A_b.
    pub ambient: f32,
    pub instance_id: u32,
    pub class_id: u32,
    pub material: u32,
    /// 0-based among the echoes returned for the beam, in range order.
    pub return_index: u32,
    pub return_count: u32,
}

/// Parameters of the waveform stage (push constants of waveform.comp; arguments of the
/// CPU reference). See the field docs in shaders/waveform.comp.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct WaveformParams {
    pub sigma_r: f32,
    pub bin_width: f32,
    pub threshold: f32,
    pub ambient_k: f32,
    pub estimator: u32,
    pub return_mode: u32,
    pub max_returns: u32,
    pub min_separation: f32,
    pub curve_model: u32,
    pub curve_a: f32,
    pub curve_b: f32,
    pub range_sigma: f32,
    pub range_sigma_snr: f32,
    pub amplitude_noise: f32,
    pub pd_width: f32,
    pub false_alarm_rate: f32,
    pub min_range: f32,
    pub max_range: f32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub frame: u32,
    /// Records per beam (sub-rays × slots per sub-ray).
    pub records_per_beam: u32,
    pub beam_count: u32,
    pub pad0: u32,
}

/// Range estimators (WaveformParams::estimator).
pub mod estimator {
    pub const PEAK: u32 = 0;
    pub const LEADING_EDGE: u32 = 1;
    pub const CENTROID: u32 = 2;
}

/// Return modes (WaveformParams::return_mode).
pub mod return_mode {
    pub const STRONGEST: u32 = 0;
    pub const FIRST: u32 = 1;
    pub const LAST: u32 = 2;
    pub const DUAL: u32 = 3;
    pub const ALL: u32 = 4;
}

/// Range-limit curve models (WaveformParams::curve_model), applied to R_app at range r.
pub mod curve_model {
    /// Only the physical threshold T_eff on the waveform.
    pub const THRESHOLD: u32 = 0;
    /// R_L(r) = a + b·r (paper 001; a = 0 through the origin by default).
    pub const LINEAR: u32 = 1;
    /// R_L(r) = a + b·r² (paper 003).
    pub const QUADRATIC: u32 = 2;
    /// r_L ∝ R^(1/n): R_L(r) = b·r^n, n = 2, 3, 4 (paper 004).
    pub const ROOT2: u32 = 3;
    pub const ROOT3: u32 = 4;
    pub const ROOT4: u32 = 5;
    /// r_L = a + b·ln R (paper 004's logarithmic fit): R_L(r) = exp((r − a)/b).
    pub const LOGARITHMIC: u32 = 6;
}
