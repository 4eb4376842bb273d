//! SentencePiece normalization, exactly as `normalizer.cc` does it: user-defined symbols kept
//! verbatim, the model's precompiled character map (longest match in a double-array trie, whose
//! values point into a blob of NUL-terminated replacements), malformed UTF-8 to U+FFFD byte by
//! byte, then the whitespace rules (leading, repeated and trailing spaces removed, spaces escaped
//! to U+2581, the dummy prefix, or a suffix under `treat_whitespace_as_suffix`).
//!
//! Alongside the normalized bytes it keeps `norm_to_orig`: for every normalized byte, the offset
//! in the input of the character it came from, plus one final entry for the end, so that pieces
//! of the normalized text map back to spans of the input.

use simdtok_kernels::{ByteSet, DoubleArray, Kernels, TrieNode};

use crate::load::spm_proto::SpmNormalizerSpec;
use crate::normalize::prefix_matcher::{PrefixMatcher, longest_match};

/// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's escaped space.
pub const SPACE_SYMBOL: &[u8] = "\u{2581}".as_bytes();

/// The length of the UTF-8 sequence a lead byte announces, as SentencePiece's `OneCharLen`
/// computes it from the high nibble alone (continuation and invalid bytes count as 1).
#[inline]
pub fn one_char_len(lead: u8) -> usize {
    const LEN: [u8; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LEN[(lead >> 4) as usize] as usize
}

/// The length of the valid UTF-8 character at the start of `s`, or `None` when it is malformed
/// (SentencePiece's `DecodeUTF8`: no overlong forms, no surrogates, nothing above U+10FFFF).
pub fn valid_char_len(s: &[u8]) -> Option<usize> {
    let b0 = *s.first()?;
    let trail = |i: usize| s.get(i).is_some_and(|&b| (b as i8) < -0x40);
    let valid = |c: u32| c < 0xD800 || (0xE000..=0x10FFFF).contains(&c);
    if b0 < 0x80 {
        return Some(1);
    }
    let (len, min, init) = match b0 {
        _ if b0 & 0xE0 == 0xC0 => (2, 0x80, (b0 & 0x1F) as u32),
        _ if b0 & 0xF0 == 0xE0 => (3, 0x800, (b0 & 0x0F) as u32),
        _ if b0 & 0xF8 == 0xF0 => (4, 0x10000, (b0 & 0x07) as u32),
        _ => return None,
    };
    if s.len() < len || !(1..len).all(trail) {
        return None;
    }
    let c = s[1..len]
        .iter()
        .fold(init, |c, &b| (c << 6) | (b & 0x3F) as u32);
    (c >= min && valid(c)).then_some(len)
}

/// The reference looks at only this many matches of one charsmap lookup
/// (`kMaxTrieResultsSize`).
const RULE_RESULTS: usize = 32;

/// Whether every rule of `trie` that starts with ASCII byte `b` continues with a non-ASCII byte:
/// then `b` followed by an ASCII byte matches no rule and stays as it is.
fn ascii_rules_need_non_ascii(trie: &DoubleArray, b: u8) -> bool {
    let Some(node) = trie.child(TrieNode::ROOT, b) else {
        return true;
    };
    trie.value_at(node).is_none() && (1..0x80u8).all(|c| trie.child(node, c).is_none())
}

/// Whether some key of `trie` starts with `bytes`.
fn walks(trie: &DoubleArray, bytes: &[u8]) -> bool {
    let mut node = TrieNode::ROOT;
    for &b in bytes {
        match trie.child(node, b) {
            Some(next) => node = next,
            None => return false,
        }
    }
    true
}

/// Whether `trie` has a key that starts with `bytes` or is a prefix of them (so a lookup of a
/// text starting with `bytes` may match).
fn touches(trie: &DoubleArray, bytes: &[u8]) -> bool {
    let mut node = TrieNode::ROOT;
    for &b in bytes {
        match trie.child(node, b) {
            Some(next) if trie.value_at(next).is_some() => return true,
            Some(next) => node = next,
            None => return false,
        }
    }
    true
}

/// A bitmap over the characters of the Basic Multilingual Plane.
#[derive(Debug)]
struct CharSet(Box<[u64; 1024]>);

impl CharSet {
    fn new() -> CharSet {
        CharSet(Box::new([0; 1024]))
    }

    fn insert(&mut self, c: u32) {
        self.0[c as usize / 64] |= 1 << (c % 64);
    }

    #[inline(always)]
    fn contains(&self, c: u32) -> bool {
        self.0[c as usize / 64] >> (c % 64) & 1 == 1
    }
}

/// The well-formed character of two or three bytes at the start of `s`, and its length.
#[inline(always)]
fn bmp_multibyte_char(s: &[u8]) -> Option<(u32, usize)> {
    match *s {
        [b0 @ 0xC2..=0xDF, b1, ..] if b1 & 0xC0 == 0x80 => {
            Some((((b0 as u32 & 0x1F) << 6) | (b1 as u32 & 0x3F), 2))
        }
        [b0 @ 0xE0..=0xEF, b1, b2, ..] if (b1 & 0xC0 == 0x80) && (b2 & 0xC0 == 0x80) => {
            let c = ((b0 as u32 & 0x0F) << 12) | ((b1 as u32 & 0x3F) << 6) | (b2 as u32 & 0x3F);
            // Neither overlong nor a surrogate.
            (c >= 0x800 && !(0xD800..0xE000).contains(&c)).then_some((c, 3))
        }
        _ => None,
    }
}

/// Adds to `set` every character of the Basic Multilingual Plane that continues a key of
/// `trie` from `node` (the path over its bytes exists, or a key ends inside them); returns
/// whether a four-byte character or a malformed sequence might (then the caller treats every
/// such sequence as continuing).
fn add_continuations(trie: &DoubleArray, node: TrieNode, set: &mut CharSet) -> bool {
    let mut other = false;
    for b0 in 1..=255u8 {
        let Some(n1) = trie.child(node, b0) else {
            continue;
        };
        let every = trie.value_at(n1).is_some();
        match b0 {
            0x01..=0x7F => set.insert(b0 as u32),
            0xC2..=0xDF => {
                for b1 in 0x80..=0xBFu8 {
                    if every || trie.child(n1, b1).is_some() {
                        set.insert(((b0 as u32 & 0x1F) << 6) | (b1 as u32 & 0x3F));
                    }
                }
            }
            0xE0..=0xEF => {
                for b1 in 0x80..=0xBFu8 {
                    let n2 = if every { None } else { trie.child(n1, b1) };
                    if !every && n2.is_none() {
                        continue;
                    }
                    let every2 = every || n2.is_some_and(|n| trie.value_at(n).is_some());
                    for b2 in 0x80..=0xBFu8 {
                        if every2 || n2.is_some_and(|n| trie.child(n, b2).is_some()) {
                            let c = ((b0 as u32 & 0x0F) << 12)
                                | ((b1 as u32 & 0x3F) << 6)
                                | (b2 as u32 & 0x3F);
                            set.insert(c);
                        }
                    }
                }
            }
            _ => other = true,
        }
    }
    other
}

/// Which characters the normalizer copies without a lookup, so that text in a non-Latin script
/// (runs of such characters) and the ASCII before it take fast paths in
/// [`SpmNormalizer::normalize_part`]. For a character `c` of two or three bytes:
/// - `anywhere`: no rule and no user-defined symbol starts with `c` or a part of it, so the
///   lookup at `c` finds nothing, whatever follows;
/// - `unless_continued`: no user-defined symbol touches `c` and no rule is `c` or a part of it,
///   but some rules start with `c` and go on (a kana and the combining voiced mark that composes
///   with it): the lookup finds nothing unless the next character is one of `continuers`.
///
/// `continuers` holds every character that continues a rule after such a `c` or after a
/// verbatim ASCII byte (a letter and a combining accent): before any other character those
/// copy themselves too. Four-byte and malformed sequences always count as continuing.
#[derive(Debug)]
struct VerbatimChars {
    anywhere: CharSet,
    unless_continued: CharSet,
    continuers: CharSet,
}

impl VerbatimChars {
    fn new(
        charsmap: Option<&DoubleArray>,
        user: Option<&DoubleArray>,
        verbatim_ascii: &ByteSet,
    ) -> VerbatimChars {
        let mut anywhere = CharSet::new();
        let mut unless_continued = CharSet::new();
        let mut continuers = CharSet::new();
        let mut buf = [0u8; 4];
        for c in (0x80..0x1_0000u32).filter_map(char::from_u32) {
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            if user.is_some_and(|t| touches(t, bytes)) {
                continue;
            }
            let Some(rules) = charsmap else {
                anywhere.insert(c as u32);
                continue;
            };
            match rule_node(rules, bytes) {
                RulePath::None => anywhere.insert(c as u32),
                RulePath::Continues(node) => {
                    unless_continued.insert(c as u32);
                    add_continuations(rules, node, &mut continuers);
                }
                RulePath::Matches => {}
            }
        }
        if let Some(rules) = charsmap {
            for b in (0..0x80u8).filter(|&b| verbatim_ascii.contains(b)) {
                if let Some(node) = rules.child(TrieNode::ROOT, b) {
                    add_continuations(rules, node, &mut continuers);
                }
            }
        }
        VerbatimChars {
            anywhere,
            unless_continued,
            continuers,
        }
    }

    /// Whether the text `next` (what follows a character) starts with a character that may
    /// continue a rule: one of `continuers`, a four-byte or malformed sequence. The end of the
    /// text continues nothing.
    #[inline(always)]
    fn continued_by(&self, next: &[u8]) -> bool {
        match next {
            [] => false,
            [b, ..] if b.is_ascii() => self.continuers.contains(*b as u32),
            _ => bmp_multibyte_char(next).is_none_or(|(d, _)| self.continuers.contains(d)),
        }
    }

    /// The length of the character at the start of `s` when it is a well-formed two- or
    /// three-byte character that the normalizer copies there; 0 otherwise (ASCII, four-byte and
    /// malformed sequences, and characters that a rule may rewrite, take the general path).
    #[inline(always)]
    fn len_at(&self, s: &[u8]) -> usize {
        let Some((c, len)) = bmp_multibyte_char(s) else {
            return 0;
        };
        if self.anywhere.contains(c)
            || (self.unless_continued.contains(c) && !self.continued_by(&s[len..]))
        {
            len
        } else {
            0
        }
    }
}

/// Where the bytes of a character lead in a trie of rules.
enum RulePath {
    /// Out of the trie: no rule starts with them.
    None,
    /// To this node, with no rule ending on the way: rules start with them and go on.
    Continues(TrieNode),
    /// A rule ends on them or inside them.
    Matches,
}

fn rule_node(trie: &DoubleArray, bytes: &[u8]) -> RulePath {
    let mut node = TrieNode::ROOT;
    for &b in bytes {
        match trie.child(node, b) {
            Some(next) if trie.value_at(next).is_some() => return RulePath::Matches,
            Some(next) => node = next,
            None => return RulePath::None,
        }
    }
    RulePath::Continues(node)
}

/// The precompiled character map: `<u32 trie size><double array><NUL-terminated replacements>`.
/// SentencePiece's normalizer reads it here, and so does a `tokenizer.json`'s `Precompiled`
/// normalizer ([`crate::normalize::hf`]), which looks it up differently
/// ([`CharsMap::shortest`]).
#[derive(Debug)]
pub(crate) struct CharsMap {
    trie: DoubleArray,
    replacements: Vec<u8>,
}

impl CharsMap {
    /// Parses the blob (`precompiled_charsmap`).
    pub(crate) fn parse(blob: &[u8]) -> Result<CharsMap, String> {
        if blob.len() <= 4 {
            return Err("the precompiled charsmap is truncated".into());
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        let rest = &blob[4..];
        if trie_size >= blob.len() || trie_size > rest.len() {
            return Err("the charsmap's trie is larger than the charsmap".into());
        }
        let trie = DoubleArray::from_bytes(&rest[..trie_size])
            .map_err(|e| format!("the charsmap's trie: {e}"))?;
        Ok(CharsMap {
            trie,
            replacements: rest[trie_size..].to_vec(),
        })
    }

    /// The replacements blob (NUL-terminated strings).
    pub(crate) fn replacements(&self) -> &[u8] {
        &self.replacements
    }

    /// Whether some rule starts with byte `b`.
    pub(crate) fn starts_with_byte(&self, b: u8) -> bool {
        self.trie.child(TrieNode::ROOT, b).is_some()
    }

    /// The replacement of the *shortest* rule that is a prefix of `chunk` (read up to its first
    /// NUL), as `tokenizers`' `Precompiled::transform` (the crate `spm_precompiled`) takes the
    /// first result of its common-prefix search; `None` when no rule is (or its offset points
    /// outside the blob).
    pub(crate) fn shortest(&self, kernels: &Kernels, chunk: &[u8]) -> Option<&[u8]> {
        // Chunks are a few bytes (a cluster, a character): a plain scan, not memchr's setup.
        let key = &chunk[..chunk.iter().position(|&b| b == 0).unwrap_or(chunk.len())];
        let mut first = None;
        kernels.trie_prefix_walk(&self.trie, key, |_, value| {
            first.get_or_insert(value);
        });
        self.replacement(first?)
    }

    /// The replacement at `offset`: up to the next NUL (or the end of the blob). `None` for an
    /// offset outside the blob, which the reference treats as no rule.
    fn replacement(&self, offset: u32) -> Option<&[u8]> {
        let tail = self
            .replacements
            .get(offset as usize..)
            .filter(|t| !t.is_empty())?;
        Some(&tail[..tail.iter().position(|&b| b == 0).unwrap_or(tail.len())])
    }
}

/// Where `norm_to_orig` goes: a vector, or nowhere when only ids are wanted (the reference skips
/// it too in that case), so the same normalization code serves both without a branch per byte.
pub trait OffsetSink {
    /// Whether it records anything (else the normalizer takes its offset-free fast paths).
    const RECORDS: bool = true;
    /// Records `offset` for `n` more normalized bytes.
    fn repeat(&mut self, offset: usize, n: usize);
    /// Records `start, start + 1, …` for `n` more normalized bytes (verbatim input).
    fn run(&mut self, start: usize, n: usize);
    /// Forgets everything from normalized byte `len` on, returning the offset recorded there.
    fn truncate(&mut self, len: usize) -> usize;
    /// Forgets everything.
    fn clear(&mut self);
}

impl OffsetSink for Vec<u32> {
    #[inline]
    fn repeat(&mut self, offset: usize, n: usize) {
        self.extend(std::iter::repeat_n(offset as u32, n));
    }
    #[inline]
    fn run(&mut self, start: usize, n: usize) {
        self.extend((start..start + n).map(|o| o as u32));
    }
    fn truncate(&mut self, len: usize) -> usize {
        let offset = self[len] as usize;
        Vec::truncate(self, len);
        offset
    }
    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// Records nothing.
pub struct NoOffsets;

impl OffsetSink for NoOffsets {
    const RECORDS: bool = false;
    #[inline]
    fn repeat(&mut self, _: usize, _: usize) {}
    #[inline]
    fn run(&mut self, _: usize, _: usize) {}
    fn truncate(&mut self, _: usize) -> usize {
        0
    }
    fn clear(&mut self) {}
}

/// A SentencePiece normalizer built from a model's `NormalizerSpec`.
#[derive(Debug)]
pub struct SpmNormalizer {
    charsmap: Option<CharsMap>,
    /// The model's user-defined symbols, matched (longest first) before any rule and kept as is.
    user_symbols: Option<PrefixMatcher>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    /// ASCII bytes that normalize to themselves when the next byte is ASCII too (or the text
    /// ends): no user symbol starts with them, and every rule that does continues with a
    /// non-ASCII byte (composition rules such as `A` + U+0300 → `À`). Runs of them take the fast
    /// path of [`SpmNormalizer::normalize`] without trie lookups.
    verbatim: ByteSet,
    /// Multibyte characters that normalize to themselves anywhere.
    verbatim_chars: VerbatimChars,
    kernels: &'static Kernels,
}

impl SpmNormalizer {
    /// Builds the normalizer; `user_symbols` are the model's user-defined pieces.
    pub fn new(
        spec: &SpmNormalizerSpec,
        treat_whitespace_as_suffix: bool,
        user_symbols: &[&str],
        kernels: &'static Kernels,
    ) -> Result<SpmNormalizer, String> {
        let charsmap = if spec.precompiled_charsmap.is_empty() {
            None
        } else {
            Some(CharsMap::parse(&spec.precompiled_charsmap)?)
        };
        let user_symbols = PrefixMatcher::new(user_symbols)?;
        let user_starts = user_symbols.as_ref().map(|t| t.first_bytes());
        let verbatim = ByteSet::from_fn(|b| {
            b.is_ascii()
                && !user_starts.is_some_and(|s| s[b as usize])
                && charsmap
                    .as_ref()
                    .is_none_or(|m| ascii_rules_need_non_ascii(&m.trie, b))
        });
        let verbatim_chars = VerbatimChars::new(
            charsmap.as_ref().map(|m| &m.trie),
            user_symbols.as_ref().map(PrefixMatcher::trie),
            &verbatim,
        );
        Ok(SpmNormalizer {
            verbatim_chars,
            charsmap,
            user_symbols,
            add_dummy_prefix: spec.add_dummy_prefix,
            remove_extra_whitespaces: spec.remove_extra_whitespaces,
            escape_whitespaces: spec.escape_whitespaces,
            treat_whitespace_as_suffix,
            verbatim,
            kernels,
        })
    }

    /// The normalized form of the character(s) at the start of `input` (non-empty) and how many
    /// input bytes they take (`NormalizePrefix`).
    fn normalize_prefix<'a>(&'a self, input: &'a [u8]) -> (&'a [u8], usize) {
        if let Some(user) = &self.user_symbols {
            let longest = user.longest(self.kernels, input);
            if longest > 0 {
                return (&input[..longest], longest);
            }
        }
        if let Some(map) = &self.charsmap {
            let longest = longest_match(self.kernels, &map.trie, input, RULE_RESULTS);
            if longest.len > 0 {
                // An offset past the blob would be a malformed model; treat the rule as absent.
                if let Some(r) = map.replacement(longest.value) {
                    return (r, longest.len as usize);
                }
            }
        }
        match valid_char_len(input) {
            Some(n) => (&input[..n], n),
            None => ("\u{FFFD}".as_bytes(), 1),
        }
    }

    /// Normalizes `input` into `out` (cleared first) and fills `norm_to_orig` with
    /// `out.len() + 1` input offsets (both empty for an input that normalizes to nothing).
    pub fn normalize(&self, input: &[u8], out: &mut Vec<u8>, norm_to_orig: &mut impl OffsetSink) {
        self.normalize_part(input, out, norm_to_orig, true, true);
    }

    /// [`SpmNormalizer::normalize`] of one part of a text cut where
    /// [`SpmNormalizer::continues_at`] allows: what the whole text's normalization makes of
    /// the part's bytes. Only the `first` part has its leading whitespace removed and gets the
    /// dummy prefix; only the `last` one has its trailing whitespace removed (and a dummy
    /// suffix). Offsets are the part's own.
    pub fn normalize_part(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        norm_to_orig: &mut impl OffsetSink,
        first: bool,
        last: bool,
    ) {
        out.clear();
        norm_to_orig.clear();
        let mut rest = input;
        let mut consumed = 0usize;
        if self.remove_extra_whitespaces && first {
            while !rest.is_empty() {
                // A byte copied as it is needs no lookup: a plain space (an indented line), or
                // the first byte of nearly every text, which ends the loop.
                let (s, n) = if self.copies_ascii_at(rest) {
                    (&rest[..1], 1)
                } else {
                    self.normalize_prefix(rest)
                };
                if s != b" " {
                    break;
                }
                rest = &rest[n..];
                consumed += n;
            }
        }
        if rest.is_empty() {
            return;
        }
        out.reserve(rest.len() * 3);
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix && first {
            self.push_space(out, norm_to_orig, consumed);
        }
        // A later part starts after a character that is not a space (see `continues_at`).
        let mut is_prev_space = self.remove_extra_whitespaces && first;
        while !rest.is_empty() {
            // Fast path: ASCII that normalizes to itself, one character per byte; only spaces
            // need the whitespace rules. One kernel call finds where it ends (for most text in
            // Latin script, the end of the line; verbatim bytes are all ASCII). It scans only
            // up to there: scanning all the ASCII ahead would make a long text's pass
            // quadratic. A verbatim byte right before a non-ASCII character that may continue
            // a rule (a composition rule such as `A` + U+0300 → `À`) takes the general path.
            let safe = self
                .kernels
                .find_not_in(&self.verbatim, rest, 0)
                .unwrap_or(rest.len());
            let run = if safe == rest.len()
                || rest[safe].is_ascii()
                || !self.verbatim_chars.continued_by(&rest[safe..])
            {
                safe
            } else {
                safe.saturating_sub(1)
            };
            if run > 0 {
                is_prev_space =
                    self.push_verbatim(&rest[..run], consumed, is_prev_space, out, norm_to_orig);
                consumed += run;
                rest = &rest[run..];
                continue;
            }
            // Fast path: characters that normalize to themselves, copied with no lookup.
            let chars = self.verbatim_chars_run(rest, consumed, norm_to_orig);
            if chars > 0 {
                out.extend_from_slice(&rest[..chars]);
                is_prev_space = false;
                consumed += chars;
                rest = &rest[chars..];
                continue;
            }
            let (mut s, n) = self.normalize_prefix(rest);
            if is_prev_space {
                while let [b' ', tail @ ..] = s {
                    s = tail;
                }
            }
            if !s.is_empty() {
                for &b in s {
                    if self.escape_whitespaces && b == b' ' {
                        out.extend_from_slice(SPACE_SYMBOL);
                        norm_to_orig.repeat(consumed, 3);
                    } else {
                        out.push(b);
                        norm_to_orig.repeat(consumed, 1);
                    }
                }
                is_prev_space = s.last() == Some(&b' ');
            }
            consumed += n;
            rest = &rest[n..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        if self.remove_extra_whitespaces && last {
            // Each branch compares a constant number of bytes: one space chosen at run time made
            // the test a call to `memcmp`, a fifth of the time of a one-word text (botchan).
            let space: &[u8] = if self.escape_whitespaces {
                SPACE_SYMBOL
            } else {
                b" "
            };
            let ends_with_space = |out: &[u8]| {
                if self.escape_whitespaces {
                    // The last byte first, alone: the three bytes read as one load straddle the
                    // stores that just wrote them (a stalled store forward, a twelfth of a
                    // one-word text's time), and the last byte rules out nearly every text.
                    out.last() == Some(&SPACE_SYMBOL[2]) && out.ends_with(SPACE_SYMBOL)
                } else {
                    out.ends_with(b" ")
                }
            };
            while ends_with_space(out) {
                let len = out.len() - space.len();
                consumed = norm_to_orig.truncate(len);
                out.truncate(len);
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix && last {
            self.push_space(out, norm_to_orig, consumed);
        }
        norm_to_orig.repeat(consumed, 1);
    }

    /// Whether `text` may be cut at `p` into parts that [`SpmNormalizer::normalize_part`]
    /// normalizes to the whole text's normalization, part after part, each word (a `▁` and what
    /// follows) whole in one part: `text[p]` is a space and `text[p - 1]` another byte, both
    /// verbatim, and no rule or user-defined symbol that could match before `p` reaches `p - 1`
    /// (so none rewrites the byte before the cut) or `p` (so none spans it).
    ///
    /// Proof. The normalizer visits positions left to right, at each taking the longest user
    /// symbol, else the longest rule, else one character. A match at `q < p` covering `p - 1`
    /// needs a key that is a prefix of `text[q..]` at least `p - q` bytes long; the walk of
    /// `text[q..p]` (`text[q..=p]` from `p - 1`) in the trie fails for every `q` from `p` less
    /// the longest key, so no such match exists and the normalizer reaches `p - 1`, which
    /// (verbatim, followed by ASCII) it copies, then `p` with the space not following a space.
    /// In the part `text[p..]` it starts at `p` in that same state (`is_prev_space` false, no
    /// dummy prefix, nothing stripped), and sees the same bytes from there; the part before
    /// ends with the same copied byte and nothing to strip. With spaces escaped and the dummy
    /// `▁` in front, the space at `p` becomes the `▁` that starts a word.
    pub fn continues_at(&self, text: &[u8], p: usize) -> bool {
        if !self.escape_whitespaces || self.treat_whitespace_as_suffix {
            return false;
        }
        if p == 0 || p >= text.len() || text[p] != b' ' || text[p - 1] == b' ' {
            return false;
        }
        if !self.verbatim.contains(b' ') || !self.verbatim.contains(text[p - 1]) {
            return false;
        }
        let tries = [
            self.user_symbols.as_ref().map(PrefixMatcher::trie),
            self.charsmap.as_ref().map(|m| &m.trie),
        ];
        tries.into_iter().flatten().all(|trie| {
            let from = p.saturating_sub(trie.max_key_len());
            (from..p).all(|q| !walks(trie, &text[q..=(p - 1).max(q + 1)]))
        })
    }

    /// The most bytes before a cut that [`SpmNormalizer::continues_at`] reads.
    pub fn cut_lookback(&self) -> usize {
        let user = self
            .user_symbols
            .as_ref()
            .map_or(0, |u| u.trie().max_key_len());
        let rules = self.charsmap.as_ref().map_or(0, |m| m.trie.max_key_len());
        user.max(rules).max(1)
    }

    /// Whether the ASCII byte at the start of `rest` is copied as it is: a verbatim byte followed
    /// by ASCII, by the text's end or by a character that continues no rule.
    #[inline]
    fn copies_ascii_at(&self, rest: &[u8]) -> bool {
        self.verbatim.contains(rest[0])
            && rest
                .get(1)
                .is_none_or(|b| b.is_ascii() || !self.verbatim_chars.continued_by(&rest[1..]))
    }

    /// The length of the run of multibyte characters that normalize to themselves at the start
    /// of `rest` (input offset `consumed`), recording each one's offset for its bytes.
    #[inline]
    fn verbatim_chars_run<N: OffsetSink>(
        &self,
        rest: &[u8],
        consumed: usize,
        norm_to_orig: &mut N,
    ) -> usize {
        let mut at = 0;
        loop {
            let len = self.verbatim_chars.len_at(&rest[at..]);
            if len == 0 {
                return at;
            }
            norm_to_orig.repeat(consumed + at, len);
            at += len;
        }
    }

    /// Appends a run of verbatim ASCII starting at input offset `consumed`, applying to its
    /// spaces exactly what the general loop does to a character that normalizes to " "; returns
    /// the new `is_prev_space`.
    fn push_verbatim<N: OffsetSink>(
        &self,
        run: &[u8],
        mut consumed: usize,
        mut is_prev_space: bool,
        out: &mut Vec<u8>,
        norm_to_orig: &mut N,
    ) -> bool {
        if !N::RECORDS {
            return self.push_verbatim_unrecorded(run, is_prev_space, out);
        }
        let mut rest = run;
        while !rest.is_empty() {
            let word = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            if word > 0 {
                out.extend_from_slice(&rest[..word]);
                norm_to_orig.run(consumed, word);
                is_prev_space = false;
                consumed += word;
                rest = &rest[word..];
            }
            if let [b' ', tail @ ..] = rest {
                if !is_prev_space {
                    self.push_space(out, norm_to_orig, consumed);
                }
                // A character that normalized to " " leaves the previous one a space, unless
                // extra whitespace is kept (then every space counts).
                is_prev_space = self.remove_extra_whitespaces;
                consumed += 1;
                rest = tail;
            }
        }
        is_prev_space
    }

    /// [`SpmNormalizer::push_verbatim`] when no offsets are recorded: the escape of spaces as
    /// `▁` is a kernel (16 bytes a step on the SIMD tiers, a byte a step without a branch on
    /// the scalar one); a model that keeps spaces as they are only collapses them.
    fn push_verbatim_unrecorded(&self, run: &[u8], is_prev_space: bool, out: &mut Vec<u8>) -> bool {
        let collapse = self.remove_extra_whitespaces;
        if self.escape_whitespaces {
            let last_space = self
                .kernels
                .escape_spaces_append(run, out, collapse, is_prev_space);
            return last_space && collapse;
        }
        let mut prev_space = is_prev_space;
        for &b in run {
            let is_space = b == b' ';
            if !(is_space && prev_space) {
                out.push(b);
            }
            prev_space = is_space && collapse;
        }
        prev_space
    }

    fn push_space(&self, out: &mut Vec<u8>, norm_to_orig: &mut impl OffsetSink, consumed: usize) {
        if self.escape_whitespaces {
            out.extend_from_slice(SPACE_SYMBOL);
            norm_to_orig.repeat(consumed, 3);
        } else {
            out.push(b' ');
            norm_to_orig.repeat(consumed, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::spm_proto::SpmNormalizerSpec;
    use crate::models::test_text::TestText;

    /// The normalizer of the bundled Japanese model (NFKC rules, spaces removed at the ends).
    fn kyoto_spec() -> SpmNormalizerSpec {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sentencepiece/");
        let model = std::fs::read(format!("{dir}kyoto_ja_unigram_8000.model")).unwrap();
        let spec = crate::load::spm_proto::parse(&model).unwrap().normalizer;
        assert!(
            !spec.precompiled_charsmap.is_empty(),
            "the model has NFKC rules"
        );
        spec
    }

    /// `normalizer` made to look every multibyte character up (none copied as it is), and with
    /// `ascii_too` every ASCII byte as well: the reference's way, to compare the fast paths with.
    fn looking_up(mut normalizer: SpmNormalizer, ascii_too: bool) -> SpmNormalizer {
        if ascii_too {
            normalizer.verbatim = ByteSet::from_fn(|_| false);
        }
        normalizer.verbatim_chars.anywhere.0.fill(0);
        normalizer.verbatim_chars.unless_continued.0.fill(0);
        normalizer.verbatim_chars.continuers.0.fill(!0);
        normalizer
    }

    /// Asserts that `fast` and `slow` normalize `text` to the same bytes and offsets, and that
    /// `fast` gives the same bytes without offsets.
    fn assert_same_normalization(fast: &SpmNormalizer, slow: &SpmNormalizer, text: &[u8]) {
        let (mut a, mut a_off, mut b, mut b_off) = (vec![], vec![], vec![], vec![]);
        fast.normalize(text, &mut a, &mut a_off);
        slow.normalize(text, &mut b, &mut b_off);
        let shown = String::from_utf8_lossy(text);
        assert_eq!((&a, &a_off), (&b, &b_off), "text {shown:?}");
        fast.normalize(text, &mut a, &mut NoOffsets);
        assert_eq!(a, b, "text {shown:?}");
    }

    /// The ids-only path ([`NoOffsets`], which skips the per-word copies) normalizes every text
    /// to the same bytes as the path that records offsets, under every whitespace setting: runs
    /// of spaces at the start, inside and at the end, texts of spaces only, and ASCII runs cut
    /// by non-ASCII characters (which take the general path in between).
    #[test]
    fn ids_only_normalization_equals_the_recorded_one() {
        let mut g = TestText::new(0x6A09_E667);
        const ALPHABET: [&str; 7] = ["a", "b", " ", " ", "  ", "é", "日"];
        for flags in 0..16u32 {
            let spec = SpmNormalizerSpec {
                name: String::new(),
                precompiled_charsmap: Vec::new(),
                add_dummy_prefix: flags & 1 != 0,
                remove_extra_whitespaces: flags & 2 != 0,
                escape_whitespaces: flags & 4 != 0,
            };
            let n = SpmNormalizer::new(&spec, flags & 8 != 0, &[], Kernels::scalar()).unwrap();
            for len in 0..120 {
                let text: String = (0..len)
                    .map(|_| ALPHABET[g.below(ALPHABET.len() as u32) as usize])
                    .collect();
                let (mut recorded, mut offsets, mut unrecorded) =
                    (Vec::new(), Vec::new(), Vec::new());
                n.normalize(text.as_bytes(), &mut recorded, &mut offsets);
                n.normalize(text.as_bytes(), &mut unrecorded, &mut NoOffsets);
                assert_eq!(
                    String::from_utf8_lossy(&unrecorded),
                    String::from_utf8_lossy(&recorded),
                    "flags {flags:#06b}, text {text:?}"
                );
                if !recorded.is_empty() {
                    assert_eq!(offsets.len(), recorded.len() + 1);
                }
            }
        }
    }

    /// With `remove_extra_whitespaces`, every space at a text's end goes, escaped (`▁`) or not;
    /// as in the reference, which compares the end of its output with the space it writes, a
    /// `▁` of the text itself goes too when spaces are escaped, and stays when they are not.
    /// Without it they all stay.
    #[test]
    fn trailing_spaces_are_removed_escaped_or_not() {
        let cases: [(bool, bool, &str, &str); 8] = [
            (true, true, "a b   ", "▁a▁b"),
            (true, true, "   ", ""),
            (true, true, "a\u{2581}  ", "▁a"),
            (true, false, "a b   ", " a b"),
            (true, false, "a\u{2581} ", " a\u{2581}"),
            (false, true, "a b  ", "▁a▁b▁▁"),
            (false, false, "a b  ", " a b  "),
            (true, false, "", ""),
        ];
        for (remove, escape, text, expected) in cases {
            let spec = SpmNormalizerSpec {
                name: String::new(),
                precompiled_charsmap: Vec::new(),
                add_dummy_prefix: true,
                remove_extra_whitespaces: remove,
                escape_whitespaces: escape,
            };
            let n = SpmNormalizer::new(&spec, false, &[], Kernels::scalar()).unwrap();
            let mut out = Vec::new();
            n.normalize(text.as_bytes(), &mut out, &mut NoOffsets);
            assert_eq!(
                String::from_utf8_lossy(&out),
                expected,
                "remove {remove}, escape {escape}, text {text:?}"
            );
        }
    }

    /// The copy of characters that normalize to themselves ([`VerbatimChars`]) gives what the
    /// lookup of each character gives: every character of the Basic Multilingual Plane, before
    /// and after characters that start or continue rules (combining marks that compose,
    /// half-width forms, compatibility ideographs, spaces), malformed bytes and user-defined
    /// symbols, under the bundled models' NFKC rules, with and without offsets.
    #[test]
    fn verbatim_characters_normalize_as_the_lookup_does() {
        let spec = kyoto_spec();
        let user = ["日\u{FF76}", "\u{3099}x", "é"];
        for user in [&[][..], &user[..]] {
            let fast = SpmNormalizer::new(&spec, false, user, Kernels::scalar()).unwrap();
            let slow = SpmNormalizer::new(&spec, false, user, Kernels::scalar()).unwrap();
            let slow = looking_up(slow, false);
            assert!(fast.verbatim_chars.anywhere.0.iter().any(|&w| w != 0));
            assert!(
                fast.verbatim_chars
                    .unless_continued
                    .0
                    .iter()
                    .any(|&w| w != 0)
            );
            let neighbours: [&[u8]; 17] = [
                b"",
                b"a",
                b" ",
                "\u{3099}".as_bytes(),
                "\u{309A}".as_bytes(),
                "\u{0300}".as_bytes(),
                "\u{FF76}".as_bytes(),
                "\u{F900}".as_bytes(),
                "\u{3000}".as_bytes(),
                b"\xE3\x81",
                b"\xFF",
                b"\xE0\x82\xA9", // U+00A9, overlong
                b"\xED\xA0\x80", // a surrogate,
                "a\u{0300}".as_bytes(),
                "\u{FF9E}".as_bytes(),
                b"  ",
                "\u{1F600}".as_bytes(),
            ];
            let mut text = Vec::new();
            for c in (0x80..0x1_0000u32).filter_map(char::from_u32) {
                let mut buf = [0u8; 4];
                let c = c.encode_utf8(&mut buf).as_bytes();
                text.clear();
                if c[1] % 2 == 0 {
                    text.extend_from_slice(b"  "); // an indented line
                }
                for (i, n) in neighbours.iter().enumerate() {
                    text.extend_from_slice(c);
                    text.extend_from_slice(n);
                    text.extend_from_slice(c);
                    text.extend_from_slice(neighbours[(i * 5 + c[1] as usize) % neighbours.len()]);
                }
                assert_same_normalization(&fast, &slow, &text);
            }
        }
    }

    /// The removal of a text's leading whitespace, which takes a byte copied as it is without a
    /// lookup (a space, or the text's first character, which ends it), gives what the lookup of
    /// every prefix gives: spaces, ideographic spaces and tabs before ASCII letters, letters
    /// that a rule composes with the next character, half-width forms, user-defined symbols
    /// (one starting with a space, one with a letter) and malformed bytes.
    #[test]
    fn leading_whitespace_is_removed_as_the_lookup_does() {
        let spec = kyoto_spec();
        assert!(spec.remove_extra_whitespaces);
        let user = [" x", "ab", "é"];
        let leads: [&str; 7] = ["", " ", "  ", "\u{3000}", " \u{3000} ", "\t ", "\u{FF9E} "];
        let firsts: [&[u8]; 12] = [
            b"a",
            b"ab",
            b"A",
            b" x",
            b"x",
            "a\u{0300}".as_bytes(),
            "A\u{0301}b".as_bytes(),
            "\u{FF76}\u{FF9E}".as_bytes(),
            "é".as_bytes(),
            b"\xFF",
            b"1.",
            b"",
        ];
        for user in [&[][..], &user[..]] {
            let fast = SpmNormalizer::new(&spec, false, user, Kernels::scalar()).unwrap();
            let slow = SpmNormalizer::new(&spec, false, user, Kernels::scalar()).unwrap();
            let slow = looking_up(slow, true);
            for lead in leads {
                for first in firsts {
                    let mut text = lead.as_bytes().to_vec();
                    text.extend_from_slice(first);
                    text.extend_from_slice(b" b c ");
                    assert_same_normalization(&fast, &slow, &text);
                }
            }
        }
    }
}
