//! A PNG of one frame: a bird's-eye view above a range image, coloured by intensity.
//!
//! Layout, top to bottom: the bird's-eye panel (`bev_size` square, x forward = up,
//! y left = left, range circles as a faint grid, each labelled with its distance in
//! metres just right of where it crosses the line to the sensor's right, a grey cross at
//! the sensor and a white triangle ahead of it pointing along its heading, +x), the
//! range image (one band of `row_height` px per ring, one px column per azimuth bin, the
//! left edge the largest azimuth so the left of the vehicle is on the left), and the
//! colour bar: its title (quantity and unit) above it, a tick at every decade of
//! apparent reflectance (the long tick is R = 1, a white Lambertian target), and the
//! values of its ends and decades below. Where several points land in one pixel the
//! brightest wins, so retroreflectors stay visible at any zoom.
//!
//! Text is font8x8's 8 × 8 glyphs, doubled where the picture is wide enough, in pure
//! white (which the colour map never gives) on a black box one pixel wider all round.

use super::colormap::IntensityMap;
use super::{AtomicFiles, OutputError, PointCloud};
use font8x8::{UnicodeFonts, BASIC_FONTS};
use std::f32::consts::PI;
use std::io;
use std::path::Path;

/// What the picture shows and how large it is.
#[derive(Debug, Clone, PartialEq)]
pub struct PictureOptions {
    /// Half the side of the bird's-eye square around the sensor (m).
    pub bev_extent: f32,
    /// Side of the bird's-eye panel (px).
    pub bev_size: u32,
    /// Rings in the range image; `None`: the largest ring in the cloud + 1.
    pub channels: Option<u32>,
    /// Azimuth bins (= px columns) of the range image.
    pub columns: u32,
    /// Azimuth interval (min, max) in rad the columns span; `None`: the cloud's own span
    /// when it covers less than 3/4 of a turn (a solid-state sensor), else the full circle.
    /// A caller that knows the sensor's field of view should give it: a spinning sensor
    /// that only sees a wall ahead would otherwise get a zoomed-in image.
    pub azimuth_span: Option<(f32, f32)>,
    /// Pixel rows per ring; `None`: 256 px over all rings, 1 to 8 px each.
    pub row_height: Option<u32>,
    /// log10 of the apparent reflectance at the bottom and top of the colour map.
    pub log10_min: f32,
    pub log10_max: f32,
}

impl Default for PictureOptions {
    fn default() -> Self {
        PictureOptions {
            bev_extent: 60.0,
            bev_size: 1024,
            channels: None,
            columns: 1024,
            azimuth_span: None,
            row_height: None,
            log10_min: -2.0,
            log10_max: 1.0,
        }
    }
}

/// An 8-bit RGB image, rows top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Picture {
    /// The picture as an 8-bit RGB PNG into `w`.
    pub fn write_png(
        &self,
        w: &mut dyn io::Write,
        compression: png::Compression,
    ) -> io::Result<()> {
        let mut enc = png::Encoder::new(w, self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(compression);
        let mut writer = enc.write_header().map_err(io::Error::other)?;
        writer
            .write_image_data(&self.rgb)
            .map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)
    }

    /// The colour at column `x`, row `y` (panics outside the image, like slice indexing).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    fn put(&mut self, x: usize, y: usize, c: [u8; 3]) {
        let i = (y * self.width as usize + x) * 3;
        self.rgb[i..i + 3].copy_from_slice(&c);
    }

    /// `put`, but nothing outside the image.
    fn put_clipped(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height) {
            self.put(x as usize, y as usize, c);
        }
    }

    /// Writes `text` in font8x8 glyphs, `scale` px per font pixel, its top-left at
    /// (x, y), on a [`LABEL_BG`] box one pixel wider all round; clipped to the image.
    fn text(&mut self, x: i64, y: i64, text: &str, scale: usize) {
        let s = scale as i64;
        let w = text_width(text, scale) as i64;
        for dy in -1..=8 * s {
            for dx in -1..=w {
                self.put_clipped(x + dx, y + dy, LABEL_BG);
            }
        }
        for (i, c) in text.chars().enumerate() {
            let glyph = BASIC_FONTS.get(c).unwrap_or([0; 8]);
            for (row, bits) in glyph.iter().enumerate() {
                for col in (0..8).filter(|col| bits & (1 << col) != 0) {
                    let (gx, gy) = (x + (8 * i as i64 + col) * s, y + row as i64 * s);
                    for (ox, oy) in (0..s).flat_map(|ox| (0..s).map(move |oy| (ox, oy))) {
                        self.put_clipped(gx + ox, gy + oy, LABEL);
                    }
                }
            }
        }
    }
}

/// Width in px of `text` at `scale`.
fn text_width(text: &str, scale: usize) -> usize {
    8 * scale * text.chars().count()
}

const IMAGE_BG: [u8; 3] = [0, 0, 0];
const PANEL_BG: [u8; 3] = [18, 18, 22];
const GRID: [u8; 3] = [46, 46, 56];
const SENSOR: [u8; 3] = [170, 170, 170];
const TICK: [u8; 3] = [200, 200, 200];
/// Text and the heading mark: pure white, a colour the intensity map never gives.
const LABEL: [u8; 3] = [255, 255, 255];
/// The box behind text, so it reads over points too.
const LABEL_BG: [u8; 3] = [0, 0, 0];
const GAP: usize = 6;
const LEGEND_H: usize = 10;
/// Room below the colour bar for its ticks (the long one is 6 px).
const TICK_AREA: usize = 8;
/// The colour bar's title: the quantity and its unit.
pub const LEGEND_TITLE: &str = "intensity = apparent reflectance (white target = 1)";
/// Space between a text row and what it labels, px.
const TEXT_GAP: usize = 4;
const MAX_CHANNELS: u32 = 4096;

/// Where the panels lie in the image.
#[derive(Debug, Clone, Copy)]
struct Layout {
    width: usize,
    height: usize,
    bev_x0: usize,
    bev: usize,
    range_x0: usize,
    range_y0: usize,
    channels: usize,
    row_h: usize,
    columns: usize,
    legend_x0: usize,
    legend_y0: usize,
    legend_w: usize,
    /// Pixels per font pixel of the colour bar's text.
    text_scale: usize,
}

fn invalid(field: &'static str, message: impl Into<String>) -> OutputError {
    OutputError::PictureOptions {
        field,
        message: message.into(),
    }
}

fn layout(cloud: &PointCloud, o: &PictureOptions) -> Result<Layout, OutputError> {
    if !(o.bev_extent.is_finite() && o.bev_extent > 0.0) {
        return Err(invalid(
            "bev_extent",
            format!("{} m: give a positive distance", o.bev_extent),
        ));
    }
    if !(16..=8192).contains(&o.bev_size) {
        return Err(invalid(
            "bev_size",
            format!("{} px: use 16 to 8192", o.bev_size),
        ));
    }
    if !(1..=16384).contains(&o.columns) {
        return Err(invalid("columns", format!("{}: use 1 to 16384", o.columns)));
    }
    if !(o.log10_min.is_finite() && o.log10_max.is_finite() && o.log10_min < o.log10_max) {
        return Err(invalid(
            "log10_min",
            format!(
                "{}..{}: give two finite numbers, the first smaller",
                o.log10_min, o.log10_max
            ),
        ));
    }
    if let Some((lo, hi)) = o.azimuth_span {
        if !(lo.is_finite() && hi.is_finite() && lo < hi && hi - lo <= 2.0 * PI + 1e-4) {
            return Err(invalid(
                "azimuth_span",
                format!("({lo}, {hi}) rad: give min < max, at most one turn apart"),
            ));
        }
    }
    let channels = match o.channels {
        Some(c) => c,
        None => cloud
            .points
            .iter()
            .map(|p| p.ring as u32 + 1)
            .max()
            .unwrap_or(1),
    };
    if channels == 0 || channels > MAX_CHANNELS {
        return Err(invalid(
            "channels",
            format!("{channels} rings: the range image takes 1 to {MAX_CHANNELS}; set channels"),
        ));
    }
    let row_h = match o.row_height {
        Some(h @ 1..=64) => h,
        Some(h) => return Err(invalid("row_height", format!("{h} px: use 1 to 64"))),
        None => (256 / channels).clamp(1, 8),
    } as usize;
    let (bev, columns, channels) = (o.bev_size as usize, o.columns as usize, channels as usize);
    let width = bev.max(columns);
    let range_y0 = bev + GAP;
    let text_scale = if width >= 768 { 2 } else { 1 };
    let text_h = 8 * text_scale + TEXT_GAP;
    // The title above the bar, the values below its ticks.
    let legend_y0 = range_y0 + channels * row_h + GAP + text_h;
    let legend_w = width.saturating_sub(16).clamp(1, 512);
    Ok(Layout {
        width,
        height: legend_y0 + LEGEND_H + TICK_AREA + text_h,
        bev_x0: (width - bev) / 2,
        bev,
        range_x0: (width - columns) / 2,
        range_y0,
        channels,
        row_h,
        columns,
        legend_x0: (width - legend_w) / 2,
        legend_y0,
        legend_w,
        text_scale,
    })
}

/// Renders the picture of `cloud` into memory.
pub fn render_picture(cloud: &PointCloud, opts: &PictureOptions) -> Result<Picture, OutputError> {
    let l = layout(cloud, opts)?;
    let map = IntensityMap::new(opts.log10_min, opts.log10_max);
    let mut pic = Picture {
        width: l.width as u32,
        height: l.height as u32,
        rgb: IMAGE_BG.repeat(l.width * l.height),
    };
    draw_bev(&mut pic, &l, cloud, opts.bev_extent, &map);
    draw_range_image(&mut pic, &l, cloud, opts.azimuth_span, &map);
    draw_legend(&mut pic, &l, opts, &map);
    Ok(pic)
}

/// Renders the picture of `cloud` and writes it as a PNG at `path`, atomically.
pub fn write_picture(
    path: &Path,
    cloud: &PointCloud,
    opts: &PictureOptions,
) -> Result<(), OutputError> {
    let mut files = AtomicFiles::default();
    write_picture_into(&mut files, path, cloud, opts)?;
    files.commit()
}

/// Renders the picture of `cloud` into `files` as the PNG `path` (renamed into place
/// when `files` is committed, together with the rest of the group).
pub fn write_picture_into(
    files: &mut AtomicFiles,
    path: &Path,
    cloud: &PointCloud,
    opts: &PictureOptions,
) -> Result<(), OutputError> {
    let pic = render_picture(cloud, opts)?;
    // Fast: a picture per frame must not slow the frame loop down.
    files.write(path, |w| pic.write_png(w, png::Compression::Fast))
}

/// What a pixel holds while points are splatted: the brightest intensity so far.
const EMPTY: f32 = f32::NEG_INFINITY;

/// Intensity to keep per pixel; NaN becomes the bottom of the map, and every point,
/// whatever its value, lights its pixel.
fn splat_value(intensity: f32) -> f32 {
    if intensity.is_nan() {
        0.0
    } else {
        intensity.max(f32::MIN)
    }
}

/// Range-circle spacing: the smallest of 1-2-5 steps that gives at most 8 circles.
fn grid_step(extent: f32) -> f32 {
    let mut decade = 1.0f32;
    while decade * 10.0 < extent / 8.0 {
        decade *= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&s| s >= extent / 8.0)
        .unwrap_or(10.0 * decade)
}

fn draw_bev(pic: &mut Picture, l: &Layout, cloud: &PointCloud, extent: f32, map: &IntensityMap) {
    let n = l.bev;
    let px_per_m = n as f32 / (2.0 * extent);
    let mut best = vec![EMPTY; n * n];
    for p in &cloud.points {
        // Image column from y (left = left), row from x (forward = up).
        let u = (extent - p.y) * px_per_m;
        let v = (extent - p.x) * px_per_m;
        if !(u.is_finite() && v.is_finite())
            || u < -1.0
            || v < -1.0
            || u > n as f32 + 1.0
            || v > n as f32 + 1.0
        {
            continue;
        }
        // The 2×2 block whose centre is nearest to (u, v).
        let c0 = (u - 0.5).floor() as isize;
        let r0 = (v - 0.5).floor() as isize;
        let val = splat_value(p.intensity);
        for r in r0..r0 + 2 {
            for c in c0..c0 + 2 {
                if r >= 0 && c >= 0 && (r as usize) < n && (c as usize) < n {
                    let b = &mut best[r as usize * n + c as usize];
                    if val > *b {
                        *b = val;
                    }
                }
            }
        }
    }
    let m_per_px = 1.0 / px_per_m;
    let step = grid_step(extent);
    let centre = n / 2;
    for r in 0..n {
        let dy = (r as f32 + 0.5) * m_per_px - extent;
        for c in 0..n {
            let b = best[r * n + c];
            let colour = if b != EMPTY {
                map.color(b)
            } else {
                let dx = (c as f32 + 0.5) * m_per_px - extent;
                let dist = (dx * dx + dy * dy).sqrt();
                let k = (dist / step).round();
                let on_cross = (r == centre && c.abs_diff(centre) <= 3)
                    || (c == centre && r.abs_diff(centre) <= 3);
                if on_cross {
                    SENSOR
                } else if k >= 1.0 && (dist - k * step).abs() < 0.5 * m_per_px {
                    GRID
                } else {
                    PANEL_BG
                }
            };
            pic.put(l.bev_x0 + c, r, colour);
        }
    }
    draw_heading(pic, l.bev_x0 + centre, centre);
    label_rings(pic, l.bev_x0 + centre, centre, step, px_per_m, n);
}

/// A white triangle ahead of the sensor at (`cx`, `cy`), pointing forward (up): its apex
/// 20 px ahead, its 13 px base 8 px ahead.
fn draw_heading(pic: &mut Picture, cx: usize, cy: usize) {
    for ahead in 8..=20i64 {
        // Half the width shrinks from 6 px at the base to 0 at the apex.
        let half = (20 - ahead) / 2;
        for dx in -half..=half {
            pic.put_clipped(cx as i64 + dx, cy as i64 - ahead, LABEL);
        }
    }
}

/// Each range circle's distance ("10 m") just right of where it crosses the line to the
/// sensor's right, above that line; doubled glyphs where the circles are far enough
/// apart for them. Circles that leave the panel there get none.
fn label_rings(pic: &mut Picture, cx: usize, cy: usize, step: f32, px_per_m: f32, n: usize) {
    let spacing = step * px_per_m;
    let widest = ring_label(step * (n as f32 / 2.0 / spacing).floor());
    let scale = if (text_width(&widest, 2) + 8) as f32 <= spacing {
        2
    } else {
        1
    };
    let mut k = 1.0f32;
    while k * spacing + 3.0 < (n / 2) as f32 {
        let label = ring_label(k * step);
        let x = cx as i64 + (k * spacing).round() as i64 + 3;
        let y = cy as i64 - 2 - 8 * scale as i64;
        if x + (text_width(&label, scale) as i64) < (cx + n / 2) as i64 {
            pic.text(x, y, &label, scale);
        }
        k += 1.0;
    }
}

/// "10 m", "2.5 m": a circle's distance.
fn ring_label(metres: f32) -> String {
    format!("{} m", short_number(metres))
}

/// A value with no more digits than a label needs: 10, 2.5, 0.01, 1e-5.
fn short_number(v: f32) -> String {
    let a = v.abs();
    let s = if a == 0.0 || (0.00099..10_000.0).contains(&a) {
        format!("{v:.3}")
    } else {
        return format!("{v:.0e}");
    };
    let s = if a >= 100.0 { format!("{v:.0}") } else { s };
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => s,
    }
}

/// Wraps an angle into [-π, π).
fn wrap(a: f32) -> f32 {
    a - 2.0 * PI * ((a + PI) / (2.0 * PI)).floor()
}

/// The azimuth interval shown: the cloud's own span when it covers less than 3/4 of a
/// turn (a forward-looking solid-state sensor), else the full circle.
fn azimuth_window(cloud: &PointCloud) -> (f32, f32) {
    let mut lo = f32::INFINITY;
    let mut hi = f32::NEG_INFINITY;
    for p in &cloud.points {
        if p.azimuth.is_finite() {
            let a = wrap(p.azimuth);
            lo = lo.min(a);
            hi = hi.max(a);
        }
    }
    if lo.is_finite() && hi > lo && hi - lo < 1.5 * PI {
        (lo, hi)
    } else {
        (-PI, PI)
    }
}

fn draw_range_image(
    pic: &mut Picture,
    l: &Layout,
    cloud: &PointCloud,
    span: Option<(f32, f32)>,
    map: &IntensityMap,
) {
    let (rows, cols) = (l.channels, l.columns);
    let (az_lo, az_hi) = span.unwrap_or_else(|| azimuth_window(cloud));
    let bins_per_rad = cols as f32 / (az_hi - az_lo);
    let mut best = vec![EMPTY; rows * cols];
    // Mean elevation per ring decides which way up the rings go.
    let mut elev = vec![(0.0f64, 0u32); rows];
    for p in &cloud.points {
        let ring = p.ring as usize;
        if ring >= rows || !p.azimuth.is_finite() {
            continue;
        }
        if p.elevation.is_finite() {
            elev[ring].0 += p.elevation as f64;
            elev[ring].1 += 1;
        }
        // Measured from the left edge and wrapped, so a span across ±π works too.
        let from_left = wrap(az_hi - p.azimuth - PI) + PI;
        if from_left > az_hi - az_lo + 1e-6 {
            continue; // outside the field of view shown
        }
        let col = ((from_left * bins_per_rad).floor() as usize).min(cols - 1);
        let b = &mut best[ring * cols + col];
        let val = splat_value(p.intensity);
        if val > *b {
            *b = val;
        }
    }
    let mean = |(s, n): (f64, u32)| s / n as f64;
    let with_points: Vec<usize> = (0..rows).filter(|&r| elev[r].1 > 0).collect();
    // Ring 0 goes on top only when it is the highest beam (Ouster numbering); otherwise
    // (Velodyne-style, ring 0 lowest) it goes at the bottom, so up is up either way.
    let ring0_on_top = match (with_points.first(), with_points.last()) {
        (Some(&a), Some(&b)) if a != b => mean(elev[a]) > mean(elev[b]),
        _ => false,
    };
    for ring in 0..rows {
        let row = if ring0_on_top { ring } else { rows - 1 - ring };
        for col in 0..cols {
            let b = best[ring * cols + col];
            let colour = if b != EMPTY { map.color(b) } else { PANEL_BG };
            for dy in 0..l.row_h {
                pic.put(l.range_x0 + col, l.range_y0 + row * l.row_h + dy, colour);
            }
        }
    }
}

fn draw_legend(pic: &mut Picture, l: &Layout, o: &PictureOptions, map: &IntensityMap) {
    let scale = l.text_scale;
    let title_x = l.width.saturating_sub(text_width(LEGEND_TITLE, scale)) / 2;
    let title_y = l.legend_y0 - TEXT_GAP - 8 * scale;
    pic.text(title_x as i64, title_y as i64, LEGEND_TITLE, scale);
    draw_bar(pic, l, o, map);
    legend_values(pic, l, o);
}

/// The values under the colour bar: its ends (left-aligned at the left end,
/// right-aligned at the right), then each decade tick between, centred on it, where it
/// does not run into a value already written.
fn legend_values(pic: &mut Picture, l: &Layout, o: &PictureOptions) {
    let scale = l.text_scale;
    let y = (l.legend_y0 + LEGEND_H + TICK_AREA + TEXT_GAP / 2) as i64;
    let w = l.legend_w;
    let denom = (w.max(2) - 1) as f32;
    let value = |d: f32| short_number(10f32.powf(d));
    let (lo, hi) = (value(o.log10_min), value(o.log10_max));
    let x0 = l.legend_x0 as i64;
    let x1 = (l.legend_x0 + w) as i64 - text_width(&hi, scale) as i64;
    let mut taken = vec![
        (x0, x0 + text_width(&lo, scale) as i64),
        (x1, x1 + text_width(&hi, scale) as i64),
    ];
    pic.text(x0, y, &lo, scale);
    pic.text(x1, y, &hi, scale);
    let mut d = o.log10_min.floor() + 1.0;
    while d < o.log10_max {
        let label = value(d);
        let at = l.legend_x0 as f32 + (d - o.log10_min) / (o.log10_max - o.log10_min) * denom;
        let half = text_width(&label, scale) as i64 / 2;
        let span = (at.round() as i64 - half, at.round() as i64 + half);
        // 8 px apart at least.
        if taken.iter().all(|t| span.1 + 8 <= t.0 || t.1 + 8 <= span.0) {
            pic.text(span.0, y, &label, scale);
            taken.push(span);
        }
        d += 1.0;
    }
}

fn draw_bar(pic: &mut Picture, l: &Layout, o: &PictureOptions, map: &IntensityMap) {
    let w = l.legend_w;
    let denom = (w.max(2) - 1) as f32;
    for x in 0..w {
        let c = map.at(x as f32 / denom);
        for y in 0..LEGEND_H {
            pic.put(l.legend_x0 + x, l.legend_y0 + y, c);
        }
    }
    let span = o.log10_max - o.log10_min;
    let mut d = o.log10_min.ceil();
    while d <= o.log10_max {
        let x = ((d - o.log10_min) / span * denom).round() as usize;
        let len = if d == 0.0 { 6 } else { 3 };
        for y in 0..len {
            pic.put(
                l.legend_x0 + x.min(w - 1),
                l.legend_y0 + LEGEND_H + 1 + y,
                TICK,
            );
        }
        d += 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{intensity_color, Point};

    fn pt(x: f32, y: f32, intensity: f32, ring: u16, elevation: f32) -> Point {
        Point {
            x,
            y,
            z: 0.0,
            intensity,
            range: (x * x + y * y).sqrt(),
            ring,
            azimuth: y.atan2(x),
            elevation,
            ..Point::default()
        }
    }

    /// 16 rings, elevation rising with the ring number (ring 0 lowest).
    fn ring_cloud() -> PointCloud {
        let mut points = vec![pt(10.0, 0.0, 1.0, 0, -0.2), pt(0.0, 10.0, 0.1, 3, -0.1)];
        points.push(pt(-20.0, -20.0, 5.0, 15, 0.2));
        // Behind-left, so the azimuths cover more than 3/4 of a turn: a spinning sensor.
        points.push(pt(-10.0, 1.0, 0.5, 15, 0.2));
        PointCloud { points }
    }

    fn col(x: f32, extent: f32, n: u32) -> u32 {
        ((extent - x) * n as f32 / (2.0 * extent)).floor() as u32
    }

    #[test]
    fn size_follows_layout() {
        let pic = render_picture(&ring_cloud(), &PictureOptions::default()).unwrap();
        // 1024 BEV + 6 gap + 16 rings × 8 px + 6 gap + title (16 px + 4) + 10 bar
        // + 8 ticks + values (16 px + 4).
        assert_eq!((pic.width, pic.height), (1024, 1222));
        assert_eq!(pic.rgb.len(), 1024 * 1222 * 3);
        let opts = PictureOptions {
            bev_size: 200,
            columns: 300,
            channels: Some(64),
            ..PictureOptions::default()
        };
        let pic = render_picture(&ring_cloud(), &opts).unwrap();
        // 64 rings × 4 px; text at 8 px (+ 4) in a picture this narrow.
        assert_eq!(
            (pic.width, pic.height),
            (300, 200 + 6 + 256 + 6 + 12 + 18 + 12)
        );
    }

    #[test]
    fn point_ahead_lights_the_pixel_above_the_centre() {
        let o = PictureOptions::default();
        let pic = render_picture(&ring_cloud(), &o).unwrap();
        let c = intensity_color(1.0, -2.0, 1.0);
        // x = 10 m forward, y = 0: column 512 (centre), row (60 - 10) · 1024/120 = 426.7.
        let (u, v) = (col(0.0, 60.0, 1024), col(10.0, 60.0, 1024));
        assert_eq!((u, v), (512, 426));
        assert_eq!(pic.pixel(u, v), c);
        // The mirror image behind the sensor holds no point.
        assert_ne!(pic.pixel(u, 1024 - v), c);
        assert!([PANEL_BG, GRID].contains(&pic.pixel(u, 1024 - v)));
        // y = 10 m (left) lands left of the centre on the centre row.
        assert_eq!(
            pic.pixel(col(10.0, 60.0, 1024), 512),
            intensity_color(0.1, -2.0, 1.0)
        );
        // Far from any point, circle and the sensor cross: background.
        assert_eq!(
            pic.pixel(col(25.0, 60.0, 1024), col(-15.0, 60.0, 1024)),
            PANEL_BG
        );
        // The sensor cross.
        assert_eq!(pic.pixel(512 + 2, 512), SENSOR);
    }

    /// The azimuth at the centre of column `k` of a full-circle range image.
    fn az_of_col(k: u32, columns: u32) -> f32 {
        PI - (k as f32 + 0.5) * 2.0 * PI / columns as f32
    }

    #[test]
    fn range_image_rows_are_rings_columns_azimuth() {
        let mut cloud = ring_cloud();
        for p in &mut cloud.points {
            // Away from bin edges, where either neighbour would be right.
            p.azimuth = az_of_col(
                ((PI - p.azimuth) / (2.0 * PI) * 1024.0).round() as u32,
                1024,
            );
        }
        let pic = render_picture(&cloud, &PictureOptions::default()).unwrap();
        let y0 = 1024 + 6;
        // Ring 0 is the lowest beam, so it is the bottom row (15); azimuth 0 is the middle.
        for dy in 0..8 {
            assert_eq!(
                pic.pixel(512, y0 + 15 * 8 + dy),
                intensity_color(1.0, -2.0, 1.0)
            );
        }
        // Ring 3, azimuth +90° (left): a quarter of the way in from the left edge.
        assert_eq!(pic.pixel(256, y0 + 12 * 8), intensity_color(0.1, -2.0, 1.0));
        // Ring 15 (top row) at azimuth -135°: 7/8 of the way across.
        assert_eq!(pic.pixel(896, y0 + 7), intensity_color(5.0, -2.0, 1.0));
        // Neighbouring and empty cells are dark.
        assert_eq!(pic.pixel(513, y0 + 15 * 8), PANEL_BG);
        assert_eq!(pic.pixel(100, y0 + 40), PANEL_BG);
    }

    #[test]
    fn ring_zero_on_top_when_it_is_the_highest_beam() {
        let cloud = PointCloud {
            points: vec![pt(10.0, 0.0, 1.0, 0, 0.3), pt(10.0, 0.0, 1.0, 1, -0.3)],
        };
        let o = PictureOptions {
            row_height: Some(4),
            ..PictureOptions::default()
        };
        let pic = render_picture(&cloud, &o).unwrap();
        let y0 = 1024 + 6;
        assert_eq!(pic.pixel(512, y0), intensity_color(1.0, -2.0, 1.0));
        assert_eq!(pic.pixel(512, y0 + 4), intensity_color(1.0, -2.0, 1.0));
    }

    #[test]
    fn narrow_field_of_view_fills_the_width() {
        // A ±0.5 rad sensor: its span, not the full circle, maps onto the columns.
        let mut points = Vec::new();
        for (az, i) in [(0.5f32, 10.0f32), (-0.5, 0.01), (0.0, 1.0)] {
            points.push(Point {
                azimuth: az,
                intensity: i,
                ..Point::default()
            });
        }
        let o = PictureOptions {
            columns: 100,
            bev_size: 100,
            ..PictureOptions::default()
        };
        let pic = render_picture(&PointCloud { points }, &o).unwrap();
        let y = 100 + 6;
        assert_eq!(pic.pixel(0, y), intensity_color(10.0, -2.0, 1.0));
        assert_eq!(pic.pixel(99, y), intensity_color(0.01, -2.0, 1.0));
        assert_eq!(pic.pixel(50, y), intensity_color(1.0, -2.0, 1.0));
    }

    #[test]
    fn explicit_span_across_the_back_drops_points_outside() {
        // A rear-facing sensor: 2.6 .. 3.6 rad, i.e. across ±π.
        let points = [(3.555f32, 10.0f32), (2.645, 0.01), (0.0, 1.0)]
            .map(|(az, i)| Point {
                azimuth: wrap(az),
                intensity: i,
                ..Point::default()
            })
            .to_vec();
        let o = PictureOptions {
            columns: 100,
            bev_size: 100,
            azimuth_span: Some((2.6, 3.6)),
            ..PictureOptions::default()
        };
        let pic = render_picture(&PointCloud { points }, &o).unwrap();
        let y = 100 + 6;
        assert_eq!(pic.pixel(4, y), intensity_color(10.0, -2.0, 1.0));
        assert_eq!(pic.pixel(95, y), intensity_color(0.01, -2.0, 1.0));
        let lit = (0..100).filter(|&x| pic.pixel(x, y) != PANEL_BG).count();
        assert_eq!(lit, 2, "the point straight ahead is outside the span");
    }

    #[test]
    fn brightest_point_wins_a_shared_pixel() {
        let cloud = PointCloud {
            points: vec![pt(10.0, 0.0, 50.0, 0, 0.0), pt(10.0, 0.0, 0.02, 0, 0.0)],
        };
        let pic = render_picture(&cloud, &PictureOptions::default()).unwrap();
        assert_eq!(pic.pixel(512, 426), intensity_color(50.0, -2.0, 1.0));
    }

    #[test]
    fn legend_spans_the_map_with_decade_ticks() {
        let pic = render_picture(&PointCloud::default(), &PictureOptions::default()).unwrap();
        let (x0, y0) = ((1024 - 512) / 2, 1024 + 6 + 8 + 6 + 20);
        assert_eq!(pic.pixel(x0, y0), intensity_color(0.01, -2.0, 1.0));
        assert_eq!(pic.pixel(x0 + 511, y0), intensity_color(10.0, -2.0, 1.0));
        // R = 1 sits two thirds along and has the long tick.
        let x1 = x0 + (2.0f32 / 3.0 * 511.0).round() as u32;
        assert_eq!(pic.pixel(x1, y0 + 10 + 6), TICK);
        assert_eq!(pic.pixel(x0, y0 + 10 + 3), TICK);
        assert_eq!(pic.pixel(x0, y0 + 10 + 6), IMAGE_BG);
    }

    #[test]
    fn png_file_decodes_to_the_rendered_image() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pics/frame_000000.png");
        let o = PictureOptions::default();
        write_picture(&path, &ring_cloud(), &o).unwrap();
        let dec = png::Decoder::new(io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (1024, 1222));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(
            &buf[..info.buffer_size()],
            &render_picture(&ring_cloud(), &o).unwrap().rgb[..]
        );
    }

    #[test]
    fn bad_options_name_the_field() {
        let cloud = ring_cloud();
        let cases: [(PictureOptions, &str); 6] = [
            (
                PictureOptions {
                    azimuth_span: Some((1.0, 1.0)),
                    ..Default::default()
                },
                "azimuth_span",
            ),
            (
                PictureOptions {
                    bev_extent: 0.0,
                    ..Default::default()
                },
                "bev_extent",
            ),
            (
                PictureOptions {
                    bev_size: 4,
                    ..Default::default()
                },
                "bev_size",
            ),
            (
                PictureOptions {
                    columns: 0,
                    ..Default::default()
                },
                "columns",
            ),
            (
                PictureOptions {
                    log10_min: 2.0,
                    ..Default::default()
                },
                "log10_min",
            ),
            (
                PictureOptions {
                    channels: Some(0),
                    ..Default::default()
                },
                "channels",
            ),
        ];
        for (o, field) in cases {
            let e = render_picture(&cloud, &o).unwrap_err().to_string();
            assert!(e.contains(&format!("`{field}`")), "{e}");
        }
        let huge = PointCloud {
            points: vec![pt(1.0, 0.0, 1.0, u16::MAX, 0.0)],
        };
        let e = render_picture(&huge, &PictureOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("65536 rings") && e.contains("set channels"),
            "{e}"
        );
    }

    /// Whether the font8x8 glyphs of `text`, `scale` px per font pixel, are at (x, y):
    /// every lit font pixel white, every other one the black of the text's box.
    fn glyphs_at(pic: &Picture, x: u32, y: u32, text: &str, scale: u32) -> bool {
        text.chars().enumerate().all(|(i, c)| {
            let glyph = BASIC_FONTS.get(c).unwrap();
            (0..8u32).all(|row| {
                (0..8u32).all(|col| {
                    let lit = glyph[row as usize] & (1 << col) != 0;
                    let px = pic.pixel(x + (8 * i as u32 + col) * scale, y + row * scale);
                    px == if lit { [255, 255, 255] } else { [0, 0, 0] }
                })
            })
        })
    }

    #[test]
    fn rings_are_labelled_in_metres_beside_their_crossing_on_the_right() {
        let pic = render_picture(&PointCloud::default(), &PictureOptions::default()).unwrap();
        // 60 m across 512 px: rings every 10 m, 85.3 px apart; "10 m" doubled is 64 px.
        // The label starts 3 px right of the ring's crossing, its foot 2 px above the line.
        for k in 1..=5u32 {
            let x = 512 + (k as f32 * 10.0 * 1024.0 / 120.0).round() as u32 + 3;
            let text = format!("{} m", 10 * k);
            assert!(glyphs_at(&pic, x, 512 - 2 - 16, &text, 2), "{text}");
        }
        // The 60 m ring is the panel's edge: no room, no label; none on the left side.
        let white = |x0: u32, x1: u32| {
            (x0..x1).any(|x| (494..510).any(|y| pic.pixel(x, y) == [255, 255, 255]))
        };
        assert!(!white(0, 500));
    }

    #[test]
    fn a_white_triangle_points_along_the_heading() {
        let pic = render_picture(&PointCloud::default(), &PictureOptions::default()).unwrap();
        // Ahead (up) of the sensor at (512, 512): the triangle; behind it: nothing white.
        for (x, y) in [
            (512, 512 - 8),
            (506, 512 - 8),
            (518, 512 - 8),
            (512, 512 - 20),
        ] {
            assert_eq!(pic.pixel(x, y), [255, 255, 255], "({x}, {y})");
        }
        assert_ne!(pic.pixel(505, 512 - 8), [255, 255, 255]);
        for y in 513..540 {
            assert_ne!(pic.pixel(512, y), [255, 255, 255], "behind, row {y}");
        }
    }

    #[test]
    fn the_colour_bar_names_its_quantity_and_its_ends_values() {
        let render = |lo: f32, hi: f32| {
            let o = PictureOptions {
                log10_min: lo,
                log10_max: hi,
                ..PictureOptions::default()
            };
            render_picture(&PointCloud::default(), &o).unwrap()
        };
        let pic = render(-2.0, 1.0);
        // One ring of 8 px: the bar at 1024 + 6 + 8 + 6 + 20 = 1064, its title 20 px
        // above, centred; the values 10 + 8 + 2 px below the bar, the ends aligned with
        // the bar's (x 256 to 768), the decades centred on their ticks.
        let title_x = (1024 - 16 * LEGEND_TITLE.len() as u32) / 2;
        assert!(glyphs_at(&pic, title_x, 1064 - 20, LEGEND_TITLE, 2));
        let y = 1064 + 20;
        assert!(glyphs_at(&pic, 256, y, "0.01", 2));
        assert!(glyphs_at(&pic, 768 - 32, y, "10", 2));
        let at = |d: f32| 256 + ((d + 2.0) / 3.0 * 511.0).round() as u32;
        assert!(glyphs_at(&pic, at(-1.0) - 24, y, "0.1", 2));
        assert!(glyphs_at(&pic, at(0.0) - 8, y, "1", 2));
        // Other ends, other numbers.
        let other = render(-3.0, 0.0);
        assert!(glyphs_at(&other, 256, y, "0.001", 2));
        assert!(glyphs_at(&other, 768 - 16, y, "1", 2));
        let row = |p: &Picture| -> Vec<[u8; 3]> {
            (y..y + 16)
                .flat_map(|y| (0..1024).map(move |x| (x, y)))
                .map(|(x, y)| p.pixel(x, y))
                .collect()
        };
        assert_ne!(row(&pic), row(&other));
    }

    #[test]
    fn short_numbers_for_labels() {
        assert_eq!(short_number(10.0), "10");
        assert_eq!(short_number(2.5), "2.5");
        assert_eq!(short_number(10f32.powf(-2.0)), "0.01");
        assert_eq!(short_number(10f32.powf(-3.0)), "0.001");
        assert_eq!(short_number(250.0), "250");
        assert_eq!(short_number(1e-5), "1e-5");
        assert_eq!(ring_label(20.0), "20 m");
    }

    #[test]
    fn grid_steps_are_one_two_five() {
        assert_eq!(grid_step(60.0), 10.0);
        assert_eq!(grid_step(20.0), 5.0);
        assert_eq!(grid_step(200.0), 50.0);
        assert_eq!(grid_step(5.0), 1.0);
    }
}
