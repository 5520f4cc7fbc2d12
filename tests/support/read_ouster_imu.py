"""Reads an Ouster capture's IMU packets with ouster-sdk, the independent decoder of the
Ouster IMU tests, and prints what it read as JSON on stdout.

Usage: read_ouster_imu.py CAPTURE.pcap METADATA.json

The output holds the metadata's clock and IMU settings as ouster-sdk parsed them, the
number of lidar packets, and per IMU packet (in capture order) its three timestamps
(ns), acceleration (g) and angular velocity (deg/s), floats as ouster-sdk's float32
values.
"""

import json
import sys

from ouster.sdk import core, pcap


def main():
    pcap_path, meta_path = sys.argv[1], sys.argv[2]
    with open(meta_path) as f:
        info, issues = core.parse_and_validate_metadata(f.read())
    pf = core.PacketFormat(info)
    source = pcap.PcapPacketSource(pcap_path, sensor_info=[info])
    lidar, imu = 0, []
    for _, packet in source:
        if isinstance(packet, core.LidarPacket):
            lidar += 1
        elif isinstance(packet, core.ImuPacket):
            buf = packet.buf
            imu.append(
                {
                    "size": len(buf),
                    "sys_ts": int(pf.imu_sys_ts(buf)),
                    "accel_ts": int(pf.imu_accel_ts(buf)),
                    "gyro_ts": int(pf.imu_gyro_ts(buf)),
                    "accel": [float(pf.imu_la_x(buf)), float(pf.imu_la_y(buf)), float(pf.imu_la_z(buf))],
                    "gyro": [float(pf.imu_av_x(buf)), float(pf.imu_av_y(buf)), float(pf.imu_av_z(buf))],
                }
            )
    source.close()
    json.dump(
        {
            "timestamp_mode": str(info.config.timestamp_mode),
            "udp_port_imu": info.config.udp_port_imu,
            "udp_profile_imu": str(info.format.udp_profile_imu),
            "imu_packet_size": pf.imu_packet_size,
            "imu_to_sensor_transform": [float(v) for v in info.imu_to_sensor_transform.ravel()],
            "critical": [str(i) for i in issues.critical],
            "lidar_packets": lidar,
            "imu": imu,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
