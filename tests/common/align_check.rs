//! What the alignment tests on corpora and noise share: the three checks against the reference
//! (`tokenizations` 0.4.2) with a shrinker that reduces a failing input to a small one, the
//! tally of comparisons, a seeded generator and the noise it makes. Included as
//!
//! ```ignore
//! #[path = "common/align_check.rs"]
//! mod align_check;
//! ```

// Each test uses a different subset.
#![allow(dead_code)]
#![allow(deprecated)] // tokenizations::get_original_spans, the reference for ours

use std::cell::Cell;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::time::{Duration, Instant};

use simdtok::align;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

// ---------------------------------------------------------------------------------------------
// Checks

/// Failures shrunk and shown in full; later ones are counted only.
const SHOWN_FAILURES: usize = 4;
/// Time one shrink may take (each try runs the reference and ours).
const SHRINK_BUDGET: Duration = Duration::from_secs(20);

/// The comparisons of one test and its failures.
#[derive(Default)]
pub struct Tally {
    pub alignments: usize,
    pub charmaps: usize,
    pub spans: usize,
    /// Units (normalized characters) of the largest pair compared.
    pub largest: usize,
    failures: Vec<String>,
    failed: usize,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    pub fn total(&self) -> usize {
        self.alignments + self.charmaps + self.spans
    }

    /// Prints the counts, and panics with every failure shown.
    pub fn finish(&self, test: &str, started: Instant) {
        println!(
            "{test}: {} comparisons ({} get_alignments, {} get_charmap, {} get_original_spans), \
             largest pair {} chars, {:.1} s",
            self.total(),
            self.alignments,
            self.charmaps,
            self.spans,
            self.largest,
            started.elapsed().as_secs_f64()
        );
        if self.failed > 0 {
            let mut message = format!(
                "{test}: {} of {} comparisons differ from the reference (tokenizations 0.4.2)",
                self.failed,
                self.total()
            );
            for f in &self.failures {
                message.push_str("\n\n");
                message.push_str(f);
            }
            if self.failed > self.failures.len() {
                let _ = write!(
                    message,
                    "\n\n({} more not shown)",
                    self.failed - self.failures.len()
                );
            }
            panic!("{message}");
        }
    }

    fn note(&mut self, units: usize) {
        self.largest = self.largest.max(units);
    }

    fn fail(&mut self, report: impl FnOnce() -> String) {
        self.failed += 1;
        if self.failures.len() < SHOWN_FAILURES {
            self.failures.push(report());
        }
    }

    /// `get_alignments(a, b)` identical to the reference.
    pub fn alignments(&mut self, what: &str, a: &[String], b: &[String]) {
        self.alignments += 1;
        self.note(chars(a) + chars(b));
        if alignments_differ(a, b) == Some(true) {
            self.fail(|| {
                let input = shrink(vec![a.to_vec(), b.to_vec()], |p| {
                    alignments_differ(&p[0], &p[1]) == Some(true)
                });
                let (a, b) = (&input[0], &input[1]);
                format!(
                    "{what}: get_alignments differs ({} and {} tokens, shrunk to):\n  \
                     a = {a:?}\n  b = {b:?}\n  reference: {:?}\n  ours:      {}",
                    a.len(),
                    b.len(),
                    tokenizations::get_alignments(a, b),
                    ours(|| align::get_alignments(a, b))
                )
            });
        }
    }

    /// `get_charmap(a, b)` identical to the reference.
    pub fn charmap(&mut self, what: &str, a: &str, b: &str) {
        self.charmaps += 1;
        self.note(a.chars().count() + b.chars().count());
        if charmap_differs(a, b) == Some(true) {
            self.fail(|| {
                let input = shrink(vec![char_list(a), char_list(b)], |p| {
                    charmap_differs(&p[0].concat(), &p[1].concat()) == Some(true)
                });
                let (a, b) = (input[0].concat(), input[1].concat());
                format!(
                    "{what}: get_charmap differs (shrunk to):\n  a = {a:?}\n  b = {b:?}\n  \
                     reference: {:?}\n  ours:      {}",
                    tokenizations::get_charmap(&a, &b),
                    ours(|| align::get_charmap(&a, &b))
                )
            });
        }
    }

    /// `get_original_spans(tokens, text)` identical to the reference.
    pub fn spans(&mut self, what: &str, tokens: &[String], text: &str) {
        self.spans += 1;
        self.note(chars(tokens) + text.chars().count());
        if spans_differ(tokens, text) == Some(true) {
            self.fail(|| {
                let input = shrink(vec![tokens.to_vec(), char_list(text)], |p| {
                    spans_differ(&p[0], &p[1].concat()) == Some(true)
                });
                let (tokens, text) = (&input[0], input[1].concat());
                format!(
                    "{what}: get_original_spans differs (shrunk to):\n  tokens = {tokens:?}\n  \
                     text = {text:?}\n  reference: {:?}\n  ours:      {}",
                    tokenizations::get_original_spans(tokens, &text),
                    ours(|| align::get_original_spans(tokens, &text))
                )
            });
        }
    }

    /// Records a failure found by a caller's own comparison (shown as given).
    pub fn fail_with(&mut self, report: impl FnOnce() -> String) {
        self.fail(report);
    }
}

fn chars(tokens: &[String]) -> usize {
    tokens.iter().map(|t| t.chars().count()).sum()
}

fn char_list(text: &str) -> Vec<String> {
    text.chars().map(String::from).collect()
}

/// Ours, or the message it panicked with.
fn ours<T: std::fmt::Debug>(f: impl FnOnce() -> T) -> String {
    match quietly(f) {
        Ok(v) => format!("{v:?}"),
        Err(message) => format!("PANICKED: {message}"),
    }
}

/// Whether ours differs from the reference (a panic of ours is a difference); `None` when the
/// reference itself panicked (then the input is no test of ours).
pub fn alignments_differ(a: &[String], b: &[String]) -> Option<bool> {
    let want = quietly(|| tokenizations::get_alignments(a, b)).ok()?;
    Some(quietly(|| align::get_alignments(a, b)).map_or(true, |got| got != want))
}

pub fn charmap_differs(a: &str, b: &str) -> Option<bool> {
    let want = quietly(|| tokenizations::get_charmap(a, b)).ok()?;
    Some(quietly(|| align::get_charmap(a, b)).map_or(true, |got| got != want))
}

pub fn spans_differ(tokens: &[String], text: &str) -> Option<bool> {
    let want = quietly(|| tokenizations::get_original_spans(tokens, text)).ok()?;
    Some(quietly(|| align::get_original_spans(tokens, text)).map_or(true, |got| got != want))
}

thread_local! {
    static SILENT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, catching a panic without printing it (other threads' panics still print).
pub fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !SILENT.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was = SILENT.with(|s| s.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    SILENT.with(|s| s.set(was));
    result.map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "(no message)".into())
    })
}

/// A smaller input on which `fails` still holds: removes elements of each list (halves, then
/// quarters, … then single ones), then characters of each element, until nothing more can go
/// or the time budget is spent.
pub fn shrink(
    mut input: Vec<Vec<String>>,
    fails: impl Fn(&[Vec<String>]) -> bool,
) -> Vec<Vec<String>> {
    let started = Instant::now();
    let in_time = || started.elapsed() < SHRINK_BUDGET;
    loop {
        let mut progress = false;
        for list in 0..input.len() {
            // Whole elements.
            let mut chunk = input[list].len().div_ceil(2).max(1);
            while chunk >= 1 && in_time() {
                let mut at = 0;
                while at < input[list].len() && in_time() {
                    let mut trial = input.clone();
                    let end = (at + chunk).min(trial[list].len());
                    trial[list].drain(at..end);
                    if fails(&trial) {
                        input = trial;
                        progress = true;
                    } else {
                        at += chunk;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2);
            }
            // Characters inside elements.
            for e in 0..input[list].len() {
                let mut chunk = input[list][e].chars().count().div_ceil(2).max(1);
                while in_time() {
                    let mut at = 0;
                    while at < input[list][e].chars().count() && in_time() {
                        let mut trial = input.clone();
                        let cs: Vec<char> = trial[list][e].chars().collect();
                        let end = (at + chunk).min(cs.len());
                        trial[list][e] = cs[..at].iter().chain(&cs[end..]).collect();
                        if fails(&trial) {
                            input = trial;
                            progress = true;
                        } else {
                            at += chunk;
                        }
                    }
                    if chunk == 1 {
                        break;
                    }
                    chunk = chunk.div_ceil(2);
                }
            }
        }
        if !progress || !in_time() {
            return input;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/// SplitMix64: a small seeded generator, so every run makes the same pairs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent` %.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------------------------
// Noise

/// Characters and sequences that normalize or compare in interesting ways.
pub const SPICE: &[&str] = &[
    // Accents, precomposed and combining, and stacked marks in non-canonical order.
    "é",
    "e\u{301}",
    "\u{301}",
    "\u{316}\u{301}",
    "ñ",
    "Å",
    "\u{212b}",
    "ǅ",
    "ß",
    "ẞ",
    // Case: Kelvin sign, Turkish dotted and dotless i, Greek capital sigma.
    "\u{212a}",
    "İ",
    "ı",
    "Σ",
    "σ",
    "ς", // Compatibility forms (NFKD expands them).
    "ﬁ",
    "ﬂ",
    "ﬀ",
    "ﬃ",
    "ｆ",
    "Ａ",
    "１",
    "\u{3000}",
    "²",
    "½",
    "Ⅻ",
    "㍻",
    "ﷺ",
    "ｶ", // CJK, Hangul.
    "日",
    "本",
    "語",
    "中",
    "文",
    "한",
    "글",
    "ㅎ",
    "\u{1112}\u{1161}", // Emoji.
    "😀",
    "👍🏽",
    "👩\u{200d}👩\u{200d}👧",
    "🇯🇵",
    "🇫🇷",
    "\u{200d}",
    "\u{fe0f}",
    // Whitespace and ASCII.
    " ",
    "\t",
    "\n",
    "\u{a0}",
    "a",
    "b",
    "e",
    "i",
    "s",
    "-",
    "'",
];

/// Without accents: NFD, then every combining mark dropped.
pub fn strip_accents(s: &str) -> String {
    s.nfd().filter(|&c| !is_combining_mark(c)).collect()
}

/// ASCII `!`..`~` as their full-width forms (U+FF01..U+FF5E), a space as the ideographic space.
pub fn fullwidth(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xff01).unwrap(),
            ' ' => '\u{3000}',
            c => c,
        })
        .collect()
}

/// The ligatures ﬃ ﬄ ﬀ ﬁ ﬂ ﬆ where their letters occur.
pub fn ligatures(s: &str) -> String {
    s.replace("ffi", "ﬃ")
        .replace("ffl", "ﬄ")
        .replace("ff", "ﬀ")
        .replace("fi", "ﬁ")
        .replace("fl", "ﬂ")
        .replace("st", "ﬆ")
}

/// Case changed: upper, lower, title, or each character at random.
pub fn change_case(s: &str, rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => s.to_uppercase(),
        1 => s.to_lowercase(),
        2 => {
            let mut cs = s.chars();
            match cs.next() {
                Some(c) => c.to_uppercase().chain(cs).collect(),
                None => String::new(),
            }
        }
        _ => s
            .chars()
            .map(|c| {
                if rng.percent(50) {
                    c.to_uppercase().collect::<String>()
                } else {
                    c.to_lowercase().collect()
                }
            })
            .collect(),
    }
}

/// Characters deleted, doubled, or inserted from [`SPICE`], each with probability `percent` %.
pub fn edit_chars(s: &str, percent: u64, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !rng.percent(percent) {
            out.push(c);
            continue;
        }
        match rng.below(4) {
            0 => {}
            1 => {
                out.push(c);
                out.push(c);
            }
            2 => {
                let spice = *rng.pick(SPICE);
                out.push_str(spice);
                out.push(c);
            }
            _ => {
                let spice = *rng.pick(SPICE);
                out.push_str(spice);
            }
        }
    }
    out
}

/// The tokens re-cut: adjacent tokens merged, tokens split at a random character, empty and
/// whitespace-only tokens inserted.
pub fn retokenize(tokens: &[String], rng: &mut Rng) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens.len() + 4);
    for t in tokens {
        match rng.below(10) {
            0 if !out.is_empty() => out.last_mut().unwrap().push_str(t),
            1 => {
                let cs: Vec<char> = t.chars().collect();
                let at = rng.below(cs.len() + 1);
                out.push(cs[..at].iter().collect());
                out.push(cs[at..].iter().collect());
            }
            2 => {
                out.push(String::new());
                out.push(t.clone());
            }
            3 => {
                out.push(
                    rng.pick(&[" ", "  ", "\t", "\n", "\u{3000}", "\u{a0}"])
                        .to_string(),
                );
                out.push(t.clone());
            }
            _ => out.push(t.clone()),
        }
    }
    out
}

/// A noisy copy of `tokens`: per token, one or more of the changes above, then re-cut.
pub fn noisy(tokens: &[String], rng: &mut Rng) -> Vec<String> {
    let noisy: Vec<String> = tokens
        .iter()
        .map(|t| {
            let mut t = t.clone();
            if rng.percent(25) {
                t = strip_accents(&t);
            }
            if rng.percent(25) {
                t = change_case(&t, rng);
            }
            if rng.percent(10) {
                t = fullwidth(&t);
            }
            if rng.percent(15) {
                t = ligatures(&t);
            }
            if rng.percent(10) {
                t = t.nfkd().collect();
            }
            if rng.percent(30) {
                t = edit_chars(&t, 15, rng);
            }
            t
        })
        .collect();
    retokenize(&noisy, rng)
}

/// `text`'s first `max` bytes or fewer, cut at a character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
