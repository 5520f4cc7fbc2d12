"""Talks to a sensor's HTTP API as ouster-sdk's clients do, and prints what it got as
JSON on stdout: the independent client of the Ouster HTTP test.

Usage: ouster_http_client.py HOST:PORT METADATA.json

ouster-sdk's `SensorHttp` takes HOST:PORT; its sensor clients need port 80 (see
src/output/packets/ouster_http.rs), so this drives `SensorHttp` and `get_config`
directly, plus a plain HTTP GET, and compares the SensorInfo each gives with the one
parsed from METADATA.json.
"""

import json
import sys
import urllib.request

from ouster.sdk import core, sensor
from ouster.sdk._bindings.client import SensorHttp


def info_of(text):
    info, issues = core.parse_and_validate_metadata(text)
    return info, [str(i) for i in issues.critical] + [str(i) for i in issues.warning]


def config_of(cfg):
    return {
        "lidar_mode": str(cfg.lidar_mode),
        "udp_profile_lidar": str(cfg.udp_profile_lidar),
        "udp_dest": cfg.udp_dest,
        "udp_port_lidar": cfg.udp_port_lidar,
        "columns_per_packet": cfg.columns_per_packet,
    }


def version_of(v):
    return f"{v.major}.{v.minor}.{v.patch}"


def attempt(f):
    try:
        return {"ok": f()}
    except Exception as e:  # the test reads the refusal's message
        return {"error": str(e)}


def main():
    host, meta_path = sys.argv[1], sys.argv[2]
    with open(meta_path) as f:
        file_info, file_issues = info_of(f.read())
    http = SensorHttp.create(host, 5)
    http_info, http_issues = info_of(http.metadata(5))
    with urllib.request.urlopen(f"http://{host}/api/v1/sensor/metadata", timeout=5) as r:
        plain_info, _ = info_of(r.read().decode())
    out = {
        "file_issues": file_issues,
        "http_issues": http_issues,
        "http_equals_file": http_info == file_info,
        "plain_get_equals_file": plain_info == file_info,
        "prod_line": http_info.prod_line,
        "firmware": SensorHttp.get_firmware_version_string(host, 5),
        "sdk_firmware": version_of(http.firmware_version()),
        "active_config": config_of(sensor.get_config(host)),
        "auto_detected_udp_dest": http.auto_detected_udp_dest(5),
        "after_detection": config_of(sensor.get_config(host)),
        "user_data": http.get_user_data(5),
        "refused": attempt(lambda: http.set_config_param("lidar_mode", '"512x10"', 5)),
        "not_found": attempt(lambda: urllib.request.urlopen(f"http://{host}/api/v1/nothing", timeout=5).read()),
    }
    http.set_udp_dest_auto(5)
    http.reinitialize(5)
    out["after_auto_dest"] = config_of(sensor.get_config(host))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
