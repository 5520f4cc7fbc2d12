//! What a job holds in memory: the process's resident set and the device memory the
//! allocator hands out, sampled after the first frame (when every buffer, pipeline and
//! driver cache a frame needs exists) and at the end. A long job whose figures stay
//! flat between the two does not grow with its frames.

use crate::gpu::Context;

/// Memory in use at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUse {
    /// The process's resident set size (VmRSS in `/proc/self/status`), bytes; `None`
    /// where the system has no such file (not Linux).
    pub host_rss_bytes: Option<u64>,
    /// Device memory in live allocations (gpu-allocator's count), bytes.
    pub device_bytes: u64,
    /// Live device allocations.
    pub device_allocations: usize,
}

impl MemoryUse {
    /// What the process and `ctx`'s allocator hold now.
    pub(super) fn now(ctx: &Context) -> MemoryUse {
        let status = std::fs::read_to_string("/proc/self/status").ok();
        MemoryUse {
            host_rss_bytes: status.as_deref().and_then(vm_rss),
            device_bytes: ctx.allocated_bytes(),
            device_allocations: ctx.allocation_count(),
        }
    }

    /// As `run.json` records it.
    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "host_rss_bytes": self.host_rss_bytes,
            "device_bytes": self.device_bytes,
            "device_allocations": self.device_allocations,
        })
    }
}

/// The VmRSS line of a `/proc/PID/status` text ("VmRSS:  123456 kB"), in bytes.
fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let mut words = line.split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    // The kernel writes kB, meaning KiB (fs/proc/task_mmu.c shifts pages by 10).
    match words.next()? {
        "kB" => value.checked_mul(1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_reads_the_kernels_line_in_bytes() {
        let status = "Name:\tbeamtrace\nVmPeak:\t  900000 kB\nVmRSS:\t  123456 kB\nThreads:\t9\n";
        assert_eq!(vm_rss(status), Some(123_456 * 1024));
        assert_eq!(vm_rss("Name:\tx\n"), None, "no VmRSS line");
        assert_eq!(
            vm_rss("VmRSS:\t12 MB\n"),
            None,
            "a unit the kernel does not write"
        );
    }

    /// This process's own figure is there on Linux, and plausible: more than the
    /// test binary's code, less than the machine.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_a_resident_set() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let rss = vm_rss(&status).expect("VmRSS on Linux");
        assert!((1 << 20..1 << 40).contains(&rss), "{rss} bytes");
    }
}
