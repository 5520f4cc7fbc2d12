#!/usr/bin/env python3
"""The weather figures of benches/RESULTS.md ("Weather"), reproducible.

    python scripts/weather-figures.py sweep  --bin BEAMTRACE --out DIR   # runs + DIR/weather-trends.json
    python scripts/weather-figures.py table  --out DIR                   # the Markdown tables (sweep, bench)
    python scripts/weather-figures.py plot   --out DIR --png docs/images/weather-trends.png
    python scripts/weather-figures.py frames --bin BEAMTRACE --out DIR --png docs/images/weather-frames.png
    python scripts/weather-figures.py bench  --bin BEAMTRACE --out DIR   # cost, alternated

Run from the repository root (the bundled street, scenes/street.glb, is the default
scene there). Needs numpy, plyfile and Pillow, nothing else: the trends plot is drawn
with Pillow's own font.

Each sweep point is one frame of `beamtrace run --format ply --seed 1`, at night
(`--no-sun`) unless --sun is given, of each sensor in --sensors. A point is the
medium's when its class is 13 (`weather`).
"""

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import plyfile
from PIL import Image, ImageDraw, ImageFont

WEATHER_CLASS = 13
VISIBILITIES = [20, 30, 50, 100, 200, 500, 1000]  # m; "clear" beside them
RAIN_RATES = [1, 5, 10, 25, 50, 100]  # mm/h; 0 is clear
FAR_M = 20.0  # "far" surface points: beyond this range
SENSORS = ["vlp-16", "os1-128"]


def sweep_points():
    """(tag, --weather form, axis, x): the clear frame serves both axes."""
    pts = [("clear", "clear", "both", None)]
    pts += [(f"fog{v}", f"fog:visibility={v}", "fog", v) for v in VISIBILITIES]
    pts += [(f"rain{r}", f"rain:rate={r}", "rain", r) for r in RAIN_RATES]
    return pts


def run_frame(binary, sensor, weather, out, sun, reuse=False):
    if reuse and (out / "frame_000000.ply").exists():
        return out / "frame_000000.ply"
    cmd = [binary, "run", "--sensor", sensor, "--seed", "1", "--format", "ply",
           "--no-picture", "--weather", weather, "--out", str(out)]
    if not sun:
        cmd.append("--no-sun")
    print(" ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out / "frame_000000.ply"


def median(a):
    return float(np.median(a)) if len(a) else float("nan")


def extinction(folder):
    """The frame's extinction (1/m) as the run's weather.csv gives it; 0 in clear air."""
    csv = folder / "weather.csv"
    if not csv.exists():
        return 0.0
    return float(csv.read_text().splitlines()[1].rsplit(",", 1)[1])


def frame_stats(ply):
    """What the tables show of one frame."""
    v = plyfile.PlyData.read(str(ply))["vertex"].data
    weather = v["class"] == WEATHER_CLASS
    surface = ~weather
    r = v["range"]
    return {
        "extinction_per_m": extinction(ply.parent),
        "points": int(len(v)),
        "weather_points": int(weather.sum()),
        "weather_share": float(weather.mean()) if len(v) else 0.0,
        "weather_materials": sorted(int(m) for m in np.unique(v["material"][weather])),
        "surface_points": int(surface.sum()),
        "surface_far": int((surface & (r > FAR_M)).sum()),
        "surface_beams": int(len(np.unique(v["beam"][surface]))),
        "surface_range_p95": float(np.percentile(r[surface], 95)) if surface.any() else float("nan"),
        "weather_range_median": median(r[weather]),
        "weather_range_p95": float(np.percentile(r[weather], 95)) if weather.any() else float("nan"),
        "intensity_median_surface": median(v["intensity"][surface]),
        "intensity_median_all": median(v["intensity"]),
    }


def sweep(args):
    out = Path(args.out)
    result = {"sun": args.sun, "far_m": FAR_M, "frames": []}
    for sensor in args.sensors:
        for tag, form, axis, x in sweep_points():
            ply = run_frame(args.bin, sensor, form, out / sensor / tag, args.sun, args.reuse)
            stats = frame_stats(ply)
            stats.update(sensor=sensor, tag=tag, weather=form, axis=axis, x=x)
            result["frames"].append(stats)
    (out / "weather-trends.json").write_text(json.dumps(result, indent=1))


def load(out):
    return json.loads((Path(out) / "weather-trends.json").read_text())


def pick(frames, sensor, axis):
    """The sensor's frames along one axis, clear first."""
    rows = [f for f in frames if f["sensor"] == sensor and f["axis"] in (axis, "both")]
    clear = [f for f in rows if f["axis"] == "both"]
    rest = sorted((f for f in rows if f["axis"] == axis), key=lambda f: f["x"])
    return clear + (rest[::-1] if axis == "fog" else rest)


def table(args):
    data = load(args.out)
    for axis, head in (("fog", "visibility (m)"), ("rain", "rain (mm/h)")):
        print(f"| sensor | {head} | α (1/km) | points | weather (class 13) | surface points | "
              f"surface > {data['far_m']:.0f} m | beams with a surface return | surface range p95 (m) | "
              "weather points' range, median / p95 (m) | median intensity, surface | "
              "median intensity, all |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for sensor in args.sensors:
            rows = pick(data["frames"], sensor, axis)
            clear = rows[0]
            for f in rows:
                x = "clear" if f["x"] is None else (f"{f['x']:g}")
                rel = lambda k: f"{100 * f[k] / clear[k]:.0f} %" if clear[k] else "–"
                wr = f["weather_range_median"]
                wrs = "–" if math.isnan(wr) else f"{wr:.2f} / {f['weather_range_p95']:.2f}"
                print(f"| {sensor} | {x} | {1000 * f['extinction_per_m']:.2f} | {f['points']} | {f['weather_points']} "
                      f"({100 * f['weather_share']:.1f} %) | {f['surface_points']} | "
                      f"{f['surface_far']} ({rel('surface_far')}) | "
                      f"{f['surface_beams']} ({rel('surface_beams')}) | "
                      f"{f['surface_range_p95']:.1f} | {wrs} | "
                      f"{f['intensity_median_surface']:.3f} | {f['intensity_median_all']:.3f} |")
        print()
    bench_json = Path(args.out) / "weather-bench.json"
    if bench_json.exists():
        bench_table(json.loads(bench_json.read_text()))


# --- the trends plot, drawn with Pillow ------------------------------------------------

W, H = 1400, 900
COLOURS = {"vlp-16": (31, 119, 180), "os1-128": (214, 97, 20)}
SERIES = [  # key, label, how to draw, relative to clear?
    ("surface_beams", "beams with a surface return (% of clear)", "solid", True),
    ("surface_far", f"surface points beyond {FAR_M:.0f} m (% of clear)", "long", True),
    ("intensity_median_surface", "median surface intensity (% of clear)", "dot", True),
    ("weather_share", "weather points, class 13 (% of all points)", "dashdot", False),
]


def font(size):
    return ImageFont.load_default(size=size)


def dashed(draw, pts, colour, style, width=3):
    """A polyline in one of the styles: a list of (on, off) dash lengths, or solid."""
    pattern = {"solid": None, "long": [(16, 8)], "dot": [(3, 6)],
               "dashdot": [(12, 5), (3, 5)]}[style]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if pattern is None:
            draw.line([(x0, y0), (x1, y1)], fill=colour, width=width)
            continue
        length = math.hypot(x1 - x0, y1 - y0)
        s, i = 0.0, 0
        while length > 0 and s < length:
            on, off = pattern[i % len(pattern)]
            e = min(s + on, length)
            a, b = s / length, e / length
            draw.line([(x0 + a * (x1 - x0), y0 + a * (y1 - y0)),
                       (x0 + b * (x1 - x0), y0 + b * (y1 - y0))], fill=colour, width=width)
            s, i = s + on + off, i + 1


def panel(draw, box, title, xlabel, ticks, xpos, series_rows):
    """One panel: y 0–110 %, x through `xpos` (value → 0..1)."""
    x0, y0, x1, y1 = box
    draw.rectangle(box, outline=(0, 0, 0), width=1)
    draw.text((x0, y0 - 34), title, fill=(0, 0, 0), font=font(20))
    ypix = lambda p: y1 - (y1 - y0) * p / 110.0
    for p in range(0, 111, 20):
        y = ypix(p)
        draw.line([(x0, y), (x1, y)], fill=(225, 225, 225))
        draw.text((x0 - 8, y), f"{p}", fill=(0, 0, 0), font=font(14), anchor="rm")
    for label, x in ticks:
        px = x0 + (x1 - x0) * xpos(x)
        draw.line([(px, y1), (px, y1 + 6)], fill=(0, 0, 0))
        draw.text((px, y1 + 10), label, fill=(0, 0, 0), font=font(14), anchor="mt")
    draw.text(((x0 + x1) / 2, y1 + 32), xlabel, fill=(0, 0, 0), font=font(16), anchor="mt")
    draw.text((x0 - 44, (y0 + y1) / 2), "%", fill=(0, 0, 0), font=font(16), anchor="mm")
    for sensor, rows in series_rows:
        clear = rows[0]
        for key, _, style, relative in SERIES:
            pts = []
            for f in rows:
                val = f[key] / clear[key] if relative and clear[key] else f[key]
                pts.append((x0 + (x1 - x0) * xpos(f["x"]), ypix(min(100 * val, 110))))
            dashed(draw, pts, COLOURS[sensor], style)
            for px, py in pts:
                draw.ellipse([px - 3, py - 3, px + 3, py + 3], fill=COLOURS[sensor])


def plot(args):
    data = load(args.out)
    img = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(img)
    sun = "default sun" if data["sun"] else "night (--no-sun)"
    draw.text((W / 2, 18), f"beamtrace on the bundled street, one frame per point, seed 1, {sun}",
              fill=(0, 0, 0), font=font(22), anchor="mt")
    # Fog: log visibility, clear drawn one decade-half beyond the last visibility.
    lo, hi = math.log10(VISIBILITIES[0]), math.log10(VISIBILITIES[-1]) + 0.45
    fogx = lambda v: (math.log10(v if v else 10 ** hi) - lo) / (hi - lo)
    fog_ticks = [(f"{v:g}", v) for v in VISIBILITIES] + [("clear", None)]
    rows = [(s, pick(data["frames"], s, "fog")) for s in args.sensors]
    panel(draw, (100, 110, 660, 640), "Fog: against visibility (log scale)",
          "meteorological visibility (m)", fog_ticks, fogx, rows)
    rainx = lambda r: (r or 0) / RAIN_RATES[-1]
    rain_ticks = [(f"{r:g}", r) for r in [0, 10, 25, 50, 100]]
    rows = [(s, pick(data["frames"], s, "rain")) for s in args.sensors]
    panel(draw, (800, 110, 1360, 640), "Rain: against rate (Marshall-Palmer drops)",
          "rain rate (mm/h)", rain_ticks, rainx, rows)
    # Legend: colours are sensors, line styles quantities.
    y = 730
    for i, sensor in enumerate(args.sensors):
        draw.rectangle([100 + 220 * i, y, 130 + 220 * i, y + 14], fill=COLOURS[sensor])
        draw.text((140 + 220 * i, y + 7), sensor, fill=(0, 0, 0), font=font(18), anchor="lm")
    for i, (_, label, style, _) in enumerate(SERIES):
        yy = y + 40 + 28 * i
        dashed(draw, [(100, yy), (170, yy)], (60, 60, 60), style)
        draw.text((185, yy), label, fill=(0, 0, 0), font=font(16), anchor="lm")
    draw.text((800, y + 40), "surface: every point not of class 13", fill=(0, 0, 0),
              font=font(16), anchor="lm")
    draw.text((800, y + 68), "one PLY frame per point: scripts/weather-figures.py sweep",
              fill=(0, 0, 0), font=font(16), anchor="lm")
    img.save(args.png)


# --- the two frames side by side -------------------------------------------------------

FRAMES = [
    ("fog:visibility=100", "fog, 100 m visibility"),
    ("heavy-rain", "heavy rain, 25 mm/h"),
]


def frames(args):
    out = Path(args.out)
    pictures = []
    for i, (form, label) in enumerate(FRAMES):
        png = out / f"render-{i}.png"
        cmd = [args.bin, "render", "--sensor", args.sensor, "--seed", "1", "--weather", form,
               "--colour", "class", "--size", "1280x720", "--out", str(png)]
        if not args.sun:
            cmd.append("--no-sun")
        print(" ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        pictures.append((Image.open(png).convert("RGB"), label))
    bar = 44
    w = sum(p.width for p, _ in pictures)
    h = max(p.height for p, _ in pictures) + bar
    img = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(img)
    x = 0
    for p, label in pictures:
        img.paste(p, (x, bar))
        draw.text((x + p.width / 2, bar / 2),
                  f"{args.sensor}, {label}: points coloured by class (weather = class 13)",
                  fill=(0, 0, 0), font=font(20), anchor="mm")
        x += p.width
    img.save(args.png)


# --- cost: `beamtrace bench`, clear and weather alternated -------------------------------

BENCHES = [  # sensor, cases, timed frames, warm-up, rounds
    ("vlp-16", "1808x1,1808x9", 10, 2, 3),
    ("os1-128", "256x16", 5, 1, 2),
]
BENCH_WEATHERS = ["clear", "fog", "heavy-rain"]


def gpu_ms(case):
    """GPU time of a frame: the passes' medians (refit, trace, waveform, compaction)."""
    return sum(case[k]["median_ms"] for k in ("tlas_refit", "trace", "waveform", "compaction"))


def bench(args):
    out = Path(args.out) / "bench"
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for sensor, cases, frames_, warmup, rounds in BENCHES:
        for rnd in range(rounds):
            for weather in BENCH_WEATHERS:
                js = out / f"{sensor}-{weather}-{rnd}.json"
                cmd = [args.bin, "bench", "--sensor", sensor, "--cases", cases,
                       "--frames", str(frames_), "--warmup", str(warmup), "--cpu-frames", "0",
                       "--weather", weather, "--json", str(js)]
                if not args.sun:
                    cmd.append("--no-sun")
                print(" ".join(cmd), file=sys.stderr)
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                for c in json.loads(js.read_text())["cases"]:
                    runs.append({"sensor": sensor, "weather": weather, "round": rnd,
                                 "case": f"{c['columns']}x{c['subrays']}", "gpu_ms": gpu_ms(c),
                                 "trace_ms": c["trace"]["median_ms"],
                                 "waveform_ms": c["waveform"]["median_ms"],
                                 "frame_ms": c["frame"]["median_ms"], "points": c["points"]})
    (Path(args.out) / "weather-bench.json").write_text(json.dumps(runs, indent=1))
    bench_table(runs)


def bench_table(runs):
    """Per sensor and case: each weather's medians over the rounds, and its ratio to clear."""
    print("| sensor | case | weather | GPU ms (trace + waveform + compaction + refit) | "
          "trace ms | waveform ms | host frame ms | points | GPU / clear (per round) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    keys = sorted({(r["sensor"], r["case"]) for r in runs}, key=lambda k: (k[0] != "vlp-16", k))
    for sensor, case in keys:
        sel = [r for r in runs if r["sensor"] == sensor and r["case"] == case]
        clear = {r["round"]: r for r in sel if r["weather"] == "clear"}
        for weather in BENCH_WEATHERS:
            rows = [r for r in sel if r["weather"] == weather]
            med = lambda k: float(np.median([r[k] for r in rows]))
            ratios = [r["gpu_ms"] / clear[r["round"]]["gpu_ms"] for r in rows]
            print(f"| {sensor} | {case} | {weather} | {med('gpu_ms'):.1f} | {med('trace_ms'):.1f} | "
                  f"{med('waveform_ms'):.1f} | {med('frame_ms'):.1f} | {int(med('points'))} | "
                  + ("–" if weather == "clear" else ", ".join(f"{x:.2f}×" for x in ratios)) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=["sweep", "table", "plot", "frames", "bench"])
    ap.add_argument("--bin", default="target/release/beamtrace", help="the beamtrace binary")
    ap.add_argument("--out", default="out/weather", help="folder of the runs and the JSON")
    ap.add_argument("--png", help="the picture to write (plot, frames)")
    ap.add_argument("--sensors", default=",".join(SENSORS), type=lambda s: s.split(","))
    ap.add_argument("--sensor", default="os1-128", help="frames: the sensor drawn")
    ap.add_argument("--sun", action="store_true", help="the default sun instead of night")
    ap.add_argument("--reuse", action="store_true", help="sweep: keep frames already in --out")
    args = ap.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    {"sweep": sweep, "table": table, "plot": plot, "frames": frames, "bench": bench}[args.step](args)


if __name__ == "__main__":
    main()
