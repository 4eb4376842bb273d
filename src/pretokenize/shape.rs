//! A split regex's meaning as a canonical tree, so that a pattern is recognised by what it
//! matches and not by how it is spelled.
//!
//! Tokenizer files write the same pattern in many ways: DeepSeek V3's `tokenizer.json` holds
//! `\r\n` as the two control characters themselves, other files escape a quote or reorder a
//! class, write `{1,3}` out as `\p{N}\p{N}?\p{N}?`, or spell `(?i:'s|'t)` as `'(?i:[st])`. Each
//! such writing must take the hand-written scanner, so [`Shape::of`] parses a regex (with
//! `fancy-regex`'s parser, which knows look-arounds and possessive quantifiers; every class and
//! escape through `regex-syntax`, which resolves it to its ranges) and rewrites it by rules that
//! keep the pieces a leftmost-first backtracking search finds. Two patterns with the same shape
//! give the same pieces. The converse does not hold: patterns the rules cannot bring together
//! keep different shapes and go to the regex engine, which is slower and never wrong.
//!
//! The rules (each keeps every match, under the semantics that both `fancy-regex` and
//! Oniguruma share for these constructs):
//! - groups are dropped (a split uses whole matches only), nested sequences and alternations
//!   are flattened, `x{1}` is `x` and `x{0}` nothing;
//! - a literal character is the class of that character (with `(?i)`, of its case folds);
//! - a *finite* part — one built of small classes (at most 16 characters) by
//!   sequence and alternation — is the ordered list of the strings it matches, in the order the
//!   search tries them; later copies of a string are dropped (one that failed fails again);
//! - consecutive branches of an alternation that are finite join into one list; a list none of
//!   whose strings is a proper prefix of another is a set (at a given position it can match at
//!   one length only, so the order of its strings cannot change the piece);
//! - greedy repetitions of one single-character class that follow each other add up:
//!   `x{a,b}x{c,d}` is `x{a+c,b+d}` (both try every run length from the longest down);
//! - an atomic group (possessive quantifier) that ends a top-level branch is a plain group:
//!   after it the match is over, so nothing can backtrack into it.

use std::collections::BTreeSet;

use fancy_regex::{Assertion, Expr, LookAround};
use regex_syntax::hir::{self, Class, Hir, HirKind};

/// A class of at most this many characters is spelled out as strings (the case folds of a letter
/// are two or three; `(?i:[sdmt])` is nine).
const SMALL_CLASS: usize = 16;
/// A finite part of more strings than this stays a tree of classes.
const MAX_STRINGS: usize = 512;

/// A regex's canonical tree (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Matches the empty string.
    Empty,
    /// One character of these ranges (inclusive, sorted, disjoint, not adjacent), a class of
    /// more than 16 characters (`SMALL_CLASS`).
    Class(Vec<(char, char)>),
    /// A finite part, as the strings it matches.
    Words(Words),
    /// Each in turn.
    Seq(Vec<Shape>),
    /// The first that leads to a match, in order.
    Alt(Vec<Shape>),
    /// `min` to `max` (`None`: no bound) times.
    Repeat {
        /// The repeated shape.
        child: Box<Shape>,
        /// The fewest repetitions.
        min: u32,
        /// The most, if bounded.
        max: Option<u32>,
        /// Greedy (most first) or lazy.
        greedy: bool,
    },
    /// No backtracking into it once it matched.
    Atomic(Box<Shape>),
    /// A look-around: ahead or behind, negated or not.
    Look {
        /// The shape looked for.
        child: Box<Shape>,
        /// Ahead (else behind).
        ahead: bool,
        /// Must not match (else must).
        negated: bool,
    },
    /// A zero-width assertion, by name (`fancy-regex`'s or `regex-syntax`'s).
    Assert(&'static str),
}

/// The strings of a finite part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Words {
    /// Tried in this order (some string is a prefix of another).
    Ordered(Vec<String>),
    /// Prefix-free: the order does not matter.
    Set(BTreeSet<String>),
}

impl Words {
    fn strings(&self) -> Vec<&str> {
        match self {
            Words::Ordered(v) => v.iter().map(String::as_str).collect(),
            Words::Set(s) => s.iter().map(String::as_str).collect(),
        }
    }

    /// The canonical form of `strings`, in search order: later copies dropped, a set when
    /// prefix-free.
    fn from_ordered(strings: Vec<String>) -> Words {
        let mut seen = BTreeSet::new();
        let ordered: Vec<String> = strings
            .into_iter()
            .filter(|s| seen.insert(s.clone()))
            .collect();
        // In sorted order a string's extensions follow it, so checking neighbours suffices.
        let prefix_free = seen
            .iter()
            .zip(seen.iter().skip(1))
            .all(|(a, b)| !b.starts_with(a.as_str()));
        if prefix_free {
            Words::Set(seen)
        } else {
            Words::Ordered(ordered)
        }
    }

    /// Whether every string is one character: a small class.
    fn is_single_chars(&self) -> bool {
        self.strings().iter().all(|s| s.chars().count() == 1)
    }
}

impl Shape {
    /// The canonical shape of `source`; `None` when it uses a construct the rules do not cover
    /// (back-references, conditions, …) or does not parse.
    pub fn of(source: &str) -> Option<Shape> {
        let tree = Expr::parse_tree(source).ok()?;
        let shape = from_expr(&tree.expr)?;
        Some(unatomic_tails(normalize(shape)))
    }

    /// Whether the shape matches exactly one character (the rule that adds repetitions up).
    fn is_single_char(&self) -> bool {
        match self {
            Shape::Class(_) => true,
            Shape::Words(w) => w.is_single_chars(),
            _ => false,
        }
    }

    /// The repetition bounds of a greedy repetition of one character (`x` is `x{1,1}`).
    fn single_char_run(&self) -> Option<(&Shape, u32, Option<u32>)> {
        match self {
            Shape::Repeat {
                child,
                min,
                max,
                greedy: true,
            } if child.is_single_char() => Some((child, *min, *max)),
            s if s.is_single_char() => Some((s, 1, Some(1))),
            _ => None,
        }
    }

    /// The strings of a finite shape, in search order, if it is one of at most `MAX_STRINGS`.
    fn finite_strings(&self) -> Option<Vec<String>> {
        match self {
            Shape::Empty => Some(vec![String::new()]),
            Shape::Words(w) => Some(w.strings().into_iter().map(str::to_owned).collect()),
            _ => None,
        }
    }
}

/// A `fancy-regex` tree as a shape, before the rules.
fn from_expr(expr: &Expr) -> Option<Shape> {
    Some(match expr {
        Expr::Empty => Shape::Empty,
        Expr::Any { newline } => {
            hir_shape(&class_hir(if *newline { "(?s:.)" } else { "." }, false)?)?
        }
        Expr::Assertion(a) => Shape::Assert(assertion_name(*a)),
        Expr::Literal { val, casei } => hir_shape(&class_hir(&regex_syntax::escape(val), *casei)?)?,
        Expr::Concat(items) => Shape::Seq(items.iter().map(from_expr).collect::<Option<_>>()?),
        Expr::Alt(items) => Shape::Alt(items.iter().map(from_expr).collect::<Option<_>>()?),
        Expr::Group(inner) => from_expr(inner)?,
        Expr::LookAround(inner, kind) => Shape::Look {
            child: Box::new(from_expr(inner)?),
            ahead: matches!(kind, LookAround::LookAhead | LookAround::LookAheadNeg),
            negated: matches!(kind, LookAround::LookAheadNeg | LookAround::LookBehindNeg),
        },
        Expr::Repeat {
            child,
            lo,
            hi,
            greedy,
        } => Shape::Repeat {
            child: Box::new(from_expr(child)?),
            min: u32::try_from(*lo).ok()?,
            max: if *hi == usize::MAX {
                None
            } else {
                Some(u32::try_from(*hi).ok()?)
            },
            greedy: *greedy,
        },
        Expr::Delegate { inner, casei, .. } => hir_shape(&class_hir(inner, *casei)?)?,
        Expr::AtomicGroup(inner) => Shape::Atomic(Box::new(from_expr(inner)?)),
        _ => return None,
    })
}

fn assertion_name(a: Assertion) -> &'static str {
    match a {
        Assertion::StartText => "start-text",
        Assertion::EndText => "end-text",
        Assertion::StartLine { crlf: false } => "start-line",
        Assertion::StartLine { crlf: true } => "start-line-crlf",
        Assertion::EndLine { crlf: false } => "end-line",
        Assertion::EndLine { crlf: true } => "end-line-crlf",
        Assertion::LeftWordBoundary => "left-word-boundary",
        Assertion::RightWordBoundary => "right-word-boundary",
        Assertion::WordBoundary => "word-boundary",
        Assertion::NotWordBoundary => "not-word-boundary",
        _ => "other-assertion",
    }
}

/// A delegated piece of regex (a class, an escape, a literal) as `regex-syntax` reads it.
fn class_hir(source: &str, casei: bool) -> Option<Hir> {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(casei)
        .build()
        .parse(source)
        .ok()
}

/// A `regex-syntax` tree as a shape, before the rules.
fn hir_shape(hir: &Hir) -> Option<Shape> {
    Some(match hir.kind() {
        HirKind::Empty => Shape::Empty,
        HirKind::Literal(hir::Literal(bytes)) => {
            let text = std::str::from_utf8(bytes).ok()?;
            Shape::Seq(text.chars().map(|c| class_shape(vec![(c, c)])).collect())
        }
        HirKind::Class(Class::Unicode(class)) => class_shape(
            class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect(),
        ),
        HirKind::Class(Class::Bytes(class)) => {
            // Only ASCII bytes are characters of their own.
            let ranges = class
                .ranges()
                .iter()
                .map(|r| {
                    (r.start().is_ascii() && r.end().is_ascii())
                        .then(|| (r.start() as char, r.end() as char))
                })
                .collect::<Option<Vec<_>>>()?;
            class_shape(ranges)
        }
        HirKind::Look(look) => Shape::Assert(look_name(*look)),
        HirKind::Repetition(rep) => Shape::Repeat {
            child: Box::new(hir_shape(&rep.sub)?),
            min: rep.min,
            max: rep.max,
            greedy: rep.greedy,
        },
        HirKind::Capture(cap) => hir_shape(&cap.sub)?,
        HirKind::Concat(items) => Shape::Seq(items.iter().map(hir_shape).collect::<Option<_>>()?),
        HirKind::Alternation(items) => {
            Shape::Alt(items.iter().map(hir_shape).collect::<Option<_>>()?)
        }
    })
}

/// `regex-syntax`'s assertions under the names `fancy-regex` gives the same ones.
fn look_name(look: hir::Look) -> &'static str {
    use hir::Look::*;
    match look {
        Start => "start-text",
        End => "end-text",
        StartLF => "start-line",
        EndLF => "end-line",
        StartCRLF => "start-line-crlf",
        EndCRLF => "end-line-crlf",
        WordUnicode => "word-boundary",
        WordUnicodeNegate => "not-word-boundary",
        WordStartUnicode => "left-word-boundary",
        WordEndUnicode => "right-word-boundary",
        _ => "other-assertion",
    }
}

/// A class, spelled out as one-character strings when small.
fn class_shape(ranges: Vec<(char, char)>) -> Shape {
    let size: usize = ranges
        .iter()
        .map(|&(a, b)| (b as usize) - (a as usize) + 1)
        .sum();
    if size <= SMALL_CLASS {
        let chars = ranges.iter().flat_map(|&(a, b)| (a..=b).map(String::from));
        Shape::Words(Words::Set(chars.collect()))
    } else {
        Shape::Class(ranges)
    }
}

/// Words of more than [`SMALL_CLASS`] single characters (`a|b|c|…`) as the class they are, the
/// shape `[abc…]` has.
fn words_shape(words: Words) -> Shape {
    let strings = words.strings();
    if strings.len() <= SMALL_CLASS || !words.is_single_chars() {
        return Shape::Words(words);
    }
    // `regex-syntax` merges the ranges as it does for a class written out.
    let class = hir::ClassUnicode::new(
        strings
            .iter()
            .filter_map(|s| s.chars().next())
            .map(|c| hir::ClassUnicodeRange::new(c, c)),
    );
    Shape::Class(
        class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect(),
    )
}

/// The rules of the module docs, bottom up.
fn normalize(shape: Shape) -> Shape {
    match shape {
        Shape::Seq(items) => normalize_seq(items.into_iter().map(normalize).collect()),
        Shape::Alt(items) => normalize_alt(items.into_iter().map(normalize).collect()),
        Shape::Repeat {
            child,
            min,
            max,
            greedy,
        } => {
            let child = normalize(*child);
            match (min, max) {
                (_, Some(0)) => Shape::Empty,
                (1, Some(1)) => child,
                _ => Shape::Repeat {
                    child: Box::new(child),
                    min,
                    max,
                    greedy,
                },
            }
        }
        Shape::Atomic(child) => Shape::Atomic(Box::new(normalize(*child))),
        Shape::Look {
            child,
            ahead,
            negated,
        } => Shape::Look {
            child: Box::new(normalize(*child)),
            ahead,
            negated,
        },
        other => other,
    }
}

fn normalize_seq(items: Vec<Shape>) -> Shape {
    let mut flat = Vec::new();
    for item in items {
        match item {
            Shape::Seq(inner) => flat.extend(inner),
            Shape::Empty => {}
            other => flat.push(other),
        }
    }
    // Adjacent finite parts multiply out (in search order: the first part's strings outermost).
    let mut joined: Vec<Shape> = Vec::new();
    for item in flat {
        if let (Some(last), Some(next)) = (
            joined.last().and_then(Shape::finite_strings),
            item.finite_strings(),
        ) && last.len() * next.len() <= MAX_STRINGS
        {
            let product = last
                .iter()
                .flat_map(|a| next.iter().map(move |b| format!("{a}{b}")))
                .collect();
            *joined.last_mut().unwrap() = Shape::Words(Words::from_ordered(product));
            continue;
        }
        joined.push(item);
    }
    // Runs of one character add up.
    let mut merged: Vec<Shape> = Vec::new();
    for item in joined {
        if let Some(last) = merged.last()
            && let (Some((a, amin, amax)), Some((b, bmin, bmax))) =
                (last.single_char_run(), item.single_char_run())
            && a == b
        {
            let child = Box::new(a.clone());
            let max = amax.zip(bmax).map(|(x, y)| x.saturating_add(y));
            *merged.last_mut().unwrap() = Shape::Repeat {
                child,
                min: amin.saturating_add(bmin),
                max,
                greedy: true,
            };
            continue;
        }
        merged.push(item);
    }
    match merged.len() {
        0 => Shape::Empty,
        1 => merged.pop().unwrap(),
        _ => Shape::Seq(merged),
    }
}

fn normalize_alt(items: Vec<Shape>) -> Shape {
    let mut flat = Vec::new();
    for item in items {
        match item {
            Shape::Alt(inner) => flat.extend(inner),
            other => flat.push(other),
        }
    }
    // Consecutive finite branches join into one list.
    let mut joined: Vec<Shape> = Vec::new();
    for item in flat {
        if let (Some(mut last), Some(next)) = (
            joined.last().and_then(Shape::finite_strings),
            item.finite_strings(),
        ) && last.len() + next.len() <= MAX_STRINGS
        {
            last.extend(next);
            *joined.last_mut().unwrap() = words_shape(Words::from_ordered(last));
            continue;
        }
        joined.push(item);
    }
    match joined.len() {
        1 => joined.pop().unwrap(),
        _ => Shape::Alt(joined),
    }
}

/// The last rule: an atomic group at the end of a top-level branch is a plain one.
fn unatomic_tails(shape: Shape) -> Shape {
    match shape {
        Shape::Alt(branches) => Shape::Alt(branches.into_iter().map(unatomic_tail).collect()),
        other => unatomic_tail(other),
    }
}

fn unatomic_tail(shape: Shape) -> Shape {
    match shape {
        Shape::Atomic(child) => unatomic_tail(*child),
        Shape::Seq(mut items) => {
            if let Some(last) = items.pop() {
                items.push(unatomic_tail(last));
            }
            normalize_seq(items)
        }
        other => other,
    }
}

/// The most repetitions of the first greedy run of `class` from one (`class{1,k}`, or `class`
/// alone for `k = 1`) in `shape`, depth first: where a family of patterns differs only in a
/// count (`\p{N}{1,k}`), the count to try.
pub fn first_run_of(shape: &Shape, class: &Shape) -> Option<u32> {
    if shape == class {
        return Some(1);
    }
    match shape {
        Shape::Repeat {
            child,
            min: 1,
            max: Some(k),
            greedy: true,
        } if **child == *class => Some(*k),
        Shape::Seq(items) | Shape::Alt(items) => {
            items.iter().find_map(|item| first_run_of(item, class))
        }
        Shape::Repeat { child, .. } | Shape::Atomic(child) | Shape::Look { child, .. } => {
            first_run_of(child, class)
        }
        _ => None,
    }
}
