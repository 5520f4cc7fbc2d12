//! `beamtrace fit`: the pose and reflectances that make the simulation match a measured
//! scan, as a table and optionally as JSON.

use anyhow::{bail, Context as _, Result};
use beamtrace::fit::{
    fit, FitOptions, FitReport, FitSetup, FittedParameter, Parameter, ParameterStart, PoseModel,
    PoseVector, ResidualStats, Scan,
};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::sensor::load_sensor_with;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub(super) const AFTER_HELP: &str = "\
What is fitted:
  The vehicle pose (where `beamtrace run --position/--yaw` puts it; the sensor sits at
  its mount on top), as x, y, yaw (--pose 2d) or x, y, z, roll, pitch, yaw (--pose 3d),
  and for each --reflectance NAME a factor k on IR material NAME's whole R(θ) (1 = the
  material database's value; every reflectance term of the material is multiplied by
  k). For a continuous-wave sensor (kind: cw, e.g. urg-04lx), --phase-bias a|b|c also
  fits coefficients of its phase bias Δφ' = Δφ − (aL² + bL + c) (paper 002 §IV-C; rad,
  L the received amplitude), starting from the sensor's own values. Components --pose
  does not free stay at --start-pose.

How:
  Each beam's first return is simulated on the CPU without measurement noise (the scan
  has the noise) and compared with the scan: (measured − simulated) / σ for the range,
  and for the intensity when reflectances are fitted, softly bounded to ±bound as
  bound·tanh(e/bound). A beam that returns in only one of the two costs `bound`; such
  beams are counted, and so are outliers, beams off by more than bound·σ.
  Levenberg–Marquardt minimises the sum of squares, with central differences (1 mm,
  0.5 mrad, 0.001 of a factor). The cost jumps where a beam crosses an edge, so the fit
  is refined again with the beams at an edge near the solution left out (counted).
  Standard errors come from (JᵀJ)⁻¹·s² at the solution, s estimated from the residuals.
  The simulation runs at night (no sunlight).

Example: take a scan from a known place, then find that place again:
  beamtrace run --scene scenes/box_room.glb --sensor my-grid.yaml --ideal \\
      --position 0.4,-0.3,0 --yaw 7 --out scan
  beamtrace fit --scene scenes/box_room.glb --sensor my-grid.yaml \\
      --scan scan/frame_000000.pcd --pose 2d --json fit.json

A CSV scan has one line per beam, `beam,range[,intensity]` (a header line naming the
columns is optional; a range of 0 or an empty one is no return).";

/// Which pose components `--pose` frees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum PoseArg {
    /// x, y and yaw (SE(2)).
    #[value(name = "2d")]
    TwoD,
    /// x, y, z, roll, pitch and yaw (SE(3)).
    #[value(name = "3d")]
    ThreeD,
    /// None: the pose is --start-pose.
    Fixed,
}

#[derive(clap::Args)]
pub(super) struct FitArgs {
    /// The scene the scan was taken in: a glTF file (.gltf or .glb), or `bundled` for
    /// the bundled street (scenes/street.glb).
    #[arg(long, value_name = "FILE|bundled", default_value = "bundled")]
    scene: String,
    /// The sensor the scan was taken with: a preset name or a YAML file.
    #[arg(long, value_name = "NAME|FILE")]
    sensor: String,
    /// Simulate one ray per beam (as `run --thin`): give it when the scan was made with
    /// --thin; it also makes a fit faster.
    #[arg(long)]
    thin: bool,
    /// The measured scan: a .pcd with beamtrace's `beam` and `range` fields (and
    /// `intensity` to fit reflectances), or a .csv of `beam,range[,intensity]` lines.
    #[arg(long, value_name = "FILE")]
    scan: PathBuf,
    /// Which pose components to fit: 2d (x, y, yaw), 3d (x, y, z, roll, pitch, yaw) or
    /// fixed (none).
    #[arg(long, value_enum, default_value = "2d")]
    pose: PoseArg,
    /// The vehicle pose the fit starts from, "x,y,z,roll,pitch,yaw" (m and degrees).
    #[arg(long, value_name = "X,Y,Z,R,P,Y", default_value = "0,0,0,0,0,0",
          allow_hyphen_values = true, value_parser = start_pose)]
    start_pose: PoseVector,
    /// Also fit the reflectance factor of IR material NAME (1 = the database's value),
    /// starting at START (default 1). Repeat for more materials.
    #[arg(long, value_name = "NAME[=START]")]
    reflectance: Vec<String>,
    /// Also fit coefficient a, b or c of a continuous-wave sensor's phase bias
    /// (rad per L², per L, rad), starting at START (default: the sensor's value).
    /// Repeat for more coefficients.
    #[arg(long, value_name = "a|b|c[=START]")]
    phase_bias: Vec<String>,
    /// σ of a measured range (m).
    #[arg(long, default_value_t = 0.02)]
    sigma_range: f64,
    /// σ of a measured intensity (apparent reflectance), when reflectances are fitted.
    #[arg(long, default_value_t = 0.05)]
    sigma_intensity: f64,
    /// Soft bound of each residual and cost of a beam that returns on one side only,
    /// in σ.
    #[arg(long, default_value_t = 20.0)]
    bound: f64,
    /// Seed of the simulation's random draws (sub-ray jitter; its noise is off).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// IR material database (YAML). Default: the bundled configs/materials.yaml.
    #[arg(long)]
    materials: Option<PathBuf>,
    /// Mapping table glTF material name → IR material (YAML of `name: ir_material`).
    #[arg(long)]
    material_map: Option<PathBuf>,
    /// Let the scene's and the sensor file's referenced files lie outside their folder.
    #[arg(long)]
    allow_outside_paths: bool,
    /// Also write the report as JSON to this file (angles in degrees).
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
}

/// `x,y,z,roll,pitch,yaw` in m and degrees, as a pose vector in m and radians.
fn start_pose(s: &str) -> Result<PoseVector, String> {
    let v = super::parse::numbers(s)?;
    let [x, y, z, roll, pitch, yaw] = v[..] else {
        return Err(format!(
            "expected x,y,z,roll,pitch,yaw (six numbers, m and degrees), got {} values",
            v.len()
        ));
    };
    let rad = |d: f32| f64::from(d).to_radians();
    let m = f64::from;
    Ok(PoseVector([
        m(x),
        m(y),
        m(z),
        rad(roll),
        rad(pitch),
        rad(yaw),
    ]))
}

/// `NAME[=START]`.
fn reflectance(spec: &str) -> Result<ParameterStart> {
    let (name, start) = match spec.split_once('=') {
        Some((n, s)) => {
            let v: f64 = s.trim().parse().with_context(|| {
                format!("--reflectance {spec}: the start `{s}` is not a number")
            })?;
            (n.trim(), v)
        }
        None => (spec.trim(), 1.0),
    };
    if name.is_empty() {
        bail!("--reflectance {spec}: give an IR material name, e.g. --reflectance paint=0.8");
    }
    Ok(ParameterStart::reflectance(name, start))
}

/// `a|b|c[=START]`, START by default the sensor's own coefficient.
fn phase_bias(spec: &str, sensor: &beamtrace::sensor::Sensor) -> Result<ParameterStart> {
    let (name, start) = match spec.split_once('=') {
        Some((n, s)) => (n.trim(), Some(s.trim())),
        None => (spec.trim(), None),
    };
    let k = ["a", "b", "c"]
        .iter()
        .position(|n| *n == name)
        .with_context(|| {
            format!("--phase-bias {spec}: name a coefficient, a, b or c, e.g. --phase-bias b=0")
        })?;
    let own = sensor.cw.map_or(0.0, |cw| cw.phase_bias[k]);
    let start = match start {
        Some(s) => s
            .parse()
            .with_context(|| format!("--phase-bias {spec}: the start `{s}` is not a number"))?,
        None => own,
    };
    ParameterStart::phase_bias(name, start).context("a coefficient name")
}

pub(super) fn fit_command(args: FitArgs) -> Result<()> {
    let policy = super::path_policy(args.allow_outside_paths);
    let scene_path = (args.scene != "bundled").then(|| Path::new(&args.scene));
    let scene = super::load_scene(scene_path, args.allow_outside_paths)?;
    let mut sensor = load_sensor_with(&args.sensor, policy)?;
    if args.thin {
        sensor = sensor.thin();
    }
    let scan = Scan::read(&args.scan, sensor.beams.len(), &sensor.name)?;
    let setup = setup(&args, sensor)?;
    let report = fit(&scene.scene, &scan, &setup).context("the fit failed")?;
    print_report(&report, &scene.name, &setup, &args);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&json_report(&report, &scene.name, &setup, &args))?;
        beamtrace::output::write_atomic(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("  report: {}", path.display());
    }
    Ok(())
}

fn setup(args: &FitArgs, sensor: beamtrace::sensor::Sensor) -> Result<FitSetup> {
    let model = match args.pose {
        PoseArg::TwoD => PoseModel::Se2,
        PoseArg::ThreeD => PoseModel::Se3,
        PoseArg::Fixed => PoseModel::Fixed,
    };
    let mut parameters = ParameterStart::pose(model, &args.start_pose);
    for spec in &args.reflectance {
        parameters.push(reflectance(spec)?);
    }
    for spec in &args.phase_bias {
        parameters.push(phase_bias(spec, &sensor)?);
    }
    Ok(FitSetup {
        sensor,
        materials: match &args.materials {
            Some(p) => MaterialDb::load(p)?,
            None => MaterialDb::builtin()?,
        },
        mapping: match &args.material_map {
            Some(p) => MaterialMapping::load(p)?,
            None => MaterialMapping::default(),
        },
        pose: args.start_pose,
        parameters,
        options: FitOptions {
            sigma_range_m: args.sigma_range,
            sigma_intensity: args.sigma_intensity,
            bound: args.bound,
            seed: args.seed,
            ..FitOptions::default()
        },
    })
}

/// A parameter's unit and its values as shown: angles in degrees.
fn shown(p: &FittedParameter) -> (&'static str, [Option<f64>; 3]) {
    let angle = matches!(&p.parameter, Parameter::Pose(a) if a.is_angle());
    let (unit, k) = match (&p.parameter, angle) {
        (_, true) => ("deg", 180.0 / std::f64::consts::PI),
        (Parameter::Reflectance(_), _) => ("factor", 1.0),
        (Parameter::PhaseBias(_), _) => ("rad", 1.0),
        _ => ("m", 1.0),
    };
    let v = [Some(p.start), Some(p.fitted), p.std_error].map(|v| v.map(|v| v * k));
    (unit, v)
}

fn print_report(report: &FitReport, scene: &str, setup: &FitSetup, args: &FitArgs) {
    println!(
        "fit of {} against {scene} with {} ({} beams, {} returns in the scan)",
        args.scan.display(),
        setup.sensor.name,
        report.beams,
        report.scan_returns
    );
    println!(
        "  {} after {} iteration(s), {} simulations",
        report.termination, report.iterations, report.evaluations
    );
    let names: Vec<String> = report
        .parameters
        .iter()
        .map(|p| format!("{} ({})", p.parameter.name(), shown(p).0))
        .collect();
    let w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(24);
    println!(
        "\n  {:w$} {:>10} {:>10} {:>10}",
        "parameter", "start", "fitted", "std error"
    );
    for (p, name) in report.parameters.iter().zip(&names) {
        let [start, fitted, se] = shown(p).1.map(cell);
        println!("  {name:w$} {start:>10} {fitted:>10} {se:>10}");
    }
    print_residuals(&report.before, &report.after);
    println!(
        "  {} beam(s) at an edge near the solution left out of the last refinement",
        report.left_out
    );
    if let Some(s) = report.sigma_scale_range {
        println!(
            "  range residuals scatter {s:.2} σ (σ = {} m)",
            args.sigma_range
        );
    }
    if let Some(s) = report.sigma_scale_intensity {
        println!(
            "  intensity residuals scatter {s:.2} σ (σ = {})",
            args.sigma_intensity
        );
    }
    if !report.converged {
        println!("  warning: the fit did not converge; the values are where it stopped");
    }
}

/// A value with four decimals, or a dash for none.
fn cell(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.4}"))
}

fn print_residuals(before: &ResidualStats, after: &ResidualStats) {
    println!("\n  {:24} {:>10} {:>10}", "residuals", "before", "after");
    println!(
        "  {:24} {:>10} {:>10}",
        "range RMS (m)",
        cell(before.range_rms_m),
        cell(after.range_rms_m)
    );
    println!(
        "  {:24} {:>10} {:>10}",
        "range RMS, inliers (m)",
        cell(before.inlier_range_rms_m),
        cell(after.inlier_range_rms_m)
    );
    if before.intensity_rms.is_some() {
        println!(
            "  {:24} {:>10} {:>10}",
            "intensity RMS",
            cell(before.intensity_rms),
            cell(after.intensity_rms)
        );
    }
    for (what, b, a) in [
        ("beams compared", before.compared, after.compared),
        ("outliers (off > bound)", before.outliers, after.outliers),
        (
            "missing in simulation",
            before.missing_in_simulation,
            after.missing_in_simulation,
        ),
        (
            "missing in scan",
            before.missing_in_scan,
            after.missing_in_scan,
        ),
    ] {
        println!("  {what:24} {b:>10} {a:>10}");
    }
}

fn stats_json(s: &ResidualStats) -> Value {
    json!({
        "range_rms_m": s.range_rms_m,
        "inlier_range_rms_m": s.inlier_range_rms_m,
        "intensity_rms": s.intensity_rms,
        "compared": s.compared,
        "outliers": s.outliers,
        "missing_in_simulation": s.missing_in_simulation,
        "missing_in_scan": s.missing_in_scan,
        "cost": s.cost,
    })
}

fn json_report(report: &FitReport, scene: &str, setup: &FitSetup, args: &FitArgs) -> Value {
    let parameters: Vec<Value> = report
        .parameters
        .iter()
        .map(|p| {
            let (unit, [start, fitted, se]) = shown(p);
            json!({
                "name": p.parameter.name(),
                "unit": unit,
                "start": start,
                "fitted": fitted,
                "std_error": se,
            })
        })
        .collect();
    json!({
        "scan": args.scan.display().to_string(),
        "scene": scene,
        "sensor": setup.sensor.name,
        "beams": report.beams,
        "scan_returns": report.scan_returns,
        "left_out": report.left_out,
        "parameters": parameters,
        "before": stats_json(&report.before),
        "after": stats_json(&report.after),
        "iterations": report.iterations,
        "evaluations": report.evaluations,
        "termination": report.termination,
        "converged": report.converged,
        "sigma_scale": {
            "range": report.sigma_scale_range,
            "intensity": report.sigma_scale_intensity,
        },
        "options": {
            "sigma_range_m": args.sigma_range,
            "sigma_intensity": args.sigma_intensity,
            "bound": args.bound,
            "seed": args.seed,
        },
    })
}
