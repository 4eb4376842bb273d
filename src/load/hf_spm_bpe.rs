//! Builds an [`HfSpmBpe`] from a SentencePiece-style BPE `tokenizer.json` (Llama 2, Mistral 7B,
//! Gemma 3, …): reads its normalizer, pre-tokenizer (`Metaspace`, `Split`s, or a `Sequence` of a
//! `Metaspace` then `Split`s), model, added tokens, post-processor and decoder, and works out
//! where the model's words can be cut without changing a token.

use std::collections::HashMap;

use serde_json::Value;
use simdtok_kernels::Kernels;

use crate::load::tokenizer_json::{
    StageSpec, TokenizerJson, sequence_items, split_stage, token_strings,
};
use crate::models::merges_bpe::MergesBpe;
use crate::models::safe_cuts::SafeCuts;
use crate::normalize::hf::{Pattern, Step};
use crate::options::LoadOptions;
use crate::pipeline::added_tokens::AddedTokens;
use crate::pipeline::hf_spm_bpe::{
    AsciiPairs, DecodeStep, HfSpmBpe, HfSpmBpeParts, NO_BYTE, SPACE_UTF8, SpaceCuts,
};
use crate::pretokenize::Splitter;
use crate::pretokenize::chain::{Behavior, Chain, Matcher, Stage};

/// The `Metaspace` pre-tokenizer (`replacement` `▁`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Metaspace {
    /// `prepend_scheme`: `Some(true)` always, `Some(false)` first, `None` never.
    pub(crate) prepend: Option<bool>,
    /// Each `▁` starts a new pre-token (`split`).
    pub(crate) split: bool,
}

/// Whether the file looks like a SentencePiece-style BPE (it has `▁` in its normalizer or
/// pre-tokenizer, or byte fallback).
pub fn is_spm_style(json: &TokenizerJson) -> bool {
    let has = |name: &str, needle: &str| {
        json.component(name)
            .is_some_and(|v| v.to_string().contains(needle))
    };
    has("normalizer", "\u{2581}")
        || has("pre_tokenizer", "Metaspace")
        || has("model", "\"byte_fallback\":true")
}

fn str_of<'a>(v: &'a Value, name: &str, what: &str) -> Result<&'a str, String> {
    v.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what}.{name} is missing or not a string"))
}

/// A `Replace` step's pattern: only a literal string is supported.
fn replace_pattern(v: &Value, what: &str) -> Result<(String, String), String> {
    let pattern = v
        .get("pattern")
        .and_then(|p| p.get("String"))
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what} Replace: only a String pattern is supported"))?;
    Ok((pattern.to_string(), str_of(v, "content", what)?.to_string()))
}

/// The pre-tokenizer: a `Metaspace` first (or none), then `Split` stages, each cutting the pieces
/// of the one before.
#[derive(Debug, Default)]
struct PreTokenizer {
    metaspace: Option<Metaspace>,
    splits: Vec<StageSpec>,
}

/// The file's pre-tokenizer: none, `Metaspace`, `Split`, or a `Sequence` of at most one
/// `Metaspace` (first) and `Split`s. A `Metaspace` after a `Split` would put its `▁` before
/// every piece (with `prepend_scheme` `always`), which no normalizer step does: refused.
fn pre_tokenizer_of(json: &TokenizerJson) -> Result<PreTokenizer, String> {
    let mut out = PreTokenizer::default();
    let Some(p) = json.component("pre_tokenizer") else {
        return Ok(out);
    };
    for (i, q) in sequence_items(p, "pre_tokenizer", "pretokenizers")?
        .into_iter()
        .enumerate()
    {
        match q.get("type").and_then(Value::as_str) {
            Some("Metaspace") if i == 0 => out.metaspace = Some(metaspace_of(q)?),
            Some("Metaspace") => {
                return Err(
                    "pre_tokenizer: a Metaspace after another pre-tokenizer is not supported yet for a SentencePiece-style BPE".into(),
                );
            }
            Some("Split") => out.splits.push(split_stage(q)?),
            kind => {
                return Err(format!(
                    "pre_tokenizer of type {} is not supported for a SentencePiece-style BPE (supported: none, Metaspace, Split, and a Sequence of a Metaspace then Splits)",
                    kind.unwrap_or("?")
                ));
            }
        }
    }
    Ok(out)
}

/// The chain of `splits` (`None` when there are none).
fn split_chain(splits: Vec<StageSpec>, kernels: &'static Kernels) -> Result<Option<Chain>, String> {
    if splits.is_empty() {
        return Ok(None);
    }
    let stages = splits
        .into_iter()
        .map(|s| {
            let source = s.regex.ok_or("pre_tokenizer: a stage without a pattern")?;
            let splitter = Splitter::from_regex(&source, kernels)
                .map_err(|e| format!("pre_tokenizer Split: the regex {e}"))?;
            Ok(Stage {
                matcher: Matcher::Regex(splitter),
                behavior: s.behavior,
                invert: s.invert,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Some(Chain::new(stages)))
}

/// A `Metaspace` pre-tokenizer or decoder (any other pre-tokenizer is an error): its
/// `prepend_scheme` (or, in older files, `add_prefix_space`) and `split` (default `true`).
pub(crate) fn metaspace_of(v: &Value) -> Result<Metaspace, String> {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
    if kind != "Metaspace" {
        return Err(format!(
            "pre_tokenizer of type {kind} is not supported for a SentencePiece-style BPE (supported: none, Metaspace)"
        ));
    }
    if v.get("replacement").and_then(Value::as_str) != Some(SPACE_UTF8) {
        return Err("Metaspace: only the replacement \"\u{2581}\" is supported".into());
    }
    let prepend = match v.get("prepend_scheme").and_then(Value::as_str) {
        Some("always") => Some(true),
        Some("first") => Some(false),
        Some("never") => None,
        Some(other) => return Err(format!("Metaspace: unknown prepend_scheme {other:?}")),
        None => match v.get("add_prefix_space").and_then(Value::as_bool) {
            Some(false) => None,
            _ => Some(true),
        },
    };
    Ok(Metaspace {
        prepend,
        split: v.get("split").and_then(Value::as_bool).unwrap_or(true),
    })
}

pub(crate) fn decoder_steps(json: &TokenizerJson) -> Result<Vec<DecodeStep>, String> {
    let Some(d) = json.component("decoder") else {
        return Ok(Vec::new());
    };
    let list = sequence_items(d, "decoder", "decoders")?;
    list.into_iter()
        .map(|step| match step.get("type").and_then(Value::as_str) {
            Some("Replace") => {
                let (a, b) = replace_pattern(step, "decoder")?;
                Ok(DecodeStep::Replace(a, b))
            }
            Some("ByteFallback") => Ok(DecodeStep::ByteFallback),
            Some("Metaspace") => Ok(DecodeStep::Metaspace {
                prepend: metaspace_of(step)?.prepend.is_some(),
            }),
            Some("Fuse") => Ok(DecodeStep::Fuse),
            Some("Strip") => {
                let content = str_of(step, "content", "decoder Strip")?;
                let mut chars = content.chars();
                let (Some(c), None) = (chars.next(), chars.next()) else {
                    return Err("decoder Strip: content must be one character".into());
                };
                let num = |name: &str| {
                    step.get(name)
                        .and_then(Value::as_u64)
                        .map(|n| n as usize)
                        .ok_or_else(|| format!("decoder Strip: {name} is not a number"))
                };
                Ok(DecodeStep::Strip {
                    content: c,
                    start: num("start")?,
                    stop: num("stop")?,
                })
            }
            Some(other) => Err(format!(
                "decoder of type {other} is not supported for this model (supported: Replace, ByteFallback, Fuse, Strip, Metaspace)"
            )),
            None => Err("decoder has no type".into()),
        })
        .collect()
}

/// The tokenizer of a SentencePiece-style BPE `tokenizer.json`.
pub fn from_tokenizer_json(
    json: &TokenizerJson,
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<HfSpmBpe, String> {
    let PreTokenizer {
        metaspace,
        mut splits,
    } = pre_tokenizer_of(json)?;
    let mut normalizer = json.bpe_normalizer()?;
    if let Some(m) = metaspace {
        // The pre-tokenizer's space replacement and prepended `▁` act like normalizer
        // steps that run last, with the same alignments.
        normalizer.push(Step::Replace(
            Pattern::Literal(" ".into()),
            SPACE_UTF8.into(),
        ));
        if let Some(always) = m.prepend {
            normalizer.push(Step::MetaspacePrepend { always });
        }
    }
    // Metaspace's `split` is a Split on `▁` that merges each with the piece after it. Alone it
    // is the pipeline's own cut (`split_at_spaces`); before other Splits, their first stage.
    let mut split_at_spaces = metaspace.is_some_and(|m| m.split);
    if split_at_spaces && !splits.is_empty() {
        splits.insert(
            0,
            StageSpec {
                regex: Some(SPACE_UTF8.into()),
                literal: Some("\u{2581}".into()),
                behavior: Behavior::MergedWithNext,
                invert: false,
            },
        );
        split_at_spaces = false;
    }
    // Cuts before a `▁` can be proven for Splits on strings that hold no `▁` after their first
    // character (`PartCuts` in the pipeline).
    let splits_allow_cuts = splits.iter().all(|s| {
        s.literal.as_ref().is_some_and(|l| {
            let mut chars = l.chars();
            chars.next().is_some() && chars.all(|c| c != '\u{2581}')
        })
    });
    let pre_split = split_chain(splits, kernels)?;
    let decoder = decoder_steps(json)?;
    let template = json.single_template()?;
    let model = json
        .component("model")
        .ok_or("tokenizer.json has no model")?;
    let flag = |name: &str| model.get(name).and_then(Value::as_bool).unwrap_or(false);
    if model.get("dropout").is_some_and(|d| !d.is_null()) {
        return Err("model.dropout is not supported".into());
    }
    for name in ["continuing_subword_prefix", "end_of_word_suffix"] {
        if model
            .get(name)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
        {
            return Err(format!("model.{name} is not supported yet"));
        }
    }
    let m = json.bpe_vocab_and_merges()?;
    if split_at_spaces && m.ignore_merges {
        return Err(
            "ignore_merges with a Metaspace pre-tokenizer that splits is not supported yet".into(),
        );
    }
    let added = json.added_tokens()?;
    if let Some(t) = added.iter().find(|t| t.normalized) {
        return Err(format!(
            "added token {:?} has normalized: true, which is not supported yet",
            t.content
        ));
    }
    if options.add_special_tokens && template.prefix.is_empty() && template.suffix.is_empty() {
        return Err("adding special tokens: the file's post_processor adds none".into());
    }
    let ids: HashMap<&str, u32> = m.vocab.iter().map(|(t, id)| (t.as_str(), *id)).collect();
    // A byte without its `<0xXX>` entry is `NO_BYTE`: the reference then takes the whole
    // character as unknown (Gemma's files have `\t` in place of `<0x09>`).
    let byte_fallback = flag("byte_fallback").then(|| {
        let mut table = [NO_BYTE; 256];
        for (b, slot) in table.iter_mut().enumerate() {
            if let Some(&id) = ids.get(format!("<0x{b:02X}>").as_str()) {
                *slot = id;
            }
        }
        table
    });
    // Whether byte fallback covers every character outside the vocabulary: each missing byte
    // is ASCII and its character an entry (a multi-byte character holds no ASCII byte).
    let fallback_covers_all = byte_fallback.is_some_and(|table| {
        table.iter().enumerate().all(|(b, &id)| {
            id != NO_BYTE || (b < 0x80 && ids.contains_key((b as u8 as char).to_string().as_str()))
        })
    });
    let unk = match model.get("unk_token").and_then(Value::as_str) {
        Some(u) => Some((
            *ids.get(u)
                .ok_or_else(|| format!("the unknown token {u:?} is not in the vocabulary"))?,
            flag("fuse_unk"),
        )),
        None => None,
    };
    let token_strings = token_strings(&m.vocab, &added);
    // Where no merge can cross the start of a `▁` that follows another character (see
    // `SpaceCuts`).
    let space_cuts = SpaceCuts::of(m.vocab.iter().map(|(t, _)| t.as_str()));
    // Safe cuts ([`SafeCuts`]) assume every symbol that merges is a substring of the text and
    // every character yields a symbol: so byte-fallback and unknown tokens must be in no
    // merge, unknowns must not fuse (a cut would split a fused run), and no character may be
    // dropped (the reference places tokens by a running sum of lengths across the drop).
    let unk_string = model.get("unk_token").and_then(Value::as_str);
    let inert = |t: &str| {
        Some(t) == unk_string
            || (byte_fallback.is_some() && t.len() == 6 && t.starts_with("<0x") && t.ends_with('>'))
    };
    // With byte fallback that misses a byte, a pending unknown comes after the bytes of the
    // characters that follow it (the reference's order), which a cut would change.
    let no_char_dropped_or_fused =
        fallback_covers_all || (byte_fallback.is_none() && unk.is_some_and(|(_, fuse)| !fuse));
    let cuts = (no_char_dropped_or_fused && !m.merges.iter().any(|(a, b)| inert(a) || inert(b)))
        .then(|| SafeCuts::new(m.vocab.iter().map(|(t, id)| (*id, t.as_bytes()))));
    let ascii_pairs = cuts
        .is_some()
        .then(|| AsciiPairs::of(m.vocab.iter().map(|(t, _)| t.as_str())));
    let vocab = m
        .vocab
        .into_iter()
        .map(|(t, id)| (t.into_bytes(), id))
        .collect();
    let merges = m
        .merges
        .into_iter()
        .map(|(a, b)| (a.into_bytes(), b.into_bytes()))
        .collect();
    let parts = HfSpmBpeParts {
        bpe: MergesBpe::new(vocab, merges, flag("ignore_merges"), kernels)?,
        normalizer,
        byte_fallback,
        unk,
        added: AddedTokens::new(added)?,
        special_prefix: template.prefix,
        special_suffix: template.suffix,
        decoder,
        token_strings,
        space_cuts,
        split_at_spaces,
        pre_split,
        splits_allow_cuts,
        cuts,
        ascii_pairs,
        ignore_merges: flag("ignore_merges"),
    };
    Ok(HfSpmBpe::new(parts, options.add_special_tokens, kernels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::AnyPipeline;

    /// A Metaspace file (no normalizer) with `pre_tokenizer` and `ignore_merges`: its load error.
    fn metaspace_error(pre_tokenizer: &str, ignore_merges: bool) -> String {
        let json = format!(
            r#"{{
                "normalizer": null, "pre_tokenizer": {pre_tokenizer}, "decoder": null,
                "post_processor": null, "added_tokens": [],
                "model": {{"type": "BPE", "byte_fallback": false, "unk_token": "<unk>",
                    "ignore_merges": {ignore_merges},
                    "vocab": {{"<unk>": 0, "▁": 1, "a": 2}}, "merges": []}}
            }}"#
        );
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap_err()
    }

    /// Every seed of the word cache merges into itself, for every SentencePiece-style test file
    /// of the repository and Llama 2's in ../shared/data (skipped, with a note, without it).
    #[test]
    fn every_seed_merges_into_itself() {
        let mut checked = 0;
        for (path, json) in crate::load::test_tokenizer_jsons(&["llama2"]) {
            if !is_spm_style(&json) {
                continue;
            }
            let bpe = from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let n = bpe
                .check_seeds()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            checked += usize::from(n > 0);
        }
        assert!(
            checked >= 8,
            "{checked} SentencePiece-style files with seeds"
        );
    }

    #[test]
    fn metaspace_settings_it_cannot_follow_are_refused() {
        let e = metaspace_error(r#"{"type": "Whitespace"}"#, false);
        assert!(e.contains("Whitespace"), "{e}");
        let e = metaspace_error(
            r#"{"type": "Metaspace", "replacement": "_", "prepend_scheme": "first"}"#,
            false,
        );
        assert!(e.contains("replacement"), "{e}");
        let e = metaspace_error(
            r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}"#,
            false,
        );
        assert!(e.contains("sometimes"), "{e}");
        let e = metaspace_error(
            r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}"#,
            true,
        );
        assert!(e.contains("ignore_merges"), "{e}");
    }

    /// `Split` as tokenizers 0.23.2 applies it (`pre_tokenizers.Split(pattern, behavior,
    /// invert).pre_tokenize_str(text)`, the pieces joined with `|`): every behavior with and
    /// without `invert`, on a String and Regex patterns, matches at both ends and next to each
    /// other, empty matches (`x*`, a lookahead), an empty text.
    #[rustfmt::skip]
    const SPLIT_REFERENCE: &[(bool, &str, &str, bool, &str, &str)] = &[
        (false, "-", "Removed", false, "the-final--countdown", "the|final|countdown"),
        (false, "-", "Removed", true, "the-final--countdown", "-|-|-"),
        (false, "-", "Isolated", false, "the-final--countdown", "the|-|final|-|-|countdown"),
        (false, "-", "Isolated", true, "the-final--countdown", "the|-|final|-|-|countdown"),
        (false, "-", "MergedWithPrevious", false, "the-final--countdown", "the-|final-|-|countdown"),
        (false, "-", "MergedWithPrevious", true, "the-final--countdown", "the|-final|-|-countdown"),
        (false, "-", "MergedWithNext", false, "the-final--countdown", "the|-final|-|-countdown"),
        (false, "-", "MergedWithNext", true, "the-final--countdown", "the-|final-|-|countdown"),
        (false, "-", "Contiguous", false, "the-final--countdown", "the|-|final|--|countdown"),
        (false, "-", "Contiguous", true, "the-final--countdown", "the|-|final|--|countdown"),
        (false, "-", "Removed", false, "-a-", "a"),
        (false, "-", "Removed", true, "-a-", "-|-"),
        (false, "-", "Isolated", false, "-a-", "-|a|-"),
        (false, "-", "Isolated", true, "-a-", "-|a|-"),
        (false, "-", "MergedWithPrevious", false, "-a-", "-|a-"),
        (false, "-", "MergedWithPrevious", true, "-a-", "-a|-"),
        (false, "-", "MergedWithNext", false, "-a-", "-a|-"),
        (false, "-", "MergedWithNext", true, "-a-", "-|a-"),
        (false, "-", "Contiguous", false, "-a-", "-|a|-"),
        (false, "-", "Contiguous", true, "-a-", "-|a|-"),
        (false, "-", "Removed", false, "--", ""),
        (false, "-", "Removed", true, "--", "-|-"),
        (false, "-", "Isolated", false, "--", "-|-"),
        (false, "-", "Isolated", true, "--", "-|-"),
        (false, "-", "MergedWithPrevious", false, "--", "-|-"),
        (false, "-", "MergedWithPrevious", true, "--", "-|-"),
        (false, "-", "MergedWithNext", false, "--", "-|-"),
        (false, "-", "MergedWithNext", true, "--", "-|-"),
        (false, "-", "Contiguous", false, "--", "--"),
        (false, "-", "Contiguous", true, "--", "--"),
        (false, "-", "Removed", false, "a", "a"),
        (false, "-", "Removed", true, "a", ""),
        (false, "-", "Isolated", false, "a", "a"),
        (false, "-", "Isolated", true, "a", "a"),
        (false, "-", "MergedWithPrevious", false, "a", "a"),
        (false, "-", "MergedWithPrevious", true, "a", "a"),
        (false, "-", "MergedWithNext", false, "a", "a"),
        (false, "-", "MergedWithNext", true, "a", "a"),
        (false, "-", "Contiguous", false, "a", "a"),
        (false, "-", "Contiguous", true, "a", "a"),
        (false, "-", "Removed", false, "-", ""),
        (false, "-", "Removed", true, "-", "-"),
        (false, "-", "Isolated", false, "-", "-"),
        (false, "-", "Isolated", true, "-", "-"),
        (false, "-", "MergedWithPrevious", false, "-", "-"),
        (false, "-", "MergedWithPrevious", true, "-", "-"),
        (false, "-", "MergedWithNext", false, "-", "-"),
        (false, "-", "MergedWithNext", true, "-", "-"),
        (false, "-", "Contiguous", false, "-", "-"),
        (false, "-", "Contiguous", true, "-", "-"),
        (false, "-", "Removed", false, "", ""),
        (false, "-", "Removed", true, "", ""),
        (false, "-", "Isolated", false, "", ""),
        (false, "-", "Isolated", true, "", ""),
        (false, "-", "MergedWithPrevious", false, "", ""),
        (false, "-", "MergedWithPrevious", true, "", ""),
        (false, "-", "MergedWithNext", false, "", ""),
        (false, "-", "MergedWithNext", true, "", ""),
        (false, "-", "Contiguous", false, "", ""),
        (false, "-", "Contiguous", true, "", ""),
        (true, "x*", "Removed", false, "axxb", "a|b"),
        (true, "x*", "Removed", true, "axxb", "xx"),
        (true, "x*", "Isolated", false, "axxb", "a|xx|b"),
        (true, "x*", "Isolated", true, "axxb", "a|xx|b"),
        (true, "x*", "MergedWithPrevious", false, "axxb", "axx|b"),
        (true, "x*", "MergedWithPrevious", true, "axxb", "a|xxb"),
        (true, "x*", "MergedWithNext", false, "axxb", "a|xxb"),
        (true, "x*", "MergedWithNext", true, "axxb", "axx|b"),
        (true, "x*", "Contiguous", false, "axxb", "a|xx|b"),
        (true, "x*", "Contiguous", true, "axxb", "a|xx|b"),
        (true, "x*", "Removed", false, "xx", ""),
        (true, "x*", "Removed", true, "xx", "xx"),
        (true, "x*", "Isolated", false, "xx", "xx"),
        (true, "x*", "Isolated", true, "xx", "xx"),
        (true, "x*", "MergedWithPrevious", false, "xx", "xx"),
        (true, "x*", "MergedWithPrevious", true, "xx", "xx"),
        (true, "x*", "MergedWithNext", false, "xx", "xx"),
        (true, "x*", "MergedWithNext", true, "xx", "xx"),
        (true, "x*", "Contiguous", false, "xx", "xx"),
        (true, "x*", "Contiguous", true, "xx", "xx"),
        (true, "x*", "Removed", false, "ab", "a|b"),
        (true, "x*", "Removed", true, "ab", ""),
        (true, "x*", "Isolated", false, "ab", "a|b"),
        (true, "x*", "Isolated", true, "ab", "a|b"),
        (true, "x*", "MergedWithPrevious", false, "ab", "a|b"),
        (true, "x*", "MergedWithPrevious", true, "ab", "a|b"),
        (true, "x*", "MergedWithNext", false, "ab", "a|b"),
        (true, "x*", "MergedWithNext", true, "ab", "a|b"),
        (true, "x*", "Contiguous", false, "ab", "a|b"),
        (true, "x*", "Contiguous", true, "ab", "a|b"),
        (true, "(?=b)", "Removed", false, "abab", "a|ba|b"),
        (true, "(?=b)", "Removed", true, "abab", ""),
        (true, "(?=b)", "Isolated", false, "abab", "a|ba|b"),
        (true, "(?=b)", "Isolated", true, "abab", "a|ba|b"),
        (true, "(?=b)", "MergedWithPrevious", false, "abab", "a|ba|b"),
        (true, "(?=b)", "MergedWithPrevious", true, "abab", "a|ba|b"),
        (true, "(?=b)", "MergedWithNext", false, "abab", "a|ba|b"),
        (true, "(?=b)", "MergedWithNext", true, "abab", "a|ba|b"),
        (true, "(?=b)", "Contiguous", false, "abab", "a|ba|b"),
        (true, "(?=b)", "Contiguous", true, "abab", "a|ba|b"),
        (true, "(?=b)", "Removed", false, "bb", "b|b"),
        (true, "(?=b)", "Removed", true, "bb", ""),
        (true, "(?=b)", "Isolated", false, "bb", "b|b"),
        (true, "(?=b)", "Isolated", true, "bb", "b|b"),
        (true, "(?=b)", "MergedWithPrevious", false, "bb", "b|b"),
        (true, "(?=b)", "MergedWithPrevious", true, "bb", "b|b"),
        (true, "(?=b)", "MergedWithNext", false, "bb", "b|b"),
        (true, "(?=b)", "MergedWithNext", true, "bb", "b|b"),
        (true, "(?=b)", "Contiguous", false, "bb", "b|b"),
        (true, "(?=b)", "Contiguous", true, "bb", "b|b"),
        (false, "▁", "Removed", false, "▁▁a▁b▁", "a|b"),
        (false, "▁", "Removed", true, "▁▁a▁b▁", "▁|▁|▁|▁"),
        (false, "▁", "Isolated", false, "▁▁a▁b▁", "▁|▁|a|▁|b|▁"),
        (false, "▁", "Isolated", true, "▁▁a▁b▁", "▁|▁|a|▁|b|▁"),
        (false, "▁", "MergedWithPrevious", false, "▁▁a▁b▁", "▁|▁|a▁|b▁"),
        (false, "▁", "MergedWithPrevious", true, "▁▁a▁b▁", "▁|▁a|▁b|▁"),
        (false, "▁", "MergedWithNext", false, "▁▁a▁b▁", "▁|▁a|▁b|▁"),
        (false, "▁", "MergedWithNext", true, "▁▁a▁b▁", "▁|▁|a▁|b▁"),
        (false, "▁", "Contiguous", false, "▁▁a▁b▁", "▁▁|a|▁|b|▁"),
        (false, "▁", "Contiguous", true, "▁▁a▁b▁", "▁▁|a|▁|b|▁"),
        (false, "▁", "Removed", false, "a▁▁", "a"),
        (false, "▁", "Removed", true, "a▁▁", "▁|▁"),
        (false, "▁", "Isolated", false, "a▁▁", "a|▁|▁"),
        (false, "▁", "Isolated", true, "a▁▁", "a|▁|▁"),
        (false, "▁", "MergedWithPrevious", false, "a▁▁", "a▁|▁"),
        (false, "▁", "MergedWithPrevious", true, "a▁▁", "a|▁|▁"),
        (false, "▁", "MergedWithNext", false, "a▁▁", "a|▁|▁"),
        (false, "▁", "MergedWithNext", true, "a▁▁", "a▁|▁"),
        (false, "▁", "Contiguous", false, "a▁▁", "a|▁▁"),
        (false, "▁", "Contiguous", true, "a▁▁", "a|▁▁"),
        (true, "[0-9]+|,", "Removed", false, "a1,22,b", "a|b"),
        (true, "[0-9]+|,", "Removed", true, "a1,22,b", "1|,|22|,"),
        (true, "[0-9]+|,", "Isolated", false, "a1,22,b", "a|1|,|22|,|b"),
        (true, "[0-9]+|,", "Isolated", true, "a1,22,b", "a|1|,|22|,|b"),
        (true, "[0-9]+|,", "MergedWithPrevious", false, "a1,22,b", "a1|,|22|,|b"),
        (true, "[0-9]+|,", "MergedWithPrevious", true, "a1,22,b", "a|1|,|22|,b"),
        (true, "[0-9]+|,", "MergedWithNext", false, "a1,22,b", "a|1|,|22|,b"),
        (true, "[0-9]+|,", "MergedWithNext", true, "a1,22,b", "a1|,|22|,|b"),
        (true, "[0-9]+|,", "Contiguous", false, "a1,22,b", "a|1,22,|b"),
        (true, "[0-9]+|,", "Contiguous", true, "a1,22,b", "a|1,22,|b"),
        (true, "[0-9]+|,", "Removed", false, "1,", ""),
        (true, "[0-9]+|,", "Removed", true, "1,", "1|,"),
        (true, "[0-9]+|,", "Isolated", false, "1,", "1|,"),
        (true, "[0-9]+|,", "Isolated", true, "1,", "1|,"),
        (true, "[0-9]+|,", "MergedWithPrevious", false, "1,", "1|,"),
        (true, "[0-9]+|,", "MergedWithPrevious", true, "1,", "1|,"),
        (true, "[0-9]+|,", "MergedWithNext", false, "1,", "1|,"),
        (true, "[0-9]+|,", "MergedWithNext", true, "1,", "1|,"),
        (true, "[0-9]+|,", "Contiguous", false, "1,", "1,"),
        (true, "[0-9]+|,", "Contiguous", true, "1,", "1,"),
    ];

    #[test]
    fn split_pieces_are_the_references() {
        for &(regex, pattern, behavior, invert, text, want) in SPLIT_REFERENCE {
            let kind = if regex { "Regex" } else { "String" };
            let q = serde_json::json!({
                "type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert
            });
            let chain = split_chain(vec![split_stage(&q).unwrap()], Kernels::scalar())
                .unwrap()
                .unwrap();
            let mut pieces = Vec::new();
            chain.pieces(text, &mut pieces, &mut Default::default());
            let got: Vec<&str> = pieces.iter().map(|&(s, e)| &text[s..e]).collect();
            let want: Vec<&str> = want.split('|').filter(|p| !p.is_empty()).collect();
            assert_eq!(
                got, want,
                "{kind} {pattern:?} {behavior} invert {invert} on {text:?}"
            );
        }
    }

    /// A SentencePiece-style file with no normalizer over `▁ a b 1 2` (ids 0-9, merges `▁a`,
    /// `ab`, `▁ab`, `b1`), `<unk>` fused, with `pre_tokenizer`.
    fn small(pre_tokenizer: &str) -> Result<HfSpmBpe, String> {
        let json = format!(
            r#"{{
                "normalizer": null, "pre_tokenizer": {pre_tokenizer}, "decoder": null,
                "post_processor": null, "added_tokens": [],
                "model": {{"type": "BPE", "byte_fallback": false, "fuse_unk": true,
                    "unk_token": "<unk>",
                    "vocab": {{"<unk>": 0, "▁": 1, "a": 2, "b": 3, "1": 4, "2": 5, "▁a": 6,
                        "ab": 7, "▁ab": 8, "b1": 9}},
                    "merges": [["▁", "a"], ["a", "b"], ["▁a", "b"], ["b", "1"]]}}
            }}"#
        );
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar())
    }

    fn ids_and_offsets(t: &HfSpmBpe, text: &str) -> (Vec<u32>, Vec<(u32, u32)>) {
        let mut enc = crate::encoding::Encoding::default();
        t.encode_into(text, &mut enc, false);
        (enc.ids, enc.offsets)
    }

    #[test]
    fn a_metaspace_that_splits_then_splits_as_the_reference() {
        // tokenizers 0.23.2 on the same file: the Metaspace's `▁` pieces, then the digits cut.
        let t = small(
            r#"{"type": "Sequence", "pretokenizers": [
                {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
                {"type": "Split", "pattern": {"Regex": "[0-9]"}, "behavior": "Isolated",
                    "invert": false}]}"#,
        )
        .unwrap();
        assert_eq!(
            ids_and_offsets(&t, "ab ab1b12 x ab"),
            (
                vec![8, 8, 4, 3, 4, 5, 1, 0, 8],
                vec![
                    (0, 2),
                    (2, 5),
                    (5, 6),
                    (6, 7),
                    (7, 8),
                    (8, 9),
                    (9, 10),
                    (10, 11),
                    (11, 14)
                ]
            )
        );
        assert_eq!(
            ids_and_offsets(&t, "  ab1"),
            (vec![1, 8, 4], vec![(0, 1), (1, 4), (4, 5)])
        );
        assert_eq!(
            ids_and_offsets(&t, "b1b1"),
            (
                vec![1, 3, 4, 3, 4],
                vec![(0, 1), (0, 1), (1, 2), (2, 3), (3, 4)]
            )
        );
    }

    #[test]
    fn pre_tokenizers_it_cannot_follow_are_refused() {
        let e = small(
            r#"{"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated"},
                {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("Metaspace after"), "{e}");
        let e = small(r#"{"type": "Split", "pattern": {"Regex": "(?<x"}, "behavior": "Isolated"}"#)
            .unwrap_err();
        assert!(e.contains("regex"), "{e}");
        let e = small(r#"{"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways"}"#)
            .unwrap_err();
        assert!(e.contains("Sideways"), "{e}");
        let e =
            small(r#"{"type": "Sequence", "pretokenizers": [{"type": "Digits"}]}"#).unwrap_err();
        assert!(e.contains("Digits"), "{e}");
    }

    #[test]
    fn a_character_with_a_byte_missing_is_unknown_after_the_bytes_that_follow() {
        // Byte fallback without `<0xE6>` (so `日` is unknown): tokenizers 0.23.2 keeps the
        // unknown pending past the byte tokens of later characters, and fuses on.
        let bytes: Vec<String> = (0..256u32)
            .filter(|&b| b != 0xE6)
            .enumerate()
            .map(|(i, b)| format!(r#""<0x{b:02X}>": {}"#, i + 2))
            .collect();
        let json = format!(
            r#"{{
                "normalizer": null, "pre_tokenizer": null, "decoder": null,
                "post_processor": null, "added_tokens": [],
                "model": {{"type": "BPE", "byte_fallback": true, "fuse_unk": true,
                    "unk_token": "<unk>", "vocab": {{"<unk>": 0, "a": 1, {}}}, "merges": []}}
            }}"#,
            bytes.join(", ")
        );
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        let t = from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap();
        assert_eq!(
            ids_and_offsets(&t, "日é"),
            (vec![197, 171, 0], vec![(0, 3), (0, 3), (0, 5)])
        );
        assert_eq!(
            ids_and_offsets(&t, "日日é a"),
            (
                vec![197, 171, 34, 0, 1],
                vec![(0, 3), (0, 3), (0, 3), (3, 9), (9, 10)]
            )
        );
        assert_eq!(
            ids_and_offsets(&t, "a日é日a"),
            (
                vec![1, 197, 171, 0, 1],
                vec![(0, 1), (1, 4), (1, 4), (1, 9), (9, 10)]
            )
        );
    }
}
