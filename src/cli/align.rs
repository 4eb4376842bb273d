//! `simdtok align`: token alignments, in input order whatever the number of threads.
//!
//! Two modes, on the engine of `encode` (blocks of lines handed to worker threads, output written
//! in order):
//! - `--pairs`: JSON lines `{"a": [tokens], "b": [tokens]}` in, `{"a2b": …, "b2a": …}` out, as
//!   [`simdtok::align::get_alignments`] gives them (one [`Aligner`] per worker: its buffers are
//!   reused from pair to pair);
//! - `--model`: texts in (as `encode` reads them), and for each the model's tokens, the text's
//!   words ([`spans::words`]) and the maps between them by byte offsets
//!   ([`spans::align_spans`]).
//!
//! A line is parsed in one pass with `serde_json`, the tokens borrowed from the line where they
//! hold no escape, into vectors reused from line to line; the output is written by hand.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args};
use serde::Deserializer as _;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use simdtok::Encoding;
use simdtok::align::{Aligner, FlatAlignment, spans};
use simdtok::kernels::TierRequest;

use super::args::{EncodeOptions, InputArgs, InputFormat, ModelArgs, OutputArgs, RunArgs};
use super::driver::{BLOCK_BYTES, Workers};
use super::output::Output;
use super::progress::Progress;
use super::{CliResult, Failure, input, model};

/// The options of `align`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("mode").required(true).args(["pairs", "model"])))]
pub struct AlignArgs {
    /// Align pairs of tokenizations: a file of JSON lines `{"a": [tokens], "b": [tokens]}`, or
    /// `-` for stdin.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with_all = [
            "input", "input_format", "field", "tier", "add_special_tokens", "lowercase",
            "no_lowercase", "pattern", "wordpiece_algorithm", "allow_special",
        ]
    )]
    pairs: Option<PathBuf>,
    /// Align a model's tokens with the words of each text: the model file (as for `encode`).
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Force a SIMD tier (scalar, sse4.2, avx2, neon or auto) for `--model`; default:
    /// SIMDTOK_TIER, else the best the CPU supports.
    #[arg(long, value_name = "TIER")]
    tier: Option<TierRequest>,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    options: EncodeOptions,
    #[command(flatten)]
    run: RunArgs,
}

/// Runs `align`.
pub fn run(args: AlignArgs) -> CliResult {
    // clap's group makes exactly one of the two present.
    match (&args.pairs, &args.model) {
        (Some(pairs), None) => run_pairs(pairs, &args),
        (None, Some(model)) => run_model(model, &args),
        _ => Err(Failure::usage("give exactly one of --pairs and --model")),
    }
}

// ---------------------------------------------------------------------------------------------
// --pairs

/// A worker's buffers for `--pairs`: the aligner, and the two token lists of a line (kept empty
/// between lines, for their allocations; see [`recycle`]).
#[derive(Default)]
struct PairScratch {
    aligner: Aligner,
    a: Vec<Cow<'static, str>>,
    b: Vec<Cow<'static, str>>,
}

fn run_pairs(pairs: &Path, args: &AlignArgs) -> CliResult {
    let workers = Workers::new(args.run.threads)?;
    // Read as `encode --input-format jsonl` reads (the field is not used: a line is parsed here).
    let input = InputArgs {
        input: vec![pairs.to_path_buf()],
        input_format: InputFormat::Jsonl,
        field: None,
        separator: None,
    };
    let (source, reader) = input::open(&input, BLOCK_BYTES, None)?;
    let progress = Progress::new(args.run.progress(), source.len);
    let mut out = Output::create(&args.output.output)?;
    workers.run(
        reader,
        &progress,
        |record, scratch: &mut PairScratch, chunk| {
            let line = source.line(record)?;
            let mut a = recycle(std::mem::take(&mut scratch.a));
            let mut b = recycle(std::mem::take(&mut scratch.b));
            parse_pair(line, &mut a, &mut b)
                .map_err(|cause| Failure::at(&source.name, record.line, cause))?;
            let (a2b, b2a) = scratch.aligner.align(&a, &b);
            let out = &mut chunk.bytes;
            out.extend_from_slice(b"{\"a2b\": ");
            push_alignment(out, a2b);
            out.extend_from_slice(b", \"b2a\": ");
            push_alignment(out, b2a);
            out.extend_from_slice(b"}\n");
            chunk.texts += 1;
            chunk.tokens += (a.len() + b.len()) as u64;
            scratch.a = recycle(a);
            scratch.b = recycle(b);
            Ok(())
        },
        |_| {},
        |chunk, _| out.write_all(&chunk.bytes),
    )?;
    out.finish()?;
    progress.finish();
    Ok(())
}

/// The same vector, emptied, for tokens borrowed from another line: clearing it ends every
/// borrow, and collecting the empty iterator back in place keeps its allocation (the two
/// element types have one layout).
fn recycle<'b>(mut tokens: Vec<Cow<'_, str>>) -> Vec<Cow<'b, str>> {
    tokens.clear();
    tokens
        .into_iter()
        .map(|_| unreachable!("emptied"))
        .collect()
}

/// Reads the line `{"a": [...], "b": [...]}` into `a` and `b`, or says why it is not one:
/// invalid JSON, not an object, a field missing or not an array, a token not a string. Other
/// fields are skipped (validated, never built); with a field given twice, the last one counts
/// (as a JSON object read into a map).
fn parse_pair<'de>(
    line: &'de str,
    a: &mut Vec<Cow<'de, str>>,
    b: &mut Vec<Cow<'de, str>>,
) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(line);
    let shape = de
        .deserialize_any(Pair { a, b })
        .and_then(|shape| de.end().map(|()| shape))
        .map_err(|e| {
            // Each record is one line, so serde_json's "line 1" says nothing: keep the column
            // (as `encode --input-format jsonl` does).
            format!(
                "invalid JSON: {}",
                e.to_string().replace(" at line 1 column ", " at column ")
            )
        })?;
    let (fa, fb) = match shape {
        Shape::NotObject(kind) => return Err(format!("expected a JSON object, found {kind}")),
        Shape::Object(fa, fb) => (fa, fb),
    };
    for (name, field) in [("a", fa), ("b", fb)] {
        match field {
            Field::Tokens => {}
            Field::Missing => return Err(format!("no field \"{name}\" in the object")),
            Field::NotArray(kind) => {
                return Err(format!(
                    "field \"{name}\" is {kind}, not an array of strings"
                ));
            }
            Field::BadToken(i, kind) => {
                return Err(format!(
                    "field \"{name}\": the token at index {i} is {kind}, not a string"
                ));
            }
        }
    }
    Ok(())
}

/// The arms of a visitor for booleans, numbers and null, which every field here refuses: each
/// gives `$kind("a boolean")` (and so on), named in the error message.
macro_rules! other_kinds {
    ($value:ty, $kind:path) => {
        fn visit_bool<E>(self, _: bool) -> Result<$value, E> {
            Ok($kind("a boolean"))
        }

        fn visit_i64<E>(self, _: i64) -> Result<$value, E> {
            Ok($kind("a number"))
        }

        fn visit_u64<E>(self, _: u64) -> Result<$value, E> {
            Ok($kind("a number"))
        }

        fn visit_f64<E>(self, _: f64) -> Result<$value, E> {
            Ok($kind("a number"))
        }

        fn visit_unit<E>(self) -> Result<$value, E> {
            Ok($kind("null"))
        }
    };
}

/// What the top-level value of a line held.
enum Shape {
    Object(Field, Field),
    NotObject(&'static str),
}

/// What a field `a` or `b` held.
#[derive(Clone, Copy)]
enum Field {
    Missing,
    Tokens,
    NotArray(&'static str),
    /// The index of the first token that is not a string, and its kind.
    BadToken(usize, &'static str),
}

/// Visits the top-level value, reading fields `a` and `b` into their vectors.
struct Pair<'v, 'de> {
    a: &'v mut Vec<Cow<'de, str>>,
    b: &'v mut Vec<Cow<'de, str>>,
}

impl<'de> Visitor<'de> for Pair<'_, 'de> {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let (mut fa, mut fb) = (Field::Missing, Field::Missing);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::A => fa = map.next_value_seed(Tokens { out: &mut *self.a })?,
                Key::B => fb = map.next_value_seed(Tokens { out: &mut *self.b })?,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Shape::Object(fa, fb))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::NotObject("an array"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::NotObject("a string"))
    }

    other_kinds!(Shape, Shape::NotObject);
}

/// A key of the top-level object.
enum Key {
    A,
    B,
    Other,
}

/// Reads a key (compared without allocating when it has no escape).
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Key, E> {
        Ok(match key {
            "a" => Key::A,
            "b" => Key::B,
            _ => Key::Other,
        })
    }
}

/// The value of `a` or `b`: its strings pushed onto `out` (emptied first), or its kind.
struct Tokens<'v, 'de> {
    out: &'v mut Vec<Cow<'de, str>>,
}

impl<'de> DeserializeSeed<'de> for Tokens<'_, 'de> {
    type Value = Field;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
        self.out.clear();
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tokens<'_, 'de> {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        while let Some(token) = seq.next_element_seed(TokenSeed)? {
            match token {
                Token::Text(text) => self.out.push(text),
                Token::Other(kind) => {
                    // The rest is still validated, not kept.
                    let at = self.out.len();
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(Field::BadToken(at, kind));
                }
            }
        }
        Ok(Field::Tokens)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::NotArray("an object"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Field, E> {
        Ok(Field::NotArray("a string"))
    }

    other_kinds!(Field, Field::NotArray);
}

/// One element of a token array: a string (borrowed from the line when it has no escape), or
/// the kind of anything else.
enum Token<'de> {
    Text(Cow<'de, str>),
    Other(&'static str),
}

struct TokenSeed;

impl<'de> DeserializeSeed<'de> for TokenSeed {
    type Value = Token<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Token<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TokenSeed {
    type Value = Token<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Token<'de>, E> {
        Ok(Token::Text(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Token<'de>, E> {
        Ok(Token::Text(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Token<'de>, E> {
        Ok(Token::Text(Cow::Owned(s)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Token<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Token::Other("an object"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Token<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Token::Other("an array"))
    }

    other_kinds!(Token<'de>, Token::Other);
}

// ---------------------------------------------------------------------------------------------
// --model

/// A worker's buffers for `--model`: the encoding and the tokens' spans.
#[derive(Default)]
struct ModelScratch {
    enc: Encoding,
    token_spans: Vec<(usize, usize)>,
}

fn run_model(path: &Path, args: &AlignArgs) -> CliResult {
    let model_args = ModelArgs {
        model: path.to_path_buf(),
        tier: args.tier,
        verbose: false,
        cache_budget: simdtok::CacheBudget::DEFAULT,
    };
    let tokenizer = model::load(&model_args, Some(&args.options))?;
    let workers = Workers::new(args.run.threads)?;
    // A raw input is read whole, as one record (no cuts: its words and maps would have to be
    // joined across parts).
    let (source, reader) = input::open(&args.input, BLOCK_BYTES, None)?;
    let progress = Progress::new(args.run.progress(), source.len);
    let mut out = Output::create(&args.output.output)?;
    workers.run(
        reader,
        &progress,
        |record, scratch: &mut ModelScratch, chunk| {
            let text = source.text(record)?;
            let enc = &mut scratch.enc;
            tokenizer.encode_into(&text, enc, false);
            scratch.token_spans.clear();
            scratch.token_spans.extend(
                enc.offsets
                    .iter()
                    .map(|&(start, end)| (start as usize, end as usize)),
            );
            let words = spans::words(&text);
            let (word2tokens, token2words) = spans::align_spans(&words, &scratch.token_spans);
            let out = &mut chunk.bytes;
            out.extend_from_slice(b"{\"ids\": [");
            let mut buf = itoa::Buffer::new();
            for (i, &id) in enc.ids.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(buf.format(id).as_bytes());
            }
            out.extend_from_slice(b"], \"offsets\": ");
            push_spans(out, &scratch.token_spans);
            out.extend_from_slice(b", \"words\": ");
            push_spans(out, &words);
            out.extend_from_slice(b", \"word2tokens\": ");
            push_alignment(out, &word2tokens);
            out.extend_from_slice(b", \"token2words\": ");
            push_alignment(out, &token2words);
            out.extend_from_slice(b"}\n");
            chunk.texts += 1;
            chunk.tokens += enc.len() as u64;
            Ok(())
        },
        |_| {},
        // Lines, JSON lines, or the one record of a raw input read whole.
        |chunk, _| out.write_all(&chunk.bytes),
    )?;
    out.finish()?;
    progress.finish();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Output

/// Appends `[[…], […], …]`: each token's row, with the spacing of Python's `json.dumps`.
fn push_alignment(out: &mut Vec<u8>, alignment: &FlatAlignment) {
    let mut buf = itoa::Buffer::new();
    out.push(b'[');
    for i in 0..alignment.len() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.push(b'[');
        for (j, &target) in alignment.row(i).iter().enumerate() {
            if j > 0 {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(buf.format(target).as_bytes());
        }
        out.push(b']');
    }
    out.push(b']');
}

/// Appends `[[start, end], …]`.
fn push_spans(out: &mut Vec<u8>, spans: &[(usize, usize)]) {
    let mut buf = itoa::Buffer::new();
    out.push(b'[');
    for (i, &(start, end)) in spans.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.push(b'[');
        out.extend_from_slice(buf.format(start).as_bytes());
        out.extend_from_slice(b", ");
        out.extend_from_slice(buf.format(end).as_bytes());
        out.push(b']');
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<(Vec<String>, Vec<String>), String> {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        parse_pair(line, &mut a, &mut b)?;
        let own = |v: Vec<Cow<str>>| v.into_iter().map(Cow::into_owned).collect();
        Ok((own(a), own(b)))
    }

    #[test]
    fn pairs_are_read_with_their_errors() {
        let s = |v: &[&str]| v.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse(r#"{"a": ["x", "\u00e9\"", ""], "id": {"k": [1]}, "b": []}"#),
            Ok((s(&["x", "é\"", ""]), vec![]))
        );
        // The last of a repeated field counts.
        assert_eq!(
            parse(r#"{"a": ["1"], "b": ["2"], "a": ["3"]}"#),
            Ok((s(&["3"]), s(&["2"])))
        );
        let err = |line: &str| parse(line).unwrap_err();
        assert!(err("").starts_with("invalid JSON: EOF"), "{}", err(""));
        assert!(err(r#"{"a": [], "b": []} x"#).starts_with("invalid JSON"));
        // Invalid JSON wins over a bad token before it.
        assert!(err(r#"{"a": [1], "b": [}"#).starts_with("invalid JSON"));
        assert_eq!(err("[1]"), "expected a JSON object, found an array");
        assert_eq!(err(r#"{"b": []}"#), "no field \"a\" in the object");
        assert_eq!(err(r#"{"a": []}"#), "no field \"b\" in the object");
        assert_eq!(
            err(r#"{"a": "x", "b": []}"#),
            "field \"a\" is a string, not an array of strings"
        );
        assert_eq!(
            err(r#"{"a": [], "b": ["x", null, 3]}"#),
            "field \"b\": the token at index 1 is null, not a string"
        );
    }

    #[test]
    fn recycled_vectors_keep_their_allocation() {
        let mut v: Vec<Cow<'static, str>> = Vec::with_capacity(64);
        v.push(Cow::Borrowed("x"));
        let line = String::from("y");
        let mut w = recycle(v);
        w.push(Cow::Borrowed(line.as_str()));
        let back: Vec<Cow<'static, str>> = recycle(w);
        assert!(back.is_empty() && back.capacity() >= 64);
    }
}
