//! The host CPU time a job's own threads spend — the frame loop (submission,
//! read-back, conversion, encoding, writing), the worker pool its data-parallel steps
//! run on and the packet writer — counted by the threads' CPU clocks, so that the
//! Vulkan driver's worker threads (lavapipe traces on the host's cores) are not counted
//! as host work. The worker pool is the process's (rayon's global pool): in a process
//! that runs several jobs at once, each counts the others' use of it too.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// The CPU clocks of a job's threads, each registered by the thread itself; a thread
/// that ends retires its clock (its time is kept) before it goes, so no clock of a
/// finished thread (whose id the kernel may give to another) is ever read.
#[derive(Clone, Default)]
pub struct HostThreads(Arc<Mutex<Clocks>>);

#[derive(Default)]
struct Clocks {
    live: Vec<(ThreadId, libc::clockid_t)>,
    retired_ns: u64,
}

impl HostThreads {
    /// Counts the calling thread from now on (its CPU time before now included).
    pub fn register_current(&self) {
        let Some(clock) = current_clock() else {
            return;
        };
        let id = std::thread::current().id();
        let mut c = self.lock();
        if !c.live.iter().any(|(t, _)| *t == id) {
            c.live.push((id, clock));
        }
    }

    /// Counts the threads of the process's worker pool (rayon's global pool, whose
    /// threads live as long as the process).
    pub fn register_worker_pool(&self) {
        rayon::broadcast(|_| self.register_current());
    }

    /// Stops reading the calling thread's clock, keeping the time it has run.
    pub fn retire_current(&self) {
        let id = std::thread::current().id();
        let mut c = self.lock();
        if let Some(i) = c.live.iter().position(|(t, _)| *t == id) {
            let (_, clock) = c.live.swap_remove(i);
            c.retired_ns += clock_ns(clock).unwrap_or(0);
        }
    }

    /// The CPU time of every thread registered so far (ns).
    pub fn cpu_ns(&self) -> u64 {
        let c = self.lock();
        let live: u64 = c.live.iter().filter_map(|&(_, k)| clock_ns(k)).sum();
        c.retired_ns + live
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Clocks> {
        // A thread that panicked holding the lock left the clocks whole (every update
        // is one push, remove or add).
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The calling thread's CPU clock.
fn current_clock() -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self is the calling, live thread; `clock` is a valid out pointer.
    let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
    (rc == 0).then_some(clock)
}

fn clock_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid out pointer; the clock is a live registered thread's.
    let rc = unsafe { libc::clock_gettime(clock, &mut t) };
    (rc == 0).then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

/// A job's host CPU time per frame, over its frames after the first (whose warm-up
/// — the driver compiling shaders at the first trace — is no guide).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct HostCpu {
    /// Frames counted.
    pub frames: u64,
    /// CPU time of the job's threads per frame (ms).
    pub ms_per_frame: f64,
}

/// The clocks read when the first frame was done, to count from.
pub(super) struct HostCpuMeter {
    threads: HostThreads,
    first: Option<(u64, u64)>,
    frames: u64,
}

impl HostCpuMeter {
    pub(super) fn new(threads: HostThreads) -> Self {
        HostCpuMeter {
            threads,
            first: None,
            frames: 0,
        }
    }

    /// A frame was done.
    pub(super) fn frame_done(&mut self) {
        self.frames += 1;
        if self.first.is_none() {
            self.first = Some((self.frames, self.threads.cpu_ns()));
        }
    }

    /// The time per frame since the first frame, read after the job's threads finished
    /// their work for the last (the packet writer's sends included).
    pub(super) fn finish(&self) -> Option<HostCpu> {
        let (at, ns) = self.first?;
        let frames = self.frames - at;
        (frames > 0).then(|| HostCpu {
            frames,
            ms_per_frame: (self.threads.cpu_ns() - ns) as f64 / 1e6 / frames as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn spin(d: Duration) {
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < d {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
    }

    #[test]
    fn counts_registered_threads_only_and_keeps_a_retired_threads_time() {
        let threads = HostThreads::default();
        // A thread that is not registered spins 60 ms: none of it counts.
        std::thread::spawn(|| spin(Duration::from_millis(60)))
            .join()
            .expect("spinner");
        assert_eq!(threads.cpu_ns(), 0);
        // A registered thread spins 80 ms, then retires and ends: its time stays.
        let t = threads.clone();
        std::thread::spawn(move || {
            t.register_current();
            spin(Duration::from_millis(80));
            t.retire_current();
        })
        .join()
        .expect("worker");
        let ms = threads.cpu_ns() as f64 / 1e6;
        // Wall time bounds CPU time from above; the spin runs on a core nearly all of
        // it (a loaded machine may take some of it away).
        assert!((20.0..=200.0).contains(&ms), "{ms} ms");
        // Reading again after the thread is gone gives the same (nothing reads a dead
        // thread's clock).
        assert_eq!(threads.cpu_ns() as f64 / 1e6, ms);
    }
}
