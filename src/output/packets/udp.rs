//! Sending packets over UDP as a sensor on the network does: each at its real send time
//! (the sensor's clock started when the stream started), or as fast as possible.
//!
//! A sensor does not care whether anyone listens, and neither does the sink: it sends
//! from an unconnected socket, so a destination without a receiver costs nothing (no
//! ICMP "port unreachable" comes back as an error), and an error the kernel reports for
//! one datagram anyway (`ECONNREFUSED` on some systems) is counted, not fatal. Errors
//! that mean the stream cannot go on (no route, a message too long) stop it.

use super::Packet;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// The sink could not be set up, or a packet could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("cannot open a UDP socket to send to {to}: {source}")]
    Bind {
        to: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error(
        "cannot send from {from} as the device does: {source}; it must be an address of \
         this host and a port no other program holds (on one machine use a loopback \
         address such as 127.0.0.2)"
    )]
    BindSource {
        from: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error(
        "sending a {bytes}-byte packet to {to} failed: {source}; check the address and \
         that the network is up (see `ip route get {ip}`)",
        ip = to.ip()
    )]
    Send {
        to: SocketAddr,
        bytes: usize,
        #[source]
        source: io::Error,
    },
}

/// When packets leave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Each packet at `start + packet.time_s`, as the real sensor sends it.
    RealTime { start: Instant },
    /// Each packet as soon as it is there.
    AsFastAsPossible,
}

/// What a sink has sent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SendStats {
    /// Datagrams (and their bytes) sent to the sink's address: the format's data.
    pub packets: u64,
    pub bytes: u64,
    /// Datagrams sent to its host's other ports (a Velodyne's position packets, …).
    pub side_packets: u64,
    /// Datagrams the kernel refused for want of a receiver (counted, not resent).
    pub refused: u64,
    /// Packets that left after their send time (real time only), and by how much the
    /// latest was late (s).
    pub late: u64,
    pub max_late_s: f64,
}

/// Packets sent late by less than this are on time: the scheduler's wake-up jitter.
const ON_TIME: f64 = 1e-3;

/// A UDP sender to one address (and its host's other ports, see
/// [`UdpSink::with_data_port`]).
pub struct UdpSink {
    socket: UdpSocket,
    to: SocketAddr,
    /// The port of the packets that go to `to`; others go to its host at their own.
    data_port: Option<u16>,
    /// Packets to these ports leave from their own socket (a device's fixed source
    /// ports: a Livox lidar's points from 56300, IMU from 56400).
    sources: Vec<(u16, UdpSocket)>,
    /// Packets to these ports go to their own address (a Livox host's IMU address,
    /// set apart from its point data's).
    routes: Vec<(u16, SocketAddr)>,
    pub stats: SendStats,
}

impl UdpSink {
    /// A sink sending to `to` (broadcast addresses allowed).
    pub fn new(to: SocketAddr) -> Result<UdpSink, SinkError> {
        Ok(UdpSink {
            socket: socket_for(to)?,
            to,
            data_port: None,
            sources: Vec::new(),
            routes: Vec::new(),
            stats: SendStats::default(),
        })
    }

    /// Packets to port `port` leave from `from` (an address of this host), as a
    /// device's do from its fixed ports, where its host's software checks them.
    pub fn with_source(mut self, port: u16, from: SocketAddr) -> Result<Self, SinkError> {
        let socket =
            UdpSocket::bind(from).map_err(|source| SinkError::BindSource { from, source })?;
        self.sources.push((port, socket));
        Ok(self)
    }

    /// Packets on `port` (a format's point data) go to the sink's address; packets on
    /// another port (a Velodyne's position packets on 8308, …) to the same host at their
    /// own port, as a sensor sends them. Without it every packet goes to the address.
    pub fn with_data_port(mut self, port: u16) -> Self {
        self.data_port = Some(port);
        self
    }

    /// Packets to port `port` go to `to` from now on (an IPv4 `to` for an IPv4 sink).
    pub fn route(&mut self, port: u16, to: SocketAddr) {
        self.routes.retain(|(p, _)| *p != port);
        self.routes.push((port, to));
    }

    /// Where `packet` goes.
    fn destination_of(&self, packet: &Packet) -> SocketAddr {
        if let Some((_, to)) = self.routes.iter().find(|(p, _)| *p == packet.port) {
            return *to;
        }
        match self.data_port {
            Some(port) if port != packet.port => SocketAddr::new(self.to.ip(), packet.port),
            _ => self.to,
        }
    }

    /// Where the packets go.
    pub fn destination(&self) -> SocketAddr {
        self.to
    }

    /// Sends the next packets to `to` (as a sensor does when a client changes its
    /// destination); a socket of `to`'s IP version replaces one of the other.
    pub fn redirect(&mut self, to: SocketAddr) -> Result<(), SinkError> {
        if to.is_ipv4() != self.to.is_ipv4() {
            self.socket = socket_for(to)?;
        }
        self.to = to;
        Ok(())
    }

    /// Sends `packet` when `pacing` says (sleeping until then).
    pub fn send(&mut self, packet: &Packet, pacing: Pacing) -> Result<(), SinkError> {
        if let Pacing::RealTime { start } = pacing {
            self.wait_until(start, packet.time_s);
        }
        let to = self.destination_of(packet);
        let socket = self
            .sources
            .iter()
            .find(|(port, _)| *port == packet.port)
            .map_or(&self.socket, |(_, s)| s);
        match socket.send_to(&packet.payload, to) {
            Ok(_) if to != self.to => {
                self.stats.side_packets += 1;
                Ok(())
            }
            Ok(_) => {
                self.stats.packets += 1;
                self.stats.bytes += packet.payload.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                self.stats.refused += 1;
                Ok(())
            }
            Err(source) => Err(SinkError::Send {
                to,
                bytes: packet.payload.len(),
                source,
            }),
        }
    }

    fn wait_until(&mut self, start: Instant, time_s: f64) {
        let due = start + Duration::from_secs_f64(time_s.max(0.0));
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
            return;
        }
        let late = (now - due).as_secs_f64();
        if late > ON_TIME {
            self.stats.late += 1;
            self.stats.max_late_s = self.stats.max_late_s.max(late);
        }
    }
}

/// An unconnected socket that can send to `to` (broadcast addresses allowed).
fn socket_for(to: SocketAddr) -> Result<UdpSocket, SinkError> {
    let any: SocketAddr = if to.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let bind = |source| SinkError::Bind { to, source };
    let socket = UdpSocket::bind(any).map_err(bind)?;
    socket.set_broadcast(true).map_err(bind)?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(time_s: f64, byte: u8) -> Packet {
        Packet {
            time_s,
            port: 2368,
            payload: vec![byte; 100],
        }
    }

    /// A receiver on loopback gets every packet, in order, with its bytes; real-time
    /// pacing holds them to their times (measured by the receiver's clock).
    #[test]
    fn sends_in_order_at_their_times() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut sink = UdpSink::new(rx.local_addr().unwrap()).unwrap();
        let start = Instant::now();
        let pacing = Pacing::RealTime { start };
        let times = [0.0, 0.05, 0.10, 0.15];
        for (i, t) in times.iter().enumerate() {
            sink.send(&packet(*t, i as u8), pacing).unwrap();
        }
        let mut buf = [0u8; 200];
        for (i, t) in times.iter().enumerate() {
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(n, 100);
            assert_eq!(buf[0], i as u8, "packet {i} out of order");
            let at = start.elapsed().as_secs_f64();
            assert!(
                at >= *t,
                "packet {i} arrived at {at} s, before its time {t} s"
            );
        }
        assert_eq!(sink.stats.packets, 4);
        assert_eq!(sink.stats.bytes, 400);
    }

    /// Nobody listens on the port: sending goes on, nothing fails.
    #[test]
    fn no_receiver_is_not_an_error() {
        let port = {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            s.local_addr().unwrap().port()
        };
        let mut sink = UdpSink::new(([127, 0, 0, 1], port).into()).unwrap();
        for i in 0..20 {
            sink.send(&packet(0.0, i), Pacing::AsFastAsPossible)
                .unwrap();
        }
        assert_eq!(sink.stats.packets + sink.stats.refused, 20);
    }

    /// After a redirect the packets go to the new address only.
    #[test]
    fn a_redirect_sends_the_next_packets_to_the_new_address() {
        let first = UdpSocket::bind("127.0.0.1:0").unwrap();
        let second = UdpSocket::bind("127.0.0.1:0").unwrap();
        for rx in [&first, &second] {
            rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let mut sink = UdpSink::new(first.local_addr().unwrap()).unwrap();
        sink.send(&packet(0.0, 1), Pacing::AsFastAsPossible)
            .unwrap();
        sink.redirect(second.local_addr().unwrap()).unwrap();
        sink.send(&packet(0.0, 2), Pacing::AsFastAsPossible)
            .unwrap();
        let mut buf = [0u8; 200];
        assert_eq!(first.recv(&mut buf).unwrap(), 100);
        assert_eq!(buf[0], 1);
        assert_eq!(second.recv(&mut buf).unwrap(), 100);
        assert_eq!(buf[0], 2, "the packet after the redirect");
        first.set_nonblocking(true).unwrap();
        assert!(first.recv(&mut buf).is_err(), "nothing more to the first");
        assert_eq!(sink.destination(), second.local_addr().unwrap());
    }

    /// With a data port, data packets go to the address and the others to its host at
    /// their own port, as a Velodyne sends its position packets to port 8308.
    #[test]
    fn packets_on_another_port_go_to_the_same_host_at_that_port() {
        let data = UdpSocket::bind("127.0.0.1:0").unwrap();
        let side = UdpSocket::bind("127.0.0.1:0").unwrap();
        for rx in [&data, &side] {
            rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let mut sink = UdpSink::new(data.local_addr().unwrap())
            .unwrap()
            .with_data_port(2368);
        let position = Packet {
            time_s: 0.0,
            port: side.local_addr().unwrap().port(),
            payload: vec![9; 50],
        };
        sink.send(&packet(0.0, 1), Pacing::AsFastAsPossible)
            .unwrap();
        sink.send(&position, Pacing::AsFastAsPossible).unwrap();
        let mut buf = [0u8; 200];
        assert_eq!((data.recv(&mut buf).unwrap(), buf[0]), (100, 1));
        assert_eq!((side.recv(&mut buf).unwrap(), buf[0]), (50, 9));
        data.set_nonblocking(true).unwrap();
        assert!(
            data.recv(&mut buf).is_err(),
            "the side packet went elsewhere"
        );
    }

    /// A routed port's packets go to their own address (a Livox host's IMU port set
    /// apart), from the socket bound for that port; the others as before.
    #[test]
    fn a_routed_port_goes_to_its_own_address_from_its_own_source() {
        let data = UdpSocket::bind("127.0.0.1:0").unwrap();
        let routed = UdpSocket::bind("127.0.0.1:0").unwrap();
        for rx in [&data, &routed] {
            rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let source = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let mut sink = UdpSink::new(data.local_addr().unwrap())
            .unwrap()
            .with_data_port(2368)
            .with_source(56401, source)
            .unwrap();
        sink.route(56401, routed.local_addr().unwrap());
        let imu = Packet {
            time_s: 0.0,
            port: 56401,
            payload: vec![7; 60],
        };
        sink.send(&imu, Pacing::AsFastAsPossible).unwrap();
        sink.send(&packet(0.0, 1), Pacing::AsFastAsPossible)
            .unwrap();
        let mut buf = [0u8; 200];
        let (n, from) = routed.recv_from(&mut buf).unwrap();
        assert_eq!((n, buf[0], from), (60, 7, source));
        assert_eq!((data.recv(&mut buf).unwrap(), buf[0]), (100, 1));
    }

    /// A packet whose time has passed leaves at once and is counted late.
    #[test]
    fn late_packets_are_counted() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut sink = UdpSink::new(rx.local_addr().unwrap()).unwrap();
        let start = Instant::now() - Duration::from_millis(200);
        sink.send(&packet(0.0, 0), Pacing::RealTime { start })
            .unwrap();
        assert_eq!(sink.stats.late, 1);
        assert!(sink.stats.max_late_s >= 0.19);
    }
}
