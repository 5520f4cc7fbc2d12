//! The Foxglove server's front door: a TCP relay on the address clients connect to, in
//! front of the SDK's server on a loopback port.
//!
//! The SDK bounds what it queues for a client ([`super::foxglove::BACKLOG`] messages,
//! the oldest dropped) but keeps a client that stops reading for ever, takes any
//! number of them, and its shutdown waits until each has taken its queue, so one
//! stalled viewer would hold the stream's exit. The door adds what it lacks: at most
//! [`MAX_CLIENTS`] connections at once (the next is answered HTTP 503), a client whose
//! socket takes nothing for [`STALL`] is dropped, so is one that sends nothing for
//! [`STALL`] after it connects (it would hold a place without ever being a viewer),
//! and [`Gate::close`] ends every connection at once. It relays bytes unchanged (the WebSocket handshake included),
//! so clients see the SDK's server as it is.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Clients connected at once at most (Foxglove app windows, scripts): each costs two
/// relay threads and what [`super::foxglove::BACKLOG`] lets the server queue for it.
pub const MAX_CLIENTS: usize = 16;
/// A client whose socket accepts no byte for this long is dropped: it has stopped
/// reading (a viewer frozen or suspended), and what it would get is stale by then.
pub const STALL: Duration = Duration::from_secs(3);
/// Bytes a relay thread holds in flight (each direction of each client).
pub const RELAY_BUFFER: usize = 64 * 1024;
/// How often the accepting thread looks whether it should stop.
const POLL: Duration = Duration::from_millis(20);

/// What the door turned away.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateCounts {
    /// Connections refused because [`MAX_CLIENTS`] were open.
    pub refused: u64,
    /// Clients dropped for taking nothing for [`STALL`], or for sending nothing (no
    /// handshake) for [`STALL`] after they connected.
    pub stalled: u64,
}

/// The listening door and its relays.
pub struct Gate {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    /// Each open connection's two sockets (clones), to end them on close.
    open: Mutex<HashMap<u64, [TcpStream; 2]>>,
    stopping: AtomicBool,
    refused: AtomicU64,
    stalled: AtomicU64,
}

impl Gate {
    /// Listens on `public` (port 0: any free port) and relays each client to `server`.
    pub fn open(public: SocketAddr, server: SocketAddr) -> std::io::Result<Gate> {
        let listener = TcpListener::bind(public)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let accept = std::thread::Builder::new()
            .name("foxglove-door".into())
            .spawn(move || accept_loop(&listener, server, &s))?;
        Ok(Gate {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// Where clients connect (the port chosen, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn counts(&self) -> GateCounts {
        GateCounts {
            refused: self.shared.refused.load(Ordering::Relaxed),
            stalled: self.shared.stalled.load(Ordering::Relaxed),
        }
    }

    /// Stops accepting and ends every connection now (their relay threads end on it).
    pub fn close(&mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        let open = std::mem::take(&mut *lock(&self.shared.open));
        for socket in open.values().flatten() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.close();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn accept_loop(listener: &TcpListener, server: SocketAddr, shared: &Arc<Shared>) {
    let mut next_id = 0u64;
    while !shared.stopping.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((client, _)) => {
                next_id += 1;
                admit(client, server, next_id, shared);
            }
            // Nothing waiting (or a connection reset before it was taken): look again.
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// A new connection: refused when the door is full, else relayed to the server.
fn admit(client: TcpStream, server: SocketAddr, id: u64, shared: &Arc<Shared>) {
    let full = lock(&shared.open).len() >= MAX_CLIENTS;
    if full {
        shared.refused.fetch_add(1, Ordering::Relaxed);
        refuse(client);
        return;
    }
    let Ok(upstream) = TcpStream::connect_timeout(&server, Duration::from_secs(1)) else {
        return;
    };
    let Ok([kept, up]) = configure(&client, &upstream) else {
        return;
    };
    lock(&shared.open).insert(id, kept);
    let [up_from, up_to] = up;
    for (from, to, down) in [(up_from, up_to, false), (upstream, client, true)] {
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("foxglove-relay-{id}"))
            .spawn(move || relay(from, to, down, id, &s));
        if spawned.is_err() {
            end(id, shared);
        }
    }
}

/// Blocking sockets with [`STALL`] as their write timeout, and two clones of the pair:
/// the ones [`Gate::close`] ends, and the client → server relay's.
fn configure(client: &TcpStream, server: &TcpStream) -> std::io::Result<[[TcpStream; 2]; 2]> {
    for s in [client, server] {
        s.set_nonblocking(false)?;
        s.set_nodelay(true)?;
        s.set_write_timeout(Some(STALL))?;
    }
    let pair = || Ok::<_, std::io::Error>([client.try_clone()?, server.try_clone()?]);
    Ok([pair()?, pair()?])
}

/// The answer to a client beyond [`MAX_CLIENTS`]: HTTP 503, which WebSocket clients
/// report as a failed handshake with that status.
fn refuse(mut client: TcpStream) {
    let _ = client.set_nonblocking(false);
    let _ = client.set_write_timeout(Some(Duration::from_secs(1)));
    let body = format!("beamtrace serves at most {MAX_CLIENTS} Foxglove clients at once\n");
    let _ = write!(
        client,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.shutdown(Shutdown::Both);
}

/// Copies `from` to `to` until either side ends; `down` (server → client) counts a
/// write that timed out as a stalled client, and client → server a client that sent
/// nothing for [`STALL`] after it connected. Either way both sockets are ended, so the
/// other direction's thread and the server's task for the client end too.
fn relay(mut from: TcpStream, mut to: TcpStream, down: bool, id: u64, shared: &Shared) {
    let mut buf = vec![0u8; RELAY_BUFFER];
    // Once the handshake has begun a client may stay silent (it only listens).
    let mut silent = !down && from.set_read_timeout(Some(STALL)).is_ok();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Err(e) => {
                let timed_out = matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
                if silent && timed_out && !shared.stopping.load(Ordering::Relaxed) {
                    shared.stalled.fetch_add(1, Ordering::Relaxed);
                }
                break;
            }
            Ok(n) => n,
        };
        if silent {
            silent = false;
            if from.set_read_timeout(None).is_err() {
                break;
            }
        }
        if let Err(e) = to.write_all(&buf[..n]) {
            let timed_out = matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
            if down && timed_out && !shared.stopping.load(Ordering::Relaxed) {
                shared.stalled.fetch_add(1, Ordering::Relaxed);
            }
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
    end(id, shared);
}

/// Forgets connection `id`, ending its sockets (a no-op the second time).
fn end(id: u64, shared: &Shared) {
    if let Some(sockets) = lock(&shared.open).remove(&id) {
        for s in &sockets {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A server that sends without end to whoever connects, and says when each
    /// connection ended (its write failed).
    fn firehose() -> (SocketAddr, std::sync::mpsc::Receiver<Instant>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let chunk = vec![7u8; 1 << 16];
                    while s.write_all(&chunk).is_ok() {}
                    let _ = tx.send(Instant::now());
                });
            }
        });
        (addr, rx)
    }

    fn local() -> SocketAddr {
        "127.0.0.1:0".parse().unwrap()
    }

    #[test]
    fn a_client_that_stops_reading_is_dropped_after_the_stall_time() {
        let (server, ended) = firehose();
        let gate = Gate::open(local(), server).unwrap();
        let mut client = TcpStream::connect(gate.addr()).unwrap();
        // It speaks (past the handshake rule) and reads a little (the bytes come
        // through unchanged), then nothing.
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut first = [0u8; 4];
        client.read_exact(&mut first).unwrap();
        assert_eq!(first, [7; 4]);
        let stopped = Instant::now();
        let end = ended
            .recv_timeout(STALL * 4)
            .expect("the stalled client was kept");
        let after = end - stopped;
        // Dropped once the socket buffers are full and then STALL has passed; not before.
        assert!(after >= STALL, "dropped after {after:?}");
        assert_eq!(
            gate.counts(),
            GateCounts {
                refused: 0,
                stalled: 1
            }
        );
        assert!(lock(&gate.shared.open).is_empty());
    }

    #[test]
    fn a_client_that_never_sends_its_handshake_is_dropped_after_the_stall_time() {
        // A server that waits for the client to speak first, as a WebSocket server does.
        let listener = TcpListener::bind(local()).unwrap();
        let server = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let held: Vec<TcpStream> = listener.incoming().flatten().collect();
            drop(held);
        });
        let gate = Gate::open(local(), server).unwrap();
        let mut client = TcpStream::connect(gate.addr()).unwrap();
        let connected = Instant::now();
        client.set_read_timeout(Some(STALL * 4)).unwrap();
        // The door ends the connection: the read sees its end, not its own timeout.
        let mut got = Vec::new();
        let _ = client.read_to_end(&mut got);
        let after = connected.elapsed();
        assert!(
            after >= STALL && after < STALL * 3,
            "dropped after {after:?}"
        );
        assert_eq!(gate.counts().stalled, 1);
    }

    #[test]
    fn clients_beyond_the_cap_get_503_and_close_ends_every_connection_at_once() {
        let (server, ended) = firehose();
        let mut gate = Gate::open(local(), server).unwrap();
        let held: Vec<TcpStream> = (0..MAX_CLIENTS)
            .map(|_| TcpStream::connect(gate.addr()).unwrap())
            .collect();
        // Each relayed before the next is let in (the door counts open connections).
        for mut c in &held {
            c.read_exact(&mut [0u8; 1]).unwrap();
        }
        let mut extra = TcpStream::connect(gate.addr()).unwrap();
        let mut answer = String::new();
        extra.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
        assert!(
            answer.contains(&format!("at most {MAX_CLIENTS}")),
            "{answer}"
        );
        assert_eq!(gate.counts().refused, 1);
        // None of the held clients reads; closing does not wait for them.
        let t = Instant::now();
        gate.close();
        // Each wait is bounded by the stall time (a loaded machine schedules the
        // connection threads late); the whole close must still beat it below.
        for _ in 0..MAX_CLIENTS {
            ended
                .recv_timeout(STALL)
                .expect("a connection survived close");
        }
        assert!(t.elapsed() < STALL, "close took {:?}", t.elapsed());
        assert_eq!(gate.counts().stalled, 0, "closing is not stalling");
        drop(held);
    }
}
