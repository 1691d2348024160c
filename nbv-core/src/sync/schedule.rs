//! A sync window's schedule and duration, read with the rules of Argo CD's parsers.
//!
//! Argo CD parses `schedule` with robfig/cron v3's parser for five fields (minute, hour,
//! day of month, month, day of week; no seconds, no `@daily` descriptors) and
//! `duration` with Go's `time.ParseDuration` (nbv's is [`crate::duration::parse_go`]).
//! [`Schedule::parse`] accepts exactly what robfig's parser accepts (`*`, `?`, numbers,
//! `a-b` ranges, `/step`, `N/step` meaning `N-max/step`, comma lists, `jan`-`dec` and
//! `sun`-`sat` in any case) and rejects the rest with robfig's reasons; the occurrences
//! are then found with the `croner` crate. robfig's day rule is kept: when the
//! day-of-month or the day-of-week field is `*` or `?` (without a step above 1), both
//! must match, otherwise either may.

use std::fmt;

use chrono::{DateTime, Datelike, FixedOffset};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// A schedule or duration that Argo CD's parsers reject, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The schedule is not five fields.
    #[error(
        "schedule {schedule:?} has {found} fields; Argo CD expects exactly 5 (minute hour day-of-month month day-of-week)"
    )]
    FieldCount {
        /// The schedule.
        schedule: String,
        /// How many fields it has.
        found: usize,
    },
    /// One field is not valid.
    #[error("schedule {schedule:?}: {field} field {value:?}: {why}")]
    Field {
        /// The schedule.
        schedule: String,
        /// Which field.
        field: &'static str,
        /// The field's text.
        value: String,
        /// What is wrong.
        why: String,
    },
    /// The duration is not a Go duration ([`crate::duration::parse_go`]).
    #[error("duration {0:?} is not a Go duration (for example \"1h\", \"90m\" or \"1h30m\")")]
    Duration(String),
}

/// A number as robfig reads one (Go's `strconv.Atoi` on 64 bits, then not negative):
/// ASCII digits after an optional `+`, up to `i64::MAX` (a `-` never reaches it:
/// ranges are split on `-` first, and a negative step is refused).
fn number(text: &str) -> Result<u64, String> {
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not a number"));
    }
    digits
        .parse::<i64>()
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// One field of a five-field schedule: its bounds and names.
struct FieldSpec {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const FIELDS: [FieldSpec; 5] = [
    FieldSpec {
        name: "minute",
        min: 0,
        max: 59,
        names: &[],
    },
    FieldSpec {
        name: "hour",
        min: 0,
        max: 23,
        names: &[],
    },
    FieldSpec {
        name: "day-of-month",
        min: 1,
        max: 31,
        names: &[],
    },
    FieldSpec {
        name: "month",
        min: 1,
        max: 12,
        names: &MONTHS,
    },
    FieldSpec {
        name: "day-of-week",
        min: 0,
        max: 6,
        names: &WEEKDAYS,
    },
];

/// What a field selects: its values, and whether robfig marks it as a star.
struct FieldValues {
    values: Vec<u32>,
    star: bool,
}

impl FieldSpec {
    fn value(&self, text: &str) -> Result<u64, String> {
        let lower = text.to_ascii_lowercase();
        if let Some(index) = self.names.iter().position(|n| *n == lower) {
            // Months are named from 1 (their minimum), weekdays from 0 (theirs).
            return Ok(index as u64 + u64::from(self.min));
        }
        number(text)
    }

    /// Reads one comma-separated part, as robfig's `getRange` does.
    fn part(&self, part: &str, into: &mut FieldValues) -> Result<(), String> {
        let mut range_and_step = part.split('/');
        let range = range_and_step.next().unwrap_or_default();
        let step = range_and_step.next();
        if range_and_step.next().is_some() {
            return Err(format!("too many slashes in {part:?}"));
        }
        let bounds: Vec<&str> = range.split('-').collect();
        let (min, max) = (u64::from(self.min), u64::from(self.max));
        // As in robfig, a star ignores what follows a `-` (`*-5` is `*`).
        let (start, mut end, mut star) = if bounds[0] == "*" || bounds[0] == "?" {
            (min, max, true)
        } else {
            let start = self.value(bounds[0])?;
            match bounds.len() {
                1 => (start, start, false),
                2 => (start, self.value(bounds[1])?, false),
                _ => return Err(format!("too many hyphens in {part:?}")),
            }
        };
        let step = match step {
            None => 1,
            Some(step) => {
                let step = number(step).map_err(|why| format!("step {why}"))?;
                // "N/step" means "N-max/step".
                if bounds.len() == 1 {
                    end = max;
                }
                if step > 1 {
                    star = false;
                }
                step
            }
        };
        if start < min {
            return Err(format!("{start} is below the minimum {min}"));
        }
        if end > max {
            return Err(format!("{end} is above the maximum {max}"));
        }
        if start > end {
            return Err(format!("the range starts at {start}, after its end {end}"));
        }
        if step == 0 {
            return Err("the step must be a positive number".to_owned());
        }
        // Within the field's bounds now, so every value is a small u32; a step past
        // the end selects the start alone.
        let step = usize::try_from(step).unwrap_or(usize::MAX);
        into.values.extend(
            (start..=end)
                .step_by(step)
                .filter_map(|v| u32::try_from(v).ok()),
        );
        into.star |= star;
        Ok(())
    }

    fn read(&self, field: &str) -> Result<FieldValues, String> {
        let mut values = FieldValues {
            values: Vec::new(),
            star: false,
        };
        // robfig splits with `strings.FieldsFunc`, which drops empty parts: `0,` is `0`.
        for part in field.split(',').filter(|part| !part.is_empty()) {
            self.part(part, &mut values)?;
        }
        if values.values.is_empty() {
            // robfig accepts a field of commas only, as a schedule that never starts
            // (which Argo CD then reads as a window open at all times); nbv refuses it.
            return Err("it selects no value".to_owned());
        }
        values.values.sort_unstable();
        values.values.dedup();
        Ok(values)
    }
}

/// A parsed five-field schedule.
///
/// # Examples
///
/// ```
/// use chrono::{FixedOffset, TimeZone};
/// use nbv_core::sync::Schedule;
///
/// let weekdays = Schedule::parse("0 22 * * mon-fri")?;
/// let utc = FixedOffset::east_opt(0).unwrap();
/// let saturday = utc.with_ymd_and_hms(2026, 1, 24, 12, 0, 0).unwrap();
/// let next = weekdays.next_after(&saturday).unwrap();
/// assert_eq!(next.to_rfc3339(), "2026-01-26T22:00:00+00:00");
/// assert!(Schedule::parse("@daily").is_err());
/// assert!(Schedule::parse("0 0 * * 7").is_err());
/// # Ok::<(), nbv_core::sync::ScheduleError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
}

impl Schedule {
    /// Parses `schedule` as Argo CD does (see the module documentation).
    ///
    /// # Errors
    ///
    /// [`ScheduleError`] naming the field at fault.
    pub fn parse(schedule: &str) -> Result<Schedule, ScheduleError> {
        let fields: Vec<&str> = schedule.split_whitespace().collect();
        if fields.len() != FIELDS.len() {
            return Err(ScheduleError::FieldCount {
                schedule: schedule.to_owned(),
                found: fields.len(),
            });
        }
        let mut normalised = Vec::with_capacity(FIELDS.len());
        for (spec, field) in FIELDS.iter().zip(&fields) {
            let values = spec.read(field).map_err(|why| ScheduleError::Field {
                schedule: schedule.to_owned(),
                field: spec.name,
                value: (*field).to_owned(),
                why,
            })?;
            // Only the day fields' star flag changes the meaning; elsewhere every value
            // listed is as good as `*`.
            let everything = values.values.len() == (spec.max - spec.min + 1) as usize;
            let is_day = spec.name.starts_with("day");
            normalised.push(if (is_day && values.star) || (!is_day && everything) {
                "*".to_owned()
            } else {
                values
                    .values
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            });
        }
        let pattern = normalised.join(" ");
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(&pattern)
            .map_err(|e| ScheduleError::Field {
                schedule: schedule.to_owned(),
                field: "schedule",
                value: pattern.clone(),
                why: e.to_string(),
            })?;
        Ok(Schedule { cron })
    }

    /// The first start strictly after `after`, in `after`'s offset; `None` when there
    /// is none within five years (robfig's search limit, after which Argo CD's parser
    /// answers the zero time).
    pub fn next_after(&self, after: &DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
        let next = self.cron.find_next_occurrence(after, false).ok()?;
        (next.year() <= after.year() + 5).then_some(next)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cron.pattern.to_string().as_str())
    }
}
