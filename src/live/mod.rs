//! Live topics: a run's ROS 2 messages published while it runs, with no ROS
//! installation — over DDS (`dds.rs`, RustDDS: `ros2 topic echo`, RViz, any ROS 2 node)
//! and over Foxglove's WebSocket protocol (`foxglove.rs`, Foxglove's own SDK).
//!
//! The messages are the ones a bag holds (`output::FrameMessage`: the same CDR bytes,
//! schemas and topics), handed to a publisher thread behind a bounded queue
//! ([`Publisher`]). Each item is due at a time of the stream's clock — a cloud when its
//! sweep ends, an IMU sample at its own time — and in real time the thread publishes it
//! then; a cloud ready only after it was due is not published but counted, as a real
//! sensor does not wait. Publishing never waits for a subscriber: sensor data goes best
//! effort, the reliable topics (`/tf`, `/tf_static`, `/clock`) give up at once when a
//! reader's acknowledgements lag (counted), and Foxglove's per-client queues drop their
//! oldest messages. So the queue only ever waits for the clock, and memory stays flat.
//!
//! Layer: plain Rust over `output`; the job decides what is published and when.

mod dds;
mod foxglove;
mod gate;

use crate::output::packets::Pacing;
use crate::output::{FrameMessage, CLOCK_TOPIC, TF_STATIC_TOPIC, TF_TOPIC};
use std::net::SocketAddr;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use dds::{dds_topic, dds_type, DdsPublisher};
pub use foxglove::{FoxglovePublisher, BACKLOG as FOXGLOVE_BACKLOG};
pub use gate::{GateCounts, MAX_CLIENTS as FOXGLOVE_MAX_CLIENTS, STALL as FOXGLOVE_STALL};

/// The ROS domain when `ROS_DOMAIN_ID` is not set.
pub const DEFAULT_DOMAIN_ID: u16 = 0;
/// The highest domain id: DDS's UDP port mapping (7400 + 250·d + …) stays below 65536
/// for d ≤ 232, the limit ROS 2 documents.
pub const MAX_DOMAIN_ID: u16 = 232;
/// Foxglove's default WebSocket port (its SDK's and `foxglove_bridge`'s).
pub const FOXGLOVE_PORT: u16 = 8765;
/// Items (a frame's messages, or an IMU sample) queued for the publisher at most per
/// frame of look-ahead: beyond this the simulation waits, which in real time only
/// happens while the clock catches up.
pub const QUEUE_FRAMES: usize = 4;
/// A cloud ready more than this long after it was due is late (s).
const LATE_S: f64 = 5e-3;

/// Where and how a run's messages are published live.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveOptions {
    /// Publish over DDS (ROS 2), in this domain.
    pub ros2: Option<Ros2Options>,
    /// Serve Foxglove's WebSocket protocol on this address.
    pub foxglove: Option<SocketAddr>,
    /// Publish each item at its time on the stream's clock; else as soon as it is made.
    pub real_time: bool,
    /// Stamp with the scenario's time and publish it on `/clock` (for nodes with
    /// `use_sim_time`); else stamp with the wall clock (Unix time), as a driver does.
    pub sim_time: bool,
    /// Prefix of the sensors' topics (`/<namespace>/<sensor>/points`): "" or a ROS
    /// name starting with `/`. `/tf`, `/tf_static` and `/clock` are global.
    pub namespace: String,
}

/// The DDS side: the domain, and whether discovery stays on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ros2Options {
    pub domain_id: u16,
    /// Only the loopback interface (ROS 2's `ROS_LOCALHOST_ONLY=1`, or
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`): nothing leaves the machine.
    pub localhost_only: bool,
}

impl Ros2Options {
    /// The settings ROS 2 reads from the environment: `ROS_DOMAIN_ID` (0 when unset or
    /// empty), `ROS_LOCALHOST_ONLY` and `ROS_AUTOMATIC_DISCOVERY_RANGE`.
    pub fn from_env() -> Result<Self, LiveError> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self::from_values(
            var("ROS_DOMAIN_ID").as_deref(),
            var("ROS_LOCALHOST_ONLY").as_deref(),
            var("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref(),
        )
    }

    fn from_values(
        domain: Option<&str>,
        localhost_only: Option<&str>,
        range: Option<&str>,
    ) -> Result<Self, LiveError> {
        let domain_id = match domain {
            None => DEFAULT_DOMAIN_ID,
            Some(d) => d
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|&d| d <= MAX_DOMAIN_ID)
                .ok_or_else(|| LiveError::DomainId(d.to_string()))?,
        };
        let localhost_only = localhost_only.is_some_and(|v| v.trim() == "1")
            || range.is_some_and(|r| r.trim().eq_ignore_ascii_case("LOCALHOST"));
        Ok(Ros2Options {
            domain_id,
            localhost_only,
        })
    }
}

/// What stops live publishing.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error(
        "ROS_DOMAIN_ID `{0}` is not a ROS 2 domain: give a whole number from 0 to \
         {MAX_DOMAIN_ID} (or unset it for domain 0)"
    )]
    DomainId(String),
    #[error("DDS (domain {domain}): {message}")]
    Dds { domain: u16, message: String },
    #[error(
        "the Foxglove WebSocket server cannot listen on {addr}: {message} (is another \
         server on that port? give another with --foxglove HOST:PORT)"
    )]
    FoxgloveBind { addr: SocketAddr, message: String },
    #[error("Foxglove channel {topic}: {message}")]
    FoxgloveChannel { topic: String, message: String },
    #[error("starting the live publisher thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("the live publisher thread stopped")]
    Gone,
}

/// What the publisher did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveReport {
    /// Point clouds published (each return layer's topic counted apart).
    pub clouds: u64,
    /// Frames not published: ready only after they were due (real time).
    pub late_frames: u64,
    /// Messages a DDS writer refused because a reliable reader's acknowledgements lagged
    /// (`/tf`, `/tf_static`, `/clock`): dropped rather than waited for.
    pub refused: u64,
    /// IMU messages published.
    pub imu: u64,
    /// Per published frame: from its end — its due time in real time, the moment its
    /// messages were ready as fast as possible — until its last message was handed to
    /// the transports (ms).
    pub latency_ms: Vec<f64>,
    /// DDS subscriptions matched to the writers at the end (all topics).
    pub dds_matched: Option<usize>,
    /// Foxglove clients connected at the end.
    pub foxglove_clients: Option<usize>,
    /// Where the Foxglove server listened (the port chosen, for port 0).
    pub foxglove_addr: Option<SocketAddr>,
    /// Foxglove clients refused (too many) and dropped (stalled).
    pub foxglove_turned_away: Option<GateCounts>,
}

/// What an item in the queue is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ItemKind {
    /// A frame's messages, ready at that instant: late ones are not published.
    Frame { ready: Instant },
    /// Messages published whatever the lateness (an IMU sample, the static transforms).
    Always,
}

/// Messages due together.
#[derive(Debug, Clone)]
pub struct Item {
    pub messages: Vec<FrameMessage>,
    /// When they are due, in seconds of scenario time from the stream's start.
    pub due_s: f64,
    /// Due at `start + due_s` (real time), or now.
    pub pacing: Pacing,
    pub kind: ItemKind,
}

/// A topic and its message type (name, `ros2msg` definition), e.g.
/// `("/vlp_16/points", output::POINT_CLOUD2_TYPE)`.
pub type Topic = (String, (&'static str, &'static str));

/// One way out: DDS, or Foxglove's WebSocket server.
trait Transport: Send {
    /// Makes a topic known before its first message: DDS discovery matches its readers,
    /// Foxglove clients subscribe to it, while the simulation gets ready.
    fn advertise(&mut self, topic: &Topic) -> Result<(), LiveError>;
    /// Publishes a message; `false` when it was refused rather than waited for.
    fn publish(&mut self, m: &FrameMessage) -> Result<bool, LiveError>;
    /// Tells clients the simulation's time (`/clock` under `--sim-time`).
    fn clock(&mut self, _ns: u64) {}
    fn report(&self, report: &mut LiveReport);
}

/// The publisher thread and its queue.
pub struct Publisher {
    queue: Option<SyncSender<Item>>,
    thread: Option<JoinHandle<Result<LiveReport, LiveError>>>,
}

impl Publisher {
    /// Opens the transports (a DDS participant, the Foxglove server: errors such as a
    /// port in use come back here, before anything is simulated) and starts the thread.
    /// `per_frame` is how many items a frame brings at most (its messages, IMU samples);
    /// `topics` are advertised at once.
    pub fn start(
        opts: &LiveOptions,
        per_frame: usize,
        topics: &[Topic],
    ) -> Result<Publisher, LiveError> {
        let mut transports: Vec<Box<dyn Transport>> = Vec::new();
        if let Some(ros2) = &opts.ros2 {
            transports.push(Box::new(DdsPublisher::new(ros2)?));
        }
        if let Some(addr) = opts.foxglove {
            transports.push(Box::new(FoxglovePublisher::start(addr, opts.sim_time)?));
        }
        for t in &mut transports {
            for topic in topics {
                t.advertise(topic)?;
            }
        }
        let (queue, rx) = sync_channel(QUEUE_FRAMES * per_frame.max(1));
        let mut state = Publishing {
            transports,
            sim_time: opts.sim_time,
            report: LiveReport::default(),
            clock_ns: None,
            last_tf_ns: None,
        };
        let thread = std::thread::Builder::new()
            .name("live".into())
            .spawn(move || state.drain(rx))
            .map_err(LiveError::Thread)?;
        Ok(Publisher {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues an item, waiting while the queue is full (only the clock holds it up).
    pub fn send(&mut self, item: Item) -> Result<(), LiveError> {
        match self.queue.as_ref().map(|q| q.send(item)) {
            Some(Ok(())) => Ok(()),
            _ => Err(self.join().err().unwrap_or(LiveError::Gone)),
        }
    }

    /// Publishes what is queued, closes the transports and reports.
    pub fn finish(mut self) -> Result<LiveReport, LiveError> {
        self.join()
    }

    fn join(&mut self) -> Result<LiveReport, LiveError> {
        self.queue = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(LiveError::Gone),
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.queue = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The publisher thread's state.
struct Publishing {
    transports: Vec<Box<dyn Transport>>,
    sim_time: bool,
    report: LiveReport,
    /// The last time on `/clock` (ns): it never goes back.
    clock_ns: Option<u64>,
    /// The stamp of the last vehicle transform on `/tf`: a rig's sensors each bring
    /// one per frame, and tf2 warns of a repeated stamp, so each is published once.
    last_tf_ns: Option<u64>,
}

impl Publishing {
    fn drain(&mut self, rx: Receiver<Item>) -> Result<LiveReport, LiveError> {
        while let Ok(item) = rx.recv() {
            self.item(&item)?;
        }
        for t in &self.transports {
            t.report(&mut self.report);
        }
        Ok(std::mem::take(&mut self.report))
    }

    fn item(&mut self, item: &Item) -> Result<(), LiveError> {
        let due = match item.pacing {
            Pacing::RealTime { start } => {
                Some(start + Duration::from_secs_f64(item.due_s.max(0.0)))
            }
            Pacing::AsFastAsPossible => None,
        };
        if let (Some(due), ItemKind::Frame { ready }) = (due, item.kind) {
            if ready.saturating_duration_since(due).as_secs_f64() > LATE_S {
                self.report.late_frames += 1;
                return Ok(());
            }
        }
        if let Some(due) = due {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        if self.sim_time {
            self.clock((item.due_s.max(0.0) * 1e9).round() as u64)?;
        }
        for m in &item.messages {
            self.message(m)?;
        }
        if let ItemKind::Frame { ready } = item.kind {
            let end = due.map_or(ready, |d| d.max(ready));
            let ms = end.elapsed().as_secs_f64() * 1e3;
            self.report.latency_ms.push(ms);
        }
        Ok(())
    }

    /// The simulation's time on `/clock`, never going back (a rig's sensors of other
    /// rates end their frames out of order).
    fn clock(&mut self, ns: u64) -> Result<(), LiveError> {
        if self.clock_ns.is_some_and(|c| c >= ns) {
            return Ok(());
        }
        self.clock_ns = Some(ns);
        let m = crate::output::clock_message(ns);
        for t in &mut self.transports {
            t.clock(ns);
            if !t.publish(&m)? {
                self.report.refused += 1;
            }
        }
        Ok(())
    }

    fn message(&mut self, m: &FrameMessage) -> Result<(), LiveError> {
        if m.topic() == TF_TOPIC {
            if self.last_tf_ns.is_some_and(|t| t >= m.time_ns()) {
                return Ok(());
            }
            self.last_tf_ns = Some(m.time_ns());
        }
        for t in &mut self.transports {
            if !t.publish(m)? {
                self.report.refused += 1;
            }
        }
        match m.type_name() {
            "sensor_msgs/msg/PointCloud2" => self.report.clouds += 1,
            "sensor_msgs/msg/Imu" => self.report.imu += 1,
            _ => {}
        }
        Ok(())
    }
}

/// How a topic is published: sensor data as drivers publish it (best effort, the last
/// 5), transforms and the clock as tf2 and the simulators do (reliable; `/tf_static`
/// kept for late joiners, transient local, its last message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicQos {
    SensorData,
    /// An IMU's samples: sensor data too, with a deeper writer history (see `dds.rs`).
    Imu,
    Tf,
    TfStatic,
    Clock,
}

impl TopicQos {
    pub fn of(topic: &str, type_name: &str) -> TopicQos {
        match (topic, type_name) {
            (TF_TOPIC, _) => TopicQos::Tf,
            (TF_STATIC_TOPIC, _) => TopicQos::TfStatic,
            (CLOCK_TOPIC, _) => TopicQos::Clock,
            (_, "sensor_msgs/msg/Imu") => TopicQos::Imu,
            _ => TopicQos::SensorData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_gives_the_domain_and_the_discovery_range() {
        let o = Ros2Options::from_values(None, None, None).unwrap();
        assert_eq!((o.domain_id, o.localhost_only), (0, false));
        let o = Ros2Options::from_values(Some(" 42"), Some("1"), None).unwrap();
        assert_eq!((o.domain_id, o.localhost_only), (42, true));
        let o = Ros2Options::from_values(Some("232"), Some("0"), Some("localhost")).unwrap();
        assert_eq!((o.domain_id, o.localhost_only), (232, true));
        let o = Ros2Options::from_values(None, None, Some("SUBNET")).unwrap();
        assert!(!o.localhost_only);
        for bad in ["233", "-1", "x", "1.5"] {
            let e = Ros2Options::from_values(Some(bad), None, None).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn topics_get_the_qos_ros_2_publishers_use() {
        let tf = "tf2_msgs/msg/TFMessage";
        assert_eq!(TopicQos::of("/tf", tf), TopicQos::Tf);
        assert_eq!(TopicQos::of("/tf_static", tf), TopicQos::TfStatic);
        assert_eq!(
            TopicQos::of("/clock", "rosgraph_msgs/msg/Clock"),
            TopicQos::Clock
        );
        let points = "sensor_msgs/msg/PointCloud2";
        assert_eq!(TopicQos::of("/vlp_16/points", points), TopicQos::SensorData);
        assert_eq!(
            TopicQos::of("/ns/imu/imu", "sensor_msgs/msg/Imu"),
            TopicQos::Imu
        );
    }
}
