"""A host running Livox SDK2 itself (liblivox_lidar_sdk_shared.so, as the py-livox2
wheel ships it) against a Mid-360 on the network: the SDK discovers the lidar,
configures it, and hands its point cloud, IMU and state data to the callbacks here.
The samples are read with the SDK's own struct layouts (livox_lidar_def.h,
#pragma pack(1)), not beamtrace's decoder.

Usage: livox_sdk_host.py --host-ip 127.0.0.1 --seconds N --ready FILE
(it ends 1.5 s after the last point packet, or after N s)
Prints a JSON summary: the lidars the SDK reported (info change callback), the work
mode acknowledgement, per point packet its header fields and samples, the IMU samples,
and the state pushes.
"""
import argparse
import ctypes as C
import json
import os
import pathlib
import sys
import tempfile
import threading
import time




def sdk_library():
    for p in map(pathlib.Path, sys.path):
        lib = p / "lib" / "liblivox_lidar_sdk_shared.so"
        if lib.exists():
            return C.CDLL(str(lib))
    sys.exit("liblivox_lidar_sdk_shared.so not found beside the py-livox2 package")


class EthernetPacket(C.Structure):
    _pack_ = 1
    _fields_ = [
        ("version", C.c_uint8),
        ("length", C.c_uint16),
        ("time_interval", C.c_uint16),
        ("dot_num", C.c_uint16),
        ("udp_cnt", C.c_uint16),
        ("frame_cnt", C.c_uint8),
        ("data_type", C.c_uint8),
        ("time_type", C.c_uint8),
        ("rsvd", C.c_uint8 * 12),
        ("crc32", C.c_uint32),
        ("timestamp", C.c_uint8 * 8),
    ]


class CartesianHigh(C.Structure):
    _pack_ = 1
    _fields_ = [("x", C.c_int32), ("y", C.c_int32), ("z", C.c_int32),
                ("reflectivity", C.c_uint8), ("tag", C.c_uint8)]


class ImuRaw(C.Structure):
    _pack_ = 1
    _fields_ = [("gyro_x", C.c_float), ("gyro_y", C.c_float), ("gyro_z", C.c_float),
                ("acc_x", C.c_float), ("acc_y", C.c_float), ("acc_z", C.c_float)]


class LidarInfo(C.Structure):
    _pack_ = 1
    _fields_ = [("dev_type", C.c_uint8), ("sn", C.c_char * 16), ("lidar_ip", C.c_char * 16)]


class AsyncControlResponse(C.Structure):
    _pack_ = 1
    _fields_ = [("ret_code", C.c_uint8), ("error_key", C.c_uint16)]


HEADER = C.sizeof(EthernetPacket)
assert HEADER == 36 and C.sizeof(CartesianHigh) == 14 and C.sizeof(ImuRaw) == 24

PointCb = C.CFUNCTYPE(None, C.c_uint32, C.c_uint8, C.POINTER(EthernetPacket), C.c_void_p)
InfoChangeCb = C.CFUNCTYPE(None, C.c_uint32, C.POINTER(LidarInfo), C.c_void_p)
InfoCb = C.CFUNCTYPE(None, C.c_uint32, C.c_uint8, C.c_char_p, C.c_void_p)
ControlCb = C.CFUNCTYPE(None, C.c_int32, C.c_uint32, C.POINTER(AsyncControlResponse),
                        C.c_void_p)

lock = threading.Lock()
summary = {"lidars": [], "work_mode": [], "packets": [], "imu": [], "pushes": 0}
last_data = [None]  # when the last point packet arrived (monotonic s)
sdk = None


def on_points(handle, dev_type, pkt, _):
    h = pkt.contents
    base = C.addressof(h)
    samples = []
    if h.data_type == 1:
        arr = (CartesianHigh * h.dot_num).from_address(base + HEADER)
        samples = [[s.x, s.y, s.z, s.reflectivity, s.tag] for s in arr]
    stamp = int.from_bytes(bytes(h.timestamp), "little")
    with lock:
        last_data[0] = time.monotonic()
        summary["packets"].append({
            "dev_type": dev_type, "length": h.length, "dot_num": h.dot_num,
            "udp_cnt": h.udp_cnt, "frame_cnt": h.frame_cnt, "data_type": h.data_type,
            "time_type": h.time_type, "time_interval": h.time_interval,
            "timestamp": stamp, "samples": samples,
        })


def on_imu(handle, dev_type, pkt, _):
    h = pkt.contents
    s = ImuRaw.from_address(C.addressof(h) + HEADER)
    with lock:
        summary["imu"].append([s.gyro_x, s.gyro_y, s.gyro_z, s.acc_x, s.acc_y, s.acc_z])


def on_work_mode(status, handle, response, _):
    r = response.contents if response else None
    with lock:
        summary["work_mode"].append({
            "status": status,
            "ret_code": r.ret_code if r else None,
            "error_key": r.error_key if r else None,
        })


def on_info_change(handle, info, _):
    i = info.contents
    with lock:
        summary["lidars"].append({"dev_type": i.dev_type, "sn": i.sn.decode(),
                                  "ip": i.lidar_ip.decode()})
    # As the SDK's quick start does: set the lidar sampling.
    sdk.SetLivoxLidarWorkMode(C.c_uint32(handle), C.c_int(1), work_mode_cb, None)


def on_push(handle, dev_type, info, _):
    with lock:
        summary["pushes"] += 1
        summary["push"] = info.decode(errors="replace")


point_cb = PointCb(on_points)
imu_cb = PointCb(on_imu)
change_cb = InfoChangeCb(on_info_change)
push_cb = InfoCb(on_push)
work_mode_cb = ControlCb(on_work_mode)


def config(host_ip):
    return {"MID360": {
        "lidar_net_info": {"cmd_data_port": 56100, "push_msg_port": 56200,
                           "point_data_port": 56300, "imu_data_port": 56400,
                           "log_data_port": 56500},
        "host_net_info": {"host_ip": host_ip, "multicast_ip": "",
                          "cmd_data_port": 56101, "push_msg_port": 56201,
                          "point_data_port": 56301, "imu_data_port": 56401,
                          "log_data_port": 56501},
    }}


def main():
    global sdk
    a = argparse.ArgumentParser()
    a.add_argument("--host-ip", default="127.0.0.1")
    a.add_argument("--seconds", type=float, default=10.0)
    a.add_argument("--ready")
    args = a.parse_args()
    sdk = sdk_library()
    sdk.LivoxLidarSdkInit.argtypes = [C.c_char_p, C.c_char_p, C.c_void_p]
    sdk.LivoxLidarSdkInit.restype = C.c_bool
    sdk.LivoxLidarSdkStart.restype = C.c_bool
    sdk.SetLivoxLidarWorkMode.argtypes = [C.c_uint32, C.c_int, ControlCb, C.c_void_p]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mid360_config.json")
        with open(path, "w") as f:
            json.dump(config(args.host_ip), f)
        sdk.DisableLivoxSdkConsoleLogger()
        if not sdk.LivoxLidarSdkInit(path.encode(), args.host_ip.encode(), None):
            sys.exit("LivoxLidarSdkInit failed")
        sdk.SetLivoxLidarPointCloudCallBack(point_cb, None)
        sdk.SetLivoxLidarImuDataCallback(imu_cb, None)
        sdk.SetLivoxLidarInfoChangeCallback(change_cb, None)
        sdk.SetLivoxLidarInfoCallback(push_cb, None)
        if not sdk.LivoxLidarSdkStart():
            sys.exit("LivoxLidarSdkStart failed")
        if args.ready:
            pathlib.Path(args.ready).write_text("ready")
        # Until the data stops (1.5 s without a point packet after some came), or the
        # time is up.
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            time.sleep(0.1)
            with lock:
                idle = last_data[0] is not None and time.monotonic() - last_data[0] > 1.5
            if idle:
                break
        with lock:
            out = json.dumps(summary)
        sdk.LivoxLidarSdkUninit()
    print(out)


if __name__ == "__main__":
    main()
