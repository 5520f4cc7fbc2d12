//! ASAM OSI (Open Simulation Interface), the interface through which co-simulations
//! hand a sensor model its ground truth (`SensorView`) and take back its output
//! (`SensorData`) — plain Rust, no GPU:
//!
//! * [`messages`] — the OSI messages beamtrace reads and writes, `prost` structs
//!   written from the specification's field numbers (unknown fields of input skipped);
//! * [`trace`](mod@trace) — binary `.osi` trace files (length-prefixed messages) and OSI's
//!   file naming convention;
//! * [`detections`] — a frame's points as a `SensorData` of lidar detections;
//! * [`ground_truth`] — a trace of `SensorView` or `GroundTruth` as poses over time,
//!   and the [`Scenario`] that plays it;
//! * [`ids`] — which glTF node an OSI object moves, and which OSI id a point carries;
//! * [`osmp`] — what the OSMP FMU and its packager share: value references and the
//!   `modelDescription.xml`.
//!
//! `job` writes the traces (`--format osi`) and reads the input (`--osi-ground-truth`);
//! the OSMP FMU (the `fmu/` crate) decodes SensorViews and encodes SensorData with
//! these same functions.

pub mod detections;
mod error;
pub mod ground_truth;
pub mod ids;
pub mod messages;
pub mod osmp;
pub mod trace;

pub use detections::{sensor_data, FrameStamp};
pub use error::OsiError;
pub use ground_truth::{GroundTruthTrace, Sample, TraceKind};
pub use ids::IdMap;
pub use messages::*;
pub use trace::{read_trace, trace_file_name, write_message};

use crate::scene::{Scenario, Scene};
use std::path::Path;
use std::sync::Arc;

/// An OSI ground-truth trace driving a run, matched to its scene.
#[derive(Debug, Clone, PartialEq)]
pub struct OsiInput {
    pub trace: Arc<GroundTruthTrace>,
    pub ids: IdMap,
}

impl OsiInput {
    /// Reads the trace at `path` and matches its objects to `scene`'s nodes (with the
    /// mapping file, if given); returns it with the scenario that plays it.
    pub fn load(
        path: &Path,
        scene: &Scene,
        mapping: Option<&Path>,
    ) -> Result<(OsiInput, Scenario), OsiError> {
        let trace = GroundTruthTrace::load(path)?;
        let ids = IdMap::resolve(&trace, scene, mapping)?;
        let scenario = trace.scenario(&ids)?;
        let input = OsiInput {
            trace: Arc::new(trace),
            ids,
        };
        Ok((input, scenario))
    }

    /// The ground truth at scenario time `t` as the SensorView of sensor `sensor_id`,
    /// timestamped in the trace's time.
    pub fn sensor_view(&self, t: f64, sensor_id: u64, mount: MountingPosition) -> SensorView {
        self.trace.at(t).sensor_view(sensor_id, mount)
    }

    /// Scenario time 0 in the trace's time (s).
    pub fn time_origin(&self) -> f64 {
        self.trace.start()
    }
}
