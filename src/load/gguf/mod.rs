//! The tokenizer stored in a GGUF file (llama.cpp's model format).
//!
//! [`reader`] reads the file's metadata in place; this module turns the `tokenizer.ggml.*`
//! keys into the description another loader already builds a tokenizer from, so that a GGUF
//! runs on the same engines as the file it was converted from:
//!
//! - `llama` (SentencePiece BPE over `tokens`, `scores`, `token_type`) and `t5` (unigram over
//!   `scores`, with `precompiled_charsmap`): a SentencePiece `ModelProto`, checked by
//!   [`crate::load::spm_proto::parse`] as a `.model` file is;
//! - `gpt2` (byte-level BPE over `tokens` and `merges`, split as `pre` names: [`pre`]): a
//!   byte-level BPE `tokenizer.json`;
//! - `bert` (WordPiece): a WordPiece `tokenizer.json`, the converter's `▁word`/`word` pieces
//!   turned back into `word`/`##word`.

pub mod pre;
pub mod reader;

use prost::Message;
use serde_json::{Map, Value as Json, json};

use crate::load::spm_proto::{
    ModelProto, NormalizerSpecProto, PieceProto, SpmModelFile, TrainerSpecProto,
};
use crate::load::tiktoken::{ByteLevelInverse, byte_level_alphabet, byte_level_decode};
use crate::load::tokenizer_json::TokenizerJson;
use reader::Metadata;

/// llama.cpp's token types (`llama_token_type`), as `tokenizer.ggml.token_type` stores them.
pub mod token_type {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// What a GGUF file's tokenizer is, ready for a loader.
pub enum GgufTokenizer {
    /// `llama` or `t5`: a SentencePiece model, and the ids to put before and after each text
    /// when special tokens are added (`add_bos_token`, `add_eos_token`).
    SentencePiece {
        model: SpmModelFile,
        prefix: Vec<u32>,
        suffix: Vec<u32>,
    },
    /// `gpt2`: a byte-level BPE `tokenizer.json`.
    ByteLevelBpe(TokenizerJson),
    /// `bert`: a WordPiece `tokenizer.json`.
    WordPiece(TokenizerJson),
}

/// The model names of `tokenizer.ggml.model` simdtok reads.
pub const MODELS: &str = "llama, gpt2, bert, t5";

/// The special token ids and flags a GGUF stores.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Specials {
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub unk: Option<u32>,
    pub sep: Option<u32>,
    pub pad: Option<u32>,
    pub cls: Option<u32>,
    pub add_bos: Option<bool>,
    pub add_eos: Option<bool>,
}

/// The vocabulary keys shared by every model type.
struct Vocab<'a> {
    tokens: Vec<&'a str>,
    types: Option<Vec<i32>>,
    scores: Option<Vec<f32>>,
    specials: Specials,
}

fn opt_id(meta: &Metadata<'_>, key: &str, n: usize) -> Result<Option<u32>, String> {
    let Some(v) = meta.get(key) else {
        return Ok(None);
    };
    let id = v.as_u64(key)?;
    // Some converters write -1 (as u32::MAX) or an id past the end for "none".
    if id >= n as u64 {
        return Ok(None);
    }
    Ok(Some(id as u32))
}

fn opt_bool(meta: &Metadata<'_>, key: &str) -> Result<Option<bool>, String> {
    meta.get(key).map(|v| v.as_bool(key)).transpose()
}

fn read_vocab<'a>(meta: &Metadata<'a>) -> Result<Vocab<'a>, String> {
    let key = "tokenizer.ggml.tokens";
    let tokens = meta
        .get(key)
        .ok_or("the GGUF file has no tokenizer.ggml.tokens (no vocabulary)")?
        .as_strings(key)?;
    if tokens.is_empty() {
        return Err("tokenizer.ggml.tokens is empty".into());
    }
    let n = tokens.len();
    let same_len = |key: &str, len: usize| -> Result<(), String> {
        if len != n {
            return Err(format!("{key} has {len} entries for {n} tokens"));
        }
        Ok(())
    };
    let types = match meta.get("tokenizer.ggml.token_type") {
        Some(v) => {
            let t = v.as_i32s("tokenizer.ggml.token_type")?;
            same_len("tokenizer.ggml.token_type", t.len())?;
            Some(t)
        }
        None => None,
    };
    let scores = match meta.get("tokenizer.ggml.scores") {
        Some(v) => {
            let s = v.as_f32s("tokenizer.ggml.scores")?;
            same_len("tokenizer.ggml.scores", s.len())?;
            Some(s)
        }
        None => None,
    };
    let specials = Specials {
        bos: opt_id(meta, "tokenizer.ggml.bos_token_id", n)?,
        eos: opt_id(meta, "tokenizer.ggml.eos_token_id", n)?,
        unk: opt_id(meta, "tokenizer.ggml.unknown_token_id", n)?,
        sep: opt_id(meta, "tokenizer.ggml.seperator_token_id", n)?,
        pad: opt_id(meta, "tokenizer.ggml.padding_token_id", n)?,
        cls: opt_id(meta, "tokenizer.ggml.cls_token_id", n)?,
        add_bos: opt_bool(meta, "tokenizer.ggml.add_bos_token")?,
        add_eos: opt_bool(meta, "tokenizer.ggml.add_eos_token")?,
    };
    Ok(Vocab {
        tokens,
        types,
        scores,
        specials,
    })
}

/// The tokenizer of the GGUF file `bytes` (its metadata only), and the special ids it
/// stores.
pub fn parse(bytes: &[u8]) -> Result<(GgufTokenizer, Specials), String> {
    let meta = reader::read(bytes)?;
    let model_key = "tokenizer.ggml.model";
    let model = meta
        .get(model_key)
        .ok_or("the GGUF file has no tokenizer.ggml.model (no tokenizer)")?
        .as_str(model_key)?;
    if !matches!(model, "llama" | "gpt2" | "bert" | "t5") {
        return Err(format!(
            "tokenizer.ggml.model = {model:?} is not supported (simdtok reads {MODELS})"
        ));
    }
    let vocab = read_vocab(&meta)?;
    let specials = vocab.specials.clone();
    let tok = match model {
        "llama" | "t5" => sentencepiece(&meta, &vocab, model == "t5")?,
        "gpt2" => byte_level_bpe(&meta, &vocab)?,
        _ => wordpiece(&vocab)?,
    };
    Ok((tok, specials))
}

/// The type of token `i` (normal when the file stores none).
fn type_of(vocab: &Vocab<'_>, i: usize) -> i32 {
    match &vocab.types {
        Some(t) => t[i],
        None if Some(i as u32) == vocab.specials.unk => token_type::UNKNOWN,
        None if Some(i as u32) == vocab.specials.bos || Some(i as u32) == vocab.specials.eos => {
            token_type::CONTROL
        }
        None => token_type::NORMAL,
    }
}

/// The template ids for `add_bos_token`/`add_eos_token` (`default_bos` when the file does not
/// say).
fn template(specials: &Specials, default_bos: bool) -> (Vec<u32>, Vec<u32>) {
    let prefix = specials
        .bos
        .filter(|_| specials.add_bos.unwrap_or(default_bos))
        .into_iter()
        .collect();
    let suffix = specials
        .eos
        .filter(|_| specials.add_eos.unwrap_or(false))
        .into_iter()
        .collect();
    (prefix, suffix)
}

fn sentencepiece(
    meta: &Metadata<'_>,
    vocab: &Vocab<'_>,
    unigram: bool,
) -> Result<GgufTokenizer, String> {
    let scores = vocab.scores.as_ref();
    if unigram && scores.is_none() {
        return Err("a t5 (unigram) vocabulary needs tokenizer.ggml.scores".into());
    }
    let mut byte_fallback = false;
    let pieces = (0..vocab.tokens.len())
        .map(|i| {
            let mut kind = type_of(vocab, i);
            // Converters mark padding pieces UNKNOWN too (Phi-3: 53 of them); only the file's
            // unknown token is the model's, the rest are never produced.
            if kind == token_type::UNKNOWN && vocab.specials.unk.is_some_and(|u| u as usize != i) {
                kind = token_type::UNUSED;
            }
            byte_fallback |= kind == token_type::BYTE;
            PieceProto {
                piece: Some(vocab.tokens[i].to_owned()),
                score: Some(scores.map_or(0.0, |s| s[i])),
                kind: Some(kind),
            }
        })
        .collect();
    let charsmap = match meta.get("tokenizer.ggml.precompiled_charsmap") {
        Some(v) => Some(
            v.as_byte_array("tokenizer.ggml.precompiled_charsmap")?
                .to_vec(),
        ),
        None => None,
    };
    // llama.cpp's defaults: a space before the text in both; extra spaces removed for t5 only.
    let add_space_prefix = opt_bool(meta, "tokenizer.ggml.add_space_prefix")?.unwrap_or(true);
    let remove_extra =
        opt_bool(meta, "tokenizer.ggml.remove_extra_whitespaces")?.unwrap_or(unigram);
    let name = |id: Option<u32>| id.map(|i| vocab.tokens[i as usize].to_owned());
    let proto = ModelProto {
        pieces,
        trainer_spec: Some(TrainerSpecProto {
            model_type: Some(if unigram { 1 } else { 2 }),
            byte_fallback: Some(byte_fallback),
            bos_piece: name(vocab.specials.bos),
            eos_piece: name(vocab.specials.eos),
            ..Default::default()
        }),
        normalizer_spec: Some(NormalizerSpecProto {
            name: Some(
                if charsmap.is_some() {
                    "nmt_nfkc"
                } else {
                    "identity"
                }
                .into(),
            ),
            precompiled_charsmap: charsmap,
            add_dummy_prefix: Some(add_space_prefix),
            remove_extra_whitespaces: Some(remove_extra),
            escape_whitespaces: Some(true),
        }),
        denormalizer_spec: None,
    };
    let model = crate::load::spm_proto::parse(&proto.encode_to_vec())?;
    // llama.cpp adds BOS by default to a `llama` vocabulary, nothing to a `t5` one but EOS.
    let (prefix, mut suffix) = template(&vocab.specials, !unigram);
    if unigram && vocab.specials.add_eos.is_none() {
        suffix = vocab.specials.eos.into_iter().collect();
    }
    Ok(GgufTokenizer::SentencePiece {
        model,
        prefix,
        suffix,
    })
}

/// The added tokens of a `tokenizer.json`: the control tokens, and the others `user` says
/// (as non-special ones).
fn added_tokens(vocab: &Vocab<'_>, user: impl Fn(usize) -> bool) -> Vec<Json> {
    (0..vocab.tokens.len())
        .filter_map(|i| {
            let special = match type_of(vocab, i) {
                token_type::CONTROL => true,
                _ if user(i) => false,
                _ => return None,
            };
            Some(
                json!({"id": i, "content": vocab.tokens[i], "single_word": false,
                        "lstrip": false, "rstrip": false, "normalized": false,
                        "special": special}),
            )
        })
        .collect()
}

fn post_processor(vocab: &Vocab<'_>, prefix: &[u32], suffix: &[u32]) -> Json {
    let mut single = Vec::new();
    let mut specials = Map::new();
    let mut add = |id: u32, single: &mut Vec<Json>| {
        let content = vocab.tokens[id as usize];
        single.push(json!({"SpecialToken": {"id": content, "type_id": 0}}));
        specials.insert(
            content.to_owned(),
            json!({"id": content, "ids": [id], "tokens": [content]}),
        );
    };
    for &id in prefix {
        add(id, &mut single);
    }
    single.push(json!({"Sequence": {"id": "A", "type_id": 0}}));
    for &id in suffix {
        add(id, &mut single);
    }
    json!({"type": "TemplateProcessing", "single": single, "pair": [],
           "special_tokens": specials})
}

/// The token→id object of a `tokenizer.json`; a token stored twice is an error (the JSON
/// object could hold one of them only).
fn vocab_object(
    tokens: impl Iterator<Item = (usize, String)>,
) -> Result<Map<String, Json>, String> {
    let mut map = Map::new();
    for (i, t) in tokens {
        if let Some(first) = map.insert(t.clone(), json!(i)) {
            return Err(format!(
                "tokenizer.ggml.tokens: token #{i} {t:?} is token #{first} too"
            ));
        }
    }
    Ok(map)
}

fn byte_level_bpe(meta: &Metadata<'_>, vocab: &Vocab<'_>) -> Result<GgufTokenizer, String> {
    let key = "tokenizer.ggml.merges";
    let merges = meta
        .get(key)
        .ok_or("a gpt2 (byte-level BPE) vocabulary needs tokenizer.ggml.merges")?
        .as_strings(key)?;
    let merges: Vec<Json> = merges
        .iter()
        .enumerate()
        .map(|(i, m)| {
            m.split_once(' ')
                .map(|(a, b)| json!([a, b]))
                .ok_or_else(|| format!("{key}[{i}] {m:?} is not two tokens and a space"))
        })
        .collect::<Result<_, _>>()?;
    let pre_key = "tokenizer.ggml.pre";
    let pre = meta.get(pre_key).map(|v| v.as_str(pre_key)).transpose()?;
    let (pre_tokenizer, ignore_merges) = pre::pre_tokenizer(pre)?;
    let (prefix, suffix) = template(&vocab.specials, pre::adds_bos_by_default(pre));
    let inverse = ByteLevelInverse::new();
    let alphabet = byte_level_alphabet();
    // A token of the vocabulary (not an added one) outside the byte-level alphabet is one the
    // converter stored decoded (Command R's "🦙", "\u{200d}"): in the original file the
    // byte-level pre-tokenizer never gives it, merges alone could. It goes back into the
    // alphabet as an ordinary token. `None`: kept as the file has it. One whose alphabet form
    // is another token already (Command R's "\u{200d}" beside "âĢį", which merges give) is
    // never produced by the original: it gets bytes no UTF-8 text holds (0xFF 0xFE and its
    // id), unreachable, and decodes to them.
    let present: std::collections::HashSet<&str> = vocab.tokens.iter().copied().collect();
    let tokens: Vec<Option<String>> = vocab
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if byte_level_decode(t, &inverse).is_some()
                || matches!(
                    type_of(vocab, i),
                    token_type::CONTROL | token_type::USER_DEFINED
                )
            {
                return None;
            }
            let re: String = t.bytes().map(|b| alphabet[b as usize]).collect();
            if !present.contains(re.as_str()) {
                return Some(re);
            }
            let unreachable = [0xFF, 0xFE].into_iter().chain((i as u32).to_le_bytes());
            Some(unreachable.map(|b| alphabet[b as usize]).collect())
        })
        .collect();
    let vocab_json = vocab_object(
        vocab
            .tokens
            .iter()
            .zip(&tokens)
            .map(|(t, re)| re.clone().unwrap_or_else(|| t.to_string()))
            .enumerate(),
    )?;
    let root = json!({
        // Control and user-defined tokens are the original file's added tokens.
        "added_tokens": added_tokens(vocab, |i| type_of(vocab, i) == token_type::USER_DEFINED),
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor(vocab, &prefix, &suffix),
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": vocab_json, "merges": merges,
                  "dropout": null, "byte_fallback": false, "ignore_merges": ignore_merges},
    });
    Ok(GgufTokenizer::ByteLevelBpe(TokenizerJson::from_value(
        root,
    )?))
}

fn wordpiece(vocab: &Vocab<'_>) -> Result<GgufTokenizer, String> {
    // The converter wrote `word` as `▁word` and `##word` as `word`, control tokens as they
    // were.
    let original = |i: usize| -> String {
        let t = vocab.tokens[i];
        if type_of(vocab, i) == token_type::CONTROL {
            t.to_owned()
        } else if let Some(word) = t.strip_prefix('\u{2581}') {
            word.to_owned()
        } else {
            format!("##{t}")
        }
    };
    let tokens: Vec<String> = (0..vocab.tokens.len()).map(original).collect();
    let unk = vocab
        .specials
        .unk
        .map(|i| tokens[i as usize].clone())
        .unwrap_or_else(|| "[UNK]".to_owned());
    let cls = vocab.specials.cls.or(vocab.specials.bos);
    let sep = vocab.specials.sep.or(vocab.specials.eos);
    let prefix: Vec<u32> = cls.into_iter().collect();
    let suffix: Vec<u32> = sep.into_iter().collect();
    let vocab_json = vocab_object(tokens.iter().cloned().enumerate())?;
    let added: Vec<Json> = added_tokens(vocab, |_| false)
        .into_iter()
        .filter(|t| t["special"] == json!(true))
        .collect();
    let root = json!({
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": post_processor(vocab, &prefix, &suffix),
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": unk, "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab_json},
    });
    Ok(GgufTokenizer::WordPiece(TokenizerJson::from_value(root)?))
}
