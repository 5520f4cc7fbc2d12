use super::*;
use crate::scene::SceneMaterial;

fn db() -> MaterialDb {
    MaterialDb::builtin().expect("builtin database parses")
}

fn mat<'a>(db: &'a MaterialDb, name: &str) -> &'a IrMaterial {
    &db.materials[db.index_of(name, "test").expect(name)]
}

fn cos_deg(deg: f32) -> f32 {
    deg.to_radians().cos()
}

fn parse_err(text: &str) -> String {
    MaterialDb::from_text(text, Path::new("m.yaml"))
        .expect_err("the database must be rejected")
        .to_string()
}

const HEAD: &str = "wavelength_nm: 905\ndefault: a\nmaterials:\n";

/// The 21 distinct subclasses of paper 003 Table 1 (glass and metal serve both the
/// vehicle and the construction class).
const TABLE_1: [&str; 21] = [
    "paint",
    "metal",
    "glass",
    "plastic",
    "license_plate",
    "reflector",
    "rubber",
    "skin",
    "clothing",
    "fur",
    "asphalt",
    "road_marking",
    "offroad_track",
    "sign_reflecting",
    "sign_non_reflecting",
    "concrete",
    "wood",
    "rock",
    "soil",
    "vegetation",
    "dry_vegetation",
];

#[test]
fn builtin_has_every_table_1_subclass_and_scene_name() {
    let db = db();
    for name in TABLE_1 {
        db.index_of(name, "test").expect(name);
    }
    for name in [
        "lambertian_10",
        "lambertian_50",
        "lambertian_90",
        "generic",
        "black_absorber",
    ] {
        db.index_of(name, "test").expect(name);
    }
    assert_eq!(db.materials[db.default_index()].name, "generic");
    // Names are unique, so glass and metal are one entry each.
    let mut names = db.names();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), db.materials.len());
    assert!(db.materials.iter().all(|m| !m.source.trim().is_empty()));
}

#[test]
fn builtin_classes() {
    let db = db();
    for name in ["sign_reflecting", "license_plate", "reflector"] {
        assert_eq!(
            mat(&db, name).class,
            MaterialClass::Retroreflective,
            "{name}"
        );
    }
    assert_eq!(mat(&db, "glass").class, MaterialClass::Transparent);
    assert_eq!(mat(&db, "black_absorber").class, MaterialClass::Absorbent);
    for name in [
        "asphalt",
        "paint",
        "road_marking",
        "lambertian_10",
        "generic",
    ] {
        assert_eq!(mat(&db, name).class, MaterialClass::General, "{name}");
    }
}

#[test]
fn lambertian_is_rho_cos_theta_exactly() {
    let db = db();
    let m = mat(&db, "lambertian_50");
    assert!(m.angle_table.is_none() && m.specular.is_none());
    for deg in [0.0_f32, 10.0, 33.0, 60.0, 89.0] {
        let c = cos_deg(deg);
        assert_eq!(m.reflectance_at(c), 0.5 * c, "{deg}°");
    }
    assert_eq!(m.reflectance_at(0.0), 0.0);
    assert_eq!(m.reflectance_at(-0.5), 0.0, "seen from behind");
}

#[test]
fn angle_table_interpolates_linearly_in_theta() {
    let text = format!(
        "{HEAD}  a: {{ angle_table: [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2], source: t }}\n"
    );
    let db = MaterialDb::from_text(&text, Path::new("m.yaml")).expect("parses");
    let m = &db.materials[0];
    assert_eq!(m.reflectance, 1.0, "reflectance = table[0]");
    // Expected values are linear in θ; f32 acos loses ~1e-5° → 1e-6 in R.
    for (deg, want) in [
        (0.0, 1.0),
        (5.0, 0.95),
        (45.0, 0.55),
        (80.0, 0.2),
        (85.0, 0.1),
        (90.0, 0.0),
    ] {
        let got = m.reflectance_at(cos_deg(deg));
        assert!((got - want).abs() < 2e-5, "{deg}°: {got} vs {want}");
    }
}

#[test]
fn specular_lobe_adds_a_near_normal_glint() {
    let text = format!(
        "{HEAD}  a: {{ reflectance: 0.2, specular: {{ strength: 0.5, exponent: 100 }}, source: t }}\n"
    );
    let db = MaterialDb::from_text(&text, Path::new("m.yaml")).expect("parses");
    let m = &db.materials[0];
    assert!((m.reflectance_at(1.0) - 0.7).abs() < 1e-6);
    let c = cos_deg(5.0);
    let want = 0.2 * c + 0.5 * c.powf(100.0);
    assert!((m.reflectance_at(c) - want).abs() < 1e-6);
    // At 30° the glint is gone (0.5·cos^100 30° ≈ 3e-7).
    assert!((m.reflectance_at(cos_deg(30.0)) - 0.2 * cos_deg(30.0)).abs() < 1e-5);
    assert_eq!(m.diffuse_reflectance_at(1.0), 0.2);
}

#[test]
fn retroreflectors_are_hundreds_of_times_a_white_target_and_fall_slowly() {
    let db = db();
    let white = mat(&db, "lambertian_90").reflectance_at(1.0);
    for name in ["sign_reflecting", "license_plate", "reflector"] {
        let m = mat(&db, name);
        let r0 = m.reflectance_at(1.0);
        assert!(r0 >= 100.0 * white, "{name}: {r0} vs white {white}");
        assert!((r0 - (m.peak + m.reflectance)).abs() < 1e-3 * r0);
        // The retro part halves at falloff_deg.
        let c = cos_deg(m.falloff_deg);
        let retro = m.reflectance_at(c) - m.reflectance * c;
        assert!(
            (retro / m.peak - 0.5).abs() < 1e-4,
            "{name}: {retro} at {}°",
            m.falloff_deg
        );
        // Slow: still ≥ 60 % of the peak at 20°, monotone down to grazing.
        assert!(m.reflectance_at(cos_deg(20.0)) >= 0.6 * m.peak, "{name}");
        let mut last = f32::INFINITY;
        for deg in (0..90).map(|d| d as f32) {
            let r = m.reflectance_at(cos_deg(deg));
            assert!(r <= last, "{name} not monotone at {deg}°");
            last = r;
        }
        // The sun sees the diffuse base only.
        assert!((m.diffuse_reflectance_at(1.0) - m.reflectance).abs() < 1e-6);
    }
    let sign = mat(&db, "sign_reflecting");
    assert!((sign.retro_exponent() - 3.4747).abs() < 1e-3);
}

#[test]
fn glass_is_weak_but_detectable_and_transmits() {
    let db = db();
    let glass = mat(&db, "glass");
    let wall = mat(&db, "lambertian_10");
    let r0 = glass.reflectance_at(1.0);
    assert!((r0 - 0.04).abs() < 1e-6, "R(0) = G·F0 = 0.04, got {r0}");
    assert!(
        r0 <= 0.5 * wall.reflectance_at(1.0),
        "clearly weaker than a 10 % wall"
    );
    // Threshold of a 10 %-at-120 m sensor: T = 0.1/120²; at 10 m the pane's signal R/r².
    let threshold = 0.1 / (120.0_f32 * 120.0);
    assert!(
        r0 / 100.0 > 10.0 * threshold,
        "detectable at 10 m with margin"
    );
    // Oblique panes are looked through: 45° is > 100x weaker than normal.
    assert!(glass.reflectance_at(cos_deg(45.0)) < r0 / 100.0);
    assert!(glass.is_transparent());
    assert_eq!(glass.transmission(), 0.9);
    assert!((glass.two_way_transmission() - 0.81).abs() < 1e-6);
    assert_eq!(mat(&db, "asphalt").transmission(), 0.0, "opaque");
    assert_eq!(mat(&db, "sign_reflecting").transmission(), 0.0);
    // Schlick: F(0) = F0, F(90°) = 1.
    assert!((glass.fresnel(1.0) - 0.04).abs() < 1e-7);
    assert!((glass.fresnel(0.0) - 1.0).abs() < 1e-7);
}

#[test]
fn absorber_returns_nothing() {
    let db = db();
    let m = mat(&db, "black_absorber");
    assert!(m.is_absorbent() && !m.is_transparent());
    for deg in [0.0_f32, 30.0, 80.0] {
        assert_eq!(m.reflectance_at(cos_deg(deg)), 0.0);
        assert_eq!(m.diffuse_reflectance_at(cos_deg(deg)), 0.0);
    }
    assert_eq!(m.transmission(), 0.0);
}

#[test]
fn every_builtin_value_is_finite_and_non_negative_at_every_wavelength() {
    let base = db();
    for db in [base.clone(), base.for_wavelength(1550.0)] {
        for m in &db.materials {
            for deg in 0..=90 {
                let c = cos_deg(deg as f32);
                for r in [m.reflectance_at(c), m.diffuse_reflectance_at(c)] {
                    assert!(r.is_finite() && r >= 0.0, "{} at {deg}°: {r}", m.name);
                }
            }
            assert!((0.0..=1.0).contains(&m.transmission()), "{}", m.name);
            if let Some(t) = m.angle_table {
                assert_eq!(t[0], m.reflectance, "{}", m.name);
            }
        }
    }
}

#[test]
fn wavelength_selection_picks_the_nearest_within_50_nm() {
    let base = db();
    let at = base.for_wavelength(1550.0);
    assert_eq!(at.wavelength_nm, 1550.0);
    assert_eq!(at.names(), base.names(), "indices unchanged");
    let veg = mat(&at, "vegetation");
    assert_eq!(veg.values_nm, 1550.0);
    assert!((veg.reflectance - 0.231).abs() < 1e-6);
    // The table keeps its shape: every bin scaled by 0.231/0.45.
    let veg905 = mat(&base, "vegetation");
    let (t, t905) = (
        veg.angle_table.expect("table"),
        veg905.angle_table.expect("table"),
    );
    for i in 0..ANGLE_TABLE_BINS {
        assert!((t[i] - t905[i] * 0.231 / 0.45).abs() < 1e-6, "bin {i}");
    }
    assert!((mat(&at, "glass").reflectance_normal - 0.0385).abs() < 1e-7);
    assert_eq!(mat(&at, "glass").transmission, 0.9, "not given: kept");
    // No 1550 nm values for asphalt: the 905 nm ones stay.
    assert_eq!(mat(&at, "asphalt").values_nm, 905.0);
    assert_eq!(mat(&at, "asphalt"), mat(&base, "asphalt"));
    // 30 nm away still counts; 60 nm away does not.
    assert_eq!(
        mat(&base.for_wavelength(1520.0), "vegetation").values_nm,
        1550.0
    );
    assert_eq!(
        mat(&base.for_wavelength(1490.0), "vegetation").values_nm,
        905.0
    );
    assert_eq!(
        mat(&base.for_wavelength(940.0), "vegetation").values_nm,
        905.0
    );
    // Choosing again starts from the file's values.
    let back = at.for_wavelength(905.0);
    assert_eq!(back.materials, base.materials);
    assert_eq!(back.default_index(), base.default_index());
}

#[test]
fn wavelength_entry_may_replace_the_table_and_class_parameters() {
    let text = format!(
        "{HEAD}  a:\n    class: retroreflective\n    peak: 500\n    falloff_deg: 30\n    \
         source: t\n    at_wavelength:\n      1550: {{ peak: 300, source: u }}\n      \
         1064: {{ falloff_deg: 20, source: v }}\n"
    );
    let db = MaterialDb::from_text(&text, Path::new("m.yaml")).expect("parses");
    let m = &db.materials[0];
    assert_eq!(m.wavelengths(), vec![905.0, 1064.0, 1550.0]);
    let a = &db.for_wavelength(1550.0).materials[0];
    assert_eq!((a.peak, a.falloff_deg, a.values_nm), (300.0, 30.0, 1550.0));
    assert!(a.source.contains('u') && a.source.contains("905"));
    let b = &db.for_wavelength(1064.0).materials[0];
    assert_eq!((b.peak, b.falloff_deg), (500.0, 20.0));
}

#[test]
fn unknown_class_names_line_and_field() {
    let err = parse_err(&format!("{HEAD}  a: {{ class: lens, source: t }}\n"));
    assert!(err.starts_with("m.yaml:4:"), "{err}");
    assert!(
        err.contains("materials.a.class") && err.contains("lens"),
        "{err}"
    );
    assert!(err.contains("retroreflective"), "lists the classes: {err}");
}

#[test]
fn unknown_field_names_line_and_field() {
    let err = parse_err(&format!(
        "{HEAD}  a:\n    reflectance: 0.3\n    colour: red\n    source: t\n"
    ));
    assert!(err.starts_with("m.yaml:6:"), "{err}");
    assert!(
        err.contains("colour") && err.contains("materials.a"),
        "{err}"
    );
}

#[test]
fn a_mirror_returns_weakly_and_sends_its_reflectance_on() {
    let db = db();
    let m = mat(&db, "mirror");
    assert_eq!(m.class, MaterialClass::Mirror);
    assert!((m.mirror_reflectance - 0.9).abs() < 1e-6);
    // Direct return: 1 % dust·cos θ plus the 0.5·cos^200 θ glint, as a general surface.
    let c = cos_deg(30.0);
    assert!((m.reflectance_at(c) - (0.01 * c + 0.5 * c.powf(200.0))).abs() < 1e-6);
    let solid = mat(&db, "glass_solid");
    assert_eq!(solid.ior, Some(1.51));
    assert_eq!(mat(&db, "glass").ior, None, "thin panes pass straight");
}

#[test]
fn mirror_and_refraction_parameters_are_checked() {
    let missing = parse_err(&format!("{HEAD}  a:\n    class: mirror\n    source: t\n"));
    assert!(missing.contains("mirror_reflectance"), "{missing}");
    let over = parse_err(&format!(
        "{HEAD}  a:\n    class: mirror\n    mirror_reflectance: 0.95\n    reflectance: 0.1\n    source: t\n"
    ));
    assert!(over.contains("exceeds 1"), "{over}");
    let foreign = parse_err(&format!(
        "{HEAD}  a:\n    reflectance: 0.3\n    ior: 1.5\n    source: t\n"
    ));
    assert!(
        foreign.contains("`ior` is not a parameter of class general"),
        "{foreign}"
    );
    let bad_ior = parse_err(&format!(
        "{HEAD}  a:\n    class: transparent\n    reflectance_normal: 0.04\n    transmission: 0.9\n    ior: 0.5\n    source: t\n"
    ));
    assert!(
        bad_ior.starts_with("m.yaml:8:") && bad_ior.contains("index of refraction"),
        "{bad_ior}"
    );
}

#[test]
fn class_parameters_are_required_and_checked() {
    let missing = parse_err(&format!(
        "{HEAD}  a:\n    class: retroreflective\n    falloff_deg: 30\n    source: t\n"
    ));
    assert!(missing.starts_with("m.yaml:"), "{missing}");
    assert!(
        missing.contains("materials.a") && missing.contains("requires `peak`"),
        "{missing}"
    );
    let foreign = parse_err(&format!(
        "{HEAD}  a: {{ reflectance: 0.3, peak: 5, source: t }}\n"
    ));
    assert!(
        foreign.contains("`peak`") && foreign.contains("general"),
        "{foreign}"
    );
    let no_r = parse_err(&format!("{HEAD}  a: {{ source: t }}\n"));
    assert!(no_r.contains("requires `reflectance`"), "{no_r}");
    let mismatch = parse_err(&format!(
        "{HEAD}  a: {{ reflectance: 0.5, angle_table: [0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4], source: t }}\n"
    ));
    assert!(mismatch.contains("angle_table[0]"), "{mismatch}");
    let energy = parse_err(&format!(
        "{HEAD}  a: {{ class: transparent, reflectance_normal: 0.2, transmission: 0.9, source: t }}\n"
    ));
    // F0 0.2: the faces reflect 2·0.2/1.2, so at most 0.8/1.2 = 0.667 passes.
    assert!(energy.contains("exceeds 0.6667"), "{energy}");
    let absorber = parse_err(&format!(
        "{HEAD}  a: {{ class: absorbent, reflectance: 0.1, source: t }}\n"
    ));
    assert!(absorber.contains("no parameters"), "{absorber}");
    let wl = parse_err(&format!(
        "{HEAD}  a:\n    reflectance: 0.3\n    source: t\n    at_wavelength:\n      1550: {{ peak: 3, source: u }}\n"
    ));
    assert!(
        wl.contains("at_wavelength.1550") && wl.contains("`peak`"),
        "{wl}"
    );
    let own = parse_err(&format!(
        "{HEAD}  a:\n    reflectance: 0.3\n    source: t\n    at_wavelength:\n      905: {{ reflectance: 0.2, source: u }}\n"
    ));
    assert!(own.contains("materials.a.at_wavelength.905"), "{own}");
}

#[test]
fn out_of_range_values_name_their_field_and_line() {
    let neg = parse_err(&format!("{HEAD}  a: {{ reflectance: -1, source: x }}\n"));
    assert!(neg.contains("materials.a.reflectance"), "{neg}");
    assert!(neg.starts_with("m.yaml:4:"), "{neg}");
    let nan = parse_err(&format!("{HEAD}  a: {{ reflectance: .nan, source: x }}\n"));
    assert!(nan.contains("materials.a.reflectance"), "{nan}");
    let falloff = parse_err(&format!(
        "{HEAD}  a:\n    class: retroreflective\n    peak: 100\n    falloff_deg: 90\n    source: t\n"
    ));
    assert!(falloff.contains("materials.a.falloff_deg"), "{falloff}");
    assert!(falloff.starts_with("m.yaml:7:"), "{falloff}");
    let t = parse_err(&format!(
        "{HEAD}  a: {{ class: transparent, reflectance_normal: 0.04, transmission: 1.2, source: t }}\n"
    ));
    assert!(t.contains("materials.a.transmission"), "{t}");
    let short = parse_err(&format!(
        "{HEAD}  a: {{ angle_table: [0.4, 0.3], source: t }}\n"
    ));
    assert!(short.contains("materials.a.angle_table"), "{short}");
}

#[test]
fn resolve_order_mapping_then_extras_then_transmission_then_default() {
    let db = db();
    let material = |name: &str, ir: Option<&str>, transmission: f32| SceneMaterial {
        name: name.into(),
        ir_material: ir.map(Into::into),
        transmission,
        ..Default::default()
    };
    let mats = vec![
        material("road", Some("asphalt"), 0.0),
        material("Body", None, 0.0),
        material("Other", None, 0.0),
        material("kerb", Some("concrete"), 0.0),
        material("Window", None, 0.9),
        material("Tinted", Some("paint"), 0.9),
    ];
    let mut mapping = MaterialMapping::default();
    mapping.entries.insert("Body".into(), "paint".into());
    mapping.entries.insert("road".into(), "concrete".into());
    mapping.entries.insert("kerb".into(), "concrete".into());
    let idx = db.resolve(&mats, &mapping).expect("resolves");
    let names: Vec<&str> = idx
        .iter()
        .map(|&i| db.materials[i as usize].name.as_str())
        .collect();
    // The map overrides the file's extras; transmission picks the transparent glass.
    assert_eq!(names[0], "concrete");
    assert_eq!(names[1], "paint");
    assert_eq!(idx[2] as usize, db.default_index());
    assert_eq!(names[3], "concrete");
    assert_eq!(names[4], "glass");
    assert_eq!(
        db.materials[idx[4] as usize].class,
        MaterialClass::Transparent
    );
    assert_eq!(names[5], "paint");
    // Only "road" has the map and its extras disagree ("kerb" agrees).
    assert_eq!(
        mapping.overrides(&mats),
        [MappingOverride {
            material: "road".into(),
            mapped: "concrete".into(),
            extras: "asphalt".into(),
        }]
    );
    let text = mapping.overrides(&mats)[0].to_string();
    assert!(
        text.contains("'road'") && text.contains("'concrete'") && text.contains("'asphalt'"),
        "{text}"
    );
}

#[test]
fn transmission_without_a_transparent_material_is_an_error() {
    let db = MaterialDb::from_text(
        "wavelength_nm: 905\ndefault: grey\nmaterials:\n  grey: { reflectance: 0.3, source: test }\n",
        Path::new("opaque.yaml"),
    )
    .expect("database");
    let mats = vec![SceneMaterial {
        name: "Window".into(),
        transmission: 1.0,
        ..Default::default()
    }];
    let err = db
        .resolve(&mats, &MaterialMapping::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'Window'") && err.contains("class: transparent"),
        "{err}"
    );
}

#[test]
fn unknown_material_lists_known_ones() {
    let db = db();
    let mats = vec![SceneMaterial {
        name: "x".into(),
        ir_material: Some("unobtanium".into()),
        ..Default::default()
    }];
    let err = db
        .resolve(&mats, &MaterialMapping::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unobtanium") && err.contains("asphalt"),
        "{err}"
    );
}

/// Unpolarised Fresnel reflectance from air into index `n` at incidence `deg`, written
/// out from the s and p amplitudes (Born & Wolf §1.5.2) for the tests below.
fn fresnel_air(deg: f32, n: f32) -> f32 {
    let (si, ci) = (deg.to_radians().sin(), deg.to_radians().cos());
    let st = si / n;
    let ct = (1.0 - st * st).sqrt();
    let rs = (ci - n * ct) / (ci + n * ct);
    let rp = (ct - n * ci) / (ct + n * ci);
    (rs * rs + rp * rp) / 2.0
}

#[test]
fn a_thin_pane_passes_what_fresnel_leaves_at_every_angle() {
    // A lossless thin pane of n = 1.5 (F0 = 0.04) passes (1 − F)/(1 + F) and reflects
    // 2F/(1 + F): the incoherent sum over the reflections between its two faces.
    let lossless = (1.0 - 0.04) / (1.0 + 0.04);
    let text = format!(
        "{HEAD}  a: {{ class: transparent, reflectance_normal: 0.04, transmission: {lossless}, source: t }}\n"
    );
    let db = MaterialDb::from_text(&text, Path::new("m.yaml")).expect("database");
    let pane = mat(&db, "a");
    for deg in (0..=85).step_by(5).map(|d| d as f32) {
        let f = fresnel_air(deg, 1.5);
        let (t, r) = (
            pane.pane_transmission(cos_deg(deg)),
            pane.pane_reflection(cos_deg(deg)),
        );
        assert!((t - (1.0 - f) / (1.0 + f)).abs() < 1e-5, "{deg}°: T {t}");
        assert!((r - 2.0 * f / (1.0 + f)).abs() < 1e-5, "{deg}°: R {r}");
        assert!((t + r - 1.0).abs() < 1e-5, "{deg}°: T + R = {}", t + r);
    }
    // Brewster's angle, atan 1.5: only the s wave reflects, Rs = sin²(θi − θt)/sin²(θi + θt).
    let b = 1.5f32.atan();
    let t_b = (b.sin() / 1.5).asin();
    let rs = ((b - t_b).sin() / (b + t_b).sin()).powi(2);
    let f = rs / 2.0;
    assert!((pane.pane_reflection(b.cos()) - 2.0 * f / (1.0 + f)).abs() < 1e-5);
}

#[test]
fn bundled_glass_absorbs_along_its_path_and_passes_its_sheet_value_head_on() {
    // configs/materials.yaml: glass passes 0.90 at normal incidence. Off normal, the
    // faces pass (1 − F)/(1 + F) and the bulk τ^(1/cos θt), τ = 0.90/(0.96/1.04).
    let db = db();
    let glass = mat(&db, "glass");
    assert!((glass.pane_transmission(1.0) - 0.90).abs() < 1e-5);
    let tau = 0.90f32 / (0.96 / 1.04);
    for deg in [30.0f32, 60.0, 70.0, 80.0] {
        let f = fresnel_air(deg, 1.5);
        let cos_t = (1.0 - (deg.to_radians().sin() / 1.5).powi(2)).sqrt();
        let want = (1.0 - f) / (1.0 + f) * tau.powf(1.0 / cos_t);
        let got = glass.pane_transmission(cos_deg(deg));
        assert!((got - want).abs() < 1e-4, "{deg}°: T {got}, want {want}");
    }
    // At 70° a pane passes about 20 % less than head on, not the same share.
    assert!(glass.pane_transmission(cos_deg(70.0)) < 0.8 * 0.90);
}

#[test]
fn no_material_sends_on_more_power_than_reaches_it() {
    // Energy at one hit: what is scattered diffusely (the albedo, R(0°) of the diffuse
    // part), sent on in the mirror direction (a mirror's share, a pane's reflection) and
    // passed through (a pane's transmission) is at most what arrives, at every incidence,
    // for every bundled material at every wavelength it has. (Glints and retroreflection
    // redistribute the same albedo into a narrow cone; they carry no power of their own.)
    let base = db();
    let mut wavelengths: Vec<f32> = base
        .materials
        .iter()
        .flat_map(|m| m.wavelengths())
        .collect();
    wavelengths.sort_by(f32::total_cmp);
    wavelengths.dedup();
    for nm in wavelengths {
        let db = base.for_wavelength(nm);
        for m in &db.materials {
            for deg in (0..90).map(|d| d as f32) {
                let c = cos_deg(deg);
                let diffuse = m.diffuse_reflectance_at(1.0);
                let out =
                    diffuse + m.mirror_reflectance + m.pane_reflection(c) + m.pane_transmission(c);
                assert!(
                    out <= 1.0 + 1e-6,
                    "{} at {nm} nm, {deg}°: sends on {out} of 1 (diffuse {diffuse}, mirror {}, \
                     pane R {}, pane T {})",
                    m.name,
                    m.mirror_reflectance,
                    m.pane_reflection(c),
                    m.pane_transmission(c)
                );
            }
        }
    }
}
