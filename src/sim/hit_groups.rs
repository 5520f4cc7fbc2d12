//! The trace pipeline's hit groups: which group a geometry uses, and which shaders each
//! group runs. The order of the groups is [`HitGroupKind::ALL`] (the contract); both
//! the SBT and every geometry's record follow it from there.

use super::shaders::FrameShaders;
use crate::contract::HitGroupKind;
use crate::gpu::HitGroup;
use crate::material::MaterialClass;
use crate::model::{GeometryInfo, SceneTables};

impl HitGroupKind {
    /// The group of a geometry: its material class, and whether an alpha mask may
    /// discard its hits (glass always has an any-hit shader, which tests masks too).
    pub fn of(g: &GeometryInfo) -> HitGroupKind {
        match (g.class, g.masked) {
            (MaterialClass::General, false) => HitGroupKind::General,
            (MaterialClass::General, true) => HitGroupKind::GeneralMasked,
            (MaterialClass::Retroreflective, false) => HitGroupKind::Retroreflective,
            (MaterialClass::Retroreflective, true) => HitGroupKind::RetroreflectiveMasked,
            (MaterialClass::Absorbent, false) => HitGroupKind::Absorbent,
            (MaterialClass::Absorbent, true) => HitGroupKind::AbsorbentMasked,
            (MaterialClass::Transparent, _) => HitGroupKind::Transparent,
            (MaterialClass::Mirror, false) => HitGroupKind::Mirror,
            (MaterialClass::Mirror, true) => HitGroupKind::MirrorMasked,
        }
    }

    /// The shaders of the group.
    fn shaders(self, s: &FrameShaders) -> HitGroup<'_> {
        let (closest_hit, any_hit) = match self {
            HitGroupKind::General => (Some(&s.general), None),
            HitGroupKind::GeneralMasked => (Some(&s.general), Some(&s.alpha_mask)),
            HitGroupKind::Retroreflective => (Some(&s.retroreflective), None),
            HitGroupKind::RetroreflectiveMasked => (Some(&s.retroreflective), Some(&s.alpha_mask)),
            HitGroupKind::Absorbent => (Some(&s.absorbent), None),
            HitGroupKind::AbsorbentMasked => (Some(&s.absorbent), Some(&s.alpha_mask)),
            HitGroupKind::Transparent => (Some(&s.glass), Some(&s.transparent)),
            HitGroupKind::Mirror => (Some(&s.mirror), None),
            HitGroupKind::MirrorMasked => (Some(&s.mirror), Some(&s.alpha_mask)),
        };
        HitGroup {
            closest_hit,
            any_hit,
        }
    }
}

/// Every hit group, in SBT order.
pub(super) fn hit_groups(s: &FrameShaders) -> Vec<HitGroup<'_>> {
    HitGroupKind::ALL.iter().map(|k| k.shaders(s)).collect()
}

/// The SBT hit record of each geometry, in the tables' order: its group's index. A
/// scene without geometry still gets one record, as the SBT needs one.
pub(super) fn hit_records(tables: &SceneTables) -> Vec<u32> {
    if tables.geometries.is_empty() {
        return vec![HitGroupKind::General.sbt_index()];
    }
    tables
        .geometries
        .iter()
        .map(|g| HitGroupKind::of(g).sbt_index())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_group_at_its_sbt_index() {
        // `sbt_index` is an exhaustive match, so a group missing from ALL (or listed
        // twice) leaves some index without its group.
        for (i, k) in HitGroupKind::ALL.iter().enumerate() {
            assert_eq!(k.sbt_index() as usize, i, "{k:?}");
        }
    }
}
