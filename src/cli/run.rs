//! `beamtrace run`: the options of the job, its progress bar and its summary.

use anyhow::{bail, Context as _, Result};
pub(super) use beamtrace::job::Unscripted;
use beamtrace::job::{
    run_job, FrameDone, JobOptions, JobReport, LoadedSpec, McapOptions, PacketFormat, PacketOutput,
    SimSpec,
};
use beamtrace::osi::OsiInput;
use beamtrace::output::dataset::DatasetOptions;
use beamtrace::output::{
    Convention, FieldSet, Format, RosNames, FIELDS, POINTS_TOPIC, SENSOR_FRAME_ID,
};
use beamtrace::sensor::{Rig, Sensor};
use beamtrace::sim::Sun;
use beamtrace::weather::Weather;
use glam::Vec3;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What `run` and `stream` both take: the scene and its motion, the sensor, the device.
#[derive(clap::Args)]
pub(super) struct SimArgs {
    /// glTF scene (.gltf or .glb). Default: the scenario's scene, else
    /// scenes/street.glb, the bundled street.
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Scenario (YAML): the vehicle's trajectory and the scene objects' keyframes over
    /// time (configs/scenarios/drive.yaml is a commented example). Without it the
    /// scene's own glTF animations play and the vehicle stands at --position/--yaw.
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Let the scene's buffer and image URIs, the sensor file's CSV paths and the
    /// scenario's scene name files outside their file's folder (absolute paths, `..`);
    /// by default they must lie inside it. Only for files you trust.
    #[arg(long)]
    allow_outside_paths: bool,
    /// Sensor: a preset name (see `beamtrace sensors`) or a YAML file.
    #[arg(long, default_value = "os1-128")]
    sensor: String,
    /// A vehicle rig (YAML): several sensors, each at its mount on the vehicle, traced
    /// together on one scene (configs/rigs/roof-and-corners.yaml is a commented
    /// example). Each sensor writes into <out>/<name>/; poses.csv and run.json are the
    /// rig's. Replaces --sensor.
    #[arg(long, value_name = "FILE", conflicts_with = "sensor")]
    rig: Option<PathBuf>,
    /// Number of frames to simulate (≥ 1). Default: the scenario's length, else 1.
    #[arg(long, value_parser = super::parse::frames, allow_negative_numbers = true)]
    frames: Option<u64>,
    /// Seed of the counter-based random draws (noise); same seed ⇒ same bytes,
    /// another seed ⇒ other noise.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// No measurement noise: the sensor's range jitter, amplitude noise, detection
    /// roll-off and false alarms off, and the sub-rays fixed on their grid instead of
    /// jittered per frame (every seed gives the same points).
    #[arg(long)]
    ideal: bool,
    /// One ray per beam along its centre instead of the beam's sub-rays: faster, but
    /// no beam footprint (no mixed pixels, echo widening or blooming).
    #[arg(long)]
    thin: bool,
    /// Return mode, as the device's setting: strongest, first, last, dual (the
    /// vendor's: Velodyne strongest + last, Ouster strongest + second strongest, i.e.
    /// its RNG19_RFL8_SIG16_NIR16_DUAL profile) or all. A preset takes only the modes
    /// its device has (`beamtrace sensors --detail NAME` lists them). Default: the
    /// sensor's own (a preset: its firmware's default).
    #[arg(long, value_name = "MODE")]
    return_mode: Option<String>,
    /// Vulkan device index (see `beamtrace info`); default: the best ray-tracing device.
    #[arg(long)]
    device: Option<usize>,
    /// Vehicle position in the world "x,y,z" (m, each within ±100 km); the sensor sits
    /// at its mount on top. A scenario's vehicle track replaces it.
    #[arg(long, value_parser = super::parse::vec3, default_value = "0,0,0", allow_hyphen_values = true)]
    position: Vec3,
    /// Vehicle heading (deg, counter-clockwise from +x; −360 to 360).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    yaw: f32,
    /// IR material database (YAML). Default: the bundled configs/materials.yaml.
    #[arg(long)]
    materials: Option<PathBuf>,
    /// Mapping table glTF material name → IR material (YAML of `name: ir_material`).
    #[arg(long)]
    material_map: Option<PathBuf>,
    /// Refuse to run when a glTF material has no IR mapping (it would fall back to the
    /// database's default, or to glass when it transmits light) or a --material-map key
    /// matches no glTF material; without it, both are warnings.
    #[arg(long)]
    strict_materials: bool,
    /// The sun, for the ambient (passive near-IR) channel and its noise floor:
    /// "azimuth,elevation[,irradiance]" in degrees, azimuth counter-clockwise from the
    /// world's +x (−360 to 360), elevation −90 to 90; irradiance relative to the
    /// default 1 (0 to 1000).
    #[arg(long, value_parser = super::parse::sun, default_value = "135,45,1", allow_hyphen_values = true)]
    sun: Sun,
    /// Night: no sunlight, so no ambient channel and no shadow rays.
    #[arg(long)]
    no_sun: bool,
    /// Weather: `clear`; a preset — haze (2 km visibility), fog (200 m), dense-fog
    /// (50 m), light-rain (2 mm/h), heavy-rain (25 mm/h), snow (2 mm/h water
    /// equivalent); or media joined by commas: fog:visibility=M (5 to 100000),
    /// rain:rate=MM_PER_H (0 to 300), snow:rate=MM_PER_H (0 to 30), e.g.
    /// `fog:visibility=300,rain:rate=10`. Replaces a scenario's `weather:` keyframes.
    #[arg(long, value_parser = super::parse::weather)]
    weather: Option<Weather>,
    /// Enable the Vulkan validation layer (any message fails the run).
    #[arg(long)]
    validate: bool,
}

#[derive(clap::Args)]
pub(super) struct RunArgs {
    #[command(flatten)]
    sim: SimArgs,
    /// Output folder; files are named frame_000000.<ext>. A folder that holds another
    /// run's files (frames, run.json, poses.csv, shard journals) is refused, so that two
    /// runs' frames never mix: see --overwrite.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Remove beamtrace's own files from --out before the run: frame_NNNNNN.* clouds and
    /// pictures, run.json, poses.csv (and poses_end.csv, poses_kitti.txt,
    /// poses_tum.txt), packets.pcap/.json, index.json, frames.mcap, shards/shard-* and a
    /// --dataset layout's frame and run files (folders it leaves empty go too); other
    /// files stay.
    #[arg(long, conflicts_with = "shard")]
    overwrite: bool,
    /// Point cloud format: pcd (binary), pcd-ascii, ply (binary little-endian), las, mcap
    /// or csv, one file per frame. csv: a header line of the --fields' names, then a
    /// comma-separated line per point (an organized cloud's rows in grid order, its
    /// empty cells `nan`). las: LAS 1.4, point format 6, x y z at 0.1 mm,
    /// intensity = R_app × 1000 (saturating at 65535), return number and count, GPS time
    /// = scenario time (frame / frame rate + the beam's firing time, s), classification
    /// from the semantic class, scan angle off nadir, beamtrace's other fields as named
    /// extra bytes; takes beamtrace's fields only, unorganized. mcap: one bag of the
    /// whole run, <out>/run.mcap (a file per frame with --split-files): per frame a ROS 2
    /// sensor_msgs/PointCloud2 of the --fields on --topic (frame --frame-id, or `world`
    /// with --world) and the sensor's pose world → --frame-id on /tf, stamped with the
    /// frame's scenario time. An interrupted run leaves the frames it finished in
    /// run.partial.mcap. osi: one ASAM OSI trace of the run,
    /// <out>/<created>_sd_380_<protobuf>_<frames>_beamtrace.osi (binary, OSI's file
    /// naming): per frame a SensorData whose feature_data.lidar_sensor[0] holds a
    /// LidarDetection per point (spherical position in the sensor frame, intensity in %,
    /// echo pulse width, beam id, object id, existence probability) and the sensor's
    /// mounting position; with --osi-ground-truth also the frame's ground truth as a
    /// SensorView. Takes beamtrace's fields, unorganized, in the sensor frame.
    #[arg(long, default_value = "pcd")]
    format: Format,
    /// An ASAM OSI trace (binary .osi) of SensorView or GroundTruth messages that
    /// drives the run: the host vehicle (its rear-axle reference point is the vehicle's
    /// origin) and every moving object, each moving the glTF node matched to its OSI id
    /// (--osi-map, else a node with extras.osi_id, else a node named by the id), poses
    /// interpolated between the messages' timestamps. Scenario time 0 is the first
    /// timestamp; the run lasts to the last one unless --frames says otherwise.
    /// Replaces --scenario.
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    osi_ground_truth: Option<PathBuf>,
    /// With --osi-ground-truth: a YAML file mapping OSI object ids to glTF node names,
    /// lines `42: car_0`; it wins over extras.osi_id and node names.
    #[arg(long, value_name = "FILE", requires = "osi_ground_truth")]
    osi_map: Option<PathBuf>,
    /// With --format mcap: a file per frame (frame_000000.mcap) instead of one bag;
    /// `beamtrace merge OUT` joins them into run.mcap.
    #[arg(long)]
    split_files: bool,
    /// With --format mcap: the point clouds' topic (a second return's clouds go on it
    /// with 2 appended, as ouster-ros's /ouster/points2). [default: /beamtrace/points]
    #[arg(long, value_name = "TOPIC")]
    topic: Option<String>,
    /// With --format mcap: the sensor's frame id, the points' frame and the child of the
    /// world → sensor transform on /tf. [default: beamtrace]
    #[arg(long, value_name = "ID")]
    frame_id: Option<String>,
    /// The fields of the clouds: a convention — beamtrace (all of beamtrace's fields),
    /// velodyne, ouster, ouster-native, ros — or a comma-separated list of field keys
    /// (e.g. x,y,z,intensity,ouster.t). The field table is at the end of this help.
    #[arg(long, value_name = "SET", default_value = "beamtrace")]
    fields: FieldSet,
    /// Organized clouds: HEIGHT × WIDTH cells of the sensor's rings × columns, NaN x y z
    /// where a beam has no return (the default of --fields velodyne, ouster and
    /// ouster-native, as their drivers publish). Needs a sensor whose beams form a grid.
    #[arg(long, conflicts_with = "unorganized")]
    organized: bool,
    /// One row of returned points only, also for the conventions that organize.
    #[arg(long)]
    unorganized: bool,
    /// Write points in the world frame (each placed by the sensor's pose when its beam
    /// fired) instead of the sensor frame. The picture stays sensor-centred.
    #[arg(long)]
    world: bool,
    /// Do not write the PNG picture next to each cloud.
    #[arg(long)]
    no_picture: bool,
    /// Also write each frame's labelled objects (vehicles, pedestrians, whatever the
    /// scenario moves) into frame_NNNNNN_objects.json: class, oriented box from the mesh
    /// (sensor frame at its points' time, world, world at the frame's start), velocity,
    /// points per return, visibility, KITTI occlusion level, truncation, distance. With
    /// --format mcap the bag also carries them, as a vision_msgs/msg/Detection3DArray
    /// per frame on the topic beside the points' (/beamtrace/objects).
    #[arg(long)]
    objects: bool,
    /// Write the frames in a dataset layout that training tools read, instead of
    /// clouds and pictures: kitti (KITTI 3D object: training/velodyne/NNNNNN.bin,
    /// label_2/, calib/ with a virtual camera, ImageSets/ with the last fifth of the
    /// frames as val), semantic-kitti (sequences/00/velodyne/, labels/ with SemanticKITTI
    /// ids and instances, calib.txt, poses.txt and times.txt at each sweep's end, and
    /// KITTI odometry's poses/00.txt) or openpcdet (OpenPCDet's custom format:
    /// points/NNNNNN.npy, labels/NNNNNN.txt, ImageSets/). Points are every return in the
    /// sensor frame as x y z reflectance; boxes are the objects' at their points' time.
    /// poses.csv and run.json are written beside them.
    #[arg(
        long,
        value_name = "LAYOUT",
        conflicts_with_all = [
            "format", "fields", "world", "flow", "organized", "unorganized", "split_files",
            "topic", "frame_id",
        ]
    )]
    dataset: Option<beamtrace::output::dataset::Dataset>,
    /// With --dataset: the labels beamtrace's classes get, as `class=label,…` (classes:
    /// vehicle, pedestrian, …; labels: KITTI's types Car, Van, Truck, Pedestrian,
    /// Person_sitting, Cyclist, Tram, Misc, DontCare; SemanticKITTI's numeric ids;
    /// OpenPCDet class names), `none` to leave a class out, e.g. `vehicle=Van`. Default:
    /// vehicle → Car / 10 (car) / Vehicle, pedestrian → Pedestrian / 30 (person) /
    /// Pedestrian; SemanticKITTI's moving ids for objects that move.
    #[arg(long, value_name = "MAP", requires = "dataset")]
    class_map: Option<String>,
    /// Add the scene flow to the clouds' fields: flow_x, flow_y, flow_z, the world
    /// velocity (m/s) of the surface each point hit at its firing time, rotation
    /// included (0 on the static world; the sensor's own motion is in poses.csv). Not
    /// with --format las or osi, which hold fixed fields.
    #[arg(long)]
    flow: bool,
    /// Also write the frames as the real sensor's packets into <out>/packets.pcap
    /// (Ethernet/IPv4/UDP, as a capture of the sensor; timestamps from Unix time 0).
    #[arg(long)]
    pcap: bool,
    /// The packets' format (with --pcap): see `beamtrace stream --help`. Default: the
    /// sensor's own (vlp16 for vlp-16, …).
    #[arg(long, requires = "pcap")]
    packets: Option<String>,
    /// Make only shard I of N (0-based) of the frames, into --out; `beamtrace merge
    /// OUT` puts the shards together (see the end of this help).
    #[arg(long, value_name = "I/N")]
    shard: Option<beamtrace::job::shard::Shard>,
}

pub(super) fn run(args: RunArgs) -> Result<()> {
    if let Some(shard) = args.shard {
        return super::batch::run_shard_of(&args, shard);
    }
    let opts = job_options(&args)?;
    super::report::prepare_out(&args.out, args.overwrite)?;
    let bar = progress_bar(opts.frames);
    let start = Instant::now();
    let mut points = 0u64;
    super::interrupt::frames_done(0);
    let result = run_job(&opts, &mut |done: &FrameDone| {
        super::interrupt::frames_done(done.frame + 1);
        points += done.points as u64;
        bar.set_message(rates(done.frame + 1, points, start.elapsed()));
        bar.set_position(done.frame + 1);
    });
    bar.finish_and_clear();
    let report = result.map_err(|e| super::job_failed(e, "simulation failed"))?;
    if let Some(w) = super::report::empty_frames(&report, &opts.scene, &opts.sensor) {
        eprintln!("warning: {w}");
    }
    print_summary(&report, &opts, &args);
    Ok(())
}

/// Frames an OSI trace plays when `--frames` is not given (its messages' span at the
/// frame rate): refused, naming the trace, beyond what a job writes; said when long.
fn osi_frames(path: &std::path::Path, frames: Option<u64>) -> Result<u64> {
    let frames = frames.unwrap_or(1);
    let max = beamtrace::job::MAX_FRAMES;
    if frames > max {
        bail!(
            "{}: its messages span {frames} frames at the sensor's rate, more than the {max} a \
             job writes; give --frames N to play its first N frames, or cut the trace",
            path.display()
        );
    }
    if frames > 10_000 {
        eprintln!(
            "note: {} spans {frames} frames at the sensor's rate; --frames N plays fewer",
            path.display()
        );
    }
    Ok(frames)
}

/// The job the options describe: scene, sensor and materials loaded, the pose checked.
pub(super) fn job_options(args: &RunArgs) -> Result<JobOptions> {
    let mut opts = sim_options(&args.sim, Unscripted::StandStill)?;
    if let Some(path) = &args.osi_ground_truth {
        let (input, scenario) = OsiInput::load(path, &opts.scene, args.osi_map.as_deref())?;
        if args.sim.frames.is_none() {
            opts.frames = osi_frames(path, scenario.frames_at(opts.sensor.frame_rate))?;
        }
        opts.scenario = Some(scenario);
        opts.osi = Some(input);
    }
    opts.out_dir = args.out.clone();
    opts.format = args.format;
    opts.mcap = mcap_options(args)?;
    opts.picture = !args.no_picture;
    opts.objects = args.objects;
    opts.dataset = match args.dataset {
        Some(d) => Some(DatasetOptions::new(d, args.class_map.as_deref())?),
        None => None,
    };
    if opts.dataset.is_some() {
        opts.picture = false;
    }
    opts.world_frame = args.world;
    if args.flow && matches!(args.format, Format::Las | Format::Osi) {
        bail!(
            "--flow adds the scene flow's fields, which --format {} cannot hold (its fields \
             are fixed): write pcd, ply, csv or mcap with --flow",
            args.format
        );
    }
    opts.fields = match args.flow {
        true => args.fields.clone().with_flow(),
        false => args.fields.clone(),
    };
    opts.organized = match (args.organized, args.unorganized) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    opts.clouds = true;
    if args.pcap {
        opts.packets = Some(PacketOutput {
            format: run_packet_format(args.packets.as_deref(), &opts)?,
            udp: None,
            pcap: Some(args.out.join(PCAP_FILE)),
            real_time: false,
            start: Duration::ZERO,
            preload: false,
            http: None,
            livox_device: None,
            on_host: false,
        });
    }
    Ok(opts)
}

/// `--split-files`, `--topic` and `--frame-id`, which only MCAP files take.
fn mcap_options(args: &RunArgs) -> Result<McapOptions> {
    let given = [
        (args.split_files, "--split-files"),
        (args.topic.is_some(), "--topic"),
        (args.frame_id.is_some(), "--frame-id"),
    ];
    if args.format != Format::Mcap {
        if let Some((_, option)) = given.iter().find(|g| g.0) {
            bail!(
                "{option} is for MCAP output (--format mcap); --format {} writes a file \
                 per frame and carries no topic or frame id",
                args.format
            );
        }
    }
    let names = RosNames::new(
        args.topic.as_deref().unwrap_or(POINTS_TOPIC),
        args.frame_id.as_deref().unwrap_or(SENSOR_FRAME_ID),
    )?;
    Ok(McapOptions {
        names,
        split_files: args.split_files,
    })
}

/// The pcap file `run --pcap` writes into the output folder.
pub(super) const PCAP_FILE: &str = "packets.pcap";

/// `--packets NAME`, or the sensor's own format; a rig's sensors each take their own
/// (the rig entry's `packets:`, else their preset's), so a rig takes no `--packets`.
pub(super) fn run_packet_format(name: Option<&str>, opts: &JobOptions) -> Result<PacketFormat> {
    let Some(rig) = &opts.rig else {
        return packet_format(name, &opts.sensor);
    };
    if name.is_some() {
        bail!(
            "--packets names one format; a rig's sensors each send their own: give an entry \
             `packets: NAME` in the rig file (else the sensor's preset's format is used)"
        );
    }
    let first = &rig.sensors[0];
    let given = first.packets.as_deref();
    packet_format(given, &first.sensor).with_context(|| format!("rig sensor {}", first.name))
}

/// `--packets NAME`, or the sensor's own format.
pub(super) fn packet_format(name: Option<&str>, sensor: &Sensor) -> Result<PacketFormat> {
    match name {
        Some(n) => Ok(PacketFormat::parse(n)?),
        None => Ok(PacketFormat::of_sensor(sensor)?),
    }
}

/// The job `run` and `stream` share: scene, scenario, sensor and materials loaded, the
/// pose checked; no output yet (no clouds, no packets).
pub(super) fn sim_options(args: &SimArgs, unscripted: Unscripted) -> Result<JobOptions> {
    let spec = SimSpec {
        scene: args.scene.clone(),
        scenario: args.scenario.clone(),
        unscripted,
        allow_outside_paths: args.allow_outside_paths,
        sensor: args.sensor.clone(),
        rig: args.rig.clone(),
        frames: args.frames,
        seed: args.seed,
        ideal: args.ideal,
        thin: args.thin,
        return_mode: args.return_mode.clone(),
        device: args.device,
        validate: args.validate,
        position: args.position,
        yaw_deg: args.yaw,
        materials: args.materials.clone(),
        material_map: args.material_map.clone(),
        strict_materials: args.strict_materials,
        sun: (!args.no_sun).then_some(args.sun),
        weather: args.weather,
    };
    let LoadedSpec { mut opts, notices } = spec.load()?;
    for n in notices {
        eprintln!("{n}");
    }
    // Lossy: run.json records the command line as text.
    opts.command_line = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Ok(opts)
}

/// A bar for runs of two frames or more; one frame is over before a bar would help.
pub(super) fn progress_bar(frames: u64) -> ProgressBar {
    if frames < 2 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(frames);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} frame {pos}/{len} [{bar:30}] {msg}, eta {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("first frame");
    bar
}

/// Frames and points per second after `frames` frames of `points` points in `elapsed`.
pub(super) fn rates(frames: u64, points: u64, elapsed: Duration) -> String {
    let s = elapsed.as_secs_f64().max(1e-9);
    format!(
        "{:.2} frames/s, {} points/s",
        frames as f64 / s,
        si(points as f64 / s)
    )
}

/// `v` with three significant digits and an SI prefix: 950, 12.3 k, 4.56 M.
fn si(v: f64) -> String {
    let (scaled, prefix) = match v {
        v if v >= 1e9 => (v / 1e9, " G"),
        v if v >= 1e6 => (v / 1e6, " M"),
        v if v >= 1e3 => (v / 1e3, " k"),
        v => (v, ""),
    };
    let digits = match scaled {
        s if s >= 100.0 => 0,
        s if s >= 10.0 => 1,
        _ => 2,
    };
    format!("{scaled:.digits$}{prefix}")
}

/// The field table at the end of `run --help`: every field a cloud can hold, from the
/// one table the writers use, and the conventions' field lists.
pub(super) fn fields_help() -> String {
    let mut h = String::from(
        "Fields (--fields takes a convention or a comma-separated list of these keys), \
         with the name files give them, PCD type/PLY type, unit and meaning:\n",
    );
    let width = FIELDS.iter().map(|f| f.key.len()).max().unwrap_or(0);
    for f in FIELDS {
        let ty = format!(
            "{}{}/{}",
            f.scalar.pcd_type(),
            f.scalar.size(),
            f.scalar.ply_type()
        );
        h.push_str(&format!(
            "  {:width$}  {:12} {ty:13} {:6} {}\n",
            f.key, f.name, f.unit, f.meaning
        ));
    }
    h.push_str(
        "Types: PCD TYPE and SIZE / PLY type; PLY stores 32-bit unsigned fields as int32 \
         (values above 2147483647 are refused).\n\nConventions:\n",
    );
    for c in Convention::ALL {
        h.push_str(&format!(
            "  {:13} {}\n  {:13} {}\n",
            c.name(),
            c.summary(),
            "",
            FieldSet::of(c).keys().join(" ")
        ));
    }
    h
}

fn print_summary(report: &JobReport, opts: &JobOptions, args: &RunArgs) {
    if let Some(rig) = &opts.rig {
        return print_rig_summary(report, opts, rig, args);
    }
    let total: usize = report.points_per_frame.iter().sum();
    println!(
        "{} frame(s) of {} on {} with {} ({} beams): {} points/frame on average",
        report.points_per_frame.len(),
        scene_and_scenario(opts),
        report.device,
        opts.sensor.name,
        opts.sensor.beams.len(),
        total / report.points_per_frame.len().max(1)
    );
    let mut gpu = report.gpu_ms.clone();
    gpu.sort_by(f64::total_cmp);
    if let Some(median) = gpu.get(gpu.len() / 2) {
        println!(
            "  {} sub-rays per beam, GPU time per frame {median:.1} ms (median of {})",
            opts.sensor.subrays,
            gpu.len()
        );
    }
    if opts.objects || opts.dataset.is_some() {
        let frames = report.points_per_frame.len().max(1) as f64;
        println!(
            "  objects labelled in {:.1} ms per frame on the host",
            1e3 * report.objects_s / frames
        );
    }
    for f in report.files.iter().take(4) {
        println!("  {}", f.display());
    }
    if report.files.len() > 4 {
        println!(
            "  … and {} more in {}",
            report.files.len() - 4,
            args.out.display()
        );
    }
    for f in &report.run_files {
        println!("  {}", f.display());
    }
    if let Some(line) = super::report::material_shares(report, &opts.materials) {
        println!("  {line}");
    }
}

/// A rig's summary: a line per sensor, then the rig's own files.
fn print_rig_summary(report: &JobReport, opts: &JobOptions, rig: &Rig, args: &RunArgs) {
    println!(
        "{} frame(s) of rig {} ({} sensors) on {} on {}",
        opts.frames,
        rig.name,
        rig.sensors.len(),
        scene_and_scenario(opts),
        report.device
    );
    for (m, (name, r)) in rig.sensors.iter().zip(&report.sensors) {
        let frames = r.points_per_frame.len();
        let total: usize = r.points_per_frame.iter().sum();
        println!(
            "  {name}: {} ({} beams), {frames} frame(s), {} points/frame on average, in {}",
            m.sensor.name,
            m.sensor.beams.len(),
            total / frames.max(1),
            args.out.join(name).display()
        );
    }
    for f in &report.run_files {
        println!("  {}", f.display());
    }
    if let Some(line) = super::report::material_shares(report, &opts.materials) {
        println!("  {line}");
    }
}

/// "street", or "street playing configs/scenarios/drive.yaml".
pub(super) fn scene_and_scenario(opts: &JobOptions) -> String {
    match &opts.scenario {
        Some(s) => format!("{} playing {}", opts.scene_name, s.path().display()),
        None => opts.scene_name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_frames_and_points_per_second() {
        // 4 frames of 250 000 points in 2 s: 2 frames/s, 500 000 points/s.
        let r = rates(4, 1_000_000, Duration::from_secs(2));
        assert_eq!(r, "2.00 frames/s, 500 k points/s");
        assert_eq!(
            rates(1, 1234, Duration::from_millis(100)),
            "10.00 frames/s, 12.3 k points/s"
        );
        assert_eq!(si(950.0), "950");
        assert_eq!(si(4_560_000.0), "4.56 M");
    }
}
