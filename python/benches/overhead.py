"""The Python API's own cost per frame, measured in one run on one simulator:
``Simulator.frames`` (frames as NumPy arrays, two in flight) against the same frames
stepped in Rust alone (the session's points and records, no Python objects), rounds
alternated so both see the same machine. Run from the repository root:

    python python/benches/overhead.py [--sensor vlp-16] [--frames 200] [--rounds 3] [--full]

Prints both times per frame (median and fastest round), and the overhead per frame:
the median of the rounds' differences, and fastest against fastest as a share of the
frame (on a busy machine the fastest rounds are the least disturbed).
"""

import argparse
import statistics
import time

import beamtrace


class TimedSteps:
    """The native session with the time spent in its `step` counted: what `frames`
    spends outside it is the Python side's own work (the arrays' views, the
    iterator), measured apart from the machine's load on the GPU work."""

    def __init__(self, native):
        self.native, self.inside = native, 0.0

    def step(self, *args):
        start = time.perf_counter()
        try:
            return self.native.step(*args)
        finally:
            self.inside += time.perf_counter() - start

    def __getattr__(self, name):
        return getattr(self.native, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sensor", default="vlp-16")
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="the sensor's sub-rays (default: thin)")
    args = ap.parse_args()
    with beamtrace.Simulator(sensor=args.sensor, thin=not args.full) as sim:
        native = sim._native
        organized = native.organized_by_default()
        sim.frame()  # the first frame compiles what the driver compiles lazily
        python, rust, outside = [], [], []
        for _ in range(args.rounds):
            timed = sim._native = TimedSteps(native)
            start = time.perf_counter()
            for _t, _frame in sim.frames(args.frames, t=0.0):
                pass
            took = time.perf_counter() - start
            sim._native = native
            python.append(took / args.frames)
            outside.append((took - timed.inside) / args.frames)
            rust.append(native.native_frames(0.0, args.frames, organized) / args.frames)
        device = sim.device
    kind = "with sub-rays" if args.full else "thin"
    print(f"{args.sensor} {kind} on {device}, {args.frames} frames × {args.rounds} rounds")
    print("  ms per frame   median     min")
    for name, times in (("Python API", python), ("Rust alone", rust)):
        print(f"  {name:12} {statistics.median(times) * 1e3:8.2f} {min(times) * 1e3:8.2f}")
    # Each round's pair ran back to back; the fastest rounds are the least disturbed.
    pairs = sorted(p - r for p, r in zip(python, rust))
    best = min(python) - min(rust)
    print(f"  overhead     {statistics.median(pairs) * 1e3:8.3f} ms (median of the rounds' "
          f"differences), {best * 1e3:.3f} ms (min − min) = "
          f"{best / min(rust) * 100:.1f} % of the frame")
    own = statistics.median(outside)
    print(f"  Python's own work outside the native step: {own * 1e3:.3f} ms per frame "
          f"({own / statistics.median(rust) * 100:.2f} % of the frame)")

if __name__ == "__main__":
    main()
