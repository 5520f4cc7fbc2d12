//! The `run` job as a library call: it reports each written frame to its callback, in
//! frame order, with the counts it also returns, and prints nothing itself.

use beamtrace::gpu::ContextOptions;
use beamtrace::job::{procedural_scene, run_job, FrameDone, JobError, JobOptions, JobReport};
use beamtrace::material::{MaterialDb, MaterialMapping};
use beamtrace::output::{read_cloud, FieldSet, Format};
use beamtrace::sensor::{load_sensor, Pose};
use std::path::Path;

fn options(out: &Path, frames: u64) -> JobOptions {
    JobOptions {
        scene: procedural_scene("wall:distance=10,size=40").expect("wall scene"),
        scene_name: "wall".into(),
        sensor: load_sensor("vlp-16").expect("vlp-16"),
        rig: None,
        frames,
        out_dir: out.to_path_buf(),
        format: Format::Pcd,
        mcap: Default::default(),
        picture: false,
        objects: false,
        dataset: None,
        vehicle_pose: Pose::default(),
        materials: MaterialDb::builtin().expect("materials"),
        mapping: MaterialMapping::default(),
        device: ContextOptions {
            device_index: None,
            validation: true,
            ..Default::default()
        },
        sun: None,
        weather: None,
        seed: 1,
        world_frame: false,
        fields: FieldSet::default(),
        organized: None,
        command_line: vec!["job test".into()],
        scenario: None,
        osi: None,
        clouds: true,
        packets: None,
        part: None,
    }
}

#[test]
fn each_written_frame_is_reported_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seen: Vec<FrameDone> = Vec::new();
    let report = run_job(&options(tmp.path(), 3), &mut |d| seen.push(d.clone())).expect("job");
    let frames: Vec<(u64, u64)> = seen.iter().map(|d| (d.frame, d.frames)).collect();
    assert_eq!(frames, [(0, 3), (1, 3), (2, 3)]);
    let points: Vec<usize> = seen.iter().map(|d| d.points).collect();
    assert_eq!(points, report.points_per_frame);
    assert_eq!(report.files.len(), 3);
    let run_files: Vec<_> = report
        .run_files
        .iter()
        .map(|f| f.file_name().unwrap())
        .collect();
    assert_eq!(
        run_files,
        [
            "poses.csv",
            "poses_end.csv",
            "poses_kitti.txt",
            "poses_tum.txt",
            "run.json"
        ]
    );
    for (file, d) in report.files.iter().zip(&seen) {
        // The file was complete when its frame was reported: it holds what was counted.
        let cloud = read_cloud(file).expect("the frame's file reads back");
        assert_eq!(cloud.points.len(), d.points, "{}", file.display());
        assert!(d.points > 100, "the wall fills part of the view: {d:?}");
        // What the callback hears of a frame is that frame's file, in place.
        assert_eq!(d.files, std::slice::from_ref(file));
    }
    check_memory(&report, &tmp.path().join("run.json"));
}

/// The memory after the first frame and at the end, in the report and in run.json
/// alike: device memory in use (the frame slots are reused, so the same at both), and
/// the process's resident set, which Linux reports.
fn check_memory(report: &JobReport, run_json: &Path) {
    let (first, end) = (report.memory_first_frame, report.memory_end);
    let (first, end) = (
        first.expect("after the first frame"),
        end.expect("at the end"),
    );
    assert!(
        first.device_bytes > 0 && first.device_allocations > 0,
        "{first:?}"
    );
    assert_eq!(
        (first.device_bytes, first.device_allocations),
        (end.device_bytes, end.device_allocations)
    );
    if cfg!(target_os = "linux") {
        assert!(first.host_rss_bytes.is_some() && end.host_rss_bytes.is_some());
    }
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(run_json).unwrap()).unwrap();
    for (key, m) in [("after_first_frame", first), ("at_end", end)] {
        let json = &run["memory"][key];
        assert_eq!(json["device_bytes"].as_u64(), Some(m.device_bytes), "{run}");
        assert_eq!(
            json["device_allocations"].as_u64(),
            Some(m.device_allocations as u64),
            "{run}"
        );
        assert_eq!(json["host_rss_bytes"].as_u64(), m.host_rss_bytes, "{run}");
    }
}

#[test]
fn a_job_that_fails_reports_no_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let mut calls = 0;
    let err = run_job(&options(tmp.path(), 0), &mut |_| calls += 1).unwrap_err();
    assert!(matches!(err, JobError::NoFrames), "{err}");
    assert_eq!(calls, 0);
}

#[test]
fn a_white_and_a_grey_wall_read_their_percent_as_reflectivity() {
    // Beams near normal incidence on Lambertian walls of 90 % and 10 % at 10 m: the
    // apparent reflectance is ρ·cos θ, and the 8-bit reflectivity its percent (the
    // vendors' 0–100 diffuse scale). No noise, so only the beam's footprint (its
    // sub-rays see the same wall) and the waveform's 0.3 % bin loss stand between.
    for (material, percent) in [("lambertian_90", 90.0f32), ("lambertian_10", 10.0)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut o = options(tmp.path(), 1);
        o.scene = procedural_scene(&format!("wall:distance=10,size=40,material={material}"))
            .expect("wall");
        o.sensor = o.sensor.ideal();
        let report = run_job(&o, &mut |_| {}).expect("job");
        let cloud = read_cloud(&report.files[0]).expect("cloud");
        let near_normal: Vec<_> = cloud
            .points
            .iter()
            .filter(|p| p.azimuth.abs() < 0.05 && p.elevation.abs() < 0.05)
            .collect();
        assert!(
            !near_normal.is_empty(),
            "{material}: no beam near the normal"
        );
        for p in near_normal {
            let cos = p.azimuth.cos() * p.elevation.cos();
            let want = percent * cos;
            assert!(
                (f32::from(p.reflectivity) - want).abs() <= 1.0,
                "{material}: reflectivity {} vs {want} (R_app {})",
                p.reflectivity,
                p.intensity
            );
        }
    }
}
