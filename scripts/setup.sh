#!/usr/bin/env bash
# beamtrace set-up: installs what a Debian 12 machine is missing to build and run
# beamtrace. Idempotent: every step checks first and skips what is present. The test
# bench (validation layers, Xvfb, tshark, Slurm, the Python readers) is
# scripts/setup-test.sh, which scripts/test.sh runs after this one.
#
#  - build tools (build-essential, pkg-config) and ca-certificates (cargo fetches crates
#    over HTTPS)
#  - shaderc's native parts (libshaderc-dev, glslang-dev, spirv-tools): build.rs links
#    them statically so shaderc never builds from source (30+ min on 2 cores)
#  - the Vulkan loader (libvulkan1; ash opens it at run time, so no libvulkan-dev) and
#    vulkaninfo (vulkan-tools), which tells whether a ray-tracing device exists
#  - python3-venv, so that the Python package installs into a virtual environment
#    (`pip install ./python`; Debian's own Python refuses packages from pip)
#  - Mesa lavapipe from bookworm-backports (Mesa >= 25: the first lavapipe with
#    ray-tracing pipelines) — skipped when a Vulkan device with ray tracing already exists,
#    so a machine with a real GPU driver is left alone
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SETUP_NAME=setup
. "$here/setup-lib.sh"

# Is there already a Vulkan device with ray-tracing pipelines (a GPU driver, or lavapipe)?
has_rt_device() {
  command -v vulkaninfo >/dev/null 2>&1 || return 1
  # Read the whole output first: with pipefail, 'vulkaninfo | grep -q' fails by SIGPIPE.
  local info
  info=$(vulkaninfo 2>/dev/null) || true
  grep -q VK_KHR_ray_tracing_pipeline <<<"$info"
}

# 1. Build tools, shader compiler libraries, the Vulkan loader and vulkaninfo.
apt_install build-essential pkg-config ca-certificates libshaderc-dev glslang-dev \
  spirv-tools libvulkan1 vulkan-tools python3-venv

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
    apt_update
    log "installing mesa-vulkan-drivers from bookworm-backports (lavapipe with ray tracing)"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      -t bookworm-backports mesa-vulkan-drivers
  else
    apt_install mesa-vulkan-drivers
  fi
  if ! has_rt_device; then
    log "still no Vulkan device with ray tracing: 'vulkaninfo --summary' shows what the loader sees"
    exit 1
  fi
fi

# 3. Rust toolchain.
if ! command -v cargo >/dev/null 2>&1; then
  log "cargo not found: install Rust (https://rustup.rs) and run this again"
  exit 1
fi
log "ready"
