//! Alignment (issue 26) against the reference, the `tokenizations` crate 0.4.2, on real and
//! noisy data: `get_alignments`, `get_charmap` and `get_original_spans` must give results
//! identical to it.
//!
//! - corpus lines of `../shared/data/corpora` (or `$SIMDTOK_SHARED_DATA`: English, code, emoji,
//!   Japanese, Chinese, 500 UDHR languages), each tokenized seven ways: WordPiece pieces (`##`),
//!   WordPiece spans of the text, SentencePiece pieces (`▁`), GPT-2 byte-level pieces (bytes in
//!   GPT-2's alphabet: `Ġ` for a space), GPT-2 pieces as tiktoken decodes them (`�` for a cut
//!   character), GPT-2 spans of the text (empty where a span cuts a character), and words
//!   (`align::spans::words`): every two of them aligned, each against the line;
//! - whole paragraphs (several KB) tokenized the same ways, so that the diff recurses deep;
//! - noisy copies of real tokens: accents removed, case changed, full-width forms, ligatures,
//!   characters deleted, doubled and inserted (CJK, emoji and ZWJ sequences, flags, combining
//!   marks, Σ, İ, Hangul), tokens merged and split, empty and whitespace-only tokens;
//! - hand-made cases: Greek capital sigma in final and non-final positions, Turkish İ, Hangul
//!   syllables against their jamo, emoji sequences, empty token lists;
//! - texts full of ties in the edit script (runs of one letter, repeated words, `abbc` against
//!   `abc` at many places), all-ASCII (ours compares bytes) and not (ours compares `u32`s), and
//!   pairs that differ only by one non-ASCII character on one side;
//! - one `Aligner` reused across pairs of every size, against fresh calls.
//!
//! A failing comparison is shrunk (tokens, then characters, removed while it still fails) and
//! shown with the reference's answer and ours. Without `../shared/data` the corpus tests print
//! "skipped: ../shared/data not found" and pass; the rest run on built-in texts.

#[path = "common/align_check.rs"]
mod align_check;
#[path = "common/golden.rs"]
mod golden;

use std::path::{Path, PathBuf};
use std::time::Instant;

use align_check::{Rng, Tally, noisy, prefix};
use simdtok::align::{self, Aligner};
use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer};
use unicode_normalization::UnicodeNormalization;

// ---------------------------------------------------------------------------------------------
// Corpora and tokenizers

/// Lines taken from each corpus, spread over it.
const LINES_PER_CORPUS: usize = 600;
/// Bytes of a line kept (longer lines are cut at a character boundary).
const LINE_BYTES: usize = 480;
/// Bytes of the long texts (whole paragraphs joined).
const LONG_BYTES: usize = 6000;
/// Long texts per corpus.
const LONG_PER_CORPUS: usize = 2;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The corpora of `../shared/data`, each with its lines, or `None` (after saying so) when the
/// directory is absent.
fn corpora(test: &str) -> Option<Vec<(String, Vec<String>)>> {
    let Some(data) = golden::shared_data() else {
        println!("{test}: skipped: ../shared/data not found (set SIMDTOK_SHARED_DATA)");
        return None;
    };
    let dir = data.join("corpora");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: no corpora", dir.display());
    Some(
        files
            .iter()
            .map(|f| {
                let bytes = std::fs::read(f).unwrap();
                let text = String::from_utf8_lossy(&bytes);
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                (name, text.lines().map(str::to_owned).collect())
            })
            .collect(),
    )
}

/// The tokenizers a corpus is cut with.
struct Tokenizers {
    wordpiece: Tokenizer,
    sentencepiece: Tokenizer,
    gpt2: Tokenizer,
}

impl Tokenizers {
    fn for_corpus(name: &str) -> Tokenizers {
        let cjk = name.starts_with("ja_") || name.starts_with("zh-");
        let (vocab, lowercase) = if name.starts_with("zh-") {
            (
                "tests/data/wordpiece/bert-base-chinese.vocab.txt",
                Some(false),
            )
        } else {
            ("tests/data/wordpiece/bert-base-uncased.vocab.txt", None)
        };
        let options = LoadOptions {
            lowercase,
            ..LoadOptions::default()
        };
        let wordpiece =
            Tokenizer::from_file_with_options(repo(vocab), Kernels::active().unwrap(), &options)
                .unwrap();
        let spm = if cjk {
            "tests/data/sentencepiece/kyoto_ja_unigram_8000.model"
        } else if name.starts_with("en_kjv") {
            "tests/data/sentencepiece/botchan_en_bpe_1000.model"
        } else {
            "tests/data/sentencepiece/botchan_en_unigram_1000.model"
        };
        Tokenizers {
            wordpiece,
            sentencepiece: Tokenizer::from_file(repo(spm)).unwrap(),
            gpt2: Tokenizer::from_file(repo("tests/data/bpe/encoder.json")).unwrap(),
        }
    }

    /// The tokenizations of `text`, named.
    fn sides(&self, text: &str) -> Vec<(&'static str, Vec<String>)> {
        let wp = self.wordpiece.encode_full(text);
        let spm = self.sentencepiece.encode_full(text);
        let bpe = self.gpt2.encode_full(text);
        let byte_level = bpe
            .ids
            .iter()
            .map(|&id| {
                let bytes = self.gpt2.token_bytes(id).expect("GPT-2 token bytes");
                bytes.iter().map(|&b| byte_to_unicode(b)).collect()
            })
            .collect();
        vec![
            ("wordpiece", wp.pieces.clone()),
            ("wordpiece-text", slices(text, &wp.offsets)),
            ("sentencepiece", spm.pieces),
            ("bpe", byte_level),
            ("bpe-decoded", bpe.pieces.clone()),
            ("bpe-text", slices(text, &bpe.offsets)),
            (
                "words",
                align::spans::words(text)
                    .into_iter()
                    .map(|(s, e)| text[s..e].to_owned())
                    .collect(),
            ),
        ]
    }
}

/// GPT-2's byte alphabet (`bytes_to_unicode`): printable Latin-1 bytes stand for themselves,
/// the others for U+0100 onwards in byte order (a space is `Ġ`, a newline `Ċ`).
fn byte_to_unicode(b: u8) -> char {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xa1..=0xac | 0xae..=0xff);
    if printable(b) {
        char::from(b)
    } else {
        let n = (0..b).filter(|&x| !printable(x)).count() as u32;
        char::from_u32(256 + n).unwrap()
    }
}

/// The text at each byte span; an empty string where a span cuts a character (byte-level BPE).
fn slices(text: &str, offsets: &[(u32, u32)]) -> Vec<String> {
    offsets
        .iter()
        .map(|&(s, e)| {
            text.get(s as usize..e as usize)
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Every two sides of a text aligned, each side's spans in the text, the words against the text
/// as one token, and (when asked) the text's charmap against one side's tokens joined.
fn compare_sides(
    tally: &mut Tally,
    what: &str,
    text: &str,
    sides: &[(&str, Vec<String>)],
    charmap_side: Option<usize>,
) {
    for i in 0..sides.len() {
        for j in i + 1..sides.len() {
            let label = format!("{what}: {} vs {}", sides[i].0, sides[j].0);
            tally.alignments(&label, &sides[i].1, &sides[j].1);
        }
        tally.spans(
            &format!("{what}: {} in the text", sides[i].0),
            &sides[i].1,
            text,
        );
    }
    let words = &sides.last().unwrap().1;
    tally.alignments(&format!("{what}: words vs text"), words, &[text.to_owned()]);
    if let Some(k) = charmap_side {
        let joined = sides[k].1.join(" ");
        tally.charmap(
            &format!("{what}: text vs {} joined", sides[k].0),
            text,
            prefix(&joined, 2 * LINE_BYTES),
        );
    }
}

#[test]
fn corpus_lines_across_tokenizers() {
    let started = Instant::now();
    let test = "corpus_lines_across_tokenizers";
    let Some(corpora) = corpora(test) else { return };
    let mut tally = Tally::new();
    for (name, lines) in &corpora {
        let tokenizers = Tokenizers::for_corpus(name);
        let before = tally.total();
        for k in 0..LINES_PER_CORPUS {
            let index = k * lines.len() / LINES_PER_CORPUS;
            let text = prefix(&lines[index], LINE_BYTES);
            let sides = tokenizers.sides(text);
            let charmap = (text.len() <= 300).then_some(k % sides.len());
            compare_sides(
                &mut tally,
                &format!("{name} line {}", index + 1),
                text,
                &sides,
                charmap,
            );
        }
        println!("  {name}: {} comparisons", tally.total() - before);
    }
    tally.finish(test, started);
}

#[test]
fn corpus_paragraphs_long_pairs() {
    let started = Instant::now();
    let test = "corpus_paragraphs_long_pairs";
    let Some(corpora) = corpora(test) else { return };
    let mut tally = Tally::new();
    for (name, lines) in &corpora {
        let tokenizers = Tokenizers::for_corpus(name);
        // Byte-level pieces of a non-Latin script share nothing with its text: the diff is
        // quadratic there, so those texts are shorter.
        let ascii_heavy = !(name.starts_with("ja_") || name.starts_with("zh-"));
        let bytes = if ascii_heavy {
            LONG_BYTES
        } else {
            LONG_BYTES / 2
        };
        for k in 0..LONG_PER_CORPUS {
            let mut index = (2 * k + 1) * lines.len() / (2 * LONG_PER_CORPUS + 1);
            let mut text = String::new();
            while text.len() < bytes && index < lines.len() {
                text.push_str(&lines[index]);
                text.push(if k % 2 == 0 { '\n' } else { ' ' });
                index += 1;
            }
            let text = prefix(&text, bytes);
            let mut sides = tokenizers.sides(text);
            if k > 0 {
                // GPT-2's byte alphabet makes every space and line end an edit (`Ġ`, `Ċ`): the
                // deepest recursion, and the slowest pairs; the first paragraph has them.
                sides.retain(|(name, _)| *name != "bpe");
            }
            compare_sides(
                &mut tally,
                &format!("{name} paragraph {k} ({} bytes)", text.len()),
                text,
                &sides,
                None,
            );
        }
    }
    tally.finish(test, started);
}

// ---------------------------------------------------------------------------------------------
// Noise

/// Built-in texts, so the noise tests run without `../shared/data` too.
const TEXTS: &[&str] = &[
    "The quick brown fox jumps over the lazy dog; office staff fluff the affluent fish.",
    "À la gorge, l'été où Noël déçoit: «Ça va?» — naïve café, cœur, Œuvre.",
    "Straße, GROSSE Maße; Ærøskøbing Ångström Čeština Łódź ŻÓŁĆ ğüşıöç.",
    "İSTANBUL'DA İYİ GÜNLER, DİYARBAKIR ve IĞDIR; istanbul'da iyi günler.",
    "ΟΔΥΣΣΕΥΣ ΚΑΙ Η ΟΔΟΣ ΤΗΣ ΣΟΦΙΑΣ. Σίσυφος, ΣΙΣΥΦΟΣ, ΟΔΟΣ-ΣΟΦΙΑΣ ΑΣ'Σ.",
    "대한민국 헌법 제1조: 대한민국은 민주공화국이다. 한글 ㅎㅏㄴㄱㅡㄹ.",
    "日本語のテキストとEnglishの混在。ｶﾀｶﾅ と ＡＢＣ１２３ と ㍻ と ㈱。",
    "中华人民共和国宪法，第一条：中華民國憲法。",
    "family 👩\u{200d}👩\u{200d}👧 flags 🇯🇵🇫🇷🏳\u{fe0f}\u{200d}🌈 thumbs 👍🏽👍 faces 😀😃.",
    "Tiếng Việt có dấu: người, được, những, chữ Quốc ngữ.",
    "हिन्दी में लिखा गया वाक्य; العربية ﷺ مكتوبة.",
    "x² + y² = z², ½ ≠ ¼, Ⅻ o'clock, 5 \u{212a} and 3 \u{212b}, ǅemal.",
    "fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); } // café",
];

/// Whitespace tokens of the built-in texts, and of corpus lines where the data is present.
fn noise_sources() -> Vec<Vec<String>> {
    let mut sources: Vec<Vec<String>> = TEXTS
        .iter()
        .map(|t| t.split_whitespace().map(str::to_owned).collect())
        .collect();
    if let Some(data) = golden::shared_data() {
        for (name, step) in [
            ("botchan.txt", 97),
            ("en_jargon_file_4.4.7.txt", 1013),
            ("multi_udhr_all_languages.txt", 211),
            ("ja_debian_reference.txt", 709),
            ("zh-tw_debian_reference.txt", 601),
            ("emoji_unicode15_emoji-test.txt", 331),
        ] {
            let Ok(bytes) = std::fs::read(data.join("corpora").join(name)) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            for line in text.lines().step_by(step).filter(|l| !l.trim().is_empty()) {
                let line = prefix(line, 400);
                sources.push(line.split_whitespace().map(str::to_owned).collect());
            }
        }
    }
    sources
}

#[test]
fn noisy_copies_of_real_tokens() {
    let started = Instant::now();
    let mut tally = Tally::new();
    let mut rng = Rng::new(26);
    let sources = noise_sources();
    for round in 0..100 {
        // The built-in texts (the first ones) every round, corpus lines every fifth.
        let take = if round % 5 == 0 {
            sources.len()
        } else {
            TEXTS.len()
        };
        for (s, tokens) in sources.iter().take(take).enumerate() {
            let copy = noisy(tokens, &mut rng);
            let what = format!("source {s}, round {round}");
            tally.alignments(&what, tokens, &copy);
            tally.alignments(&what, &copy, tokens);
            // The reference's token strings are each side's own: the copy against the original
            // text, and the original tokens against the noisy text.
            let text = tokens.join(" ");
            let noisy_text = copy.concat();
            tally.spans(&what, &copy, &text);
            tally.spans(&what, tokens, &noisy_text);
            tally.charmap(&what, prefix(&text, 300), prefix(&noisy_text, 300));
            // Noise on both sides.
            let other = noisy(tokens, &mut rng);
            tally.alignments(&what, &copy, &other);
        }
    }
    tally.finish("noisy_copies_of_real_tokens", started);
}

fn strings(tokens: &[&str]) -> Vec<String> {
    tokens.iter().map(|t| t.to_string()).collect()
}

/// Hand-made pairs: each one of the cases the normalization has rules for.
#[test]
fn hand_made_cases() {
    let started = Instant::now();
    let mut tally = Tally::new();
    let hangul = "대한민국 헌법 한글";
    let jamo: String = hangul.nfd().collect();
    let compat_jamo = "ㄷㅐㅎㅏㄴ ㅁㅣㄴㄱㅜㄱ ㅎㅓㄴㅂㅓㅂ";
    let pairs: Vec<(Vec<&str>, Vec<&str>)> = vec![
        // Empty lists, either side or both; empty and whitespace-only tokens.
        (vec![], vec![]),
        (vec![], vec!["a", "b"]),
        (vec!["a", "b"], vec![]),
        (vec!["é"], vec![]),
        (vec![], vec!["", ""]),
        (vec![""], vec![""]),
        (vec!["", "a", "", "b", ""], vec!["ab"]),
        (vec![" ", "a", "  ", "\t", "b", "\n"], vec!["a", "b"]),
        (vec![" "], vec!["\u{3000}"]),
        (vec!["\u{a0}", "x"], vec![" ", "x"]),
        // Greek capital sigma: word-final (ς) and not (σ), depending on the token.
        (vec!["ΟΔΟΣ"], vec!["οδος"]),
        (vec!["ΟΔΟΣ"], vec!["οδοσ"]),
        (vec!["ΟΔΟ", "Σ"], vec!["οδος"]),
        (vec!["ΟΔΟ", "Σ"], vec!["ΟΔΟΣ"]),
        (vec!["ΣΟΦΙΑΣ"], vec!["σοφιας"]),
        (vec!["ΣΟΦΙΑ", "Σ."], vec!["σοφιας", "."]),
        (vec!["ΑΣ'Σ"], vec!["ας'ς"]),
        (vec!["Σ"], vec!["σ"]),
        (vec!["Σ"], vec!["ς"]),
        (vec!["ΣΣΣ", "ΑΣΣ"], vec!["σσς", "ασς"]),
        (vec!["ΑΣ\u{301}"], vec!["ας\u{301}"]),
        // Turkish İ lowercases to i + U+0307.
        (vec!["İSTANBUL"], vec!["istanbul"]),
        (vec!["İ", "STANBUL"], vec!["i\u{307}stanbul"]),
        (vec!["İİİ"], vec!["iii"]),
        (vec!["DİYARBAKIR"], vec!["diyarbakır"]),
        // Hangul: NFKD splits syllables into jamo; compatibility jamo become conjoining ones.
        (vec!["대한민국", "헌법"], vec![jamo.as_str()]),
        (vec![hangul], vec![compat_jamo]),
        (
            vec!["한", "글"],
            vec!["\u{1112}\u{1161}\u{11ab}", "\u{1100}\u{1173}\u{11af}"],
        ),
        // Compatibility forms that expand.
        (vec!["ﬁnance", "ﬂuﬀy"], vec!["finance", "fluffy"]),
        (vec!["ＡＢＣ", "１２３"], vec!["abc123"]),
        (vec!["ﷺ"], vec!["صلى الله عليه وسلم"]),
        (vec!["㍻", "㈱"], vec!["平成", "(株)"]),
        (vec!["Ⅻ", "½"], vec!["xii", "1⁄2"]),
        // Emoji, ZWJ sequences, flags, skin tones.
        (
            vec!["👩\u{200d}👩\u{200d}👧"],
            vec!["👩", "\u{200d}", "👩", "\u{200d}", "👧"],
        ),
        (vec!["🇯🇵🇫🇷"], vec!["🇯", "🇵🇫", "🇷"]),
        (vec!["👍🏽"], vec!["👍"]),
        (vec!["a😀b"], vec!["a", "b"]),
        // Combining marks in non-canonical order, split across tokens.
        (vec!["a\u{316}\u{301}"], vec!["a\u{301}\u{316}"]),
        (vec!["a", "\u{301}\u{316}"], vec!["á\u{316}"]),
    ];
    for (i, (a, b)) in pairs.iter().enumerate() {
        let (a, b) = (strings(a), strings(b));
        let what = format!("hand-made pair {i}");
        tally.alignments(&what, &a, &b);
        tally.alignments(&what, &b, &a);
        let (ta, tb) = (a.concat(), b.concat());
        tally.charmap(&what, &ta, &tb);
        tally.charmap(&what, &tb, &ta);
        tally.spans(&what, &a, &tb);
        tally.spans(&what, &b, &ta);
        tally.spans(&what, &a, &ta);
    }
    tally.finish("hand_made_cases", started);
}

// ---------------------------------------------------------------------------------------------
// Ties

/// `text` cut into tokens at random places (lengths 0 to 7 characters).
fn random_cut(text: &str, rng: &mut Rng) -> Vec<String> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < cs.len() {
        let len = rng.below(8);
        let end = (at + len).min(cs.len());
        out.push(cs[at..end].iter().collect());
        at = end;
    }
    out
}

/// `text` with `edits` changes at random places: a character deleted, doubled, replaced or
/// inserted, from `alphabet`.
fn sprinkle(text: &str, edits: usize, alphabet: &[char], rng: &mut Rng) -> String {
    let mut cs: Vec<char> = text.chars().collect();
    for _ in 0..edits {
        let at = rng.below(cs.len() + 1);
        match rng.below(4) {
            0 if at < cs.len() => {
                cs.remove(at);
            }
            1 if at < cs.len() => cs.insert(at, cs[at]),
            2 if at < cs.len() => cs[at] = *rng.pick(alphabet),
            _ => cs.insert(at, *rng.pick(alphabet)),
        }
    }
    cs.into_iter().collect()
}

/// Texts full of ties, in the given letters: a run of one letter, repeated words, a period-3
/// pattern, and filler with `abbc`-like groups.
fn tie_texts(letters: [&str; 4], rng: &mut Rng, size: usize) -> Vec<String> {
    let [a, b, c, d] = letters;
    let run = a.repeat(size);
    let choices = [
        format!("{a}{b}{a} "),
        format!("{a}{b} "),
        format!("{b}{a}{b} "),
    ];
    let mut words = String::new();
    while words.chars().count() < size {
        let choice = rng.pick(&choices).clone();
        words.push_str(&choice);
    }
    let period = format!("{a}{a}{b}").repeat(size / 3);
    let mut groups = String::new();
    while groups.chars().count() < size {
        groups.push_str(&format!("{a}{b}{b}{c}"));
        if rng.percent(50) {
            groups.push_str(d);
        }
    }
    vec![run, words, period, groups]
}

/// Every text against a sprinkled copy, both cut at random, for each of the letter sets.
fn tie_pairs(
    letter_sets: &[[&str; 4]],
    largest: usize,
    seed: u64,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut rng = Rng::new(seed);
    let mut pairs = Vec::new();
    for &letters in letter_sets {
        let alphabet: Vec<char> = letters.concat().chars().collect();
        for size in [12, 40, 150, 600, 2500, largest] {
            for text in tie_texts(letters, &mut rng, size) {
                for edits in [1, 3, size / 20 + 1] {
                    let copy = sprinkle(&text, edits, &alphabet, &mut rng);
                    pairs.push((random_cut(&text, &mut rng), random_cut(&copy, &mut rng)));
                }
                // The same text cut two ways: only the token maps differ.
                pairs.push((random_cut(&text, &mut rng), random_cut(&text, &mut rng)));
            }
        }
    }
    pairs
}

/// `abbc` against `abc` (and the like) at many places of a long text; the equal letter the
/// diff drops depends on how it recursed.
fn embedded_pairs(
    groups: &[(&str, &str)],
    filler: &[&str],
    seed: u64,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut rng = Rng::new(seed);
    let mut pairs = Vec::new();
    for &(long, short) in groups {
        for (count, spacing) in [(5, 3), (40, 10), (200, 25), (60, 0)] {
            let (mut x, mut y) = (String::new(), String::new());
            for _ in 0..count {
                for _ in 0..rng.below(spacing + 1) {
                    let f = rng.pick(filler);
                    x.push_str(f);
                    y.push_str(f);
                }
                // Mostly long against short, sometimes the other way or both the same.
                match rng.below(6) {
                    0 => {
                        x.push_str(short);
                        y.push_str(long);
                    }
                    1 => {
                        x.push_str(long);
                        y.push_str(long);
                    }
                    _ => {
                        x.push_str(long);
                        y.push_str(short);
                    }
                }
            }
            pairs.push((random_cut(&x, &mut rng), random_cut(&y, &mut rng)));
            pairs.push((x.split(' ').map(str::to_owned).collect(), vec![y.clone()]));
        }
    }
    pairs
}

fn check_pairs(tally: &mut Tally, what: &str, pairs: &[(Vec<String>, Vec<String>)]) {
    for (i, (a, b)) in pairs.iter().enumerate() {
        let label = format!("{what} pair {i}");
        tally.alignments(&label, a, b);
        tally.alignments(&label, b, a);
        let (ta, tb) = (a.concat(), b.concat());
        if ta.len() + tb.len() <= 600 {
            tally.charmap(&label, &ta, &tb);
        }
        tally.spans(&label, a, &tb);
    }
}

#[test]
fn ties_ascii() {
    let started = Instant::now();
    let mut tally = Tally::new();
    let ascii = [["a", "b", "c", " "], ["e", "E", "x", "."]];
    check_pairs(&mut tally, "ascii ties", &tie_pairs(&ascii, 6000, 1));
    let groups = [
        ("abbc", "abc"),
        ("aab", "ab"),
        ("the the", "the"),
        ("xx", "x"),
    ];
    let filler = ["a", "b", "c", " ", "ab", "the "];
    check_pairs(
        &mut tally,
        "ascii abbc",
        &embedded_pairs(&groups, &filler, 2),
    );
    tally.finish("ties_ascii", started);
}

#[test]
fn ties_wide() {
    let started = Instant::now();
    let mut tally = Tally::new();
    let wide = [
        ["ä", "b", "c", " "],
        ["日", "本", "語", "。"],
        ["Σ", "σ", "Α", " "],
        ["ﬁ", "f", "i", "ﬀ"],
        ["한", "ㅎ", "ㅏ", "ㄴ"],
        ["😀", "👩\u{200d}👧", "🇯🇵", "\u{200d}"],
    ];
    check_pairs(&mut tally, "wide ties", &tie_pairs(&wide, 4000, 3));
    let groups = [
        ("äbbc", "äbc"),
        ("abbc", "äbc"),
        ("αββγ", "αβγ"),
        ("ΣΣ", "Σ"),
        ("ﬀ", "f"),
        ("日日本", "日本"),
    ];
    let filler = ["a", "ä", "b", " ", "β", "日", "ﬁ"];
    check_pairs(
        &mut tally,
        "wide abbc",
        &embedded_pairs(&groups, &filler, 4),
    );
    tally.finish("ties_wide", started);
}

/// All-ASCII pairs against the same pairs with one non-ASCII character on one side: ours takes
/// its byte path for the first and its `u32` path for the second.
#[test]
fn one_non_ascii_character() {
    let started = Instant::now();
    let mut tally = Tally::new();
    let mut rng = Rng::new(5);
    let ascii = [["a", "b", "c", " "], ["e", "E", "x", "."]];
    // Full-width and compatibility forms normalize to ASCII, so the units are those of the
    // byte path; the others add a unit the other side lacks.
    let singles = [
        "ａ", "Ａ", "ｂ", "\u{212a}", "ﬀ", "é", "ä", "İ", "Σ", "日", "😀", "\u{301}",
    ];
    let pairs = tie_pairs(&ascii, 6000, 6);
    for (i, (a, b)) in pairs.iter().enumerate() {
        let label = format!("ascii pair {i}");
        tally.alignments(&label, a, b);
        if a.is_empty() {
            continue;
        }
        let single = rng.pick(&singles);
        let mut wide = a.clone();
        let t = rng.below(wide.len());
        let cs: Vec<char> = wide[t].chars().collect();
        let at = rng.below(cs.len() + 1);
        // Replace a character, or insert one where the token is empty.
        let rest = if at < cs.len() { at + 1 } else { at };
        wide[t] = cs[..at]
            .iter()
            .copied()
            .chain(single.chars())
            .chain(cs[rest..].iter().copied())
            .collect();
        let label = format!("{label} with {single:?} in token {t}");
        tally.alignments(&label, &wide, b);
        tally.alignments(&label, b, &wide);
        tally.alignments(&label, &wide, a);
        tally.spans(&label, &wide, &b.concat());
        tally.spans(&label, b, &wide.concat());
        let (ta, tb) = (wide.concat(), b.concat());
        if ta.len() + tb.len() <= 600 {
            tally.charmap(&label, &ta, &tb);
        }
    }
    tally.finish("one_non_ascii_character", started);
}

// ---------------------------------------------------------------------------------------------
// Aligner reuse

#[test]
fn aligner_reused_across_pairs() {
    let started = Instant::now();
    let mut tally = Tally::new();
    let mut rng = Rng::new(7);
    // Pairs of every size and both unit widths, shuffled so that small follows large.
    let mut pairs = tie_pairs(&[["a", "b", "c", " "], ["ä", "b", "c", " "]], 4000, 8);
    for tokens in noise_sources().iter().take(40) {
        pairs.push((tokens.clone(), noisy(tokens, &mut rng)));
    }
    pairs.push((vec![], vec![]));
    pairs.push((vec![String::new()], vec![]));
    pairs.push((vec![], strings(&["x", "ä"])));
    for i in (1..pairs.len()).rev() {
        pairs.swap(i, rng.below(i + 1));
    }
    // Twice through, the second time in reverse, with the same aligner.
    let order: Vec<usize> = (0..pairs.len()).chain((0..pairs.len()).rev()).collect();
    let mut aligner = Aligner::new();
    for i in order {
        let (a, b) = &pairs[i];
        let what = format!(
            "reused aligner, pair {i} ({} and {} tokens)",
            a.len(),
            b.len()
        );
        tally.largest = tally
            .largest
            .max(a.concat().chars().count() + b.concat().chars().count());
        let (ra2b, rb2a) = aligner.align(a, b);
        let got = (ra2b.to_nested(), rb2a.to_nested());
        tally.alignments += 1;
        if got != align::get_alignments(a, b) || got != tokenizations::get_alignments(a, b) {
            tally.fail_with(|| {
                format!(
                    "{what}: Aligner::align differs (fresh call differs too: {})\n  a = {a:?}\n  \
                     b = {b:?}\n  reference: {:?}\n  aligner:   {got:?}",
                    align_check::alignments_differ(a, b) == Some(true),
                    tokenizations::get_alignments(a, b),
                )
            });
        }
        let (ta, tb) = (a.concat(), b.concat());
        if ta.len() + tb.len() <= 600 {
            let (ca2b, cb2a) = aligner.charmap(&ta, &tb);
            let got = (ca2b.to_nested(), cb2a.to_nested());
            tally.charmaps += 1;
            if got != tokenizations::get_charmap(&ta, &tb) {
                tally.fail_with(|| {
                    format!(
                        "{what}: Aligner::charmap differs\n  a = {ta:?}\n  b = {tb:?}\n  \
                         reference: {:?}\n  aligner:   {got:?}",
                        tokenizations::get_charmap(&ta, &tb)
                    )
                });
            }
        }
        let got = aligner.original_spans(a, &tb);
        tally.spans += 1;
        #[allow(deprecated)]
        let want = tokenizations::get_original_spans(a, &tb);
        if got != want {
            tally.fail_with(|| {
                format!(
                    "{what}: Aligner::original_spans differs\n  tokens = {a:?}\n  text = {tb:?}\n  \
                     reference: {want:?}\n  aligner:   {got:?}"
                )
            });
        }
    }
    tally.finish("aligner_reused_across_pairs", started);
}

// ---------------------------------------------------------------------------------------------
// The tooling itself

/// The shrinker reduces a failure to its smallest input, and GPT-2's byte alphabet is GPT-2's.
#[test]
fn tooling() {
    let a = strings(&["foo", "bxar", "baz", "qux"]);
    let b = strings(&["1", "2", "3", "4", "5"]);
    let got = align_check::shrink(vec![a, b], |p| {
        p[0].iter().any(|t| t.contains('x')) && p[1].len() >= 2
    });
    assert_eq!(got, vec![strings(&["x"]), strings(&["", ""])]);
    assert_eq!(byte_to_unicode(b' '), 'Ġ');
    assert_eq!(byte_to_unicode(b'\n'), 'Ċ');
    assert_eq!(byte_to_unicode(b'a'), 'a');
    assert_eq!(byte_to_unicode(0xad), 'Ń');
    assert_eq!(byte_to_unicode(0xe3), 'ã');
}
