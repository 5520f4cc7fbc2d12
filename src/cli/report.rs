//! What a run tells its user besides its summary: the output folder it would mix with,
//! the materials it had to guess, the frames that came out empty and why.

use anyhow::{bail, Result};
use beamtrace::job::{clear_run_files, run_files_in, JobReport, RunFiles};
use beamtrace::material::MaterialDb;
use beamtrace::scene::Scene;
use beamtrace::sensor::Sensor;
use std::path::Path;

use beamtrace::job::list_names as list;

/// What of another run `found` holds, briefly: "20 frame files, poses.csv, run.json".
fn describe(found: &RunFiles) -> String {
    let frames = found.frame_files();
    let mut parts = Vec::new();
    if frames > 0 {
        parts.push(format!("{frames} frame file(s)"));
    }
    let others = found.other_names();
    if !others.is_empty() {
        parts.push(list(&others));
    }
    parts.join(", ")
}

/// A plain run's `--out`: refused while it holds another run's (or shards') files, so
/// that the frames of two runs never lie side by side; with `overwrite`, cleared of
/// beamtrace's own files first (anything else in it stays).
pub(super) fn prepare_out(out: &Path, overwrite: bool) -> Result<()> {
    let found = run_files_in(out)?;
    if found.is_empty() {
        return Ok(());
    }
    if overwrite {
        clear_run_files(out, &found)?;
        eprintln!(
            "note: --overwrite: removed {} file(s) of an earlier run from {} ({})",
            found.files.len(),
            out.display(),
            describe(&found)
        );
        return Ok(());
    }
    bail!(
        "{} already holds another run's files ({}); this run's frames would mix with \
         them. Add --overwrite to remove beamtrace's own files from it first (other files \
         stay), or choose another --out",
        out.display(),
        describe(&found)
    )
}

/// A shard's `--out`: shards recognise their own journals (in `shards/`), but a plain
/// run's files there are refused.
pub(super) fn check_shard_out(out: &Path) -> Result<()> {
    let found = run_files_in(out)?;
    if found.is_empty() || found.shards {
        return Ok(());
    }
    bail!(
        "{} holds another run's files ({}) and no shard journal; shards would mix their \
         frames with them. Choose another --out, or clear it first (`beamtrace run \
         --overwrite` removes a run's files)",
        out.display(),
        describe(&found)
    )
}

/// The summary's last line: the IR materials the points came from, by share.
pub(super) fn material_shares(report: &JobReport, db: &MaterialDb) -> Option<String> {
    let weather = ["fog", "rain", "snow"]
        .into_iter()
        .zip(report.weather_points);
    let total: u64 = report.points_per_material.iter().sum::<u64>()
        + report.false_alarm_points
        + report.weather_points.iter().sum::<u64>();
    if total == 0 {
        return None;
    }
    let mut used: Vec<(u64, String)> = report
        .points_per_material
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(id, &n)| {
            let name = db
                .materials
                .get(id)
                .map_or(format!("material #{id}"), |m| m.name.clone());
            (n, name)
        })
        .collect();
    if report.false_alarm_points > 0 {
        used.push((report.false_alarm_points, "false alarms".into()));
    }
    for (name, n) in weather.filter(|&(_, n)| n > 0) {
        used.push((n, format!("weather ({name})")));
    }
    used.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let shares: Vec<String> = used
        .iter()
        .map(|(n, name)| match 100.0 * *n as f64 / total as f64 {
            p if p < 0.05 => format!("{name} < 0.1 %"),
            p => format!("{name} {p:.1} %"),
        })
        .collect();
    Some(format!(
        "materials (share of points): {}",
        shares.join(", ")
    ))
}

/// Where a sample of the sensor's beams first meet the scene, on the CPU reference's
/// tracer: what explains an empty frame.
struct BeamSurvey {
    sampled: usize,
    /// First surface nearer than the sensor's minimum range (its blind zone).
    blind: usize,
    /// No surface within the maximum range.
    open: usize,
}

/// A frame with fewer points than 1 in this many beams is surveyed.
const SPARSE: usize = 10;

/// Beams sampled at most for the survey: enough for a share, cheap on the CPU.
const SURVEY_BEAMS: usize = 1024;

fn survey(scene: &Scene, sensor: &Sensor, pose: &glam::Affine3A) -> Option<BeamSurvey> {
    let bvh = beamtrace::reference::Bvh::new(scene).ok()?;
    let step = sensor.beams.len().div_ceil(SURVEY_BEAMS).max(1);
    let rays: Vec<_> = sensor
        .beams
        .iter()
        .step_by(step)
        .map(|b| {
            let origin = pose.transform_point3(b.origin);
            (origin, pose.transform_vector3(b.direction()).normalize())
        })
        .collect();
    let hits = bvh.trace_many(&rays, 0.0, sensor.max_range);
    Some(BeamSurvey {
        sampled: hits.len(),
        blind: hits
            .iter()
            .filter(|h| h.is_some_and(|h| h.t < sensor.min_range))
            .count(),
        open: hits.iter().filter(|h| h.is_none()).count(),
    })
}

/// A warning for frames with no returns, or for a sensor whose beams mostly end in its
/// blind zone (it sits inside closed geometry), with the likely cause; once per run.
pub(super) fn empty_frames(report: &JobReport, scene: &Scene, sensor: &Sensor) -> Option<String> {
    let frames = report.points_per_frame.len();
    let empty: Vec<usize> = (0..frames)
        .filter(|&i| report.points_per_frame[i] == 0)
        .collect();
    // A sensor whose beams end in its blind zone returns almost nothing (false alarms
    // at most): only a frame that sparse is surveyed, so a sound run pays nothing.
    let sparse = (0..frames).find(|&i| report.points_per_frame[i] * SPARSE < sensor.beams.len());
    // The pose of the first empty frame, else of the first sparse one.
    let at = empty.first().copied().or(sparse)?;
    let (frame, pose) = *report.poses.get(at)?;
    let s = survey(scene, sensor, &pose)?;
    let share = |n: usize| 100.0 * n as f64 / s.sampled.max(1) as f64;
    let p = pose.translation;
    let inside = 2 * s.blind > s.sampled;
    let cause = if inside {
        format!(
            "the sensor, at ({:.2}, {:.2}, {:.2}) m in the world, sits inside closed \
             geometry: {:.0} % of its beams meet a surface within its blind zone (nearer \
             than its minimum range, {} m), which blocks them; move the vehicle \
             (--position x,y,z places the vehicle, and the sensor sits at its mount, {:.2} m \
             above it)",
            p.x,
            p.y,
            p.z,
            share(s.blind),
            sensor.min_range,
            sensor.mount.to_affine().translation.z
        )
    } else if 10 * s.open >= 9 * s.sampled {
        format!(
            "{:.0} % of the beams meet no surface within the sensor's {} m range from ({:.2}, \
             {:.2}, {:.2}) m: the scene lies elsewhere; check --position and the scene's \
             scale",
            share(s.open),
            sensor.max_range,
            p.x,
            p.y,
            p.z
        )
    } else {
        "the beams meet surfaces within range, but no echo cleared the detection threshold \
         (dark or absorbing materials, or surfaces far for the sensor's detection pair)"
            .to_string()
    };
    match (empty.len(), inside) {
        (0, false) => None,
        (0, true) => Some(format!("frame {frame}: {cause}")),
        (n, _) => Some(format!(
            "{n} of {frames} frame(s) have no returns at all (the first is frame {frame}): \
             likely cause: {cause}"
        )),
    }
}
