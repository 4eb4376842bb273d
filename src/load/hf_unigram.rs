//! Builds an [`HfUnigramPipeline`] from a `tokenizer.json` whose model is `Unigram` (T5,
//! XLM-RoBERTa, ALBERT, and the SentencePiece models `transformers` converts): the model
//! (`vocab` as `[piece, score]`, `unk_id`, `byte_fallback`), the normalizer (`Precompiled`,
//! `Replace`, `Strip`, `NFKC`, `Lowercase`, … and `Sequence`), the pre-tokenizer (`Metaspace`,
//! `WhitespaceSplit`, a `Sequence` of them), added tokens, the post-processor
//! (`TemplateProcessing`, `BertProcessing`) and the decoder (`Metaspace`, `ByteFallback`,
//! `Fuse`, `Strip`, `Replace`, `Sequence`). Anything else is an error naming the component.

use serde_json::Value;
use simdtok_kernels::Kernels;

use crate::load::hf_spm_bpe::{decoder_steps, metaspace_of};
use crate::load::tokenizer_json::{TokenizerJson, sequence_items, token_strings};
use crate::models::unigram::hf::HfUnigram;
use crate::normalize::hf::{Pattern, Step};
use crate::options::LoadOptions;
use crate::pipeline::added_tokens::AddedTokens;
use crate::pipeline::hf_spm_bpe::SPACE_UTF8;
use crate::pipeline::hf_unigram::{HfUnigramParts, HfUnigramPipeline, Stage};

/// A `Unigram` model section: `[piece, score]` pairs in id order, `unk_id`, `byte_fallback`.
type UnigramModel = (Vec<(String, f64)>, u32, bool);

/// The `Unigram` model section.
pub(crate) fn unigram_model(json: &TokenizerJson) -> Result<UnigramModel, String> {
    let model = json
        .component("model")
        .ok_or("tokenizer.json has no model")?;
    let vocab = model
        .get("vocab")
        .and_then(Value::as_array)
        .ok_or("model.vocab is missing or not a list")?
        .iter()
        .enumerate()
        .map(|(i, entry)| match entry.as_array().map(Vec::as_slice) {
            Some([Value::String(piece), score]) => score
                .as_f64()
                .map(|s| (piece.clone(), s))
                .ok_or_else(|| format!("model.vocab[{i}]: the score is not a number")),
            _ => Err(format!("model.vocab[{i}] is not a [piece, score] pair")),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let unk_id = match model.get("unk_id") {
        Some(v) if v.is_u64() => u32::try_from(v.as_u64().expect("checked"))
            .map_err(|_| "model.unk_id is not a 32-bit id".to_string())?,
        None | Some(Value::Null) => {
            // The reference fails on the first character no piece covers; simdtok cannot
            // report that per text.
            return Err("a Unigram model without unk_id is not supported yet".into());
        }
        Some(_) => return Err("model.unk_id is not a non-negative integer".into()),
    };
    let byte_fallback = match model.get("byte_fallback") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("model.byte_fallback is not a boolean".into()),
    };
    Ok((vocab, unk_id, byte_fallback))
}

/// The pre-tokenizer's stages, a first `Metaspace`'s replacement and prefix appended to
/// `normalizer` (they act as normalizer steps that run last, with the same alignments) unless
/// its `prepend_scheme` is `first`.
fn pre_tokenizer_stages(
    json: &TokenizerJson,
    normalizer: &mut crate::normalize::hf::Normalizer,
) -> Result<Vec<Stage>, String> {
    let mut stages = Vec::new();
    let Some(p) = json.component("pre_tokenizer") else {
        return Ok(stages);
    };
    for (i, q) in sequence_items(p, "pre_tokenizer", "pretokenizers")?
        .into_iter()
        .enumerate()
    {
        match q.get("type").and_then(Value::as_str) {
            Some("Metaspace") => {
                let m = metaspace_of(q)?;
                // `first` asks where the text's first normalized character came from (the
                // reference slices the normalized text, and a slice's `offsets_original` starts
                // there): a normalizer that drops leading spaces leaves no `▁`. That needs the
                // spans, which the stage has; `always` and `never` ask nothing.
                if i == 0 && m.prepend != Some(false) {
                    normalizer.push(Step::Replace(
                        Pattern::Literal(" ".into()),
                        SPACE_UTF8.into(),
                    ));
                    if let Some(always) = m.prepend {
                        normalizer.push(Step::MetaspacePrepend { always });
                    }
                    if m.split {
                        stages.push(Stage::SplitBeforeSpaces);
                    }
                } else {
                    stages.push(Stage::Metaspace {
                        prepend: m.prepend,
                        split: m.split,
                    });
                }
            }
            Some("WhitespaceSplit") => stages.push(Stage::WhitespaceSplit),
            Some(other) => {
                return Err(format!(
                    "pre_tokenizer of type {other} is not supported for a Unigram model (supported: none, Metaspace, WhitespaceSplit, and a Sequence of them)"
                ));
            }
            None => return Err("pre_tokenizer has no type".into()),
        }
    }
    Ok(stages)
}

/// The tokenizer of a Unigram `tokenizer.json`.
pub fn from_tokenizer_json(
    json: &TokenizerJson,
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<HfUnigramPipeline, String> {
    let (vocab, unk_id, byte_fallback) = unigram_model(json)?;
    let mut normalizer = json.unigram_normalizer(kernels)?;
    let stages = pre_tokenizer_stages(json, &mut normalizer)?;
    let decoder = decoder_steps(json)?;
    let template = json.single_template()?;
    let added = json.added_tokens()?;
    if let Some(t) = added.iter().find(|t| t.normalized) {
        return Err(format!(
            "added token {:?} has normalized: true, which is not supported yet for a Unigram model",
            t.content
        ));
    }
    if options.add_special_tokens && template.prefix.is_empty() && template.suffix.is_empty() {
        return Err("adding special tokens: the file's post_processor adds none".into());
    }
    let pairs: Vec<(String, u32)> = vocab
        .iter()
        .enumerate()
        .map(|(id, (p, _))| (p.clone(), id as u32))
        .collect();
    let token_strings = token_strings(&pairs, &added);
    let model = HfUnigram::new(&vocab, unk_id, byte_fallback, kernels)?;
    let parts = HfUnigramParts {
        model,
        normalizer,
        stages,
        added: AddedTokens::new(added)?,
        special_prefix: template.prefix,
        special_suffix: template.suffix,
        decoder,
        token_strings,
    };
    Ok(HfUnigramPipeline::new(
        parts,
        options.add_special_tokens,
        kernels,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding;
    use crate::pipeline::AnyPipeline;
    use simdtok_kernels::Tier;

    /// A small Unigram file (ids 0-10: `<unk> ▁ a b ab ▁a ▁ab c <0x41> <0xC3> <0xA9>`) with
    /// `pre_tokenizer`, byte fallback when `bytes`, and `c` added with `lstrip`.
    fn small(pre: &str, bytes: bool, decoder: &str, tier: Tier) -> Option<HfUnigramPipeline> {
        let kernels = Kernels::for_tier(tier)?;
        let json = small_json(pre, bytes, decoder);
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        Some(from_tokenizer_json(&json, &LoadOptions::default(), kernels).unwrap())
    }

    fn small_json(pre: &str, bytes: bool, decoder: &str) -> String {
        format!(
            r#"{{"normalizer": null, "pre_tokenizer": {pre}, "post_processor": null,
                "decoder": {decoder},
                "added_tokens": [{{"id": 7, "content": "c", "single_word": false, "lstrip": true,
                    "rstrip": false, "normalized": false, "special": false}}],
                "model": {{"type": "Unigram", "unk_id": 0, "byte_fallback": {bytes},
                    "vocab": [["<unk>", 0.0], ["▁", -2.0], ["a", -1.0], ["b", -1.5],
                        ["ab", -2.0], ["▁a", -1.8], ["▁ab", -2.5], ["c", -3.0],
                        ["<0x41>", -9.0], ["<0xC3>", -9.0], ["<0xA9>", -9.0]]}}}}"#
        )
    }

    type Encoded = (Vec<u32>, Vec<(u32, u32)>, Vec<String>);

    fn encode(t: &HfUnigramPipeline, text: &str) -> Encoded {
        let mut enc = Encoding::default();
        t.encode_into(text, &mut enc, true);
        let mut ids = Vec::new();
        t.encode_ids_into(text, &mut ids);
        assert_eq!(ids, enc.ids, "ids alone on {text:?}");
        (enc.ids, enc.offsets, enc.pieces)
    }

    fn want(ids: &[u32], spans: &[(u32, u32)], pieces: &[&str]) -> Encoded {
        (
            ids.to_vec(),
            spans.to_vec(),
            pieces.iter().map(|p| p.to_string()).collect(),
        )
    }

    fn metaspace(scheme: &str, split: bool) -> String {
        format!(
            r#"{{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "{scheme}", "split": {split}}}"#
        )
    }

    /// What tokenizers 0.23.3 gives for the same file and texts (byte offsets).
    #[test]
    fn pre_tokenizers_as_the_reference() {
        let ws_then = |m: String| {
            format!(
                r#"{{"type": "Sequence", "pretokenizers": [{{"type": "WhitespaceSplit"}}, {m}]}}"#
            )
        };
        let cases: Vec<(String, &str, Encoded)> = vec![
            (
                metaspace("first", true),
                "ab a  b",
                want(
                    &[6, 5, 1, 1, 3],
                    &[(0, 2), (2, 4), (4, 5), (5, 6), (6, 7)],
                    &["▁ab", "▁a", "▁", "▁", "b"],
                ),
            ),
            (
                metaspace("first", true),
                "  ab\tc ab",
                want(
                    &[1, 6, 7, 6],
                    &[(0, 1), (1, 4), (4, 6), (6, 9)],
                    &["▁", "▁ab", "\tc", "▁ab"],
                ),
            ),
            (
                metaspace("first", true),
                "xyz ab",
                want(&[1, 0, 6], &[(0, 1), (0, 3), (3, 6)], &["▁", "xyz", "▁ab"]),
            ),
            (
                metaspace("never", true),
                "a c ab",
                want(&[2, 7, 6], &[(0, 1), (1, 3), (3, 6)], &["a", " c", "▁ab"]),
            ),
            (
                ws_then(metaspace("first", true)),
                "  ab\tc ab",
                want(&[4, 7, 4], &[(2, 4), (4, 6), (7, 9)], &["ab", "\tc", "ab"]),
            ),
            (
                ws_then(metaspace("first", true)),
                "xyz ab",
                want(&[1, 0, 4], &[(0, 1), (0, 3), (4, 6)], &["▁", "xyz", "ab"]),
            ),
            (
                ws_then(metaspace("always", false)),
                "ab a  b",
                want(
                    &[6, 5, 1, 3],
                    &[(0, 2), (3, 4), (6, 7), (6, 7)],
                    &["▁ab", "▁a", "▁", "b"],
                ),
            ),
        ];
        for tier in Tier::ALL {
            for (pre, text, expected) in &cases {
                let Some(t) = small(pre, false, "null", tier) else {
                    continue;
                };
                assert_eq!(&encode(&t, text), expected, "{pre} on {text:?} ({tier:?})");
            }
        }
    }

    /// `prepend_scheme: first` asks where the normalized text's first character came from, not
    /// where the text between added tokens starts (tokenizers 0.23.3 on the same file).
    #[test]
    fn first_prepends_where_the_normalized_text_starts_the_input() {
        let strip = r#"{"type": "Strip", "strip_left": true, "strip_right": false}"#;
        let cases: Vec<(&str, &str, Encoded)> = vec![
            ("null", " ab", want(&[6], &[(0, 3)], &["▁ab"])),
            (
                "null",
                "  ab a",
                want(&[1, 6, 5], &[(0, 1), (1, 4), (4, 6)], &["▁", "▁ab", "▁a"]),
            ),
            (
                "null",
                "ab c ab",
                want(&[6, 7, 6], &[(0, 2), (2, 4), (4, 7)], &["▁ab", " c", "▁ab"]),
            ),
            (strip, " ab", want(&[4], &[(1, 3)], &["ab"])),
            (
                strip,
                "  ab a",
                want(&[4, 5], &[(2, 4), (4, 6)], &["ab", "▁a"]),
            ),
            (
                strip,
                "ab c ab",
                want(&[6, 7, 4], &[(0, 2), (2, 4), (5, 7)], &["▁ab", " c", "ab"]),
            ),
            (
                strip,
                "xc  ab",
                want(
                    &[1, 0, 7, 4],
                    &[(0, 1), (0, 1), (1, 2), (4, 6)],
                    &["▁", "x", "c", "ab"],
                ),
            ),
        ];
        for tier in Tier::ALL {
            let Some(kernels) = Kernels::for_tier(tier) else {
                continue;
            };
            for split in [true, false] {
                for (normalizer, text, expected) in &cases {
                    let json = small_json(&metaspace("first", split), false, "null").replace(
                        r#""normalizer": null"#,
                        &format!(r#""normalizer": {normalizer}"#),
                    );
                    let json = TokenizerJson::parse(json.as_bytes()).unwrap();
                    let t = from_tokenizer_json(&json, &LoadOptions::default(), kernels).unwrap();
                    assert_eq!(
                        &encode(&t, text),
                        expected,
                        "{normalizer}, split {split}, on {text:?} ({tier:?})"
                    );
                }
            }
        }
    }

    #[test]
    fn byte_fallback_and_decoders_as_the_reference() {
        let decoder = r#"{"type": "Sequence", "decoders": [
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
            {"type": "ByteFallback"}, {"type": "Fuse"}]}"#;
        for tier in Tier::ALL {
            let Some(t) = small(&metaspace("always", true), true, decoder, tier) else {
                continue;
            };
            let e = encode(&t, "é ab");
            assert_eq!(
                e,
                want(
                    &[1, 9, 10, 6],
                    &[(0, 2), (0, 2), (0, 2), (2, 5)],
                    &["▁", "<0xC3>", "<0xA9>", "▁ab"]
                )
            );
            assert_eq!(t.decode(&e.0).unwrap(), "é ab");
            // `☃`'s bytes have no pieces: the fused run is one unknown, shown as its text.
            let e = encode(&t, "éé☃ A");
            assert_eq!(
                e,
                want(
                    &[1, 0, 1, 8],
                    &[(0, 2), (0, 7), (7, 8), (8, 9)],
                    &["▁", "éé☃", "▁", "<0x41>"]
                )
            );
            assert_eq!(t.decode(&e.0).unwrap(), "<unk> A");
            assert_eq!(t.decode(&[11]), Err(11));
        }
    }

    fn load_error(json: &str) -> String {
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap_err()
    }

    #[test]
    fn components_it_does_not_follow_are_named() {
        let with = |field: &str, value: &str| {
            format!(
                r#"{{"normalizer": null, "pre_tokenizer": null, "post_processor": null,
                    "decoder": null, "added_tokens": [],
                    "model": {{"type": "Unigram", "unk_id": 0,
                        "vocab": [["<unk>", 0.0], ["a", -1.0]]}}, "{field}": {value}}}"#
            )
        };
        for (field, value, named) in [
            ("pre_tokenizer", r#"{"type": "ByteLevel"}"#, "ByteLevel"),
            (
                "pre_tokenizer",
                r#"{"type": "Sequence", "pretokenizers": [{"type": "Digits"}]}"#,
                "Digits",
            ),
            (
                "normalizer",
                r#"{"type": "BertNormalizer"}"#,
                "BertNormalizer",
            ),
            (
                "normalizer",
                r#"{"type": "Precompiled"}"#,
                "precompiled_charsmap",
            ),
            (
                "normalizer",
                r#"{"type": "Precompiled", "precompiled_charsmap": "%%%"}"#,
                "base64",
            ),
            (
                "normalizer",
                r#"{"type": "Precompiled", "precompiled_charsmap": "AAAA"}"#,
                "Precompiled",
            ),
            ("decoder", r#"{"type": "WordPiece"}"#, "WordPiece"),
            ("post_processor", r#"{"type": "ByteLevel"}"#, "ByteLevel"),
            (
                "pre_tokenizer",
                r#"{"type": "Metaspace", "replacement": "_", "prepend_scheme": "always"}"#,
                "replacement",
            ),
            (
                "pre_tokenizer",
                r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}"#,
                "sometimes",
            ),
        ] {
            let e = load_error(&with(field, value));
            assert!(e.contains(named), "{field} {value}: {e}");
        }
    }

    #[test]
    fn malformed_models_are_errors() {
        let model = |m: &str| {
            format!(
                r#"{{"normalizer": null, "pre_tokenizer": null, "decoder": null,
                    "post_processor": null, "added_tokens": [], "model": {m}}}"#
            )
        };
        for (m, named) in [
            (r#"{"type": "Unigram", "unk_id": 0}"#, "model.vocab"),
            (
                r#"{"type": "Unigram", "unk_id": 0, "vocab": {"a": 1}}"#,
                "model.vocab",
            ),
            (
                r#"{"type": "Unigram", "unk_id": 0, "vocab": [["a"]]}"#,
                "model.vocab[0]",
            ),
            (
                r#"{"type": "Unigram", "unk_id": 0, "vocab": [["a", "x"]]}"#,
                "score",
            ),
            (
                r#"{"type": "Unigram", "unk_id": 0, "vocab": [[1, 0.5]]}"#,
                "model.vocab[0]",
            ),
            (r#"{"type": "Unigram", "unk_id": 0, "vocab": []}"#, "empty"),
            (r#"{"type": "Unigram", "vocab": [["a", 0.0]]}"#, "unk_id"),
            (
                r#"{"type": "Unigram", "unk_id": -1, "vocab": [["a", 0.0]]}"#,
                "unk_id",
            ),
            (
                r#"{"type": "Unigram", "unk_id": 5, "vocab": [["a", 0.0]]}"#,
                "unk_id",
            ),
            (
                r#"{"type": "Unigram", "unk_id": 0, "byte_fallback": 1, "vocab": [["a", 0.0]]}"#,
                "byte_fallback",
            ),
        ] {
            let e = load_error(&model(m));
            assert!(e.contains(named), "{m}: {e}");
        }
    }
}
