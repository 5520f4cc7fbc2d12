#!/usr/bin/env bash
# Quick start: set up what is missing to build and run (scripts/setup.sh; never the test
# bench of scripts/setup-test.sh), build, and run beamtrace's main job on the bundled
# default scene and sensor. Extra arguments go to `beamtrace run`.
#   scripts/run.sh                       -> out/frame_000000.pcd + out/frame_000000.png
#   scripts/run.sh --sensor vlp-16 --frames 10 --overwrite   (out/ holds the last run)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
cargo build --release
exec target/release/beamtrace run "$@"
