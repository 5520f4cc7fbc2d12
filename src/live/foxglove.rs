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

use super::{LiveError, LiveReport, Topic, Transport};
use crate::output::{FrameMessage, TF_STATIC_TOPIC};
use foxglove::websocket::Capability;
use foxglove::{
    ChannelBuilder, Context, FoxgloveError, PartialMetadata, RawChannel, Schema, WebSocketServer,
    WebSocketServerHandle,
};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// Messages queued per client at most (the SDK's default is 1024: too many for clouds
/// of megabytes).
pub const BACKLOG: usize = 32;

/// The WebSocket server and a channel per topic.
pub struct FoxglovePublisher {
    context: Arc<Context>,
    server: Option<WebSocketServerHandle>,
    channels: HashMap<String, Arc<RawChannel>>,
    /// The rig's mounts, sent again before each cloud.
    tf_static: Option<FrameMessage>,
    sim_time: bool,
    addr: SocketAddr,
}

impl FoxglovePublisher {
    /// Listens on `addr` (port 0: any free port; the report says which).
    pub fn start(addr: SocketAddr, sim_time: bool) -> Result<Self, LiveError> {
        let context = Context::new();
        let mut server = WebSocketServer::new()
            .name(format!("beamtrace {}", env!("CARGO_PKG_VERSION")))
            .bind(addr.ip().to_string(), addr.port())
            .message_backlog_size(BACKLOG)
            .context(&context);
        if sim_time {
            server = server.capabilities([Capability::Time]);
        }
        let server = server
            .start_blocking()
            .map_err(|e| LiveError::FoxgloveBind {
                addr,
                message: match e {
                    FoxgloveError::Bind(io) => io.to_string(),
                    other => other.to_string(),
                },
            })?;
        let addr = SocketAddr::new(addr.ip(), server.port());
        Ok(FoxglovePublisher {
            context,
            server: Some(server),
            channels: HashMap::new(),
            tf_static: None,
            sim_time,
            addr,
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
        report.foxglove_addr = Some(self.addr);
    }
}

impl Drop for FoxglovePublisher {
    fn drop(&mut self) {
        // Clients get what is queued for them, then the connections close.
        if let Some(server) = self.server.take() {
            server.stop().wait_blocking();
        }
    }
}
