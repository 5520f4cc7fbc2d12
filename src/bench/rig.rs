//! A rig's frame against its sensors alone: the same frames of the same scene and
//! motion, simulated by one driver of all the rig's sensors (one scene upload, one TLAS
//! refit per placement) and by one driver per sensor, alternated round by round so
//! that a slower moment of the machine falls on both. Each frame's points are read back
//! and turned into a cloud, as a job does; nothing is written.

use super::{BenchError, Stat};
use crate::gpu::{Context, ContextOptions};
use crate::material::{MaterialDb, MaterialMapping};
use crate::scene::{Scenario, Scene};
use crate::sensor::{Pose, Rig};
use crate::sim::{DriverInputs, DriverSensor, FrameDriver, Play, Sun};
use crate::weather::Weather;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// What to measure.
pub struct RigBenchOptions {
    pub scene: Scene,
    pub scene_name: String,
    /// The vehicle's motion; `None`: the vehicle stands at the origin.
    pub scenario: Option<Scenario>,
    pub rig: Rig,
    /// Timed rig frames per round (after the warm-up); at least 1.
    pub frames: usize,
    pub warmup: usize,
    /// Rounds of (rig, each sensor alone); at least 1.
    pub rounds: usize,
    pub sun: Option<Sun>,
    pub weather: Option<Weather>,
    pub device: Option<usize>,
    pub validation: bool,
}

/// The figures: wall time per rig frame, and per frame of each sensor alone.
#[derive(Debug, Clone, Serialize)]
pub struct RigBenchResult {
    pub device: String,
    pub rig: String,
    pub frames: usize,
    pub rounds: usize,
    /// One rig frame: every sensor's frames that begin within it.
    pub rig_frame: Stat,
    /// Each sensor alone: its frames within one rig frame, by name.
    pub alone: Vec<(String, Stat)>,
    /// The sum of the sensors' medians alone.
    pub sum_alone_ms: f64,
    /// Rig frame median / sum alone.
    pub ratio: f64,
}

/// Measures `opts`'s rig against its sensors alone on one device.
pub fn measure_rig(opts: &RigBenchOptions) -> Result<RigBenchResult, BenchError> {
    if opts.frames == 0 || opts.rounds == 0 {
        return Err(BenchError::NoFrames);
    }
    let ctx = Context::new(&ContextOptions {
        device_index: opts.device,
        validation: opts.validation,
        ..Default::default()
    })
    .map_err(BenchError::Device)?;
    let db = MaterialDb::builtin()?;
    let mapping = MaterialMapping::default();
    let all: Vec<DriverSensor> = (0..opts.rig.sensors.len())
        .map(|i| DriverSensor {
            sensor: opts.rig.sensors[i].sensor.clone(),
            seed: opts.rig.seed_of(i, 0),
        })
        .collect();
    let driver = |sensors: Vec<DriverSensor>| -> Result<FrameDriver, BenchError> {
        let inputs = DriverInputs {
            scene: &opts.scene,
            scene_name: &opts.scene_name,
            sensors,
            materials: &db,
            mapping: &mapping,
            vehicle_pose: Pose::default(),
            play: opts.scenario.as_ref().map_or(Play::Still, Play::Scenario),
            sun: opts.sun,
            weather: opts.weather,
        };
        Ok(FrameDriver::new(&ctx, inputs)?)
    };
    let mut rig = driver(all.clone())?;
    let mut alone = (all.into_iter())
        .map(|s| driver(vec![s]))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut rig_ms, mut alone_ms) = (Vec::new(), vec![Vec::new(); alone.len()]);
    let span = (opts.warmup + opts.frames) as u64;
    for round in 0..opts.rounds as u64 {
        let first = round * span;
        rig_ms.push(time_frames(&mut rig, first, opts)?);
        for (d, ms) in alone.iter_mut().zip(&mut alone_ms) {
            ms.push(time_frames(d, first, opts)?);
        }
    }
    check_validation(&ctx)?;
    let alone: Vec<(String, Stat)> = (opts.rig.sensors.iter().zip(&alone_ms))
        .map(|(m, ms)| (m.name.clone(), Stat::of(ms.clone())))
        .collect();
    let rig_frame = Stat::of(rig_ms);
    let sum_alone_ms: f64 = alone.iter().map(|(_, s)| s.median_ms).sum();
    Ok(RigBenchResult {
        device: format!("{} ({})", ctx.device_name, ctx.driver_info),
        rig: opts.rig.name.clone(),
        frames: opts.frames,
        rounds: opts.rounds,
        rig_frame,
        alone,
        sum_alone_ms,
        ratio: rig_frame.median_ms / sum_alone_ms.max(1e-9),
    })
}

/// Wall time (ms) per rig frame of `driver` over `opts.frames` rig frames from
/// `first + warmup` on, two frames in flight, each frame's cloud made.
fn time_frames(
    driver: &mut FrameDriver,
    first: u64,
    opts: &RigBenchOptions,
) -> Result<f64, BenchError> {
    let rate = f64::from(driver.sensor().frame_rate);
    let timed = first + opts.warmup as u64;
    let mut items = Vec::new();
    for (lane, frame) in driver.schedule(timed + opts.frames as u64) {
        // A relative margin: a lane's frame that begins with a rig frame is its.
        let t = driver.lane_frame_time(lane, frame) * rate * (1.0 + 1e-9);
        if t.floor() as u64 >= first {
            items.push((lane, frame, t.floor() as u64 >= timed));
        }
    }
    let mut timed_from = None;
    for next in items.iter().map(Some).chain([None]) {
        if next.is_some_and(|i| i.2) && timed_from.is_none() {
            // The warm-up's last frame finishes outside the timed frames.
            while let Some(done) = driver.step_lane(None)? {
                driver.cloud(&done)?;
            }
            timed_from = Some(Instant::now());
        }
        if let Some(done) = driver.step_lane(next.map(|i| (i.0, i.1)))? {
            driver.cloud(&done)?;
        }
    }
    let elapsed = timed_from.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
    Ok(elapsed / opts.frames as f64)
}

fn check_validation(ctx: &Arc<Context>) -> Result<(), BenchError> {
    let messages = ctx.validation_messages();
    match messages.is_empty() {
        true => Ok(()),
        false => Err(BenchError::Validation(messages)),
    }
}
