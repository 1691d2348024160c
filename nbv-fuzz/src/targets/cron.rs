//! Any text as a sync window's `schedule`.
//!
//! - `Schedule::parse` never panics.
//! - It accepts exactly what robfig/cron v3's five-field parser (Argo CD's) accepts,
//!   by an independent reading of robfig's rules written here: fields split on
//!   whitespace, parts on `,` (empty parts dropped, as `strings.FieldsFunc` does),
//!   `*`/`?`, numbers as `strconv.Atoi` reads them, names in any case, `a-b`, `/step`,
//!   `N/step` meaning `N-max/step`. Left out of the comparison: a `TZ=`/`CRON_TZ=`
//!   prefix (robfig loads a time zone database for it), and a field of commas only
//!   (robfig: a schedule that never starts; nbv refuses it).
//! - The next start after a few instants, in their offsets, is the one a plain search
//!   over the days of the next five years finds, with robfig's day rule (when either
//!   day field is a star, both must match; otherwise either may).

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDateTime, Timelike};
use nbv_core::sync::Schedule;

use super::sync_wave::atoi;
use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "cron",
    run,
    dictionary: &[
        " ",
        "*",
        "?",
        ",",
        "-",
        "/",
        "*/5",
        "0",
        "59",
        "60",
        "23",
        "24",
        "31",
        "32",
        "12",
        "13",
        "7",
        "1-5",
        "mon-fri",
        "jan",
        "DEC",
        "sun",
        "SAT",
        "+1",
        "0 22 * * *",
        "* * * * *",
        "30 2 31 2 *",
        "TZ=UTC ",
        "@daily",
        "\t",
        "\u{a0}",
        "\u{130}",
        "99999999999999999999",
    ],
    max_len: 256,
};

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// One field as robfig reads it: the values it selects and whether it is a star.
#[derive(Debug, Clone)]
struct Field {
    values: [bool; 60],
    star: bool,
}

/// The bounds and names of a field.
struct Bounds {
    min: i64,
    max: i64,
    names: &'static [&'static str],
    first_name: i64,
}

const BOUNDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
        first_name: 0,
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
        first_name: 0,
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
        first_name: 0,
    },
    Bounds {
        min: 1,
        max: 12,
        names: &MONTHS,
        first_name: 1,
    },
    Bounds {
        min: 0,
        max: 6,
        names: &DAYS,
        first_name: 0,
    },
];

/// robfig's `mustParseInt`: `strconv.Atoi`, then no negative number.
fn number(text: &str) -> Option<i64> {
    atoi(text).filter(|n| *n >= 0)
}

/// robfig's `parseIntOrName`. Go lowers the whole Unicode range; for names made of
/// ASCII letters the difference is the Kelvin sign and the dotted capital I, which
/// lower to `k` and `i`.
fn number_or_name(text: &str, bounds: &Bounds) -> Option<i64> {
    let lower: String = text
        .chars()
        .map(|c| match c {
            '\u{212a}' => 'k',
            '\u{130}' => 'i',
            c => c
                .to_lowercase()
                .next()
                .filter(|_| c.to_lowercase().count() == 1)
                .unwrap_or(c),
        })
        .collect();
    match bounds.names.iter().position(|n| *n == lower) {
        Some(index) => Some(index as i64 + bounds.first_name),
        None => number(text),
    }
}

/// robfig's `getRange`, adding to `field`.
fn range(part: &str, bounds: &Bounds, field: &mut Field) -> Option<()> {
    let range_and_step: Vec<&str> = part.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end, mut star) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max, true)
    } else {
        let start = number_or_name(low_and_high[0], bounds)?;
        match low_and_high.len() {
            1 => (start, start, false),
            2 => (start, number_or_name(low_and_high[1], bounds)?, false),
            _ => return None,
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = number(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            if step > 1 {
                star = false;
            }
            step
        }
        _ => return None,
    };
    if start < bounds.min || end > bounds.max || start > end || step == 0 {
        return None;
    }
    let mut value = start;
    while value <= end {
        field.values[value as usize] = true;
        value += step;
    }
    field.star |= star;
    Some(())
}

/// The five fields, or `None` when robfig refuses the schedule. `Err(())` when the
/// schedule is outside what this reading covers.
fn robfig(schedule: &str) -> Result<Option<[Field; 5]>, ()> {
    if schedule.starts_with("TZ=") || schedule.starts_with("CRON_TZ=") {
        return Err(());
    }
    if schedule.is_empty() || schedule.starts_with('@') {
        return Ok(None);
    }
    // Go's strings.Fields splits on unicode.IsSpace: Rust's White_Space.
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Ok(None);
    }
    let empty = Field {
        values: [false; 60],
        star: false,
    };
    let mut read = [(); 5].map(|()| empty.clone());
    for ((text, bounds), field) in fields.iter().zip(&BOUNDS).zip(&mut read) {
        for part in text.split(',').filter(|p| !p.is_empty()) {
            if range(part, bounds, field).is_none() {
                return Ok(None);
            }
        }
    }
    if read.iter().any(|field| !field.values.contains(&true)) {
        // A field of commas only: robfig reads a schedule that never starts (and Argo
        // CD a window open at all times); nbv refuses it, knowingly.
        return Err(());
    }
    Ok(Some(read))
}

/// Whether `day` is a day the schedule runs on.
fn day_matches(fields: &[Field; 5], day: NaiveDateTime) -> bool {
    let month = fields[3].values[day.month() as usize];
    let dom = fields[2].values[day.day() as usize];
    let dow = fields[4].values[day.weekday().num_days_from_sunday() as usize];
    let either_star = fields[2].star || fields[4].star;
    month && if either_star { dom && dow } else { dom || dow }
}

/// The first start strictly after `after` within robfig's five years, searched day by
/// day.
fn next(fields: &[Field; 5], after: NaiveDateTime) -> Option<NaiveDateTime> {
    let first_day = after.date().and_hms_opt(0, 0, 0)?;
    for days in 0..=(6 * 366) {
        let day = first_day + Duration::days(days);
        if day.year() > after.year() + 5 {
            return None;
        }
        if !day_matches(fields, day) {
            continue;
        }
        for hour in (0..24).filter(|h| fields[1].values[*h as usize]) {
            for minute in (0..60).filter(|m| fields[0].values[*m as usize]) {
                let start = day + Duration::hours(hour) + Duration::minutes(minute);
                if start > after {
                    return Some(start);
                }
            }
        }
    }
    None
}

/// The instants the next start is looked for after.
fn instants() -> Vec<DateTime<FixedOffset>> {
    [
        "2026-01-24T22:30:15+00:00",
        "2024-02-28T23:59:00+05:30",
        "2027-12-31T23:59:59.500-08:00",
    ]
    .iter()
    .filter_map(|t| DateTime::parse_from_rfc3339(t).ok())
    .collect()
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(text) = crate::text(data) else {
        return Outcome::Skipped;
    };
    let parsed = Schedule::parse(text);
    if let Err(error) = &parsed {
        let _ = error.to_string();
    }
    let Ok(expected) = robfig(text) else {
        return Outcome::Skipped;
    };
    let (schedule, fields) = match (parsed, expected) {
        (Ok(schedule), Some(fields)) => (schedule, fields),
        (Err(_), None) => return Outcome::Refused,
        (Ok(schedule), None) => panic!("{text:?} is accepted ({schedule}), robfig refuses it"),
        (Err(error), Some(_)) => panic!("{text:?} is refused ({error}), robfig accepts it"),
    };
    for after in instants() {
        let found = schedule.next_after(&after).map(|n| n.naive_local());
        let expected = next(&fields, after.naive_local());
        assert_eq!(
            found, expected,
            "next start of {text:?} ({schedule}) after {after}"
        );
        if let Some(found) = found {
            assert_eq!((found.second(), found.nanosecond()), (0, 0));
        }
    }
    Outcome::Read
}
