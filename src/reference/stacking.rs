//! Paper 000's Alg. 2, range stacking, as a CPU baseline beside the binned waveform.
//!
//! The paper renders a range image ϱ and an intensity image ρ̂ (a rasteriser's depth and
//! colour buffers), then walks the range slices s = s_max … 1 (s_max = ⌊r_max/Δr⌋) from
//! far to near: the slice's intensities (ρ̂ where ⌊ϱ/Δr⌋ = s, 0 elsewhere) are
//! convolved with the beam kernel κη, and wherever the result reaches the threshold
//! ρ_min it becomes the pixel's echo, so the nearest slice above threshold wins. The
//! kernel is separable (κη = H·V), so each slice costs two 1-D convolutions; only the
//! rectangle around a slice's pixels (grown by the kernel) is convolved, and empty
//! slices are skipped (their convolution is zero: the paper's "skipping depths"
//! optimisation, exact here). Each beam then reads its pixel.
//!
//! Deliberately the paper's method, not this crate's model: no pulse shape in range (a
//! slice is a range bin), one echo per beam (the nearest above threshold), and the
//! threshold applies to a slice's sum rather than to the pulse-convolved waveform.

use rayon::prelude::*;

/// A rendered range and intensity image, row-major, row 0 at the top.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeImage {
    pub width: usize,
    pub height: usize,
    /// Range of each pixel's surface (m); infinite where the pixel sees nothing.
    pub range: Vec<f32>,
    /// Each pixel's intensity ρ̂ (the signal a whole beam would receive from its surface).
    pub intensity: Vec<f32>,
}

/// The slices and threshold of range stacking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StackingParams {
    /// Δr (m), the slices' depth.
    pub bin_width: f32,
    /// r_max (m): slices 1 … ⌊r_max/Δr⌋.
    pub max_range: f32,
    /// ρ_min: a convolved slice value at least this is an echo.
    pub threshold: f32,
}

/// Per pixel, the nearest slice whose convolved intensity reached the threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Stacked {
    /// The slice index s, or `s_max` where none reached it (as the paper initialises it).
    pub slice: Vec<u32>,
    /// The convolved intensity of that slice (0 where none).
    pub intensity: Vec<f32>,
    pub s_max: u32,
    /// Slices that held at least one pixel (the others are skipped).
    pub slices_convolved: u32,
}

impl Stacked {
    /// The range of pixel `i`'s echo (the middle of its slice), if it has one.
    pub fn range(&self, i: usize, bin_width: f32) -> Option<f32> {
        let s = self.slice[i];
        (s < self.s_max).then_some((s as f32 + 0.5) * bin_width)
    }
}

/// A pixel rectangle: columns x0..x1, rows y0..y1 (exclusive ends).
#[derive(Debug, Clone, Copy)]
struct Rect {
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
}

impl Rect {
    fn width(&self) -> usize {
        self.x1 - self.x0
    }
}

/// Range stacking of `img` with the separable kernel `h` (columns) × `v` (rows): tap i
/// of a kernel of n taps lies at offset i − ⌊n/2⌋ (centred for odd n, half a pixel
/// early for even n).
pub fn range_stacking(img: &RangeImage, h: &[f32], v: &[f32], p: &StackingParams) -> Stacked {
    let s_max = (p.max_range / p.bin_width).floor().max(1.0) as u32;
    let n = img.width * img.height;
    let mut out = Stacked {
        slice: vec![s_max; n],
        intensity: vec![0.0; n],
        s_max,
        slices_convolved: 0,
    };
    let buckets = slice_buckets(img, p.bin_width, s_max);
    let (m, k) = (h.len() / 2, v.len() / 2);
    let mut slice = Vec::new();
    let mut tmp = Vec::new();
    let mut conv = Vec::new();
    for s in (1..s_max).rev() {
        let pixels = &buckets[s as usize];
        let Some(inner) = bounds(pixels, img.width) else {
            continue;
        };
        out.slices_convolved += 1;
        // The rectangle the kernel spreads the slice's pixels over.
        let r = Rect {
            x0: inner.x0.saturating_sub(m),
            x1: (inner.x1 + m).min(img.width),
            y0: inner.y0.saturating_sub(k),
            y1: (inner.y1 + k).min(img.height),
        };
        fill_slice(&mut slice, img, pixels, r);
        convolve_rows(&slice, &mut tmp, r.width(), h);
        convolve_columns(&tmp, &mut conv, r.width(), v);
        for y in r.y0..r.y1 {
            for x in r.x0..r.x1 {
                let c = conv[(y - r.y0) * r.width() + (x - r.x0)];
                if c >= p.threshold {
                    let i = y * img.width + x;
                    out.slice[i] = s;
                    out.intensity[i] = c;
                }
            }
        }
    }
    out
}

/// The pixels of each slice s = ⌊ϱ/Δr⌋ (1 ≤ s < s_max), in pixel order.
fn slice_buckets(img: &RangeImage, bin_width: f32, s_max: u32) -> Vec<Vec<u32>> {
    let mut buckets = vec![Vec::new(); s_max as usize];
    for (i, &r) in img.range.iter().enumerate() {
        let s = (r / bin_width).floor();
        if s >= 1.0 && s < s_max as f32 && img.intensity[i] > 0.0 {
            buckets[s as usize].push(i as u32);
        }
    }
    buckets
}

/// The rectangle around `pixels` (None when there are none).
fn bounds(pixels: &[u32], width: usize) -> Option<Rect> {
    let first = *pixels.first()? as usize;
    let mut r = Rect {
        x0: first % width,
        x1: first % width + 1,
        y0: first / width,
        y1: first / width + 1,
    };
    for &i in pixels {
        let (x, y) = (i as usize % width, i as usize / width);
        r.x0 = r.x0.min(x);
        r.x1 = r.x1.max(x + 1);
        r.y0 = r.y0.min(y);
        r.y1 = r.y1.max(y + 1);
    }
    Some(r)
}

/// `slice` := the rectangle `r` of the image with only `pixels` lit.
fn fill_slice(slice: &mut Vec<f32>, img: &RangeImage, pixels: &[u32], r: Rect) {
    slice.clear();
    slice.resize(r.width() * (r.y1 - r.y0), 0.0);
    for &i in pixels {
        let (x, y) = (i as usize % img.width, i as usize / img.width);
        slice[(y - r.y0) * r.width() + (x - r.x0)] = img.intensity[i as usize];
    }
}

/// `out` := each row of `src` (rows of `width`) convolved with `h`, zero outside.
fn convolve_rows(src: &[f32], out: &mut Vec<f32>, width: usize, h: &[f32]) {
    out.clear();
    out.resize(src.len(), 0.0);
    let m = h.len() / 2;
    // Rows over the host's cores, at least 16 to a task.
    out.par_chunks_mut(width.max(1))
        .zip(src.par_chunks(width.max(1)))
        .with_min_len(16)
        .for_each(|(dst, line)| {
            for (x, &value) in line.iter().enumerate().filter(|(_, &v)| v != 0.0) {
                // Scatter: a lit pixel adds value · h[i] at x + i − m.
                let lo = x.saturating_sub(m);
                let hi = (x + h.len() - m).min(width);
                for (t, d) in dst[lo..hi].iter_mut().enumerate() {
                    *d += value * h[lo + t + m - x];
                }
            }
        });
}

/// `out` := each column of `src` (rows of `width`) convolved with `v`, zero outside.
fn convolve_columns(src: &[f32], out: &mut Vec<f32>, width: usize, v: &[f32]) {
    out.clear();
    out.resize(src.len(), 0.0);
    let rows = src.len() / width.max(1);
    let k = v.len() / 2;
    out.par_chunks_mut(width.max(1))
        .enumerate()
        .with_min_len(16)
        .for_each(|(y, dst)| {
            // Row y gathers v[i] · row y − (i − k), as the rows scatter.
            for (i, &w) in v.iter().enumerate() {
                let Some(yy) = (y + k).checked_sub(i).filter(|&yy| yy < rows) else {
                    continue;
                };
                for (d, &s) in dst.iter_mut().zip(&src[yy * width..][..width]) {
                    *d += w * s;
                }
            }
        });
}

/// `n` taps of a Gaussian of σ = `sigma` taps centred on tap ⌊n/2⌋, summing to 1.
pub fn gaussian_taps(n: usize, sigma: f64) -> Vec<f32> {
    let c = (n / 2) as f64;
    let raw: Vec<f64> = (0..n)
        .map(|i| (-0.5 * ((i as f64 - c) / sigma).powi(2)).exp())
        .collect();
    let sum: f64 = raw.iter().sum();
    raw.iter().map(|w| (w / sum) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(width: usize, height: usize) -> RangeImage {
        RangeImage {
            width,
            height,
            range: vec![f32::INFINITY; width * height],
            intensity: vec![0.0; width * height],
        }
    }

    const P: StackingParams = StackingParams {
        bin_width: 0.1,
        max_range: 120.0,
        threshold: 0.5,
    };

    #[test]
    fn a_wall_behind_a_post_shows_the_post_where_it_is_bright_enough() {
        // A wall at 20 m fills the image; a post at 10 m covers columns 20..30. With a
        // 9-tap box kernel, a pixel sees the post where at least half its kernel is on
        // it (threshold 0.5 of a uniform intensity 1): columns 20 + 4 - 4 .. 30 - 5 + 4.
        let (w, hgt) = (50, 20);
        let mut img = image(w, hgt);
        for y in 0..hgt {
            for x in 0..w {
                let i = y * w + x;
                img.range[i] = if (20..30).contains(&x) { 10.05 } else { 20.05 };
                img.intensity[i] = 1.0;
            }
        }
        let boxk = vec![1.0 / 9.0; 9];
        let one = vec![1.0];
        let out = range_stacking(&img, &boxk, &one, &P);
        assert_eq!(out.s_max, 1200);
        assert_eq!(out.slices_convolved, 2);
        for x in 0..w {
            let i = 10 * w + x;
            // ≥ 5 of the 9 kernel columns on the post (sum 5/9 ≥ 0.5).
            let on_post = (18..32).contains(&x) && {
                let lo = x.saturating_sub(4).max(20);
                let hi = (x + 5).min(30);
                hi > lo && hi - lo >= 5
            };
            let expect = if on_post { 100 } else { 200 };
            assert_eq!(out.slice[i], expect, "column {x}");
            assert_eq!(out.range(i, P.bin_width), Some((expect as f32 + 0.5) * 0.1));
        }
    }

    #[test]
    fn separable_convolution_equals_the_direct_sum() {
        // One lit pixel: the convolved slice is the outer product of the taps.
        let mut img = image(31, 21);
        let c = 10 * 31 + 15;
        img.range[c] = 50.0;
        img.intensity[c] = 1.0;
        let h = gaussian_taps(7, 1.5);
        let v = gaussian_taps(5, 1.0);
        let p = StackingParams {
            threshold: 1e-9,
            ..P
        };
        let out = range_stacking(&img, &h, &v, &p);
        let mut total = 0.0;
        for y in 0..21 {
            for x in 0..31 {
                let i = y * 31 + x;
                let (dx, dy) = (x as i32 - 15, y as i32 - 10);
                let expect = if dx.abs() <= 3 && dy.abs() <= 2 {
                    h[(dx + 3) as usize] * v[(dy + 2) as usize]
                } else {
                    0.0
                };
                assert!((out.intensity[i] - expect).abs() < 1e-7, "({x}, {y})");
                total += out.intensity[i];
            }
        }
        assert!(
            (total - 1.0).abs() < 1e-5,
            "the kernel keeps the power: {total}"
        );
    }

    #[test]
    fn nothing_in_range_gives_no_echo() {
        let mut img = image(8, 8);
        img.range[3] = 500.0; // beyond r_max
        img.intensity[3] = 1.0;
        let out = range_stacking(&img, &[1.0], &[1.0], &P);
        assert_eq!(out.slices_convolved, 0);
        assert!((0..64).all(|i| out.range(i, P.bin_width).is_none()));
    }
}
