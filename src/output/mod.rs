//! Point clouds and the files they are written to.

/// One point as written to PCD/PLY. Coordinates are in the sensor frame (DESIGN §1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    /// Apparent reflectance R_app (1.0 = a 100 % Lambertian target at normal incidence).
    pub intensity: f32,
    /// One-way range (m).
    pub range: f32,
    pub ring: u16,
    /// Beam azimuth (rad).
    pub azimuth: f32,
    /// Beam elevation (rad).
    pub elevation: f32,
    /// Beam index in the pattern.
    pub beam: u32,
    /// Instance id of the scene node that was hit.
    pub instance: u32,
    /// Semantic class id (see `scene::SemanticClass`).
    pub class: u16,
}

/// The points of one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointCloud {
    pub points: Vec<Point>,
}
