//! Which dataset label each of beamtrace's classes becomes, and the user's overrides
//! (`--class-map vehicle=Van,pedestrian=Cyclist`).

use super::Dataset;
use crate::output::OutputError;
use crate::scene::SemanticClass;
use serde::{Deserialize, Serialize};

/// KITTI's object types (the object development kit's readme, "type").
const KITTI_TYPES: [&str; 9] = [
    "Car",
    "Van",
    "Truck",
    "Pedestrian",
    "Person_sitting",
    "Cyclist",
    "Tram",
    "Misc",
    "DontCare",
];

/// SemanticKITTI's label ids (semantic-kitti.yaml, `labels`), with their names.
pub const SEMANTIC_KITTI_IDS: [(u16, &str); 34] = [
    (0, "unlabeled"),
    (1, "outlier"),
    (10, "car"),
    (11, "bicycle"),
    (13, "bus"),
    (15, "motorcycle"),
    (16, "on-rails"),
    (18, "truck"),
    (20, "other-vehicle"),
    (30, "person"),
    (31, "bicyclist"),
    (32, "motorcyclist"),
    (40, "road"),
    (44, "parking"),
    (48, "sidewalk"),
    (49, "other-ground"),
    (50, "building"),
    (51, "fence"),
    (52, "other-structure"),
    (60, "lane-marking"),
    (70, "vegetation"),
    (71, "trunk"),
    (72, "terrain"),
    (80, "pole"),
    (81, "traffic-sign"),
    (99, "other-object"),
    (252, "moving-car"),
    (253, "moving-bicyclist"),
    (254, "moving-person"),
    (255, "moving-motorcyclist"),
    (256, "moving-on-rails"),
    (257, "moving-bus"),
    (258, "moving-truck"),
    (259, "moving-other-vehicle"),
];

/// SemanticKITTI's moving variant of a static label (semantic-kitti.yaml's 25x ids).
const MOVING: [(u16, u16); 8] = [
    (10, 252),
    (31, 253),
    (30, 254),
    (32, 255),
    (16, 256),
    (13, 257),
    (18, 258),
    (20, 259),
];

/// A dataset layout and the class map it labels with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DatasetOptions {
    pub dataset: Dataset,
    /// The user's `class=label` pairs, by class id, checked.
    pub overrides: Vec<(u16, String)>,
}

impl DatasetOptions {
    /// `dataset` with `class_map` (`class=label,…`; beamtrace class names on the left,
    /// the dataset's labels on the right, `none` to leave a class unlabelled), checked.
    pub fn new(dataset: Dataset, class_map: Option<&str>) -> Result<Self, OutputError> {
        let mut overrides = Vec::new();
        for pair in class_map
            .unwrap_or("")
            .split(',')
            .filter(|p| !p.trim().is_empty())
        {
            let bad = |why: String| OutputError::ClassMap {
                given: pair.trim().to_string(),
                why,
            };
            let (class, label) = pair
                .split_once('=')
                .ok_or_else(|| bad("write each entry as class=label".into()))?;
            let class = SemanticClass::from_name(class.trim()).ok_or_else(|| {
                bad(format!(
                    "`{}` is not one of beamtrace's classes ({}, weather)",
                    class.trim(),
                    SemanticClass::known_names()
                ))
            })?;
            let label = label.trim().to_string();
            check_label(dataset, &label).map_err(bad)?;
            overrides.push((class as u16, label));
        }
        Ok(DatasetOptions { dataset, overrides })
    }

    /// Checks options that were read back (a shard's record): each override's class
    /// and label as [`DatasetOptions::new`] checks them.
    pub fn check(&self) -> Result<(), OutputError> {
        for (class, label) in &self.overrides {
            let bad = |why: String| OutputError::ClassMap {
                given: format!("{class}={label}"),
                why,
            };
            if SemanticClass::from_id(*class).is_none() {
                return Err(bad(format!("{class} is not one of beamtrace's class ids")));
            }
            check_label(self.dataset, label).map_err(bad)?;
        }
        Ok(())
    }

    /// The object label of `class` (KITTI's type, OpenPCDet's class name); `None`: its
    /// objects are not labelled.
    pub fn object_label(&self, class: u16) -> Option<String> {
        let given = self.overrides.iter().rev().find(|(c, _)| *c == class);
        let label = match given {
            Some((_, l)) => l.clone(),
            None => default_label(self.dataset, class)?.to_string(),
        };
        (label != "none").then_some(label)
    }

    /// SemanticKITTI's id for a point of `class`, its moving variant where the object
    /// moves and SemanticKITTI has one.
    pub fn semantic_id(&self, class: u16, moving: bool) -> u16 {
        let id = match self.overrides.iter().rev().find(|(c, _)| *c == class) {
            Some((_, l)) => l.parse().unwrap_or(0),
            None => default_semantic_id(class),
        };
        let moved = MOVING.iter().find(|(s, _)| *s == id).map(|(_, m)| *m);
        match moving {
            true => moved.unwrap_or(id),
            false => id,
        }
    }
}

fn check_label(dataset: Dataset, label: &str) -> Result<(), String> {
    match dataset {
        Dataset::Kitti if label == "none" || KITTI_TYPES.contains(&label) => Ok(()),
        Dataset::Kitti => Err(format!(
            "`{label}` is not a KITTI type: use one of {} (or none)",
            KITTI_TYPES.join(", ")
        )),
        Dataset::SemanticKitti => match label.parse::<u16>() {
            Ok(id) if SEMANTIC_KITTI_IDS.iter().any(|(i, _)| *i == id) => Ok(()),
            _ => Err(format!(
                "`{label}` is not a SemanticKITTI label id: use one of {}",
                (SEMANTIC_KITTI_IDS.iter())
                    .map(|(i, n)| format!("{i} ({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
        Dataset::Openpcdet if !label.is_empty() && !label.contains(char::is_whitespace) => Ok(()),
        Dataset::Openpcdet => Err("an OpenPCDet class name is one word".into()),
    }
}

/// The default object labels: KITTI's Car and Pedestrian (any other object `Misc`, as
/// KITTI labels what it does not classify); OpenPCDet's tutorial names Vehicle and
/// Pedestrian (other objects unlabelled).
fn default_label(dataset: Dataset, class: u16) -> Option<&'static str> {
    let c = SemanticClass::from_id(class);
    match (dataset, c) {
        (Dataset::Kitti, Some(SemanticClass::Vehicle)) => Some("Car"),
        (Dataset::Kitti, Some(SemanticClass::Pedestrian)) => Some("Pedestrian"),
        (Dataset::Kitti, _) => Some("Misc"),
        (Dataset::Openpcdet, Some(SemanticClass::Vehicle)) => Some("Vehicle"),
        (Dataset::Openpcdet, Some(SemanticClass::Pedestrian)) => Some("Pedestrian"),
        _ => None,
    }
}

/// beamtrace's classes in SemanticKITTI's terms: a kerb counts as sidewalk, a return of
/// the medium (fog, rain, snow) as an outlier.
fn default_semantic_id(class: u16) -> u16 {
    use SemanticClass::*;
    match SemanticClass::from_id(class) {
        Some(Road) => 40,
        Some(Sidewalk) | Some(Kerb) => 48,
        Some(Building) => 50,
        Some(Vehicle) => 10,
        Some(Pedestrian) => 30,
        Some(Pole) => 80,
        Some(TrafficSign) => 81,
        Some(Vegetation) => 70,
        Some(LaneMarking) => 60,
        Some(Terrain) => 72,
        Some(Fence) => 51,
        Some(Weather) => 1,
        Some(Unlabelled) | None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_semantic_id_is_one_semantic_kitti_defines() {
        for c in SemanticClass::all() {
            for moving in [false, true] {
                let id = DatasetOptions::new(Dataset::SemanticKitti, None)
                    .unwrap()
                    .semantic_id(*c as u16, moving);
                assert!(SEMANTIC_KITTI_IDS.iter().any(|(i, _)| *i == id), "{c:?}");
            }
        }
    }

    #[test]
    fn overrides_are_checked_against_the_datasets_own_labels() {
        let o = DatasetOptions::new(Dataset::Kitti, Some("vehicle=Van, pedestrian=none")).unwrap();
        assert_eq!(
            o.object_label(SemanticClass::Vehicle as u16).as_deref(),
            Some("Van")
        );
        assert_eq!(o.object_label(SemanticClass::Pedestrian as u16), None);
        assert_eq!(
            o.object_label(SemanticClass::Pole as u16).as_deref(),
            Some("Misc")
        );
        assert!(DatasetOptions::new(Dataset::Kitti, Some("vehicle=Bus")).is_err());
        assert!(DatasetOptions::new(Dataset::Kitti, Some("lorry=Car")).is_err());
        assert!(DatasetOptions::new(Dataset::SemanticKitti, Some("vehicle=12")).is_err());
        let s = DatasetOptions::new(Dataset::SemanticKitti, Some("vehicle=18")).unwrap();
        // A moving truck is SemanticKITTI's moving-truck.
        assert_eq!(s.semantic_id(SemanticClass::Vehicle as u16, true), 258);
        assert_eq!(s.semantic_id(SemanticClass::Vehicle as u16, false), 18);
    }
}
