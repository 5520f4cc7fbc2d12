//! What a frame computes: sub-ray return records (the trace's output) and echoes (the
//! waveform stage's output), as DESIGN §4 defines them.

/// One return of one sub-ray. An empty slot has `signal == 0.0 && range == 0.0`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SubRayRecord {
    /// Range (m).
    pub range: f32,
    /// s_i = w_i · T_trans · R(θ_i) / r_i².
    pub signal: f32,
    /// a_i = w_i · E_sun · R(θ_sun) · visible.
    pub ambient: f32,
    pub instance_id: u32,
    /// Semantic class of the instance hit.
    pub class_id: u32,
    /// IR material index.
    pub material: u32,
    /// Mirrors and refracting panes the path met before this surface (0: direct).
    pub bounces: u32,
}

impl SubRayRecord {
    pub fn is_empty(&self) -> bool {
        self.signal == 0.0 && self.range == 0.0
    }
}

/// One echo extracted from a beam's waveform.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
    /// Bounces of the record that dominates the echo.
    pub bounces: u32,
}
