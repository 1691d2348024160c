//! Logging: one `tracing` subscriber for the whole process, writing to standard error.
//!
//! Logs go to standard error so that standard output stays for what commands print
//! (`nbv wait` messages, rendered manifests). The operator logs JSON in a cluster, one
//! object per line, with the event's fields at the top level; text is for terminals.

use std::fmt;
use std::io::IsTerminal;
use std::str::FromStr;

use nbv_core::text::head_chars;
use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;

/// How many characters of a bad setting an error repeats.
const MAX_SHOWN_CHARS: usize = 64;

/// How log lines are written.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::telemetry::LogFormat;
///
/// assert_eq!("json".parse::<LogFormat>()?, LogFormat::Json);
/// assert_eq!(LogFormat::Text.to_string(), "text");
/// assert!("yaml".parse::<LogFormat>().is_err());
/// # Ok::<(), nbv_operator::runtime::telemetry::TelemetryError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line, fields at the top level: for log collectors.
    #[default]
    Json,
    /// Human-readable lines: for terminals.
    Text,
}

impl LogFormat {
    /// The name accepted by [`FromStr`] and printed by [`Display`](fmt::Display).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nbv_operator::runtime::telemetry::LogFormat::Json.as_str(), "json");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            LogFormat::Json => "json",
            LogFormat::Text => "text",
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogFormat {
    type Err = TelemetryError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "json" => Ok(LogFormat::Json),
            "text" => Ok(LogFormat::Text),
            _ => Err(TelemetryError::UnknownFormat {
                format: head_chars(text, MAX_SHOWN_CHARS).0.to_owned(),
            }),
        }
    }
}

/// Logging could not be set up.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::telemetry::{init_logging, LogFormat, TelemetryError};
///
/// let err = init_logging(LogFormat::Text, "info,=").unwrap_err();
/// assert!(matches!(err, TelemetryError::InvalidFilter { .. }));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The filter is not a valid `RUST_LOG` directive list.
    #[error(
        "invalid log filter {filter:?}: {source}; write comma-separated directives such as \
         \"info\" or \"info,nbv_operator=debug,kube=warn\""
    )]
    InvalidFilter {
        /// The filter as given (at most 64 characters of it).
        filter: String,
        /// The parser's explanation.
        #[source]
        source: tracing_subscriber::filter::ParseError,
    },
    /// The log format is neither `json` nor `text`.
    #[error("unknown log format {format:?}; use \"json\" or \"text\"")]
    UnknownFormat {
        /// The format as given (at most 64 characters of it).
        format: String,
    },
    /// A global subscriber was already installed: logging is set up once per process.
    #[error("logging is already set up in this process: {source}")]
    AlreadyInitialized {
        /// Why the subscriber could not be installed.
        #[source]
        source: tracing_subscriber::util::TryInitError,
    },
}

/// Parses a `RUST_LOG`-style filter.
fn filter(directives: &str) -> Result<EnvFilter, TelemetryError> {
    EnvFilter::try_new(directives).map_err(|source| TelemetryError::InvalidFilter {
        filter: head_chars(directives, MAX_SHOWN_CHARS).0.to_owned(),
        source,
    })
}

/// The subscriber [`init_logging`] installs, writing to `writer`; text lines are
/// coloured only when `ansi` (a terminal), so that files and collectors get plain text.
fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
    ansi: bool,
) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(ansi);
    match format {
        LogFormat::Json => Box::new(builder.json().flatten_event(true).finish()),
        LogFormat::Text => Box::new(builder.finish()),
    }
}

/// Installs the process-wide subscriber: `format` lines on standard error, filtered by
/// `filter`, a `RUST_LOG`-style directive list such as `info` or
/// `info,nbv_operator=debug,kube=warn`. Records of the `log` crate (used by some
/// dependencies) go through the same subscriber.
///
/// The caller decides where the filter comes from, typically `RUST_LOG` when set and
/// `info` otherwise.
///
/// # Errors
///
/// [`TelemetryError::InvalidFilter`] for a filter that does not parse (nothing is
/// installed), [`TelemetryError::AlreadyInitialized`] when called a second time.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::telemetry::{init_logging, LogFormat, TelemetryError};
///
/// init_logging(LogFormat::Json, "info")?;
/// tracing::info!(wave = 4, "logging works");
/// assert!(matches!(
///     init_logging(LogFormat::Json, "info"),
///     Err(TelemetryError::AlreadyInitialized { .. })
/// ));
/// # Ok::<(), TelemetryError>(())
/// ```
pub fn init_logging(format: LogFormat, filter: &str) -> Result<(), TelemetryError> {
    let filter = self::filter(filter)?;
    let ansi = std::io::stderr().is_terminal();
    subscriber(format, filter, std::io::stderr, ansi)
        .try_init()
        .map_err(|source| TelemetryError::AlreadyInitialized { source })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A writer that appends to a shared buffer, one clone per log line.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let mut buffer = self.0.lock().map_err(|_| std::io::ErrorKind::Other)?;
            buffer.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'w self) -> Self::Writer {
            self.clone()
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }

    fn log_with(format: LogFormat, directives: &str) -> String {
        let buffer = Buffer::default();
        let filter = filter(directives).expect("test filters are valid");
        let subscriber = subscriber(format, filter, buffer.clone(), false);
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(job = "train", wave = 4, "gate opened");
            tracing::debug!("hidden at info");
        });
        buffer.text()
    }

    #[test]
    fn json_lines_are_objects_with_fields_at_the_top_level() {
        let text = log_with(LogFormat::Json, "info");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "only the info event passes: {text}");
        let line: serde_json::Value = serde_json::from_str(lines[0]).expect("a JSON object");
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["message"], "gate opened");
        assert_eq!(line["job"], "train");
        assert_eq!(line["wave"], 4);
        assert!(line["timestamp"].is_string());
    }

    #[test]
    fn text_lines_carry_the_message_and_fields() {
        let text = log_with(LogFormat::Text, "debug");
        assert_eq!(text.lines().count(), 2, "debug shows both events: {text}");
        assert!(text.contains("gate opened"));
        assert!(text.contains("job=\"train\""));
        assert!(text.contains("hidden at info"));
    }

    #[test]
    fn a_filter_can_silence_everything() {
        assert_eq!(log_with(LogFormat::Json, "off"), "");
    }

    #[test]
    fn an_invalid_filter_names_itself_and_the_syntax() {
        let err = filter("info,nbv_operator=loud").expect_err("not a level");
        let message = err.to_string();
        assert!(message.starts_with("invalid log filter \"info,nbv_operator=loud\": "));
        assert!(message.contains("info,nbv_operator=debug,kube=warn"));
    }

    #[test]
    fn formats_parse_back_from_their_names() {
        for format in [LogFormat::Json, LogFormat::Text] {
            assert_eq!(format.to_string().parse::<LogFormat>().ok(), Some(format));
        }
        let err = "JSON"
            .parse::<LogFormat>()
            .expect_err("names are lower case");
        assert_eq!(
            err.to_string(),
            "unknown log format \"JSON\"; use \"json\" or \"text\""
        );
    }
}
