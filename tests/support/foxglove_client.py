"""A client of Foxglove's live WebSocket protocol, written here from the protocol's spec
(foxglove.websocket.v1; Foxglove's SDK 0.30 speaks it under its new name,
foxglove.sdk.v1, and the client offers both): it connects (retrying until the server
listens), reads `serverInfo` and the channels' `advertise`ments, subscribes to every
channel, and reads binary Message Data frames (opcode 0x01, then the subscription id as
u32 and the log time as u64, little-endian, then the message). Each message's CDR is
decoded by rosbags' deserializer (independent of beamtrace); each PointCloud2 is
compared with the PCD of the frame its stamp names (see pcd_compare.py). It prints a
JSON summary.

usage: foxglove_client.py --port P --points TOPIC --pcd-dir DIR --rate HZ
         [--frames N] [--timeout S] [--idle S]
"""

import argparse
import json
import os
import struct
import sys
import time

from rosbags.typesys import Stores, get_typestore
from websockets.sync.client import connect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcd_compare import compare_cloud  # noqa: E402

SUBPROTOCOLS = ["foxglove.websocket.v1", "foxglove.sdk.v1"]


def connect_when_listening(url: str, deadline: float):
    while True:
        try:
            return connect(url, subprotocols=SUBPROTOCOLS, max_size=None, open_timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--points", required=True)
    ap.add_argument("--pcd-dir", required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--idle", type=float, default=8)
    a = ap.parse_args()

    types = get_typestore(Stores.ROS2_HUMBLE)
    begun = time.monotonic()
    ws = connect_when_listening(f"ws://127.0.0.1:{a.port}", begun + a.timeout)
    channels, subscriptions = {}, {}
    out = {"subprotocol": ws.subprotocol, "server": None, "clouds": [], "counts": {}}
    last = None
    while time.monotonic() - begun < a.timeout:
        try:
            frame = ws.recv(timeout=0.5)
        except TimeoutError:
            if last is not None and time.monotonic() - last > a.idle:
                break
            continue
        except Exception:  # the server closed the connection: the stream ended
            break
        last = time.monotonic()
        if isinstance(frame, str):
            msg = json.loads(frame)
            if msg.get("op") == "serverInfo":
                out["server"] = msg.get("name")
            if msg.get("op") == "advertise":
                subs = []
                for ch in msg["channels"]:
                    channels[ch["id"]] = ch
                    sub = len(subscriptions) + 1
                    subscriptions[sub] = ch
                    subs.append({"id": sub, "channelId": ch["id"]})
                ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
            continue
        if frame[0] != 0x01:
            continue
        sub, log_time = struct.unpack_from("<IQ", frame, 1)
        ch = subscriptions[sub]
        payload = frame[13:]
        topic = ch["topic"]
        out["counts"][topic] = out["counts"].get(topic, 0) + 1
        if topic != a.points:
            continue
        msg = types.deserialize_cdr(payload, ch["schemaName"])
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        frame_index = round(stamp / 1e9 * a.rate)
        fields = [(f.name, f.offset, f.datatype) for f in msg.fields]
        layout = (fields, msg.is_bigendian, msg.point_step, msg.width, msg.height)
        pcd = os.path.join(a.pcd_dir, f"frame_{frame_index:06d}.pcd")
        same = compare_cloud(layout, bytes(msg.data), pcd)
        out["clouds"].append({"frame": frame_index, "log_time": log_time, "encoding": ch["encoding"], **same})
        if len(out["clouds"]) >= a.frames:
            break
    out["channels"] = sorted(
        [c["topic"], c["encoding"], c["schemaName"], c.get("schemaEncoding")] for c in channels.values()
    )
    ws.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
