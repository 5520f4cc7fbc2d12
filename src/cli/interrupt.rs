//! SIGINT and SIGTERM end a command at once, leaving no partial file behind.
//!
//! A frame can take seconds on the GPU, and a blocked fence wait cannot be cancelled, so
//! the handler does not wait for the frame loop: it removes every temporary file being
//! written (`output::abandon_writes_before_exit`, which also stops any further rename
//! into place), says how far the run got and exits with the shell's code for the signal
//! (130 for SIGINT, 143 for SIGTERM). Files already renamed into place are complete; a
//! run's MCAP bag is finished with the frames it holds as `run.partial.mcap`
//! (`output::finish_bags_before_exit`).

use anyhow::{Context as _, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicU64, Ordering};

/// Frames whose files are complete; `u64::MAX` while no frame job runs.
static FRAMES_DONE: AtomicU64 = AtomicU64::new(u64::MAX);

/// Starts the thread that handles SIGINT and SIGTERM for the rest of the process.
pub(super) fn install() -> Result<()> {
    let mut signals =
        Signals::new([SIGINT, SIGTERM]).context("cannot install the SIGINT/SIGTERM handler")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                end(signal);
            }
        })
        .context("cannot start the signal thread")?;
    Ok(())
}

/// Records that the files of `frames` frames are complete (for the message on a signal).
pub(super) fn frames_done(frames: u64) {
    FRAMES_DONE.store(frames, Ordering::SeqCst);
}

fn end(signal: i32) -> ! {
    let removed = beamtrace::output::abandon_writes_before_exit();
    let name = if signal == SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    let mut msg = format!("\ninterrupted by {name}");
    match FRAMES_DONE.load(Ordering::SeqCst) {
        u64::MAX => {}
        frames => msg += &format!(" after {frames} frame(s); their files are complete"),
    }
    if removed > 0 {
        msg += &format!("; {removed} partial file(s) removed");
    }
    for bag in beamtrace::output::finish_bags_before_exit(&format!("interrupted by {name}")) {
        msg += &format!("; their clouds are in {}, marked partial", bag.display());
    }
    eprintln!("{msg}");
    // SAFETY: _exit ends the process without running exit handlers, which is the point:
    // the Vulkan driver's threads may still be working, and its exit-time destructors
    // must not race them. Every message was written to unbuffered stderr above.
    unsafe { libc::_exit(128 + signal) }
}
