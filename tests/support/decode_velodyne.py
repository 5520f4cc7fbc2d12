"""Decodes Velodyne data packets with velodyne_decoder (an implementation independent of
beamtrace) and prints the points as JSON on stdout.

usage: decode_velodyne.py packets CALIB FILE  FILE: records of a little-endian f64 host
                                              time (Unix s) and a 1206-byte payload;
                                              decoded with the packet-level ScanDecoder,
                                              the model found from the product id byte
       decode_velodyne.py pcap MODEL FILE     a pcap file, read by velodyne_decoder's
                                              read_pcap; MODEL: VLP16 or HDL32E

CALIB: `builtin`, velodyne_decoder's own calibration for the model (with the lasers'
vertical offsets), or `bundled`, the calibration files it ships (VLP-16.yml, HDL-32E.yml:
the manuals' elevations, no offsets); pcap mode uses the bundled one.

Each point's time is absolute (the scan's device stamp, which velodyne_decoder places in
the hour of the host time, plus the point's offset). Coordinates are printed as the
float32 values the decoder produced.
"""

import json
import struct
import sys

import velodyne_decoder as vd

PACKET_SIZE = 1206
FIELDS = ("x", "y", "z", "intensity", "time", "ring", "return_type")
BUNDLED = {"VLP16": "VLP-16.yml", "HDL32E": "HDL-32E.yml"}


def bundled(model):
    return vd.calibrations.get_bundled_calibration(BUNDLED[model])


def packets(path):
    data = open(path, "rb").read()
    record = 8 + PACKET_SIZE
    assert len(data) % record == 0, f"{len(data)} bytes is no whole number of records"
    out = vd.PacketVector()
    for at in range(0, len(data), record):
        (host,) = struct.unpack_from("<d", data, at)
        out.append(vd.VelodynePacket(host, data[at + 8 : at + record]))
    return out


def columns(scans):
    """The points of all (stamp, points) scans, field by field, times made absolute."""
    out = {name: [] for name in FIELDS}
    for stamp, points in scans:
        for name in FIELDS:
            column = points[:, int(vd.PointField[name])].astype("f8")
            if name == "time":
                column = column + stamp.device
            elif name in ("intensity", "ring", "return_type"):
                column = column.astype("i8")
            out[name].extend(column.tolist())
    return out


def main():
    mode = sys.argv[1]
    if mode == "packets":
        data = packets(sys.argv[3])
        if sys.argv[2] not in ("builtin", "bundled"):
            sys.exit(f"unknown calibration {sys.argv[2]}: builtin or bundled")
        config = vd.Config()
        if sys.argv[2] == "bundled":
            # The model the decoder reads from the first packet picks the file.
            first = vd.ScanDecoder(vd.Config())
            first.decode(vd.PacketVector(data[:1]))
            config = vd.Config(calibration=bundled(first.model_id.name))
        decoder = vd.ScanDecoder(config)
        stamp, points = decoder.decode(data)
        result = {
            "model": decoder.model_id.name,
            "return_mode": decoder.return_mode.name,
            "scans": 1,
            "points": columns([(stamp, points)]),
        }
    elif mode == "pcap":
        model = sys.argv[2]
        config = vd.Config(model=getattr(vd.Model, model), calibration=bundled(model))
        scans = list(vd.read_pcap(sys.argv[3], config))
        result = {"scans": len(scans), "points": columns(scans)}
    else:
        sys.exit(f"unknown mode {mode}")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
