//! What a frame's packets are made of, made on the GPU (shaders/packets.comp) in the
//! same submission as the frame, from its echo slots: Ouster's lidar packets whole, so
//! that the host only sends or writes them; Velodyne's channels (each beam's two
//! returns of the return mode), which the host frames into packets, as their firings
//! straddle frames. The host's encoders in `output::packets` stay the reference the
//! GPU's bytes are tested against; a frame with a point the packets cannot carry is
//! flagged, and the host encodes that one itself, for its error.

use super::gpu_types::PacketParams;
use super::shaders::packet_shader;
use super::slot::SensorBuffers;
use super::SimError;
use crate::contract::{
    PACKET_GROUP, PACKET_PASS_CRC, PACKET_PASS_PIXELS, PACKET_PASS_VELODYNE, VELODYNE_DUAL,
    VELODYNE_LAST, VELODYNE_STRONGEST,
};
use crate::gpu::{
    exclusive, Buffer, BufferUsageFlags, ComputePipeline, Context, DescriptorSets, GpuError,
    MemoryLocation, Pass, Recording,
};
use crate::output::packets::{
    crc64, crc64_byte_table, HesaiModel, OusterSensor, VelodyneModel, VelodyneReturnMode,
};
use crate::sensor::ReflectivityScale;
use std::sync::Arc;

/// The error word of a frame whose points all fit.
const NO_ERROR: u32 = u32::MAX;

/// Bytes before the column timestamps in a frame's packet buffer: the error word and
/// a spare one.
const FRAME_HEADER_BYTES: u64 = 8;

/// One sensor's packets as the pass makes them: their layout and its tables.
pub struct PacketEncoding {
    /// The reflectivity steps and CRC tables (PacketTables in the shader).
    tables: Arc<Buffer>,
    /// The push constants but the addresses, pass and frame id.
    params: PacketParams,
    /// Ouster's lidar packets per frame; `None`: Velodyne's channels.
    packets: Option<u32>,
    beams: u32,
}

/// What a lane's frames make on the GPU for their packets.
#[derive(Debug, Clone)]
pub enum GpuPacketFormat {
    /// This sensor's lidar packets.
    Ouster(OusterSensor),
    /// The channels of this model's packets in this return mode.
    Velodyne {
        model: VelodyneModel,
        mode: VelodyneReturnMode,
    },
    /// The channels of a Hesai model's packets in a return mode that chooses as
    /// Velodyne's does (last, strongest, last and strongest).
    Hesai {
        model: HesaiModel,
        mode: VelodyneReturnMode,
    },
}

impl GpuPacketFormat {
    /// The encoding for frames of `beams` beams.
    pub fn encoding(&self, ctx: &Arc<Context>, beams: usize) -> Result<PacketEncoding, SimError> {
        match self {
            GpuPacketFormat::Ouster(sensor) => PacketEncoding::ouster(ctx, sensor, beams),
            GpuPacketFormat::Velodyne { model, mode } => PacketEncoding::channels(
                ctx,
                (*mode, model.units_per_m(), model.reflectivity_scale()),
                beams,
            ),
            GpuPacketFormat::Hesai { model, mode } => PacketEncoding::channels(
                ctx,
                (
                    *mode,
                    model.spin().units_per_m,
                    ReflectivityScale::HESAI_LINEAR,
                ),
                beams,
            ),
        }
    }
}

/// A frame's packets to make: its frame id (16 bits, wrapping) and each column's
/// timestamp.
pub struct PacketRequest {
    pub encoding: Arc<PacketEncoding>,
    pub frame_id: u16,
    pub column_ns: Vec<u64>,
}

/// A frame's packets as the GPU made them.
#[derive(Debug, Clone, Default)]
pub struct GpuPackets {
    /// Ouster's packets' payloads back to back.
    pub bytes: Vec<u8>,
    /// Velodyne's channels: per beam, `[single or last, strongest]`, each `distance |
    /// reflectivity << 16`.
    pub channels: Vec<[u32; 2]>,
    /// The lowest beam with a point the packets cannot carry: then the bytes are not
    /// whole, and the host's encoder says what is wrong with it.
    pub unfit_beam: Option<u32>,
}

/// What a frame's collection reads of its packets.
#[derive(Debug, Clone, Copy)]
pub(super) enum PacketRead {
    /// This many bytes of payloads.
    Packets(u64),
    /// The channels of this many beams.
    Channels(u32),
}

/// The packet pass's pipeline and its (empty) descriptor sets: it reaches every
/// buffer by address.
pub(super) struct PacketPipeline {
    pipeline: Arc<ComputePipeline>,
    sets: Arc<DescriptorSets>,
}

impl PacketPipeline {
    pub fn new(ctx: &Arc<Context>) -> Result<PacketPipeline, SimError> {
        let pipeline = Arc::new(ComputePipeline::new(ctx, &packet_shader()?)?);
        let sets = Arc::new(pipeline.descriptor_sets()?);
        Ok(PacketPipeline { pipeline, sets })
    }
}

impl PacketEncoding {
    /// The packets of `sensor` for frames of `beams` beams (its channels × columns,
    /// channel fastest, as its encoder reads them).
    pub fn ouster(
        ctx: &Arc<Context>,
        sensor: &OusterSensor,
        beams: usize,
    ) -> Result<PacketEncoding, SimError> {
        let layout = sensor.packet_layout();
        if beams != layout.channels * layout.columns {
            return Err(SimError::Input(format!(
                "the Ouster packets carry {} channels × {} columns, the sensor has {beams} beams",
                layout.channels, layout.columns
            )));
        }
        let words = |bytes: usize| (bytes / 4) as u32;
        let params = PacketParams {
            channels: layout.channels as u32,
            columns: layout.columns as u32,
            packet_words: words(layout.packet),
            header_words: words(layout.header),
            column_words: words(layout.column),
            column_header_words: words(layout.column_header),
            pixel_words: words(layout.pixel),
            id_low: layout.ids as u32,
            id_high: (layout.ids >> 32) as u32,
            origin_offset: layout.origin_offset,
            max_range_mm: layout.max_range_mm,
            ..PacketParams::default()
        };
        let crc = layout.footer > 0;
        let tables = packet_tables(params.packet_words, crc, ReflectivityScale::STANDARD);
        let usage = BufferUsageFlags::STORAGE_BUFFER;
        let tables = Arc::new(Buffer::upload(ctx, "packet tables", &tables, usage)?);
        Ok(PacketEncoding {
            tables,
            params,
            packets: Some((layout.columns / layout.columns_per_packet) as u32),
            beams: beams as u32,
        })
    }

    /// Each beam's two channels (`[single or last, strongest]`, each `distance |
    /// reflectivity << 16`) in return mode `mode`, of distance units `units_per_m` and
    /// reflectivity bytes of `scale`, for the host's `VelodyneEncoder` or `HesaiEncoder`
    /// to frame into packets.
    pub fn channels(
        ctx: &Arc<Context>,
        (mode, units_per_m, scale): (VelodyneReturnMode, f64, ReflectivityScale),
        beams: usize,
    ) -> Result<PacketEncoding, SimError> {
        let params = PacketParams {
            channels: beams as u32,
            columns: 1,
            return_mode: match mode {
                VelodyneReturnMode::Strongest => VELODYNE_STRONGEST,
                VelodyneReturnMode::Last => VELODYNE_LAST,
                VelodyneReturnMode::Dual => VELODYNE_DUAL,
            },
            units_per_m: units_per_m as u32,
            ..PacketParams::default()
        };
        let usage = BufferUsageFlags::STORAGE_BUFFER;
        let tables = packet_tables(0, false, scale);
        let tables = Arc::new(Buffer::upload(ctx, "packet tables", &tables, usage)?);
        Ok(PacketEncoding {
            tables,
            params,
            packets: None,
            beams: beams as u32,
        })
    }

    /// Beams of the frames these packets carry.
    pub fn beams(&self) -> u32 {
        self.beams
    }

    /// What a frame's collection reads.
    pub(super) fn read(&self) -> PacketRead {
        match self.packets {
            Some(_) => PacketRead::Packets(self.frame_bytes()),
            None => PacketRead::Channels(self.beams),
        }
    }

    /// Bytes of a frame's packets (Ouster) or channels (Velodyne: 8 per beam).
    pub fn frame_bytes(&self) -> u64 {
        match self.packets {
            Some(n) => u64::from(n) * u64::from(self.params.packet_words) * 4,
            None => u64::from(self.beams) * 8,
        }
    }

    /// Bytes of a frame's error word and column timestamps.
    fn frame_info_bytes(&self) -> u64 {
        FRAME_HEADER_BYTES + u64::from(self.params.columns) * 8
    }

    /// Whether the packets carry a CRC (the eUDP profiles).
    fn has_crc(&self) -> bool {
        self.params.header_words > 0
    }
}

/// The shader's PacketTables as 8-byte words: the CRC register's initial value advanced
/// through a packet's message, the byte table, the 255 reflectivity steps (two per
/// word, a spare 4 bytes last), then for each of the CRC pass's invocations the matrix
/// that advances its stretch's register through the bytes after it.
fn packet_tables(packet_words: u32, crc: bool, scale: ReflectivityScale) -> Vec<u64> {
    let table = crc64_byte_table();
    let message = (packet_words.saturating_sub(2) * 4) as usize;
    let mut words = vec![match crc {
        // crc64 = ¬(A^n(¬0) ⊕ L(message)), and L of zeros is 0.
        true => !crc64(&vec![0u8; message]),
        false => 0,
    }];
    words.extend_from_slice(table);
    let steps = scale.steps();
    let step = |i: usize| steps.get(i).map_or(0, |s| u64::from(s.to_bits()));
    words.extend((0..128).map(|i| step(2 * i) | (step(2 * i + 1) << 32)));
    if crc {
        words.extend(advance_matrices(message / 4, table));
    }
    words
}

/// For each invocation t of the CRC pass, whose stretch of a `words`-word message ends
/// at `min((t + 1) · per, words)`: the 64 columns of the matrix that advances a CRC
/// register through the bytes after that, by `table`'s zero-byte step.
fn advance_matrices(words: usize, table: &[u64; 256]) -> Vec<u64> {
    let group = PACKET_GROUP as usize;
    let per = words.div_ceil(group);
    let end = |t: usize| ((t + 1) * per).min(words);
    let zero_step = |r: u64| table[(r & 0xff) as usize] ^ (r >> 8);
    // The last stretch ends the message: the identity. Each one before advances
    // through the next stretch's bytes more.
    let mut matrices = vec![[0u64; 64]; group];
    matrices[group - 1] = std::array::from_fn(|j| 1u64 << j);
    for t in (0..group - 1).rev() {
        let bytes = (end(t + 1) - end(t)) * 4;
        matrices[t] = matrices[t + 1].map(|mut column| {
            for _ in 0..bytes {
                column = zero_step(column);
            }
            column
        });
    }
    matrices.into_iter().flatten().collect()
}

/// A frame slot's packet buffers, grown to the largest encoding it has made.
#[derive(Default)]
pub(super) struct SlotPackets {
    /// The packets for the host to read (host-visible).
    host: Option<Arc<Buffer>>,
    /// On a device that does not work in the host's memory, where the pass writes them
    /// before a copy moves them into `host`.
    device: Option<Arc<Buffer>>,
    /// The error word and column timestamps (host-visible: written at submission, the
    /// error word read back).
    frame: Option<Arc<Buffer>>,
}

impl SlotPackets {
    /// Sizes the buffers for `request` and writes its timestamps and a clear error word.
    pub fn prepare(&mut self, ctx: &Arc<Context>, request: &PacketRequest) -> Result<(), SimError> {
        let e = &request.encoding;
        let host = MemoryLocation::GpuToCpu;
        grow(ctx, &mut self.host, "packets", e.frame_bytes(), host)?;
        if !ctx.unified_memory {
            let device = MemoryLocation::GpuOnly;
            grow(
                ctx,
                &mut self.device,
                "packets (device)",
                e.frame_bytes(),
                device,
            )?;
        }
        grow(
            ctx,
            &mut self.frame,
            "packet columns",
            e.frame_info_bytes(),
            host,
        )?;
        let frame = self
            .frame
            .as_mut()
            .ok_or_else(|| missing("packet columns"))?;
        let frame = exclusive(frame, "a frame slot's packet columns")?;
        frame.write(0, bytemuck::cast_slice(&[NO_ERROR, 0]))?;
        frame.write(FRAME_HEADER_BYTES, bytemuck::cast_slice(&request.column_ns))?;
        Ok(())
    }

    /// Reads a finished frame's packets or channels.
    pub fn read(&self, what: PacketRead) -> Result<GpuPackets, SimError> {
        let frame = self
            .frame
            .as_ref()
            .ok_or_else(|| missing("packet columns"))?;
        let error = frame.read::<u32>(1)?[0];
        let host = self.host.as_ref().ok_or_else(|| missing("packets"))?;
        let unfit_beam = (error != NO_ERROR).then_some(error);
        Ok(match what {
            PacketRead::Packets(bytes) => GpuPackets {
                bytes: host.read::<u8>(bytes as usize)?,
                channels: Vec::new(),
                unfit_beam,
            },
            PacketRead::Channels(beams) => GpuPackets {
                bytes: Vec::new(),
                channels: host.read::<[u32; 2]>(beams as usize)?,
                unfit_beam,
            },
        })
    }

    /// Records the pass for `request` on `sensor`'s echo slots (after the waveform).
    pub fn record(
        &self,
        rec: &mut Recording<'_>,
        pipeline: &PacketPipeline,
        sensor: &SensorBuffers,
        request: &PacketRequest,
    ) -> Result<(), GpuError> {
        let e = &request.encoding;
        let host = self.host.as_ref().ok_or_else(|| missing("packets"))?;
        let frame = self
            .frame
            .as_ref()
            .ok_or_else(|| missing("packet columns"))?;
        let target = self.device.as_ref().unwrap_or(host);
        let first_pass = match e.packets {
            Some(_) => PACKET_PASS_PIXELS,
            None => PACKET_PASS_VELODYNE,
        };
        let params = PacketParams {
            echoes_address: rec.address_of(&sensor.echoes),
            counts_address: rec.address_of(&sensor.counts),
            packets_address: rec.address_of(target),
            frame_address: rec.address_of(frame),
            tables_address: rec.address_of(&e.tables),
            frame_id: u32::from(request.frame_id),
            max_returns: sensor.max_returns,
            pass: first_pass,
            ..e.params
        };
        let groups = e.beams.div_ceil(PACKET_GROUP);
        let grid = [groups.min(65_535), groups.div_ceil(groups.min(65_535)), 1];
        let (p, sets) = (&pipeline.pipeline, &pipeline.sets);
        rec.dispatch(p, sets, bytemuck::bytes_of(&params), grid)?;
        if let (Some(packets), true) = (e.packets, e.has_crc()) {
            rec.barrier(&[Pass::Compute], &[Pass::Compute]);
            let crc = PacketParams {
                pass: PACKET_PASS_CRC,
                ..params
            };
            rec.dispatch(p, sets, bytemuck::bytes_of(&crc), [packets, 1, 1])?;
        }
        if let Some(device) = &self.device {
            rec.barrier(&[Pass::Compute], &[Pass::Transfer]);
            rec.copy_buffer(device, host, e.frame_bytes())?;
        }
        Ok(())
    }
}

/// Makes `buffer` at least `bytes` long.
fn grow(
    ctx: &Arc<Context>,
    buffer: &mut Option<Arc<Buffer>>,
    name: &str,
    bytes: u64,
    location: MemoryLocation,
) -> Result<(), SimError> {
    if buffer.as_ref().is_none_or(|b| b.size() < bytes) {
        let usage = BufferUsageFlags::STORAGE_BUFFER
            | BufferUsageFlags::TRANSFER_SRC
            | BufferUsageFlags::TRANSFER_DST;
        *buffer = Some(Arc::new(Buffer::new(ctx, name, bytes, usage, location)?));
    }
    Ok(())
}

fn missing(what: &str) -> GpuError {
    GpuError::Usage(format!(
        "the frame slot has no {what} buffer: prepare it first"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRC register of `bytes` from zero, a byte at a time.
    fn linear(bytes: &[u8], table: &[u64; 256]) -> u64 {
        (bytes.iter()).fold(0, |r, &b| {
            table[((r ^ u64::from(b)) & 0xff) as usize] ^ (r >> 8)
        })
    }

    #[test]
    fn stretches_advanced_by_their_matrices_give_the_packets_crc() {
        // The CRC pass's arithmetic on the host: a 1 000-word message in 256 stretches
        // (the last ones empty), each stretch's register advanced by its matrix, XORed
        // with the initial value's term, is crc64 of the message (which the encoder's
        // tests check against CRC-64/XZ's check value).
        let table = crc64_byte_table();
        let words = 1000usize;
        let message: Vec<u8> = (0..words * 4).map(|i| (i * 7 + i / 13) as u8).collect();
        let tables = packet_tables(words as u32 + 2, true, ReflectivityScale::STANDARD);
        let (init, matrices) = (tables[0], &tables[1 + 256 + 128..]);
        let per = words.div_ceil(PACKET_GROUP as usize);
        let mut sum = init;
        for t in 0..PACKET_GROUP as usize {
            let (a, b) = ((t * per).min(words), ((t + 1) * per).min(words));
            let r = linear(&message[a * 4..b * 4], table);
            let m = &matrices[t * 64..(t + 1) * 64];
            sum ^= (0..64)
                .filter(|j| r >> j & 1 == 1)
                .fold(0, |acc, j| acc ^ m[j]);
        }
        assert_eq!(!sum, crc64(&message));
    }
}
