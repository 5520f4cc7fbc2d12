#!/usr/bin/env bash
# The test bench, on top of scripts/setup.sh (run that first; scripts/test.sh runs
# both): what the tests use beyond building and running beamtrace. Idempotent: every
# step checks first and skips what is present. scripts/run.sh never runs it.
#
#  - the Khronos validation layers: the GPU tests run with validation on
#  - Xvfb (xvfb, xauth): a virtual X display for the tests of the view window
#  - tshark, which reads the pcap files back in the packet tests
#  - Slurm (slurm-wlm, munge), whose one-node cluster runs the Slurm shard recipe in the
#    tests (tests/support/slurm_local.sh)
#  - Python osi-python and asam-osi-utilities (ASAM's OSI bindings and trace tools) and
#    FMPy (an FMI master) for the OSI and FMU tests
#  - Python pypcd4, plyfile and Open3D (open3d-cpu; its wheel links libusb-1.0-0 and
#    libEGL, libegl1, which a minimal Debian lacks) in a private venv (target/pyenv)
#    for the independent PCD and PLY reader tests, and ouster-sdk 1.0 and
#    velodyne-decoder 3 for the Ouster and Velodyne packet tests, hydra4 for Hesai's,
#    py-livox2 (Livox SDK2's own library) as the host of the Livox device (pynmea2 1.19 for the
#    NMEA sentences of the Velodyne position packets), dpkt 1.9 to write a
#    capture beamtrace's view plays (tests/support/write_velodyne_pcap.py), laspy 2 for the LAS
#    tests, mcap 1 and mcap-ros2-support for the MCAP tests, jsonschema for the
#    benchmark suite's JSON, Ray, whose local cluster runs the shard recipe in the
#    tests, and maturin and pytest, which build and test the Python package; Eclipse
#    Cyclone DDS's Python binding (its wheel bundles the C library), websockets and
#    rosbags for the live topics' tests (an independent DDS subscriber, a Foxglove
#    WebSocket client, a CDR decoder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SETUP_NAME=setup-test
. "$here/setup-lib.sh"

# 1. Debian packages of the test bench.
apt_install vulkan-validationlayers xvfb xauth tshark slurm-wlm munge python3-venv \
  libusb-1.0-0 libegl1

# 2. Independent readers and the shard recipes' schedulers, in a venv of their own.
#    Open3D's CPU wheel is about 105 MB.
root=$(cd "$here/.." && pwd)
venv="$root/target/pyenv"
# pip_install MODULES SPEC...: installs SPECs unless python can import every MODULE.
pip_install() {
  local modules=$1
  shift
  "$venv/bin/python" -c "import $modules" >/dev/null 2>&1 && return 0
  log "installing $* into $venv"
  "$venv/bin/pip" install -q "$@"
}
if [ ! -x "$venv/bin/pip" ]; then
  log "creating $venv"
  mkdir -p "$root/target"
  python3 -m venv "$venv"
fi
pip_install "pypcd4, plyfile" pypcd4 plyfile
pip_install open3d open3d-cpu
# The dataset layouts (run --dataset) are read by Open3D-ML's KITTI and SemanticKITTI
# datasets (inside the open3d wheel; they import scikit-learn, addict and tqdm) and by
# pykitti's odometry loader (which imports OpenCV).
pip_install "sklearn, addict, tqdm" 'scikit-learn>=1.3,<2' 'addict>=2.4,<3' 'tqdm>=4.60,<5'
pip_install "pykitti, cv2" 'pykitti>=0.3.1,<0.4' 'opencv-python-headless>=4.8,<5'
pip_install ouster.sdk.core 'ouster-sdk>=1.0,<1.1'
pip_install velodyne_decoder 'velodyne-decoder>=3.1,<4'
# Hesai's PandarXT32 packets are decoded by hydra4 (MapIV's Hesai decoder).
pip_install hydra4 'hydra4>=0.2,<0.3'
# Livox SDK2 itself (the py-livox2 wheel ships Livox's liblivox_lidar_sdk_shared.so)
# is the host of the simulated Mid-360 in the stream tests.
pip_install livox_sdk --no-deps 'py-livox2>=0.1,<0.2'
# The NMEA sentences of the Velodyne position packets are checked by pynmea2.
pip_install pynmea2 'pynmea2>=1.19,<2'
pip_install dpkt 'dpkt>=1.9,<2'
# Ray: the shard recipe (docs/recipes/ray_shards.py) is tested on Ray's local cluster.
pip_install ray 'ray>=2.40,<3'
pip_install laspy 'laspy>=2.5,<3'
# The benchmark suite's JSON is checked against benches/suite.schema.json by jsonschema.
pip_install jsonschema 'jsonschema>=4.18,<5'
pip_install "mcap, mcap_ros2" 'mcap>=1.2,<2' 'mcap-ros2-support>=0.5,<1'
# The Python package (python/) is built by maturin and tested with pytest.
pip_install maturin 'maturin>=1.5,<2'
pip_install pytest 'pytest>=7,<10'
# ASAM OSI: ASAM's Python bindings of the specification (osi3) and ASAM's trace reader
# and writer (osi_utilities) read the OSI traces and write the SensorView input; FMPy
# is the FMI master that runs the OSMP FMU.
pip_install "osi3, osi_utilities" 'osi-python>=3.7,<4' 'asam-osi-utilities>=0.4,<1'
pip_install fmpy 'fmpy>=0.3.20,<0.4'
# The live topics (stream --ros2, --foxglove) are read by an independent DDS stack and
# a WebSocket client written in the tests.
pip_install cyclonedds 'cyclonedds>=0.10.5,<12'
pip_install websockets 'websockets>=12,<16'
pip_install rosbags 'rosbags>=0.9.20,<0.11'
log "ready"
