//! Backing off a watch that keeps failing.
//!
//! kube-runtime's `default_backoff` resets its delay at every item the watcher yields,
//! and the watcher yields `Event::Init` before each LIST. A LIST that fails every time
//! (a kind that is not served, such as Argo CD's AppProjects where Argo CD is not
//! installed) was therefore retried every 0.8 s for as long as nbv ran: 100 LISTs in
//! two minutes. [`WatchBackoff::patient_backoff`] resets only on progress (an object
//! listed or changed, a listing completed), so such a LIST is retried after 0.8 s,
//! 1.6 s, … up to every 30 s, as client-go's reflector does.

use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use kube::runtime::watcher;

/// The first delay after a failure.
pub const MIN_DELAY: Duration = Duration::from_millis(800);
/// The longest delay between two attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(30);

/// The delay after `previous` (none: the first failure since progress).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_operator::runtime::backoff::{MAX_DELAY, MIN_DELAY, next_delay};
///
/// assert_eq!(next_delay(None), MIN_DELAY);
/// assert_eq!(next_delay(Some(MIN_DELAY)), 2 * MIN_DELAY);
/// assert_eq!(next_delay(Some(Duration::from_secs(25))), MAX_DELAY);
/// ```
pub fn next_delay(previous: Option<Duration>) -> Duration {
    previous.map_or(MIN_DELAY, |delay| (delay * 2).min(MAX_DELAY))
}

/// A watch stream that waits after each error, longer after each error in a row.
pub trait WatchBackoff<K>:
    Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + Sized + 'static
{
    /// This stream, waiting after each error ([`next_delay`]); the delay goes back to
    /// its minimum only when the watch makes progress, not at the `Init` that starts
    /// each new LIST.
    fn patient_backoff(self) -> BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>
    where
        K: Send + 'static,
    {
        let start = (self.boxed(), None::<Duration>, false);
        futures::stream::unfold(start, |(mut stream, mut delay, failed)| async move {
            if failed {
                let wait = next_delay(delay);
                tokio::time::sleep(wait).await;
                delay = Some(wait);
            }
            let item = stream.next().await?;
            match &item {
                Ok(watcher::Event::Init) => {}
                Ok(_) => delay = None,
                Err(_) => {}
            }
            let failed = item.is_err();
            Some((item, (stream, delay, failed)))
        })
        .boxed()
    }
}

impl<K, S> WatchBackoff<K> for S where
    S: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + Sized + 'static
{
}
