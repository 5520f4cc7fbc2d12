//! Log-log line charts as PNG (the benchmark suite's `--plot`): decade grid lines and
//! labels in the built-in 8×8 font, a polyline with square markers per series, a legend.
//! Plain raster code, no plotting library.

use super::{write_atomic, OutputError, Picture};
use font8x8::{UnicodeFonts, BASIC_FONTS};
use std::path::Path;

/// One line of a chart: (x, y) points, both > 0 (others are left out of the drawing).
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub rgb: [u8; 3],
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

/// Size of one chart's panel (pixels); charts sit side by side.
pub const PANEL: [u32; 2] = [640, 480];
/// The plot area's margins inside a panel: left, top, right, bottom.
const MARGIN: [u32; 4] = [72, 40, 16, 56];
const BACKGROUND: [u8; 3] = [255, 255, 255];
const INK: [u8; 3] = [40, 40, 40];
const GRID: [u8; 3] = [220, 220, 220];

/// The decades [10^lo, 10^hi] that hold every positive value of `values` (one decade
/// around a lone value).
fn decades(values: impl Iterator<Item = f64>) -> (i32, i32) {
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v.log10());
        hi = hi.max(v.log10());
    }
    if lo > hi {
        return (0, 1);
    }
    let (lo, hi) = (lo.floor() as i32, hi.ceil() as i32);
    (lo, hi.max(lo + 1))
}

/// Where values go in one panel: log10 of x and y onto the plot area.
struct Axes {
    x: (i32, i32),
    y: (i32, i32),
    left: f64,
    top: f64,
    width: f64,
    height: f64,
}

impl Axes {
    fn of(chart: &Chart, origin_x: u32) -> Axes {
        let pts = || chart.series.iter().flat_map(|s| s.points.iter());
        Axes {
            x: decades(pts().map(|p| p.0)),
            y: decades(pts().map(|p| p.1)),
            left: f64::from(origin_x + MARGIN[0]),
            top: f64::from(MARGIN[1]),
            width: f64::from(PANEL[0] - MARGIN[0] - MARGIN[2]),
            height: f64::from(PANEL[1] - MARGIN[1] - MARGIN[3]),
        }
    }

    /// The pixel of (x, y), both > 0.
    fn at(&self, x: f64, y: f64) -> (f64, f64) {
        let fx = (x.log10() - f64::from(self.x.0)) / f64::from(self.x.1 - self.x.0);
        let fy = (y.log10() - f64::from(self.y.0)) / f64::from(self.y.1 - self.y.0);
        (
            self.left + fx * self.width,
            self.top + (1.0 - fy) * self.height,
        )
    }
}

/// Draws `charts` side by side, each in a panel of 640 × 480 pixels.
pub fn render_charts(charts: &[Chart]) -> Picture {
    let n = charts.len().max(1) as u32;
    let mut pic = Picture {
        width: PANEL[0] * n,
        height: PANEL[1],
        rgb: BACKGROUND.repeat((PANEL[0] * n * PANEL[1]) as usize),
    };
    for (i, chart) in charts.iter().enumerate() {
        draw_chart(&mut pic, chart, i as u32 * PANEL[0]);
    }
    pic
}

/// Renders `charts` and writes them as a PNG at `path`, atomically.
pub fn write_charts(path: &Path, charts: &[Chart]) -> Result<(), OutputError> {
    let pic = render_charts(charts);
    write_atomic(path, |w| pic.write_png(w, png::Compression::Balanced))?;
    Ok(())
}

fn draw_chart(pic: &mut Picture, chart: &Chart, origin_x: u32) {
    let a = Axes::of(chart, origin_x);
    let (right, bottom) = (a.left + a.width, a.top + a.height);
    for d in a.x.0..=a.x.1 {
        let (x, _) = a.at(10f64.powi(d), 10f64.powi(a.y.0));
        line(pic, (x, a.top), (x, bottom), GRID);
        let label = decade_label(d);
        text(pic, x - 4.0 * label.len() as f64, bottom + 6.0, &label, INK);
    }
    for d in a.y.0..=a.y.1 {
        let (_, y) = a.at(10f64.powi(a.x.0), 10f64.powi(d));
        line(pic, (a.left, y), (right, y), GRID);
        let label = decade_label(d);
        text(
            pic,
            a.left - 8.0 * label.len() as f64 - 6.0,
            y - 4.0,
            &label,
            INK,
        );
    }
    line(pic, (a.left, bottom), (right, bottom), INK);
    line(pic, (a.left, a.top), (a.left, bottom), INK);
    let centre = |s: &str| a.left + (a.width - 8.0 * s.len() as f64) / 2.0;
    text(pic, centre(&chart.title), 12.0, &chart.title, INK);
    text(
        pic,
        centre(&chart.x_label),
        bottom + 26.0,
        &chart.x_label,
        INK,
    );
    text(
        pic,
        f64::from(origin_x) + 4.0,
        a.top - 14.0,
        &chart.y_label,
        INK,
    );
    for (k, s) in chart.series.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|&(x, y)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite())
            .collect();
        pts.sort_by(|p, q| p.0.total_cmp(&q.0));
        let px: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| a.at(x, y)).collect();
        for w in px.windows(2) {
            line(pic, w[0], w[1], s.rgb);
        }
        for &(x, y) in &px {
            square(pic, x, y, 3, s.rgb);
        }
        let ly = a.top + 8.0 + 12.0 * k as f64;
        square(pic, a.left + 12.0, ly + 3.0, 3, s.rgb);
        text(pic, a.left + 22.0, ly, &s.label, INK);
    }
}

/// "10^d" as the font can write it: 0.01, 0.1, 1, 10, …, 1e5 past four digits.
fn decade_label(d: i32) -> String {
    match d {
        -2..=0 => format!("{}", 10f64.powi(d)),
        1..=4 => format!("{}", 10i64.pow(d as u32)),
        _ => format!("1e{d}"),
    }
}

fn put(pic: &mut Picture, x: i64, y: i64, rgb: [u8; 3]) {
    if x >= 0 && y >= 0 && (x as u32) < pic.width && (y as u32) < pic.height {
        let i = (y as usize * pic.width as usize + x as usize) * 3;
        pic.rgb[i..i + 3].copy_from_slice(&rgb);
    }
}

/// A one-pixel line from `p` to `q` (steps of at most a pixel along the longer axis).
fn line(pic: &mut Picture, p: (f64, f64), q: (f64, f64), rgb: [u8; 3]) {
    let steps = (q.0 - p.0).abs().max((q.1 - p.1).abs()).ceil().max(1.0) as usize;
    for i in 0..=steps {
        let t = i as f64 / steps as f64;
        let (x, y) = (p.0 + t * (q.0 - p.0), p.1 + t * (q.1 - p.1));
        put(pic, x.round() as i64, y.round() as i64, rgb);
    }
}

/// A filled square of half side `half` centred on (x, y).
fn square(pic: &mut Picture, x: f64, y: f64, half: i64, rgb: [u8; 3]) {
    let (cx, cy) = (x.round() as i64, y.round() as i64);
    for dy in -half..=half {
        for dx in -half..=half {
            put(pic, cx + dx, cy + dy, rgb);
        }
    }
}

/// `s` in the 8×8 font, its top-left corner at (x, y).
fn text(pic: &mut Picture, x: f64, y: f64, s: &str, rgb: [u8; 3]) {
    let (x0, y0) = (x.round() as i64, y.round() as i64);
    for (i, c) in s.chars().enumerate() {
        let glyph = BASIC_FONTS
            .get(c)
            .or_else(|| BASIC_FONTS.get('?'))
            .unwrap_or([0; 8]);
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    put(pic, x0 + 8 * i as i64 + col, y0 + row as i64, rgb);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: [u8; 3] = [200, 0, 0];

    fn chart(points: Vec<(f64, f64)>) -> Chart {
        Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                label: "s".into(),
                rgb: RED,
                points,
            }],
        }
    }

    #[test]
    fn a_point_lands_where_its_logarithms_put_it() {
        // Axes 1..100 both ways: (10, 10) is the plot area's centre, (1, 100) its
        // top-left corner, whatever the drawing code computes.
        let pic = render_charts(&[chart(vec![(1.0, 100.0), (10.0, 10.0), (100.0, 1.0)])]);
        let (w, h) = (
            PANEL[0] - MARGIN[0] - MARGIN[2],
            PANEL[1] - MARGIN[1] - MARGIN[3],
        );
        let centre = (MARGIN[0] + w / 2, MARGIN[1] + h / 2);
        assert_eq!(pic.pixel(centre.0, centre.1), RED);
        assert_eq!(pic.pixel(MARGIN[0] + 1, MARGIN[1] + 1), RED);
        // The line between them passes a quarter of the way along the diagonal.
        assert_eq!(pic.pixel(MARGIN[0] + w / 4, MARGIN[1] + h / 4), RED);
        // Off the line: background or grid, not the series.
        assert_ne!(pic.pixel(MARGIN[0] + w / 4, MARGIN[1] + 3 * h / 4), RED);
    }

    #[test]
    fn decades_cover_the_values_and_skip_the_unplottable() {
        assert_eq!(decades([3.0, 450.0].into_iter()), (0, 3));
        assert_eq!(decades([0.0, -1.0, f64::NAN, 20.0].into_iter()), (1, 2));
        assert_eq!(decades(std::iter::empty()), (0, 1));
        let pic = render_charts(&[chart(vec![(0.0, 5.0), (f64::NAN, 1.0)])]);
        let red = pic.rgb.chunks(3).filter(|p| *p == RED).count();
        assert_eq!(
            red,
            7 * 7,
            "the legend's marker alone: nothing plottable drawn"
        );
    }
}
