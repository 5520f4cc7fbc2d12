"""Decodes Hesai PandarXT32 point cloud data packets with hydra4 (MapIV's Hesai decoder,
an implementation independent of beamtrace) and prints the points as JSON on stdout.

usage: decode_hesai.py CALIBRATION FILE

CALIBRATION: the angle correction CSV (Channel,Elevation,Azimuth) hydra4 loads.
FILE: records of a little-endian f64 host time (Unix s) and a 1080-byte payload.

Per point: the packet's index, the block's index among those hydra4 yields from the
packet (a dual-return packet yields its last-return blocks only), the ring, x, y, z and
the reflectivity as hydra4 gives them, and `t0`: the packet's absolute time as hydra4
reads its date, time and µs fields. hydra4 adds its block and firing offsets to that
(its block offsets in µs where it adds seconds); they are taken back off here with
hydra4's own tables, so that the test can add the manual's.
"""

import json
import os
import struct
import sys

os.environ["TZ"] = "UTC"  # hydra4 reads the packet's date as a naive local time
import time

time.tzset()

import numpy as np
from hydra4.decoders import PandarXT32

PAYLOAD = 1080


class Packet:
    def __init__(self, data):
        self.data = np.frombuffer(data, dtype=np.uint8)


def main():
    calibration, path = sys.argv[1], sys.argv[2]
    from pathlib import Path

    decoder = PandarXT32(Path(calibration), 0.1, 120.0)
    data = open(path, "rb").read()
    record = 8 + PAYLOAD
    assert len(data) % record == 0, f"{len(data)} bytes is no whole number of records"
    dual = None
    out = {k: [] for k in ("packet", "block", "ring", "x", "y", "z", "reflectivity", "t0")}
    for k, at in enumerate(range(0, len(data), record)):
        payload = data[at + 8 : at + record]
        mode = payload[12 + 8 * 130 + 10]
        dual = mode in (0x39, 0x3B, 0x3C)
        offsets = decoder.block_offset_dual if dual else decoder.block_offset_single
        block_ids = range(0, 8, 2) if dual else range(8)
        for b, block in zip(block_ids, decoder(Packet(payload))):
            for x, y, z, intensity, ring, _azimuth, stamp in block.points:
                out["packet"].append(k)
                out["block"].append(b)
                out["ring"].append(int(ring))
                out["x"].append(float(x))
                out["y"].append(float(y))
                out["z"].append(float(z))
                out["reflectivity"].append(int(intensity))
                out["t0"].append(stamp - offsets[b] - decoder.firing_offset[ring])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
