//! Encoding the parts of a raw text: each as a part ([`Tokenizer::encode_part_into`]), and for
//! a model whose parts carry state from one to the next ([`Tokenizer::parts_carry`]), the
//! carry handed from each part to the next across the worker threads.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, PoisonError};

use simdtok::pipeline::{CarrySource, PartCarry, PartPlace};
use simdtok::{Encoding, Tokenizer};

use super::CliResult;
use super::input::Part;

/// Encodes the texts of records, whole or as parts of a raw text.
pub struct PartEncoder<'t> {
    tokenizer: &'t Tokenizer,
    /// For a model whose parts carry state.
    carries: Option<Carries>,
}

impl<'t> PartEncoder<'t> {
    pub fn new(tokenizer: &'t Tokenizer) -> PartEncoder<'t> {
        PartEncoder {
            tokenizer,
            carries: tokenizer.parts_carry().then(Carries::default),
        }
    }

    /// A guard to hold while encoding a record: if the thread panics, the parts after it stop
    /// waiting for its carry (the panic then ends the run instead of a wait that never ends).
    pub fn guard(&self) -> Option<AbortOnPanic<'_>> {
        self.carries.as_ref().map(AbortOnPanic)
    }

    /// `text` as read; a failure (which ends the run) also stops the parts after it waiting
    /// for a carry this part will not give.
    pub fn checked<T>(&self, text: CliResult<T>) -> CliResult<T> {
        if text.is_err()
            && let Some(c) = &self.carries
        {
            c.abort();
        }
        text
    }

    /// The ids of the record's `text` appended to `ids`.
    pub fn ids_append(&self, part: Part, text: &str, ids: &mut Vec<u32>) {
        self.encode(part, text, |place, take| {
            self.tokenizer
                .encode_part_ids_append(text, place, take, ids)
        });
    }

    /// The record's `text` into `out` (cleared first).
    pub fn encode_into(&self, part: Part, text: &str, out: &mut Encoding, pieces: bool) {
        self.encode(part, text, |place, take| {
            self.tokenizer
                .encode_part_into(text, place, take, out, pieces)
        });
    }

    fn encode(
        &self,
        part: Part,
        text: &str,
        encode: impl FnOnce(PartPlace, &mut dyn CarrySource) -> PartCarry,
    ) {
        let Part::Raw { base, first, last } = part else {
            encode(PartPlace::WHOLE, &mut PartCarry::default());
            return;
        };
        let place = PartPlace { first, last };
        let Some(carries) = &self.carries else {
            encode(place, &mut PartCarry::default());
            return;
        };
        // Keyed by where the receiving part starts.
        let mut source = Waiting {
            carries,
            start: base,
            next: base + text.len() as u64,
            given: false,
        };
        let next = encode(place, &mut source);
        if !source.given {
            carries.put(source.next, next);
        }
    }
}

/// The carry of the part starting at `start`, from the board, and the one it gives the part
/// starting at `next`.
struct Waiting<'a> {
    carries: &'a Carries,
    start: u64,
    next: u64,
    given: bool,
}

impl CarrySource for Waiting<'_> {
    fn ready(&mut self) -> Option<PartCarry> {
        self.carries.try_take(self.start)
    }
    fn wait(&mut self) -> PartCarry {
        self.carries.take(self.start)
    }
    fn done(&mut self, next: PartCarry) {
        self.carries.put(self.next, next);
        self.given = true;
    }
}

/// Stops the waits for carries when a worker panics (the panic then ends the run instead of
/// leaving a worker waiting for a carry that never comes).
pub struct AbortOnPanic<'a>(&'a Carries);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abort();
        }
    }
}

/// The carries of a raw text's parts ([`Tokenizer::parts_carry`]) on their way from one part to
/// the next, keyed by where the receiving part starts. Parts are handed out in order, so the
/// part a worker waits for is always being encoded by another (or is done): one wait per part
/// of 256 KiB, not per text, and only for the model's own sequential step.
#[derive(Default)]
struct Carries {
    ready: Mutex<(HashMap<u64, PartCarry>, bool)>,
    changed: Condvar,
}

impl Carries {
    /// The carry for the part starting at `start`, once the part before has put it.
    fn take(&self, start: u64) -> PartCarry {
        if start == 0 {
            return PartCarry::default();
        }
        let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(carry) = ready.0.remove(&start) {
                return carry;
            }
            if ready.1 {
                // An earlier part failed: this part's result is never written.
                return PartCarry::default();
            }
            ready = self
                .changed
                .wait(ready)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The carry for the part starting at `start`, if the part before has put it.
    fn try_take(&self, start: u64) -> Option<PartCarry> {
        if start == 0 {
            return Some(PartCarry::default());
        }
        let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        ready.0.remove(&start)
    }

    /// Hands `carry` to the part starting at `start`.
    fn put(&self, start: u64, carry: PartCarry) {
        let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        ready.0.insert(start, carry);
        self.changed.notify_all();
    }

    /// A part failed: those waiting stop waiting.
    fn abort(&self) {
        self.ready.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.changed.notify_all();
    }
}
