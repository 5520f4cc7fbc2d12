"""Runs an OSMP sensor model FMU in FMPy (an FMI 2.0 master independent of beamtrace)
the way a co-simulation does: FMPy's model-description checks, then per step a
SensorView built with osi-python (ASAM's bindings) handed over as OSMP asks — its
serialized bytes in memory the master owns, their address split into the
OSMPSensorViewIn.base.lo/.base.hi integers and their length in .size — a step, and
the SensorData read back from the OSMPSensorDataOut integers and decoded. Last, a
malformed buffer: the step must fail with fmi2Error (an exception from FMPy) and a
logged message, and this process go on.

Input JSON on stdin: {"times": [...], "host": [[x, y, z, yaw], ...], "boxes": {id:
[[x, y, z, yaw], ...]}, "sizes": ..., "host_size": ..., "bbcenter_to_rear": ...} as
write_osi_input.py takes it. Prints JSON: the validation problems, each step's
detections (Cartesian by OSI's spherical formula), the malformed step's outcome and the
log.

usage: run_fmu.py FILE.fmu < poses.json
"""

import ctypes
import json
import math
import sys
import time

from fmpy import extract, read_model_description
from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                       fmi2CallbackFunctions, fmi2CallbackLoggerTYPE,
                       fmi2StepFinishedTYPE)
from fmpy.validation import validate_fmu
from osi3.osi_sensordata_pb2 import SensorData

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from write_osi_input import views  # noqa: E402

LOG = []


def logger(env, instance, status, category, message):
    LOG.append({"status": status, "category": (category or b"").decode(),
                "message": (message or b"").decode()})


def signed(v):
    return v - (1 << 32) if v >= (1 << 31) else v


def cartesian(p):
    d, az, el = p.distance, p.azimuth, p.elevation
    return [d * math.cos(el) * math.cos(az), d * math.cos(el) * math.sin(az), -d * math.sin(el)]


def hand_over(fmu, data):
    """Points OSMPSensorViewIn at `data`; returns the buffer, which must outlive the step."""
    buf = ctypes.create_string_buffer(data, len(data))
    address = ctypes.addressof(buf)
    fmu.setInteger([0, 1, 2], [signed(address & 0xFFFFFFFF), signed(address >> 32), len(data)])
    return buf


def read_output(fmu):
    lo, hi, size = fmu.getInteger([3, 4, 5])
    address = (lo & 0xFFFFFFFF) | ((hi & 0xFFFFFFFF) << 32)
    sd = SensorData()
    sd.ParseFromString(ctypes.string_at(address, size))
    lidar = sd.feature_data.lidar_sensor[0]
    return {
        "timestamp": sd.timestamp.seconds + sd.timestamp.nanos * 1e-9,
        "cycle_counter": lidar.header.cycle_counter,
        "detections": [{"xyz": cartesian(d.position), "beam": d.beam_id.value,
                        "object": d.object_id.value} for d in lidar.detection],
    }


def main() -> None:
    path = sys.argv[1]
    spec = json.load(sys.stdin)
    problems = validate_fmu(path)
    md = read_model_description(path)
    unzipped = extract(path)
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="lidar")
    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(logger)
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(lambda n, s: None)
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(lambda p: None)
    callbacks.stepFinished = fmi2StepFinishedTYPE()
    fmu.instantiate(callbacks=callbacks)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    steps = []
    for k, view in enumerate(views(spec)):
        buf = hand_over(fmu, view.SerializeToString())
        start = time.perf_counter()
        fmu.doStep(currentCommunicationPoint=0.1 * k, communicationStepSize=0.1)
        step_s = time.perf_counter() - start
        steps.append(read_output(fmu) | {"step_s": step_s})
        del buf
    count = fmu.getInteger([7])[0]
    buf = hand_over(fmu, b"\xff\xff\xff\xff\x0f")
    try:
        fmu.doStep(currentCommunicationPoint=0.3, communicationStepSize=0.1)
        malformed = "accepted"
    except Exception as e:  # FMPy raises on fmi2Error
        malformed = f"raised: {e}"
    del buf
    fmu.terminate()
    fmu.freeInstance()
    json.dump({"problems": problems, "variables": [v.name for v in md.modelVariables],
               "steps": steps, "count": count, "malformed": malformed, "log": LOG,
               "alive": True}, sys.stdout)


if __name__ == "__main__":
    main()
