//! How a frame's rays are launched: all at once, or — for beams of more records than
//! the record waveform sorts — in batches of beams whose sub-rays are traced a chunk at
//! a time, each chunk's records deposited into the batch's range bins before the next
//! chunk overwrites them (the binned waveform). Memory then stays bounded by one batch's
//! bins and one chunk's records, whatever the sub-rays.

use super::gpu_types::{FrameParams, GpuBin};
use crate::contract::{BINNED_BATCH_BEAMS, BINNED_CHUNK_SUBRAYS};
use crate::model::RecordLayout;

/// The largest bins buffer of a binned sensor (bytes): a batch of beams shrinks to fit.
pub const BIN_BUDGET: u64 = 384 << 20;

/// Bins per beam the binned waveform allows at most (Δr = 5 cm: 3.2 km).
pub const MAX_BINS_PER_BEAM: u64 = 1 << 16;

/// One ray-tracing launch: `subrays` sub-rays from `subray_offset` on of `beams` beams
/// from `beam_offset` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub beam_offset: u32,
    pub beams: u32,
    pub subray_offset: u32,
    pub subrays: u32,
}

impl Launch {
    /// The launch's width (one invocation per ray).
    pub fn rays(&self) -> u32 {
        self.beams * self.subrays
    }

    /// `params` for this launch.
    pub fn params(&self, params: FrameParams) -> FrameParams {
        FrameParams {
            beam_offset: self.beam_offset,
            subray_offset: self.subray_offset,
            launch_subrays: self.subrays,
            ..params
        }
    }
}

/// A batch of beams and the launches that trace them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub beam_offset: u32,
    pub beams: u32,
    pub launches: Vec<Launch>,
}

/// The batches of a frame of `layout`: one launch of everything, or for a binned layout
/// batches of at most `batch_beams` beams, each in chunks of BINNED_CHUNK_SUBRAYS
/// sub-rays.
pub fn batches(layout: RecordLayout, batch_beams: u32) -> Vec<Batch> {
    if !layout.binned() {
        let all = Launch {
            beam_offset: 0,
            beams: layout.beams,
            subray_offset: 0,
            subrays: layout.subrays,
        };
        return vec![Batch {
            beam_offset: 0,
            beams: layout.beams,
            launches: vec![all],
        }];
    }
    let step = batch_beams.max(1);
    (0..layout.beams)
        .step_by(step as usize)
        .map(|beam_offset| {
            let beams = step.min(layout.beams - beam_offset);
            let launches = (0..layout.subrays)
                .step_by(BINNED_CHUNK_SUBRAYS as usize)
                .map(|subray_offset| Launch {
                    beam_offset,
                    beams,
                    subray_offset,
                    subrays: BINNED_CHUNK_SUBRAYS.min(layout.subrays - subray_offset),
                })
                .collect();
            Batch {
                beam_offset,
                beams,
                launches,
            }
        })
        .collect()
}

/// Beams a binned sensor of `beams` beams holds bins for at once (at most
/// BINNED_BATCH_BEAMS).
pub fn batch_capacity(beams: u64) -> u64 {
    beams.min(u64::from(BINNED_BATCH_BEAMS))
}

/// Bytes of a binned sensor's bins buffer: its batch at MAX_BINS_PER_BEAM, at most
/// BIN_BUDGET.
pub fn bin_bytes(beams: u64) -> u64 {
    let bin = std::mem::size_of::<GpuBin>() as u64;
    (batch_capacity(beams) * MAX_BINS_PER_BEAM * bin).min(BIN_BUDGET)
}

/// Beams per batch for `bins` bins per beam in a buffer of `bytes`: as many as fit, at
/// most the batch capacity; 0 when not one beam's bins fit.
pub fn batch_beams(beams: u64, bins: u32, bytes: u64) -> u32 {
    let per_beam = u64::from(bins.max(1)) * std::mem::size_of::<GpuBin>() as u64;
    (bytes / per_beam).min(batch_capacity(beams)) as u32
}

/// How a launch's invocations take its beams. Adjacent invocations run in lockstep (a
/// CPU driver's SIMD lanes), and a group's traversal costs what its longest ray costs:
/// rays of one laser in adjacent columns are nearly parallel, those of one column fan
/// out over the field of view. So the beams are taken in tiles of `columns` whole
/// columns (`beams` beams), invocation by invocation across the tile's columns, one
/// laser after the other; a launch's last beams that fill no tile go in order. Records
/// stay where the beam and sub-ray put them, so only the order of tracing changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchTile {
    pub columns: u32,
    pub beams: u32,
}

impl LaunchTile {
    /// Beams in order.
    pub const IN_ORDER: LaunchTile = LaunchTile {
        columns: 1,
        beams: 1,
    };

    /// The tile for beams of these lasers (`rings`, in beam order) with `subrays`
    /// sub-rays each, on a device of `lanes` lockstep invocations, when the beams are
    /// whole columns that repeat their lasers (`column_length`); else in order. A tile
    /// has the fewest columns whose row (one laser) fills whole groups of lanes, so that
    /// a group holds one laser, in as many adjacent columns as it takes beams: thin, 8
    /// lanes take 8 columns; 9 sub-rays too (a group then spans at most two adjacent
    /// beams of one laser); 16 sub-rays fill whole groups with one beam's, in order.
    pub fn new(rings: &[u32], subrays: u32, lanes: u32) -> LaunchTile {
        let columns = lanes / gcd(subrays.max(1), lanes.max(1));
        // Where one beam's sub-rays fill whole groups, the lasers need no scan.
        match (columns > 1).then(|| column_length(rings)).flatten() {
            Some(length) => LaunchTile {
                columns,
                beams: columns.saturating_mul(length),
            },
            None => LaunchTile::IN_ORDER,
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

/// Beams per column when the beams are columns that each fire the same lasers in the
/// same order (a spinning or scanning sensor): the period of their lasers; None for one
/// column or an irregular pattern.
fn column_length(rings: &[u32]) -> Option<u32> {
    let first = *rings.first()?;
    let length = rings.iter().skip(1).position(|&r| r == first)? + 1;
    let periodic = rings.len().is_multiple_of(length)
        && rings
            .iter()
            .enumerate()
            .all(|(i, &r)| r == rings[i % length]);
    periodic.then_some(length as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(beams: u32, subrays: u32, slots: u32) -> RecordLayout {
        RecordLayout {
            beams,
            subrays,
            slots,
            max_bounces: 1,
        }
    }

    #[test]
    fn a_record_waveform_frame_is_one_launch() {
        let b = batches(layout(1000, 64, 3), 10);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].launches.len(), 1);
        assert_eq!(b[0].launches[0].rays(), 64_000);
    }

    #[test]
    fn binned_batches_cover_every_ray_once() {
        let (beams, subrays) = (1000u32, 4624u32);
        let b = batches(layout(beams, subrays, 1), 300);
        assert_eq!(b.len(), 4); // 300, 300, 300, 100
        let mut seen = vec![0u32; (beams * subrays) as usize];
        for batch in &b {
            assert_eq!(batch.launches.len(), 73); // 72 chunks of 64 and one of 16
            for l in &batch.launches {
                assert_eq!((l.beam_offset, l.beams), (batch.beam_offset, batch.beams));
                for beam in l.beam_offset..l.beam_offset + l.beams {
                    for sub in l.subray_offset..l.subray_offset + l.subrays {
                        seen[(beam * subrays + sub) as usize] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn batches_fit_the_bins_buffer() {
        // Paper 000: 16 384 beams of 1 201 bins fit the budget in one batch.
        let bytes = bin_bytes(16_384);
        assert_eq!(batch_beams(16_384, 1201, bytes), 16_384);
        assert_eq!(batch_beams(16_384, 4001, bytes), 5031);
        assert_eq!(batch_beams(4, 100, bin_bytes(4)), 4);
        assert_eq!(batch_beams(4, 70_000, bin_bytes(4)), 3);
        assert_eq!(batch_beams(1, 70_000, bin_bytes(1)), 0);
    }

    fn rings(name: &str, columns: u32) -> Vec<u32> {
        let sensor = crate::sensor::preset(name, Some(columns)).expect("preset");
        sensor.beams.iter().map(|b| b.ring).collect()
    }

    #[test]
    fn a_spinning_sensors_columns_are_its_lasers_in_firing_order() {
        // The VLP-16 fires its 16 lasers in every column, their elevations interleaved
        // (−15°, 1°, −13°, …): neighbours in firing order look 16° apart.
        let vlp = crate::sensor::preset("vlp-16", Some(30)).expect("preset");
        let step = (vlp.beams[1].elevation - vlp.beams[0].elevation).to_degrees();
        assert!((step - 16.0).abs() < 1e-3, "{step}");
        assert_eq!(column_length(&rings("vlp-16", 30)), Some(16));
        assert_eq!(column_length(&rings("os1-128", 512)), Some(128));
        assert_eq!(column_length(&rings("hdl-32e", 7)), Some(32));
    }

    #[test]
    fn beams_that_are_no_whole_columns_have_no_column_length() {
        assert_eq!(column_length(&[]), None);
        assert_eq!(column_length(&[0, 1, 2, 3]), None, "one column");
        assert_eq!(column_length(&[0, 1, 0, 1, 0]), None, "a part column");
        assert_eq!(column_length(&[0, 1, 0, 2]), None, "another laser order");
        assert_eq!(column_length(&[5, 5, 5]), Some(1));
    }

    #[test]
    fn a_tile_is_as_many_columns_as_lanes_take_beams() {
        let vlp = rings("vlp-16", 30);
        let tile = |subrays, lanes| LaunchTile::new(&vlp, subrays, lanes);
        assert_eq!(
            tile(1, 8),
            LaunchTile {
                columns: 8,
                beams: 128
            }
        );
        assert_eq!(
            tile(2, 8),
            LaunchTile {
                columns: 4,
                beams: 64
            }
        );
        assert_eq!(
            tile(1, 32),
            LaunchTile {
                columns: 32,
                beams: 512
            }
        );
        // A tile's row fills whole groups: 8 columns × 9 sub-rays are 9 groups of 8
        // lanes, 8 × 3 three, 4 × 6 three, 2 × 12 three.
        assert_eq!(tile(9, 8).columns, 8);
        assert_eq!(tile(3, 8).columns, 8);
        assert_eq!(tile(6, 8).columns, 4);
        assert_eq!(tile(12, 8).columns, 2);
        // A beam's own sub-rays fill whole groups of lanes: in order.
        assert_eq!(tile(8, 8), LaunchTile::IN_ORDER);
        assert_eq!(tile(16, 8), LaunchTile::IN_ORDER);
        assert_eq!(tile(1, 1), LaunchTile::IN_ORDER);
        assert_eq!(LaunchTile::new(&[0, 1, 2], 1, 8), LaunchTile::IN_ORDER);
    }
}
