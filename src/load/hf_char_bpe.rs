//! Builds an [`HfCharBpe`] from a character-level BPE `tokenizer.json`: the layout `BpeTrainer`
//! saves with the `Whitespace` or `WhitespaceSplit` pre-tokenizer (and `simdtok train-bpe
//! --pre-tokenizer whitespace` writes). Every other component must be what that layout has —
//! no normalizer, no decoder, no affixes, no byte fallback — or a post-processor that only adds
//! special tokens; anything else is refused by name.

use std::collections::HashMap;

use serde_json::Value;
use simdtok_kernels::Kernels;

use crate::load::tokenizer_json::{TokenizerJson, token_strings};
use crate::models::merges_bpe::MergesBpe;
use crate::options::LoadOptions;
use crate::pipeline::added_tokens::AddedTokens;
use crate::pipeline::hf_char_bpe::{CharPreTokenizer, HfCharBpe, HfCharBpeParts};

/// The pre-tokenizer of a character-level BPE file, `None` for any other file.
fn pre_tokenizer_of(json: &TokenizerJson) -> Option<CharPreTokenizer> {
    match json.component("pre_tokenizer")?.get("type")?.as_str()? {
        "Whitespace" => Some(CharPreTokenizer::Whitespace),
        "WhitespaceSplit" => Some(CharPreTokenizer::WhitespaceSplit),
        _ => None,
    }
}

/// Whether the file is a character-level BPE: its pre-tokenizer is `Whitespace` or
/// `WhitespaceSplit` (asked after the byte-level and SentencePiece-style tests).
pub fn is_char_level(json: &TokenizerJson) -> bool {
    pre_tokenizer_of(json).is_some()
}

/// The tokenizer of a character-level BPE `tokenizer.json`.
pub fn from_tokenizer_json(
    json: &TokenizerJson,
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<HfCharBpe, String> {
    let pre_tokenizer = pre_tokenizer_of(json)
        .ok_or("a character-level BPE needs a Whitespace or WhitespaceSplit pre_tokenizer")?;
    for component in ["normalizer", "decoder"] {
        if let Some(v) = json.component(component) {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
            return Err(format!(
                "{component} of type {kind} is not supported for a character-level BPE \
                 (Whitespace pre-tokenizer) yet (supported: none)"
            ));
        }
    }
    // `BertProcessing`/`TemplateProcessing` only put ids around the text; none is the layout's.
    let template = json.single_template()?;
    if options.add_special_tokens && template.prefix.is_empty() && template.suffix.is_empty() {
        return Err("adding special tokens: the file's post_processor adds none".into());
    }
    // `bpe` refuses dropout and byte fallback.
    let m = json.bpe()?;
    for (name, value) in [
        ("continuing_subword_prefix", &m.continuing_subword_prefix),
        ("end_of_word_suffix", &m.end_of_word_suffix),
    ] {
        // An empty affix changes nothing in the reference either.
        if !value.is_empty() {
            return Err(format!(
                "model.{name} = {value:?} is not supported for a character-level BPE yet"
            ));
        }
    }
    let model = json
        .component("model")
        .ok_or("tokenizer.json has no model")?;
    let fuse_unk = match model.get("fuse_unk") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("model.fuse_unk is not a boolean".into()),
    };
    let ids: HashMap<&str, u32> = m.vocab.iter().map(|(t, id)| (t.as_str(), *id)).collect();
    let unk = match model.get("unk_token") {
        None | Some(Value::Null) => None,
        Some(Value::String(u)) => Some((
            // The reference fails on the first text with a character outside the vocabulary:
            // refused here, where it can be said once.
            *ids.get(u.as_str()).ok_or_else(|| {
                format!("the unknown token {u:?} (model.unk_token) is not in the vocabulary")
            })?,
            fuse_unk,
        )),
        Some(_) => return Err("model.unk_token is not a string".into()),
    };
    drop(ids);
    let added = json.added_tokens()?;
    let token_strings = token_strings(&m.vocab, &added);
    let vocab = m
        .vocab
        .into_iter()
        .map(|(t, id)| (t.into_bytes(), id))
        .collect();
    // A pair listed twice takes its last rank, as in the reference (MergesBpe sees to it).
    let merges = m
        .merges
        .into_iter()
        .map(|(a, b)| (a.into_bytes(), b.into_bytes()))
        .collect();
    let parts = HfCharBpeParts {
        bpe: MergesBpe::new(vocab, merges, m.ignore_merges, kernels)?,
        pre_tokenizer,
        unk,
        ignore_merges: m.ignore_merges,
        // Without a normalizer, the reference's second pass for tokens with `normalized: true`
        // looks in the same text: after the others, in what they left.
        added_normalized: AddedTokens::new(
            added.iter().filter(|t| t.normalized).cloned().collect(),
        )?,
        added: AddedTokens::matching(added, |t| !t.normalized)?,
        special_prefix: template.prefix,
        special_suffix: template.suffix,
        token_strings,
    };
    Ok(HfCharBpe::new(parts, options.add_special_tokens, kernels))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The load error of a `Whitespace` model with `edit` applied to the file.
    fn refused(edit: impl FnOnce(&mut Value)) -> String {
        let mut root = json!({
            "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null, "decoder": null,
            "model": {"type": "BPE", "unk_token": null, "fuse_unk": false,
                "byte_fallback": false, "vocab": {"a": 0, "b": 1, "ab": 2},
                "merges": [["a", "b"]]}
        });
        edit(&mut root);
        let json = TokenizerJson::parse(root.to_string().as_bytes()).unwrap();
        from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap_err()
    }

    #[test]
    fn components_outside_the_layout_are_refused_by_name() {
        let e = refused(|r| r["normalizer"] = json!({"type": "Lowercase"}));
        assert!(e.contains("normalizer of type Lowercase"), "{e}");
        let e = refused(|r| r["decoder"] = json!({"type": "BPEDecoder", "suffix": "</w>"}));
        assert!(e.contains("decoder of type BPEDecoder"), "{e}");
        let e = refused(|r| r["post_processor"] = json!({"type": "ByteLevel"}));
        assert!(e.contains("post_processor of type ByteLevel"), "{e}");
        let e = refused(|r| r["model"]["end_of_word_suffix"] = json!("</w>"));
        assert!(e.contains("end_of_word_suffix"), "{e}");
        let e = refused(|r| r["model"]["continuing_subword_prefix"] = json!("##"));
        assert!(e.contains("continuing_subword_prefix"), "{e}");
        let e = refused(|r| r["model"]["dropout"] = json!(0.1));
        assert!(e.contains("dropout"), "{e}");
        // The reference fails on the first unknown character; refused once, here.
        let e = refused(|r| r["model"]["unk_token"] = json!("<unk>"));
        assert!(e.contains("\"<unk>\""), "{e}");
        let e = refused(|r| r["model"]["merges"] = json!([["a", "c"]]));
        assert!(e.contains("not in the vocabulary"), "{e}");
    }

    #[test]
    fn only_the_whitespace_pre_tokenizers_are_character_level() {
        let is = |pre: Value| {
            let root = json!({"pre_tokenizer": pre, "model": {"type": "BPE"}});
            is_char_level(&TokenizerJson::parse(root.to_string().as_bytes()).unwrap())
        };
        assert!(is(json!({"type": "Whitespace"})));
        assert!(is(json!({"type": "WhitespaceSplit"})));
        assert!(!is(json!({"type": "BertPreTokenizer"})));
        assert!(!is(Value::Null));
    }
}
