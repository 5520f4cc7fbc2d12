//! `beamtrace sensors` and `beamtrace info`: tables of what the library knows.

use anyhow::{bail, Result};
use beamtrace::gpu::list_devices;
use beamtrace::sensor::{
    load_sensor, names_a_file, preset_detail, presets, BeamKernel, Detector, DualPolicy, Sensor,
};

/// The presets with the channels, columns and beams of their default sensors (a
/// rosette's beams are its points, not channels × columns).
pub(super) fn print_sensors() -> Result<()> {
    println!(
        "{:<14} {:>8} {:>8} {:>8}  {:<17} {:<17} description",
        "preset", "channels", "columns", "beams", "azimuth (deg)", "elevation (deg)"
    );
    for p in presets() {
        let s = preset_detail(p.name)?.sensor;
        println!(
            "{:<14} {:>8} {:>8} {:>8}  {:>7.2} .. {:<7.2} {:>7.2} .. {:<7.2} {}",
            p.name,
            s.channels,
            s.columns,
            s.beams.len(),
            p.h_fov_deg.0,
            p.h_fov_deg.1,
            p.v_fov_deg.0,
            p.v_fov_deg.1,
            p.description
        );
    }
    Ok(())
}

/// `beamtrace sensors --detail NAME`: a preset, or a sensor file as `run` loads it.
pub(super) fn print_sensor_detail(name: &str) -> Result<()> {
    if names_a_file(name) {
        let s = load_sensor(name)?;
        println!("{} — the sensor of {name}", s.name);
        print_sensor(&s);
        return Ok(());
    }
    let d = preset_detail(name)?;
    println!("{} — {}", d.info.name, d.info.description);
    if !d.aliases.is_empty() {
        println!("  aliases: {}", d.aliases.join(", "));
    }
    print_sensor(&d.sensor);
    println!(
        "  return modes (`--return-mode`): {}",
        d.return_modes.join(", ")
    );
    println!("  frame rates: {}", d.modes);
    println!("  vendor conventions: {}", d.conventions);
    print_datasheet(d.info.name, &d.sensor);
    Ok(())
}

/// The preset's datasheet figures beside the model's (its parameters; the tests
/// measure them by simulation, benches/RESULTS.md has the measured values).
fn print_datasheet(name: &str, s: &Sensor) {
    let sheet = beamtrace::sensor::datasheet::datasheet(name);
    if sheet.is_empty() {
        println!("  datasheet: no figure the model has (see the preset's description)");
        return;
    }
    println!("  datasheet (sheet | model | tolerance of the measuring tests | source):");
    for f in sheet {
        let unit = f.figure.unit();
        let with_unit = |v: f64| match unit {
            "" => figure(v),
            _ => format!("{} {unit}", figure(v)),
        };
        let model = f.figure.model(s).map_or("–".into(), with_unit);
        println!(
            "    {}: {} | {model} | ±{} % | {}",
            f.figure.label(),
            with_unit(f.value),
            (f.tolerance * 100.0).round(),
            f.source
        );
    }
}

/// A figure to four significant digits, without trailing zeros.
fn figure(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        return format!("{:.0}", v);
    }
    let digits = (3 - v.abs().max(1e-9).log10().floor() as i32).max(0) as usize;
    let t = format!("{v:.digits$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// What every sensor has: pattern, range, beam, receiver, frame and fields.
fn print_sensor(s: &Sensor) {
    println!(
        "  pattern: {} channels × {} columns = {} beams per frame at {} Hz",
        s.channels,
        s.columns,
        s.beams.len(),
        s.frame_rate
    );
    println!(
        "  range: {} m .. {} m; detection pair {} % at {} m; {} nm",
        s.min_range,
        s.max_range,
        s.detection.reference_reflectance * 100.0,
        s.detection.reference_range,
        s.wavelength_nm
    );
    println!("  beam: {}", kernel_text(&s.kernel));
    println!("  {}", subray_text(s));
    match &s.cw {
        Some(cw) => print_cw(cw),
        None => print_detector(&s.detector),
    }
    println!(
        "  frame: x forward, y left, z up (REP-103); azimuth from +x towards +y, elevation up"
    );
    println!(
        "  fields: {}, time in s from the frame start,",
        field_units()
    );
    println!(
        "          intensity = apparent reflectance (1.0 = white Lambertian at normal incidence)"
    );
}

/// The units the clouds give range and the beam angles in, from the writers' own field
/// table (angles are written in radians, as ROS and the vendors' drivers keep them).
fn field_units() -> String {
    let unit = |key: &str| {
        beamtrace::output::FIELDS
            .iter()
            .find(|f| f.key == key)
            .map_or("?", |f| f.unit)
    };
    format!(
        "range in {}, azimuth and elevation in {}",
        unit("range"),
        unit("azimuth")
    )
}

/// A continuous-wave sensor's receiver: its measurement replaces the pulse waveform.
fn print_cw(cw: &beamtrace::sensor::CwSettings) {
    let [f1, f2] = cw.frequencies_hz;
    println!(
        "  ranging: continuous wave, phase at {} and {} MHz (ambiguous every {:.3} and {:.3} m, \
         resolved together to {:.1} m); one return per beam, the phasor sum of its sub-rays",
        f1 / 1e6,
        f2 / 1e6,
        beamtrace::sensor::CwSettings::ambiguity_m(f1),
        beamtrace::sensor::CwSettings::ambiguity_m(f2),
        cw.unambiguous_m()
    );
    match cw.sampling {
        beamtrace::sensor::CwSampling::Ideal => println!("  phase: the ideal phasor argument"),
        beamtrace::sensor::CwSampling::Dft {
            samples,
            sample_noise,
        } => println!(
            "  phase: DFT of {samples} samples over one period (reordered), sample noise \
             σ = {sample_noise} × the detection threshold (`run --ideal` switches it off)"
        ),
    }
    let [a, b, c] = cw.phase_bias;
    println!("  phase bias: Δφ' = Δφ − ({a} L² + {b} L + {c}) rad, L the received amplitude");
    if cw.bias_saturation > 0.0 {
        println!(
            "    held at L = {} (the receiver saturates: nearer, brighter surfaces shift no farther)",
            cw.bias_saturation
        );
    }
}

fn kernel_text(k: &BeamKernel) -> String {
    let deg = |r: f32| r.to_degrees();
    match k {
        BeamKernel::Gaussian { div_h, div_v } => format!(
            "Gaussian, divergence {:.3}° × {:.3}° (full angles at 1/e², horizontal × vertical)",
            deg(*div_h),
            deg(*div_v)
        ),
        BeamKernel::CoreHalo {
            core_h,
            core_v,
            halo_h,
            halo_v,
            halo_fraction,
        } => format!(
            "core {:.3}° × {:.3}° plus a halo {:.2}° × {:.2}° holding {halo_fraction} of the \
             power (full angles at 1/e²)",
            deg(*core_h),
            deg(*core_v),
            deg(*halo_h),
            deg(*halo_v)
        ),
        BeamKernel::Disc { radius } => format!("uniform cone of {:.3}° radius", deg(*radius)),
        BeamKernel::Separable { h, v } => format!(
            "measured slices, {} horizontal × {} vertical samples",
            h.values.len(),
            v.values.len()
        ),
        BeamKernel::Table2d {
            extent_h,
            extent_v,
            nx,
            ny,
            ..
        } => format!(
            "measured image of {nx} × {ny} pixels over ±{:.3}° × ±{:.3}°",
            deg(*extent_h),
            deg(*extent_v)
        ),
        BeamKernel::MultiSpot { spots } => format!("{} Gaussian spots", spots.len()),
    }
}

fn subray_text(s: &Sensor) -> String {
    if s.subrays == 1 {
        "sub-rays: 1 (the thin ray)".to_string()
    } else {
        format!(
            "sub-rays: {} per beam, {:?} sampling (`run --thin` traces one)",
            s.subrays, s.sampling
        )
    }
}

fn print_detector(d: &Detector) {
    println!(
        "  receiver: {} ns pulses, {} m range bins, {:?} returns (at most {}), {:?} range, \
         curve {:?}",
        d.pulse_duration_s * 1e9,
        d.range_resolution_m,
        d.return_mode,
        d.max_returns,
        d.estimator,
        d.curve
    );
    let dual = match d.native_dual {
        DualPolicy::StrongestLast => {
            "strongest and last (second strongest and last when the strongest is the last)"
        }
        DualPolicy::StrongestSecond => "strongest and second strongest",
    };
    println!("  dual return (`return_mode: dual`): {dual}; points in range order");
    if d.saturation > 0.0 {
        println!(
            "  saturation: waveform amplitude {} (a white Lambertian target at {:.2} m)",
            d.saturation,
            1.0 / d.saturation.sqrt()
        );
    }
    let n = &d.noise;
    println!(
        "  noise (1σ; `run --ideal` switches it off): range {} m + {} m/SNR, amplitude {} %, \
         detection roll-off {} × threshold, {} false echoes per beam",
        n.range_sigma_m,
        n.range_sigma_snr_m,
        n.amplitude_rel * 100.0,
        n.pd_width,
        n.false_alarm_rate
    );
}

pub(super) fn info() -> Result<()> {
    let devices = list_devices()?;
    if devices.is_empty() {
        bail!("no Vulkan devices: run scripts/setup.sh (installs Mesa's lavapipe)");
    }
    for d in devices {
        println!("[{}] {} ({})", d.index, d.name, d.kind);
        println!("    driver: {}", d.driver.trim());
        println!("    Vulkan {}", d.api_version);
        if d.missing.is_empty() {
            println!("    ray tracing: yes");
            println!("    max recursion depth: {}", d.max_ray_recursion_depth);
            println!(
                "    shader group handle size: {} bytes",
                d.shader_group_handle_size
            );
            println!("    max instances per TLAS: {}", d.max_instance_count);
            println!("    max triangles per BLAS: {}", d.max_primitive_count);
        } else {
            println!("    ray tracing: no — missing {}", d.missing.join(", "));
        }
        println!("    timestamp period: {} ns", d.timestamp_period_ns);
    }
    Ok(())
}
