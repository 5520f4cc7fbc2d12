#!/usr/bin/env bash
# beamtrace set-up: installs what a Debian 12 machine is missing to build beamtrace and to
# run Vulkan ray tracing. Idempotent: every step checks first and skips what is present.
#
#  - Vulkan loader (libvulkan1) and headers, vulkaninfo, Khronos validation layers
#  - shaderc's native parts (libshaderc-dev pulls glslang-dev and SPIRV-Tools): build.rs
#    links them statically so shaderc never builds from source (30+ min on 2 cores)
#  - Mesa lavapipe from bookworm-backports (Mesa >= 25: the first lavapipe with
#    ray-tracing pipelines) — skipped when a Vulkan device with ray tracing already exists,
#    so a machine with a real GPU driver is left alone
#  - Python pypcd4, plyfile and Open3D (open3d-cpu; its wheel needs libusb-1.0-0) in a
#    private venv (target/pyenv) for the independent PCD and PLY reader tests, and
#    ouster-sdk 1.0 and velodyne-decoder 3 for the Ouster and Velodyne packet tests,
#    laspy 2 for the LAS tests, mcap 1 and mcap-ros2-support for the MCAP tests, and
#    Ray, whose local cluster runs the shard recipe in the tests
#  - tshark, which reads the pcap files back in those tests
#  - Slurm (slurm-wlm, munge), whose one-node cluster runs the Slurm shard recipe in the
#    tests
#  - Xvfb (xvfb, xauth): a virtual X display for the tests of the view window
set -euo pipefail

log() { printf '[setup] %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    log "not root and no sudo: install the packages listed in scripts/setup.sh by hand"; fi
fi

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

apt_updated=0
apt_install() {
  local missing=()
  for p in "$@"; do have_pkg "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ $apt_updated -eq 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Is there already a Vulkan device with ray-tracing pipelines (a GPU driver, or lavapipe)?
has_rt_device() {
  command -v vulkaninfo >/dev/null 2>&1 || return 1
  # Read the whole output first: with pipefail, 'vulkaninfo | grep -q' fails by SIGPIPE.
  local info
  info=$(vulkaninfo 2>/dev/null) || true
  grep -q VK_KHR_ray_tracing_pipeline <<<"$info"
}

if ! command -v apt-get >/dev/null 2>&1; then
  log "no apt-get: this script knows Debian 12; install a Vulkan loader, shaderc, glslang and a ray-tracing Vulkan driver by hand"
  exit 1
fi

# 1. Build tools and shader compiler libraries.
apt_install build-essential pkg-config libshaderc-dev glslang-dev spirv-tools \
  libvulkan1 libvulkan-dev vulkan-tools vulkan-validationlayers python3-venv ca-certificates \
  libusb-1.0-0

# 2. A ray-tracing Vulkan driver: lavapipe from bookworm-backports unless one exists.
if has_rt_device; then
  log "a Vulkan device with VK_KHR_ray_tracing_pipeline exists: driver left as it is"
else
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [ "$codename" = "bookworm" ]; then
    list=/etc/apt/sources.list.d/bookworm-backports.list
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding bookworm-backports"
      echo 'deb http://deb.debian.org/debian bookworm-backports main' | $SUDO tee "$list" >/dev/null
      apt_updated=0
    fi
    if [ $apt_updated -eq 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
    log "installing mesa-vulkan-drivers from bookworm-backports (lavapipe with ray tracing)"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers
  else
    apt_install mesa-vulkan-drivers
  fi
  if ! has_rt_device; then
    log "still no Vulkan device with ray tracing: 'vulkaninfo --summary' shows what the loader sees"
    exit 1
  fi
fi

# 3. A virtual X display for the window tests (tests/cli/view.rs runs `beamtrace view`
#    under xvfb-run).
apt_install xvfb xauth

# tshark: the packet tests read beamtrace's pcap files back with Wireshark's dissectors.
apt_install tshark

# Slurm and munge: the shard recipe for Slurm job arrays runs on a one-node cluster the
# tests start (tests/support/slurm_local.sh).
apt_install slurm-wlm munge

# 4. Independent PCD and PLY readers for the tests (pypcd4, plyfile, Open3D), in a venv
#    of their own. Open3D's CPU wheel is about 105 MB.
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/target/pyenv"
if ! "$venv/bin/python" -c 'import pypcd4, plyfile' >/dev/null 2>&1; then
  log "creating $venv with pypcd4 and plyfile"
  mkdir -p "$root/target"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pypcd4 plyfile
fi
if ! "$venv/bin/python" -c 'import open3d' >/dev/null 2>&1; then
  log "installing open3d-cpu into $venv"
  "$venv/bin/pip" install -q open3d-cpu
fi
if ! "$venv/bin/python" -c 'import ouster.sdk.core' >/dev/null 2>&1; then
  log "installing ouster-sdk into $venv"
  "$venv/bin/pip" install -q 'ouster-sdk>=1.0,<1.1'
fi
if ! "$venv/bin/python" -c 'import velodyne_decoder' >/dev/null 2>&1; then
  log "installing velodyne-decoder into $venv"
  "$venv/bin/pip" install -q 'velodyne-decoder>=3.1,<4'
fi
# Ray: the shard recipe (docs/recipes/ray_shards.py) is tested on Ray's local cluster.
if ! "$venv/bin/python" -c 'import ray' >/dev/null 2>&1; then
  log "installing ray into $venv"
  "$venv/bin/pip" install -q 'ray>=2.40,<3'
fi
if ! "$venv/bin/python" -c 'import laspy' >/dev/null 2>&1; then
  log "installing laspy into $venv"
  "$venv/bin/pip" install -q 'laspy>=2.5,<3'
fi
# The benchmark suite's JSON is checked against benches/suite.schema.json by jsonschema.
if ! "$venv/bin/python" -c 'import jsonschema' >/dev/null 2>&1; then
  log "installing jsonschema into $venv"
  "$venv/bin/pip" install -q 'jsonschema>=4.18,<5'
fi
if ! "$venv/bin/python" -c 'import mcap, mcap_ros2' >/dev/null 2>&1; then
  log "installing mcap and mcap-ros2-support into $venv"
  "$venv/bin/pip" install -q 'mcap>=1.2,<2' 'mcap-ros2-support>=0.5,<1'
fi

# 5. Rust toolchain.
if ! command -v cargo >/dev/null 2>&1; then
  log "cargo not found: install Rust (https://rustup.rs) and run this again"
  exit 1
fi
log "ready"
