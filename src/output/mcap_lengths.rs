//! A check of an MCAP file's length prefixes before the `mcap` crate parses it.
//!
//! The crate (0.26) reserves each string's declared length (a `u32`, up to 4 GiB)
//! before it reads the bytes, so one corrupt prefix in a 40 KB file asks for
//! gigabytes. This pass walks the file's records (opcode, `u64` length, body) and the
//! records inside each uncompressed chunk, and checks that each string, and each string
//! map's entries, lies within its record — the MCAP specification's layouts, record by
//! record — so the crate only ever reserves bytes the file holds. A record inside a
//! chunk that runs past the chunk is refused too: the crate's reader underflows on it
//! (a panic with overflow checks, garbage without). The walk is its own, not the
//! crate's sans-io reader, for that reason.

/// The MCAP specification's opcodes of the records that hold strings.
mod op {
    pub const HEADER: u8 = 0x01;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const CHUNK: u8 = 0x06;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const ATTACHMENT: u8 = 0x09;
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    pub const METADATA: u8 = 0x0C;
    pub const METADATA_INDEX: u8 = 0x0D;
}

/// The magic that opens (and closes) an MCAP file.
const MAGIC_LEN: usize = 8;
/// A record's opcode and length.
const RECORD_HEAD: usize = 1 + 8;

/// The first record (by its number in the file, chunks' records counted in order)
/// whose strings run past its end, as `record N (opcode 0xNN): why`. What is cut short
/// or is no MCAP at all is left to the parser, which reports it.
pub(crate) fn check_string_lengths(bytes: &[u8]) -> Result<(), String> {
    let mut index = 0;
    bytes
        .get(MAGIC_LEN..)
        .map_or(Ok(()), |records| walk(records, &mut index, End::File))
}

/// What the records being walked are.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    /// The file's: one that runs past the end is the file cut short, for the parser to
    /// report — but the parser streams a chunk's records before the chunk is whole, so
    /// those it holds are checked.
    File,
    /// A whole chunk's, which must hold each whole.
    Chunk,
    /// What a cut chunk holds: the walk stops where they are cut.
    Cut,
}

/// Checks each record of `records` (and of the chunks among them), counting them in
/// `index`.
fn walk(mut records: &[u8], index: &mut usize, end_is: End) -> Result<(), String> {
    // The closing magic is shorter than a record's head.
    while records.len() >= RECORD_HEAD {
        let opcode = records[0];
        let len = u64::from_le_bytes(records[1..RECORD_HEAD].try_into().expect("8 bytes"));
        let end = usize::try_from(len)
            .ok()
            .and_then(|n| n.checked_add(RECORD_HEAD))
            .filter(|&end| end <= records.len());
        let Some(end) = end else {
            return match end_is {
                End::Chunk => Err(format!(
                    "record {index} (opcode {opcode:#04x}) claims {len} bytes, more than \
                     the {} left in its chunk",
                    records.len() - RECORD_HEAD
                )),
                End::File if opcode == op::CHUNK => {
                    *index += 1;
                    let held = Fields {
                        body: &records[RECORD_HEAD..],
                        at: 0,
                    };
                    (held.chunk_records()).map_or(Ok(()), |(inner, _)| walk(inner, index, End::Cut))
                }
                End::File | End::Cut => Ok(()),
            };
        };
        let body = &records[RECORD_HEAD..end];
        check_record(opcode, body)
            .map_err(|why| format!("record {index} (opcode {opcode:#04x}): {why}"))?;
        *index += 1;
        if opcode == op::CHUNK {
            if let Some((inner, whole)) = (Fields { body, at: 0 }).chunk_records() {
                walk(inner, index, if whole { End::Chunk } else { End::Cut })?;
            }
        }
        records = &records[end..];
    }
    Ok(())
}

/// Checks the strings of one record's body against the body's length.
fn check_record(opcode: u8, body: &[u8]) -> Result<(), String> {
    let mut f = Fields { body, at: 0 };
    match opcode {
        op::HEADER => f.strings(2),
        op::SCHEMA => f.skip(2).and_then(|()| f.strings(2)),
        op::CHANNEL => f
            .skip(4)
            .and_then(|()| f.strings(2))
            .and_then(|()| f.string_map()),
        op::CHUNK => f.skip(8 + 8 + 8 + 4).and_then(|()| f.strings(1)),
        op::CHUNK_INDEX => f
            .skip(4 * 8)
            .and_then(|()| f.sized_u32())
            .and_then(|()| f.skip(8))
            .and_then(|()| f.strings(1)),
        op::ATTACHMENT => f.skip(8 + 8).and_then(|()| f.strings(2)),
        op::ATTACHMENT_INDEX => f.skip(5 * 8).and_then(|()| f.strings(2)),
        op::METADATA => f.strings(1).and_then(|()| f.string_map()),
        op::METADATA_INDEX => f.skip(8 + 8).and_then(|()| f.strings(1)),
        _ => Ok(()),
    }
}

/// A cursor over a record's body.
struct Fields<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn left(&self) -> usize {
        self.body.len() - self.at
    }

    fn skip(&mut self, n: usize) -> Result<(), String> {
        if n > self.left() {
            return Err(format!(
                "{n} bytes of fields at byte {} of a {}-byte record",
                self.at,
                self.body.len()
            ));
        }
        self.at += n;
        Ok(())
    }

    fn u32(&mut self) -> Result<usize, String> {
        let start = self.at;
        self.skip(4)?;
        let b: [u8; 4] = self.body[start..self.at].try_into().expect("4 bytes");
        Ok(u32::from_le_bytes(b) as usize)
    }

    /// A `u32` length and that many bytes (a string, or a map's entries).
    fn sized_u32(&mut self) -> Result<(), String> {
        let at = self.at;
        let n = self.u32()?;
        if n > self.left() {
            return Err(format!(
                "a length of {n} bytes at byte {at}, but {} bytes follow in the record",
                self.left()
            ));
        }
        self.at += n;
        Ok(())
    }

    /// The records of a chunk's body when it is uncompressed (a compressed one the
    /// parser refuses: beamtrace reads uncompressed MCAP): those the body holds, and
    /// whether that is all the chunk claims.
    fn chunk_records(mut self) -> Option<(&'a [u8], bool)> {
        self.skip(8 + 8 + 8 + 4).ok()?;
        let compression = self.u32().ok()?;
        if compression != 0 {
            return None;
        }
        let at = self.at;
        self.skip(8).ok()?;
        let len = u64::from_le_bytes(self.body[at..self.at].try_into().expect("8 bytes"));
        let held = usize::try_from(len).map_or(self.left(), |n| n.min(self.left()));
        let whole = held as u64 == len;
        Some((&self.body[self.at..self.at + held], whole))
    }

    fn strings(&mut self, count: usize) -> Result<(), String> {
        (0..count).try_for_each(|_| self.sized_u32())
    }

    /// A map of strings to strings: its byte length, then key and value strings, each
    /// within the map.
    fn string_map(&mut self) -> Result<(), String> {
        let at = self.at;
        let n = self.u32()?;
        let end = self.at.checked_add(n).filter(|&e| e <= self.body.len());
        let end = end.ok_or_else(|| {
            format!(
                "a map of {n} bytes at byte {at}, but {} bytes follow in the record",
                self.left()
            )
        })?;
        let mut entries = Fields {
            body: &self.body[..end],
            at: self.at,
        };
        while entries.at < end {
            entries.strings(2)?;
        }
        self.at = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Schema record's body: id 1, name, encoding, then `data`.
    fn schema(name_len: u32, name: &[u8]) -> Vec<u8> {
        let mut b = vec![1, 0];
        b.extend(name_len.to_le_bytes());
        b.extend(name);
        b.extend(3u32.to_le_bytes());
        b.extend(b"cdr");
        b.extend(0u32.to_le_bytes());
        b
    }

    #[test]
    fn strings_are_held_to_their_record() {
        assert_eq!(check_record(op::SCHEMA, &schema(3, b"abc")), Ok(()));
        let e = check_record(op::SCHEMA, &schema(4_000_000_000, b"abc")).unwrap_err();
        assert!(e.contains("4000000000 bytes at byte 2"), "{e}");
        // A body cut inside its fixed fields.
        let e = check_record(op::CHUNK, &[0; 20]).unwrap_err();
        assert!(e.contains("28 bytes of fields"), "{e}");
    }

    /// A file of one uncompressed chunk holding `inner`.
    fn chunked(inner: &[u8]) -> Vec<u8> {
        let mut chunk = vec![0; 28];
        chunk.extend(0u32.to_le_bytes());
        chunk.extend((inner.len() as u64).to_le_bytes());
        chunk.extend(inner);
        let mut file = b"\x89MCAP0\r\n".to_vec();
        file.push(op::CHUNK);
        file.extend((chunk.len() as u64).to_le_bytes());
        file.extend(chunk);
        file
    }

    #[test]
    fn records_inside_chunks_are_checked_and_held_to_their_chunk() {
        let body = schema(u32::MAX, b"abc");
        let mut inner = vec![op::SCHEMA];
        inner.extend((body.len() as u64).to_le_bytes());
        inner.extend(&body);
        let e = check_string_lengths(&chunked(&inner)).unwrap_err();
        assert!(e.starts_with("record 1 (opcode 0x03)"), "{e}");
        // The parser streams a chunk's records before the chunk is whole: those of a
        // file cut inside the chunk are checked.
        let file = chunked(&[&inner[..], &[0x05; 20]].concat());
        let e = check_string_lengths(&file[..file.len() - 5]).unwrap_err();
        assert!(e.starts_with("record 1 (opcode 0x03)"), "{e}");
        // An inner record whose length runs past the chunk.
        inner[1..9].copy_from_slice(&1000u64.to_le_bytes());
        let e = check_string_lengths(&chunked(&inner)).unwrap_err();
        assert!(
            e.contains("claims 1000 bytes, more than the 20 left"),
            "{e}"
        );
    }

    #[test]
    fn map_entries_are_held_to_their_map() {
        let channel = |entry_len: u32| {
            let mut b = vec![0; 4];
            b.extend(1u32.to_le_bytes());
            b.push(b't');
            b.extend(3u32.to_le_bytes());
            b.extend(b"cdr");
            // A map of 10 bytes: one key "k" and a value whose length is `entry_len`.
            b.extend(10u32.to_le_bytes());
            b.extend(1u32.to_le_bytes());
            b.push(b'k');
            b.extend(entry_len.to_le_bytes());
            b.push(b'v');
            b
        };
        assert_eq!(check_record(op::CHANNEL, &channel(1)), Ok(()));
        // A value longer than what is left of the map.
        let e = check_record(op::CHANNEL, &channel(2)).unwrap_err();
        assert!(e.contains("a length of 2 bytes"), "{e}");
    }
}
