//! A PNG of one frame: a bird's-eye view above a range image, coloured by intensity.
//!
//! Layout, top to bottom: the bird's-eye panel (`bev_size` square, x forward = up,
//! y left = left, range circles as a faint grid, a grey cross at the sensor), the range
//! image (one band of `row_height` px per ring, one px column per azimuth bin, the left
//! edge the largest azimuth so the left of the vehicle is on the left), and a colour bar
//! with a tick at every decade of apparent reflectance (the long tick is R = 1, a white
//! Lambertian target). Where several points land in one pixel the brightest wins, so
//! retroreflectors stay visible at any zoom.

use super::colormap::IntensityMap;
use super::{AtomicFiles, OutputError, PointCloud};
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
}

const IMAGE_BG: [u8; 3] = [0, 0, 0];
const PANEL_BG: [u8; 3] = [18, 18, 22];
const GRID: [u8; 3] = [46, 46, 56];
const SENSOR: [u8; 3] = [170, 170, 170];
const TICK: [u8; 3] = [200, 200, 200];
const GAP: usize = 6;
const LEGEND_H: usize = 10;
/// Room below the colour bar for its ticks (the long one is 6 px).
const TICK_AREA: usize = 8;
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
    let legend_y0 = range_y0 + channels * row_h + GAP;
    let legend_w = width.saturating_sub(16).clamp(1, 512);
    Ok(Layout {
        width,
        height: legend_y0 + LEGEND_H + TICK_AREA,
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
        // 1024 BEV + 6 gap + 16 rings × 8 px + 6 gap + 10 bar + 8 ticks.
        assert_eq!((pic.width, pic.height), (1024, 1182));
        assert_eq!(pic.rgb.len(), 1024 * 1182 * 3);
        let opts = PictureOptions {
            bev_size: 200,
            columns: 300,
            channels: Some(64),
            ..PictureOptions::default()
        };
        let pic = render_picture(&ring_cloud(), &opts).unwrap();
        // 64 rings × 4 px.
        assert_eq!((pic.width, pic.height), (300, 200 + 6 + 256 + 6 + 18));
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
        let (x0, y0) = ((1024 - 512) / 2, 1024 + 6 + 8 + 6);
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
        assert_eq!((info.width, info.height), (1024, 1182));
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

    #[test]
    fn grid_steps_are_one_two_five() {
        assert_eq!(grid_step(60.0), 10.0);
        assert_eq!(grid_step(20.0), 5.0);
        assert_eq!(grid_step(200.0), 50.0);
        assert_eq!(grid_step(5.0), 1.0);
    }
}
