//! The output formats: how one text's encoding is written. Rendering happens on the worker
//! threads (decimal and JSON formatting cost as much as a fast tokenizer), the writer only copies
//! bytes in input order.

use clap::ValueEnum;
use simdtok::Encoding;
use simdtok::corpus::datatrove::datatrove_token_size;
use simdtok::corpus::llmc::LlmcLayout;
use simdtok::corpus::megatron::MegatronDtype;

/// The output formats of `encode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One line per text: ids in decimal separated by single spaces.
    Ids,
    /// One line per text: a JSON array of the token strings.
    Pieces,
    /// One JSON object per text: `{"ids": [...], "offsets": [[start, end], ...]}`.
    Jsonl,
    /// A NumPy `.npy` file: a 1-D `<u4` array of all ids.
    Npy,
    /// All ids as little-endian u16.
    U16,
    /// All ids as little-endian u32.
    U32,
    /// Megatron-LM's indexed dataset: `--output PREFIX` writes `PREFIX.bin` and `PREFIX.idx`
    /// (`simdtok::corpus::megatron`), a document per text.
    Megatron,
    /// datatrove's tokenized file: `--output NAME.ds` writes it, `NAME.ds.index` and
    /// `NAME.ds.metadata` (`simdtok::corpus::datatrove`), a document per text.
    Datatrove,
    /// llm.c's token shard: `--output PATH` (`simdtok::corpus::llmc`), the texts' ids one after
    /// another.
    Llmc,
}

impl OutputFormat {
    /// Whether the format is a flat binary array of ids (where `--separator-id` applies).
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            OutputFormat::Npy
                | OutputFormat::U16
                | OutputFormat::U32
                | OutputFormat::Megatron
                | OutputFormat::Datatrove
                | OutputFormat::Llmc
        )
    }

    /// Whether the format is a dataset of documents written by a
    /// [`simdtok::corpus::DocumentWriter`] (a text per document).
    pub fn is_documents(self) -> bool {
        matches!(
            self,
            OutputFormat::Megatron | OutputFormat::Datatrove | OutputFormat::Llmc
        )
    }

    /// Whether the format needs the token strings.
    pub fn needs_pieces(self) -> bool {
        self == OutputFormat::Pieces
    }

    /// Whether the format needs only the ids (then the faster ids-only encoder serves).
    pub fn ids_only(self) -> bool {
        !matches!(self, OutputFormat::Pieces | OutputFormat::Jsonl)
    }

    /// The separator between the items of a list in this format.
    fn list_separator(self) -> &'static [u8] {
        if self == OutputFormat::Ids {
            b" "
        } else {
            b", "
        }
    }
}

/// The ids the binary formats put around each text: `--prepend-bos` before it, `--append-eos`
/// or `--separator-id` after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Affixes {
    /// The id before each text.
    pub before: Option<u32>,
    /// The id after each text.
    pub after: Option<u32>,
}

impl Affixes {
    /// Only an id after each text (`--separator-id`).
    #[cfg(test)]
    pub fn after(id: Option<u32>) -> Affixes {
        Affixes {
            before: None,
            after: id,
        }
    }

    /// How many ids they add to each text.
    pub fn len(self) -> usize {
        usize::from(self.before.is_some()) + usize::from(self.after.is_some())
    }

    /// Whether they add nothing.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The options that put `id` around the texts, for messages.
    pub fn option_of(self, id: u32) -> &'static str {
        if self.before == Some(id) {
            "--prepend-bos"
        } else {
            "--append-eos / --separator-id"
        }
    }

    /// Those of the part of a text that is `first` and/or `last`.
    fn of_part(self, first: bool, last: bool) -> Affixes {
        Affixes {
            before: self.before.filter(|_| first),
            after: self.after.filter(|_| last),
        }
    }
}

/// Renders encodings in one format: the format, the ids around each text ([`Affixes`]), and the
/// decimal strings of the model's ids.
pub struct Render {
    format: OutputFormat,
    /// Bytes per id of a binary format.
    width: usize,
    affixes: Affixes,
    decimals: Decimals,
    /// Tokens the post-processor appends to every text: at the end of a raw text's last part,
    /// their offsets are the text's `(0, 0)`, not moved by the part's start.
    added_suffix: usize,
}

impl Render {
    /// A renderer for a model of `vocab_size` ids (the caller has checked that u16 ids fit).
    pub fn new(format: OutputFormat, affixes: Affixes, vocab_size: usize) -> Render {
        let decimals = if matches!(format, OutputFormat::Ids | OutputFormat::Jsonl) {
            Decimals::new(vocab_size)
        } else {
            Decimals::new(0)
        };
        let width = match format {
            OutputFormat::U16 => 2,
            OutputFormat::Megatron => MegatronDtype::for_vocab(vocab_size).width().bytes,
            OutputFormat::Datatrove => datatrove_token_size(vocab_size),
            OutputFormat::Llmc => LlmcLayout::for_vocab(vocab_size).width().bytes,
            _ => 4,
        };
        Render {
            format,
            width,
            affixes,
            decimals,
            added_suffix: 0,
        }
    }

    /// The renderer for a tokenizer whose post-processor appends `n` tokens to every text
    /// ([`crate::Tokenizer::added_suffix_len`]).
    pub fn with_added_suffix(mut self, n: usize) -> Render {
        self.added_suffix = n;
        self
    }

    /// Whether the format is written from the ids alone, so that a block's texts can be
    /// gathered as ids and rendered at once ([`Render::block`]).
    pub fn per_block(&self) -> bool {
        self.format.ids_only()
    }

    /// Appends the texts whose ids are `ids[ends[i - 1]..ends[i]]` (a format that
    /// [`Render::per_block`]), as [`Render::text`] would one by one.
    pub fn block(&self, ids: &[u32], ends: &[usize], out: &mut Vec<u8>) {
        let mut start = 0;
        match self.format {
            OutputFormat::Ids => {
                for &end in ends {
                    self.decimals.push_ids(out, &ids[start..end], b" ", false);
                    out.push(b'\n');
                    start = end;
                }
            }
            // Without affixes the texts' ids are one array: converted in one pass.
            _ if self.affixes.is_empty() => push_binary(self.width, ids, Affixes::default(), out),
            _ => {
                for &end in ends {
                    push_binary(self.width, &ids[start..end], self.affixes, out);
                    start = end;
                }
            }
        }
    }

    /// Appends one text's encoding `enc` to `out`, between its affixes for the binary formats.
    pub fn text(&self, enc: &Encoding, out: &mut Vec<u8>) {
        match self.format {
            OutputFormat::Ids => {
                self.decimals.push_ids(out, &enc.ids, b" ", false);
                out.push(b'\n');
            }
            OutputFormat::Pieces => {
                // The spacing of Python's json.dumps (as for jsonl); non-ASCII stays as is.
                out.push(b'[');
                for (i, piece) in enc.pieces.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    push_json_string(out, piece);
                }
                out.extend_from_slice(b"]\n");
            }
            OutputFormat::Jsonl => {
                // The spacing of Python's json.dumps, as the contract shows it.
                out.extend_from_slice(b"{\"ids\": [");
                self.decimals.push_ids(out, &enc.ids, b", ", false);
                out.extend_from_slice(b"], \"offsets\": [");
                push_offsets(out, &enc.offsets, 0, false);
                out.extend_from_slice(b"]}\n");
            }
            OutputFormat::Npy
            | OutputFormat::U32
            | OutputFormat::U16
            | OutputFormat::Megatron
            | OutputFormat::Datatrove
            | OutputFormat::Llmc => push_binary(self.width, &enc.ids, self.affixes, out),
        }
    }

    /// Appends the part of one raw text that `enc` is (its offsets relative to byte `base` of
    /// the text) in a form that parts join by concatenation (see [`RawText`]): every item of a
    /// list behind its separator, `jsonl`'s offsets apart in `tail`. The id before a text goes
    /// before its `first` part only, the id after it after the `last` only.
    pub fn part(
        &self,
        enc: &Encoding,
        base: u64,
        (first, last): (bool, bool),
        out: &mut Vec<u8>,
        tail: &mut Vec<u8>,
    ) {
        let sep = self.format.list_separator();
        match self.format {
            OutputFormat::Ids => self.decimals.push_ids(out, &enc.ids, sep, true),
            OutputFormat::Pieces => {
                for piece in &enc.pieces {
                    out.extend_from_slice(sep);
                    push_json_string(out, piece);
                }
            }
            OutputFormat::Jsonl => {
                self.decimals.push_ids(out, &enc.ids, sep, true);
                let added = if last { self.added_suffix } else { 0 };
                let (moved, kept) = enc
                    .offsets
                    .split_at(enc.offsets.len() - added.min(enc.offsets.len()));
                push_offsets(tail, moved, base, true);
                push_offsets(tail, kept, 0, true);
            }
            OutputFormat::Npy
            | OutputFormat::U32
            | OutputFormat::U16
            | OutputFormat::Megatron
            | OutputFormat::Datatrove
            | OutputFormat::Llmc => {
                push_binary(self.width, &enc.ids, self.affixes.of_part(first, last), out)
            }
        }
    }
}

/// How the parts of one raw text are joined into the output of one text: the list separator in
/// front of the first item is dropped, and the text's opening and closing come around the parts.
#[derive(Default)]
pub struct RawText {
    /// Some item was written already (the separator before the next one stays).
    started: bool,
    /// … the same for `jsonl`'s offsets.
    tail_started: bool,
}

impl RawText {
    /// What comes before the first part.
    pub fn opening(format: OutputFormat) -> &'static [u8] {
        match format {
            OutputFormat::Pieces => b"[",
            OutputFormat::Jsonl => b"{\"ids\": [",
            _ => b"",
        }
    }

    /// What comes between `jsonl`'s ids and offsets.
    pub fn middle(format: OutputFormat) -> &'static [u8] {
        match format {
            OutputFormat::Jsonl => b"], \"offsets\": [",
            _ => b"",
        }
    }

    /// What comes after the last part.
    pub fn closing(format: OutputFormat) -> &'static [u8] {
        match format {
            OutputFormat::Ids => b"\n",
            OutputFormat::Pieces => b"]\n",
            OutputFormat::Jsonl => b"]}\n",
            _ => b"",
        }
    }

    /// `bytes` of a part as they join the text: without the separator before the text's first
    /// item. `tail` says which stream (the ids, or `jsonl`'s offsets).
    pub fn join<'a>(&mut self, format: OutputFormat, bytes: &'a [u8], tail: bool) -> &'a [u8] {
        let started = if tail {
            &mut self.tail_started
        } else {
            &mut self.started
        };
        if bytes.is_empty() || *started || format.is_binary() {
            return bytes;
        }
        *started = true;
        &bytes[format.list_separator().len()..]
    }
}

/// The ids (between their `affixes`) as little-endian integers of `width` bytes (2 or 4; the
/// caller has checked that they fit).
fn push_binary(width: usize, ids: &[u32], affixes: Affixes, out: &mut Vec<u8>) {
    if let Some(id) = affixes.before {
        out.extend_from_slice(&id.to_le_bytes()[..width]);
    }
    let start = out.len();
    // Sized first, then filled in place: loops the compiler turns into vector moves.
    out.resize(
        start + width * (ids.len() + usize::from(affixes.after.is_some())),
        0,
    );
    let to = &mut out[start..];
    if width == 2 {
        for (to, &id) in to.chunks_exact_mut(2).zip(ids) {
            to.copy_from_slice(&(id as u16).to_le_bytes());
        }
    } else {
        for (to, &id) in to.chunks_exact_mut(4).zip(ids) {
            to.copy_from_slice(&id.to_le_bytes());
        }
    }
    if let Some(id) = affixes.after {
        let last = &mut to[width * ids.len()..];
        last.copy_from_slice(&id.to_le_bytes()[..width]);
    }
}

/// Appends `s` as a JSON string (non-ASCII as it is).
fn push_json_string(out: &mut Vec<u8>, s: &String) {
    serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
}

/// Appends the offsets `[start, end]` (each plus `base`) separated by `", "` (also before the
/// first when `leading`).
fn push_offsets(out: &mut Vec<u8>, offsets: &[(u32, u32)], base: u64, leading: bool) {
    let mut buf = itoa::Buffer::new();
    for (i, &(start, end)) in offsets.iter().enumerate() {
        if leading || i > 0 {
            out.extend_from_slice(b", ");
        }
        out.push(b'[');
        out.extend_from_slice(buf.format(base + u64::from(start)).as_bytes());
        out.extend_from_slice(b", ");
        out.extend_from_slice(buf.format(base + u64::from(end)).as_bytes());
        out.push(b']');
    }
}

/// Appends `n` in decimal (`itoa`: two digits per step, no `fmt` machinery).
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The decimal strings of a model's ids, made once per run.
///
/// The `ids` output of a fast model is about one id per four bytes of text, and formatting them
/// one `itoa` call at a time (a variable-length copy each) took an eighth of `encode`'s time
/// with cl100k (9 ns an id; a branch-free conversion of eight digits at once in a 64-bit word, 5.5
/// ns). A table of the digits of every id, looked up and stored as one word, takes 1.6 ns: the
/// loads do not depend on one another, and prose uses a few thousand ids often, which stay in
/// the CPU's caches. 8 bytes an id: 0.8 MB for cl100k, 1.6 MB for o200k.
pub struct Decimals {
    /// Entry `id`: its digits (at most seven) in the low bytes, their number in the top byte.
    entries: Box<[u64]>,
}

/// Ids from here on are formatted by `itoa` (entries hold at most seven digits).
const TABLE_LIMIT: usize = 10_000_000;
const _: () = assert!((TABLE_LIMIT - 1).ilog10() < 7);

impl Decimals {
    /// The decimal strings of the ids below `n` (at most [`TABLE_LIMIT`]; others are formatted
    /// when met).
    pub fn new(n: usize) -> Decimals {
        let mut buf = itoa::Buffer::new();
        let entries = (0..n.min(TABLE_LIMIT) as u32)
            .map(|id| {
                let digits = buf.format(id).as_bytes();
                let mut entry = [0u8; 8];
                entry[..digits.len()].copy_from_slice(digits);
                entry[7] = digits.len() as u8;
                u64::from_le_bytes(entry)
            })
            .collect();
        Decimals { entries }
    }

    /// Appends `ids` in decimal separated by `sep` (at most eight bytes; also before the first
    /// when `leading`).
    pub fn push_ids(&self, out: &mut Vec<u8>, ids: &[u32], sep: &[u8], leading: bool) {
        assert!(sep.len() <= 8, "separators are short");
        // Every id takes at most `sep.len() + 10` bytes, and the stores below write whole 8-byte
        // words that may reach 8 bytes past the last id's end: this much room suffices.
        let room = ids.len() * (sep.len() + 10) + 8;
        out.reserve(room);
        let mut sep_word = [0u8; 8];
        sep_word[..sep.len()].copy_from_slice(sep);
        let sep_word = u64::from_le_bytes(sep_word);
        let start = out.len();
        let mut at = 0;
        // SAFETY: `out` has `room` bytes of spare capacity from `start`, and every write below is
        // within it: before id `i`, `at <= i * (sep.len() + 10)`; the separator's word is stored
        // at `at` (8 bytes), the digits' word at `at + sep.len()` (8 bytes) or `itoa`'s at most
        // 10 digits there, so the furthest byte written for id `i` is below
        // `i * (sep.len() + 10) + sep.len() + 10 <= room` for every `i < ids.len()`. Unaligned
        // stores are used throughout. Only the first `at` bytes, all written, become the Vec's.
        unsafe {
            let base = out.as_mut_ptr().add(start);
            for (i, &id) in ids.iter().enumerate() {
                if leading || i > 0 {
                    base.add(at).cast::<u64>().write_unaligned(sep_word);
                    at += sep.len();
                }
                match self.entries.get(id as usize) {
                    Some(&entry) => {
                        base.add(at).cast::<u64>().write_unaligned(entry);
                        at += (entry >> 56) as usize;
                    }
                    None => {
                        let mut big = itoa::Buffer::new();
                        let digits = big.format(id).as_bytes();
                        std::ptr::copy_nonoverlapping(digits.as_ptr(), base.add(at), digits.len());
                        at += digits.len();
                    }
                }
            }
            debug_assert!(at <= room);
            out.set_len(start + at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(format: OutputFormat, enc: &Encoding, sep: Option<u32>) -> Vec<u8> {
        let mut out = Vec::new();
        Render::new(format, Affixes::after(sep), 10).text(enc, &mut out);
        out
    }

    fn sample() -> Encoding {
        Encoding {
            ids: vec![7, 0, 4294967295],
            offsets: vec![(0, 3), (3, 4), (4, 10)],
            pieces: vec!["▁a\"b".to_owned(), "\n".to_owned(), "é".to_owned()],
        }
    }

    #[test]
    fn text_formats() {
        let enc = sample();
        assert_eq!(render(OutputFormat::Ids, &enc, None), b"7 0 4294967295\n");
        assert_eq!(
            String::from_utf8(render(OutputFormat::Pieces, &enc, None)).unwrap(),
            "[\"▁a\\\"b\", \"\\n\", \"é\"]\n"
        );
        assert_eq!(
            String::from_utf8(render(OutputFormat::Jsonl, &enc, None)).unwrap(),
            "{\"ids\": [7, 0, 4294967295], \"offsets\": [[0, 3], [3, 4], [4, 10]]}\n"
        );
        let empty = Encoding::default();
        assert_eq!(render(OutputFormat::Ids, &empty, None), b"\n");
        assert_eq!(render(OutputFormat::Pieces, &empty, None), b"[]\n");
        assert_eq!(
            render(OutputFormat::Jsonl, &empty, None),
            b"{\"ids\": [], \"offsets\": []}\n"
        );
    }

    #[test]
    fn blocks_render_as_their_texts() {
        let texts: [&[u32]; 4] = [&[1, 22, 333], &[], &[4_000_000_000], &[5]];
        let ids: Vec<u32> = texts.concat();
        let ends: Vec<usize> = texts
            .iter()
            .scan(0, |end, t| {
                *end += t.len();
                Some(*end)
            })
            .collect();
        for format in [
            OutputFormat::Ids,
            OutputFormat::U32,
            OutputFormat::U16,
            OutputFormat::Npy,
        ] {
            let affixes = [
                (None, None),
                (None, Some(9)),
                (Some(8), None),
                (Some(8), Some(9)),
            ];
            for (before, after) in affixes {
                let render = Render::new(format, Affixes { before, after }, 100);
                let mut want = Vec::new();
                for t in texts {
                    let enc = Encoding {
                        ids: t.to_vec(),
                        ..Encoding::default()
                    };
                    render.text(&enc, &mut want);
                }
                let mut got = Vec::new();
                render.block(&ids, &ends, &mut got);
                assert_eq!(got, want, "{format:?} {before:?} {after:?}");
            }
        }
    }

    #[test]
    fn raw_parts_join_into_the_text() {
        // A text encoded in parts (some empty) renders exactly as when encoded whole.
        let whole = Encoding {
            ids: vec![5, 12, 0, 99, 7],
            offsets: vec![(0, 2), (2, 5), (5, 5), (5, 9), (9, 12)],
            pieces: ["ab", "cde", "", "fghi", "jkl"].map(String::from).to_vec(),
        };
        let cuts = [0, 0, 2, 2, 5, 5];
        for format in [
            OutputFormat::Ids,
            OutputFormat::Pieces,
            OutputFormat::Jsonl,
            OutputFormat::U32,
            OutputFormat::U16,
        ] {
            let affixes = Affixes {
                before: Some(4),
                after: Some(3),
            };
            let render = Render::new(format, affixes, 200);
            let mut want = Vec::new();
            render.text(&whole, &mut want);
            let mut join = RawText::default();
            let mut got = RawText::opening(format).to_vec();
            let mut tail = Vec::new();
            let bounds: Vec<usize> = cuts.iter().copied().chain([whole.len()]).collect();
            for (k, w) in bounds.windows(2).enumerate() {
                let (a, b) = (w[0], w[1]);
                let base = whole.offsets.get(a).map_or(12, |o| o.0) as u64;
                let part = Encoding {
                    ids: whole.ids[a..b].to_vec(),
                    offsets: whole.offsets[a..b]
                        .iter()
                        .map(|&(s, e)| (s - base as u32, e - base as u32))
                        .collect(),
                    pieces: whole.pieces[a..b].to_vec(),
                };
                let (first, last) = (k == 0, k + 2 == bounds.len());
                let (mut bytes, mut t) = (Vec::new(), Vec::new());
                render.part(&part, base, (first, last), &mut bytes, &mut t);
                got.extend_from_slice(join.join(format, &bytes, false));
                tail.extend_from_slice(join.join(format, &t, true));
            }
            got.extend_from_slice(RawText::middle(format));
            got.extend_from_slice(&tail);
            got.extend_from_slice(RawText::closing(format));
            assert_eq!(got, want, "{format:?}");
        }
    }

    #[test]
    fn decimals_match_itoa() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut ids: Vec<u32> = (0..20_000).collect();
        for p in [
            10u64,
            100,
            1000,
            10_000,
            100_000,
            1_000_000,
            10_000_000,
            100_000_000,
            1 << 32,
        ] {
            for d in [-2i64, -1, 0, 1] {
                ids.push((p as i64 + d).clamp(0, u32::MAX as i64) as u32);
            }
        }
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ids.push((x >> (x % 32)) as u32);
        }
        // Tables smaller and larger than the ids (the cap, ten million entries, is not built
        // here: 80 MB would disturb the engine's memory test in this process).
        for size in [0, 1, 1000, 200_000] {
            let decimals = Decimals::new(size);
            for (sep, leading) in [(&b" "[..], false), (b", ", true), (b"", false)] {
                for n in [0, 1, 2, 13, ids.len()] {
                    let ids = &ids[ids.len() - n..];
                    let mut got = b"prefix".to_vec();
                    decimals.push_ids(&mut got, ids, sep, leading);
                    let mut want = b"prefix".to_vec();
                    for (i, &id) in ids.iter().enumerate() {
                        if leading || i > 0 {
                            want.extend_from_slice(sep);
                        }
                        want.extend_from_slice(id.to_string().as_bytes());
                    }
                    assert_eq!(got, want, "table {size}, {n} ids, sep {sep:?}");
                }
            }
        }
    }

    #[test]
    fn binary_formats() {
        let enc = Encoding {
            ids: vec![1, 258],
            ..Encoding::default()
        };
        assert_eq!(
            render(OutputFormat::U32, &enc, Some(3)),
            [1, 0, 0, 0, 2, 1, 0, 0, 3, 0, 0, 0]
        );
        assert_eq!(
            render(OutputFormat::Npy, &enc, None),
            [1, 0, 0, 0, 2, 1, 0, 0]
        );
        assert_eq!(render(OutputFormat::U16, &enc, Some(9)), [1, 0, 2, 1, 9, 0]);
        let both = Affixes {
            before: Some(7),
            after: Some(9),
        };
        let mut out = Vec::new();
        Render::new(OutputFormat::U16, both, 10).text(&enc, &mut out);
        assert_eq!(out, [7, 0, 1, 0, 2, 1, 9, 0]);
    }
}
