//! Builds an [`HfSpmBpe`] from a SentencePiece-style BPE `tokenizer.json` (Llama 2, Mistral 7B,
//! …): reads its normalizer, `Metaspace` pre-tokenizer, model, added tokens, post-processor and
//! decoder, and works out where the model's words can be cut without changing a token.

use std::collections::HashMap;

use serde_json::Value;
use simdtok_kernels::Kernels;

use crate::load::tokenizer_json::{TokenizerJson, sequence_items, token_strings};
use crate::models::merges_bpe::MergesBpe;
use crate::models::safe_cuts::SafeCuts;
use crate::normalize::hf::{Pattern, Step};
use crate::options::LoadOptions;
use crate::pipeline::added_tokens::AddedTokens;
use crate::pipeline::hf_spm_bpe::{
    AsciiPairs, DecodeStep, HfSpmBpe, HfSpmBpeParts, SPACE, SPACE_UTF8,
};

/// The `Metaspace` pre-tokenizer (`replacement` `▁`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Metaspace {
    /// `prepend_scheme`: `Some(true)` always, `Some(false)` first, `None` never.
    prepend: Option<bool>,
    /// Each `▁` starts a new pre-token (`split`).
    split: bool,
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

/// A `Metaspace` pre-tokenizer or decoder (any other pre-tokenizer is an error): its
/// `prepend_scheme` (or, in older files, `add_prefix_space`) and `split` (default `true`).
fn metaspace_of(v: &Value) -> Result<Metaspace, String> {
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

fn decoder_steps(json: &TokenizerJson) -> Result<Vec<DecodeStep>, String> {
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
    let metaspace = json
        .component("pre_tokenizer")
        .map(metaspace_of)
        .transpose()?;
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
    let split_at_spaces = metaspace.is_some_and(|m| m.split);
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
    let byte_fallback = if flag("byte_fallback") {
        let mut table = [0u32; 256];
        for (b, slot) in table.iter_mut().enumerate() {
            *slot = *ids
                .get(format!("<0x{b:02X}>").as_str())
                .ok_or_else(|| format!("byte_fallback needs <0x{b:02X}> in the vocabulary"))?;
        }
        Some(table)
    } else {
        None
    };
    let unk = match model.get("unk_token").and_then(Value::as_str) {
        Some(u) => Some((
            *ids.get(u)
                .ok_or_else(|| format!("the unknown token {u:?} is not in the vocabulary"))?,
            flag("fuse_unk"),
        )),
        None => None,
    };
    let token_strings = token_strings(&m.vocab, &added);
    // No merge can cross the start of a `▁` that follows another character when no entry
    // has one there (a merge's result is always an entry), and when `▁` itself is an entry
    // (so that unknowns never fuse across the cut).
    let cut_at_spaces = ids.contains_key("\u{2581}")
        && !m.vocab.iter().any(|(t, _)| {
            let mut prev: Option<char> = None;
            t.chars().any(|c| {
                let crosses = c == SPACE && prev.is_some_and(|p| p != SPACE);
                prev = Some(c);
                crosses
            })
        });
    // Safe cuts ([`SafeCuts`]) assume every symbol that merges is a substring of the text and
    // every character yields a symbol: so byte-fallback and unknown tokens must be in no
    // merge, unknowns must not fuse (a cut would split a fused run), and no character may be
    // dropped (the reference places tokens by a running sum of lengths across the drop).
    let unk_string = model.get("unk_token").and_then(Value::as_str);
    let inert = |t: &str| {
        Some(t) == unk_string
            || (byte_fallback.is_some() && t.len() == 6 && t.starts_with("<0x") && t.ends_with('>'))
    };
    let no_char_dropped_or_fused = byte_fallback.is_some() || unk.is_some_and(|(_, fuse)| !fuse);
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
        cut_at_spaces,
        split_at_spaces,
        cuts,
        ascii_pairs,
        ignore_merges: flag("ignore_merges"),
    };
    Ok(HfSpmBpe::new(parts, options.add_special_tokens, kernels))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
