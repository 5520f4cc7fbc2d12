//! The dataset layouts training tools read (`run --dataset`): KITTI 3D object,
//! SemanticKITTI (with KITTI odometry's poses) and OpenPCDet's custom format, each
//! frame's points with its labelled objects ([`crate::output::objects`]).
//!
//! * Points: every returned point of the frame, in the sensor frame (x forward, y left,
//!   z up: KITTI's velodyne frame), as `x y z reflectance` float32 with the reflectance
//!   the apparent reflectance clamped to KITTI's 0–1 (retroreflectors saturate at 1).
//! * Boxes: each object's box at its points' time in the sensor frame.
//! * No camera is simulated. KITTI's files need one, so they define a virtual camera at
//!   the lidar's origin looking along its x axis: `Tr_velo_to_cam` the pure axis turn
//!   (x right, y down, z forward), `R0_rect` the identity, `P0`–`P3` all
//!   [`KITTI_FOCAL_PX`], [`KITTI_CENTER_PX`] without a baseline, on an image of
//!   [`KITTI_IMAGE`] pixels (KITTI's object benchmark's camera 2, rounded) — so the 2D
//!   boxes, `alpha` and the image's field of view that KITTI tools use are consistent.
//! * Splits (`ImageSets`): the last fifth of the frames (rounded down) is `val`, the rest
//!   `train`, contiguous so that neighbouring frames do not straddle the split;
//!   `trainval` lists all.

mod classes;
mod kitti;
mod layout;

pub use classes::{DatasetOptions, SEMANTIC_KITTI_IDS};
pub use kitti::{KITTI_CENTER_PX, KITTI_FOCAL_PX, KITTI_IMAGE};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A dataset layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dataset {
    /// KITTI 3D object: `training/{velodyne,label_2,calib}/NNNNNN.*`, `ImageSets/`.
    Kitti,
    /// SemanticKITTI: `sequences/00/{velodyne,labels}/NNNNNN.*`, its `calib.txt`,
    /// `poses.txt`, `times.txt`, and KITTI odometry's `poses/00.txt`.
    SemanticKitti,
    /// OpenPCDet's custom format: `points/NNNNNN.npy`, `labels/NNNNNN.txt`, `ImageSets/`.
    Openpcdet,
}

impl Dataset {
    pub const ALL: [Dataset; 3] = [Dataset::Kitti, Dataset::SemanticKitti, Dataset::Openpcdet];

    pub fn name(self) -> &'static str {
        match self {
            Dataset::Kitti => "kitti",
            Dataset::SemanticKitti => "semantic-kitti",
            Dataset::Openpcdet => "openpcdet",
        }
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dataset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        (Dataset::ALL.into_iter())
            .find(|d| d.name() == wanted)
            .ok_or_else(|| {
                format!("unknown dataset layout `{s}`: use one of kitti, semantic-kitti, openpcdet")
            })
    }
}

pub use layout::{
    is_dataset_frame_name, write_dataset_frame, write_dataset_run_files, DatasetFrame,
    DATASET_FRAME_FOLDERS, DATASET_RUN_FILES,
};
