"""Writes a VLP-16 capture with dpkt, its data packets assembled from the VLP-16 User
Manual's layout (63-9243 §9.3) — not by beamtrace — for the viewer to play.

usage: write_velodyne_pcap.py OUT.pcap PACKETS

Every packet: 12 blocks of flag FF EE, an azimuth (u16 LE, 0.01°) and 32 data points
(two firing sequences of 16 lasers: distance u16 LE in 2 mm, reflectivity u8), then a
timestamp (u32 LE, µs past the hour) and the factory bytes 0x37 (strongest) and 0x22
(VLP-16). Block k of the capture sits at azimuth 40·k mod 36000 (0.4° per block, two
firings of 0.2°); every laser returns at 10 m (5000 units) with reflectivity 50. So a
turn is 900 blocks (75 packets) and 1800 firings of 16 points. Sent from 192.168.1.201
port 2368 to the broadcast address, 1.327 ms apart (the manual's packet rate).
"""

import struct
import sys

import dpkt

out, count = sys.argv[1], int(sys.argv[2])
with open(out, "wb") as f:
    w = dpkt.pcap.Writer(f)
    for n in range(count):
        payload = b""
        for b in range(12):
            k = n * 12 + b
            payload += b"\xff\xee" + struct.pack("<H", (40 * k) % 36000)
            payload += struct.pack("<HB", 5000, 50) * 32
        payload += struct.pack("<I", n * 1327) + bytes([0x37, 0x22])
        assert len(payload) == 1206
        udp = dpkt.udp.UDP(sport=2368, dport=2368, data=payload)
        udp.ulen = len(udp)
        ip = dpkt.ip.IP(src=bytes([192, 168, 1, 201]), dst=b"\xff\xff\xff\xff", p=17, data=udp)
        ip.len = len(ip)
        eth = dpkt.ethernet.Ethernet(
            src=b"\x60\x76\x88\x00\x00\x01", dst=b"\xff" * 6, type=0x0800, data=ip
        )
        w.writepkt(bytes(eth), ts=1.0 + n * 0.001327)
