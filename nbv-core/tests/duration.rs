//! Go's `time.ParseDuration` as `nbv_core::duration::parse_go` reads it: the grammar of
//! an Argo CD sync window's `duration`. (The grammar of `spec.timeout`, `parse_duration`,
//! is tested with `nbv wait --timeout` in `nbv-operator/tests/wait.rs`.)

use chrono::Duration;
use nbv_core::duration::parse_go;
use proptest::prelude::*;

#[test]
fn go_durations() {
    assert_eq!(parse_go("1h2m3s").unwrap(), Duration::seconds(3723));
    assert_eq!(parse_go(".5s").unwrap(), Duration::milliseconds(500));
    assert_eq!(parse_go("1µs").unwrap(), Duration::microseconds(1));
    assert_eq!(parse_go("0").unwrap(), Duration::zero());
    for bad in ["1", "h", "1 h", "1.2.3s", "-", "1H", "3000000h"] {
        assert!(parse_go(bad).is_err(), "{bad:?}");
    }
}

proptest! {
    #[test]
    fn durations_written_by_parts_parse_back(h in 0i64..1000, m in 0i64..1000, s in 0i64..1000, negative in any::<bool>()) {
        let text = format!("{}{h}h{m}m{s}s", if negative { "-" } else { "" });
        let expected = Duration::seconds(h * 3600 + m * 60 + s);
        prop_assert_eq!(parse_go(&text).unwrap(), if negative { -expected } else { expected });
    }
}
