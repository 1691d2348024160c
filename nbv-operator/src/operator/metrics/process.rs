//! The `process_*` metrics every Prometheus client library exposes (CPU time, memory,
//! file descriptors, threads, start time), read from `/proc/self` at each scrape, as
//! client_golang's process collector does. Dashboards and alerts written for any
//! operator (memory growth, fd exhaustion, restarts) work on nbv unchanged.
//!
//! Linux only: elsewhere the family is absent rather than wrong.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Reads the process's figures at each scrape.
#[derive(Debug, Default)]
pub(super) struct ProcessCollector;

/// One reading of `/proc/self`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Reading {
    pub cpu_seconds: f64,
    pub resident_bytes: i64,
    pub virtual_bytes: i64,
    pub threads: i64,
    pub start_time_seconds: f64,
    pub open_fds: i64,
    pub max_fds: i64,
}

/// The unit of the times in `/proc/self/stat`: the kernel's `USER_HZ`, 100 on every
/// architecture Linux runs containers on (what `sysconf(_SC_CLK_TCK)` answers).
const TICKS_PER_SECOND: f64 = 100.0;

impl Reading {
    /// The process's figures now, or `None` where `/proc` cannot tell them.
    pub(super) fn now() -> Option<Reading> {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count();
        let reading = Reading::parse(
            &read("/proc/self/stat")?,
            &read("/proc/self/status")?,
            &read("/proc/stat")?,
            &read("/proc/self/limits")?,
        )?;
        Some(Reading {
            open_fds: i64::try_from(open_fds).unwrap_or(i64::MAX),
            ..reading
        })
    }

    /// The figures of `/proc/self/stat`, `/proc/self/status`, `/proc/stat` (the boot
    /// time) and `/proc/self/limits`; the open file descriptors are left at zero.
    fn parse(stat: &str, status: &str, system: &str, limits: &str) -> Option<Reading> {
        // The command name is in parentheses and may hold spaces and parentheses
        // itself: the fields start after the last `)`.
        let fields: Vec<&str> = stat
            .get(stat.rfind(')')? + 1..)?
            .split_whitespace()
            .collect();
        // proc(5) numbers the fields from 1, the state being field 3.
        let field = |n: usize| -> Option<i64> { fields.get(n - 3)?.parse().ok() };
        let value = |text: &str, key: &str| -> Option<i64> {
            text.lines()
                .find_map(|line| line.strip_prefix(key))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        };
        let kib = |key: &str| value(status, key).map(|v| v.saturating_mul(1024));
        Some(Reading {
            cpu_seconds: (field(14)? + field(15)?) as f64 / TICKS_PER_SECOND,
            threads: field(20)?,
            start_time_seconds: value(system, "btime ")? as f64
                + field(22)? as f64 / TICKS_PER_SECOND,
            virtual_bytes: kib("VmSize:")?,
            resident_bytes: kib("VmRSS:")?,
            open_fds: 0,
            // "unlimited" reads as no limit known.
            max_fds: value(limits, "Max open files").unwrap_or(-1),
        })
    }
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let Some(r) = Reading::now() else {
            return Ok(());
        };
        let cpu = ConstCounter::new(r.cpu_seconds);
        cpu.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            cpu.metric_type(),
        )?)?;
        let gauges: [(&str, &str, f64); 6] = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                r.resident_bytes as f64,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                r.virtual_bytes as f64,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                r.open_fds as f64,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                r.max_fds as f64,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                r.start_time_seconds,
            ),
            (
                "process_threads",
                "Number of OS threads in the process.",
                r.threads as f64,
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Reading;

    const STATUS: &str = "Name:\tnbv\nVmSize:\t  102400 kB\nVmRSS:\t   10240 kB\nThreads:\t7\n";
    const SYSTEM: &str = "cpu  1 2 3\nbtime 1700000000\nprocesses 10\n";
    const LIMITS: &str = "Limit                     Soft Limit           Hard Limit           Units\n\
                          Max open files            1048576              1048576              files\n";

    #[test]
    fn a_stat_line_whose_command_holds_parentheses_and_spaces() {
        let stat = "4242 (nbv (run) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 \
                    7 0 12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 \
                    1 0 0 0 0 0";
        let r = Reading::parse(stat, STATUS, SYSTEM, LIMITS).expect("a reading");
        assert_eq!(r.cpu_seconds, 3.0, "(250 + 50) ticks at 100 a second");
        assert_eq!(r.threads, 7);
        assert_eq!(r.start_time_seconds, 1_700_000_123.45);
        assert_eq!(r.virtual_bytes, 102_400 * 1024);
        assert_eq!(r.resident_bytes, 10_240 * 1024);
        assert_eq!(r.max_fds, 1_048_576);
    }

    #[test]
    fn a_truncated_stat_line_reads_as_nothing() {
        assert_eq!(
            Reading::parse("4242 (nbv) S 1 2", STATUS, SYSTEM, LIMITS),
            None
        );
        assert_eq!(
            Reading::parse("no parenthesis", STATUS, SYSTEM, LIMITS),
            None
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reads_as_a_live_one() {
        let r = Reading::now().expect("/proc/self on Linux");
        assert!(
            r.resident_bytes > 0 && r.virtual_bytes >= r.resident_bytes,
            "{r:?}"
        );
        assert!(r.threads >= 1 && r.open_fds >= 1, "{r:?}");
        assert!(r.max_fds == -1 || r.max_fds >= r.open_fds, "{r:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after the epoch")
            .as_secs_f64();
        assert!(r.start_time_seconds <= now + 1.0 && r.start_time_seconds > now - 86_400.0 * 365.0);
    }
}
