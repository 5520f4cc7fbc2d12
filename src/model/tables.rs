//! The scene and material tables the hit shaders read — built once on the host and
//! read alike by the GPU upload (`sim` turns them into its buffers) and by the CPU
//! reference, so both answer from the same numbers: per-geometry material and alpha
//! mask, per-material class and two sampled tables — R(θ) for the sensor's own light
//! and its diffuse part for sunlight — and alpha textures as bytes.

use crate::contract::{MAX_RECORD_SLOTS, REFLECTANCE_STEPS};
use crate::material::{MaterialClass, MaterialDb};
use crate::scene::{Primitive, Scene};

/// What the shaders know of one geometry (a glTF primitive), besides its buffers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeometryInfo {
    /// IR material index.
    pub material: u32,
    /// The class of that material: it picks the geometry's hit shaders.
    pub class: MaterialClass,
    /// glTF `alphaMode: MASK`: an any-hit shader tests the mask.
    pub masked: bool,
    /// The mask's texture, when the geometry has one and texture coordinates for it.
    pub alpha_texture: Option<u32>,
    pub alpha_cutoff: f32,
    pub alpha_factor: f32,
}

impl GeometryInfo {
    /// Whether any-hit shaders must run (alpha mask or glass).
    pub fn needs_any_hit(&self) -> bool {
        self.masked || self.class == MaterialClass::Transparent
    }
}

/// One IR material as the hit shaders see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaterialEntry {
    pub class: MaterialClass,
    /// One-way power transmission of one crossing: a pane's, or one face of a
    /// refracting solid's (the square root of its `transmission`).
    pub transmission: f32,
    /// Power sent on in the mirror direction (mirrors).
    pub mirror_reflectance: f32,
    /// Index of refraction of a refracting pane; 0: passed straight.
    pub ior: f32,
    /// F0 of a pane (transparent class; 0 for the others).
    pub reflectance_normal: f32,
    /// First of its `REFLECTANCE_STEPS + 1` samples of R(θ) in
    /// [`SceneTables::reflectance`]: the monostatic return of the sensor's own pulse.
    pub table_offset: u32,
    /// First of its `REFLECTANCE_STEPS + 1` samples of the diffuse part of R(θ) alone
    /// in the same table: what light from another direction (the sun) sends to the
    /// sensor, since glints and retroreflection go back towards their source.
    pub diffuse_offset: u32,
    /// First of `2 × (REFLECTANCE_STEPS + 1)` samples in the same table: the share of
    /// the power one crossing of the pane passes at θ
    /// ([`IrMaterial::pane_transmission`](crate::material::IrMaterial::pane_transmission)),
    /// then the share it sends on in the mirror direction (`pane_reflection`); zeros for
    /// opaque classes.
    pub pane_offset: u32,
}

/// An alpha texture: bytes in [`SceneTables::texels`], row-major, top row first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlphaTexture {
    /// Byte offset of texel (0, 0).
    pub offset: u32,
    pub width: u32,
    pub height: u32,
    /// glTF wrap modes: 33071 clamp, 33648 mirrored repeat, 10497 repeat.
    pub wrap_s: u32,
    pub wrap_t: u32,
}

#[derive(Debug, Clone, Default)]
pub struct SceneTables {
    /// Indexed by global geometry index = `mesh_first_geometry[mesh] + primitive`.
    pub geometries: Vec<GeometryInfo>,
    pub mesh_first_geometry: Vec<u32>,
    pub materials: Vec<MaterialEntry>,
    /// `REFLECTANCE_STEPS + 1` samples of R(θ), then as many of its diffuse part, per
    /// material.
    pub reflectance: Vec<f32>,
    pub textures: Vec<AlphaTexture>,
    /// Alpha bytes of all textures, padded to whole u32 words.
    pub texels: Vec<u8>,
}

/// A scene whose tables cannot be built: the scene and its material map disagree.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TablesError {
    #[error(
        "alpha texture {texture} of {width}×{height} texels holds {bytes} bytes: \
         re-export the scene's mask image"
    )]
    AlphaTextureSize {
        texture: usize,
        width: u32,
        height: u32,
        bytes: usize,
    },
    #[error("mesh {mesh} primitive {primitive} uses scene material {material} of {count}")]
    MaterialOutOfRange {
        mesh: usize,
        primitive: usize,
        material: u32,
        count: usize,
    },
    #[error("IR material {0} out of range")]
    IrMaterialOutOfRange(u32),
    #[error(
        "the new material database differs in its materials or their classes from the \
         one the tables were built with: build the tables anew"
    )]
    MaterialsChanged,
}

impl SceneTables {
    /// `material_map[i]` is the IR material of scene material i.
    pub fn new(scene: &Scene, db: &MaterialDb, material_map: &[u32]) -> Result<Self, TablesError> {
        let mut t = SceneTables::default();
        t.add_materials(db);
        t.add_textures(scene)?;
        for (mi, mesh) in scene.meshes.iter().enumerate() {
            t.mesh_first_geometry.push(t.geometries.len() as u32);
            for (pi, p) in mesh.primitives.iter().enumerate() {
                let info = t.geometry(scene, material_map, (mi, pi), p)?;
                t.geometries.push(info);
            }
        }
        Ok(t)
    }

    /// Samples the material tables again from `db`, which must hold the same materials
    /// in the same classes (other values, such as a calibration's reflectances): the
    /// geometries keep their hit shaders, so only the tables change.
    pub fn set_materials(&mut self, db: &MaterialDb) -> Result<(), TablesError> {
        let same = db.materials.len() == self.materials.len()
            && db
                .materials
                .iter()
                .zip(&self.materials)
                .all(|(m, e)| m.class == e.class);
        if !same {
            return Err(TablesError::MaterialsChanged);
        }
        self.materials.clear();
        self.reflectance.clear();
        self.add_materials(db);
        Ok(())
    }

    /// Class, transmission and the sampled R(θ) and diffuse tables of every IR
    /// material.
    fn add_materials(&mut self, db: &MaterialDb) {
        for m in &db.materials {
            let table_offset = self.push_samples(|c| m.reflectance_at(c));
            let diffuse_offset = self.push_samples(|c| m.diffuse_reflectance_at(c));
            let pane_offset = self.push_samples(|c| m.pane_transmission(c));
            self.push_samples(|c| m.pane_reflection(c));
            self.materials.push(MaterialEntry {
                class: m.class,
                // A refracting material is a closed solid whose every face a ray
                // crosses: each crossing passes half the solid's (log) transmission.
                transmission: match m.ior {
                    Some(_) => m.transmission().sqrt(),
                    None => m.transmission(),
                },
                // 0 / None outside their classes (`IrMaterial`).
                mirror_reflectance: m.mirror_reflectance,
                ior: m.ior.unwrap_or(0.0),
                reflectance_normal: m.reflectance_normal,
                table_offset,
                diffuse_offset,
                pane_offset,
            });
        }
    }

    /// Appends `f(cos θ)` at θ = 0°…90° in `REFLECTANCE_STEPS` steps; returns the
    /// offset of the first sample.
    fn push_samples(&mut self, f: impl Fn(f32) -> f32) -> u32 {
        let offset = self.reflectance.len() as u32;
        for i in 0..=REFLECTANCE_STEPS {
            let theta = (i as f32 * 90.0 / REFLECTANCE_STEPS as f32).to_radians();
            self.reflectance.push(f(theta.cos()).max(0.0));
        }
        offset
    }

    /// The alpha textures' bytes, padded to whole u32 words (never empty: a GPU buffer
    /// cannot be).
    fn add_textures(&mut self, scene: &Scene) -> Result<(), TablesError> {
        for (i, tex) in scene.alpha_textures.iter().enumerate() {
            if tex.width == 0
                || tex.height == 0
                || tex.alpha.len() != (tex.width * tex.height) as usize
            {
                return Err(TablesError::AlphaTextureSize {
                    texture: i,
                    width: tex.width,
                    height: tex.height,
                    bytes: tex.alpha.len(),
                });
            }
            self.textures.push(AlphaTexture {
                offset: self.texels.len() as u32,
                width: tex.width,
                height: tex.height,
                wrap_s: tex.wrap_s,
                wrap_t: tex.wrap_t,
            });
            self.texels.extend_from_slice(&tex.alpha);
        }
        while !self.texels.len().is_multiple_of(4) || self.texels.is_empty() {
            self.texels.push(0);
        }
        Ok(())
    }

    /// What the shaders know of primitive `(mesh, primitive)`; materials and textures
    /// must already be in the tables.
    fn geometry(
        &self,
        scene: &Scene,
        material_map: &[u32],
        (mesh, primitive): (usize, usize),
        p: &Primitive,
    ) -> Result<GeometryInfo, TablesError> {
        let out_of_range = |count: usize| TablesError::MaterialOutOfRange {
            mesh,
            primitive,
            material: p.material,
            count,
        };
        let ir = *material_map
            .get(p.material as usize)
            .ok_or_else(|| out_of_range(material_map.len()))?;
        let sm = scene
            .materials
            .get(p.material as usize)
            .ok_or_else(|| out_of_range(scene.materials.len()))?;
        let class = self
            .materials
            .get(ir as usize)
            .map(|m| m.class)
            .ok_or(TablesError::IrMaterialOutOfRange(ir))?;
        let masked = sm.alpha_mode_mask;
        let alpha_texture = match (masked, sm.alpha_texture) {
            (true, Some(i)) if (i as usize) < self.textures.len() && !p.uvs.is_empty() => Some(i),
            _ => None,
        };
        Ok(GeometryInfo {
            material: ir,
            class,
            masked,
            alpha_texture,
            alpha_cutoff: if masked { sm.alpha_cutoff } else { 0.0 },
            alpha_factor: sm.base_color[3],
        })
    }

    /// R(θ) of material `m` exactly as the shaders interpolate it.
    pub fn reflectance(&self, m: u32, cos_theta: f32) -> f32 {
        self.sample(self.materials[m as usize].table_offset, cos_theta)
    }

    /// The diffuse part of R(θ) of material `m` (what sunlight sees), exactly as the
    /// shaders interpolate it.
    pub fn diffuse_reflectance(&self, m: u32, cos_theta: f32) -> f32 {
        self.sample(self.materials[m as usize].diffuse_offset, cos_theta)
    }

    /// The share of the power one crossing of pane `m` passes at incidence cos θ, exactly
    /// as the shaders interpolate it (the GLSL `pane_transmission`).
    pub fn pane_transmission(&self, m: u32, cos_theta: f32) -> f32 {
        self.sample(self.materials[m as usize].pane_offset, cos_theta)
    }

    /// The share of the power pane `m` sends on in the mirror direction at incidence
    /// cos θ, exactly as the shaders interpolate it (the GLSL `pane_reflection`).
    pub fn pane_reflection(&self, m: u32, cos_theta: f32) -> f32 {
        let offset = self.materials[m as usize].pane_offset + REFLECTANCE_STEPS + 1;
        self.sample(offset, cos_theta)
    }

    /// The table starting at `offset`, linear in θ between its 0.25° samples (the GLSL
    /// `table_sample`).
    fn sample(&self, offset: u32, cos_theta: f32) -> f32 {
        let theta_deg = cos_theta.clamp(0.0, 1.0).acos().to_degrees();
        let x = theta_deg * (REFLECTANCE_STEPS as f32 / 90.0);
        let i = (x as u32).min(REFLECTANCE_STEPS - 1);
        let f = (x - i as f32).clamp(0.0, 1.0);
        let o = (offset + i) as usize;
        let (a, b) = (self.reflectance[o], self.reflectance[o + 1]);
        a + (b - a) * f
    }

    /// Whether geometry `g`'s alpha mask keeps a hit at `uv` (the GLSL `alpha_keeps`).
    pub fn alpha_keeps(&self, g: &GeometryInfo, uv: Option<glam::Vec2>) -> bool {
        match (g.alpha_texture, uv) {
            (Some(i), Some(uv)) => self.sample_alpha(i, uv) * g.alpha_factor >= g.alpha_cutoff,
            _ => g.alpha_factor >= g.alpha_cutoff,
        }
    }

    /// Nearest-texel alpha, glTF uv (0, 0) at the image's top-left (the GLSL twin).
    pub fn sample_alpha(&self, texture: u32, uv: glam::Vec2) -> f32 {
        let t = &self.textures[texture as usize];
        let x = wrap_texel(
            (uv.x * t.width as f32).floor() as i32,
            t.width as i32,
            t.wrap_s,
        );
        let y = wrap_texel(
            (uv.y * t.height as f32).floor() as i32,
            t.height as i32,
            t.wrap_t,
        );
        let i = t.offset as usize + y as usize * t.width as usize + x as usize;
        self.texels[i] as f32 / 255.0
    }

    pub fn material_class(&self, m: u32) -> MaterialClass {
        self.materials[m as usize].class
    }

    /// Record slots per sub-ray this scene needs when a path may meet `max_bounces`
    /// surfaces. Single bounce: 1 without glass; with glass, the opaque hit plus up to
    /// two transparent surfaces in front of it (a car's windscreen and rear window, a
    /// shop window and its inner pane). With bounces, that many per surface a path
    /// meets, twice over where refracting panes split paths in two, up to
    /// [`MAX_RECORD_SLOTS`]: the weakest branches of a deep tree are the ones left out.
    /// Fewer slots, less memory and waveform work.
    pub fn record_slots(&self, max_bounces: u32) -> u32 {
        let glass = self
            .geometries
            .iter()
            .any(|g| g.class == MaterialClass::Transparent);
        let per_surface = if glass { 3 } else { 1 };
        if max_bounces <= 1 {
            return per_surface;
        }
        let splits = self
            .geometries
            .iter()
            .any(|g| self.materials[g.material as usize].ior > 0.0);
        let branches = if splits { 2 } else { 1 };
        (per_surface * max_bounces * branches).min(MAX_RECORD_SLOTS)
    }
}

fn wrap_texel(i: i32, n: i32, mode: u32) -> i32 {
    match mode {
        33071 => i.clamp(0, n - 1),
        33648 => {
            let period = 2 * n;
            let k = i.rem_euclid(period);
            if k < n {
                k
            } else {
                period - 1 - k
            }
        }
        _ => i.rem_euclid(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::MaterialMapping;
    use std::path::Path;

    fn wall() -> (Scene, MaterialDb, Vec<u32>) {
        let kind = crate::scene::by_name("wall:distance=10,size=4").expect("spec");
        let doc = crate::scene::generate(&kind).expect("generate");
        let bytes = doc.to_glb(Path::new("wall")).expect("glb");
        let scene =
            crate::scene::load_from_bytes(&bytes, Path::new("wall"), Path::new(".")).expect("load");
        let db = MaterialDb::builtin().expect("database");
        let map = db
            .resolve(&scene.materials, &MaterialMapping::default())
            .expect("resolve");
        (scene, db, map)
    }

    #[test]
    fn a_scene_and_its_map_build_one_entry_per_primitive() {
        let (scene, db, map) = wall();
        let t = SceneTables::new(&scene, &db, &map).expect("tables");
        let primitives: usize = scene.meshes.iter().map(|m| m.primitives.len()).sum();
        assert!(primitives > 0);
        assert_eq!(t.geometries.len(), primitives);
        assert_eq!(t.materials.len(), db.materials.len());
        assert_eq!(
            t.reflectance.len(),
            4 * db.materials.len() * (REFLECTANCE_STEPS as usize + 1)
        );
        assert!(!t.texels.is_empty() && t.texels.len().is_multiple_of(4));
    }

    #[test]
    fn the_diffuse_table_holds_the_diffuse_part_alone() {
        // sign_reflecting (configs/materials.yaml): retro peak 800, diffuse base colour
        // 0.40. Its diffuse table is 0.40·cos θ (Lambertian); its R(θ) table carries the
        // peak too. A Lambertian 90 % target has one and the same 0.90·cos θ in both.
        let (scene, db, map) = wall();
        let t = SceneTables::new(&scene, &db, &map).expect("tables");
        let sign = db.index_of("sign_reflecting", "test").expect("sign") as u32;
        let white = db.index_of("lambertian_90", "test").expect("white") as u32;
        for c in [1.0f32, 0.9, 0.6, 0.3] {
            let d = t.diffuse_reflectance(sign, c);
            assert!((d - 0.40 * c).abs() < 1e-4, "sign at cos {c}: diffuse {d}");
            assert!(
                t.reflectance(sign, c) > 100.0 * d,
                "sign at cos {c}: no peak"
            );
            let w = t.diffuse_reflectance(white, c);
            assert!((w - 0.90 * c).abs() < 1e-4, "white at cos {c}: diffuse {w}");
            assert_eq!(w, t.reflectance(white, c));
        }
    }

    #[test]
    fn set_materials_resamples_the_tables_and_refuses_another_class() {
        let (scene, db, map) = wall();
        let mut t = SceneTables::new(&scene, &db, &map).expect("tables");
        let white = db.index_of("lambertian_90", "test").expect("white");
        let mut brighter = db.clone();
        brighter.materials[white].reflectance = 0.45;
        t.set_materials(&brighter).expect("same classes");
        // A 45 % Lambertian target: 0.45·cos θ; the geometries are untouched.
        assert!((t.reflectance(white as u32, 0.5) - 0.225).abs() < 1e-4);
        assert_eq!(
            t.geometries,
            SceneTables::new(&scene, &db, &map).expect("t").geometries
        );
        let mut other = db.clone();
        other.materials[white].class = MaterialClass::Absorbent;
        assert_eq!(t.set_materials(&other), Err(TablesError::MaterialsChanged));
    }

    #[test]
    fn a_short_material_map_names_the_mesh_and_primitive() {
        let (scene, db, _) = wall();
        let err = SceneTables::new(&scene, &db, &[]).unwrap_err();
        let p = &scene.meshes[0].primitives[0];
        assert_eq!(
            err,
            TablesError::MaterialOutOfRange {
                mesh: 0,
                primitive: 0,
                material: p.material,
                count: 0
            }
        );
    }

    #[test]
    fn an_alpha_texture_with_the_wrong_byte_count_is_refused() {
        let (mut scene, db, map) = wall();
        scene.alpha_textures.push(crate::scene::AlphaTexture {
            width: 2,
            height: 2,
            alpha: vec![255; 3],
            wrap_s: crate::scene::WRAP_REPEAT,
            wrap_t: crate::scene::WRAP_REPEAT,
        });
        let err = SceneTables::new(&scene, &db, &map).unwrap_err();
        assert!(
            err.to_string().contains("2×2 texels holds 3 bytes"),
            "{err}"
        );
    }
}
