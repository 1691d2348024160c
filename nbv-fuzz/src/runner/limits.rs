//! The limits each input runs under: a memory cap enforced by a counting allocator, a
//! time limit enforced by a watchdog thread. Neither can unwind the target (an
//! allocator may not panic, and a thread cannot be stopped from outside), so both end
//! the process after saving and printing the input, as libFuzzer does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use super::Finding;
use super::FindingKind;

/// The allocator the runner's binaries install (`#[global_allocator]`): the system
/// allocator, counting the bytes live, failing the run when the cap is exceeded while
/// an input runs.
///
/// # Examples
///
/// ```no_run
/// #[global_allocator]
/// static ALLOCATOR: nbv_fuzz::runner::CountingAllocator = nbv_fuzz::runner::CountingAllocator;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CountingAllocator;

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The cap on live bytes; `usize::MAX` while no input runs.
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

impl CountingAllocator {
    fn grew(size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        if live > CAP.load(Ordering::Relaxed) {
            // Disarm first: what follows allocates.
            let cap = CAP.swap(usize::MAX, Ordering::SeqCst);
            if cap != usize::MAX {
                fail_current(FindingKind::Memory { live, limit: cap });
            }
        }
    }
}

// SAFETY: every call is passed on to the system allocator unchanged; only counters are
// updated around it.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::grew(layout.size());
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::grew(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            Self::grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The bytes live now, as the counting allocator sees them (0 when it is not
/// installed).
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Whether the counting allocator is the global allocator: without it the memory
/// limit would silently not apply.
pub fn allocator_installed() -> bool {
    let before = live_bytes();
    let probe = std::hint::black_box(vec![1u8; 1 << 20]);
    let counted = live_bytes() >= before + (1 << 20);
    drop(probe);
    counted
}

/// The limits of one input.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest an input may run.
    pub time: Duration,
    /// Most bytes live at once while it runs (the runner's own included).
    pub memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: Duration::from_secs(1),
            memory: 512 << 20,
        }
    }
}

/// The input running now, for the watchdog and the allocator to report.
struct Current {
    target: &'static str,
    input: Vec<u8>,
    artifacts: std::path::PathBuf,
}

static CURRENT: Mutex<Option<Current>> = Mutex::new(None);
/// Milliseconds since `EPOCH` at which the running input started, plus one; 0 when
/// none runs.
static STARTED: AtomicU64 = AtomicU64::new(0);
static LIMIT_MS: AtomicU64 = AtomicU64::new(1000);
static WATCHDOG: Once = Once::new();
static FAILING: AtomicBool = AtomicBool::new(false);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64 + 1
}

/// Saves and prints the running input and ends the process: the limit broken cannot
/// be recovered from.
fn fail_current(kind: FindingKind) -> ! {
    if FAILING.swap(true, Ordering::SeqCst) {
        // Another thread is reporting already.
        loop {
            std::thread::park();
        }
    }
    let current = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).take();
    match current {
        Some(current) => {
            let finding = Finding {
                target: current.target,
                kind,
                input: current.input,
                saved: None,
            };
            let finding = finding.save(&current.artifacts);
            eprintln!("{finding}");
        }
        None => eprintln!("nbv-fuzz: {kind} outside any input"),
    }
    std::process::exit(1);
}

fn start_watchdog() {
    WATCHDOG.call_once(|| {
        let _ = epoch();
        std::thread::Builder::new()
            .name("nbv-fuzz-watchdog".to_owned())
            .spawn(|| {
                loop {
                    std::thread::sleep(Duration::from_millis(20));
                    let started = STARTED.load(Ordering::SeqCst);
                    let limit = LIMIT_MS.load(Ordering::SeqCst);
                    if started != 0 && now_ms().saturating_sub(started) > limit {
                        CAP.store(usize::MAX, Ordering::SeqCst);
                        fail_current(FindingKind::Timeout {
                            limit: Duration::from_millis(limit),
                        });
                    }
                }
            })
            .expect("the watchdog thread starts");
    });
}

/// Runs `f` on `input` of `target` under `limits`: the process ends, after saving the
/// input under `artifacts`, when the input breaks a limit.
pub(super) fn limited<T>(
    target: &'static str,
    input: &[u8],
    limits: &Limits,
    artifacts: &std::path::Path,
    f: impl FnOnce() -> T,
) -> T {
    start_watchdog();
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(Current {
        target,
        input: input.to_vec(),
        artifacts: artifacts.to_path_buf(),
    });
    LIMIT_MS.store(limits.time.as_millis() as u64, Ordering::SeqCst);
    CAP.store(limits.memory, Ordering::SeqCst);
    STARTED.store(now_ms(), Ordering::SeqCst);
    let result = f();
    STARTED.store(0, Ordering::SeqCst);
    CAP.store(usize::MAX, Ordering::SeqCst);
    result
}
