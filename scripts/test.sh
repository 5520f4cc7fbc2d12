#!/usr/bin/env bash
# Set up what is missing (scripts/setup.sh, then the test bench: scripts/setup-test.sh)
# and run every check: formatting, clippy, the API docs (no broken links), and all tests
# (GPU tests run on whatever ray-tracing Vulkan device exists — lavapipe on a machine
# without a GPU — with the validation layer on).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
scripts/setup-test.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
# The independent reader tests use the Python venv made by setup-test.sh.
export BEAMTRACE_PYTHON="$root/target/pyenv/bin/python"
# The OSMP FMU's shared library (fmu/, a workspace member outside the default
# members), which `beamtrace fmu` packages from beside the binary and the FMU test
# (tests/cli/osi.rs) runs in FMPy.
# (clippy --workspace above has linted it.)
cargo build -p beamtrace-fmu
cargo test --all-targets "$@"
# The Python package (python/), built with the dev profile so that it reuses the tests'
# build of the library, then its tests, which compare its frames with the CLI's files.
venv="$root/target/pyenv"
# (the venv's maturin, found on PATH by its build hook, builds it without a download)
PATH="$venv/bin:$PATH" MATURIN_PEP517_ARGS="--profile dev" \
  "$venv/bin/pip" install -q --no-build-isolation ./python
"$venv/bin/python" -m pytest -q -c python/tests/pytest.ini --rootdir python/tests python/tests
