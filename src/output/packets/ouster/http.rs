//! The HTTP API a firmware 3.1 Ouster sensor answers, for the metadata of an
//! [`OusterSensor`](super::OusterSensor): [`OusterHttpServer`], a blocking HTTP/1.1
//! server on one thread (std::net; requests parsed by `httparse`), so that an
//! unmodified ouster-sdk or ouster-ros client can connect to a beamtrace stream as to a
//! real sensor (`beamtrace stream --http ADDR`).
//!
//! What a client asks when it connects (ouster-sdk 1.0, `SensorHttp::create` and the
//! sensor client's start-up, read from its source and observed): the sensor info (for
//! the firmware version), the active configuration, `udp_dest: "@auto"` posted and the
//! staged configuration read back (to learn which address the sensor sees it from),
//! the original destination posted back, the user data, and the metadata.
//!
//! # What is served
//!
//! Every answer is JSON (`Content-Type: application/json`), one request per connection
//! (`Connection: close`):
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /api/v1/system/firmware` | `{"fw": image_rev}` |
//! | `GET /api/v1/sensor/metadata` | the whole metadata, `config_params` = the active configuration |
//! | `GET /api/v1/sensor/metadata/SECTION` | one section: `sensor_info`, `beam_intrinsics`, `lidar_intrinsics`, `imu_intrinsics`, `lidar_data_format`, `calibration_status` |
//! | `GET /api/v1/sensor/config` | the active configuration; `?staging=true`: the staged one |
//! | `POST /api/v1/sensor/config` | merges the body (a JSON object) into the staged configuration; applies it (staged → active) when `reinit=true`, or when neither `reinit` nor `staging` is given; `persist` is accepted and changes nothing; answers `{}` |
//! | `GET /api/v1/user/data` | `""` (no user data); `?include_metadata=true`: `{"value": "", "policy": "clear_on_config_delete"}` |
//!
//! The configuration is the metadata's `config_params`. A posted key may keep its
//! value; only `udp_dest` may change (`"@auto"` becomes the address the request came
//! from), and [`OusterHttpServer::udp_dest`] tells the streamer where a client asked
//! the packets to go. Any other change (lidar mode, profile, ports, …) is refused with
//! 400 and a message naming the key: the beamtrace run fixes them. Another path is
//! 404 and another method 405, each with `{"error": …}`, and so is a request that
//! cannot be read (400). Requests are bounded (16 KiB and 32 headers of head, 64 KiB of
//! body, 2 s to arrive); the legacy TCP command port 7501 is not served (ouster-sdk
//! uses HTTP from firmware 2.1 on).
//!
//! # Why not an HTTP server crate
//!
//! The server may listen on a network's port 80, so what a client can make it hold is
//! bounded: one thread, one connection at a time, the bounds above, and shutdown joins
//! the thread. `tiny_http` 0.12 (the small synchronous server; its latest release)
//! keeps none of these, measured against it with the same clients (2026-11-27): a
//! header line that never ends grew the server to 265 MB resident after 256 MiB sent
//! (this server answers 400 after 16 KiB, 7 MB resident throughout); 20 idle
//! connections held 20 threads open with no time limit (here each gets its 400 after
//! 2 s, on the one thread); it keeps HTTP/1.1 connections open after the answer and
//! drops a `Connection: close` header from responses, so a client reading to the end
//! waits (5 s and still open); an unreadable request gets an empty 400 the
//! application never sees (no JSON, no log entry); and the port still accepted a
//! connection right after the server was dropped. So the socket loop stays here and
//! only the parsing of the request head, the part easiest to get wrong, is `httparse`
//! (hyper's parser).
//!
//! # Port
//!
//! A real sensor listens on port 80. ouster-sdk's `SensorHttp.create("HOST:PORT")`
//! and `ouster.sdk.sensor.get_config("HOST:PORT")` reach a server on another port, but
//! its sensor clients (`SensorPacketSource`, `SensorScanSource`, ouster-ros) then
//! resolve the same string as the host the UDP packets come from and fail ("Could not
//! resolve address"): for them the server must listen on port 80 of the host they are
//! given. Ports below 1024 need root or the capability to bind them: run beamtrace
//! as root, or give the binary the capability once (`sudo setcap
//! cap_net_bind_service=+ep $(which beamtrace)`), or lower the first unprivileged port
//! (`sudo sysctl net.ipv4.ip_unprivileged_port_start=80`), or listen on a high port
//! and redirect 80 to it (`sudo iptables -t nat -A OUTPUT -o lo -p tcp --dport 80 -j
//! REDIRECT --to-ports 8080` for clients on the same machine). A second loopback
//! address (127.0.0.2) gives the simulated sensor its own host name.

use super::meta::OusterMetadata;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum OusterHttpError {
    #[error("cannot listen for Ouster HTTP requests on {addr}: {source}{hint}")]
    Bind {
        addr: String,
        source: io::Error,
        /// What to do, when the cause is known.
        hint: &'static str,
    },
    #[error("cannot start the Ouster HTTP server on {addr}: {source}")]
    Start { addr: SocketAddr, source: io::Error },
}

/// One request the server answered, or a connection it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpExchange {
    pub peer: SocketAddr,
    /// `GET /api/v1/sensor/metadata`, or what could not be read.
    pub request: String,
    /// The status code sent; 0 when nothing could be sent.
    pub status: u16,
}

/// How many exchanges [`OusterHttpServer::exchanges`] keeps, the latest.
pub const EXCHANGE_LOG: usize = 256;

/// How long the server thread sleeps when no client is waiting.
const POLL: Duration = Duration::from_millis(10);
/// How long a client may take to send its whole request (however it trickles in), or
/// to take each write of the answer: what bounds the server's shutdown.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a refused request's client is read from after the answer ([`linger`]).
const LINGER: Duration = Duration::from_millis(500);
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 64 * 1024;
/// Headers a request may carry (ouster-sdk's libcurl sends four or five).
const MAX_HEADERS: usize = 32;

/// The sensor's HTTP API on one thread; stops when shut down or dropped.
#[derive(Debug)]
pub struct OusterHttpServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What the API reads and changes.
#[derive(Debug)]
struct State {
    /// The metadata; its `config_params` are the active configuration.
    metadata: Value,
    staged: Value,
    log: VecDeque<HttpExchange>,
}

impl State {
    fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere cannot leave State half-changed: each change is one
        // assignment.
        state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl OusterHttpServer {
    /// Listens on `addr` (e.g. `0.0.0.0:80`, or port 0 for any free port) and answers
    /// from `metadata` on a thread of its own.
    pub fn bind(
        addr: impl ToSocketAddrs + fmt::Display,
        metadata: &OusterMetadata,
    ) -> Result<Self, OusterHttpError> {
        let listener = TcpListener::bind(&addr).map_err(|source| OusterHttpError::Bind {
            addr: addr.to_string(),
            hint: bind_hint(&source),
            source,
        })?;
        let local = listener
            .local_addr()
            .and_then(|a| listener.set_nonblocking(true).map(|()| a))
            .map_err(|source| OusterHttpError::Bind {
                addr: addr.to_string(),
                hint: "",
                source,
            })?;
        let staged = metadata.json()["config_params"].clone();
        let state = Arc::new(Mutex::new(State {
            metadata: metadata.json().clone(),
            staged,
            log: VecDeque::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&state), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("ouster-http".into())
            .spawn(move || serve(&listener, &s, &st))
            .map_err(|source| OusterHttpError::Start {
                addr: local,
                source,
            })?;
        Ok(OusterHttpServer {
            addr: local,
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (with the port chosen when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where the active configuration sends the packets: the metadata's `udp_dest`
    /// until a client sets another.
    pub fn udp_dest(&self) -> String {
        let s = State::lock(&self.state);
        s.metadata["config_params"]["udp_dest"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The metadata as `GET /api/v1/sensor/metadata` answers it now.
    pub fn metadata(&self) -> Value {
        State::lock(&self.state).metadata.clone()
    }

    /// The latest exchanges (at most [`EXCHANGE_LOG`]), oldest first.
    pub fn exchanges(&self) -> Vec<HttpExchange> {
        State::lock(&self.state).log.iter().cloned().collect()
    }

    /// Stops the server and waits for its thread (at most one request's time).
    pub fn shutdown(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            // The thread only returns; a panic in it has nothing left to clean up.
            let _ = t.join();
        }
    }
}

impl Drop for OusterHttpServer {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn bind_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::PermissionDenied => {
            ". Ports below 1024 need root or the capability to bind them: run as root, \
             or `sudo setcap cap_net_bind_service=+ep` the binary, or listen on a port \
             of 1024 or more and redirect port 80 to it"
        }
        io::ErrorKind::AddrInUse => {
            ". Another program (or another beamtrace stream) listens there: stop it or \
             choose another address"
        }
        _ => "",
    }
}

/// Accepts and answers until `stop` is set.
fn serve(listener: &TcpListener, state: &Mutex<State>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let exchange = answer(stream, peer, state);
                let mut s = State::lock(state);
                if s.log.len() == EXCHANGE_LOG {
                    s.log.pop_front();
                }
                s.log.push_back(exchange);
            }
            // No client waiting, or one that left before it was accepted.
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Reads one request from `stream` and answers it.
fn answer(mut stream: TcpStream, peer: SocketAddr, state: &Mutex<State>) -> HttpExchange {
    let setup = stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_read_timeout(Some(IO_TIMEOUT)))
        .and_then(|()| stream.set_write_timeout(Some(IO_TIMEOUT)));
    let deadline = Instant::now() + IO_TIMEOUT;
    let request = setup
        .map_err(|e| e.to_string())
        .and_then(|()| read_request(&mut stream, deadline));
    let refused = request.is_err();
    let (line, (status, body)) = match request {
        Ok(req) => (
            format!("{} {}", req.method, req.target),
            route(&req, peer.ip(), state),
        ),
        Err(why) => (format!("unreadable request: {why}"), error(400, &why)),
    };
    let sent = write_response(&mut stream, status, &body);
    if refused {
        linger(&mut stream);
    }
    HttpExchange {
        peer,
        request: line,
        status: if sent.is_ok() { status } else { 0 },
    }
}

/// After a refused request the client may still be sending, and closing a socket with
/// bytes unread makes the kernel reset the connection, which can discard the answer
/// before the client reads it. So the server stops writing and reads on until the
/// client closes, for at most [`LINGER`] and the bounds of one request.
fn linger(stream: &mut TcpStream) {
    let until = Instant::now() + LINGER;
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = [0u8; 4096];
    let mut left = MAX_HEAD + MAX_BODY;
    while left > 0 {
        let wait = until.saturating_duration_since(Instant::now());
        if wait.is_zero() || stream.set_read_timeout(Some(wait)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
}

/// One HTTP request.
#[derive(Debug)]
struct Request {
    method: String,
    target: String,
    body: Vec<u8>,
}

impl Request {
    fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The query parameter `key`, if given.
    fn query(&self, key: &str) -> Option<&str> {
        let query = self.target.split_once('?')?.1;
        query
            .split('&')
            .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// A boolean query parameter (`true`/`True`/`1`, `false`/`False`/`0`).
    fn flag(&self, key: &str) -> Option<bool> {
        self.query(key)
            .map(|v| v.eq_ignore_ascii_case("true") || v == "1")
    }
}

/// Reads the head (request line and headers, parsed by `httparse`) and the body its
/// Content-Length announces, all by `deadline`.
fn read_request(stream: &mut TcpStream, deadline: Instant) -> Result<Request, String> {
    let mut buf = Vec::new();
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut head = httparse::Request::new(&mut headers);
        match head.parse(&buf) {
            Ok(httparse::Status::Complete(n)) => {
                return read_rest(stream, &head, buf[n..].to_vec(), deadline);
            }
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => {
                return Err(format!("more than {MAX_HEADERS} headers"));
            }
            Err(e) => {
                return Err(format!("not an HTTP/1.x request line and headers ({e})"));
            }
        }
        if buf.len() > MAX_HEAD {
            return Err(format!("a request head longer than {MAX_HEAD} bytes"));
        }
        read_some(stream, &mut buf, 4096, "mid-request", deadline)?;
    }
}

/// The request of a parsed `head`: its body is `rest` (read with the head) and what
/// follows, as long as Content-Length says.
fn read_rest(
    stream: &mut TcpStream,
    head: &httparse::Request,
    rest: Vec<u8>,
    deadline: Instant,
) -> Result<Request, String> {
    if header(head, "transfer-encoding").is_some() {
        return Err("a chunked body: send Content-Length".into());
    }
    let length = match header(head, "content-length") {
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| format!("Content-Length `{v}`"))?,
        None => 0,
    };
    if length > MAX_BODY {
        return Err(format!("a body of {length} bytes, more than {MAX_BODY}"));
    }
    // curl waits for this before it sends a large body.
    if header(head, "expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        stream
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .map_err(|e| e.to_string())?;
    }
    let mut body = rest;
    while body.len() < length {
        let missing = length - body.len();
        read_some(stream, &mut body, missing, "mid-body", deadline)?;
    }
    body.truncate(length);
    Ok(Request {
        // A complete parse has both.
        method: head.method.unwrap_or_default().to_string(),
        target: head.path.unwrap_or_default().to_string(),
        body,
    })
}

/// The value of header `name` (any case), trimmed.
fn header(head: &httparse::Request, name: &str) -> Option<String> {
    head.headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
}

/// Appends what `stream` has (at most `most` bytes) to `buf`; an error when the client
/// closed the connection (`when`: where in the request) or `deadline` passed.
fn read_some(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    most: usize,
    when: &str,
    deadline: Instant,
) -> Result<(), String> {
    let late = || {
        format!(
            "the client sent no complete request within {} s",
            IO_TIMEOUT.as_secs()
        )
    };
    // A client trickling a byte at a time is held to the whole request's time.
    let wait = deadline.saturating_duration_since(Instant::now());
    if wait.is_zero() {
        return Err(late());
    }
    stream
        .set_read_timeout(Some(wait))
        .map_err(|e| e.to_string())?;
    let mut chunk = vec![0u8; most.min(64 * 1024)];
    match stream.read(&mut chunk) {
        Ok(0) => Err(format!("the client closed the connection {when}")),
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            Ok(())
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Err(late())
        }
        Err(e) => Err(e.to_string()),
    }
}

fn write_response(stream: &mut TcpStream, status: u16, body: &Value) -> io::Result<()> {
    let text = body.to_string();
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: \
         {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(text.as_bytes())?;
    stream.flush()
}

fn error(status: u16, message: &str) -> (u16, Value) {
    (status, json!({ "error": message }))
}

/// The metadata sections served one by one.
const SECTIONS: [&str; 6] = [
    "sensor_info",
    "beam_intrinsics",
    "lidar_intrinsics",
    "imu_intrinsics",
    "lidar_data_format",
    "calibration_status",
];

/// The answer to `req` from `peer`: status and JSON body.
fn route(req: &Request, peer: IpAddr, state: &Mutex<State>) -> (u16, Value) {
    let path = req.path().trim_end_matches('/');
    let mut s = State::lock(state);
    match (req.method.as_str(), path) {
        ("GET", "/api/v1/system/firmware") => {
            (200, json!({ "fw": s.metadata["sensor_info"]["image_rev"] }))
        }
        ("GET", "/api/v1/sensor/metadata") => (200, s.metadata.clone()),
        ("GET", "/api/v1/sensor/config") if req.flag("staging") == Some(true) => {
            (200, s.staged.clone())
        }
        ("GET", "/api/v1/sensor/config") => (200, s.metadata["config_params"].clone()),
        ("POST", "/api/v1/sensor/config") => post_config(req, peer, &mut s),
        ("GET", "/api/v1/user/data") if req.flag("include_metadata") == Some(true) => (
            200,
            json!({ "value": "", "policy": "clear_on_config_delete" }),
        ),
        ("GET", "/api/v1/user/data") => (200, json!("")),
        ("GET", p) => match p.strip_prefix("/api/v1/sensor/metadata/") {
            Some(section) if SECTIONS.contains(&section) => (200, s.metadata[section].clone()),
            _ => error(404, &not_found(p)),
        },
        (m, _) => error(
            405,
            &format!("{m} is not answered here: the simulated sensor takes GET, and POST on /api/v1/sensor/config"),
        ),
    }
}

fn not_found(path: &str) -> String {
    format!(
        "{path} is not served by beamtrace's simulated Ouster sensor; it serves \
         /api/v1/system/firmware, /api/v1/sensor/metadata[/{}], /api/v1/sensor/config \
         and /api/v1/user/data",
        SECTIONS.join("|")
    )
}

/// Merges a posted configuration into the staged one, and applies it when asked.
fn post_config(req: &Request, peer: IpAddr, s: &mut State) -> (u16, Value) {
    let posted: Map<String, Value> = match serde_json::from_slice(&req.body) {
        Ok(Value::Object(m)) => m,
        _ => return error(400, "the body must be a JSON object of configuration keys"),
    };
    let mut staged = s.staged.clone();
    for (key, value) in posted {
        match (key.as_str(), value) {
            ("udp_dest", Value::String(dest)) => {
                let dest = if dest == "@auto" {
                    peer.to_string()
                } else {
                    dest
                };
                staged["udp_dest"] = Value::String(dest);
            }
            (k, v) if staged.get(k) == Some(&v) => {}
            (k, v) => {
                let now = staged.get(k).cloned().unwrap_or(Value::Null);
                return error(
                    400,
                    &format!(
                        "`{k}` cannot be set to {v}: beamtrace's simulated sensor keeps \
                         {now} as its run set it (only udp_dest can change); change the \
                         beamtrace run instead"
                    ),
                );
            }
        }
    }
    let apply = req.flag("reinit").unwrap_or(req.query("staging").is_none());
    if apply {
        s.metadata["config_params"] = staged.clone();
    }
    s.staged = staged;
    (200, json!({}))
}
