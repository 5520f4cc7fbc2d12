//! What a sensor's frames need in memory, checked against the device's heaps and the
//! host's free memory before any of it is allocated.
//!
//! A sensor set-up allocates its beams, sub-rays, return records, echoes and echo counts
//! (and, binned, a batch's range bins) on the device (`slot::SensorBuffers`), and each frame slot a host-visible point
//! buffer; collecting a frame reads its points into host memory and the job turns them
//! into a point cloud (twice with `--world`). The sizes follow from the
//! [`FrameExtent`] counts and the GPU structs alone, so a sensor whose frames cannot
//! fit is refused with the numbers instead of failing in an allocation (or aborting the
//! process) half-way through.

use super::frame::FRAMES_IN_FLIGHT;
use super::gpu_types::{GpuBeam, GpuEcho, GpuPoint, GpuRecord, GpuSubRay};
use super::shaders::WaveformBuild;
use super::SimError;
use crate::gpu::MemoryHeap;
use crate::model::FrameExtent;
use std::mem::size_of;

/// One buffer (or host copy) of a frame: what it holds and its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub what: &'static str,
    pub bytes: u64,
    /// Bound as a storage-buffer descriptor, so within the device's largest binding
    /// (the records and points are reached by device address instead).
    pub bound: bool,
}

/// The memory a sensor set-up and its frames need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Device-local buffers (each one storage buffer).
    pub device: Vec<Part>,
    /// Host-visible buffers the device writes (the frame slots' points).
    pub host_visible: Vec<Part>,
    /// Host memory of a collected frame (points read back, point clouds).
    pub host: Vec<Part>,
}

fn bytes(count: u64, size: usize) -> u64 {
    count.saturating_mul(size as u64)
}

fn total(parts: &[Part]) -> u64 {
    parts.iter().fold(0u64, |t, p| t.saturating_add(p.bytes))
}

impl MemoryNeed {
    /// The memory of frames of `e`: the same sizes `SensorBuffers` and the frame slots
    /// allocate.
    pub fn of(e: &FrameExtent) -> MemoryNeed {
        let cloud = bytes(e.echoes(), size_of::<crate::model::Point>());
        // The slots hold the GPU's point records or the host's points, as read.
        let slot_point = size_of::<GpuPoint>().max(size_of::<crate::model::Point>());
        let points = bytes(e.echoes(), slot_point);
        let mut need = MemoryNeed {
            device: vec![
                Part {
                    what: "sub-ray records",
                    bytes: bytes(e.records(), size_of::<GpuRecord>()),
                    bound: false,
                },
                Part {
                    what: "echoes",
                    bytes: bytes(e.echoes(), size_of::<GpuEcho>()),
                    bound: true,
                },
                Part {
                    what: "beams",
                    bytes: bytes(e.beams, size_of::<GpuBeam>()),
                    bound: true,
                },
                Part {
                    what: "echo counts",
                    bytes: bytes(e.beams, 4),
                    bound: true,
                },
                Part {
                    what: "compaction group sums",
                    bytes: bytes(super::slot::compact_groups(e.beams), 4),
                    bound: true,
                },
                Part {
                    what: "sub-rays",
                    bytes: bytes(e.subrays, size_of::<GpuSubRay>()),
                    bound: true,
                },
            ],
            host_visible: vec![Part {
                what: "points of the frames in flight",
                bytes: points.saturating_mul(FRAMES_IN_FLIGHT as u64),
                bound: false,
            }],
            host: vec![
                Part {
                    what: "points read back",
                    bytes: points,
                    bound: false,
                },
                Part {
                    what: "point clouds",
                    bytes: cloud.saturating_mul(2),
                    bound: false,
                },
            ],
        };
        if e.binned() {
            need.device.extend([
                Part {
                    what: "range bins of the binned waveform",
                    bytes: super::launch::bin_bytes(e.beams),
                    bound: false,
                },
                Part {
                    what: "ambient sums of the binned waveform",
                    bytes: bytes(super::launch::batch_capacity(e.beams), 4),
                    bound: false,
                },
            ]);
        }
        need
    }

    /// [`of`](Self::of), with the buffers of waveform build `build` beyond those every
    /// build has: the ordered build's record order.
    pub(super) fn of_build(e: &FrameExtent, build: WaveformBuild) -> MemoryNeed {
        let mut need = MemoryNeed::of(e);
        if let WaveformBuild::Ordered(_) = build {
            need.device.push(Part {
                what: "record order",
                bytes: super::slot::order_bytes(e.beams, e.subrays * e.slots),
                bound: false,
            });
        }
        need
    }

    /// Refuses the need when a bound buffer exceeds `max_buffer` (the largest storage
    /// buffer the device binds), the device buffers its largest device-local heap, the
    /// host-visible ones its host-visible heaps, or the host's part (and, where the
    /// device's memory is the host's, all of it) `host_available`.
    pub fn check(
        &self,
        heaps: &[MemoryHeap],
        max_buffer: u64,
        host_available: Option<u64>,
    ) -> Result<(), SimError> {
        let bound = |p: &&Part| p.bound && p.bytes > max_buffer;
        if let Some(p) = self.device.iter().find(bound) {
            return Err(too_big(
                &format!("{} in one buffer", size(p.bytes)),
                p.what,
                &format!("the device binds at most {} per buffer", size(max_buffer)),
            ));
        }
        let largest =
            |f: &dyn Fn(&MemoryHeap) -> bool| heaps.iter().filter(|h| f(h)).map(|h| h.size).max();
        let device = total(&self.device);
        if let Some(heap) = largest(&|h| h.device_local) {
            if device > heap {
                return Err(too_big(
                    &format!("{} of device memory", size(device)),
                    &breakdown(&self.device),
                    &format!("the device has {}", size(heap)),
                ));
            }
        }
        let visible = total(&self.host_visible);
        if let Some(heap) = largest(&|h| h.host_visible) {
            if visible > heap {
                return Err(too_big(
                    &format!("{} of host-visible device memory", size(visible)),
                    &breakdown(&self.host_visible),
                    &format!("the device has {}", size(heap)),
                ));
            }
        }
        self.check_host(heaps, host_available)
    }

    /// The host's share against its free memory; on a device whose device-local memory
    /// is host-visible (a CPU driver, an integrated GPU) every buffer is host memory.
    fn check_host(&self, heaps: &[MemoryHeap], available: Option<u64>) -> Result<(), SimError> {
        let Some(available) = available else {
            return Ok(());
        };
        let shared = heaps.iter().any(|h| h.device_local && h.host_visible);
        let mut parts = self.host.clone();
        parts.extend(&self.host_visible);
        if shared {
            parts.extend(&self.device);
        }
        let need = total(&parts);
        if need <= available {
            return Ok(());
        }
        Err(too_big(
            &format!("{} of host memory", size(need)),
            &breakdown(&parts),
            &format!("{} is free", size(available)),
        ))
    }
}

fn too_big(need: &str, what: &str, have: &str) -> SimError {
    SimError::Memory(format!(
        "this sensor needs {need} per frame ({what}); {have}: use fewer beams (columns, \
         lines or points), sub-rays or returns"
    ))
}

/// "sub-ray records 1.8 TB, echoes 12 GB, …": the parts of 1 MB or more.
fn breakdown(parts: &[Part]) -> String {
    let big: Vec<String> = parts
        .iter()
        .filter(|p| p.bytes >= 1_000_000)
        .map(|p| format!("{} {}", p.what, size(p.bytes)))
        .collect();
    if big.is_empty() {
        "buffers under 1 MB each".into()
    } else {
        big.join(", ")
    }
}

/// Bytes in decimal units with three significant digits: 1.92 TB, 24.0 GB, 512 B.
pub fn size(b: u64) -> String {
    const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
    if b < 1000 {
        return format!("{b} B");
    }
    let mut v = b as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1000.0 {
            break;
        }
        v /= 1000.0;
        unit = u;
    }
    match v {
        v if v < 10.0 => format!("{v:.2} {unit}"),
        v if v < 100.0 => format!("{v:.1} {unit}"),
        v => format!("{v:.0} {unit}"),
    }
}

/// Checks frames of `extent` against `ctx`'s heaps, its largest storage buffer and the
/// host's free memory; nothing is allocated.
pub fn check_frame_memory(ctx: &crate::gpu::Context, extent: &FrameExtent) -> Result<(), SimError> {
    check_need(ctx, MemoryNeed::of(extent))
}

/// Checks `need` against `ctx`'s heaps, its largest storage buffer and the host's free
/// memory.
pub(super) fn check_need(ctx: &crate::gpu::Context, need: MemoryNeed) -> Result<(), SimError> {
    need.check(
        &ctx.memory_heaps,
        ctx.limits.max_storage_buffer_range,
        host_available(),
    )
}

/// The host's free memory: `MemAvailable` of /proc/meminfo (Linux), else unknown.
pub fn host_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// `MemAvailable:  23090212 kB` → bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    fn heap(size: u64, device_local: bool, host_visible: bool) -> MemoryHeap {
        MemoryHeap {
            size,
            device_local,
            host_visible,
        }
    }

    fn extent(beams: u64, subrays: u64) -> FrameExtent {
        FrameExtent {
            beams,
            subrays,
            slots: 1,
            max_returns: 2,
        }
    }

    #[test]
    fn the_ordered_build_needs_its_record_order_too() {
        // 262 144 beams of 192 records: a word of counts and 96 of slots (two 16-bit
        // slots per word) per beam.
        let e = FrameExtent {
            slots: 3,
            ..extent(262_144, 64)
        };
        let plain = MemoryNeed::of(&e);
        assert_eq!(
            MemoryNeed::of_build(&e, WaveformBuild::PerThread(256)),
            plain
        );
        let ordered = MemoryNeed::of_build(&e, WaveformBuild::Ordered(256));
        assert_eq!(ordered.device.len(), plain.device.len() + 1);
        let order = ordered.device.last().expect("the order part");
        assert_eq!(order.bytes, 262_144 * 97 * 4);
        assert!(!order.bound, "reached by address");
    }

    #[test]
    fn needs_are_the_counts_times_the_gpu_structs() {
        // Counted by hand from the buffers SensorBuffers allocates.
        let e = FrameExtent {
            beams: 1000,
            subrays: 9,
            slots: 3,
            max_returns: 2,
        };
        let need = MemoryNeed::of(&e);
        let get = |what: &str| need.device.iter().find(|p| p.what == what).unwrap().bytes;
        assert_eq!(
            get("sub-ray records"),
            27_000 * size_of::<GpuRecord>() as u64
        );
        assert_eq!(get("echoes"), 2000 * size_of::<GpuEcho>() as u64);
        assert_eq!(get("echo counts"), 4000);
        let slot_point = size_of::<GpuPoint>().max(size_of::<crate::model::Point>());
        assert_eq!(need.host_visible[0].bytes, 2 * 2000 * slot_point as u64);
    }

    #[test]
    fn a_huge_sensor_is_refused_with_its_numbers() {
        // 16 lasers × 4 294 967 295 columns × 9 sub-rays: what `columns: 4294967295`
        // asked of a VLP-16 before columns had a bound.
        let need = MemoryNeed::of(&extent(16 * u64::from(u32::MAX), 9));
        let heaps = [heap(24 * GB, true, true)];
        let e = need.check(&heaps, u64::MAX, None).unwrap_err().to_string();
        assert!(
            e.contains("of device memory") && e.contains("the device has 24.0 GB"),
            "{e}"
        );
        assert!(e.contains("sub-ray records") && e.contains("TB"), "{e}");
    }

    #[test]
    fn the_largest_buffer_and_the_host_are_checked_too() {
        let need = MemoryNeed::of(&extent(1_000_000, 64));
        let records = need.device[0].bytes;
        let discrete = [heap(80 * GB, true, false), heap(64 * GB, false, true)];
        assert!(need.check(&discrete, u64::MAX, Some(100 * GB)).is_ok());
        // The records are reached by address; the other device buffers are bound.
        let widest = need.device[1..].iter().map(|p| p.bytes).max().unwrap();
        assert!(widest < records);
        assert!(need.check(&discrete, widest, None).is_ok());
        let e = need.check(&discrete, widest - 1, None).unwrap_err();
        assert!(e.to_string().contains("in one buffer"), "{e}");
        // A CPU driver's device memory is the host's: all of it must be free there.
        let cpu = [heap(80 * GB, true, true)];
        let e = need.check(&cpu, u64::MAX, Some(records / 2)).unwrap_err();
        assert!(e.to_string().contains("of host memory"), "{e}");
        // A discrete GPU's device buffers are not host memory.
        assert!(need.check(&discrete, u64::MAX, Some(records / 2)).is_ok());
    }

    #[test]
    fn sizes_read_like_a_person_writes_them() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1_924_145_348_160), "1.92 TB");
        assert_eq!(size(25_276_063_744), "25.3 GB");
        assert_eq!(size(u64::MAX), "18.4 EB");
    }

    #[test]
    fn mem_available_is_read_in_bytes() {
        let m = "MemTotal:  32000000 kB\nMemFree: 1 kB\nMemAvailable:   23090212 kB\n";
        assert_eq!(mem_available(m), Some(23_090_212 * 1024));
        assert_eq!(mem_available("MemFree: 1 kB\n"), None);
    }
}
