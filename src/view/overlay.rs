//! What the view draws over the points: text in a built-in 8×8 bitmap font (the HUD,
//! the help, messages) and the colour legend, all as screen rectangles for the overlay
//! shader. Plain geometry, no GPU.

use super::colour::{category_colour, pack, ramp_colour, ColourMode, Scale};
use super::gpu_types::Rect;
use font8x8::{UnicodeFonts, BASIC_FONTS};
use glam::{Mat4, Vec3, Vec4};

/// Pixels per font pixel: 8×8 glyphs become 16×16.
const SCALE: f32 = 2.0;
/// Advance from one line of text to the next, in pixels.
pub const LINE: f32 = 10.0 * SCALE;
const GLYPH: f32 = 8.0 * SCALE;

pub const WHITE: u32 = 0xffff_ffff;
pub const GREY: u32 = 0xffb0_b0b0;
/// Errors in the window (feature `window`).
#[cfg_attr(not(feature = "window"), allow(dead_code))]
pub const RED: u32 = 0xff50_50ff;
const PANEL: u32 = 0xb000_0000;

/// The rectangles of one frame's overlay.
#[derive(Debug, Default, Clone)]
pub struct Overlay {
    pub rects: Vec<Rect>,
}

impl Overlay {
    pub fn rect(&mut self, lo: [f32; 2], hi: [f32; 2], rgba: u32) {
        self.rects.push(Rect { lo, hi, rgba });
    }

    /// Writes `text` with its top-left corner at `at`; returns the width in pixels.
    /// Each run of lit pixels in a glyph row is one rectangle.
    pub fn text(&mut self, at: [f32; 2], rgba: u32, text: &str) -> f32 {
        let mut x = at[0];
        for c in text.chars() {
            let glyph = BASIC_FONTS.get(c).or_else(|| BASIC_FONTS.get('?'));
            for (row, bits) in glyph.unwrap_or([0; 8]).iter().enumerate() {
                let y = at[1] + row as f32 * SCALE;
                let mut col = 0;
                while col < 8 {
                    if bits & (1 << col) == 0 {
                        col += 1;
                        continue;
                    }
                    let start = col;
                    while col < 8 && bits & (1 << col) != 0 {
                        col += 1;
                    }
                    let x0 = x + start as f32 * SCALE;
                    self.rect([x0, y], [x + col as f32 * SCALE, y + SCALE], rgba);
                }
            }
            x += GLYPH;
        }
        x - at[0]
    }

    /// Lines of text on a dark panel with its top-left corner at `at`.
    pub fn panel(&mut self, at: [f32; 2], lines: &[(u32, String)]) {
        if lines.is_empty() {
            return;
        }
        let width = lines
            .iter()
            .map(|(_, l)| l.chars().count() as f32 * GLYPH)
            .fold(0.0, f32::max);
        let pad = 6.0;
        let height = lines.len() as f32 * LINE;
        self.rect(
            [at[0] - pad, at[1] - pad],
            [at[0] + width + pad, at[1] + height + pad - (LINE - GLYPH)],
            PANEL,
        );
        for (i, (rgba, line)) in lines.iter().enumerate() {
            self.text([at[0], at[1] + i as f32 * LINE], *rgba, line);
        }
    }

    /// The legend of `mode` at the right edge of a `viewport`: a ramp with its values
    /// at the ends and middle, or the categories' colours with their `categories` names.
    pub fn legend(
        &mut self,
        viewport: [f32; 2],
        mode: ColourMode,
        scale: Scale,
        categories: &[String],
    ) {
        let title = format!("colour: {}", mode.name());
        let quantity = quantity(mode);
        let widest = categories
            .iter()
            .map(|c| c.chars().count() + 2)
            .max()
            .unwrap_or(0);
        let chars = title
            .chars()
            .count()
            .max(quantity.map_or(0, |q| q.chars().count()))
            .max(widest)
            .max(10);
        let x = viewport[0] - chars as f32 * GLYPH - 12.0;
        let mut top = 12.0;
        self.text([x, top], WHITE, &title);
        if let Some(q) = quantity {
            top += LINE;
            self.text([x, top], GREY, q);
        }
        match scale {
            Scale::Ramp {
                low,
                high,
                log,
                unit,
            } => self.ramp_legend([x, top + LINE], low, high, log, unit),
            Scale::Categories => {
                for (i, name) in categories.iter().enumerate().take(16) {
                    let y = top + LINE * (1.0 + i as f32);
                    let swatch = pack(category_colour(i as u32), 255);
                    self.rect([x, y], [x + GLYPH, y + GLYPH], swatch);
                    self.text([x + GLYPH * 1.5, y], GREY, name);
                }
            }
        }
    }

    /// A vertical ramp, high values on top, 256 px tall, with three labels.
    fn ramp_legend(&mut self, at: [f32; 2], low: f32, high: f32, log: bool, unit: &str) {
        let (steps, height) = (64, 256.0);
        for i in 0..steps {
            let t = 1.0 - (i as f32 + 0.5) / steps as f32;
            let y0 = at[1] + height * i as f32 / steps as f32;
            let y1 = at[1] + height * (i + 1) as f32 / steps as f32;
            let rgba = pack(ramp_colour(t), 255);
            self.rect([at[0], y0], [at[0] + 1.5 * GLYPH, y1], rgba);
        }
        for t in [1.0, 0.5, 0.0] {
            let v = low + (high - low) * t;
            let value = if log { 10f32.powf(v) } else { v };
            let y = at[1] + height * (1.0 - t) - GLYPH / 2.0;
            let label = format!("{} {unit}", number(value));
            self.text([at[0] + 2.0 * GLYPH, y.max(at[1])], GREY, label.trim_end());
        }
    }
}

/// What a ramp's values are, and in which unit, where the mode's name does not say.
fn quantity(mode: ColourMode) -> Option<&'static str> {
    match mode {
        ColourMode::Intensity => Some("reflectance (white=1)"),
        ColourMode::Range => Some("range (m)"),
        ColourMode::Epw => Some("pulse width (m)"),
        ColourMode::Ambient => Some("sunlit white = 1"),
        _ => None,
    }
}

impl Overlay {
    /// Range circles on the ground around the sensor (`ground_z` below it in the
    /// sensor frame), every 1, 2 or 5 × 10ⁿ m out to `extent`, as dots, each labelled
    /// "10 m" where it passes the sensor's right (−y); and the heading: dots from the
    /// sensor's foot 5 m along +x, labelled "+x" at the tip. `view_proj` maps the
    /// sensor frame to clip space; what lies behind the camera or off the viewport is
    /// left out.
    pub fn ground_marks(
        &mut self,
        viewport: [f32; 2],
        view_proj: Mat4,
        ground_z: f32,
        extent: f32,
    ) {
        let to_screen = |p: Vec3| screen(view_proj, viewport, p);
        let step = ring_step(extent);
        let mut r = step;
        while r <= extent + 1e-3 {
            for k in 0..180 {
                let a = k as f32 * std::f32::consts::TAU / 180.0;
                if let Some(s) = to_screen(Vec3::new(r * a.cos(), r * a.sin(), ground_z)) {
                    self.rect([s[0] - 1.0, s[1] - 1.0], [s[0] + 1.0, s[1] + 1.0], GREY);
                }
            }
            if let Some(s) = to_screen(Vec3::new(0.0, -r, ground_z)) {
                self.text(
                    [s[0] + 4.0, s[1] - GLYPH - 2.0],
                    WHITE,
                    &format!("{} m", number(r)),
                );
            }
            r += step;
        }
        for k in 0..=20 {
            let p = Vec3::new(k as f32 * 0.25, 0.0, ground_z);
            if let Some(s) = to_screen(p) {
                self.rect([s[0] - 2.0, s[1] - 2.0], [s[0] + 2.0, s[1] + 2.0], WHITE);
            }
        }
        if let Some(s) = to_screen(Vec3::new(5.0, 0.0, ground_z)) {
            self.text([s[0] + 4.0, s[1] - GLYPH / 2.0], WHITE, "+x");
        }
    }
}

/// Pixel position of `p` (sensor frame) in a `viewport`, if in front of the camera and
/// inside it.
fn screen(view_proj: Mat4, viewport: [f32; 2], p: Vec3) -> Option<[f32; 2]> {
    let c: Vec4 = view_proj * p.extend(1.0);
    if c.w <= 1e-6 {
        return None;
    }
    let (x, y) = (
        (c.x / c.w + 1.0) * 0.5 * viewport[0],
        (c.y / c.w + 1.0) * 0.5 * viewport[1],
    );
    (x >= 0.0 && y >= 0.0 && x < viewport[0] && y < viewport[1] && c.z >= 0.0).then_some([x, y])
}

/// Circle spacing: the smallest of 1-2-5 steps that gives at most 6 circles.
fn ring_step(extent: f32) -> f32 {
    let mut decade = 1.0f32;
    while decade * 10.0 < extent / 6.0 {
        decade *= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&s| s >= extent / 6.0)
        .unwrap_or(10.0 * decade)
}

/// A short label for a value: no more digits than a legend needs.
pub fn number(v: f32) -> String {
    let a = v.abs();
    if a == 0.0 || (0.1..1000.0).contains(&a) {
        let s = format!("{v:.1}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else if (0.001..0.1).contains(&a) {
        format!("{v:.3}")
    } else {
        format!("{v:.0e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lights_the_glyphs_pixels() {
        let mut o = Overlay::default();
        let w = o.text([0.0, 0.0], WHITE, "I ");
        assert_eq!(w, 2.0 * GLYPH);
        // font8x8's 'I' has lit pixels in all of its first seven rows; a space none.
        let rows: std::collections::BTreeSet<i32> =
            o.rects.iter().map(|r| (r.lo[1] / SCALE) as i32).collect();
        assert_eq!(rows.len(), 7, "{rows:?}");
        assert!(o.rects.iter().all(|r| r.hi[0] <= GLYPH && r.lo[0] >= 0.0));
    }

    /// A camera straight above the sensor (pitch 89°, yaw 180°: looking down from just
    /// behind it, so +x is up the screen and −y to the right): the 10 m circle's label sits where a pinhole of the
    /// camera's 50° vertical field of view puts the ground point 10 m to the right.
    #[test]
    fn circles_are_labelled_where_the_ground_points_project() {
        use crate::view::camera::OrbitCamera;
        let camera = OrbitCamera {
            target: Vec3::ZERO,
            yaw: std::f32::consts::PI,
            pitch: 89f32.to_radians(),
            distance: 40.0,
            fov_y: 50f32.to_radians(),
        };
        let viewport = [800.0, 800.0];
        let mut o = Overlay::default();
        o.ground_marks(viewport, camera.view_proj(1.0), -1.8, 20.0);
        // f = 400 px / tan 25°; the ground 41.8 m below the eye; −y is to the right.
        let f = 400.0 / 25f32.to_radians().tan();
        let want_x = 400.0 + f * 10.0 / 41.8;
        // The label's first glyph starts 4 px right of the point.
        let label_left = o
            .rects
            .iter()
            .filter(|r| {
                r.rgba == WHITE && r.lo[1] < 400.0 && r.lo[0] > want_x && r.lo[0] < want_x + 20.0
            })
            .map(|r| r.lo[0])
            .fold(f32::MAX, f32::min);
        assert!(
            (label_left - (want_x + 4.0)).abs() < 3.0,
            "{label_left} vs {want_x}"
        );
        // The heading runs up the screen (+x), the 5 m tip f·5/41.8 px above the centre.
        let tip = 400.0 - f * 5.0 / 41.8;
        assert!(o.rects.iter().any(|r| r.rgba == WHITE
            && (r.lo[0] + 2.0 - 400.0).abs() < 2.0
            && (r.lo[1] + 2.0 - tip).abs() < 3.0));
        assert_eq!(ring_step(20.0), 5.0);
        assert_eq!(ring_step(45.0), 10.0);
    }

    #[test]
    fn labels_are_short() {
        assert_eq!(number(10.0), "10");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(0.01), "0.010");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(1e-3 * 0.5), "5e-4");
    }
}
