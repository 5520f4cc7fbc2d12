//! The live view's scene clock: which frame of the scene's motion is due when.
//!
//! A real sensor does not wait for the simulator: frame k of a 10 Hz sensor shows the
//! scene as it is k/10 s into the drive. So the window, by default, keeps the scene's
//! time with the wall clock: a frame that falls due while another is simulated is
//! skipped, and while the next one is not yet due the last one is drawn again (the
//! camera stays live). `--every-frame` simulates each frame in turn instead, slower or
//! faster than real time.

use std::time::{Duration, Instant};

/// What the view simulates next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Frame `n` (at or after the next one; later ones skip those in between).
    Frame(u32),
    /// Nothing yet: the next frame falls due after this long.
    Wait(Duration),
}

/// Frames due at wall-clock times, for a sensor of `rate` frames per second.
#[derive(Debug, Clone)]
pub struct SceneClock {
    rate: f64,
    /// The wall time and frame number the clock was set at: frame `f0 + k` is due
    /// `k / rate` seconds after `t0`.
    anchor: Option<(Instant, u32)>,
}

impl SceneClock {
    pub fn new(rate: f32) -> SceneClock {
        SceneClock {
            rate: f64::from(rate),
            anchor: None,
        }
    }

    /// Forgets the anchor (after a pause, a step, a sensor of another rate): the next
    /// frame is due at once and sets the clock again.
    pub fn restart(&mut self, rate: f32) {
        *self = SceneClock::new(rate);
    }

    /// The frame to simulate at `now`, `next` being the one after the last simulated.
    pub fn due(&mut self, now: Instant, next: u32) -> Due {
        let Some((t0, f0)) = self.anchor else {
            self.anchor = Some((now, next));
            return Due::Frame(next);
        };
        let periods = now.saturating_duration_since(t0).as_secs_f64() * self.rate;
        // Frames due so far, counted from the anchor; a u32 frame counter wraps after
        // 13 years at 10 Hz, the clock with it.
        let due = f0.wrapping_add(periods.floor().min(f64::from(u32::MAX)) as u32);
        // `due` at or past `next` (in wrapping order): simulate it.
        let ahead = next.wrapping_sub(due);
        if ahead == 0 || ahead > u32::MAX / 2 {
            return Due::Frame(due);
        }
        // (Saturating: rounding may put `next`'s time a nanosecond before now.)
        let at = Duration::from_secs_f64(f64::from(next.wrapping_sub(f0)) / self.rate);
        Due::Wait(at.saturating_sub(now.saturating_duration_since(t0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_first_frame_is_due_at_once_and_sets_the_clock() {
        let t0 = Instant::now();
        let mut clock = SceneClock::new(10.0);
        assert_eq!(clock.due(t0, 7), Due::Frame(7));
        // 10 Hz: frame 8 is due 100 ms later.
        assert_eq!(clock.due(t0 + ms(40), 8), Due::Wait(ms(60)));
        assert_eq!(clock.due(t0 + ms(100), 8), Due::Frame(8));
    }

    #[test]
    fn frames_that_fell_due_during_a_slow_one_are_skipped() {
        let t0 = Instant::now();
        let mut clock = SceneClock::new(20.0);
        assert_eq!(clock.due(t0, 0), Due::Frame(0));
        // A frame took 230 ms: at 20 Hz frames 1 to 4 fell due meanwhile; 4 is the
        // scene as it is now, and the scene's time stays within a period of the wall's.
        assert_eq!(clock.due(t0 + ms(230), 1), Due::Frame(4));
        // Frame 5 falls due at 250 ms.
        assert_eq!(clock.due(t0 + ms(240), 5), Due::Wait(ms(10)));
    }

    #[test]
    fn a_restart_sets_the_clock_again_at_the_next_frame() {
        let t0 = Instant::now();
        let mut clock = SceneClock::new(10.0);
        clock.due(t0, 0);
        // Paused for 5 s at frame 3: resuming goes on from frame 3, not 50.
        clock.restart(10.0);
        assert_eq!(clock.due(t0 + ms(5000), 3), Due::Frame(3));
        assert_eq!(clock.due(t0 + ms(5150), 4), Due::Frame(4));
        // A sensor at 20 Hz from then on.
        clock.restart(20.0);
        assert_eq!(clock.due(t0 + ms(6000), 5), Due::Frame(5));
        assert_eq!(clock.due(t0 + ms(6120), 6), Due::Frame(7));
    }
}
