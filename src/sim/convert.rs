//! From the plain model to the structs the shaders read: enums become the contract's
//! codes, seeds split into words, and the figures only the simulator knows (record
//! layout, echo slots, device addresses, time slices) are filled in here and nowhere else.

use super::gpu_types::{
    FrameParams, GpuAlphaTexture, GpuMaterial, GpuMedium, GpuSubRay, GpuSweep, WaveformParams,
};
use super::launch::LaunchTile;
use super::SimError;
use crate::contract::{curve_model, estimator, material_class, return_mode, MAX_DROP_CELLS};
use crate::material::MaterialClass;
use crate::model::{
    AlphaTexture, FrameSettings, MaterialEntry, Medium, MediumSlots, RecordLayout, Sweep,
    WEATHER_CLASS,
};
use crate::sensor::{DualPolicy, RangeEstimator, RangeLimit, ReturnMode, SubRaySample};
use crate::weather::optics::CROSSOVER_M;
use glam::Vec3;

/// The kernel's sub-rays as the ray generation shader reads them.
pub fn gpu_subrays(subrays: &[SubRaySample]) -> Vec<GpuSubRay> {
    subrays
        .iter()
        .map(|s| GpuSubRay {
            dh: s.dh,
            dv: s.dv,
            weight: s.weight,
            jitter_h: s.jitter_h,
            jitter_v: s.jitter_v,
            pad0: 0.0,
            pad1: 0.0,
            pad2: 0.0,
        })
        .collect()
}

pub(super) fn material_class_code(class: MaterialClass) -> u32 {
    match class {
        MaterialClass::General => material_class::GENERAL,
        MaterialClass::Retroreflective => material_class::RETROREFLECTIVE,
        MaterialClass::Transparent => material_class::TRANSPARENT,
        MaterialClass::Absorbent => material_class::ABSORBENT,
        MaterialClass::Mirror => material_class::MIRROR,
    }
}

pub(super) fn gpu_material(m: &MaterialEntry) -> GpuMaterial {
    GpuMaterial {
        class_id: material_class_code(m.class),
        transmission: m.transmission,
        table_offset: m.table_offset,
        diffuse_offset: m.diffuse_offset,
        mirror_reflectance: m.mirror_reflectance,
        ior: m.ior,
        reflectance_normal: m.reflectance_normal,
        pane_offset: m.pane_offset,
    }
}

pub(super) fn gpu_alpha_texture(t: &AlphaTexture) -> GpuAlphaTexture {
    GpuAlphaTexture {
        offset: t.offset,
        width: t.width,
        height: t.height,
        wrap_s: t.wrap_s,
        wrap_t: t.wrap_t,
        pad0: 0,
        pad1: 0,
        pad2: 0,
    }
}

fn return_mode_code(mode: ReturnMode) -> u32 {
    match mode {
        ReturnMode::Strongest => return_mode::STRONGEST,
        ReturnMode::First => return_mode::FIRST,
        ReturnMode::Last => return_mode::LAST,
        ReturnMode::Dual(DualPolicy::StrongestLast) => return_mode::DUAL_STRONGEST_LAST,
        ReturnMode::Dual(DualPolicy::StrongestSecond) => return_mode::DUAL_STRONGEST_SECOND,
        ReturnMode::All => return_mode::ALL,
    }
}

fn estimator_code(e: RangeEstimator) -> u32 {
    match e {
        RangeEstimator::Peak => estimator::PEAK,
        RangeEstimator::LeadingEdge => estimator::LEADING_EDGE,
        RangeEstimator::Centroid => estimator::CENTROID,
    }
}

/// (curve_model, curve_a, curve_b) of a range limit.
fn curve_code(limit: RangeLimit) -> (u32, f32, f32) {
    match limit {
        RangeLimit::Threshold => (curve_model::THRESHOLD, 0.0, 0.0),
        RangeLimit::Linear { a, b } => (curve_model::LINEAR, a, b),
        RangeLimit::Quadratic { a, b } => (curve_model::QUADRATIC, a, b),
        RangeLimit::Root2 { b } => (curve_model::ROOT2, 0.0, b),
        RangeLimit::Root3 { b } => (curve_model::ROOT3, 0.0, b),
        RangeLimit::Root4 { b } => (curve_model::ROOT4, 0.0, b),
        RangeLimit::Logarithmic { a, b } => (curve_model::LOGARITHMIC, a, b),
    }
}

/// The waveform pass's push constants for `frame`, whose records are laid out as
/// `layout` and start at device address `records_address`.
pub fn waveform_params(
    frame: &FrameSettings,
    layout: RecordLayout,
    records_address: u64,
) -> WaveformParams {
    let w = &frame.waveform;
    let (curve_model, curve_a, curve_b) = curve_code(w.limit);
    WaveformParams {
        sigma_r: w.sigma_r,
        bin_width: w.bin_width,
        threshold: w.threshold,
        ambient_k: w.ambient_k,
        estimator: estimator_code(w.estimator),
        return_mode: return_mode_code(w.return_mode),
        max_returns: w.max_returns,
        min_separation: w.min_separation,
        curve_model,
        curve_a,
        curve_b,
        range_sigma: w.noise.range_sigma_m,
        range_sigma_snr: w.noise.range_sigma_snr_m,
        amplitude_noise: w.noise.amplitude_rel,
        pd_width: w.noise.pd_width,
        false_alarm_rate: w.noise.false_alarm_rate,
        min_range: frame.min_range,
        max_range: frame.max_range,
        seed_lo: frame.seed as u32,
        seed_hi: (frame.seed >> 32) as u32,
        frame: frame.frame,
        records_per_beam: layout.records_per_beam(),
        beam_count: layout.beams,
        saturation: w.saturation,
        records_address,
        // The binned waveform's batches fill these in.
        build_address: 0,
        ambient_address: 0,
        bin_count: 0,
        beam_offset: 0,
    }
}

/// The trace pass's push constants for `frame`. The sun must be a finite direction
/// when it shines; without it (or at zero irradiance) the ambient pass is off.
fn frame_params(
    frame: &FrameSettings,
    layout: RecordLayout,
    resources: FrameResources,
) -> Result<FrameParams, SimError> {
    let (sun_direction, sun_irradiance) = match frame.sun {
        Some(sun) if sun.irradiance > 0.0 => {
            let d = sun.direction.normalize_or_zero();
            if d == Vec3::ZERO || !d.is_finite() || !sun.irradiance.is_finite() {
                return Err(SimError::Input(
                    "the sun direction must be a finite non-zero vector".into(),
                ));
            }
            (d.to_array(), sun.irradiance)
        }
        _ => ([0.0, 0.0, 1.0], 0.0),
    };
    let medium_slots = frame.medium_slots.total();
    if medium_slots >= layout.slots {
        return Err(SimError::Input(format!(
            "the medium asks for {medium_slots} of the {} record slots per sub-ray; the \
             surfaces need one at least",
            layout.slots
        )));
    }
    Ok(FrameParams {
        sweep_address: resources.sweep,
        sweep_duration: frame.sweep.map_or(0.0, |s| s.duration_s),
        time_slices: resources.time_slices,
        sun_direction,
        sun_irradiance,
        beam_count: layout.beams,
        subray_count: layout.subrays,
        slots: layout.slots,
        min_range: frame.min_range,
        max_range: frame.max_range,
        seed_lo: frame.seed as u32,
        seed_hi: (frame.seed >> 32) as u32,
        frame: frame.frame,
        max_bounces: layout.max_bounces,
        // The whole frame in one launch; the binned waveform's chunks set their own.
        subray_offset: 0,
        launch_subrays: layout.subrays,
        beam_offset: 0,
        tile_columns: resources.tile.columns,
        tile_beams: resources.tile.beams,
        records_address: resources.records,
        medium_address: resources.medium,
        surface_slots: layout.slots - medium_slots,
        medium_pad: 0,
    })
}

/// The frame's medium as the trace reads it, with `slots` record slots per sub-ray.
pub(super) fn gpu_medium(medium: &Medium, slots: MediumSlots) -> GpuMedium {
    let d = medium.drops;
    let field = |f: fn(&crate::model::DropField) -> f32| d.as_ref().map_or(0.0, f);
    GpuMedium {
        alpha: medium.alpha,
        fog_count: medium.fog_count,
        fog_slots: slots.fog,
        drop_slots: slots.drops,
        has_drops: u32::from(d.is_some() && slots.drops > 0),
        per_beam: field(|d| d.per_beam),
        r0: field(|d| d.r0),
        r1: field(|d| d.r1),
        radius0: field(|d| d.radius0),
        slope: field(|d| d.slope),
        cell_count: d.map_or(0, |d| d.cell_count),
        d_max: field(|d| d.d_max),
        lambda: field(|d| d.lambda),
        scale: field(|d| d.scale),
        reflectance: field(|d| d.reflectance),
        drop_material: d.map_or(0, |d| d.material),
        weather_class: WEATHER_CLASS,
        fog_material: medium.fog_material,
        crossover_lo: CROSSOVER_M.0 as f32,
        crossover_hi: CROSSOVER_M.1 as f32,
        fog: medium.fog.map(|n| [n.range, n.signal]),
        drop_cells: d.map_or([[0.0; 3]; MAX_DROP_CELLS as usize], |d| {
            d.cells.map(|c| [c.range, c.cum, c.d_min])
        }),
    }
}

/// What the push constants hold beside the frame's settings: the device addresses of
/// the buffers they point to, and the scene's time slices of its moving instances.
#[derive(Debug, Clone, Copy)]
pub(super) struct FrameResources {
    pub records: u64,
    pub sweep: u64,
    /// The frame's medium, 0 in clear air.
    pub medium: u64,
    pub time_slices: u32,
    /// How the trace's invocations take the beams.
    pub tile: LaunchTile,
}

/// The sensor's poses over the frame as the trace reads them: the sweep's samples, or
/// the frame's one pose in every sample when the sensor stands still.
pub(super) fn gpu_sweep(frame: &FrameSettings) -> GpuSweep {
    let samples = *frame
        .sweep
        .unwrap_or_else(|| Sweep::sample(0.0, |_| frame.sensor_to_world))
        .samples();
    GpuSweep {
        translation: samples.map(|(t, _)| t.extend(0.0).to_array()),
        rotation: samples.map(|(_, q)| q.to_array()),
    }
}

/// The push constants of a frame's trace and waveform passes. `echo_slots` is the
/// sensor's echo slots per beam (`Simulator::set_sensor`'s `max_returns`): the waveform
/// pass writes `max_returns` echoes per beam and the compaction reads `echo_slots`, so
/// the two must be the same number.
pub(super) fn push_constants(
    frame: &FrameSettings,
    layout: RecordLayout,
    echo_slots: u32,
    resources: FrameResources,
) -> Result<(FrameParams, WaveformParams), SimError> {
    if frame.waveform.max_returns != echo_slots {
        return Err(SimError::Input(format!(
            "the frame's waveform settings ask for max_returns {}, but the sensor was set \
             up with {echo_slots} echo slots per beam; pass the same number to set_sensor",
            frame.waveform.max_returns
        )));
    }
    Ok((
        frame_params(frame, layout, resources)?,
        waveform_params(frame, layout, resources.records),
    ))
}
