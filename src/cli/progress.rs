//! The progress bar: on stderr, never stdout; by default only when stderr is a terminal. Forced
//! (`--progress`) onto something else, such as a log file, it prints plain lines instead of
//! redrawing one.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// A progress bar counting input bytes (hidden when not wanted).
pub struct Progress {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl Progress {
    /// A bar for an input of `len` bytes (unknown for stdin); `wanted` is `--progress` (`Some(true)`),
    /// `--no-progress` (`Some(false)`) or neither.
    pub fn new(wanted: Option<bool>, len: Option<u64>) -> Progress {
        let style = match len {
            Some(_) => "{bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec}, {eta} left",
            None => "{spinner} {bytes} read, {bytes_per_sec}",
        };
        Progress::with_style(wanted, len, style)
    }

    /// A bar counting `len` steps of some work (`what`: "merges"), on the same terms as
    /// [`Progress::new`].
    pub fn steps(wanted: Option<bool>, len: u64, what: &str) -> Progress {
        let style = format!("{{pos}}/{{len}} {what} [{{wide_bar}}] {{per_sec}}, {{eta}} left");
        Progress::with_style(wanted, Some(len), &style)
    }

    fn with_style(wanted: Option<bool>, len: Option<u64>, style: &str) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        if !wanted.unwrap_or(terminal) {
            return Progress {
                bar: None,
                terminal,
            };
        }
        let target = if terminal {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::term_like_with_hz(Box::new(PlainLines), 1)
        };
        let style = ProgressStyle::with_template(style).expect("a valid template");
        let bar = match len {
            Some(len) => ProgressBar::with_draw_target(Some(len), target)
                .with_style(style.progress_chars("=> ")),
            None => ProgressBar::with_draw_target(None, target).with_style(style),
        };
        if terminal {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Progress {
            bar: Some(bar),
            terminal,
        }
    }

    /// Sets the count of steps done (for [`Progress::steps`]).
    pub fn set_position(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// Counts `bytes` more of input done.
    pub fn advance(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    /// Ends the bar: a terminal's is cleared, so that what follows (the total of `count`, an
    /// error) starts on a clean line; a log gets the final state as its last line.
    pub fn finish(&self) {
        match &self.bar {
            Some(bar) if !bar.is_finished() && self.terminal => bar.finish_and_clear(),
            Some(bar) if !bar.is_finished() => bar.finish(),
            _ => {}
        }
    }
}

impl Drop for Progress {
    /// A command that fails stops without finishing the bar: clear it before the error message.
    fn drop(&mut self) {
        self.finish();
    }
}

/// A "terminal" that cannot move the cursor: each redraw becomes a new line on stderr.
#[derive(Debug)]
struct PlainLines;

impl TermLike for PlainLines {
    fn width(&self) -> u16 {
        80
    }

    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        writeln!(std::io::stderr(), "{s}")
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        if s.is_empty() {
            Ok(())
        } else {
            writeln!(std::io::stderr(), "{s}")
        }
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
