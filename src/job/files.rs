//! How a run's frames become files: the output plan (the sensor's beams as the writers
//! see them, the organized layout), each frame's files, and the run's own files
//! (`poses.csv`, `run.json`).

use super::rig::Member;
use super::{JobError, JobOptions, JobReport, MemoryUse, POSES_FILE, RUN_FILE, WEATHER_FILE};
use crate::model::{FrameSettings, PointCloud};
use crate::osi::detections::mounting_position;
use crate::osi::{sensor_data, trace_file_name, write_message, FrameStamp as OsiStamp};
use crate::output::dataset::write_dataset_run_files;
use crate::output::objects::{FlowField, ObjectLabel};
use crate::output::write_sweep_end_poses;
use crate::output::{
    frame_file_name, frame_layer_file_name, frame_messages, frame_messages_at, objects_message,
    organize, write_atomic, write_cloud_into, write_mcap_layer_to, write_picture_into, write_poses,
    write_weather, AtomicFiles, BeamLayout, CloudMeta, Format, FrameMessage, FrameStamp, Organize,
    PictureOptions, PoseRow, RosNames, Viewpoint, WeatherRow, RUN_BAG,
};
use crate::sensor::Sensor;
use crate::weather::WeatherTrack;
use std::collections::HashMap;
use std::path::Path;

/// How the frames of a run are written: the sensor's beams as the writers see them,
/// and the organized layout when there is one.
pub(super) struct OutputPlan {
    pub(super) layout: BeamLayout,
    pub(super) organize: Option<Organize>,
    /// The clouds go into one bag ([`RUN_BAG`]) rather than a file per frame.
    pub(super) bag: bool,
    /// With [`Format::Osi`]: each instance's OSI id, where it has one.
    pub(super) osi_ids: HashMap<u32, u64>,
}

impl OutputPlan {
    /// Checked before any work: an organized run needs a sensor whose beams are a grid.
    pub(super) fn new(opts: &JobOptions, m: &Member) -> Result<Self, JobError> {
        let layout = beam_layout(&m.sensor);
        let organized = opts
            .organized
            .unwrap_or_else(|| opts.fields.organized_by_default());
        if opts.clouds {
            opts.format.check_layout(&opts.fields, organized)?;
        }
        let osi = opts.clouds && opts.format == Format::Osi;
        if osi && opts.world_frame {
            return Err(JobError::OsiWorld);
        }
        let osi_ids = match osi {
            true => (opts.osi.as_ref().map(|i| i.ids.clone()))
                .unwrap_or_default()
                .instance_ids(&opts.scene),
            false => HashMap::new(),
        };
        let bag = super::McapOptions::bag(opts);
        if !organized {
            return Ok(OutputPlan {
                layout,
                organize: None,
                bag,
                osi_ids,
            });
        }
        if let Err(why) = layout.grid() {
            let (asked, fix) = match opts.organized {
                Some(_) => (
                    "--organized".to_string(),
                    "leave out --organized for one row of returned points",
                ),
                None => (
                    format!(
                        "--fields {} (organized, as its driver publishes)",
                        opts.fields.describe()
                    ),
                    "add --unorganized for one row of returned points",
                ),
            };
            return Err(JobError::NotGrid {
                asked,
                sensor: m.sensor.name.clone(),
                why,
                fix,
            });
        }
        let organize = Organize {
            style: opts.fields.grid_style(),
            order: opts.fields.layer_order(),
            layers: m.sensor.detector.max_returns.max(1) as usize,
        };
        Ok(OutputPlan {
            layout,
            organize: Some(organize),
            bag,
            osi_ids,
        })
    }
}

/// The sensor's beams as the writers see them ([`BeamLayout::of_sensor`]).
pub fn beam_layout(sensor: &Sensor) -> BeamLayout {
    BeamLayout::of_sensor(sensor)
}

/// The pose `a` (sensor → world) as PCD's VIEWPOINT numbers.
pub fn viewpoint(a: glam::Affine3A) -> Viewpoint {
    let (_, q, t) = a.to_scale_rotation_translation();
    Viewpoint {
        translation: t.to_array(),
        rotation: [q.w, q.x, q.y, q.z],
    }
}

/// When frame `frame` began, in seconds of scenario time from the run's start: what
/// poses.csv and the files' time stamps (LAS GPS time, MCAP) give.
pub(super) fn scenario_time(sensor: &Sensor, frame: u64) -> f64 {
    frame as f64 / f64::from(sensor.frame_rate)
}

/// `poses.csv` (the sensor's pose per frame; it does not move within a run) and
/// `run.json` (what was run, on what, into which files), each written atomically.
pub(super) fn write_run_files(
    opts: &JobOptions,
    m: &Member,
    plan: &OutputPlan,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let rows: Vec<PoseRow> = report
        .poses
        .iter()
        .map(|&(frame, pose)| PoseRow {
            frame,
            time: scenario_time(&m.sensor, frame),
            pose: viewpoint(pose),
        })
        .collect();
    let poses = opts.out_dir.join(POSES_FILE);
    write_poses(&poses, &rows)?;
    report.run_files.push(poses);
    // A sweep ends when the next frame begins (as `merge` computes it, to the bit).
    let ends: Vec<PoseRow> = (report.sweep_ends.iter())
        .map(|&(frame, pose)| PoseRow {
            frame,
            time: scenario_time(&m.sensor, frame + 1),
            pose: viewpoint(pose),
        })
        .collect();
    let written = write_sweep_end_poses(&opts.out_dir, &ends)?;
    report.run_files.extend(written);
    if let Some(dataset) = &opts.dataset {
        let written = write_dataset_run_files(dataset, &opts.out_dir, opts.frames, &ends)?;
        report.run_files.extend(written);
    }
    if report.weather.iter().any(|(_, w, _)| !w.is_clear()) {
        let rows: Vec<WeatherRow> = (report.weather.iter())
            .map(|&(frame, weather, extinction)| WeatherRow {
                frame,
                time: scenario_time(&m.sensor, frame),
                weather,
                extinction,
            })
            .collect();
        let path = opts.out_dir.join(WEATHER_FILE);
        write_weather(&path, &rows)?;
        report.run_files.push(path);
    }
    let json = serde_json::to_vec_pretty(&run_record(opts, m, plan, report))?;
    let run = opts.out_dir.join(RUN_FILE);
    write_atomic(&run, |w| w.write_all(&json))?;
    report.run_files.push(run);
    Ok(())
}

/// The contents of `run.json`.
fn run_record(
    opts: &JobOptions,
    m: &Member,
    plan: &OutputPlan,
    report: &JobReport,
) -> serde_json::Value {
    let memory = |m: &Option<MemoryUse>| m.as_ref().map(MemoryUse::json);
    let organized = plan.organize.map(|o| {
        serde_json::json!({
            "style": format!("{:?}", o.style),
            "return_order": format!("{:?}", o.order),
            "return_layers": o.layers,
        })
    });
    serde_json::json!({
        "beamtrace_version": env!("CARGO_PKG_VERSION"),
        "command_line": opts.command_line,
        "sensor": m.sensor.name,
        "scene": opts.scene_name,
        "seed": opts.seed,
        "frames": opts.frames,
        "frame_rate_hz": m.sensor.frame_rate,
        "format": match &opts.dataset {
            Some(d) => d.dataset.name(),
            None => opts.format.name(),
        },
        "dataset": opts.dataset.as_ref().map(|d| serde_json::json!({
            "layout": d.dataset.name(),
            "class_map": d.overrides,
        })),
        "fields": {
            "set": opts.fields.describe(),
            "keys": opts.fields.keys(),
            "names": opts.fields.names(),
        },
        "organized": organized,
        "frame": if opts.world_frame { "world" } else { "sensor" },
        "mcap": (opts.format == Format::Mcap).then(|| serde_json::json!({
            "bag": plan.bag.then_some(RUN_BAG),
            "topic": m.mcap.names.topic(),
            "frame_id": m.mcap.names.frame_id(),
        })),
        "poses": POSES_FILE,
        "weather": run_weather(opts, report),
        "device": report.device,
        "memory": {
            "after_first_frame": memory(&report.memory_first_frame),
            "at_end": memory(&report.memory_end),
        },
    })
}

/// The run's weather for `run.json`: the `--weather` form, or the scenario's
/// keyframes; and the file that gives it per frame.
fn run_weather(opts: &JobOptions, report: &JobReport) -> serde_json::Value {
    let keys = |t: &WeatherTrack| {
        (t.keys().iter())
            .map(|k| serde_json::json!({"t": k.t, "weather": k.weather.to_string()}))
            .collect::<Vec<_>>()
    };
    let track = match (&opts.weather, &opts.scenario) {
        (Some(w), _) => serde_json::json!(w.to_string()),
        (None, Some(s)) if s.weather().is_some() => serde_json::json!(s.weather().map(keys)),
        _ => serde_json::json!("clear"),
    };
    let file = (report.weather.iter().any(|(_, w, _)| !w.is_clear())).then_some(WEATHER_FILE);
    serde_json::json!({ "given": track, "per_frame": file })
}

/// Makes the output folder before the scene is uploaded and traced, so a bad `--out`
/// fails early and with its own message rather than as a failed write after the first
/// frame; after the device opened, so a bad `--device` leaves no empty folder behind.
pub(super) fn create_out_dir(dir: &Path) -> Result<(), JobError> {
    if dir.exists() && !dir.is_dir() {
        return Err(JobError::OutIsFile(dir.to_path_buf()));
    }
    std::fs::create_dir_all(dir).map_err(|source| JobError::CreateOut {
        path: dir.to_path_buf(),
        source,
    })?;
    probe_writable(dir).map_err(|source| JobError::OutNotWritable {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes and removes a small hidden file, so a folder that exists but refuses writes
/// (permissions, a read-only mount, a full disk) fails before a frame is simulated.
fn probe_writable(dir: &Path) -> std::io::Result<()> {
    use std::io::Write as _;
    let probe = dir.join(format!(".beamtrace-write-check-{}", std::process::id()));
    let result = std::fs::File::create(&probe).and_then(|mut f| {
        f.write_all(&[0u8; 4096])?;
        f.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    result
}

/// A frame's output before it is in place: its files (the caller commits the group)
/// and, for a run that writes one bag, its messages (appended at the commit).
#[derive(Default)]
pub(super) struct FrameOutput {
    pub(super) files: AtomicFiles,
    pub(super) messages: Vec<FrameMessage>,
}

/// Writes one simulated frame's files, not yet in place, and adds them to the report.
/// In the world frame each point is placed by the sensor's pose when its beam fired
/// (the sweep), which undoes the rolling shutter.
pub(super) fn write_frame(
    opts: &JobOptions,
    m: &Member,
    plan: &OutputPlan,
    (frame, cloud, settings): (u64, &PointCloud, &FrameSettings),
    (flow, objects): (Option<&FlowField>, Option<&[ObjectLabel]>),
    report: &mut JobReport,
) -> Result<FrameOutput, JobError> {
    let mut out = FrameOutput {
        files: AtomicFiles::default(),
        messages: Vec::new(),
    };
    let stamp = FrameStamp {
        frame,
        time: scenario_time(&m.sensor, frame),
        pose: viewpoint(settings.sensor_to_world),
    };
    if opts.format == Format::Osi {
        write_osi_frame(opts, m, plan, (frame, cloud, settings), &mut out, report)?;
    } else if opts.world_frame {
        let world = to_world(cloud, settings);
        let frame_of = FrameOf {
            stamp,
            world: Some(stamp.pose),
            flow,
            objects,
        };
        write_clouds(opts, m, plan, &world, frame_of, &mut out, report)?;
    } else {
        let frame_of = FrameOf {
            stamp,
            world: None,
            flow,
            objects,
        };
        write_clouds(opts, m, plan, cloud, frame_of, &mut out, report)?;
    }
    if opts.picture {
        // The picture is of the sensor's view whatever frame the file uses.
        let png = m
            .out_dir
            .join(frame_file_name(frame, opts.format))
            .with_extension("png");
        write_picture_into(&mut out.files, &png, cloud, &picture_options(&m.sensor))?;
        report.files.push(png);
    }
    Ok(out)
}

/// A frame as one SensorData, in a one-message OSI trace `frame_NNNNNN.osi` (a whole
/// run joins them into its trace, [`join_osi_frames`]).
fn write_osi_frame(
    opts: &JobOptions,
    m: &Member,
    plan: &OutputPlan,
    (frame, cloud, settings): (u64, &PointCloud, &FrameSettings),
    out: &mut FrameOutput,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let time = scenario_time(&m.sensor, frame);
    let mount = &m.sensor.mount;
    let sensor_id = m.index as u64;
    let input = opts.osi.as_ref();
    let sensor_view = input.map(|i| i.sensor_view(time, sensor_id, mounting_position(mount)));
    let data = sensor_data(
        &cloud.points,
        OsiStamp {
            time: time + input.map_or(0.0, |i| i.time_origin()),
            frame,
            sensor_id,
            mount,
            vehicle: settings.sensor_to_world * mount.to_affine().inverse(),
            object_ids: &plan.osi_ids,
            sensor_view,
        },
    );
    let path = m.out_dir.join(frame_file_name(frame, Format::Osi));
    out.files.write(&path, |w| write_message(w, &data))?;
    report.files.push(path);
    Ok(())
}

/// A whole run's OSI frames (`frame_NNNNNN.osi` in `report.files`, in frame order)
/// joined into its trace in `dir`, named by OSI's convention (written atomically);
/// the frame files are then removed and the trace listed among the run's files.
pub(super) fn join_osi_frames(dir: &Path, report: &mut JobReport) -> Result<(), JobError> {
    let is_osi = |p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "osi");
    let frames: Vec<_> = report.files.iter().filter(|p| is_osi(p)).cloned().collect();
    let path = join_osi_files(&frames, dir)?;
    for f in &frames {
        let _ = std::fs::remove_file(f);
    }
    report.files.retain(|p| !is_osi(p));
    report.run_files.push(path);
    Ok(())
}

/// `frames` (one-message traces, in order) joined into one trace in `dir`, named by
/// OSI's convention at the time of writing; returns its path.
pub(super) fn join_osi_files(
    frames: &[std::path::PathBuf],
    dir: &Path,
) -> Result<std::path::PathBuf, JobError> {
    let name = trace_file_name(
        std::time::SystemTime::now(),
        crate::osi::trace::SENSOR_DATA,
        frames.len() as u64,
        crate::osi::trace::TRACE_NAME,
    );
    let path = dir.join(name);
    write_atomic(&path, |w| {
        for f in frames {
            std::io::copy(&mut std::fs::File::open(f)?, w)?;
        }
        Ok(())
    })?;
    Ok(path)
}

/// The cloud's points in the world: each placed by the sensor's pose when its beam
/// fired (the sweep), which undoes the rolling shutter.
pub(super) fn to_world(cloud: &PointCloud, settings: &FrameSettings) -> PointCloud {
    let mut world = cloud.clone();
    for p in &mut world.points {
        let pose = settings.pose_at(p.time);
        let w = pose.transform_point3(glam::Vec3::new(p.x, p.y, p.z));
        (p.x, p.y, p.z) = (w.x, w.y, w.z);
    }
    world
}

/// Which frame a cloud is of, and in which coordinate frame its points are.
#[derive(Clone, Copy)]
struct FrameOf<'a> {
    stamp: FrameStamp,
    /// `Some`: the points are in the world, and this is the sensor's pose there.
    world: Option<Viewpoint>,
    /// The frame's motion, for the scene flow's fields.
    flow: Option<&'a FlowField>,
    /// The frame's objects, for a bag or an MCAP file (`run --objects`).
    objects: Option<&'a [ObjectLabel]>,
}

/// Calls `f` with the cloud(s) of a frame: one, or one per return layer of an organized
/// layout, each with its metadata.
fn with_layers<T>(
    opts: &JobOptions,
    plan: &OutputPlan,
    cloud: &PointCloud,
    of: FrameOf<'_>,
    f: impl FnOnce(&[(usize, &PointCloud, CloudMeta)]) -> Result<T, JobError>,
) -> Result<T, JobError> {
    let meta = |organized| CloudMeta {
        fields: &opts.fields,
        organized,
        world: of.world,
        beams: Some(&plan.layout),
        flow: of.flow,
        stamp: Some(of.stamp),
    };
    match plan.organize {
        None => f(&[(0, cloud, meta(None))]),
        Some(how) => {
            let organized = organize(cloud, &plan.layout, how)?;
            let layers: Vec<(usize, &PointCloud, CloudMeta)> = (organized.iter().enumerate())
                .map(|(layer, part)| (layer, &part.cloud, meta(Some((part.width, part.height)))))
                .collect();
            f(&layers)
        }
    }
}

/// Writes the cloud(s) of a frame: one, or one per return layer of an organized layout
/// that puts layers in files of their own; each a file, or messages for the bag.
fn write_clouds(
    opts: &JobOptions,
    m: &Member,
    plan: &OutputPlan,
    cloud: &PointCloud,
    of: FrameOf<'_>,
    out: &mut FrameOutput,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let names = &m.mcap.names;
    let objects = (of.objects.filter(|_| opts.format == Format::Mcap))
        .map(|o| objects_message(o, names, &of.stamp, of.world.is_some(), 0));
    with_layers(opts, plan, cloud, of, |layers| {
        if plan.bag {
            out.messages = frame_messages(layers, names)
                .map_err(|e| crate::output::OutputError::write(&opts.out_dir.join(RUN_BAG), e))?;
            out.messages.extend(objects.clone());
            return Ok(());
        }
        for &(layer, part, meta) in layers {
            let name = frame_layer_file_name(of.stamp.frame, layer, opts.format);
            let path = m.out_dir.join(name);
            if opts.format == Format::Mcap {
                // The run's own names, each return on its own topic, the objects after
                // the last.
                let last = layer + 1 == layers.len();
                let extra: &[FrameMessage] = if last { objects.as_slice() } else { &[] };
                meta.check(part)?;
                out.files.write(&path, |w| {
                    write_mcap_layer_to(w, part, &meta, names, (layer, extra))
                })?;
            } else {
                write_cloud_into(&mut out.files, &path, part, opts.format, &meta)?;
            }
            report.files.push(path);
        }
        Ok(())
    })
}

/// A frame's messages as a bag would hold them, on `names` and stamped on a clock that
/// reads `clock_ns` at scenario time 0: the live topics' (`job::live`).
#[allow(clippy::too_many_arguments)]
pub(super) fn frame_messages_for(
    opts: &JobOptions,
    m: &Member,
    plan: &OutputPlan,
    frame: u64,
    cloud: &PointCloud,
    settings: &FrameSettings,
    names: &RosNames,
    clock_ns: u64,
) -> Result<Vec<FrameMessage>, JobError> {
    let stamp = FrameStamp {
        frame,
        time: scenario_time(&m.sensor, frame),
        pose: viewpoint(settings.sensor_to_world),
    };
    let world;
    let (cloud, of) = match opts.world_frame {
        true => {
            world = to_world(cloud, settings);
            let of = FrameOf {
                stamp,
                world: Some(stamp.pose),
                flow: None,
                objects: None,
            };
            (&world, of)
        }
        false => (
            cloud,
            FrameOf {
                stamp,
                world: None,
                flow: None,
                objects: None,
            },
        ),
    };
    with_layers(opts, plan, cloud, of, |layers| {
        frame_messages_at(layers, names, clock_ns)
            .map_err(|e| crate::output::OutputError::Records(e.to_string()).into())
    })
}

/// The picture of a frame, sized to the sensor: its rings and azimuth field of view.
pub fn picture_options(sensor: &Sensor) -> PictureOptions {
    let (lo, hi) = sensor
        .beams
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), b| {
            (lo.min(b.azimuth), hi.max(b.azimuth))
        });
    let full_turn = hi - lo > 1.5 * std::f32::consts::PI;
    let columns = sensor.columns.clamp(256, 4096);
    // Centre each pixel column on a beam column: spinning sensors fire at exact multiples
    // of 2π/columns, and bins edged on those angles would alias into empty stripes.
    let span = if full_turn {
        let step = std::f32::consts::TAU / columns as f32;
        (lo - 0.5 * step, lo - 0.5 * step + std::f32::consts::TAU)
    } else {
        let step = (hi - lo) / (columns.max(2) - 1) as f32;
        (lo - 0.5 * step, hi + 0.5 * step)
    };
    PictureOptions {
        channels: Some(sensor.channels),
        columns,
        azimuth_span: Some(span),
        bev_extent: sensor.max_range.min(80.0),
        ..Default::default()
    }
}
