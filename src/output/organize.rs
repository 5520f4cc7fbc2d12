//! Organized clouds: a frame's points placed on the sensor's grid of rings × columns,
//! a cell without a return holding NaN coordinates, as the ROS drivers publish them so
//! that range-image tools (`pcl_pcd2png`, neighbour searches by row and column) work.

use super::conventions::{GridStyle, LayerOrder};
use super::fields::BeamInfo;
use super::{OutputError, Point, PointCloud};
use crate::sensor::Sensor;

/// What a writer needs to know of one beam of the sensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeamDesc {
    pub ring: u32,
    pub azimuth: f32,
    pub elevation: f32,
    pub time: f32,
    /// Distance of the beam's origin from the sensor origin (m).
    pub origin_offset: f32,
    /// Azimuth of the beam's origin seen from the spin axis (rad; 0 when on it).
    pub origin_azimuth: f32,
}

/// The sensor's beams as the writers see them: each beam's ring ranks by elevation and,
/// when the pattern is a grid, its cell.
#[derive(Debug, Clone)]
pub struct BeamLayout {
    beams: Vec<BeamDesc>,
    info: Vec<BeamInfo>,
    /// `Err`: why the beams are not a grid, in words.
    grid: Result<Grid, String>,
}

/// Rows ordered from the highest ring down, columns by decreasing azimuth.
#[derive(Debug, Clone)]
struct Grid {
    rings: usize,
    columns: usize,
    /// Per beam: its column in its ring's firing order (time, then decreasing azimuth).
    column: Vec<usize>,
    /// Per beam: its column by where it points — on a full turn, ring by ring the
    /// firing column shifted by the ring's azimuth offset in whole columns (Ouster's
    /// `pixel_shift_by_row`, so that the rows are destaggered as ouster-sdk's
    /// `destagger` and ouster-ros lay them out); elsewhere the firing column.
    aligned: Vec<usize>,
}

impl Grid {
    /// A beam's column in `style`: ring rows are destaggered, firing rows are not.
    fn column_of(&self, beam: usize, style: GridStyle) -> usize {
        match style {
            GridStyle::RingRows => self.aligned[beam],
            GridStyle::FiringRows => self.column[beam],
        }
    }
}

impl BeamLayout {
    /// `sensor`'s beams as the writers see them.
    pub fn of_sensor(sensor: &Sensor) -> BeamLayout {
        let beams = (sensor.beams.iter())
            .map(|b| BeamDesc {
                ring: b.ring,
                azimuth: b.azimuth,
                elevation: b.elevation,
                time: b.time,
                origin_offset: b.origin.length(),
                origin_azimuth: b.origin.y.atan2(b.origin.x),
            })
            .collect();
        BeamLayout::new(beams, sensor.columns)
    }
}

impl BeamLayout {
    /// The layout of `beams` (in the pattern's order: a point's `beam` indexes it) of a
    /// pattern of `columns` azimuth steps (1 for an irregular pattern: a rosette, a beam
    /// list).
    pub fn new(beams: Vec<BeamDesc>, columns: u32) -> Self {
        let rank = ring_ranks(&beams);
        let rings = rank.iter().filter(|r| r.is_some()).count();
        let info = beams
            .iter()
            .map(|b| {
                let up = rank[b.ring as usize].unwrap_or(0);
                BeamInfo {
                    ring_from_bottom: clamp_u16(up),
                    ring_from_top: clamp_u16(rings.saturating_sub(1 + up)),
                    origin_offset: b.origin_offset,
                    flow: [0.0; 3],
                }
            })
            .collect();
        let grid = grid_of(&beams, &rank, rings, columns as usize);
        BeamLayout { beams, info, grid }
    }

    /// The beam `beam`'s ring ranks and offset; an error names a point of a beam the
    /// sensor lacks.
    pub(crate) fn info(&self, beam: u32) -> Result<BeamInfo, String> {
        self.info.get(beam as usize).copied().ok_or_else(|| {
            format!(
                "a point names beam {beam} but the sensor has {} beams",
                self.info.len()
            )
        })
    }

    /// The beams, in the pattern's order.
    pub fn beams(&self) -> &[BeamDesc] {
        &self.beams
    }

    /// `Ok(rings, columns)` when the beams form a grid, else why not.
    pub fn grid(&self) -> Result<(usize, usize), String> {
        self.grid
            .as_ref()
            .map(|g| (g.rings, g.columns))
            .map_err(Clone::clone)
    }
}

fn clamp_u16(v: usize) -> u16 {
    v.min(usize::from(u16::MAX)) as u16
}

/// Each ring's rank by mean elevation, 0 = the lowest; `None` for ring numbers no beam
/// has. Ties keep the ring numbers' order.
fn ring_ranks(beams: &[BeamDesc]) -> Vec<Option<usize>> {
    let n = beams.iter().map(|b| b.ring as usize + 1).max().unwrap_or(0);
    let mut sum = vec![(0.0f64, 0usize); n];
    for b in beams {
        let s = &mut sum[b.ring as usize];
        s.0 += f64::from(b.elevation);
        s.1 += 1;
    }
    let mut present: Vec<(f64, usize)> = sum
        .iter()
        .enumerate()
        .filter(|(_, s)| s.1 > 0)
        .map(|(ring, s)| (s.0 / s.1 as f64, ring))
        .collect();
    present.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut rank = vec![None; n];
    for (r, (_, ring)) in present.into_iter().enumerate() {
        rank[ring] = Some(r);
    }
    rank
}

/// The grid the beams form: a pattern of two columns or more whose every ring holds
/// one beam per column. Each ring's beams take columns in firing order (by time, then
/// by decreasing azimuth: clockwise seen from above, the spinning sensors' order) and,
/// by where they point, in decreasing azimuth from +180° on a full turn.
fn grid_of(
    beams: &[BeamDesc],
    rank: &[Option<usize>],
    rings: usize,
    columns: usize,
) -> Result<Grid, String> {
    if columns < 2 {
        return Err(format!(
            "its {} beams follow no columns (an irregular pattern: a rosette or a beam \
             list)",
            beams.len()
        ));
    }
    let mut by_ring: Vec<Vec<usize>> = vec![Vec::new(); rank.len()];
    for (i, b) in beams.iter().enumerate() {
        by_ring[b.ring as usize].push(i);
    }
    let present: Vec<&Vec<usize>> = by_ring.iter().filter(|v| !v.is_empty()).collect();
    if let Some(odd) = present.iter().find(|v| v.len() != columns) {
        return Err(format!(
            "a ring holds {} beams where the pattern has {columns} columns, so its rings \
             are not rows of one grid",
            odd.len()
        ));
    }
    let mut column = vec![0; beams.len()];
    let mut aligned = vec![0; beams.len()];
    let by_azimuth = |a: &usize, b: &usize| beams[*b].azimuth.total_cmp(&beams[*a].azimuth);
    for ring in present {
        let mut order = ring.clone();
        order.sort_by(by_azimuth);
        let shift = full_turn_shift(beams, &order);
        for (c, &i) in order.iter().enumerate() {
            aligned[i] = (c as i64 + shift).rem_euclid(columns as i64) as usize;
        }
        // Firing order: by time, then by decreasing azimuth (a pattern without times).
        order.sort_by(|a, b| {
            beams[*a]
                .time
                .total_cmp(&beams[*b].time)
                .then(by_azimuth(a, b))
        });
        for (c, &i) in order.iter().enumerate() {
            column[i] = c;
        }
    }
    Ok(Grid {
        rings,
        columns,
        column,
        aligned,
    })
}

/// For a ring whose beams (`order`: by decreasing azimuth) turn a full circle in even
/// steps, the whole columns that put its first beam where an unshifted ring's column 0
/// points, +180° (the spinning patterns' column 0, Ouster's encoder angle 0): a ring
/// pointing a clockwise of its column moves round(a / step) columns on. 0 for a
/// partial sweep.
fn full_turn_shift(beams: &[BeamDesc], order: &[usize]) -> i64 {
    let n = order.len();
    let (Some(&first), Some(&last)) = (order.first(), order.last()) else {
        return 0;
    };
    let step = std::f64::consts::TAU / n as f64;
    let span = f64::from(beams[first].azimuth) - f64::from(beams[last].azimuth);
    if n < 2 || (span - (n - 1) as f64 * step).abs() > 0.5 * step {
        return 0;
    }
    let behind = std::f64::consts::PI - f64::from(beams[first].azimuth);
    (behind / step).round() as i64
}

/// One file's worth of an organized frame.
#[derive(Debug, Clone, PartialEq)]
pub struct OrganizedCloud {
    /// Row-major, `width × height` points.
    pub cloud: PointCloud,
    pub width: usize,
    pub height: usize,
}

/// How to organize a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Organize {
    pub style: GridStyle,
    pub order: LayerOrder,
    /// Return layers: the sensor's most returns per beam.
    pub layers: usize,
}

/// The frame `cloud` on `layout`'s grid: one cloud per return layer (rings × columns)
/// for [`GridStyle::RingRows`], one cloud of all layers for [`GridStyle::FiringRows`].
/// A beam with more returns than `layers`, two points in one cell or a sensor that is
/// not a grid are errors: no point is dropped.
pub fn organize(
    cloud: &PointCloud,
    layout: &BeamLayout,
    how: Organize,
) -> Result<Vec<OrganizedCloud>, OutputError> {
    let grid = layout
        .grid
        .as_ref()
        .map_err(|why| OutputError::NotGrid { why: why.clone() })?;
    let layers = how.layers.max(1);
    let (width, height) = match how.style {
        GridStyle::RingRows => (grid.columns, grid.rings),
        GridStyle::FiringRows => (grid.rings, grid.columns * layers),
    };
    let per_file = width * height;
    let files = match how.style {
        GridStyle::RingRows => layers,
        GridStyle::FiringRows => 1,
    };
    let mut cells: Vec<Option<Point>> = vec![None; per_file * files];
    for (i, layer) in layer_of_each(&cloud.points, how.order, layers)? {
        let p = &cloud.points[i];
        let beam = p.beam as usize;
        let info = layout.info(p.beam).map_err(OutputError::Organize)?;
        let col = grid.column_of(beam, how.style);
        let cell = match how.style {
            GridStyle::RingRows => layer * per_file + usize::from(info.ring_from_top) * width + col,
            GridStyle::FiringRows => {
                (col * layers + layer) * width + usize::from(info.ring_from_bottom)
            }
        };
        if cells[cell].replace(*p).is_some() {
            return Err(OutputError::Organize(format!(
                "two points of beam {beam} fall in one cell of the grid (layer {layer})"
            )));
        }
    }
    let empty = empty_cells(layout, grid, how.style, layers, width);
    let clouds = cells
        .chunks(per_file)
        .map(|chunk| OrganizedCloud {
            cloud: PointCloud {
                points: chunk
                    .iter()
                    .zip(&empty)
                    .map(|(c, e)| c.unwrap_or(*e))
                    .collect(),
            },
            width,
            height,
        })
        .collect();
    Ok(clouds)
}

/// Each point's index and return layer: its rank among its beam's points in `order`.
fn layer_of_each(
    points: &[Point],
    order: LayerOrder,
    layers: usize,
) -> Result<Vec<(usize, usize)>, OutputError> {
    let mut idx: Vec<usize> = (0..points.len()).collect();
    idx.sort_by(|&a, &b| {
        let (p, q) = (&points[a], &points[b]);
        let within = match order {
            LayerOrder::Nearest => p.return_index.cmp(&q.return_index),
            LayerOrder::Last => q.return_index.cmp(&p.return_index),
            // The echo's peak R_app/r², as the detector and the packets rank returns.
            LayerOrder::Strongest => peak(q)
                .total_cmp(&peak(p))
                .then(p.return_index.cmp(&q.return_index)),
        };
        p.beam.cmp(&q.beam).then(within)
    });
    let mut out = Vec::with_capacity(points.len());
    let mut k = 0;
    for (n, &i) in idx.iter().enumerate() {
        k = if n > 0 && points[idx[n - 1]].beam == points[i].beam {
            k + 1
        } else {
            0
        };
        if k >= layers {
            return Err(OutputError::Organize(format!(
                "beam {} has more than {layers} returns, the layers of the organized \
                 cloud",
                points[i].beam
            )));
        }
        out.push((i, k));
    }
    Ok(out)
}

/// A return's peak amplitude R_app/r² (DESIGN §4), what "strongest" ranks by.
fn peak(p: &Point) -> f32 {
    p.intensity / (p.range * p.range)
}

/// The points of cells without a return, for one file: NaN position, intensity, range,
/// echo width and ambient; the beam's own ring, angles, index and time; 0 elsewhere
/// (`return_count` 0 says there is no return).
fn empty_cells(
    layout: &BeamLayout,
    grid: &Grid,
    style: GridStyle,
    layers: usize,
    width: usize,
) -> Vec<Point> {
    let per_layer = grid.rings * grid.columns;
    let cells = match style {
        GridStyle::RingRows => per_layer,
        GridStyle::FiringRows => per_layer * layers,
    };
    let mut out = vec![Point::default(); cells];
    for (i, b) in layout.beams.iter().enumerate() {
        let info = layout.info[i];
        let col = grid.column_of(i, style);
        let p = Point {
            x: f32::NAN,
            y: f32::NAN,
            z: f32::NAN,
            intensity: f32::NAN,
            range: f32::NAN,
            epw: f32::NAN,
            ambient: f32::NAN,
            ring: clamp_u16(b.ring as usize),
            azimuth: b.azimuth,
            elevation: b.elevation,
            beam: i as u32,
            time: b.time,
            ..Point::default()
        };
        match style {
            GridStyle::RingRows => out[usize::from(info.ring_from_top) * width + col] = p,
            GridStyle::FiringRows => {
                for layer in 0..layers {
                    out[(col * layers + layer) * width + usize::from(info.ring_from_bottom)] = p;
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "tests/organize.rs"]
mod tests;
