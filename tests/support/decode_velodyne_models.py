"""Reads a pcap capture of Velodyne data and position packets with velodyne_decoder and
pynmea2 (implementations independent of beamtrace) and prints what they read as JSON.

usage: decode_velodyne_models.py points MODEL CALIB PCAP FROM
           the capture's points, decoded by velodyne_decoder's read_pcap. MODEL: a
           velodyne_decoder Model name (VLP32C, VLS128, HDL64E_S3). CALIB: `builtin`,
           velodyne_decoder's own calibration of the model; `packets`, the calibration
           hdl64e.read_calibration_from_pcap reads from an HDL-64E's status bytes (the
           model too); or the path of a calibration YAML (ROS velodyne_pointcloud's).
           Points fired before Unix time FROM are left out.
       decode_velodyne_models.py telemetry PCAP
           each position packet (512 bytes) as velodyne_decoder's TelemetryPacket reads
           it and its NMEA sentence as pynmea2 parses it (checksum checked), and each
           data packet's capture time and timestamp.

Each point's time is absolute (the scan's device stamp, which velodyne_decoder places in
the hour of the capture time, plus the point's offset). `laser_of_ring` maps the
decoder's rings (0 = the lowest elevation of the calibration used) to laser ids.
"""

import json
import struct
import sys

import pynmea2
import velodyne_decoder as vd

FIELDS = ("x", "y", "z", "time", "ring", "return_type")


def calibration_of(model, calib, pcap):
    """The model and calibration CALIB names."""
    if calib == "builtin":
        return getattr(vd.Model, model), vd.Calibration.default_calibs[getattr(vd.Model, model)]
    if calib == "packets":
        found, calibration = vd.hdl64e.read_calibration_from_pcap(pcap)
        if found is None:
            sys.exit("no HDL-64E status bytes in " + pcap)
        return found, calibration
    return getattr(vd.Model, model), vd.Calibration.read(calib)


def lasers_of(calibration):
    """Each laser's vertical and rotational correction (rad), by laser id."""
    import yaml

    lasers = yaml.safe_load(calibration.to_string())["lasers"]
    lasers.sort(key=lambda l: l["laser_id"])
    return [
        {
            "vert_correction": l.get("vert_correction", 0.0),
            "rot_correction": l.get("rot_correction", 0.0),
            "vert_offset_correction": l.get("vert_offset_correction", 0.0),
        }
        for l in lasers
    ]


def points(model, calib, pcap, start):
    model, calibration = calibration_of(model, calib, pcap)
    config = vd.Config(model=model, calibration=calibration)
    config.max_range = 1000.0
    out = {name: [] for name in FIELDS}
    scans = 0
    for stamp, cloud in vd.read_pcap(pcap, config):
        scans += 1
        times = cloud[:, int(vd.PointField.time)].astype("f8") + stamp.device
        keep = times >= start
        for name in FIELDS:
            column = cloud[keep, int(vd.PointField[name])].astype("f8")
            if name == "time":
                column = times[keep]
            elif name in ("ring", "return_type"):
                column = column.astype("i8")
            out[name].extend(column.tolist())
    lasers = lasers_of(calibration)
    # velodyne_decoder numbers rings by elevation, a stable sort of the laser ids.
    by_elevation = sorted(range(len(lasers)), key=lambda i: lasers[i]["vert_correction"])
    return {
        "model": model.name,
        "scans": scans,
        "lasers": lasers,
        "laser_of_ring": by_elevation,
        "points": out,
    }


def nmea(sentence):
    """pynmea2's reading of a sentence, its checksum checked."""
    try:
        msg = pynmea2.parse(sentence.strip(), check=True)
    except pynmea2.ParseError as e:
        return {"error": str(e)}
    return {
        "type": msg.sentence_type,
        "status": msg.status,
        "date": msg.datestamp.isoformat(),
        "time": msg.timestamp.isoformat(),
    }


def telemetry(pcap):
    positions, data = [], []
    for host, payload in vd.util.iter_pcap(pcap):
        payload = bytes(payload)
        if len(payload) == vd.TELEMETRY_PACKET_SIZE:
            t = vd.TelemetryPacket(payload)
            positions.append(
                {
                    "host": host,
                    "usec_since_toh": t.usec_since_toh,
                    "pps_status": t.pps_status.name,
                    "sentence": t.nmea_sentence,
                    "nmea_time": t.nmea_time.isoformat() if t.nmea_time else None,
                    "pps_time": t.pps_time.isoformat() if t.pps_time else None,
                    "pynmea2": nmea(t.nmea_sentence),
                }
            )
        elif len(payload) == vd.PACKET_SIZE:
            (stamp,) = struct.unpack_from("<I", payload, 1200)
            data.append({"host": host, "stamp_us": stamp})
    return {"positions": positions, "data": data}


def main():
    mode = sys.argv[1]
    if mode == "points":
        result = points(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif mode == "telemetry":
        result = telemetry(sys.argv[2])
    else:
        sys.exit(f"unknown mode {mode}")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
