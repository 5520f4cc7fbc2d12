//! A Mid-360's control side while a stream runs ([`LivoxDevice`]): it answers the
//! discovery broadcast on 56000 (by broadcast, as the device does, so a host on
//! another subnet still finds it), parameter queries (0x0101) and configuration
//! (0x0100) on 56100, and pushes its state (0x0102) from 56200 once a second — what
//! Livox SDK2 needs before it hands a lidar's packets to its user. A configuration sets
//! where the point, IMU and state data go, whether the lidar samples (work mode 0x01)
//! or idles (0x02), and whether IMU data is sent; the point data type stays the one the
//! stream started with (another is answered "not supported", 0x20), as does the lidar's
//! own address.

use super::encode::LivoxDataType;
use super::protocol::{self as p, Frame, KeyValue};
use super::{
    LIVOX_CMD_PORT, LIVOX_DISCOVERY_PORT, LIVOX_HOST_IMU_PORT, LIVOX_HOST_PUSH_PORT,
    LIVOX_IMU_PORT, LIVOX_POINT_PORT, LIVOX_PUSH_PORT,
};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Work modes (`work_tgt_mode`, key 0x001A).
const SAMPLING: u8 = 0x01;
const IDLE: u8 = 0x02;
/// How often the state is pushed.
const PUSH_EVERY: Duration = Duration::from_secs(1);
/// How long a socket waits before the loop looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

/// What the device did during a stream.
#[derive(Debug, Clone, Default)]
pub struct LivoxDeviceReport {
    pub lidar_ip: Option<Ipv4Addr>,
    /// Requests answered, by command id (0x0000 discovery, 0x0100 configuration,
    /// 0x0101 query, …).
    pub answered: BTreeMap<u16, u64>,
    /// The hosts that asked, in the order they first did.
    pub hosts: Vec<SocketAddr>,
}

/// The device's parameters as the host sees and sets them.
#[derive(Debug, Clone)]
struct State {
    lidar_ip: Ipv4Addr,
    serial: [u8; 16],
    device_type: u8,
    point_to: SocketAddrV4,
    imu_to: SocketAddrV4,
    push_to: SocketAddrV4,
    data_type: LivoxDataType,
    work_mode: u8,
    imu_enabled: bool,
    point_send: bool,
    /// Other writable parameters, kept as set.
    stored: BTreeMap<u16, Vec<u8>>,
    started: Instant,
    report: LivoxDeviceReport,
}

impl State {
    /// Counts a request of `cmd_id` from `from`.
    fn answered(&mut self, cmd_id: u16, from: SocketAddr) {
        *self.report.answered.entry(cmd_id).or_default() += 1;
        if !self.report.hosts.contains(&from) && self.report.hosts.len() < 16 {
            self.report.hosts.push(from);
        }
    }
}

/// The running device: its threads and shared state.
pub struct LivoxDevice {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// A UDP socket on `addr` that shares its port with other programs' (the SDK's own
/// discovery sockets bind 56000 on the same host).
fn shared_socket(addr: SocketAddrV4) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.set_broadcast(true)?;
    s.bind(&SocketAddr::V4(addr).into())?;
    let s: UdpSocket = s.into();
    s.set_read_timeout(Some(POLL))?;
    Ok(s)
}

impl LivoxDevice {
    /// Starts a device of `device_type` and `serial` at `lidar_ip` (an address of this
    /// host: the packets leave from it), sending to `host` (the host's point data
    /// address; IMU and state to the same host at 56401 and 56201) until a host's
    /// configuration says otherwise.
    pub fn start(
        lidar_ip: Ipv4Addr,
        host: SocketAddrV4,
        device_type: u8,
        serial: &str,
    ) -> io::Result<LivoxDevice> {
        let mut sn = [0u8; 16];
        for (d, s) in sn.iter_mut().zip(serial.bytes().take(15)) {
            *d = s;
        }
        let state = Arc::new(Mutex::new(State {
            lidar_ip,
            serial: sn,
            device_type,
            point_to: host,
            imu_to: SocketAddrV4::new(*host.ip(), LIVOX_HOST_IMU_PORT),
            push_to: SocketAddrV4::new(*host.ip(), LIVOX_HOST_PUSH_PORT),
            data_type: LivoxDataType::default(),
            work_mode: SAMPLING,
            imu_enabled: true,
            point_send: true,
            stored: BTreeMap::new(),
            started: Instant::now(),
            report: LivoxDeviceReport {
                lidar_ip: Some(lidar_ip),
                ..LivoxDeviceReport::default()
            },
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let any = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, LIVOX_DISCOVERY_PORT);
        let discovery = (
            shared_socket(any)?,
            shared_socket(SocketAddrV4::new(lidar_ip, LIVOX_DISCOVERY_PORT))?,
        );
        let command = shared_socket(SocketAddrV4::new(lidar_ip, LIVOX_CMD_PORT))?;
        let push = shared_socket(SocketAddrV4::new(lidar_ip, LIVOX_PUSH_PORT))?;
        let threads = vec![
            spawn(&state, &stop, move |st| answer_discovery(st, &discovery)),
            spawn(&state, &stop, {
                let mut last_push = None;
                move |st| answer_commands(st, (&command, &push), &mut last_push)
            }),
        ];
        Ok(LivoxDevice {
            state,
            stop,
            threads,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a host has configured the device (0x0100, as the SDK does once it
    /// found it), at most `timeout`; whether one did.
    pub fn wait_for_host(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        loop {
            if self.state().report.answered.contains_key(&p::CMD_CONFIGURE) {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Where the point and IMU data go now.
    pub fn destinations(&self) -> (SocketAddr, SocketAddr) {
        let s = self.state();
        (s.point_to.into(), s.imu_to.into())
    }

    /// Whether point data and IMU data are sent now (the host may idle the lidar or
    /// switch either off).
    pub fn sends(&self) -> (bool, bool) {
        let s = self.state();
        (s.work_mode == SAMPLING && s.point_send, s.imu_enabled)
    }

    /// Stops the device.
    pub fn finish(mut self) -> LivoxDeviceReport {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.state().report.clone()
    }
}

/// A thread running `body(state)` once per poll until `stop`.
fn spawn(
    state: &Arc<Mutex<State>>,
    stop: &Arc<AtomicBool>,
    mut body: impl FnMut(&Mutex<State>) + Send + 'static,
) -> JoinHandle<()> {
    let (state, stop) = (state.clone(), stop.clone());
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            body(&state);
        }
    })
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The next request on `socket` within a poll, and who sent it.
fn request(socket: &UdpSocket) -> Option<(Frame, SocketAddr)> {
    let mut buf = [0u8; p::MAX_FRAME_LEN];
    let (n, from) = socket.recv_from(&mut buf).ok()?;
    let frame = Frame::decode(&buf[..n]).ok()?;
    (frame.cmd_type == 0 && frame.sender == 0).then_some((frame, from))
}

/// Discovery (0x0000): the answer by broadcast from the lidar's 56000, or to the
/// asker where a broadcast cannot leave.
fn answer_discovery(state: &Mutex<State>, (listen, reply): &(UdpSocket, UdpSocket)) {
    let Some((frame, from)) = request(listen) else {
        return;
    };
    if frame.cmd_id != p::CMD_DISCOVERY {
        return;
    }
    let mut s = lock(state);
    let mut data = vec![p::RET_SUCCESS, s.device_type];
    data.extend_from_slice(&s.serial);
    data.extend_from_slice(&s.lidar_ip.octets());
    data.extend_from_slice(&LIVOX_CMD_PORT.to_le_bytes());
    let ack = frame.ack(data).encode();
    let everyone = SocketAddrV4::new(Ipv4Addr::BROADCAST, LIVOX_DISCOVERY_PORT);
    if reply.send_to(&ack, everyone).is_err() {
        let _ = reply.send_to(&ack, from);
    }
    s.answered(p::CMD_DISCOVERY, from);
}

/// Queries and configuration on 56100, and the state pushed once a second.
fn answer_commands(
    state: &Mutex<State>,
    (command, push): (&UdpSocket, &UdpSocket),
    last_push: &mut Option<Instant>,
) {
    if let Some((frame, from)) = request(command) {
        let mut s = lock(state);
        let data = match frame.cmd_id {
            p::CMD_QUERY => query(&s, &frame.data),
            p::CMD_CONFIGURE => configure(&mut s, &frame.data),
            p::CMD_REBOOT => vec![p::RET_SUCCESS],
            _ => vec![p::RET_FAILURE],
        };
        s.answered(frame.cmd_id, from);
        let _ = command.send_to(&frame.ack(data).encode(), from);
    }
    if last_push.is_none_or(|t| t.elapsed() >= PUSH_EVERY) {
        *last_push = Some(Instant::now());
        let s = lock(state);
        let kvs = parameters(&s, &PUSHED);
        let mut data = (kvs.len() as u16).to_le_bytes().to_vec();
        data.extend_from_slice(&[0, 0]);
        data.extend_from_slice(&p::encode_key_values(&kvs));
        let frame = Frame {
            seq: 0,
            cmd_id: p::CMD_PUSH,
            cmd_type: 0,
            sender: 1,
            data,
        };
        let _ = push.send_to(&frame.encode(), s.push_to);
    }
}

/// The keys the device pushes with its state.
const PUSHED: [u16; 10] = [
    0x0000, 0x0001, 0x0006, 0x0007, 0x001A, 0x001C, 0x8000, 0x8006, 0x8007, 0x8010,
];

/// A query's answer: return code, key count, the values of the keys it knows.
fn query(s: &State, data: &[u8]) -> Vec<u8> {
    let Some(count) = data.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])) else {
        return vec![p::RET_PARAM_KEY_NUM_ERR, 0, 0];
    };
    let keys: Option<Vec<u16>> = (0..usize::from(count))
        .map(|i| {
            data.get(4 + 2 * i..6 + 2 * i)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
        })
        .collect();
    let Some(keys) = keys else {
        return vec![p::RET_PARAM_KEY_NUM_ERR, 0, 0];
    };
    let kvs = parameters(s, &keys);
    let mut out = vec![p::RET_SUCCESS];
    out.extend_from_slice(&(kvs.len() as u16).to_le_bytes());
    out.extend_from_slice(&p::encode_key_values(&kvs));
    out
}

/// A host-and-ports value (key 0x0005–0x0007): address, host port, lidar port.
fn host_value(to: SocketAddrV4, lidar_port: u16) -> Vec<u8> {
    let mut v = to.ip().octets().to_vec();
    v.extend_from_slice(&to.port().to_le_bytes());
    v.extend_from_slice(&lidar_port.to_le_bytes());
    v
}

/// The values of `keys` that the device has (others are left out of the answer).
fn parameters(s: &State, keys: &[u16]) -> Vec<KeyValue> {
    keys.iter()
        .filter_map(|&key| value(s, key).map(|value| KeyValue { key, value }))
        .collect()
}

fn value(s: &State, key: u16) -> Option<Vec<u8>> {
    let ip = s.lidar_ip.octets();
    Some(match key {
        0x0000 => vec![s.data_type.code()],
        0x0001 => vec![0],
        0x0003 => vec![u8::from(s.point_send)],
        0x0004 => [ip, [255, 255, 255, 0], [ip[0], ip[1], ip[2], 1]].concat(),
        0x0005 => host_value(s.push_to, LIVOX_PUSH_PORT),
        0x0006 => host_value(s.point_to, LIVOX_POINT_PORT),
        0x0007 => host_value(s.imu_to, LIVOX_IMU_PORT),
        0x001A => vec![s.work_mode],
        0x001C => vec![u8::from(s.imu_enabled)],
        0x8000 => s.serial.to_vec(),
        0x8001 => {
            let mut v = b"Mid-360 (beamtrace simulation)".to_vec();
            v.resize(64, 0);
            v
        }
        0x8002 => vec![1, 1, 0, 0],
        0x8003 | 0x8004 => vec![1, 0, 0, 0],
        0x8005 => vec![0x02, 0xbe, 0x47, ip[1], ip[2], ip[3]],
        0x8006 => vec![s.work_mode],
        0x8007 => 4500i32.to_le_bytes().to_vec(),
        0x8008 => 1u32.to_le_bytes().to_vec(),
        0x8009 => (s.started.elapsed().as_nanos() as u64)
            .to_le_bytes()
            .to_vec(),
        0x800A => 0u64.to_le_bytes().to_vec(),
        0x800B => 0i64.to_le_bytes().to_vec(),
        0x800C | 0x800F => vec![0],
        0x800E => 0u16.to_le_bytes().to_vec(),
        0x8010 => vec![1],
        0x8011 => vec![0; 32],
        other => s.stored.get(&other)?.clone(),
    })
}

/// Parameters a host may set and the device keeps as they are (attitude, blind spot,
/// FOV, detect mode, IO, speed mode, time filter).
const KEPT: [u16; 10] = [
    0x0012, 0x0013, 0x0015, 0x0016, 0x0017, 0x0018, 0x0019, 0x0021, 0x0026, 0x002B,
];

/// A configuration's answer: return code and the key it failed at (0 on success).
/// Keys are applied in order up to the first refused.
fn configure(s: &mut State, data: &[u8]) -> Vec<u8> {
    let answer = |ret: u8, key: u16| {
        let mut v = vec![ret];
        v.extend_from_slice(&key.to_le_bytes());
        v
    };
    let count = match data.get(..2) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]),
        None => return answer(p::RET_PARAM_KEY_NUM_ERR, 0),
    };
    let Ok(kvs) = p::parse_key_values(data, 4, count) else {
        return answer(p::RET_PARAM_KEY_NUM_ERR, 0);
    };
    for kv in kvs {
        let ret = set(s, &kv);
        if ret != p::RET_SUCCESS {
            return answer(ret, kv.key);
        }
    }
    answer(p::RET_SUCCESS, 0)
}

fn set(s: &mut State, kv: &KeyValue) -> u8 {
    let v = &kv.value;
    let byte = || (v.len() == 1).then(|| v[0]);
    let host = || {
        (v.len() == 8).then(|| {
            let ip = Ipv4Addr::new(v[0], v[1], v[2], v[3]);
            SocketAddrV4::new(ip, u16::from_le_bytes([v[4], v[5]]))
        })
    };
    let applied = match kv.key {
        // The stream's encoder keeps the type it started with.
        0x0000 => match byte().map(LivoxDataType::of_code) {
            Some(Some(t)) if t == s.data_type => Some(()),
            Some(Some(_)) => return p::RET_PARAM_NOT_SUPPORTED,
            Some(None) => return p::RET_OUT_OF_RANGE,
            None => None,
        },
        // Only the non-repetitive scan: the repetitive ones are "Not Support Now".
        0x0001 => match byte() {
            Some(0) => Some(()),
            Some(_) => return p::RET_PARAM_NOT_SUPPORTED,
            None => None,
        },
        0x0003 => byte().map(|b| s.point_send = b != 0),
        // The simulated lidar keeps the address it was started at.
        0x0004 => return p::RET_PARAM_NOT_SUPPORTED,
        0x0005 => host().map(|h| s.push_to = h),
        0x0006 => host().map(|h| s.point_to = h),
        0x0007 => host().map(|h| s.imu_to = h),
        0x001A => match byte() {
            Some(m @ (SAMPLING | IDLE)) => {
                s.work_mode = m;
                Some(())
            }
            Some(_) => return p::RET_OUT_OF_RANGE,
            None => None,
        },
        0x001C => byte().map(|b| s.imu_enabled = b != 0),
        k if k >= 0x8000 => return p::RET_PARAM_READ_ONLY,
        k if KEPT.contains(&k) => {
            s.stored.insert(k, v.clone());
            Some(())
        }
        _ => return p::RET_PARAM_NOT_SUPPORTED,
    };
    match applied {
        Some(()) => p::RET_SUCCESS,
        None => p::RET_PARAM_INVALID_LEN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let host = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 56301);
        State {
            lidar_ip: Ipv4Addr::new(127, 0, 0, 2),
            serial: [0; 16],
            device_type: 9,
            point_to: host,
            imu_to: host,
            push_to: host,
            data_type: LivoxDataType::CartesianHigh,
            work_mode: SAMPLING,
            imu_enabled: true,
            point_send: true,
            stored: BTreeMap::new(),
            started: Instant::now(),
            report: LivoxDeviceReport::default(),
        }
    }

    /// A configuration request of `kvs` (key count, reserved, key-values).
    fn request(kvs: &[(u16, &[u8])]) -> Vec<u8> {
        let kvs: Vec<KeyValue> = kvs
            .iter()
            .map(|(key, v)| KeyValue {
                key: *key,
                value: v.to_vec(),
            })
            .collect();
        let mut data = (kvs.len() as u16).to_le_bytes().to_vec();
        data.extend_from_slice(&[0, 0]);
        data.extend_from_slice(&p::encode_key_values(&kvs));
        data
    }

    /// The protocol's return codes: success and no error key; the repetitive scans
    /// "not supported now" (0x20), a read-only key (0x22), a wrong length (0x23), a
    /// work mode out of range (0x03), each naming its key; the host's addresses and
    /// idling applied.
    #[test]
    fn configuration_answers_with_the_protocols_codes() {
        let mut s = state();
        let host = [192, 168, 1, 50, 0x11, 0xDC, 0x0C, 0xDC];
        let ok = configure(&mut s, &request(&[(0x0006, &host), (0x001A, &[IDLE])]));
        assert_eq!(ok, vec![0, 0, 0]);
        assert_eq!(s.point_to, "192.168.1.50:56337".parse().unwrap());
        assert_eq!(s.work_mode, IDLE);
        for (kv, ret) in [
            ((0x0001u16, &[1u8][..]), p::RET_PARAM_NOT_SUPPORTED),
            ((0x0000, &[3]), p::RET_PARAM_NOT_SUPPORTED),
            ((0x8000, &[0; 16]), p::RET_PARAM_READ_ONLY),
            ((0x0006, &[1, 2, 3]), p::RET_PARAM_INVALID_LEN),
            ((0x001A, &[7]), p::RET_OUT_OF_RANGE),
        ] {
            let got = configure(&mut s, &request(&[kv]));
            let key = kv.0.to_le_bytes();
            assert_eq!(got, vec![ret, key[0], key[1]], "key {:#06x}", kv.0);
        }
        // A key count the list does not hold.
        let mut short = request(&[(0x001A, &[SAMPLING])]);
        short[0] = 2;
        assert_eq!(configure(&mut s, &short)[0], p::RET_PARAM_KEY_NUM_ERR);
    }

    /// A query answers the keys the device has, in the order asked, leaving out
    /// those it does not: firmware type 1 (application), the serial.
    #[test]
    fn queries_answer_the_keys_asked() {
        let s = state();
        let mut data = 3u16.to_le_bytes().to_vec();
        data.extend_from_slice(&[0, 0]);
        for key in [0x8010u16, 0x7777, 0x8000] {
            data.extend_from_slice(&key.to_le_bytes());
        }
        let got = query(&s, &data);
        assert_eq!(got[..3], [0, 2, 0]);
        let kvs = p::parse_key_values(&got, 3, 2).unwrap();
        assert_eq!((kvs[0].key, kvs[0].value.as_slice()), (0x8010, &[1u8][..]));
        assert_eq!((kvs[1].key, kvs[1].value.len()), (0x8000, 16));
    }
}
