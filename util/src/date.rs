//! UTC calendar dates from Unix time, without a calendar crate (proleptic Gregorian calendar,
//! Howard Hinnant's days-to-civil algorithm).

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A UTC date and time of day, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcTime {
    /// Year (proleptic Gregorian).
    pub year: i64,
    /// Month, 1..=12.
    pub month: u32,
    /// Day of the month, 1..=31.
    pub day: u32,
    /// Hour, 0..=23.
    pub hour: u32,
    /// Minute, 0..=59.
    pub minute: u32,
    /// Second, 0..=59.
    pub second: u32,
}

impl UtcTime {
    /// The UTC time `secs` seconds after the Unix epoch (negative: before it).
    pub fn from_unix(secs: i64) -> UtcTime {
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        UtcTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem / 60 % 60) as u32,
            second: (rem % 60) as u32,
        }
    }

    /// The current UTC time (the epoch if the clock is before it).
    pub fn now() -> UtcTime {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        UtcTime::from_unix(secs)
    }
}

/// `YYYY-MM-DDTHH:MM:SS` (ISO 8601, UTC, no zone suffix).
pub fn iso_utc(secs: i64) -> String {
    let t = UtcTime::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2000-02-29 (a leap day of a century year divisible by 400)
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(iso_utc(1_767_225_600), "2026-01-01T00:00:00");
        assert_eq!(iso_utc(951_782_400 + 3661), "2000-02-29T01:01:01");
        let t = UtcTime::from_unix(-1);
        assert_eq!((t.year, t.hour, t.second), (1969, 23, 59));
    }
}
