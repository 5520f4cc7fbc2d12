"""Reads a CSV file with Python's csv module, numbers parsed by numpy (an implementation
independent of beamtrace), and prints JSON on stdout: the header's names, the set of
row widths, and every column's values both as the bit patterns of their float32 values
and, where the text is an integer, as that integer (the caller knows each field's type).

usage: read_csv.py FILE.csv
"""

import csv
import json
import sys

import numpy as np


def main() -> None:
    with open(sys.argv[1], newline="", encoding="ascii") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    float_bits = {}
    ints = {}
    for i, name in enumerate(header):
        cells = [row[i] for row in body]
        float_bits[name] = np.array(cells, dtype=np.float32).view(np.uint32).tolist()
        ints[name] = [int(c) if c.isdigit() else None for c in cells]
    out = {
        "fields": header,
        "widths": sorted({len(row) for row in body}),
        "float_bits": float_bits,
        "ints": ints,
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
