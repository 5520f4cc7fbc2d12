//! The Ouster sensor HTTP API beside a stream ([`PacketOutput::http`]): the
//! [`OusterHttpServer`] serving the metadata the packets are encoded with, for as long
//! as the stream runs, and the destination a client gives it applied to the packets.

use super::{JobError, PacketOutput};
use crate::output::packets::{HttpExchange, OusterHttpServer};
use crate::sensor::Sensor;
use std::net::{SocketAddr, ToSocketAddrs};

/// What the HTTP API did during a stream.
#[derive(Debug, Clone)]
pub struct HttpReport {
    /// Where it listened.
    pub addr: SocketAddr,
    /// The latest requests it answered (at most
    /// [`EXCHANGE_LOG`](crate::output::packets::EXCHANGE_LOG)), oldest first.
    pub exchanges: Vec<HttpExchange>,
    /// Where the packets went after each change of `udp_dest` a client made, in order.
    pub redirects: Vec<SocketAddr>,
    /// `udp_dest` values a client set that name no address: the packets kept going
    /// where they went.
    pub unresolved: Vec<String>,
}

/// The running server and the destination last applied.
pub(super) struct HttpApi {
    server: OusterHttpServer,
    /// The active configuration's `udp_dest` when last looked at.
    dest: String,
    /// `udp_port_lidar`, which the API does not let a client change.
    port: u16,
    redirects: Vec<SocketAddr>,
    unresolved: Vec<String>,
}

impl HttpApi {
    /// Starts the server `p.http` asks for, serving the metadata of `p`'s packets of
    /// `sensor`; refuses formats without the API before anything is sent.
    pub(super) fn start(p: &PacketOutput, sensor: &Sensor) -> Result<Option<HttpApi>, JobError> {
        let Some(addr) = p.http else {
            return Ok(None);
        };
        let refused = JobError::HttpNeedsOuster(p.format.name());
        if !p.format.has_http_api() {
            return Err(refused);
        }
        let metadata = p.format.metadata(sensor, p.start, p.udp)?.ok_or(refused)?;
        let server = OusterHttpServer::bind(addr, &metadata)?;
        let config = &metadata.json()["config_params"];
        let port = config["udp_port_lidar"].as_u64().unwrap_or_default() as u16;
        Ok(Some(HttpApi {
            dest: server.udp_dest(),
            server,
            port,
            redirects: Vec::new(),
            unresolved: Vec::new(),
        }))
    }

    /// Where the packets go from now on, when a client changed `udp_dest` since the
    /// last call and it names an address.
    pub(super) fn redirect(&mut self) -> Option<SocketAddr> {
        let dest = self.server.udp_dest();
        if dest == self.dest {
            return None;
        }
        self.dest = dest;
        let to = (self.dest.as_str(), self.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next());
        match to {
            Some(to) => self.redirects.push(to),
            None => self.unresolved.push(self.dest.clone()),
        }
        to
    }

    /// Stops the server.
    pub(super) fn finish(self) -> HttpReport {
        let report = HttpReport {
            addr: self.server.local_addr(),
            exchanges: self.server.exchanges(),
            redirects: self.redirects,
            unresolved: self.unresolved,
        };
        self.server.shutdown();
        report
    }
}
