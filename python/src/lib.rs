//! `beamtrace._native`: the frame driver behind the Python package `beamtrace`
//! (python/beamtrace/__init__.py wraps it in the documented `Simulator`).
//!
//! It binds the library's `job::Session`, not the command line: the options load
//! through `job::SimSpec` as `run`'s do, so a frame here is `run`'s frame. Each frame's
//! records are written once, straight into a Python `bytearray` that NumPy then views
//! without copying (`numpy.frombuffer`). The GIL is released while the GPU works and
//! while the records are written; errors are `beamtrace.Error` carrying beamtrace's
//! message (the file, line and field it names), never an abort.

use beamtrace::job::{LaneFrame, Session, SimSpec};
use beamtrace::output::objects::objects_json;
use beamtrace::output::{record_size, write_records, FieldSet, Scalar};
use beamtrace::sim::Sun;
use beamtrace::weather::Weather;
use glam::{DVec3, Vec3};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};
use std::path::PathBuf;

create_exception!(
    _native,
    Error,
    PyException,
    "What beamtrace refused or could not do; the message names the file, line or field, and what to do."
);

/// `e` and its causes, as the command line prints them: "what: why: why".
fn message(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

fn error(e: impl std::error::Error) -> PyErr {
    Error::new_err(message(&e))
}

/// NumPy's type string of a stored field type (little-endian, as the records are).
fn numpy_type(scalar: Scalar) -> &'static str {
    match scalar {
        Scalar::F32 => "<f4",
        Scalar::U8 => "u1",
        Scalar::U16 => "<u2",
        Scalar::U32 => "<u4",
    }
}

/// One sensor's frame as the package receives it: the sensor's name, when the sweep
/// began (s), its frame number, the records, the array's shape and, when asked for,
/// its objects as the JSON of `frame_NNNNNN_objects.json`.
type FrameOut<'py> = (
    String,
    f64,
    u64,
    Bound<'py, PyByteArray>,
    Vec<usize>,
    Option<String>,
);

/// A scene on the device with its sensor or rig; see `beamtrace.Simulator`.
#[pyclass(module = "beamtrace._native")]
struct NativeSession {
    session: Session,
    fields: FieldSet,
    notices: Vec<String>,
}

/// The sun keyword as `run` takes it: `None` the default sun, else azimuth, elevation
/// (deg) and irradiance; `night` none at all.
fn sun_of(sun: Option<(f32, f32, f32)>, night: bool) -> PyResult<Option<Sun>> {
    match (night, sun) {
        (true, _) => Ok(None),
        (false, None) => Ok(Some(Sun::standard())),
        (false, Some((az, el, e))) => Sun::from_degrees(az, el, e)
            .map(Some)
            .map_err(|m| Error::new_err(format!("sun: {m}"))),
    }
}

#[pymethods]
impl NativeSession {
    #[new]
    #[pyo3(signature = (*, scene, sensor, rig, scenario, thin, ideal, return_mode, seed,
        sun, night, weather, materials, material_map, strict_materials, fields, world,
        position, yaw_deg, device, validate, allow_outside_paths, objects, flow))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        scene: Option<PathBuf>,
        sensor: String,
        rig: Option<PathBuf>,
        scenario: Option<PathBuf>,
        thin: bool,
        ideal: bool,
        return_mode: Option<String>,
        seed: u64,
        sun: Option<(f32, f32, f32)>,
        night: bool,
        weather: Option<String>,
        materials: Option<PathBuf>,
        material_map: Option<PathBuf>,
        strict_materials: bool,
        fields: String,
        world: bool,
        position: (f32, f32, f32),
        yaw_deg: f32,
        device: Option<usize>,
        validate: bool,
        allow_outside_paths: bool,
        objects: bool,
        flow: bool,
    ) -> PyResult<Self> {
        let weather = (weather.as_deref())
            .map(Weather::parse)
            .transpose()
            .map_err(|e| Error::new_err(format!("weather: {}", message(&e))))?;
        let fields: FieldSet = fields
            .parse()
            .map_err(|e| Error::new_err(format!("fields: {}", message(&e))))?;
        let fields = match flow {
            true => fields.with_flow(),
            false => fields,
        };
        let spec = SimSpec {
            scene,
            scenario,
            allow_outside_paths,
            sensor,
            rig,
            seed,
            ideal,
            thin,
            return_mode,
            device,
            validate,
            position: Vec3::from(position),
            yaw_deg,
            materials,
            material_map,
            strict_materials,
            sun: sun_of(sun, night)?,
            weather,
            ..SimSpec::default()
        };
        let loaded = spec.load().map_err(error)?;
        let mut opts = loaded.opts;
        opts.fields = fields.clone();
        opts.world_frame = world;
        opts.objects = objects;
        let session = py.detach(|| Session::open(opts)).map_err(error)?;
        Ok(NativeSession {
            session,
            fields,
            notices: loaded.notices.iter().map(|n| n.to_string()).collect(),
        })
    }

    /// What loading said besides errors ("warning: …", "note: …").
    fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// The records' NumPy layout: (name, type) per field, packed.
    fn dtype(&self) -> Vec<(String, String)> {
        (self.fields.fields().iter())
            .map(|f| (f.name.to_string(), numpy_type(f.scalar).to_string()))
            .collect()
    }

    /// Whether the fields organize by default (as `run` without --organized).
    fn organized_by_default(&self) -> bool {
        self.fields.organized_by_default()
    }

    /// The first sensor's frame period (s).
    fn period(&self) -> f64 {
        self.session.period()
    }

    fn in_flight(&self) -> bool {
        self.session.in_flight()
    }

    /// Submits the frame at `next` (if any) and returns the oldest finished one, as
    /// `Session::step`; `None` when none is finished.
    #[pyo3(signature = (next, organized))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        next: Option<f64>,
        organized: bool,
    ) -> PyResult<Option<Vec<FrameOut<'py>>>> {
        let session = &mut self.session;
        let frames = py.detach(|| session.step(next)).map_err(error)?;
        py.check_signals()?;
        frames
            .map(|frames| self.arrays(py, &frames, organized))
            .transpose()
    }

    /// Simulates `n` frames from `t` as `Simulator.frames` does — two in flight, each
    /// one's points made and its records written — all in Rust, into one reused
    /// buffer, and returns the seconds taken: the baseline the Python API's own cost
    /// per frame is measured against (python/benches/overhead.py).
    fn native_frames(
        &mut self,
        py: Python<'_>,
        t: f64,
        n: usize,
        organized: bool,
    ) -> PyResult<f64> {
        let (session, fields) = (&mut self.session, &self.fields);
        let period = session.period();
        let run = || -> Result<f64, beamtrace::job::JobError> {
            let start = std::time::Instant::now();
            let mut buffer = Vec::new();
            session.step(Some(t))?;
            for i in 0..n {
                let next = (i + 1 < n).then(|| t + (i + 1) as f64 * period);
                for f in session.step(next)?.unwrap_or_default() {
                    let points = session.points(&f, organized)?;
                    buffer.resize(points.points.len() * record_size(fields), 0);
                    let layout = &session.lanes()[f.lane].layout;
                    let flow = session.flow(&f);
                    write_records(fields, layout, flow.as_ref(), &points.points, &mut buffer)?;
                }
            }
            Ok(start.elapsed().as_secs_f64())
        };
        py.detach(run).map_err(error)
    }

    /// Waits for the frames in flight and forgets them.
    fn drain(&mut self, py: Python<'_>) -> PyResult<()> {
        let session = &mut self.session;
        py.detach(|| session.drain()).map_err(error)
    }

    /// The vehicle at `position` (m) heading `yaw_deg` from the next frame on.
    fn set_pose(&mut self, position: (f32, f32, f32), yaw_deg: f32) -> PyResult<()> {
        (self.session)
            .set_vehicle_pose(Vec3::from(position), yaw_deg)
            .map_err(error)
    }

    /// The scene node `name` at `position` (m) turned by roll, pitch, yaw (deg).
    fn set_object_pose(
        &mut self,
        name: &str,
        position: (f64, f64, f64),
        rpy_deg: (f64, f64, f64),
    ) -> PyResult<()> {
        (self.session)
            .set_object_pose(name, DVec3::from(position), DVec3::from(rpy_deg))
            .map_err(error)
    }

    /// Per sensor: what `Simulator.sensor_info` returns.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        (self.session.lanes().iter())
            .map(|l| {
                let s = &l.sensor;
                let d = PyDict::new(py);
                d.set_item("name", &l.name)?;
                d.set_item("sensor", &s.name)?;
                d.set_item("beams", s.beams.len())?;
                d.set_item("channels", s.channels)?;
                d.set_item("columns", s.columns)?;
                d.set_item("grid", l.layout.grid().ok())?;
                d.set_item("frame_rate_hz", s.frame_rate)?;
                d.set_item("max_returns", s.detector.max_returns)?;
                d.set_item("subrays", s.subrays)?;
                d.set_item("wavelength_nm", s.wavelength_nm)?;
                d.set_item("min_range_m", s.min_range)?;
                d.set_item("max_range_m", s.max_range)?;
                d.set_item("fields", self.field_info(py)?)?;
                Ok(d)
            })
            .collect()
    }

    /// The device the frames run on: "name (driver)".
    fn device(&self) -> String {
        let ctx = self.session.context();
        format!("{} ({})", ctx.device_name, ctx.driver_info)
    }

    /// The validation layer's messages so far (empty when it is off).
    fn validation_messages(&self) -> Vec<String> {
        self.session.context().validation_messages()
    }

    /// Ends the session; an error if the validation layer said anything.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        let session = &mut self.session;
        py.detach(|| session.close()).map_err(error)
    }
}

impl NativeSession {
    /// Each field: key, name, NumPy type, unit, meaning.
    fn field_info<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        (self.fields.fields().iter())
            .map(|f| {
                let d = PyDict::new(py);
                d.set_item("key", f.key)?;
                d.set_item("name", f.name)?;
                d.set_item("dtype", numpy_type(f.scalar))?;
                d.set_item("unit", f.unit)?;
                d.set_item("meaning", f.meaning)?;
                Ok(d)
            })
            .collect()
    }

    /// Each sensor's frame as records in a new `bytearray`: the points made from the
    /// read-back (the host's one conversion), then their records written once, in
    /// place, both with the GIL released.
    fn arrays<'py>(
        &self,
        py: Python<'py>,
        frames: &[LaneFrame],
        organized: bool,
    ) -> PyResult<Vec<FrameOut<'py>>> {
        let size = record_size(&self.fields);
        frames
            .iter()
            .map(|f| {
                let session = &self.session;
                let (points, objects) = py
                    .detach(|| session.points_and_objects(f, organized))
                    .map_err(error)?;
                let flow = py.detach(|| session.flow(f));
                let lane = &self.session.lanes()[f.lane];
                let bytes = PyByteArray::new_with(py, points.points.len() * size, |out| {
                    py.detach(|| {
                        write_records(
                            &self.fields,
                            &lane.layout,
                            flow.as_ref(),
                            &points.points,
                            out,
                        )
                    })
                    .map_err(error)
                })?;
                let objects = objects.map(|o| objects_json(&o).to_string());
                Ok((
                    lane.name.clone(),
                    f.time,
                    f.frame,
                    bytes,
                    points.shape,
                    objects,
                ))
            })
            .collect()
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Shaders compiled by an earlier process (the CLI's too) are read back, not rebuilt.
    beamtrace::gpu::set_disk_cache(beamtrace::gpu::default_disk_cache());
    m.add("Error", m.py().get_type::<Error>())?;
    m.add_class::<NativeSession>()?;
    Ok(())
}
