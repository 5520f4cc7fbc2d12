//! Paper 000's workload and its own method beside it. The sensor follows the paper's
//! evaluation: 1 024 columns × 16 rows over 133° × 10° (16 384 beams), each beam a
//! Gaussian kernel sampled by 68 × 68 sub-rays (the paper's 68-pixel kernels in a
//! 4 096-pixel-wide image), 120 m in 0.1 m range bins, the first echo (the paper's single
//! closest echo above threshold); an 8 ns pulse, so that Δr = 0.1 m is within the
//! σ_r/4 the waveform allows. Alg. 2, range stacking (`reference::stacking`), runs on
//! the CPU over a range and intensity image of the same field of view rendered by the CPU
//! reference, one pixel per kernel cell, and its nearest echoes are compared with the
//! model's on a sample of the beams.

use super::BenchError;
use crate::material::{MaterialDb, MaterialMapping};
use crate::model::{Echo, FrameSettings};
use crate::reference::stacking::{gaussian_taps, range_stacking, RangeImage, StackingParams};
use crate::reference::CpuSimulator;
use crate::scene::Scene;
use crate::sensor::{
    gaussian_sigma, parse_sensor, Beam, BeamKernel, Sensor, SensorError, SubRaySample,
};
use glam::Vec3;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// The paper's beams across its field of view, and their rows.
pub const PAPER_COLUMNS: u32 = 1024;
const ROWS: u32 = 16;
const H_FOV_DEG: f64 = 133.0;
/// Kernel cells per axis: sub-rays per beam are its square.
pub const KERNEL_PIXELS: u32 = 68;
/// At most this many beams (evenly spread) are compared with the model's CPU reference.
const COMPARED_BEAMS: usize = 1024;

/// Paper 000's sensor with `columns` columns at the paper's column spacing (1 024: its
/// whole 133°; fewer: a narrower field of view for a CPU driver).
pub fn paper_sensor(columns: u32) -> Result<Sensor, SensorError> {
    let step = H_FOV_DEG / f64::from(PAPER_COLUMNS - 1);
    let half = step * f64::from(columns.max(2) - 1) / 2.0;
    let subrays = KERNEL_PIXELS * KERNEL_PIXELS;
    let yaml = format!(
        "name: paper-000\n\
         pattern:\n  grid: {{ h_fov_deg: [{lo}, {half}], v_fov_deg: [-5, 5], h_res_deg: {step}, \
         channels: {ROWS} }}\n\
         mount: {{ translation: [0.0, 0.0, 1.8], rotation_deg: [0, 0, 0] }}\n\
         range: {{ min: 0.5, max: 120 }}\n\
         frame_rate: 10\n\
         wavelength_nm: 905\n\
         detection: {{ reference_reflectance: 0.10, reference_range: 100 }}\n\
         beam: {{ kernel: {{ type: gaussian, divergence_deg: [0.8, 0.8] }}, subrays: {subrays}, \
         sampling: grid }}\n\
         detector: {{ pulse_duration_ns: 8, range_resolution_m: 0.1, return_mode: first, \
         max_returns: 1 }}\n",
        lo = -half
    );
    parse_sensor(&yaml, Path::new("."))
}

/// Alg. 2 beside the workload: its image, its time and how it compares.
#[derive(Debug, Clone, Serialize)]
pub struct StackingResult {
    /// The rendered image (pixels) and the kernel's width in pixels.
    pub width: usize,
    pub height: usize,
    pub kernel_pixels: u32,
    /// Range slices s_max, and those that held a pixel (the rest are skipped).
    pub slices: u32,
    pub slices_convolved: u32,
    /// CPU times: rendering the image (the CPU reference's rays), then range stacking.
    pub render_ms: f64,
    pub stacking_ms: f64,
    pub threads: usize,
    /// Beams compared with the model's CPU reference, and the share that agree.
    pub beams_compared: usize,
    pub agreement: f64,
}

/// The image's geometry: pixel pitch (rad) and the azimuth and elevation of pixel (0, 0).
struct Raster {
    pitch: f32,
    az0: f32,
    el0: f32,
    width: usize,
    height: usize,
}

impl Raster {
    /// Square pixels of one kernel cell, over the beams' directions grown by half a kernel.
    fn of(sensor: &Sensor) -> Raster {
        let support = sensor.kernel.support();
        let pitch = ((support.h1 - support.h0) / f64::from(KERNEL_PIXELS)) as f32;
        let (mut az_lo, mut az_hi) = (f32::MAX, f32::MIN);
        let (mut el_lo, mut el_hi) = (f32::MAX, f32::MIN);
        for b in &sensor.beams {
            (az_lo, az_hi) = (az_lo.min(b.azimuth), az_hi.max(b.azimuth));
            (el_lo, el_hi) = (el_lo.min(b.elevation), el_hi.max(b.elevation));
        }
        let margin = pitch * (KERNEL_PIXELS / 2) as f32;
        let cells = |span: f32| ((span + 2.0 * margin) / pitch).ceil() as usize + 1;
        Raster {
            pitch,
            az0: az_hi + margin,
            el0: el_hi + margin,
            width: cells(az_hi - az_lo),
            height: cells(el_hi - el_lo),
        }
    }

    /// Pixel (u, v) looks at azimuth az0 − u·pitch, elevation el0 − v·pitch (row 0 at
    /// the top, column 0 at the left as seen from behind the sensor).
    fn pixel_beam(&self, u: usize, v: usize) -> Beam {
        Beam {
            azimuth: self.az0 - u as f32 * self.pitch,
            elevation: self.el0 - v as f32 * self.pitch,
            time: 0.0,
            ring: 0,
            origin: Vec3::ZERO,
        }
    }

    /// The pixel a beam's centre falls on.
    fn pixel_of(&self, b: &Beam) -> usize {
        let u = ((self.az0 - b.azimuth) / self.pitch).round() as usize;
        let v = ((self.el0 - b.elevation) / self.pitch).round() as usize;
        v.min(self.height - 1) * self.width + u.min(self.width - 1)
    }
}

/// Renders the range and intensity image with the CPU reference: one thin ray per
/// pixel, its first surface's range and signal (R(θ)/r², the whole beam's signal were it
/// all on that surface).
fn render(cpu: &CpuSimulator, raster: &Raster, frame: &FrameSettings) -> RangeImage {
    let (w, h) = (raster.width, raster.height);
    let pixels: Vec<Beam> = (0..w * h)
        .map(|i| raster.pixel_beam(i % w, i / w))
        .collect();
    let records = cpu.trace(&pixels, &[SubRaySample::THIN], frame, 1);
    let hit = |r: &crate::model::SubRayRecord| r.signal > 0.0;
    RangeImage {
        width: w,
        height: h,
        range: records
            .iter()
            .map(|r| if hit(r) { r.range } else { f32::INFINITY })
            .collect(),
        intensity: records
            .iter()
            .map(|r| if hit(r) { r.signal } else { 0.0 })
            .collect(),
    }
}

/// Alg. 2 on the CPU for `sensor` on `scene`, timed, and its nearest echoes against the
/// first echoes of the model's CPU reference on up to COMPARED_BEAMS beams spread evenly:
/// a beam agrees when neither sees an echo, or both do within 0.3 m (three slices).
pub fn stacking_baseline(
    scene: &Scene,
    sensor: &Sensor,
    subrays: &[SubRaySample],
) -> Result<StackingResult, BenchError> {
    let BeamKernel::Gaussian { div_h, div_v } = sensor.kernel else {
        return Err(BenchError::StackingKernel(sensor.name.clone()));
    };
    let sigma = (gaussian_sigma(div_h), gaussian_sigma(div_v));
    let db = MaterialDb::builtin()?.for_wavelength(sensor.wavelength_nm);
    let map = db.resolve(&scene.materials, &MaterialMapping::default())?;
    let cpu = CpuSimulator::new(scene, &db, &map)?;
    let frame = FrameSettings::for_sensor(sensor, sensor.mount.to_affine(), None, 1, 0);
    let raster = Raster::of(sensor);
    let t = Instant::now();
    let image = render(&cpu, &raster, &frame);
    let render_ms = t.elapsed().as_secs_f64() * 1e3;
    let params = StackingParams {
        bin_width: frame.waveform.bin_width,
        max_range: frame.max_range,
        threshold: frame.waveform.threshold,
    };
    // The kernel's marginals over one axis, one tap per pixel.
    let taps = |sigma: f64| gaussian_taps(KERNEL_PIXELS as usize, sigma / f64::from(raster.pitch));
    let (h, v) = (taps(sigma.0), taps(sigma.1));
    let t = Instant::now();
    let stacked = range_stacking(&image, &h, &v, &params);
    let stacking_ms = t.elapsed().as_secs_f64() * 1e3;
    let every = sensor.beams.len().div_ceil(COMPARED_BEAMS).max(1);
    let sample: Vec<Beam> = sensor.beams.iter().step_by(every).copied().collect();
    let model = cpu.frame(&sample, subrays, &frame, 1);
    let nearest = |b: &Beam| stacked.range(raster.pixel_of(b), params.bin_width);
    let agree = agreeing(&sample, (&model.1, &model.2), nearest);
    Ok(StackingResult {
        width: image.width,
        height: image.height,
        kernel_pixels: KERNEL_PIXELS,
        slices: stacked.s_max,
        slices_convolved: stacked.slices_convolved,
        render_ms,
        stacking_ms,
        threads: rayon::current_num_threads(),
        beams_compared: sample.len(),
        agreement: agree as f64 / sample.len().max(1) as f64,
    })
}

/// Beams whose Alg. 2 range (`nearest`) and first model echo (of `echoes`, `counts`)
/// are both absent or within 0.3 m of each other.
fn agreeing(
    beams: &[Beam],
    (echoes, counts): (&[Echo], &[u32]),
    nearest: impl Fn(&Beam) -> Option<f32>,
) -> usize {
    let slots = echoes.len() / beams.len().max(1);
    let first = |i: usize| {
        let found = &echoes[i * slots..][..counts[i] as usize];
        found.iter().map(|e| e.range).reduce(f32::min)
    };
    beams
        .iter()
        .enumerate()
        .filter(|&(i, b)| match (nearest(b), first(i)) {
            (None, None) => true,
            (Some(a), Some(b)) => (a - b).abs() <= 0.3,
            _ => false,
        })
        .count()
}
