//! One FMU instance: its variables, the simulation session it opens at the end of
//! initialization, and a step — SensorView in, a frame simulated, SensorData out.

use beamtrace::job::{Session, SimSpec};
use beamtrace::osi::osmp::{join_address, split_address, vr};
use beamtrace::osi::{self, FrameStamp, Sample, SensorView};
use beamtrace::sensor::Pose;
use prost::Message;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What went wrong, for the master's log.
pub type Failure = String;

/// One instance of the FMU.
pub struct Model {
    /// Where `resources/` was unpacked.
    pub resources: PathBuf,
    pub integers: [i32; 8],
    pub valid: bool,
    pub sensor: String,
    pub scene: String,
    session: Option<Opened>,
    /// The last SensorData, kept valid until the next step (OSMP).
    output: Vec<u8>,
    /// OSI ids of the SensorView's objects that match no node (told once each).
    pub unmatched: BTreeSet<u64>,
}

/// The session and what a step needs of its scene.
struct Opened {
    session: Session,
    /// OSI id → the node it moves (a node named by the id or with `extras.osi_id`).
    nodes: HashMap<u64, String>,
    /// Instance id → OSI id, for the detections' object ids.
    instance_ids: HashMap<u32, u64>,
}

/// The parameters' start values, which `beamtrace fmu` writes beside the scene (the
/// master need not set parameters it leaves at their start values).
pub const PARAMETERS_FILE: &str = "parameters.json";

impl Model {
    /// An instance whose parameters start at `resources/parameters.json`'s values.
    pub fn new(resources: PathBuf) -> Model {
        let start: serde_json::Value = std::fs::read(resources.join(PARAMETERS_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let text = |key: &str| start[key].as_str().unwrap_or_default().to_string();
        let mut integers = [0; 8];
        integers[vr::SEED as usize] = start["seed"].as_i64().unwrap_or(0) as i32;
        Model {
            resources,
            integers,
            valid: false,
            sensor: text("sensor"),
            scene: text("scene"),
            session: None,
            output: Vec::new(),
            unmatched: BTreeSet::new(),
        }
    }

    /// A parameter's file in `resources/` (an absolute path stays as it is).
    fn resource(&self, name: &str) -> PathBuf {
        self.resources.join(name)
    }

    /// Loads the scene and sensor and opens the device: the end of initialization.
    pub fn open(&mut self) -> Result<(), Failure> {
        beamtrace::gpu::set_disk_cache(beamtrace::gpu::default_disk_cache());
        let sensor_file = self.resource(&self.sensor);
        let sensor = match sensor_file.is_file() {
            true => sensor_file.to_string_lossy().into_owned(),
            false => self.sensor.clone(),
        };
        let spec = SimSpec {
            scene: Some(self.resource(&self.scene)),
            sensor,
            seed: self.integers[vr::SEED as usize].max(0) as u64,
            ..SimSpec::default()
        };
        let loaded = spec
            .load()
            .map_err(|e| format!("loading the simulation: {e}"))?;
        let scene = &loaded.opts.scene;
        let mut nodes = HashMap::new();
        for n in &scene.nodes {
            let id = n.osi_id.or_else(|| n.name.parse().ok());
            if let Some(id) = id {
                nodes.entry(id).or_insert_with(|| n.name.clone());
            }
        }
        let ids = osi::IdMap::default();
        let mut instance_ids = ids.instance_ids(scene);
        for i in &scene.instances {
            let named = i
                .node
                .and_then(|n| scene.nodes[n.node as usize].name.parse().ok());
            if let (None, Some(id)) = (instance_ids.get(&i.instance_id), named) {
                instance_ids.insert(i.instance_id, id);
            }
        }
        let session = Session::open(loaded.opts).map_err(|e| format!("opening the device: {e}"))?;
        self.session = Some(Opened {
            session,
            nodes,
            instance_ids,
        });
        Ok(())
    }

    /// The SensorView the inputs point at.
    fn sensor_view(&self) -> Result<SensorView, Failure> {
        let lo = self.integers[vr::SENSOR_VIEW_IN_LO as usize];
        let hi = self.integers[vr::SENSOR_VIEW_IN_HI as usize];
        let size = self.integers[vr::SENSOR_VIEW_IN_SIZE as usize];
        let address = join_address(lo, hi);
        if address == 0 || size <= 0 {
            return Err(format!(
                "no SensorView: OSMPSensorViewIn.base.lo/.base.hi give address {address:#x} and \
                 .size {size}; set them to the serialized SensorView's address and length"
            ));
        }
        // SAFETY: OSMP: the master keeps `size` bytes at `address` valid during the step.
        let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, size as usize) };
        SensorView::decode(bytes).map_err(|e| {
            format!("OSMPSensorViewIn: the {size} bytes are not a valid OSI SensorView: {e}")
        })
    }

    /// One step at time `t` (s): the SensorView's host vehicle and objects placed, the
    /// frame at `t` simulated, its SensorData encoded and pointed at by the outputs.
    /// Returns warnings for the log.
    pub fn step(&mut self, t: f64) -> Result<Vec<String>, Failure> {
        let view = self.sensor_view()?;
        let time = view.timestamp.map_or(t, |s| s.secs());
        let sample = Sample::of_sensor_view(view, Path::new("OSMPSensorViewIn"))
            .map_err(|e| e.to_string())?;
        let Some(opened) = self.session.as_mut() else {
            return Err("doStep before initialization ended (fmi2ExitInitializationMode)".into());
        };
        let mut warnings = Vec::new();
        let vehicle = match sample.host() {
            Some(h) => {
                let rpy = h.rpy.as_vec3();
                let at = h.reference_point().as_vec3();
                Pose::from_translation_rpy(at, rpy.x, rpy.y, rpy.z)
            }
            None => Pose::default(),
        };
        let host = sample.host_id;
        opened
            .session
            .set_vehicle_transform(vehicle)
            .map_err(|e| e.to_string())?;
        let mut poses = Vec::new();
        for (id, o) in &sample.objects {
            match opened.nodes.get(id) {
                Some(node) => poses.push((
                    node.clone(),
                    o.position,
                    o.rpy * (180.0 / std::f64::consts::PI),
                )),
                None if Some(*id) != host && self.unmatched.insert(*id) => warnings.push(format!(
                    "moving object {id} matches no node of the scene (name a node \"{id}\" or \
                     give one extras.osi_id {id}); it is not simulated"
                )),
                None => {}
            }
        }
        opened
            .session
            .set_object_poses(&poses)
            .map_err(|e| e.to_string())?;
        self.output = frame(opened, t, time, vehicle)?;
        self.point_outputs();
        Ok(warnings)
    }

    /// The outputs at the kept SensorData.
    fn point_outputs(&mut self) {
        let (lo, hi) = split_address(self.output.as_ptr() as u64);
        self.integers[vr::SENSOR_DATA_OUT_LO as usize] = lo;
        self.integers[vr::SENSOR_DATA_OUT_HI as usize] = hi;
        self.integers[vr::SENSOR_DATA_OUT_SIZE as usize] = self.output.len() as i32;
        self.integers[vr::COUNT as usize] += 1;
        self.valid = true;
    }
}

/// The frame at scenario time `t` as encoded SensorData stamped `time`.
fn frame(opened: &mut Opened, t: f64, time: f64, vehicle: Pose) -> Result<Vec<u8>, Failure> {
    let frames = (opened.session.frame_at(t.max(0.0))).map_err(|e| e.to_string())?;
    let Some(f) = frames.first() else {
        return Err("the session returned no frame".into());
    };
    let points = (opened.session.points(f, false)).map_err(|e| e.to_string())?;
    let mount = opened.session.lanes()[0].sensor.mount;
    let data = osi::sensor_data(
        &points.points,
        FrameStamp {
            time,
            frame: f.frame,
            sensor_id: 0,
            mount: &mount,
            vehicle: vehicle.to_affine(),
            object_ids: &opened.instance_ids,
            sensor_view: None,
        },
    );
    Ok(data.encode_to_vec())
}
