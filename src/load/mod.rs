//! Everything that turns a file into a model.
//!
//! [`detect`] tells the file formats apart; one module per format parses it into the parts a
//! tokenizer is built from ([`spm_proto`], [`tiktoken`], [`tokenizer_json`], [`vocab_txt`]); one
//! module per pipeline builds that pipeline from the parsed parts ([`bert`], [`hf_bpe`],
//! [`hf_spm_bpe`], [`hf_char_bpe`], [`hf_unigram`]); `open` ties them together. A new model family is one arm
//! here.

pub mod bert;
pub mod detect;
pub mod document_tokens;
pub mod gguf;
pub mod hf_bpe;
pub mod hf_char_bpe;
pub mod hf_spm_bpe;
pub mod hf_unigram;
pub mod spm_proto;
mod spm_specials;
pub mod tiktoken;
pub mod tokenizer_json;
pub mod vocab_txt;

use std::path::Path;

use simdtok_kernels::Kernels;

use crate::error::{Error, Result};
use crate::models::byte_bpe::ByteBpe;
use crate::options::{LoadOptions, TiktokenEncoding};
use crate::pipeline::AnyPipeline;
use crate::pipeline::spm::SentencePiece;
use crate::pipeline::tiktoken::Tiktoken;
use detect::{ModelKind, gpt2_merges_beside};
use document_tokens::DocumentTokens;
use tokenizer_json::TokenizerJson;

/// The pipeline of the model file at `path`, with `kernels`: its kind detected from the file,
/// `options` checked against it; and the tokens its files say begin and end a document.
pub(crate) fn open(
    path: &Path,
    kernels: &'static Kernels,
    options: &LoadOptions,
) -> Result<(Box<dyn AnyPipeline>, DocumentTokens)> {
    let shown = path.display().to_string();
    let io = |source| Error::Io {
        path: shown.clone(),
        source,
    };
    // A GGUF file holds a model's weights after its tokenizer (gigabytes): it is mapped, and
    // only its metadata is read.
    let mut magic = [0u8; 4];
    let is_gguf = {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut read = 0;
        while read < 4 {
            match file.read(&mut magic[read..]).map_err(io)? {
                0 => break,
                n => read += n,
            }
        }
        read == 4 && &magic == gguf::reader::MAGIC
    };
    if is_gguf {
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read only while this function runs; a file changed meanwhile
        // by another process could make the bytes read inconsistent, which the reader's
        // checks turn into an error, not undefined behaviour of ours beyond what reading a
        // changing file implies (the same contract as the CLI's mapped inputs).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        return open_pipeline(path, &map, kernels, options);
    }
    let bytes = std::fs::read(path).map_err(io)?;
    open_pipeline(path, &bytes, kernels, options)
}

/// The pipeline of the model file at `path` (its `bytes`), and its boundary tokens
/// ([`document_tokens`]; only a `tokenizer_config.json` beside the model that names a token the
/// model lacks is an error).
fn open_pipeline(
    path: &Path,
    bytes: &[u8],
    kernels: &'static Kernels,
    options: &LoadOptions,
) -> Result<(Box<dyn AnyPipeline>, DocumentTokens)> {
    let shown = path.display().to_string();
    match ModelKind::detect(path, bytes) {
        ModelKind::SentencePiece => {
            refuse_options(&shown, "SentencePiece", options, false)?;
            let model = spm_proto::parse(bytes).map_err(|reason| Error::Model {
                path: shown.clone(),
                reason,
            })?;
            let tokens = document_tokens::of_sentencepiece(path, &model);
            let mut spm = SentencePiece::new(model, kernels).map_err(|reason| Error::Model {
                path: shown.clone(),
                reason,
            })?;
            if options.add_special_tokens {
                let (prefix, suffix) = spm_specials::wrapper(&tokens);
                if prefix.is_empty() && suffix.is_empty() {
                    return Err(Error::Option {
                        path: shown,
                        reason: "cannot add special tokens: the model has neither a BOS nor an \
                                 EOS piece"
                            .into(),
                    });
                }
                spm = spm.with_special_tokens(&prefix, &suffix);
            }
            Ok((Box::new(spm), tokens))
        }
        ModelKind::VocabTxt => {
            refuse_options(&shown, "vocab.txt", options, true)?;
            let bert = bert::from_vocab_txt(bytes, options, kernels)
                .map_err(|reason| model_error(&shown, reason))?;
            Ok((Box::new(bert), DocumentTokens::default()))
        }
        ModelKind::TokenizerJson => {
            let json = TokenizerJson::parse(bytes).map_err(|r| model_error(&shown, r))?;
            let model_type = json.model_type().map_err(|r| model_error(&shown, r))?;
            let tokens = document_tokens::of_tokenizer_json(path, &json)
                .map_err(|reason| model_error(&shown, reason))?;
            let pipeline: Box<dyn AnyPipeline> = match model_type {
                "WordPiece" => {
                    refuse_options(&shown, "tokenizer.json", options, false)?;
                    let bert = bert::from_tokenizer_json(&json, options, kernels)
                        .map_err(|reason| model_error(&shown, reason))?;
                    Box::new(bert)
                }
                "BPE" if hf_bpe::is_byte_level(&json) => {
                    refuse_options(&shown, "tokenizer.json", options, false)?;
                    let bpe = hf_bpe::from_tokenizer_json(&json, options, kernels)
                        .map_err(|reason| model_error(&shown, reason))?;
                    Box::new(bpe)
                }
                "BPE" if hf_spm_bpe::is_spm_style(&json) => {
                    refuse_options(&shown, "tokenizer.json", options, false)?;
                    let bpe = hf_spm_bpe::from_tokenizer_json(&json, options, kernels)
                        .map_err(|reason| model_error(&shown, reason))?;
                    Box::new(bpe)
                }
                "BPE" if hf_char_bpe::is_char_level(&json) => {
                    refuse_options(&shown, "tokenizer.json", options, false)?;
                    let bpe = hf_char_bpe::from_tokenizer_json(&json, options, kernels)
                        .map_err(|reason| model_error(&shown, reason))?;
                    Box::new(bpe)
                }
                "Unigram" => {
                    refuse_options(&shown, "tokenizer.json", options, false)?;
                    let unigram = hf_unigram::from_tokenizer_json(&json, options, kernels)
                        .map_err(|reason| model_error(&shown, reason))?;
                    Box::new(unigram)
                }
                "BPE" => {
                    return Err(Error::Unsupported {
                        path: shown,
                        what: "a tokenizer.json with a BPE model that is neither byte-level, \
                               SentencePiece style, nor character-level with a Whitespace or \
                               WhitespaceSplit pre-tokenizer"
                            .into(),
                    });
                }
                other => {
                    return Err(Error::Unsupported {
                        path: shown,
                        what: format!("a tokenizer.json with a {other} model"),
                    });
                }
            };
            Ok((pipeline, tokens))
        }
        ModelKind::Tiktoken => {
            refuse_options(&shown, "tiktoken", options, false)?;
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let encoding = options
                .tiktoken_encoding
                .or_else(|| TiktokenEncoding::from_file_name(name))
                .ok_or_else(|| Error::Option {
                    path: shown.clone(),
                    reason: "the encoding (r50k, p50k, cl100k or o200k) cannot be told from \
                             the file name: name it"
                        .into(),
                })?;
            let ranks = tiktoken::parse_rank_file(bytes).map_err(|r| model_error(&shown, r))?;
            let specials: Vec<(String, u32)> = encoding
                .special_tokens()
                .iter()
                .map(|&(t, id)| (t.to_string(), id))
                .collect();
            let tokens = document_tokens::of_tiktoken(path, &specials);
            let pipeline = tiktoken_pipeline(&shown, ranks, encoding, &specials, options, kernels)?;
            Ok((pipeline, tokens))
        }
        ModelKind::Gguf => {
            refuse_options(&shown, "GGUF", options, false)?;
            open_gguf(path, bytes, kernels, options)
        }
        ModelKind::Gpt2 => {
            refuse_options(&shown, "GPT-2", options, false)?;
            let merges_path = gpt2_merges_beside(path).expect("detected beside it");
            let merges = std::fs::read(&merges_path).map_err(|source| Error::Io {
                path: merges_path.display().to_string(),
                source,
            })?;
            let (ranks, specials) =
                tiktoken::parse_gpt2(bytes, &merges).map_err(|r| model_error(&shown, r))?;
            let encoding = options.tiktoken_encoding.unwrap_or(TiktokenEncoding::R50k);
            let tokens = document_tokens::of_tiktoken(path, &specials);
            let pipeline = tiktoken_pipeline(&shown, ranks, encoding, &specials, options, kernels)?;
            Ok((pipeline, tokens))
        }
    }
}

/// The pipeline of a GGUF file's tokenizer, and its BOS and EOS.
fn open_gguf(
    path: &Path,
    bytes: &[u8],
    kernels: &'static Kernels,
    options: &LoadOptions,
) -> Result<(Box<dyn AnyPipeline>, DocumentTokens)> {
    let shown = path.display().to_string();
    let (tokenizer, specials) = gguf::parse(bytes).map_err(|r| model_error(&shown, r))?;
    let add = options.add_special_tokens;
    let refuse_empty = |empty: bool| {
        if add && empty {
            return Err(Error::Option {
                path: shown.clone(),
                reason: "cannot add special tokens: the file's add_bos_token and add_eos_token \
                         add none"
                    .into(),
            });
        }
        Ok(())
    };
    let (pipeline, texts): (Box<dyn AnyPipeline>, Vec<Option<String>>) = match tokenizer {
        gguf::GgufTokenizer::SentencePiece {
            model,
            prefix,
            suffix,
        } => {
            refuse_empty(prefix.is_empty() && suffix.is_empty())?;
            let text = |id: Option<u32>| id.map(|i| model.pieces[i as usize].text.clone());
            let texts = vec![text(specials.bos), text(specials.eos)];
            let mut spm = SentencePiece::new(model, kernels).map_err(|r| model_error(&shown, r))?;
            if add {
                spm = spm.with_special_tokens(&prefix, &suffix);
            }
            (Box::new(spm), texts)
        }
        gguf::GgufTokenizer::ByteLevelBpe(json) => {
            let template = json
                .byte_level_template()
                .map_err(|r| model_error(&shown, r))?;
            refuse_empty(template.prefix.is_empty() && template.suffix.is_empty())?;
            let texts = gguf_texts(&json, &specials);
            let bpe = hf_bpe::from_tokenizer_json(&json, options, kernels)
                .map_err(|r| model_error(&shown, r))?;
            (Box::new(bpe), texts)
        }
        gguf::GgufTokenizer::WordPiece(json) => {
            let template = json.single_template().map_err(|r| model_error(&shown, r))?;
            refuse_empty(template.prefix.is_empty() && template.suffix.is_empty())?;
            let texts = gguf_texts(&json, &specials);
            let bert = bert::from_tokenizer_json(&json, options, kernels)
                .map_err(|r| model_error(&shown, r))?;
            (Box::new(bert), texts)
        }
    };
    let token = |id: Option<u32>, text: &Option<String>, key: &str| {
        Some(document_tokens::DocumentToken {
            id: id?,
            content: text.clone()?,
            source: format!("{shown}: tokenizer.ggml.{key}"),
        })
    };
    let tokens = DocumentTokens {
        bos: token(specials.bos, &texts[0], "bos_token_id"),
        eos: token(specials.eos, &texts[1], "eos_token_id"),
    };
    Ok((pipeline, tokens))
}

/// The texts of the BOS and EOS tokens of a GGUF's `tokenizer.json`.
fn gguf_texts(json: &TokenizerJson, specials: &gguf::Specials) -> Vec<Option<String>> {
    let vocab = json
        .component("model")
        .and_then(|m| m.get("vocab"))
        .and_then(|v| v.as_object());
    let text = |id: Option<u32>| {
        let id = id?;
        vocab?
            .iter()
            .find(|(_, v)| v.as_u64() == Some(u64::from(id)))
            .map(|(k, _)| k.clone())
    };
    vec![text(specials.bos), text(specials.eos)]
}

/// The pipeline of a tiktoken encoding (a rank file, or GPT-2's two files).
fn tiktoken_pipeline(
    shown: &str,
    ranks: Vec<(Vec<u8>, u32)>,
    encoding: TiktokenEncoding,
    specials: &[(String, u32)],
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<Box<dyn AnyPipeline>> {
    let bpe = ByteBpe::new(ranks, kernels).map_err(|r| model_error(shown, r))?;
    let tok = Tiktoken::new(
        bpe,
        encoding.pattern(),
        specials,
        options.allow_special,
        kernels,
    )
    .map_err(|r| model_error(shown, r))?;
    Ok(Box::new(tok))
}

/// Refuses the options a model of `kind` cannot honour. `wordpiece_algorithm` only selects among
/// encoders a model has, so it is accepted (and ignored) by every kind.
fn refuse_options(
    path: &str,
    kind: &str,
    options: &LoadOptions,
    has_lowercase_option: bool,
) -> Result<()> {
    let refuse = |reason: String| {
        Err(Error::Option {
            path: path.to_string(),
            reason,
        })
    };
    if options.lowercase.is_some() && !has_lowercase_option {
        return refuse(format!(
            "the lowercase option applies only to BERT vocab.txt models, not {kind}"
        ));
    }
    let is_tiktoken = matches!(kind, "tiktoken" | "GPT-2");
    if (options.tiktoken_encoding.is_some() || options.allow_special) && !is_tiktoken {
        return refuse(format!(
            "the tiktoken encoding and allow-special options apply only to tiktoken files, not {kind}"
        ));
    }
    Ok(())
}

fn model_error(path: &str, reason: String) -> Error {
    Error::Model {
        path: path.to_string(),
        reason,
    }
}

/// The repository's `tests/data/bpe/*.tokenizer.json` and, where `../shared/data` has them, the
/// shared `tokenizer.json` files named in `shared` (each absent one skipped with a note), parsed,
/// in path order: what the loaders' tests run over.
#[cfg(test)]
pub(crate) fn test_tokenizer_jsons(shared: &[&str]) -> Vec<(std::path::PathBuf, TokenizerJson)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("tests/data/bpe"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tokenizer.json"))
        .collect();
    for name in shared {
        let path = root.join(format!(
            "../shared/data/models/hf-tokenizer-json/{name}.tokenizer.json"
        ));
        if path.exists() {
            paths.push(path);
        } else {
            eprintln!("SKIPPED {name}: {} is absent", path.display());
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let json = TokenizerJson::parse(&std::fs::read(&p).unwrap()).unwrap();
            (p, json)
        })
        .collect()
}
