//! Progress of a long build, check or verification: the pipeline tells a [`Watch`] each
//! stage as it starts (with how many units it has) and each unit done; the command line
//! draws that as a progress bar on a terminal ([`Bar`]), and everything else ignores it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whoever follows a build's progress.
pub trait Watch: Sync {
    /// A stage starts, with `units` to do (0 when it cannot say).
    fn stage(&self, name: &'static str, units: usize);
    /// `units` more of the current stage are done.
    fn advance(&self, units: usize);
}

/// Nobody: a build that tells no one (tests, the dev server, a library caller).
pub struct Unwatched;

impl Watch for Unwatched {
    fn stage(&self, _: &'static str, _: usize) {}
    fn advance(&self, _: usize) {}
}

/// How long a build runs before its bar appears: a quick build never flashes one.
const SHOWN_AFTER: Duration = Duration::from_secs(1);

/// A progress bar on standard error, drawn only once the work has run for a second, and
/// only where someone watches a terminal: never on a pipe or a file, under CI (`CI` set)
/// or a dumb terminal, nor when asked for quiet. Each stage has a bar of its own, made
/// whole before it is drawn, so that no frame mixes two stages.
pub struct Bar {
    stage: Mutex<ProgressBar>,
    started: Instant,
    shown_after: Duration,
    shown: AtomicBool,
}

impl Bar {
    /// A bar for a command, or `None` where it would not be seen.
    pub fn for_terminal(quiet: bool) -> Option<Bar> {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        if quiet || ci || dumb || !std::io::stderr().is_terminal() {
            return None;
        }
        // The delay can be shortened, so that a test under a pseudo-terminal sees the bar
        // of a small site's build.
        let shown_after = std::env::var("CASEBOOK_PROGRESS_AFTER_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(SHOWN_AFTER, Duration::from_millis);
        Some(Bar {
            stage: Mutex::new(ProgressBar::hidden()),
            started: Instant::now(),
            shown_after,
            shown: false.into(),
        })
    }

    /// The current stage's bar.
    fn current(&self) -> std::sync::MutexGuard<'_, ProgressBar> {
        self.stage.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Draws `bar` from now on, once the work has run long enough.
    fn show_when_due(&self, bar: &ProgressBar) {
        if !self.shown.load(Ordering::Relaxed) && self.started.elapsed() >= self.shown_after {
            self.shown.store(true, Ordering::Relaxed);
        }
        if self.shown.load(Ordering::Relaxed) && bar.is_hidden() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    /// Takes the bar off the terminal, before the summary is printed.
    pub fn clear(&self) {
        self.current().finish_and_clear();
    }
}

impl Watch for Bar {
    fn stage(&self, name: &'static str, units: usize) {
        let template = if units == 0 {
            "{prefix:>10.bold} {spinner} {elapsed}"
        } else {
            "{prefix:>10.bold} [{bar:30}] {human_pos}/{human_len} {elapsed}"
        };
        let style = ProgressStyle::with_template(template).expect("the template is valid").progress_chars("=> ");
        let length = (units > 0).then_some(units as u64);
        let bar =
            ProgressBar::with_draw_target(length, ProgressDrawTarget::hidden()).with_style(style).with_prefix(name);
        let mut current = self.current();
        current.finish_and_clear();
        *current = bar;
        self.show_when_due(&current);
    }

    fn advance(&self, units: usize) {
        let bar = self.current();
        bar.inc(units as u64);
        // A stage that says how many it has can do a few more (the assets after the
        // pages): the bar then grows rather than passing its end.
        if let Some(length) = bar.length().filter(|&length| bar.position() > length) {
            bar.set_length(length.max(bar.position()));
        }
        self.show_when_due(&bar);
    }
}
