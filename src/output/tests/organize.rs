use super::*;

/// `rings` × `columns` beams, column-major as the spinning presets fire them: column c
/// at azimuth 170° − 10°·c, ring r (0 = top) at elevation 10° − 5°·r.
fn grid_layout(rings: u32, columns: u32) -> BeamLayout {
    let mut beams = Vec::new();
    for c in 0..columns {
        for r in 0..rings {
            beams.push(BeamDesc {
                ring: r,
                azimuth: (170.0 - 10.0 * c as f32).to_radians(),
                elevation: (10.0 - 5.0 * r as f32).to_radians(),
                time: 0.01 * c as f32,
                origin_offset: 0.0,
                origin_azimuth: 0.0,
            });
        }
    }
    BeamLayout::new(beams, columns)
}

/// A return of beam `beam`: its index and intensity, x = a tag to find it by.
fn point(beam: u32, return_index: u16, intensity: f32, tag: f32) -> Point {
    Point {
        x: tag,
        y: 0.0,
        z: 0.0,
        beam,
        return_index,
        intensity,
        ..Point::default()
    }
}

fn tags(c: &OrganizedCloud) -> Vec<Option<f32>> {
    c.cloud
        .points
        .iter()
        .map(|p| (!p.x.is_nan()).then_some(p.x))
        .collect()
}

#[test]
fn vlp16_rings_count_up_from_the_lowest_laser_as_velodyne_pointcloud_does() {
    // VLP-16 manual, laser id → elevation: −15, 1, −13, 3, −11, 5, −9, 7, −7, 9, −5,
    // 11, −3, 13, −1, 15. velodyne_pointcloud's laser_ring sorts by elevation: the
    // even ids are rings 0..7 (−15 … −1), the odd ids rings 8..15 (1 … 15).
    let elev = [-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15];
    let expected_ring = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15];
    let beams: Vec<BeamDesc> = (0..2)
        .flat_map(|c| {
            elev.iter().enumerate().map(move |(id, &e)| BeamDesc {
                ring: id as u32,
                azimuth: if c == 0 { 1.0 } else { 0.5 },
                elevation: (e as f32).to_radians(),
                time: 0.0,
                origin_offset: 0.0,
                origin_azimuth: 0.0,
            })
        })
        .collect();
    let layout = BeamLayout::new(beams, 2);
    for id in 0..16 {
        let info = layout.info(id).unwrap();
        assert_eq!(
            info.ring_from_bottom, expected_ring[id as usize],
            "laser {id}"
        );
        assert_eq!(
            info.ring_from_top,
            15 - expected_ring[id as usize],
            "laser {id}"
        );
    }
    assert_eq!(layout.grid(), Ok((16, 2)));
    assert!(layout.info(32).unwrap_err().contains("beam 32"));
}

#[test]
fn ring_rows_put_each_return_in_its_cell_and_layer_and_nan_elsewhere() {
    // 3 rings × 4 columns; beam b = column·3 + ring. Beam 4 (column 1, ring 1) has two
    // echoes, beam 11 (column 3, ring 2) one.
    let layout = grid_layout(3, 4);
    let cloud = PointCloud {
        points: vec![
            point(11, 0, 0.5, 7.0),
            point(4, 1, 0.2, 2.0),
            point(4, 0, 0.9, 1.0),
        ],
    };
    let how = Organize {
        style: GridStyle::RingRows,
        order: LayerOrder::Nearest,
        layers: 2,
    };
    let files = organize(&cloud, &layout, how).unwrap();
    assert_eq!(files.len(), 2);
    let (w, h) = (files[0].width, files[0].height);
    assert_eq!((w, h), (4, 3));
    let mut first = vec![None; 12];
    first[w + 1] = Some(1.0); // row 1, column 1
    first[2 * w + 3] = Some(7.0); // row 2, column 3
    assert_eq!(tags(&files[0]), first);
    let mut second = vec![None; 12];
    second[w + 1] = Some(2.0);
    assert_eq!(tags(&files[1]), second);
    // An empty cell keeps its beam's identity and says it has no return.
    let empty = files[0].cloud.points[0];
    assert_eq!((empty.beam, empty.ring, empty.return_count), (0, 0, 0));
    assert!(empty.intensity.is_nan() && empty.range.is_nan());
    assert_eq!(empty.azimuth, 170f32.to_radians());
    let right = files[0].cloud.points[3];
    assert_eq!((right.beam, right.time), (9, 0.03));
}

#[test]
fn strongest_first_puts_the_echo_of_the_larger_peak_in_the_first_layer() {
    // Strongest as the detector (and Ouster's packets) rank it: the peak R_app/r², not
    // R_app — a bright far echo can be the weaker one.
    let layout = grid_layout(3, 4);
    let at = |range: f32, p: Point| Point { range, ..p };
    let cloud = PointCloud {
        points: vec![
            at(2.0, point(4, 0, 0.2, 1.0)),
            at(5.0, point(4, 1, 0.9, 2.0)),
            at(2.0, point(7, 0, 0.2, 3.0)),
            at(3.0, point(7, 1, 0.9, 4.0)),
        ],
    };
    let how = Organize {
        style: GridStyle::RingRows,
        order: LayerOrder::Strongest,
        layers: 2,
    };
    let files = organize(&cloud, &layout, how).unwrap();
    // Beam 4: 0.2/4 = 0.05 beats 0.9/25 = 0.036; beam 7: 0.9/9 = 0.1 beats 0.05.
    assert_eq!(tags(&files[0])[4 + 1], Some(1.0));
    assert_eq!(tags(&files[1])[4 + 1], Some(2.0));
    assert_eq!(tags(&files[0])[4 + 2], Some(4.0));
    assert_eq!(tags(&files[1])[4 + 2], Some(3.0));
}

#[test]
fn firing_rows_are_one_row_per_column_and_layer_rings_from_the_bottom() {
    // velodyne_pointcloud's layout: WIDTH = rings with the lowest at 0, a row per
    // firing; a column's return layers follow one another, the last echo first.
    let layout = grid_layout(3, 4);
    let cloud = PointCloud {
        points: vec![point(4, 0, 0.9, 1.0), point(4, 1, 0.2, 2.0)],
    };
    let how = Organize {
        style: GridStyle::FiringRows,
        order: LayerOrder::Last,
        layers: 2,
    };
    let files = organize(&cloud, &layout, how).unwrap();
    assert_eq!(files.len(), 1);
    let f = &files[0];
    assert_eq!((f.width, f.height), (3, 8));
    // Beam 4: column 1, ring 1 (the middle one, rank 1 from the bottom too).
    let mut expected = vec![None; 24];
    expected[2 * 3 + 1] = Some(2.0); // row 2 = column 1, layer 0: the last echo
    expected[3 * 3 + 1] = Some(1.0); // row 3 = column 1, layer 1
    assert_eq!(tags(f), expected);
    // Ring rank from the bottom: beam 0 (ring 0, the top) sits in the last column.
    assert_eq!(f.cloud.points[2].beam, 0);
}

#[test]
fn more_returns_than_layers_or_two_points_in_a_cell_are_errors() {
    let layout = grid_layout(3, 4);
    let how = Organize {
        style: GridStyle::RingRows,
        order: LayerOrder::Nearest,
        layers: 1,
    };
    let two = PointCloud {
        points: vec![point(4, 0, 0.9, 1.0), point(4, 1, 0.2, 2.0)],
    };
    let e = organize(&two, &layout, how).unwrap_err().to_string();
    assert!(e.contains("beam 4 has more than 1 returns"), "{e}");
    let stray = PointCloud {
        points: vec![point(99, 0, 0.9, 1.0)],
    };
    let e = organize(&stray, &layout, how).unwrap_err().to_string();
    assert!(e.contains("beam 99"), "{e}");
}

#[test]
fn patterns_that_are_not_grids_are_named_as_such() {
    // A rosette (one ring, no columns) and a 4 × 2 grid missing a beam.
    let scattered: Vec<BeamDesc> = (0..50)
        .map(|i| BeamDesc {
            ring: 0,
            azimuth: (i as f32 * 0.37).sin(),
            elevation: (i as f32 * 0.11).cos() * 0.2,
            time: 0.0,
            origin_offset: 0.0,
            origin_azimuth: 0.0,
        })
        .collect();
    let mut holed: Vec<BeamDesc> = (0..8)
        .map(|i| BeamDesc {
            ring: i % 4,
            azimuth: (i / 4) as f32,
            elevation: (i % 4) as f32 * -0.1,
            time: 0.0,
            origin_offset: 0.0,
            origin_azimuth: 0.0,
        })
        .collect();
    holed.pop();
    for (beams, columns, want) in [
        (scattered, 1, "follow no columns"),
        (
            holed,
            2,
            "a ring holds 1 beams where the pattern has 2 columns",
        ),
    ] {
        let layout = BeamLayout::new(beams, columns);
        let why = layout.grid().unwrap_err();
        assert!(why.contains(want), "{why}");
        let how = Organize {
            style: GridStyle::RingRows,
            order: LayerOrder::Nearest,
            layers: 1,
        };
        let e = organize(&PointCloud::default(), &layout, how)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("grid of rings × columns") && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn ring_rows_of_a_staggered_full_turn_are_destaggered_as_ouster_sdk_does() {
    // 4 rings × 16 columns turning a full circle from +180°, ring r pointing a_r
    // clockwise of its column (Ouster's beam_azimuth_angles) and its origin on the
    // column's angle. ouster-sdk's `destagger` moves row u by pixel_shift_by_row[u] =
    // round(a_u / step) columns: beam (m, u) lands in column (m + shift_u) mod W.
    let (rings, columns) = (4u32, 16u32);
    let step = 360.0 / columns as f64;
    let offsets = [2.3 * step, 0.4 * step, -0.6 * step, -3.2 * step];
    let shifts = [2i64, 0, -1, -3];
    let wrap = |a: f64| (a + 180.0).rem_euclid(360.0) - 180.0;
    let mut beams = Vec::new();
    for m in 0..columns {
        for r in 0..rings {
            let column = 180.0 - step * m as f64;
            let az = wrap(column - offsets[r as usize]);
            beams.push(BeamDesc {
                ring: r,
                azimuth: (if az <= -180.0 { az + 360.0 } else { az }).to_radians() as f32,
                elevation: (10.0 - 5.0 * r as f32).to_radians(),
                time: 0.001 * m as f32,
                origin_offset: 0.0,
                origin_azimuth: 0.0,
            });
        }
    }
    let layout = BeamLayout::new(beams, columns);
    let cloud = PointCloud {
        points: (0..rings * columns)
            .map(|b| point(b, 0, 0.5, b as f32))
            .collect(),
    };
    let how = Organize {
        style: GridStyle::RingRows,
        order: LayerOrder::Nearest,
        layers: 1,
    };
    let files = organize(&cloud, &layout, how).unwrap();
    let got = tags(&files[0]);
    let w = columns as usize;
    for m in 0..columns as usize {
        for r in 0..rings as usize {
            let col = (m as i64 + shifts[r]).rem_euclid(w as i64) as usize;
            let beam = (m * rings as usize + r) as f32;
            assert_eq!(got[r * w + col], Some(beam), "ring {r}, column {m}");
        }
    }
    // Firing rows keep the firing order: column m is beam m's.
    let how = Organize {
        style: GridStyle::FiringRows,
        ..how
    };
    let rows = tags(&organize(&cloud, &layout, how).unwrap()[0]);
    let lowest = rings as usize - 1;
    for m in 0..w {
        assert!(rows[m * rings as usize..(m + 1) * rings as usize]
            .iter()
            .all(|t| t.is_some()));
        assert_eq!(
            rows[m * rings as usize],
            Some((m * rings as usize + lowest) as f32)
        );
    }
}
