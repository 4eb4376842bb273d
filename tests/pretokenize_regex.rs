//! The pre-tokenizer scanners against the real regexes (`fancy-regex`, tiktoken's engine): every
//! pattern source (tokenizer.json and tiktoken spellings) on the shared corpora (line by line and
//! whole files), a hand-written edge list, random strings over an alphabet of the critical
//! characters, pathological inputs, and once per kernel tier.

#[path = "common/golden.rs"]
mod golden;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fancy_regex::Regex;
use libtest_mimic::{Arguments, Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use simdtok::kernels::{Kernels, Tier};
use simdtok::pretokenize::{Pattern, Splitter};

use golden::{required_tiers, shared_data};

/// Every source a scanner implements, with the pattern it maps to.
const SOURCES: &[(&str, &str, Pattern)] = &[
    (
        "gpt2",
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
        Pattern::Gpt2,
    ),
    (
        "r50k_tiktoken",
        r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s",
        Pattern::Gpt2,
    ),
    (
        "cl100k",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 3 },
    ),
    (
        "qwen",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 1 },
    ),
    (
        "cl100k_digits2",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 2 },
    ),
    (
        "cl100k_tiktoken",
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
        Pattern::TiktokenCl100k,
    ),
    (
        "o200k",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::O200k,
    ),
    (
        "tekken",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Tekken,
    ),
    ("numbers3", r"\p{N}{1,3}", Pattern::Numbers { max: 3 }),
    ("numbers1", r"\p{N}", Pattern::Numbers { max: 1 }),
    ("deepseek_cjk", "[一-龥぀-ゟ゠-ヿ]+", Pattern::DeepSeekCjk),
    (
        "deepseek_words",
        r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
        Pattern::DeepSeekWords,
    ),
    (
        "deepseek_words_escaped",
        r##"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
        Pattern::DeepSeekWords,
    ),
];

/// Other writings of the patterns: each must take its pattern's scanner (`Pattern::from_regex_source`
/// compares parsed shapes, not spellings), and its own regex must split as that scanner does.
/// `\r` and `\n` written as the characters themselves are DeepSeek V3's `tokenizer.json` spelling.
const VARIANTS: &[(&str, &str, Pattern)] = &[
    (
        "cl100k_literal_controls",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
        Pattern::Cl100k { digits: 3 },
    ),
    (
        "cl100k_reordered_classes",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\n\p{N}\r\p{L}]?\pL+|\p{N}{1,3}| ?[^\p{N}\p{L}\s]+[\n\r]*|\s*[\n\r]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 3 },
    ),
    (
        "cl100k_counts_written_out",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}\p{L}*|\p{N}\p{N}?\p{N}?| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s\s*",
        Pattern::Cl100k { digits: 3 },
    ),
    (
        "cl100k_case_folds_spelled_out",
        "'[sS\u{17f}]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        Pattern::Cl100k { digits: 3 },
    ),
    (
        "cl100k_contractions_factored",
        r"'(?i:[sdmt]|ll|ve|re)|(?:[^\r\n\p{L}\p{N}])?(?:\p{L})+|(?:\p{N}){1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 3 },
    ),
    (
        "qwen_digits_as_class",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|[\p{N}]| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 1 },
    ),
    (
        "cl100k_digits2_written_out",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}\p{N}?| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 2 },
    ),
    (
        "cl100k_tiktoken_literal_controls",
        "'(?i:[sdmt]|ll|ve|re)|[^\r\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\r\n]*+|\\s++$|\\s*[\r\n]|\\s+(?!\\S)|\\s",
        Pattern::TiktokenCl100k,
    ),
    (
        "gpt2_contractions_factored",
        r"'(?:s|t|re|ve|m|ll|d)| ?\pL+| ?\pN+| ?[^\s\pL\pN]+|\s+(?!\S)|\s+",
        Pattern::Gpt2,
    ),
    (
        "gpt2_possessive_tails",
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s+(?!\S)|\s++",
        Pattern::Gpt2,
    ),
    (
        "o200k_literal_controls_counts_written_out",
        "[^\r\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'(?i:[sdmt]|ll|ve|re))?|[^\r\n\\p{L}\\p{N}]?[\\p{M}\\p{Lo}\\p{Lm}\\p{Lt}\\p{Lu}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}\\p{N}?\\p{N}?| ?[^\\s\\p{L}\\p{N}]+[\r\n/]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
        Pattern::O200k,
    ),
    (
        "tekken_reordered",
        r"[^\n\r\p{N}\p{L}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|[\p{N}]| ?[^\s\p{L}\p{N}]+[/\n\r]*|\s*[\n\r]+|\s+(?!\S)|\s+",
        Pattern::Tekken,
    ),
    (
        "numbers3_written_out",
        r"\p{N}\p{N}?\p{N}?",
        Pattern::Numbers { max: 3 },
    ),
    (
        "numbers2_class",
        r"[\p{N}]{1,2}",
        Pattern::Numbers { max: 2 },
    ),
    (
        "deepseek_cjk_escaped",
        r"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
        Pattern::DeepSeekCjk,
    ),
    (
        "deepseek_cjk_reordered",
        r"[\x{30a0}-\x{30ff}\x{3040}-\x{309f}\x{4e00}-\x{9fa5}]+",
        Pattern::DeepSeekCjk,
    ),
    (
        "deepseek_words_literal_controls",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
        Pattern::DeepSeekWords,
    ),
    (
        "deepseek_words_ranges",
        r"[!-/:-@\[-`{-~][a-zA-Z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{M}\p{L}]+| ?[\p{S}\p{P}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::DeepSeekWords,
    ),
];

/// Near misses: each differs from a pattern in what it matches (the text shows it), so it must
/// NOT take that pattern's scanner.
const NEAR_MISSES: &[(&str, &str, Pattern, &str)] = &[
    (
        "cl100k_case_folds_without_long_s",
        r"'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 3 },
        "x'ſa",
    ),
    (
        "cl100k_branches_swapped",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+|\s+(?!\S)",
        Pattern::Cl100k { digits: 3 },
        "a  b",
    ),
    (
        "cl100k_lazy_digits",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}?| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 3 },
        "123",
    ),
    (
        "cl100k_without_newline",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        Pattern::Cl100k { digits: 3 },
        "\nab",
    ),
    (
        "gpt2_possessive_before_lookahead",
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s++(?!\S)|\s+",
        Pattern::Gpt2,
        "a  b",
    ),
    (
        "gpt2_ll_before_l",
        r"'s|'t|'re|'ve|'m|'l|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
        Pattern::Gpt2,
        "'ll",
    ),
];

/// The shared `tokenizer.json` files and the pattern their Split regex must map to.
const TOKENIZER_JSONS: &[(&str, Pattern)] = &[
    ("llama3", Pattern::Cl100k { digits: 3 }),
    ("gpt35turbo", Pattern::Cl100k { digits: 3 }),
    ("qwen3", Pattern::Cl100k { digits: 1 }),
    ("gpt4o", Pattern::O200k),
];

const CORPORA: &[&str] = &[
    "botchan.txt",
    "code_python311_stdlib_sample.py.txt",
    "emoji_unicode15_emoji-test.txt",
    "en_jargon_file_4.4.7.txt",
    "en_kjv_bible.txt",
    "ja_debian_reference.txt",
    "multi_udhr_all_languages.txt",
    "zh-cn_debian_reference.txt",
    "zh-tw_debian_reference.txt",
];

/// Hand-written edge cases.
const EDGES: &[&str] = &[
    "",
    " ",
    "a",
    "'",
    "''",
    "'s",
    "''s",
    " 's",
    "x's",
    "don't I'll we've they're she'd I'm it's",
    "DON'T I'LL WE'VE THEY'RE SHE'D I'M IT'S",
    "Don'T i'Ll We'Ve tHEY'rE",
    "'S 'T 'RE 'VE 'M 'LL 'D 'Re 'rE 'lL 'Ll",
    "'ſ 'ſa xſ'ſ ſ'S",
    "'K 'k 'K",
    "’s it’s ‘quoted’ don’t",
    "'sa 'tt 'rex 'lll 'l 'r 'v 've",
    "\u{a0}Hacker \u{a0}hacker \u{202f}x \u{2007}y",
    "\u{3000}中文 \u{3000}\u{3000}中",
    "(hello) [world] {x} <y> «z» „w“",
    "!abc !!abc ?!abc .abc ..abc -abc --abc _abc __abc",
    "\tabc \t\tabc \t abc  \tabc",
    "12345 1234567 1 12 123 1234",
    "٣٤٥٦٧ ۱۲۳۴ १२३४५ ①②③④ Ⅻⅻ ¼½¾ 𝟘𝟙𝟚𝟛",
    "abc123def 123abc abc123 1.5 1,000,000 3.14159",
    "a  b   c    d",
    "a\tb\t\tc",
    "a \nb  \n c\n\nd \n\n e",
    "line\r\nline\r\n\r\nx",
    "lone\rcarriage\r\rreturn \r x",
    "trailing \n",
    "trailing\n ",
    "trailing\n  \t",
    "trailing \n \n  ",
    "\n",
    "\n\n\n",
    " \n",
    "\n ",
    "   ",
    "\r\n",
    "!\n\n",
    "!\n\n x",
    "! \n",
    "abc!\r\n\r\ndef",
    "a/b//c/\n/d",
    "http://example.com/path/to?x=1&y=2",
    "x\u{85}y \u{85} \u{2028}z\u{2029} \u{2028}\u{2028}w",
    "\u{b}\u{c}\u{1c}\u{1d}\u{1e}\u{1f}x\u{1c}y",
    "\u{301}abc \u{301}ABC \u{301}\u{301}x \u{301}",
    "\u{301}A \u{301}A\u{301} e\u{301}A",
    "a\u{301}b A\u{301}B \u{300}\u{301}\u{302}",
    "👨‍👩‍👧‍👦 👍🏽 🏳️‍🌈 ❤️ 😀😀",
    "a👍b 👍a 👍 a",
    "CamelCase camelCase HTTPServer getHTTPResponse XMLHttpRequest",
    "ǅemal ǅ ǅA Aǅ aǅ ǈubljana",
    "ʰa aʰ ʰA Aʰ ʰʰ ˢᵗ",
    "中文A A中文 中a a中 中'S",
    "ひらがなカタカナ漢字 ｶﾀｶﾅ ＡＢＣ１２３",
    "Ωmega ΣΊΣΥΦΟΣ ĳ Ĳ ß ẞ",
    "HELLO'S World'S wORLD's ABC'll",
    "I'm I'M i'M ʰ's 中's A's a'S",
    "word's'",
    "x'''s",
    "\u{feff}BOM text",
    "\u{200d}x \u{200d}\u{200d} a\u{200d}b",
    "\u{0}\u{1}\u{7f}",
    "tab\t\n\tnext",
    "    def f(x):\n        return x\n",
    "mixed 中文 and English, 日本語も。",
    "عربي ١٢٣ עברית",
    "ｈｅｌｌｏ　ｗｏｒｌｄ",
    "x \u{a0}\u{a0}y",
    " \u{a0}y",
    "\u{a0} y",
    " !",
    "  !",
    " !a",
    "!a",
    "  a",
    "\t!",
    "a  ",
    "a\u{3000}",
    "#include <stdio.h> $HOME ~user a.b.c x…y €5 +1 _x",
    "ひらがな・カタカナー漢字\u{9fa5}\u{9fa6}中\u{3040}x",
    "(a ((a  (a \t(a \n(a ²x 1st Ⅻa a²b",
    " …a  …\n\n !!\r\n x",
];

/// The critical characters the random strings are drawn from.
const ALPHABET: &[&str] = &[
    " ", " ", "\n", "\r", "\t", "\u{a0}", "\u{3000}", "a", "a", "A", "ǅ", "ʰ", "中", "\u{301}",
    "1", "٣", "'", "'", "s", "S", "ll", "re", "t", ".", "/", "😀", "\u{200d}", "\u{85}", "ſ", "x",
    // DeepSeek's classes: kana and the edges of its CJK ranges, punctuation and symbols beyond
    // ASCII (the katakana middle dot is both), other numbers.
    "ひ", "カ", "ー", "・", "\u{9fa5}", "\u{9fa6}", "\u{3040}", "\u{309f}", "…", "€", "、", "²",
    "Ⅻ", "#", "+", "$", "_",
];

/// Mostly ASCII, for long strings that reach the block phase of the fast path (which needs three
/// blocks of 64 ASCII bytes): words, runs of spaces and newlines, digits, contractions,
/// punctuation, and now and then a character that ends the ASCII stretch.
const ASCII_ALPHABET: &[&str] = &[
    " ", " ", " ", " ", "  ", "\n", "\n", "\r\n", "\r", "\t", "\x0b", "a", "word", "Word", "the",
    "S", "1", "12", "1234", "'", "'s", "'S", "'ll", "'re", "'ve", "'d", "'m", "'t", "'x", ".", ",",
    "!", "/", "(", "--", "\u{0}", "HTTP", "aB", "'LL", "'Re", "12345", "\n\n", "!\n", ".\r\n",
    "/\n/", "  \n ",
];

/// What ends an ASCII stretch in the long random strings: a letter, a mark, a number, a space,
/// a line separator, punctuation (the curly quote of English text).
const NON_ASCII: &[&str] = &[
    "\u{a0}", "é", "中", "\u{301}", "٣", "\u{2028}", "ſ", "\u{2019}", "—",
];

type Spans = Vec<(usize, usize)>;

fn scanner_spans(splitter: &Splitter, text: &str) -> Spans {
    let mut out = Vec::new();
    splitter.split(text, |s, e| out.push((s, e)));
    out
}

fn regex_spans(regex: &Regex, text: &str) -> Result<Spans, String> {
    regex
        .find_iter(text)
        .map(|m| m.map(|m| (m.start(), m.end())).map_err(|e| e.to_string()))
        .collect()
}

fn show(text: &str, spans: &[(usize, usize)]) -> String {
    let pieces: Vec<&str> = spans.iter().map(|&(s, e)| &text[s..e]).collect();
    format!("{pieces:?}")
}

/// The scanner's pieces equal the regex's matches, and tile the text where the pattern does.
fn check(splitter: &Splitter, regex: &Regex, text: &str) -> Result<(), String> {
    let got = scanner_spans(splitter, text);
    if splitter.pattern().is_none_or(|p| p.tiles()) {
        let mut at = 0;
        for &(s, e) in &got {
            if s != at || e <= s {
                return Err(format!("pieces do not tile {text:?}: {}", show(text, &got)));
            }
            at = e;
        }
        if at != text.len() {
            return Err(format!("pieces stop at {at} in {text:?}"));
        }
    }
    let want = regex_spans(regex, text)?;
    if got != want {
        let first = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
        let from = first.saturating_sub(3);
        let ctx_end = (first + 4).min(got.len()).min(want.len());
        return Err(format!(
            "text {:?}…\n  scanner {}\n  regex   {}",
            &text[got.get(from).map_or(0, |s| s.0)..]
                .chars()
                .take(80)
                .collect::<String>(),
            show(text, &got[from..ctx_end.max(from)]),
            show(text, &want[from..ctx_end.max(from)]),
        ));
    }
    Ok(())
}

fn splitter(pattern: Pattern) -> Splitter {
    Splitter::new(pattern, Kernels::active().expect("a tier"))
}

fn edge_strings() -> Vec<String> {
    let mut out: Vec<String> = EDGES.iter().map(|s| s.to_string()).collect();
    // Every pair (each edge before and after every other), and each with its lines joined by
    // the other line ends.
    for a in EDGES {
        for b in EDGES {
            out.push(format!("{a}{b}"));
        }
    }
    out
}

fn run_edges(source: &str, pattern: Pattern) -> Result<(), Failed> {
    let regex = Regex::new(source).map_err(|e| e.to_string())?;
    let sp = splitter(pattern);
    let strings = edge_strings();
    let mut failures = Vec::new();
    for s in &strings {
        if let Err(e) = check(&sp, &regex, s) {
            failures.push(e);
        }
    }
    println!("{} edge strings compared", strings.len());
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} differ:\n{}",
            failures.len(),
            strings.len(),
            failures[..failures.len().min(10)].join("\n")
        )
        .into())
    }
}

fn run_random(source: &str, pattern: Pattern) -> Result<(), Failed> {
    let regex = Regex::new(source).map_err(|e| e.to_string())?;
    let sp = splitter(pattern);
    let cases: u32 = std::env::var("SIMDTOK_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(0x5eed_0001),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = proptest::collection::vec(proptest::sample::select(ALPHABET), 0..24)
        .prop_map(|parts| parts.concat());
    runner
        .run(&strategy, |text| {
            check(&sp, &regex, &text).map_err(TestCaseError::fail)
        })
        .map_err(|e| Failed::from(e.to_string()))?;
    println!("{cases} random strings compared");
    Ok(())
}

/// Long strings of [`ASCII_ALPHABET`] parts with one [`NON_ASCII`] part in `one_in`: with 200,
/// stretches of several blocks; with 25, stretches of a block or so, each ended by a character
/// the fast path leaves to the scanner anywhere in a block (after any ASCII context).
fn run_random_long(source: &str, pattern: Pattern, one_in: u32, seed: u64) -> Result<(), Failed> {
    let regex = Regex::new(source).map_err(|e| e.to_string())?;
    let sp = splitter(pattern);
    let cases: u32 = std::env::var("SIMDTOK_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(3_000, |n| n / 5);
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    });
    let part = prop_oneof![
        one_in - 1 => proptest::sample::select(ASCII_ALPHABET),
        1 => proptest::sample::select(NON_ASCII),
    ];
    let strategy = proptest::collection::vec(part, 100..700).prop_map(|parts| parts.concat());
    runner
        .run(&strategy, |text| {
            check(&sp, &regex, &text).map_err(TestCaseError::fail)
        })
        .map_err(|e| Failed::from(e.to_string()))?;
    println!("{cases} long random strings compared");
    Ok(())
}

fn run_corpus(source: &str, pattern: Pattern, path: &Path) -> Result<(), Failed> {
    let regex = Regex::new(source).map_err(|e| e.to_string())?;
    let sp = splitter(pattern);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text.split_inclusive('\n') {
        n += 1;
        if let Err(e) = check(&sp, &regex, line) {
            failures.push(e);
        }
    }
    // Lines without their line end too where that leaves whitespace at the end of the text
    // (where tiktoken's `\s++$` and the `tokenizer.json` patterns differ).
    for line in text.lines().filter(|l| l.ends_with(char::is_whitespace)) {
        n += 1;
        if let Err(e) = check(&sp, &regex, line) {
            failures.push(e);
        }
    }
    n += 1;
    if let Err(e) = check(&sp, &regex, &text) {
        failures.push(format!("whole file: {e}"));
    }
    println!("{n} texts compared ({} bytes)", text.len());
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {n} differ:\n{}",
            failures.len(),
            failures[..failures.len().min(10)].join("\n")
        )
        .into())
    }
}

/// Every tier gives the scalar tier's pieces, on the corpora (or the edge list when the corpora
/// are absent) and on the random strings' alphabet repeated.
fn run_tier(
    pattern: Pattern,
    kernels: &'static Kernels,
    texts: Arc<Vec<String>>,
) -> Result<(), Failed> {
    let scalar = Splitter::new(pattern, Kernels::scalar());
    let tier = Splitter::new(pattern, kernels);
    for text in texts.iter() {
        let a = scanner_spans(&scalar, text);
        let b = scanner_spans(&tier, text);
        if a != b {
            let first = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            return Err(format!(
                "{} differs from scalar at piece {first}: {:?} vs {:?}",
                kernels.tier(),
                a.get(first).map(|&(s, e)| &text[s..e]),
                b.get(first).map(|&(s, e)| &text[s..e]),
            )
            .into());
        }
    }
    println!("{} texts compared with the scalar tier", texts.len());
    Ok(())
}

fn tier_texts() -> Vec<String> {
    let mut texts = edge_strings();
    texts.push(ALPHABET.concat().repeat(50));
    if let Some(dir) = shared_data() {
        for c in CORPORA {
            if let Ok(t) = std::fs::read_to_string(dir.join("corpora").join(c)) {
                texts.push(t);
            }
        }
    }
    texts
}

/// No quadratic blow-up and no panic on long runs of one critical character.
fn run_pathological(pattern: Pattern) -> Result<(), Failed> {
    let sp = splitter(pattern);
    let units = [
        " ", "a", "A", "'", "\n", "\r\n", "\u{301}", "1", "٣", "中", "\t", "\u{a0}", "!", "'s",
        "ǅ", "ʰ", " a", "\n ", "A\u{301}", "\u{301}A", "😀", "/",
    ];
    for unit in units {
        let text = unit.repeat((1 << 20) / unit.len());
        let start = Instant::now();
        let mut covered = 0;
        sp.split(&text, |s, e| covered += e - s);
        let took = start.elapsed();
        if covered != text.len() && pattern.tiles() {
            return Err(format!("{unit:?}×: {covered} of {} bytes covered", text.len()).into());
        }
        if took > Duration::from_secs(5) {
            return Err(format!("{unit:?}× 1 MiB took {took:?}").into());
        }
    }
    Ok(())
}

fn run_sources() -> Result<(), Failed> {
    for &(name, source, pattern) in SOURCES {
        if Pattern::from_regex_source(source) != Some(pattern) {
            return Err(format!(
                "{name}: from_regex_source gives {:?}",
                Pattern::from_regex_source(source)
            )
            .into());
        }
        // The canonical source of the pattern maps back to it, and compiles.
        let canonical = pattern.regex_source();
        if Pattern::from_regex_source(canonical) != Some(pattern) {
            return Err(format!("{pattern:?}: its regex_source does not map back").into());
        }
        Regex::new(canonical).map_err(|e| e.to_string())?;
    }
    let k = Kernels::scalar();
    for bad in [r"\p{N}{1,0}", "", r"(?i:'s)"] {
        if Pattern::from_regex_source(bad).is_some() {
            return Err(format!("{bad:?} has no scanner").into());
        }
    }
    // A pattern without a scanner: the regex's matches only.
    let sp = Splitter::from_regex(r"\p{L}+|\d", k).map_err(|e| e.to_string())?;
    if sp.pattern().is_some() {
        return Err("a fallback has no pattern".into());
    }
    let mut got = Vec::new();
    sp.split("ab, c1 !", |s, e| got.push((s, e)));
    if got != [(0, 2), (4, 5), (5, 6)] {
        return Err(format!("fallback matches {got:?}").into());
    }
    // A fallback that fails at run time (fancy-regex's backtracking limit) reports the rest of the
    // text as one piece instead of dropping it.
    let sp = Splitter::from_regex(r"(a+)+\1(?=b)", k).map_err(|e| e.to_string())?;
    let text = format!("x{}c", "a".repeat(60));
    let mut got = Vec::new();
    sp.split(&text, |s, e| got.push((s, e)));
    if got != [(0, text.len())] {
        return Err(format!("a failing fallback reports {got:?}").into());
    }
    if Splitter::from_regex("(", k).is_ok() {
        return Err("an invalid regex must be an error".into());
    }
    if Splitter::from_regex(SOURCES[6].1, k)
        .map_err(|e| e.to_string())?
        .pattern()
        != Some(Pattern::O200k)
    {
        return Err("from_regex should use the scanner of a known source".into());
    }
    // A negative control: the comparison notices the one difference between tiktoken's cl100k
    // and the tokenizer.json one.
    let tiktoken = Regex::new(SOURCES[5].1).map_err(|e| e.to_string())?;
    if check(&splitter(Pattern::Cl100k { digits: 3 }), &tiktoken, "a\n ").is_ok()
        || check(&splitter(Pattern::TiktokenCl100k), &tiktoken, "a\n ").is_err()
    {
        return Err("tiktoken's cl100k splits \"a\\n \" as \"a\", \"\\n \"".into());
    }
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Splitter>();
    Ok(())
}

/// Each variant maps to its pattern; each near miss maps to none of the scanners, and its own
/// regex splits its text otherwise than the scanner would (the comparison can tell).
fn run_variants() -> Result<(), Failed> {
    for &(name, source, pattern) in VARIANTS {
        let got = Pattern::from_regex_source(source);
        if got != Some(pattern) {
            return Err(format!("{name}: {source:?} maps to {got:?}, not {pattern:?}").into());
        }
    }
    for &(name, source, pattern, text) in NEAR_MISSES {
        if let Some(p) = Pattern::from_regex_source(source) {
            return Err(format!("{name}: {source:?} must have no scanner, maps to {p:?}").into());
        }
        let regex = Regex::new(source).map_err(|e| e.to_string())?;
        if check(&splitter(pattern), &regex, text).is_ok() {
            return Err(format!("{name}: {text:?} does not show the difference").into());
        }
    }
    Ok(())
}

fn run_tokenizer_jsons(dir: &Path) -> Result<(), Failed> {
    for &(name, pattern) in TOKENIZER_JSONS {
        let path = dir
            .join("models/hf-tokenizer-json")
            .join(format!("{name}.tokenizer.json"));
        let json: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        )
        .map_err(|e| e.to_string())?;
        let split = json["pre_tokenizer"]["pretokenizers"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["type"] == "Split"))
            .ok_or_else(|| format!("{name}: no Split pre-tokenizer"))?;
        let source = split["pattern"]["Regex"].as_str().ok_or("no Regex")?;
        if Pattern::from_regex_source(source) != Some(pattern) {
            return Err(format!(
                "{name}: {source:?} maps to {:?}, not {pattern:?}",
                Pattern::from_regex_source(source)
            )
            .into());
        }
        if !SOURCES.iter().any(|s| s.1 == source) {
            return Err(format!("{name}: {source:?} is not among the tested sources").into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let data = shared_data();
    let mut trials = Vec::new();
    trials.push(Trial::test("sources", run_sources));
    trials.push(Trial::test("variants", run_variants));
    for &(name, source, pattern) in VARIANTS {
        trials.push(Trial::test(format!("variant_edges::{name}"), move || {
            run_edges(source, pattern)
        }));
        trials.push(Trial::test(format!("variant_random::{name}"), move || {
            run_random_long(source, pattern, 25, 0x5eed_0004)
        }));
    }
    match &data {
        Some(dir) => {
            let dir = dir.clone();
            trials.push(Trial::test("tokenizer_json_sources", move || {
                run_tokenizer_jsons(&dir)
            }));
        }
        None => {
            if !args.list {
                println!("tokenizer_json_sources: SKIPPED: ../shared/data is absent");
            }
            trials.push(Trial::test("tokenizer_json_sources", || Ok(())).with_ignored_flag(true));
        }
    }
    for &(name, source, pattern) in SOURCES {
        trials.push(Trial::test(format!("edges::{name}"), move || {
            run_edges(source, pattern)
        }));
        trials.push(Trial::test(format!("random::{name}"), move || {
            run_random(source, pattern)
        }));
        trials.push(Trial::test(format!("random_long::{name}"), move || {
            run_random_long(source, pattern, 200, 0x5eed_0002)
        }));
        trials.push(Trial::test(format!("random_mixed::{name}"), move || {
            run_random_long(source, pattern, 25, 0x5eed_0003)
        }));
        for corpus in CORPORA {
            let test = format!(
                "corpus::{name}::{}",
                corpus.split('.').next().unwrap_or(corpus)
            );
            match &data {
                Some(dir) => {
                    let path = dir.join("corpora").join(corpus);
                    trials.push(Trial::test(test, move || {
                        run_corpus(source, pattern, &path)
                    }));
                }
                None => {
                    if !args.list {
                        println!("{test}: SKIPPED: ../shared/data is absent");
                    }
                    trials.push(Trial::test(test, || Ok(())).with_ignored_flag(true));
                }
            }
        }
    }
    let patterns = [
        Pattern::Gpt2,
        Pattern::Cl100k { digits: 3 },
        Pattern::Cl100k { digits: 1 },
        Pattern::O200k,
        Pattern::Tekken,
        Pattern::TiktokenCl100k,
        Pattern::Numbers { max: 3 },
        Pattern::DeepSeekCjk,
        Pattern::DeepSeekWords,
    ];
    let texts = Arc::new(tier_texts());
    let required = required_tiers();
    for pattern in patterns {
        let short = format!("{pattern:?}").replace([' ', '{', '}', ':'], "");
        trials.push(Trial::test(format!("pathological::{short}"), move || {
            run_pathological(pattern)
        }));
        for tier in Tier::ALL {
            let name = format!("tiers::{short}::{}", tier.name().replace('.', ""));
            let texts = texts.clone();
            trials.push(match Kernels::for_tier(tier) {
                Some(k) => Trial::test(name, move || run_tier(pattern, k, texts)),
                None if required.contains(&tier) => Trial::test(name, move || {
                    Err(format!("SIMDTOK_REQUIRE_TIERS names {tier}, which cannot run here").into())
                }),
                None => Trial::test(name, move || {
                    Err(format!("skipped: {tier} cannot run here").into())
                })
                .with_ignored_flag(true),
            });
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
