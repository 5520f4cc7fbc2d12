//! The fixed table of semantic classes. The ids are written into every point, so they
//! never change: new classes get new ids at the end.

/// Semantic class of a scene node, from the node's (or nearest ancestor's)
/// `extras.class`. `as u16` gives the stable id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum SemanticClass {
    Unlabelled = 0,
    Road = 1,
    Sidewalk = 2,
    Building = 3,
    Vehicle = 4,
    Pedestrian = 5,
    Pole = 6,
    TrafficSign = 7,
    Vegetation = 8,
    LaneMarking = 9,
    Terrain = 10,
    Fence = 11,
    Kerb = 12,
    /// Fog, rain or snow: a return of the medium, not of a surface (`material` says
    /// which medium). Set by the simulation, never by a scene.
    Weather = 13,
}

const ALL: [SemanticClass; 14] = [
    SemanticClass::Unlabelled,
    SemanticClass::Road,
    SemanticClass::Sidewalk,
    SemanticClass::Building,
    SemanticClass::Vehicle,
    SemanticClass::Pedestrian,
    SemanticClass::Pole,
    SemanticClass::TrafficSign,
    SemanticClass::Vegetation,
    SemanticClass::LaneMarking,
    SemanticClass::Terrain,
    SemanticClass::Fence,
    SemanticClass::Kerb,
    SemanticClass::Weather,
];

impl SemanticClass {
    /// Every class, in id order (`all()[i] as u16 == i`).
    pub fn all() -> &'static [SemanticClass] {
        &ALL
    }

    /// The name used in glTF `extras.class` and in output files.
    pub fn name(self) -> &'static str {
        match self {
            SemanticClass::Unlabelled => "unlabelled",
            SemanticClass::Road => "road",
            SemanticClass::Sidewalk => "sidewalk",
            SemanticClass::Building => "building",
            SemanticClass::Vehicle => "vehicle",
            SemanticClass::Pedestrian => "pedestrian",
            SemanticClass::Pole => "pole",
            SemanticClass::TrafficSign => "traffic_sign",
            SemanticClass::Vegetation => "vegetation",
            SemanticClass::LaneMarking => "lane_marking",
            SemanticClass::Terrain => "terrain",
            SemanticClass::Fence => "fence",
            SemanticClass::Kerb => "kerb",
            SemanticClass::Weather => "weather",
        }
    }

    /// Looks a class up by its name (exact, lower case, as `name()` gives it).
    pub fn from_name(name: &str) -> Option<SemanticClass> {
        ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Looks a class up by its stable id.
    pub fn from_id(id: u16) -> Option<SemanticClass> {
        ALL.get(usize::from(id)).copied()
    }

    /// The class a scene node's `extras.class` names: any but `weather`, which only
    /// the simulation gives (to returns of the medium).
    pub fn for_scene(name: &str) -> Option<SemanticClass> {
        Self::from_name(name).filter(|c| *c != SemanticClass::Weather)
    }

    /// "unlabelled, road, …": the names a scene may give, for error messages.
    pub fn known_names() -> String {
        let names = ALL.iter().filter(|c| **c != SemanticClass::Weather);
        names.map(|c| c.name()).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_names_round_trip() {
        let expected = [
            (0, "unlabelled"),
            (1, "road"),
            (2, "sidewalk"),
            (3, "building"),
            (4, "vehicle"),
            (5, "pedestrian"),
            (6, "pole"),
            (7, "traffic_sign"),
            (8, "vegetation"),
            (9, "lane_marking"),
            (10, "terrain"),
            (11, "fence"),
            (12, "kerb"),
            (13, "weather"),
        ];
        assert_eq!(SemanticClass::all().len(), expected.len());
        for (i, (id, name)) in expected.iter().enumerate() {
            let c = SemanticClass::all()[i];
            assert_eq!(c as u16, *id);
            assert_eq!(c.name(), *name);
            assert_eq!(SemanticClass::from_name(name), Some(c));
            assert_eq!(SemanticClass::from_id(*id), Some(c));
        }
        assert_eq!(SemanticClass::from_name("car"), None);
        assert_eq!(SemanticClass::from_id(14), None);
    }
}
