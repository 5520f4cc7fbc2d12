//! Recording the binned waveform's passes (shaders/deposit.comp and
//! shaders/waveform_binned.comp): per batch of beams, the batch's bins cleared, each
//! chunk of sub-rays traced and its records deposited into the bins, then the batch's
//! bins scanned into echoes. The records buffer holds one chunk of one batch, the bins
//! buffer one batch, so memory does not grow with the sub-rays.

use super::gpu_types::{DepositParams, FrameParams, GpuBin, WaveformParams};
use super::launch::{batch_beams, batches};
use super::shaders::WaveformBuild;
use super::slot::{BinnedBuffers, Pipelines, SensorBuffers, SlotSets};
use super::SimError;
use crate::contract::WAVEFORM_BEAMS_PER_GROUP;
use crate::gpu::{GpuError, Pass, Recording, Timestamps};
use crate::model::BinGrid;

/// What a binned frame's passes need.
pub(super) struct BinnedFrame<'a> {
    pub sensor: &'a SensorBuffers,
    pub bufs: &'a BinnedBuffers,
    /// The frame's trace and waveform push constants (whole-frame launch).
    pub params: FrameParams,
    pub wave: WaveformParams,
    /// `None`: no waveform (σ_r or Δr not positive), so no echoes.
    pub grid: Option<BinGrid>,
    /// Beams per batch ([`batch_size`]).
    pub batch: u32,
}

/// Beams per batch of a frame of `settings` for a sensor with the bins buffer `bufs`;
/// refused when not one beam's bins fit it.
pub(super) fn batch_size(
    sensor: &SensorBuffers,
    bufs: &BinnedBuffers,
    grid: Option<BinGrid>,
) -> Result<u32, SimError> {
    let bins = grid.map_or(0, |g| g.bins);
    let size = bufs.bins.size();
    match batch_beams(u64::from(sensor.beam_count), bins, size) {
        0 => Err(SimError::Input(format!(
            "{bins} range bins per beam (max_range / bin_width) do not fit the binned \
             waveform's {} of bins; widen the bins or shorten max_range",
            super::memory::size(size)
        ))),
        batch => Ok(batch),
    }
}

/// Records the binned trace and waveform of `f`; timestamp `ts_trace` is written after
/// the last batch's deposits (so with several batches the earlier batches' scans count
/// as trace time).
pub(super) fn record(
    rec: &mut Recording<'_>,
    pipelines: &Pipelines,
    sets: &SlotSets,
    f: &BinnedFrame<'_>,
    ts: &Timestamps,
    ts_trace: u32,
) -> Result<(), GpuError> {
    let binned_pipeline = pipelines.waveform.get(WaveformBuild::Binned)?;
    let binned_sets = sets.waveform(WaveformBuild::Binned)?;
    let bins = f.grid.map_or(0, |g| g.bins);
    let bin_bytes = u64::from(bins) * std::mem::size_of::<GpuBin>() as u64;
    let (bins_address, ambient_address) = (
        rec.address_of(&f.bufs.bins),
        rec.address_of(&f.bufs.ambient),
    );
    let deposit = DepositParams {
        records_address: f.params.records_address,
        bins_address,
        ambient_address,
        bin_count: bins,
        slots: f.sensor.slots,
        bin_width: f.grid.map_or(0.0, |g| g.bin_width),
        ..DepositParams::default()
    };
    let all = batches(f.sensor.layout(), f.batch);
    for (i, b) in all.iter().enumerate() {
        // The previous batch's scan has read the bins (for the first batch, the previous
        // frame's: its closing barrier orders them too, but this pass does not rely on it).
        rec.barrier(&[Pass::Compute], &[Pass::Transfer]);
        rec.zero_bytes(&f.bufs.bins, u64::from(b.beams) * bin_bytes)?;
        rec.zero_bytes(&f.bufs.ambient, u64::from(b.beams) * 4)?;
        rec.barrier(&[Pass::Transfer], &[Pass::Compute]);
        let groups = [b.beams.div_ceil(WAVEFORM_BEAMS_PER_GROUP), 1, 1];
        for launch in &b.launches {
            let params = launch.params(f.params);
            let push = bytemuck::bytes_of(&params);
            rec.trace_rays(&pipelines.trace, &sets.trace, push, [launch.rays(), 1])?;
            rec.barrier(&[Pass::RayTracing], &[Pass::Compute]);
            let chunk = DepositParams {
                beams: b.beams,
                launch_subrays: launch.subrays,
                ..deposit
            };
            let push = bytemuck::bytes_of(&chunk);
            rec.dispatch(&pipelines.deposit, &sets.deposit, push, groups)?;
            // The next chunk's trace overwrites the records the deposit read.
            rec.barrier(&[Pass::Compute], &[Pass::RayTracing, Pass::Compute]);
        }
        if i + 1 == all.len() {
            ts.write(rec, ts_trace)?;
        }
        let wave = WaveformParams {
            build_address: bins_address,
            ambient_address,
            bin_count: bins,
            beam_offset: b.beam_offset,
            beam_count: b.beam_offset + b.beams,
            ..f.wave
        };
        let push = bytemuck::bytes_of(&wave);
        rec.dispatch(binned_pipeline, binned_sets, push, groups)?;
    }
    Ok(())
}
