"""Bad input raises beamtrace.Error with beamtrace's message; nothing crashes, nothing
leaks, the validation layer stays silent."""

import gc
import os

import pytest

import beamtrace


def test_a_bad_sensor_file_names_its_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: mine\nframe_rate: 10\nwavelenght_nm: 905\n")
    with pytest.raises(beamtrace.Error) as e:
        beamtrace.Simulator(sensor=bad)
    message = str(e.value)
    assert f"{bad}:3" in message, message
    assert "wavelenght_nm" in message


def test_a_missing_scene_raises():
    with pytest.raises(beamtrace.Error, match="no-such-scene.glb"):
        beamtrace.Simulator(scene="scenes/no-such-scene.glb", sensor="vlp-16")


def test_bad_keywords_raise_with_the_keyword():
    with pytest.raises(beamtrace.Error, match="weather"):
        beamtrace.Simulator(sensor="vlp-16", weather="fog:visibility=-3")
    with pytest.raises(beamtrace.Error, match="elevation"):
        beamtrace.Simulator(sensor="vlp-16", sun=(0, 120))
    with pytest.raises(beamtrace.Error, match="fields"):
        beamtrace.Simulator(sensor="vlp-16", fields="x,y,nope")
    with pytest.raises(beamtrace.Error, match="not both"):
        beamtrace.Simulator(sensor="vlp-16", rig="configs/rigs/ouster-imu.yaml")


def test_bad_poses_and_times_raise_and_the_simulator_goes_on():
    with beamtrace.Simulator(sensor="vlp-16", thin=True, validate=True) as sim:
        with pytest.raises(beamtrace.Error, match="position|coordinates"):
            sim.set_pose(position=(float("nan"), 0, 0))
        with pytest.raises(beamtrace.Error, match="no node named"):
            sim.set_object_pose("car_99", position=(0, 0, 0))
        with pytest.raises(beamtrace.Error, match="time"):
            sim.frame(t=-1.0)
        assert len(sim.frame()) > 0
        assert sim.validation_messages() == []


def test_a_scenario_track_refuses_a_hand_set_pose():
    with beamtrace.Simulator(sensor="vlp-16", thin=True, scenario="configs/scenarios/drive.yaml") as sim:
        with pytest.raises(beamtrace.Error, match="vehicle track"):
            sim.set_pose(position=(1, 0, 0))


def test_a_frame_after_close_raises_and_nothing_leaks():
    for _ in range(3):
        sim = beamtrace.Simulator(sensor="vlp-16", thin=True, validate=True)
        sim.frame()
        sim.close()
        with pytest.raises(beamtrace.Error, match="closed"):
            sim.frame()
        sim.close()  # twice is fine
        del sim
        gc.collect()
    # Three devices opened and closed: the process's open files did not grow with them.
    fds = len(os.listdir("/proc/self/fd"))
    sim = beamtrace.Simulator(sensor="vlp-16", thin=True)
    sim.close()
    del sim
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= fds + 2


def test_ctrl_c_stops_a_long_iteration_and_the_simulator_goes_on():
    code = (
        "import os, signal, threading, beamtrace\n"
        # A process started in the background by a shell without job control inherits
        # SIGINT ignored, and Python then installs no KeyboardInterrupt for it.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "sim = beamtrace.Simulator(sensor='vlp-16', thin=True)\n"
        "threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "n = 0\n"
        "try:\n"
        "    for t, f in sim.frames(100000):\n"
        "        n += 1\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted after', n, 'frames')\n"
        "print(len(sim.frame()) > 0)\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0].startswith("interrupted after"), done.stdout
    assert 0 < int(lines[0].split()[2]) < 100000
    assert lines[1] == "True"
