//! UTC calendar dates of Unix times, for the clocks sensors put in their packets.

/// A UTC date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    /// 1..=12
    pub month: u8,
    /// 1..=31
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
}

impl Utc {
    /// The UTC date and time of Unix second `unix_s` (leap seconds aside, as Unix time
    /// has none), by the proleptic Gregorian calendar.
    pub fn of_unix_seconds(unix_s: i64) -> Utc {
        let (days, secs) = (unix_s.div_euclid(86_400), unix_s.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        Utc {
            year,
            month,
            day,
            hour: (secs / 3600) as u8,
            minute: (secs / 60 % 60) as u8,
            second: (secs % 60) as u8,
        }
    }
}

impl Utc {
    /// The Unix second of this date and time (the inverse of
    /// [`of_unix_seconds`](Self::of_unix_seconds)); fields out of their ranges count on
    /// (a 13th month is next year's first).
    pub fn unix_seconds(&self) -> i64 {
        let days = days_from_civil(self.year, i64::from(self.month), i64::from(self.day));
        days * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }
}

/// Days from 1970-01-01 to year, month, day: H. Hinnant's `days_from_civil`, the
/// inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = year - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9).rem_euclid(12);
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Year, month and day of the `days`-th day after 1970-01-01: H. Hinnant's algorithm
/// ("chrono-Compatible Low-Level Date Algorithms", `civil_from_days`), counting in
/// 400-year eras of 146 097 days from 0000-03-01.
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_fall_on_their_calendar_dates() {
        // `date -u -d @T` for each T.
        let cases = [
            (0, (1970, 1, 1, 0, 0, 0)),
            (951_782_400, (2000, 2, 29, 0, 0, 0)),
            (1_700_002_799, (2023, 11, 14, 22, 59, 59)),
            (4_107_542_400, (2100, 3, 1, 0, 0, 0)),
            (-1, (1969, 12, 31, 23, 59, 59)),
        ];
        for (t, (y, mo, d, h, mi, s)) in cases {
            let u = Utc::of_unix_seconds(t);
            assert_eq!(
                (u.year, u.month, u.day, u.hour, u.minute, u.second),
                (y, mo, d, h, mi, s),
                "{t}"
            );
            assert_eq!(u.unix_seconds(), t, "back from {u:?}");
        }
    }
}
