//! Builds an [`HfBpe`] from a `tokenizer.json` whose model is byte-level BPE.

use simdtok_kernels::Kernels;

use crate::load::tiktoken::{ByteLevelInverse, byte_level_decode};
use crate::load::tokenizer_json::{StageSpec, TokenizerJson};
use crate::models::merges_bpe::{Affixes, MergesBpe};
use crate::options::LoadOptions;
use crate::pipeline::added_tokens::AddedTokens;
use crate::pipeline::hf_bpe::{HfBpe, HfBpeParts, PreTokenizer};
use crate::pretokenize::Splitter;
use crate::pretokenize::chain::{Behavior, Chain, Matcher, Stage};

/// Whether the file is a byte-level BPE (its pre-tokenizer or decoder says `ByteLevel`).
pub fn is_byte_level(json: &TokenizerJson) -> bool {
    let mentions = |name: &str| {
        json.component(name)
            .is_some_and(|v| v.to_string().contains("\"ByteLevel\""))
    };
    mentions("pre_tokenizer") || mentions("decoder")
}

/// The tokenizer of a byte-level BPE `tokenizer.json`.
pub fn from_tokenizer_json(
    json: &TokenizerJson,
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<HfBpe, String> {
    let model = json.bpe()?;
    let normalizer = json.bpe_normalizer()?;
    let pre = json.byte_level_pre_tokenizer()?;
    let template = json.byte_level_template()?;
    let trim_offsets = json.byte_level_trim_offsets()?;
    let decoder = json.byte_level_decoder()?;
    let added = json.added_tokens()?;
    if let Some(t) = added.iter().find(|t| t.normalized)
        && !normalizer.is_empty()
    {
        return Err(format!(
            "added token {:?} has normalized: true, which is not supported yet with a normalizer",
            t.content
        ));
    }
    if options.add_special_tokens && template.prefix.is_empty() && template.suffix.is_empty() {
        return Err("adding special tokens: the file's post_processor adds none".into());
    }
    let inverse = ByteLevelInverse::new();
    let decode = |t: &str| {
        byte_level_decode(t, &inverse)
            .ok_or_else(|| format!("{t:?} is not in GPT-2's byte-level alphabet"))
    };
    let added_ids: Vec<u32> = added.iter().map(|t| t.id).collect();
    let mut vocab = Vec::with_capacity(model.vocab.len());
    for (token, id) in &model.vocab {
        match byte_level_decode(token, &inverse) {
            Some(bytes) => vocab.push((bytes, *id)),
            // Added tokens may sit in the vocabulary with characters outside the alphabet.
            None if added_ids.contains(id) => {}
            None => {
                return Err(format!(
                    "model.vocab: {token:?} is not in GPT-2's byte-level alphabet"
                ));
            }
        }
    }
    let merges = model
        .merges
        .iter()
        .map(|(a, b)| Ok((decode(a)?, decode(b)?)))
        .collect::<Result<Vec<_>, String>>()?;
    // The affixes are strings of the byte-level alphabet, like the tokens they are added to.
    let affixes = Affixes {
        prefix: decode(&model.continuing_subword_prefix)?,
        suffix: decode(&model.end_of_word_suffix)?,
    };
    let affixed = !affixes.prefix.is_empty() || !affixes.suffix.is_empty();
    let bpe = MergesBpe::with_affixes(vocab, merges, model.ignore_merges, affixes, kernels)?;
    // What a first sight would otherwise build or learn (text never seen before).
    bpe.prepare_first_sights();
    // Without affixes a byte without a token is dropped, as the reference drops it.
    if affixed && !bpe.covers_every_byte() {
        return Err(
            "a byte-level vocabulary with affixes must have a token for every byte UTF-8 \
             text can hold, in every place in a word (with the continuing_subword_prefix before \
             it but first, the end_of_word_suffix after it last)"
                .into(),
        );
    }
    let size = added
        .iter()
        .map(|t| t.id as usize + 1)
        .fold(bpe.len(), usize::max);
    let mut token_strings: Vec<Option<Box<str>>> = vec![None; size];
    for (token, id) in model.vocab {
        token_strings[id as usize] = Some(token.into_boxed_str());
    }
    for t in &added {
        token_strings[t.id as usize] = Some(t.content.clone().into_boxed_str());
    }
    let parts = HfBpeParts {
        bpe,
        normalizer,
        pre_tokenizer: pre_tokenizer(pre.stages, kernels)?,
        add_prefix_space: pre.add_prefix_space,
        // Without a normalizer, the reference's second pass for tokens with `normalized: true`
        // looks in the same text: after the others, in what they left.
        added_normalized: AddedTokens::new(
            added.iter().filter(|t| t.normalized).cloned().collect(),
        )?,
        added: AddedTokens::matching(added, |t| !t.normalized)?,
        special_prefix: template.prefix,
        special_suffix: template.suffix,
        token_strings,
        decoder,
        trim_offsets,
    };
    Ok(HfBpe::new(parts, options.add_special_tokens, kernels))
}

/// The pre-tokenizer of `stages`: one regex alone where the matches and maybe the gaps are
/// the pieces (a scanner for the known patterns, and no chain), else a chain.
fn pre_tokenizer(
    mut stages: Vec<StageSpec>,
    kernels: &'static Kernels,
) -> Result<PreTokenizer, String> {
    if let [
        StageSpec {
            regex: Some(regex),
            behavior,
            invert,
            ..
        },
    ] = &stages[..]
    {
        let keep_gaps = match (behavior, invert) {
            (Behavior::Isolated, false) => Some(true),
            (Behavior::Removed, true) => Some(false),
            _ => None,
        };
        if let Some(keep_gaps) = keep_gaps {
            return Ok(PreTokenizer::Single {
                splitter: Splitter::from_regex(regex, kernels)?,
                keep_gaps,
            });
        }
    }
    let stages = stages
        .drain(..)
        .map(|s| {
            Ok(Stage {
                matcher: match s.regex {
                    Some(r) => Matcher::Regex(Splitter::from_regex(&r, kernels)?),
                    None => Matcher::Numeric,
                },
                behavior: s.behavior,
                invert: s.invert,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(PreTokenizer::Chain(Chain::new(stages)))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The normalizer test file of the repository (GPT-2 cut to 2000 merges), with `edit` applied.
    fn load_edited(edit: impl FnOnce(&mut Value)) -> Result<HfBpe, String> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/bpe/gpt2-2k-nfkc-lower.tokenizer.json"
        );
        let mut root: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        edit(&mut root);
        let json = TokenizerJson::parse(root.to_string().as_bytes())?;
        from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar())
    }

    /// Every seed of the piece cache encodes as itself, for every byte-level test file of the
    /// repository and the real ones in ../shared/data (those skipped, with a note, without it).
    #[test]
    fn every_seed_encodes_as_itself() {
        let mut checked = 0;
        let files = crate::load::test_tokenizer_jsons(&["llama3", "qwen3", "gpt4o", "gpt35turbo"]);
        for (path, json) in files {
            if !is_byte_level(&json) {
                continue;
            }
            let bpe =
                from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap();
            let n = bpe
                .check_seeds()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // Files with affixes have none.
            checked += usize::from(n > 0);
        }
        assert!(checked >= 8, "{checked} byte-level files with seeds");
    }

    fn refused(edit: impl FnOnce(&mut Value)) -> String {
        load_edited(edit).expect_err("refused")
    }

    #[test]
    fn normalizers_it_cannot_apply_are_refused_by_name() {
        // A regex the regex crate cannot run (look-around).
        let e = refused(|r| {
            r["normalizer"] =
                json!({"type": "Replace", "pattern": {"Regex": "a(?=b)"}, "content": " "})
        });
        assert!(e.contains("a(?=b)"), "{e}");
        let e = refused(|r| {
            r["normalizer"] = json!({"type": "Precompiled", "precompiled_charsmap": ""})
        });
        assert!(e.contains("Precompiled"), "{e}");
        let e = refused(
            |r| r["normalizer"] = json!({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "BertNormalizer"}]}),
        );
        assert!(e.contains("BertNormalizer"), "{e}");
        let e = refused(|r| r["normalizer"] = json!({"type": "Strip", "strip_left": true}));
        assert!(e.contains("strip_right"), "{e}");
        // What it can apply loads.
        load_edited(|r| {
            r["normalizer"] = json!({"type": "Sequence", "normalizers": [
                {"type": "NFD"}, {"type": "Strip", "strip_left": false, "strip_right": true},
                {"type": "Prepend", "prepend": "x"}]})
        })
        .unwrap();
    }

    #[test]
    fn a_prefix_space_after_a_split_is_refused() {
        // The reference would put a space before every piece of the Split.
        let e = refused(|r| {
            r["pre_tokenizer"] = json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": "\\d+"}, "behavior": "Isolated",
                 "invert": false},
                {"type": "ByteLevel", "add_prefix_space": true, "use_regex": false}]})
        });
        assert!(e.contains("add_prefix_space"), "{e}");
    }

    #[test]
    fn affixes_need_their_symbols_and_merges_that_fit_them() {
        // A suffix no starting symbol has: some byte has no token at the end of a word.
        let e = refused(|r| r["model"]["end_of_word_suffix"] = json!("</w>"));
        assert!(e.contains("every place in a word"), "{e}");
        // A prefix the merges' right parts do not start with.
        let e = refused(|r| r["model"]["continuing_subword_prefix"] = json!("##"));
        assert!(e.contains("continuing_subword_prefix"), "{e}");
    }
}
