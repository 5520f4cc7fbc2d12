//! The same topics to Foxglove (the app, or any client of its WebSocket protocol)
//! through Foxglove's own SDK (the `foxglove` crate's WebSocket server).
//!
//! Each topic is a channel of `cdr` messages with its `ros2msg` schema — what a bag
//! holds, and what Foxglove's 3D panel reads as PointCloud2, TFMessage and Imu — logged
//! with its stamp as the log time. The protocol keeps nothing for late joiners, so the
//! static transforms go again before each cloud. The server has its own tokio runtime;
//! a slow client's queue drops its oldest messages ([`BACKLOG`] per client), never
//! holding up the publisher (the SDK does not count those drops). Under `--sim-time`
//! the server also tells clients the simulation's time (the protocol's Time
//! capability).
//!
//! Clients reach the server through [`super::gate`]: at most
//! [`MAX_CLIENTS`](super::gate::MAX_CLIENTS) at once, one that takes nothing (or sends
//! no handshake) for [`STALL`](super::gate::STALL) dropped, and none kept when the
//! stream ends. What a client costs is bounded so: [`BACKLOG`] messages queued by the server (the largest a
//! cloud) plus 2 × [`RELAY_BUFFER`](super::gate::RELAY_BUFFER) in the relay and the
//! kernel's socket buffers.

use super::gate::Gate;
use super::{LiveError, LiveReport, Topic, Transport};
use crate::output::{FrameMessage, TF_STATIC_TOPIC};
use foxglove::websocket::Capability;
use foxglove::{
    ChannelBuilder, Context, FoxgloveError, PartialMetadata, RawChannel, Schema, WebSocketServer,
    WebSocketServerHandle,
};
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Messages queued per client at most (the SDK's default is 1024: too many for clouds
/// of megabytes).
pub const BACKLOG: usize = 32;
/// How long the end of a stream waits for clients to take what is queued for them
/// before their connections are cut.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The WebSocket server and a channel per topic.
pub struct FoxglovePublisher {
    context: Arc<Context>,
    server: Option<WebSocketServerHandle>,
    gate: Gate,
    channels: HashMap<String, Arc<RawChannel>>,
    /// The rig's mounts, sent again before each cloud.
    tf_static: Option<FrameMessage>,
    sim_time: bool,
}

impl FoxglovePublisher {
    /// Listens on `addr` (port 0: any free port; the report says which).
    pub fn start(addr: SocketAddr, sim_time: bool) -> Result<Self, LiveError> {
        let bind = |message: String| LiveError::FoxgloveBind { addr, message };
        let context = Context::new();
        let mut server = WebSocketServer::new()
            .name(format!("beamtrace {}", env!("CARGO_PKG_VERSION")))
            .bind(Ipv4Addr::LOCALHOST.to_string(), 0)
            .message_backlog_size(BACKLOG)
            .context(&context);
        if sim_time {
            server = server.capabilities([Capability::Time]);
        }
        let server = server.start_blocking().map_err(|e| {
            bind(match e {
                FoxgloveError::Bind(io) => io.to_string(),
                other => other.to_string(),
            })
        })?;
        let inner = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), server.port());
        let gate = Gate::open(addr, inner).map_err(|e| bind(e.to_string()))?;
        Ok(FoxglovePublisher {
            context,
            server: Some(server),
            gate,
            channels: HashMap::new(),
            tf_static: None,
            sim_time,
        })
    }

    fn channel(
        &mut self,
        topic: &str,
        (type_name, definition): (&'static str, &'static str),
    ) -> Result<Arc<RawChannel>, LiveError> {
        if let Some(c) = self.channels.get(topic) {
            return Ok(c.clone());
        }
        let schema = Schema::new(type_name, "ros2msg", definition.as_bytes());
        let channel = ChannelBuilder::new(topic)
            .message_encoding("cdr")
            .schema(schema)
            .context(&self.context)
            .build_raw()
            .map_err(|e| LiveError::FoxgloveChannel {
                topic: topic.to_string(),
                message: e.to_string(),
            })?;
        self.channels.insert(topic.to_string(), channel.clone());
        Ok(channel)
    }

    fn log(&mut self, m: &FrameMessage) -> Result<(), LiveError> {
        let meta = PartialMetadata {
            log_time: Some(m.time_ns()),
        };
        let schema = (m.type_name(), m.definition());
        self.channel(m.topic(), schema)?
            .log_with_meta(m.data(), meta);
        Ok(())
    }
}

impl Transport for FoxglovePublisher {
    fn advertise(&mut self, (topic, schema): &Topic) -> Result<(), LiveError> {
        self.channel(topic, *schema).map(drop)
    }

    fn publish(&mut self, m: &FrameMessage) -> Result<bool, LiveError> {
        if m.topic() == TF_STATIC_TOPIC {
            self.tf_static = Some(m.clone());
        }
        if m.type_name() == "sensor_msgs/msg/PointCloud2" {
            if let Some(s) = self.tf_static.clone() {
                self.log(&s)?;
            }
        }
        self.log(m)?;
        Ok(true)
    }

    fn clock(&mut self, ns: u64) {
        if let (true, Some(server)) = (self.sim_time, &self.server) {
            server.broadcast_time(ns);
        }
    }

    fn report(&self, report: &mut LiveReport) {
        report.foxglove_clients = self.server.as_ref().map(|s| s.client_count());
        report.foxglove_addr = Some(self.gate.addr());
        report.foxglove_turned_away = Some(self.gate.counts());
    }
}

impl Drop for FoxglovePublisher {
    /// Clients get what is queued for them for `SHUTDOWN_GRACE`; then the door ends
    /// every connection, which ends the server's tasks for them.
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            let stopping = server.stop();
            let (done, waited) = std::sync::mpsc::channel();
            let waiter = std::thread::Builder::new()
                .name("foxglove-stop".into())
                .spawn(move || {
                    stopping.wait_blocking();
                    let _ = done.send(());
                });
            if waiter.is_ok() && waited.recv_timeout(SHUTDOWN_GRACE).is_err() {
                self.gate.close();
                // A task that still does not end is left to the process's exit.
                let _ = waited.recv_timeout(Duration::from_secs(1));
            }
        }
        self.gate.close();
    }
}
