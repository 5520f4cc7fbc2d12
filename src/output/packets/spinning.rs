//! What spinning sensors' data packets share (Velodyne's, Hesai's): a sensor's beams
//! checked against the model's laser table — column-major, each column the model's
//! lasers in its preset's firing order at the table's elevations, offsets and firing
//! times, columns evenly spaced over a clockwise turn at the model's firing cycle — and
//! a frame's echoes chosen per beam for a return mode's slots, as distance units.

use crate::output::{BeamDesc, Point, PointCloud};
use crate::sensor::spinning::SpinningLasers;

use super::PacketError;
use std::collections::VecDeque;

/// Azimuth units (0.01°) in a turn.
pub(crate) const TURN: f64 = 36000.0;
/// Elevations may differ from the manual's table by this much (its values are given to
/// 0.01°; beamtrace's HDL-32E uses the exact 4/3° spacing they round).
const ELEVATION_TOL_DEG: f64 = 0.01;
/// Columns may sit this far from an even clockwise turn: half the packet's azimuth unit.
const AZIMUTH_TOL_DEG: f64 = 0.005;
/// Columns may fire this far from an even spacing in time: the timestamp's unit.
const TIME_TOL_S: f64 = 1e-6;
/// The lasers of a column may give back its azimuth and time this far apart: f32
/// angles and times (a beam's azimuth is good to 2e-5°, its time to 4 ns).
const LASER_AZIMUTH_TOL_DEG: f64 = 1e-3;
const LASER_TIME_TOL_S: f64 = 2e-8;
/// A beam may leave this far from its laser's origin in the model's table: no more
/// than the lasers' own offsets (the VLP-16 manual's reach 11.2 mm), from which the
/// sensor measures.
const MAX_ORIGIN_OFFSET_M: f64 = 0.02;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    /// The vendor's azimuth (0.01°, clockwise from the front), not yet rounded.
    pub azimuth: f64,
    /// Firing time within the frame (s).
    pub time_s: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Channel {
    pub distance: u16,
    pub reflectivity: u8,
}

/// A model's name as `--packets` and preset names are matched: its letters and digits,
/// lower case (`VLP-16`, `vlp16` and `vlp-16` are one).
pub(crate) fn name_key(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// A spinning model as its packets see it: the vendor's names, its laser table and the
/// distance field's unit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spin {
    /// The vendor's model name (`VLP-16`, `PandarXT32`): errors' format.
    pub name: &'static str,
    /// The beamtrace preset whose beams the packets carry.
    pub preset: &'static str,
    /// The manual the laser table comes from.
    pub manual: &'static str,
    pub table: &'static SpinningLasers,
    /// The distance field's unit (m) and its units per metre (exact: 500, 250).
    pub unit_m: f64,
    pub units_per_m: f64,
}

impl Spin {
    /// Lasers fired per firing sequence.
    pub fn lasers(&self) -> usize {
        self.table.count
    }

    /// The laser id a column of the preset fires `k`-th.
    pub fn laser_at(&self, k: usize) -> usize {
        (self.table.laser_at)(k)
    }

    pub fn firing_cycle_s(&self) -> f64 {
        self.table.cycle_s
    }

    pub fn laser_elevation_deg(&self, laser: usize) -> f64 {
        (self.table.elevation_deg)(laser)
    }

    /// The manual's azimuth offset δ of laser `laser` (deg, clockwise seen from above).
    pub fn laser_azimuth_offset_deg(&self, laser: usize) -> f64 {
        (self.table.azimuth_offset_deg)(laser)
    }

    pub fn laser_delay_s(&self, laser: usize) -> f64 {
        (self.table.delay_s)(laser)
    }

    pub fn laser_height_m(&self, laser: usize) -> f32 {
        (self.table.height_m)(laser)
    }

    /// The farthest range a packet carries (m): 65535 distance units.
    pub fn max_range_m(&self) -> f64 {
        65535.0 * self.unit_m
    }

    /// The columns of a sensor of `beams` in `columns` columns turning at `frame_rate`
    /// Hz, and the time between them, when its beams are the model's lasers in its
    /// preset's order; else [`PacketError::Sensor`] saying what the packets need.
    pub(crate) fn columns(
        &self,
        beams: &[BeamDesc],
        columns: u32,
        frame_rate: f64,
    ) -> Result<(Vec<Column>, f64), PacketError> {
        check_counts(self, beams.len(), columns)?;
        let period_s = check_rate(self, columns, frame_rate)?;
        let per_column: Vec<Column> = beams
            .chunks(self.lasers())
            .enumerate()
            .map(|(m, column)| check_column(self, frame_rate, m, column))
            .collect::<Result<_, _>>()?;
        check_spacing(self, &per_column, period_s)?;
        Ok((per_column, period_s))
    }

    fn point_error(&self, message: String) -> PacketError {
        PacketError::Point {
            format: self.name,
            message,
        }
    }

    /// The distance field of `p`, or why it has none.
    pub(crate) fn distance(&self, beams: usize, p: &Point) -> Result<u16, PacketError> {
        if p.beam as usize >= beams {
            return Err(self.point_error(format!(
                "a point names beam {}, but the sensor has {} beams",
                p.beam, beams
            )));
        }
        let lasers = self.lasers();
        let at = format!(
            "the point of beam {} (laser {}, column {})",
            p.beam,
            self.laser_at(p.beam as usize % lasers),
            p.beam as usize / lasers
        );
        let unit = self.unit_m;
        // By the units per metre (500 or 250, Velodyne), a product exact in f64 (a GPU pass
        // computes it the same, in integers).
        let units = (f64::from(p.range) * self.units_per_m).round();
        if units > 65535.0 {
            Err(self.point_error(format!(
                "{at} lies at {} m, beyond the {:.2} m the packets carry (65535 × {} mm): \
                 set the sensor's range.max to {} m or less",
                p.range,
                self.max_range_m(),
                unit * 1e3,
                self.max_range_m().floor()
            )))
        } else if units >= 1.0 {
            Ok(units as u16)
        } else if units >= 0.0 {
            Err(self.point_error(format!(
                "{at} lies at {} m, which rounds to distance 0, the packets' \"no \
                 return\": set the sensor's range.min to {} mm or more",
                p.range,
                unit * 1e3 / 2.0
            )))
        } else {
            Err(self.point_error(format!(
                "{at} has range {} m; a range must be a finite distance ≥ 0",
                p.range
            )))
        }
    }

    /// Per beam of a sensor of `beams`, the channels `echoes` reports (its two slots:
    /// [single or last, strongest] or [first, strongest], …).
    pub(crate) fn select(
        &self,
        echoes: Echoes,
        beams: usize,
        cloud: &PointCloud,
    ) -> Result<Vec<[Channel; 2]>, PacketError> {
        let points = &cloud.points;
        let distances: Vec<u16> = points
            .iter()
            .map(|p| self.distance(beams, p))
            .collect::<Result<_, _>>()?;
        let mut order: Vec<usize> = (0..points.len()).collect();
        order.sort_by(|&a, &b| {
            let (pa, pb) = (&points[a], &points[b]);
            pa.beam
                .cmp(&pb.beam)
                .then(distances[a].cmp(&distances[b]))
                .then(pa.range.total_cmp(&pb.range))
                .then(a.cmp(&b))
        });
        let channel = |i: usize| Channel {
            distance: distances[i],
            reflectivity: points[i].reflectivity,
        };
        let mut chosen = vec![[Channel::default(); 2]; beams];
        for beam in order.chunk_by(|&a, &b| points[a].beam == points[b].beam) {
            let [first, second] = echoes.pick(beam, points);
            chosen[points[beam[0]].beam as usize] = [channel(first), channel(second)];
        }
        Ok(chosen)
    }
}

/// Which echoes of a beam a return mode reports, in its two slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Echoes {
    /// The echo of highest intensity, in both.
    Strongest,
    /// The farthest, in both.
    Last,
    /// The nearest, in both.
    First,
    /// The last, then the strongest of the others (the strongest, or the second
    /// strongest when the strongest is the last); the last twice for a single echo.
    LastAndStrongest,
}

impl Echoes {
    /// The echoes (indices into `points`, nearest first) the mode reports in its two
    /// slots.
    pub(crate) fn pick(self, echoes: &[usize], points: &[Point]) -> [usize; 2] {
        let last = echoes[echoes.len() - 1];
        match self {
            Echoes::Strongest => {
                let s = strongest(echoes, points);
                [s, s]
            }
            Echoes::Last => [last, last],
            Echoes::First => [echoes[0], echoes[0]],
            Echoes::LastAndStrongest if echoes.len() > 1 => {
                [last, strongest(&echoes[..echoes.len() - 1], points)]
            }
            Echoes::LastAndStrongest => [last, last],
        }
    }
}

/// The echo of highest intensity; the nearest of equals. NaN counts as the weakest.
fn strongest(echoes: &[usize], points: &[Point]) -> usize {
    let key = |i: usize| {
        let v = points[i].intensity;
        if v.is_nan() {
            f32::NEG_INFINITY
        } else {
            v
        }
    };
    echoes
        .iter()
        .copied()
        .reduce(|best, i| if key(i) > key(best) { i } else { best })
        .unwrap_or(echoes[0])
}

/// The packet's azimuth field for a Velodyne azimuth in 0.01° units.
pub(crate) fn azimuth_field(azimuth: f64) -> u16 {
    azimuth.round().rem_euclid(TURN) as u16
}

/// |v| ≤ tol; false for NaN.
pub(crate) fn within(v: f64, tol: f64) -> bool {
    v.abs() <= tol
}

/// `a − b` in 0.01° units, wrapped into ±half a turn.
pub(crate) fn azimuth_diff(a: f64, b: f64) -> f64 {
    (a - b + TURN / 2.0).rem_euclid(TURN) - TURN / 2.0
}

fn sensor_error(model: &Spin, message: String) -> PacketError {
    PacketError::Sensor {
        format: model.name,
        message,
    }
}

fn check_counts(model: &Spin, beams: usize, columns: u32) -> Result<(), PacketError> {
    let lasers = model.lasers();
    if columns > 0 && beams == lasers * columns as usize {
        return Ok(());
    }
    let has = if columns > 0 && beams.is_multiple_of(columns as usize) {
        format!(
            "this sensor has {} beams per column",
            beams / columns as usize
        )
    } else {
        format!("this sensor has {beams} beams in {columns} columns")
    };
    Err(sensor_error(
        model,
        format!(
            "they carry {lasers} lasers × N columns in the {preset} preset's order, but \
             {has}; simulate the {preset} preset (--sensor {preset}), or write the packets \
             of a sensor that has these beams",
            preset = model.preset
        ),
    ))
}

/// The time between columns, when it is the model's firing cycle.
fn check_rate(model: &Spin, columns: u32, frame_rate: f64) -> Result<f64, PacketError> {
    let cycle = model.firing_cycle_s();
    let period = 1.0 / (f64::from(columns) * frame_rate);
    // Presets round the columns of a turn, so the period is within 0.1 % of the cycle.
    if frame_rate > 0.0 && (period / cycle - 1.0).abs() <= 0.01 {
        return Ok(period);
    }
    let fitting = if frame_rate > 0.0 && frame_rate.is_finite() {
        format!(
            ", so a turn at {frame_rate} Hz has {} columns",
            (1.0 / (frame_rate * cycle)).round()
        )
    } else {
        String::new()
    };
    Err(sensor_error(
        model,
        format!(
            "the {name} fires a sequence every {:.3} µs{fitting}, but this sensor's \
             {columns} columns at {frame_rate} Hz fire {:.3} µs apart; let the {preset} \
             preset choose its columns (leave pattern.columns out)",
            cycle * 1e6,
            period * 1e6,
            name = model.name,
            preset = model.preset
        ),
    ))
}

/// Where and when a column began, as beam `b` (laser `laser`) gives it back: its
/// Velodyne azimuth less the laser's offset and the turn over its delay, its time less
/// the delay.
fn column_of(model: &Spin, frame_rate: f64, laser: usize, b: &BeamDesc) -> Column {
    let delay = model.laser_delay_s(laser);
    let turned = 360.0 * frame_rate * delay;
    let alpha = -f64::from(b.azimuth).to_degrees() - model.laser_azimuth_offset_deg(laser) - turned;
    Column {
        azimuth: (alpha * 100.0).rem_euclid(TURN),
        time_s: f64::from(b.time) - delay,
    }
}

/// Column `m`'s azimuth and time, when its beams are the model's lasers in order.
fn check_column(
    model: &Spin,
    frame_rate: f64,
    m: usize,
    beams: &[BeamDesc],
) -> Result<Column, PacketError> {
    let index = |k: usize| m * model.lasers() + k;
    if let Some((k, b)) = beams
        .iter()
        .enumerate()
        .find(|(_, b)| !(b.azimuth.is_finite() && b.time.is_finite()))
    {
        return Err(sensor_error(
            model,
            format!(
                "beam {} fires at azimuth {} rad, time {} s; both must be finite",
                index(k),
                b.azimuth,
                b.time
            ),
        ));
    }
    let head = column_of(model, frame_rate, model.laser_at(0), &beams[0]);
    for (k, b) in beams.iter().enumerate() {
        let laser = model.laser_at(k);
        check_laser(model, index(k), k, b)?;
        let c = column_of(model, frame_rate, laser, b);
        let together = within(
            azimuth_diff(c.azimuth, head.azimuth),
            LASER_AZIMUTH_TOL_DEG * 100.0,
        ) && within(c.time_s - head.time_s, LASER_TIME_TOL_S);
        if !together {
            return Err(apart_error(model, index(k), laser, b, index(0), &beams[0]));
        }
    }
    Ok(head)
}

/// Beam `index` (laser `laser`) does not fire where and when the model fires that laser
/// in the column that beam `first` begins.
fn apart_error(
    model: &Spin,
    index: usize,
    laser: usize,
    b: &BeamDesc,
    first: usize,
    head: &BeamDesc,
) -> PacketError {
    let timing = match (
        model.laser_azimuth_offset_deg(laser),
        model.laser_delay_s(laser),
    ) {
        (d, t) if d == 0.0 && t == 0.0 => "the lasers of a column fire together".to_string(),
        (d, t) => format!(
            "laser {laser} fires {:.3} µs into the sequence, {d}° clockwise of its \
             column ({})",
            t * 1e6,
            model.manual
        ),
    };
    sensor_error(
        model,
        format!(
            "beam {index} fires at azimuth {}° and {} s, its column (beam {first}) at {}° \
             and {} s; {timing}, as in the {} preset",
            b.azimuth.to_degrees(),
            b.time,
            head.azimuth.to_degrees(),
            head.time,
            model.preset
        ),
    )
}

/// Beam `index` is the laser the preset fires `k`-th: its ring, elevation and origin
/// are the model's.
fn check_laser(model: &Spin, index: usize, k: usize, b: &BeamDesc) -> Result<(), PacketError> {
    let preset = model.preset;
    let laser = model.laser_at(k);
    if b.ring as usize != laser {
        return Err(sensor_error(
            model,
            format!(
                "beam {index} is laser {} where the packets carry laser {laser}: each column \
                 must hold lasers 0..{} in the {preset} preset's firing order",
                b.ring,
                model.lasers() - 1
            ),
        ));
    }
    let want = model.laser_elevation_deg(laser);
    let got = f64::from(b.elevation).to_degrees();
    if !within(got - want, ELEVATION_TOL_DEG) {
        return Err(sensor_error(
            model,
            format!(
                "laser {laser} (beam {index}) points {got:.3}° up, where the {}'s laser \
                 {laser} points {want:.2}° ({}); packets carry no elevations, so decoders \
                 would misplace its points: use the {preset} preset's beams",
                model.name, model.manual
            ),
        ));
    }
    let height = f64::from(model.laser_height_m(laser)).abs();
    if !within(f64::from(b.origin_offset) - height, MAX_ORIGIN_OFFSET_M) {
        return Err(sensor_error(
            model,
            format!(
                "beam {index} starts {} m off the sensor origin, but the {}'s laser {laser} \
                 sits {:.1} mm from it: use the {preset} preset's beams",
                b.origin_offset,
                model.name,
                height * 1e3
            ),
        ));
    }
    Ok(())
}

/// The columns follow one clockwise turn, evenly in azimuth and in time.
fn check_spacing(model: &Spin, columns: &[Column], period_s: f64) -> Result<(), PacketError> {
    let step = TURN / columns.len() as f64;
    let (a0, t0) = (columns[0].azimuth, columns[0].time_s);
    for (m, c) in columns.iter().enumerate().skip(1) {
        let want = a0 + m as f64 * step;
        let off = azimuth_diff(c.azimuth, want);
        let late = c.time_s - (t0 + m as f64 * period_s);
        if !(within(off, AZIMUTH_TOL_DEG * 100.0) && within(late, TIME_TOL_S)) {
            return Err(sensor_error(
                model,
                format!(
                    "column {m} fires at {:.4}° (the vendor's azimuth, clockwise) and {:.7} s, \
                     where an even clockwise turn from column 0 puts it at {:.4}° and \
                     {:.7} s; the packets need the {} preset's evenly spaced columns",
                    c.azimuth / 100.0,
                    c.time_s,
                    want.rem_euclid(TURN) / 100.0,
                    t0 + m as f64 * period_s,
                    model.preset
                ),
            ));
        }
    }
    Ok(())
}

/// Firings held until they fill a packet, across frames (a turn's firings need not fill
/// whole packets), and the frame they came from.
#[derive(Debug, Clone)]
pub(crate) struct Held<F> {
    firings: VecDeque<F>,
    last_frame: Option<u64>,
}

impl<F> Held<F> {
    pub fn new() -> Self {
        Held {
            firings: VecDeque::new(),
            last_frame: None,
        }
    }

    /// Takes frame `frame`'s firings; whether the frame does not follow the last one
    /// (frame numbers skip), when what was held must be sent first.
    pub fn skips_to(&mut self, frame: u64) -> bool {
        let skips = (self.last_frame).is_some_and(|f| f.checked_add(1) != Some(frame));
        self.last_frame = Some(frame);
        skips
    }

    pub fn push(&mut self, firings: impl IntoIterator<Item = F>) {
        self.firings.extend(firings);
    }

    /// The first `per_packet` firings, when that many are held.
    pub fn packet(&mut self, per_packet: usize) -> Option<Vec<F>> {
        (self.firings.len() >= per_packet).then(|| self.firings.drain(..per_packet).collect())
    }

    /// Every firing held, leaving none.
    pub fn take_all(&mut self) -> Vec<F> {
        self.firings.drain(..).collect()
    }
}
