//! The side-by-side comparison with a CPU waveform simulator: the VLP-16 of
//! `configs/sensors/vlp16-cmp.yaml` (1.8 m up at the street's origin, dual return, 16
//! grid sub-rays), whole jobs writing PCD files at night, timed as N₂ rotations minus
//! N₁ rotations so that set-up (device, scene, pipelines) cancels. HELIOS++ (CPU, full
//! waveform, 19 sub-rays per pulse) took 0.54 s per rotation with sub-rays and 0.084 s
//! with thin beams on a 2-core machine, measured the same way; those figures are quoted
//! beside ours, not re-measured.

use super::hil::{job_for_sensor, HilOptions, HilSink};
use super::BenchError;
use crate::job::run_job;
use crate::sensor::parse_sensor;
use serde::Serialize;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Instant;

/// The comparison's sensor file, built in (the same bytes as the file in `configs/`).
const SENSOR_YAML: &str = include_str!("../../configs/sensors/vlp16-cmp.yaml");

/// HELIOS++'s seconds per rotation on 2 CPU cores, with sub-rays and thin.
pub const PEER_SECONDS: [f64; 2] = [0.54, 0.084];

#[derive(Debug, Clone, Serialize)]
pub struct PeerResult {
    pub sensor: String,
    pub subrays: u32,
    /// The two job lengths (rotations) whose difference is timed.
    pub rotations: [u64; 2],
    /// Whole-job wall seconds of each paired run: [short, long].
    pub runs: Vec<[f64; 2]>,
    /// Median over the paired runs of (long − short) / (rotations difference).
    pub seconds_per_rotation: f64,
    /// The peer's, quoted (see the module's documentation).
    pub peer_seconds_per_rotation: f64,
    /// Ours over the peer's: below 1, faster.
    pub vs_peer: f64,
}

/// `pairs` paired runs of `rotations[0]` and `rotations[1]` rotations, with the file's
/// sub-rays and thin; `thin_only` skips the sub-ray case.
pub fn measure_peer(
    opts: &HilOptions,
    rotations: [u64; 2],
    pairs: usize,
    thin_only: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<PeerResult>, BenchError> {
    let sensor = parse_sensor(SENSOR_YAML, Path::new("configs/sensors"))?;
    let cases = [
        (sensor.clone(), PEER_SECONDS[0]),
        (sensor.thin(), PEER_SECONDS[1]),
    ];
    let skip = usize::from(thin_only);
    let mut results = Vec::new();
    for (sensor, peer) in cases.into_iter().skip(skip) {
        progress(&format!("{} with {} sub-rays", sensor.name, sensor.subrays));
        let mut runs = Vec::new();
        for _ in 0..pairs.max(1) {
            let mut pair = [0.0; 2];
            for (k, &n) in rotations.iter().enumerate() {
                let job = HilOptions {
                    frames: n,
                    ..opts.clone()
                };
                let unused = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
                let job = job_for_sensor(&job, sensor.clone(), HilSink::Files, unused)?;
                let start = Instant::now();
                run_job(&job, &mut |_| {})?;
                pair[k] = start.elapsed().as_secs_f64();
            }
            runs.push(pair);
        }
        let extra = rotations[1].saturating_sub(rotations[0]).max(1) as f64;
        let mut per: Vec<f64> = runs.iter().map(|r| (r[1] - r[0]) / extra).collect();
        per.sort_by(f64::total_cmp);
        let seconds_per_rotation = per[per.len() / 2];
        results.push(PeerResult {
            sensor: sensor.name.clone(),
            subrays: sensor.subrays,
            rotations,
            runs,
            seconds_per_rotation,
            peer_seconds_per_rotation: peer,
            vs_peer: seconds_per_rotation / peer,
        });
    }
    Ok(results)
}
