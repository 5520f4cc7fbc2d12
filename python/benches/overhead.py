"""The Python API's own cost per frame, measured in one run on one simulator:
``Simulator.frames`` (frames as NumPy arrays, two in flight) against the same frames
stepped in Rust alone (the session's points and records, no Python objects), rounds
alternated so both see the same machine. Run from the repository root:

    python python/benches/overhead.py [--sensor vlp-16] [--frames 200] [--rounds 3] [--full]

Prints both times per frame (median over rounds), the overhead per frame in ms and
as a share of the frame, and how many frames/s each gives.
"""

import argparse
import statistics
import time

import beamtrace


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
        python, rust = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _t, _frame in sim.frames(args.frames, t=0.0):
                pass
            python.append((time.perf_counter() - start) / args.frames)
            rust.append(native.native_frames(0.0, args.frames, organized) / args.frames)
        device = sim.device
    p, r = statistics.median(python), statistics.median(rust)
    kind = "with sub-rays" if args.full else "thin"
    print(f"{args.sensor} {kind} on {device}, {args.frames} frames × {args.rounds} rounds")
    print(f"  Python API   {p * 1e3:8.2f} ms/frame  {1 / p:7.1f} frames/s")
    print(f"  Rust alone   {r * 1e3:8.2f} ms/frame  {1 / r:7.1f} frames/s")
    print(f"  overhead     {(p - r) * 1e3:8.3f} ms/frame  ({(p - r) / r * 100:.1f} % of the frame)")


if __name__ == "__main__":
    main()
