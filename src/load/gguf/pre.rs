//! `tokenizer.ggml.pre`: the name llama.cpp's converter gives a byte-level BPE model's
//! pre-tokenizer, and the pre-tokenizer it stands for, as the model's own `tokenizer.json`
//! writes it (the target is the model's tokenizer, not llama.cpp's adaptation of its regex).
//!
//! The names and the patterns they stand for are read from llama.cpp's `src/llama-vocab.cpp`
//! (`LLAMA_VOCAB_PRE_TYPE_*` and each type's `regex_exprs`), where llama.cpp rewrote a
//! pattern (`(?i:…)` spelt out as `[sS]`, lookaheads of `\p{Lu}` classes) the original of its
//! comment is used: the two match the same strings, and the original is what simdtok's
//! scanners recognise.

use serde_json::{Value, json};

// The patterns simdtok's scanners cover, as the `tokenizer.json` files spell them: Llama 3's
// (cl100k), Qwen 2's (cl100k with single digits), GPT-4o's (o200k), Mistral's Tekken and
// DeepSeek V3's main pattern (after digits by three and CJK runs).
use crate::pretokenize::{CL100K, CL100K_1, DEEPSEEK_WORDS_ESCAPED, O200K, TEKKEN};

/// Qwen 3.5's: marks join letters.
const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// DeepSeek LLM's letters.
const DEEPSEEK_LLM_LETTERS: &str = "\\s?[A-Za-z\u{b5}\u{c0}-\u{d6}\u{d8}-\u{f6}\u{f8}-\u{1ba}\u{1bc}-\u{1bf}\u{1c4}-\u{293}\u{295}-\u{2af}\u{370}-\u{373}\u{376}\u{377}\u{37b}-\u{37d}\u{37f}\u{386}\u{388}-\u{38a}\u{38c}\u{38e}-\u{3a1}\u{3a3}-\u{3f5}\u{3f7}-\u{481}\u{48a}-\u{52f}\u{531}-\u{556}\u{10a0}-\u{10c5}\u{13a0}-\u{13f5}\u{13f8}-\u{13fd}\u{1c90}-\u{1cba}\u{1cbd}-\u{1cbf}\u{1d00}-\u{1d2b}\u{1d6b}-\u{1d77}\u{1d79}-\u{1d9a}\u{1e00}-\u{1f15}\u{1f18}-\u{1f1d}\u{1f20}-\u{1f45}\u{1f48}-\u{1f4d}\u{1f50}-\u{1f57}\u{1f59}\u{1f5b}\u{1f5d}\u{1f5f}-\u{1f7d}\u{1f80}-\u{1fb4}\u{1fb6}-\u{1fbc}\u{1fbe}\u{1fc2}-\u{1fc4}\u{1fc6}-\u{1fcc}\u{1fd0}-\u{1fd3}\u{1fd6}-\u{1fdb}\u{1fe0}-\u{1fec}\u{1ff2}-\u{1ff4}\u{1ff6}-\u{1ffc}\u{2102}\u{2107}\u{210a}-\u{2113}\u{2115}\u{2119}-\u{211d}\u{2124}\u{2126}\u{2128}\u{212a}-\u{212d}\u{212f}-\u{2134}\u{2139}\u{213c}-\u{213f}\u{2145}-\u{2149}\u{214e}\u{2183}\u{2184}\u{2c00}-\u{2c7b}\u{2c7e}-\u{2ce4}\u{2ceb}-\u{2cee}\u{2cf2}\u{2cf3}\u{a640}-\u{a66d}\u{a680}-\u{a69b}\u{a722}-\u{a76f}\u{a771}-\u{a787}\u{a78b}-\u{a78e}\u{ab70}-\u{abbf}\u{fb00}-\u{fb06}\u{fb13}-\u{fb17}\u{ff21}-\u{ff3a}\u{ff41}-\u{ff5a}\u{10400}-\u{1044f}\u{104b0}-\u{104d3}\u{104d8}-\u{104fb}\u{10c80}-\u{10cb2}\u{10cc0}-\u{10cf2}\u{118a0}-\u{118df}\u{1e900}-\u{1e943}]+";
/// CJK runs of DeepSeek's pre-tokenizers.
const DEEPSEEK_CJK: &str = "[\u{4e00}-\u{9fa5}\u{800}-\u{4e00}\u{ac00}-\u{d7ff}]+";

/// Each name llama.cpp knows for a byte-level BPE pre-tokenizer, with the kind it stands for.
const NAMES: &[(&str, Kind)] = &[
    ("default", Kind::Default),
    ("llama3", Kind::Llama3),
    ("llama-v3", Kind::Llama3),
    ("llama-bpe", Kind::Llama3),
    ("falcon3", Kind::Llama3),
    ("falcon-h1", Kind::Llama3),
    ("pixtral", Kind::Llama3),
    ("midm-2.0", Kind::Llama3),
    ("lfm2", Kind::Llama3),
    ("jina-v5-nano", Kind::Llama3),
    ("dbrx", Kind::Llama3),
    ("smaug-bpe", Kind::Llama3),
    ("chatglm-bpe", Kind::Llama3),
    ("glm4", Kind::Llama3),
    ("glm5", Kind::Llama3),
    ("deepseek-llm", Kind::DeepseekLlm),
    ("deepseek-coder", Kind::DeepseekCoder),
    ("deepseek-v3", Kind::Deepseek3),
    ("hunyuan-dense", Kind::Deepseek3),
    ("joyai-llm", Kind::Deepseek3),
    ("hy_v4", Kind::Deepseek3),
    ("falcon", Kind::Falcon),
    ("mpt", Kind::Gpt2),
    ("starcoder", Kind::Starcoder),
    ("refact", Kind::Starcoder),
    ("command-r", Kind::Starcoder),
    ("smollm", Kind::Starcoder),
    ("codeshell", Kind::Starcoder),
    ("exaone", Kind::Starcoder),
    ("minerva-7b", Kind::Starcoder),
    ("gpt-2", Kind::Gpt2),
    ("phi-2", Kind::Gpt2),
    ("jina-es", Kind::Gpt2),
    ("jina-de", Kind::Gpt2),
    ("gigachat", Kind::Gpt2),
    ("jina-v2-es", Kind::Gpt2),
    ("jina-v2-de", Kind::Gpt2),
    ("a.x-4.0", Kind::Gpt2),
    ("mellum", Kind::Gpt2),
    ("modern-bert", Kind::Gpt2),
    ("jina-v1-en", Kind::Gpt2),
    ("jina-v2-code", Kind::Gpt2),
    ("roberta-bpe", Kind::Gpt2),
    ("exaone4", Kind::Gpt2),
    ("olmo", Kind::Gpt2),
    ("jais", Kind::Gpt2),
    ("trillion", Kind::Gpt2),
    ("granite-docling", Kind::Gpt2),
    ("qwen2", Kind::Qwen2),
    ("deepseek-r1-qwen", Kind::Qwen2),
    ("kormo", Kind::Qwen2),
    ("f2llmv2", Kind::Qwen2),
    ("megrez", Kind::Qwen2),
    ("stablelm2", Kind::Qwen2),
    ("hunyuan", Kind::Qwen2),
    ("grok-2", Kind::Qwen2),
    ("qwen35", Kind::Qwen35),
    ("gpt-4o", Kind::Gpt4o),
    ("llama4", Kind::Gpt4o),
    ("kanana2", Kind::Gpt4o),
    ("talkie", Kind::Gpt4o),
    ("minimax-m2", Kind::Gpt4o),
    ("tekken", Kind::Tekken),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// No name (an older converter) or `default`: llama.cpp's default list.
    Default,
    Llama3,
    Qwen2,
    Qwen35,
    Gpt2,
    Starcoder,
    Falcon,
    DeepseekCoder,
    DeepseekLlm,
    Deepseek3,
    Gpt4o,
    Tekken,
}

fn split(regex: &str) -> Value {
    json!({"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false})
}

fn digits(individual: bool) -> Value {
    json!({"type": "Digits", "individual_digits": individual})
}

/// `ByteLevel` last: with GPT-2's regex or without one.
fn byte_level(use_regex: bool) -> Value {
    json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
           "use_regex": use_regex})
}

/// The names known, for messages.
pub fn known_names() -> String {
    NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The names whose models' `tokenizer.json` says `ignore_merges` (a pre-token in the vocabulary
/// is that token): where llama.cpp sets `ignore_merges` for them.
const IGNORE_MERGES: &[&str] = &[
    "llama3",
    "llama-v3",
    "llama-bpe",
    "falcon3",
    "falcon-h1",
    "pixtral",
    "midm-2.0",
    "lfm2",
    "jina-v5-nano",
    "glm4",
    "glm5",
    "tekken",
];

/// Whether llama.cpp adds the BOS to a vocabulary of this `pre` name when the file has no
/// `add_bos_token` (Llama 3's names and `tekken`, as their models' post-processors do).
pub fn adds_bos_by_default(pre: Option<&str>) -> bool {
    pre.is_some_and(|p| {
        p == "tekken"
            || NAMES
                .iter()
                .any(|&(n, k)| n == p && k == Kind::Llama3 && IGNORE_MERGES.contains(&n))
    })
}

/// The `pre_tokenizer` of a `tokenizer.json` for the `pre` name (`None`: the key is absent),
/// and its model's `ignore_merges`.
pub fn pre_tokenizer(pre: Option<&str>) -> Result<(Value, bool), String> {
    let kind = match pre {
        None => Kind::Default,
        Some(name) => NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, k)| k)
            .ok_or_else(|| {
                format!(
                    "tokenizer.ggml.pre = {name:?} is not a pre-tokenizer simdtok knows (it knows \
                     {})",
                    known_names()
                )
            })?,
    };
    let stages = match kind {
        // llama.cpp's own list for a file that names none: punctuation runs, GPT-2's regex,
        // digit runs, then groups of three ASCII digits.
        Kind::Default => vec![
            split(r"[\p{P}\$\+<=>\^~\|]+"),
            split(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"),
            split(r"\p{N}+"),
            split("[0-9][0-9][0-9]"),
            byte_level(false),
        ],
        Kind::Llama3 => vec![split(CL100K), byte_level(false)],
        Kind::Qwen2 => vec![split(CL100K_1), byte_level(false)],
        Kind::Qwen35 => vec![split(QWEN35), byte_level(false)],
        Kind::Gpt4o => vec![split(O200K), byte_level(false)],
        Kind::Tekken => vec![split(TEKKEN), byte_level(false)],
        Kind::Gpt2 => vec![byte_level(true)],
        Kind::Starcoder => vec![digits(true), byte_level(true)],
        // Falcon's tokenizer.json: Punctuation (contiguous), ByteLevel with its regex, Digits
        // (runs), then groups of three ASCII digits. The digits stages come after ByteLevel
        // there; ASCII digits are themselves in the byte-level alphabet, so they split alike.
        Kind::Falcon => vec![
            split(r"[\p{P}\$\+<=>\^~\|`]+"),
            split(crate::load::tokenizer_json::BYTE_LEVEL_REGEX),
            split("[0-9]+"),
            split("[0-9][0-9][0-9]"),
            byte_level(false),
        ],
        Kind::DeepseekCoder => vec![
            split("[\r\n]"),
            split(r"\s?\p{L}+"),
            split(r"\s?\p{P}+"),
            split(DEEPSEEK_CJK),
            digits(true),
            byte_level(false),
        ],
        Kind::DeepseekLlm => vec![
            split("[\r\n]"),
            split(DEEPSEEK_LLM_LETTERS),
            split(
                "\\s?[!-/:-~\u{ff01}-\u{ff0f}\u{ff1a}-\u{ff5e}\u{2018}-\u{201f}\u{3000}-\u{3002}]+",
            ),
            split(r"\s+$"),
            split(DEEPSEEK_CJK),
            digits(false),
            byte_level(false),
        ],
        Kind::Deepseek3 => vec![
            split(r"\p{N}{1,3}"),
            split("[一-龥぀-ゟ゠-ヿ]+"),
            split(DEEPSEEK_WORDS_ESCAPED),
            byte_level(false),
        ],
    };
    let ignore_merges = pre.is_some_and(|p| IGNORE_MERGES.contains(&p));
    Ok((
        json!({"type": "Sequence", "pretokenizers": stages}),
        ignore_merges,
    ))
}
