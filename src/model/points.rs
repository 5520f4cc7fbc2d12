//! One frame's points: what both simulators produce and every writer takes.

/// One point as written to PCD/PLY. Coordinates are in the sensor frame (DESIGN §1).
///
/// Laid out without padding (`repr(C)`, the 4-byte fields first), as the GPU's
/// compaction writes it when it converts the points itself (`CloudPoint` in
/// shaders/common.glsl, checked against this layout when the pipelines are made).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    /// Apparent reflectance R_app (1.0 = a 100 % Lambertian target at normal incidence).
    pub intensity: f32,
    /// One-way range (m).
    pub range: f32,
    /// Beam azimuth (rad).
    pub azimuth: f32,
    /// Beam elevation (rad).
    pub elevation: f32,
    /// Beam index in the pattern.
    pub beam: u32,
    /// Instance id of the scene node that was hit.
    pub instance: u32,
    /// Echo pulse width (m); multiply by 2/c for seconds.
    pub epw: f32,
    /// The beam's ambient (sunlight) level A_b.
    pub ambient: f32,
    /// Firing time of the beam within the frame (s).
    pub time: f32,
    pub ring: u16,
    /// Semantic class id (see `scene::SemanticClass`).
    pub class: u16,
    /// 0-based index of this echo among the beam's returned echoes (range order).
    pub return_index: u16,
    /// Number of echoes returned for the beam.
    pub return_count: u16,
    /// IR material id (index into the material database).
    pub material: u16,
    /// The 8-bit calibrated reflectivity Velodyne and Ouster sensors report (see
    /// `sensor::calibrated_reflectivity`): 0–100 = diffuse 0–100 %, 101–255 =
    /// retroreflectors.
    pub reflectivity: u8,
    /// Mirrors and panes the path met before the surface that returned the echo (its
    /// dominant record); 0: the direct return. Always 0 at `max_bounces: 1`.
    pub bounce: u8,
}

/// The points of one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointCloud {
    pub points: Vec<Point>,
}
