"""Reads a dataset layout written by `beamtrace run --dataset` with the loaders that
training code uses, independent of beamtrace, and prints what they found as JSON.

  kitti DIR           Open3D-ML's KITTI dataset (open3d._ml3d.datasets.KITTI): per
                      frame the points (N x 4), the points its camera crop keeps, and
                      each label's box as Open3D-ML parses it, with its own projection
                      of the box into the image (BEVBox3D.to_img).
  semantic-kitti DIR  DIR's parent as Open3D-ML's SemanticKITTI (its `dataset/` folder
                      must be DIR), and DIR as pykitti's KITTI odometry loader: points,
                      raw labels, the learning labels Open3D-ML maps them to with its
                      own semantic-kitti.yaml, camera poses, times and calibration.
  openpcdet DIR       NumPy's reading of points/*.npy, and labels/*.txt split as
                      OpenPCDet's custom dataset does (x y z dx dy dz heading name).

usage: read_dataset.py LAYOUT DIR
"""

import glob
import json
import os
import sys

import numpy as np


def kitti(root):
    from open3d._ml3d.datasets import KITTI

    dataset = KITTI(root, val_split=10**9)
    split = dataset.get_split("training")
    frames = []
    for i in range(len(split)):
        data = split.get_data(i)
        boxes = []
        for b in data["bounding_boxes"]:
            boxes.append(
                {
                    "class": b.label_class,
                    "center": [float(v) for v in b.center],
                    "size_whl": [float(v) for v in b.size],
                    "yaw": float(b.yaw),
                    "truncation": float(b.truncation),
                    "occlusion": float(b.occlusion),
                    "box2d": [float(v) for v in b.box2d],
                    "to_img": [float(v) for v in b.to_img()],
                }
            )
        frames.append(
            {
                "name": split.get_attr(i)["name"],
                "points": data["full_point"].astype("<f4").view("<u4").reshape(-1).tolist(),
                "in_camera": int(len(data["point"])),
                "boxes": boxes,
            }
        )
    return {"frames": frames}


def semantic_kitti(root):
    import pykitti
    import yaml
    from open3d._ml3d.datasets import SemanticKITTI

    parent = os.path.dirname(os.path.abspath(root))
    assert os.path.basename(os.path.abspath(root)) == "dataset", root
    o3d = SemanticKITTI(parent, training_split=["00"], validation_split=[], test_split=[])
    split = o3d.get_split("training")
    odometry = pykitti.odometry(root, "00")
    config = os.path.join(
        os.path.dirname(sys.modules[SemanticKITTI.__module__].__file__),
        "_resources",
        "semantic-kitti.yaml",
    )
    learning_map = yaml.safe_load(open(config))["learning_map"]
    frames = []
    for i in range(len(split)):
        data = split.get_data(i)
        scan = odometry.get_velo(i)
        name = split.get_attr(i)["name"]
        raw = np.fromfile(
            os.path.join(root, "sequences", "00", "labels", name.split("_")[-1] + ".label"),
            dtype="<u4",
        )
        frames.append(
            {
                "name": name,
                "points": scan.astype("<f4").tolist(),
                "semantic": (raw & 0xFFFF).tolist(),
                "instance": (raw >> 16).tolist(),
                "learning": data["label"].astype(int).tolist(),
            }
        )
    return {
        "frames": frames,
        "learning_map": {str(k): v for k, v in learning_map.items()},
        "poses": [p.tolist() for p in odometry.poses],
        "times": [t.total_seconds() for t in odometry.timestamps],
        "T_cam0_velo": odometry.calib.T_cam0_velo.tolist(),
    }


def openpcdet(root):
    frames = []
    for path in sorted(glob.glob(os.path.join(root, "points", "*.npy"))):
        points = np.load(path)
        name = os.path.basename(path)[:-4]
        boxes = []
        with open(os.path.join(root, "labels", name + ".txt")) as f:
            for line in f.readlines():
                parts = line.strip().split(" ")
                boxes.append({"box": [float(v) for v in parts[:7]], "name": parts[7]})
        frames.append(
            {
                "name": name,
                "dtype": str(points.dtype),
                "shape": list(points.shape),
                "points": points.astype("<f4").view("<u4").reshape(-1).tolist(),
                "boxes": boxes,
            }
        )
    return {"frames": frames}


def main() -> None:
    layout, root = sys.argv[1], sys.argv[2]
    read = {"kitti": kitti, "semantic-kitti": semantic_kitti, "openpcdet": openpcdet}
    print(json.dumps(read[layout](root)))


if __name__ == "__main__":
    main()
