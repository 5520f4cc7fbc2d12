//! The Mid-360's control command frames ("Control Command" of Livox's communication
//! protocol): a 24-byte header — start of frame 0xAA, version 0, length (u16, the whole
//! frame), sequence (u32; an ACK repeats its request's), command id (u16), type (0
//! request, 1 acknowledgement), sender (0 host, 1 lidar), 6 reserved bytes, CRC-16 of
//! the first 18 bytes (CRC-16/CCITT-FALSE), CRC-32 of the data (0 without data) — and
//! the data: for parameters a list of key, length (u16 each) and value.

/// Start of every frame.
pub const SOF: u8 = 0xAA;
/// The frame header (bytes).
pub const HEADER_LEN: usize = 24;
/// The largest frame the protocol allows.
pub const MAX_FRAME_LEN: usize = 1400;

/// Command ids the device answers.
pub const CMD_DISCOVERY: u16 = 0x0000;
pub const CMD_CONFIGURE: u16 = 0x0100;
pub const CMD_QUERY: u16 = 0x0101;
pub const CMD_PUSH: u16 = 0x0102;
pub const CMD_REBOOT: u16 = 0x0200;

/// Return codes ("Return Code Description").
pub const RET_SUCCESS: u8 = 0x00;
pub const RET_FAILURE: u8 = 0x01;
pub const RET_OUT_OF_RANGE: u8 = 0x03;
pub const RET_PARAM_NOT_SUPPORTED: u8 = 0x20;
pub const RET_PARAM_READ_ONLY: u8 = 0x22;
pub const RET_PARAM_INVALID_LEN: u8 = 0x23;
pub const RET_PARAM_KEY_NUM_ERR: u8 = 0x24;

/// A frame that is not one the protocol allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("a Livox control frame of {0} bytes is shorter than its 24-byte header")]
    Short(usize),
    #[error("not a Livox control frame: start byte {0:#04x}, version {1} (0xaa, 0)")]
    Start(u8, u8),
    #[error("the frame's length field says {claimed} bytes; {present} arrived")]
    Length { claimed: usize, present: usize },
    #[error("the frame's header CRC-16 does not match its bytes")]
    HeaderCrc,
    #[error("the frame's data CRC-32 does not match its bytes")]
    DataCrc,
    #[error("the frame's key list ends inside a key (at byte {0} of its data)")]
    KeyList(usize),
}

/// One control frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub seq: u32,
    pub cmd_id: u16,
    /// 0 request, 1 acknowledgement.
    pub cmd_type: u8,
    /// 0 host, 1 lidar.
    pub sender: u8,
    pub data: Vec<u8>,
}

/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR.
pub fn crc16_ccitt_false(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

fn data_crc(data: &[u8]) -> u32 {
    if data.is_empty() {
        0
    } else {
        crc32fast::hash(data)
    }
}

impl Frame {
    /// The lidar's acknowledgement of `self` carrying `data`.
    pub fn ack(&self, data: Vec<u8>) -> Frame {
        Frame {
            seq: self.seq,
            cmd_id: self.cmd_id,
            cmd_type: 1,
            sender: 1,
            data,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let len = HEADER_LEN + self.data.len();
        let mut f = Vec::with_capacity(len);
        f.push(SOF);
        f.push(0);
        f.extend_from_slice(&(len as u16).to_le_bytes());
        f.extend_from_slice(&self.seq.to_le_bytes());
        f.extend_from_slice(&self.cmd_id.to_le_bytes());
        f.push(self.cmd_type);
        f.push(self.sender);
        f.extend_from_slice(&[0; 6]);
        let crc16 = crc16_ccitt_false(&f);
        f.extend_from_slice(&crc16.to_le_bytes());
        f.extend_from_slice(&data_crc(&self.data).to_le_bytes());
        f.extend_from_slice(&self.data);
        f
    }

    /// The frame `bytes` hold, whole and with both CRCs right.
    pub fn decode(bytes: &[u8]) -> Result<Frame, ProtocolError> {
        if bytes.len() < HEADER_LEN {
            return Err(ProtocolError::Short(bytes.len()));
        }
        if bytes[0] != SOF || bytes[1] != 0 {
            return Err(ProtocolError::Start(bytes[0], bytes[1]));
        }
        let claimed = usize::from(u16::from_le_bytes([bytes[2], bytes[3]]));
        if claimed < HEADER_LEN || claimed > bytes.len() {
            return Err(ProtocolError::Length {
                claimed,
                present: bytes.len(),
            });
        }
        if crc16_ccitt_false(&bytes[..18]) != u16::from_le_bytes([bytes[18], bytes[19]]) {
            return Err(ProtocolError::HeaderCrc);
        }
        let data = &bytes[HEADER_LEN..claimed];
        if data_crc(data) != u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes")) {
            return Err(ProtocolError::DataCrc);
        }
        Ok(Frame {
            seq: u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")),
            cmd_id: u16::from_le_bytes([bytes[8], bytes[9]]),
            cmd_type: bytes[10],
            sender: bytes[11],
            data: data.to_vec(),
        })
    }
}

/// One parameter: key and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: u16,
    pub value: Vec<u8>,
}

/// The `count` key-values of `data` from byte `at`.
pub fn parse_key_values(
    data: &[u8],
    at: usize,
    count: u16,
) -> Result<Vec<KeyValue>, ProtocolError> {
    let mut out = Vec::new();
    let mut at = at;
    for _ in 0..count {
        let head = data.get(at..at + 4).ok_or(ProtocolError::KeyList(at))?;
        let key = u16::from_le_bytes([head[0], head[1]]);
        let len = usize::from(u16::from_le_bytes([head[2], head[3]]));
        let value = data
            .get(at + 4..at + 4 + len)
            .ok_or(ProtocolError::KeyList(at))?;
        out.push(KeyValue {
            key,
            value: value.to_vec(),
        });
        at += 4 + len;
    }
    Ok(out)
}

/// `kvs` as the protocol lists them (key, length, value each).
pub fn encode_key_values(kvs: &[KeyValue]) -> Vec<u8> {
    let mut out = Vec::new();
    for kv in kvs {
        out.extend_from_slice(&kv.key.to_le_bytes());
        out.extend_from_slice(&(kv.value.len() as u16).to_le_bytes());
        out.extend_from_slice(&kv.value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CRC-16/CCITT-FALSE's check value (of "123456789": 0x29B1, the CRC catalogue's).
    #[test]
    fn crc16_is_ccitt_false() {
        assert_eq!(crc16_ccitt_false(b"123456789"), 0x29B1);
    }

    #[test]
    fn frames_round_trip_and_damage_is_refused() {
        let f = Frame {
            seq: 7,
            cmd_id: CMD_QUERY,
            cmd_type: 0,
            sender: 0,
            data: vec![1, 0, 0, 0, 0x10, 0x80],
        };
        let bytes = f.encode();
        assert_eq!(Frame::decode(&bytes), Ok(f));
        let mut bad = bytes.clone();
        bad[25] ^= 1;
        assert_eq!(Frame::decode(&bad), Err(ProtocolError::DataCrc));
        bad = bytes.clone();
        bad[4] ^= 1;
        assert_eq!(Frame::decode(&bad), Err(ProtocolError::HeaderCrc));
        assert!(matches!(
            Frame::decode(&bytes[..27]),
            Err(ProtocolError::Length { .. })
        ));
        assert_eq!(
            parse_key_values(&[0, 0, 9, 0, 1], 0, 1),
            Err(ProtocolError::KeyList(0))
        );
    }
}
