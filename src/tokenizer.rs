//! [`Tokenizer`]: a model loaded from the file users already have, with the SIMD kernels of one
//! tier chosen when it is built.

use std::path::Path;

use simdtok_kernels::{Kernels, TierRequest};

use crate::encoding::Encoding;
use crate::error::{Error, Result};
use crate::load::spm_proto;
use crate::load::tiktoken;
use crate::load::tokenizer_json::TokenizerJson;
use crate::load::{bert, hf_bpe, hf_spm_bpe};
use crate::models::byte_bpe::ByteBpe;
use crate::options::{LoadOptions, TiktokenEncoding};
use crate::pipeline::Pipeline;
use crate::pipeline::hf_bpe::HfBpe;
use crate::pipeline::hf_spm_bpe::HfSpmBpe;
use crate::pipeline::spm::SentencePiece;
use crate::pipeline::tiktoken::Tiktoken;
use crate::pipeline::wordpiece::BertWordPiece;

/// The kind of a model file, detected from its content (and name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// SentencePiece `.model` (protobuf).
    SentencePiece,
    /// Hugging Face `tokenizer.json`.
    TokenizerJson,
    /// tiktoken rank file (`base64 rank` lines).
    Tiktoken,
    /// BERT `vocab.txt` (one token per line).
    VocabTxt,
    /// GPT-2's `encoder.json` (or `vocab.json`), with its merges (`vocab.bpe` or `merges.txt`)
    /// beside it.
    Gpt2,
}

impl ModelKind {
    /// Detects the kind from the first bytes of the file and its name.
    pub fn detect(path: &Path, bytes: &[u8]) -> ModelKind {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let head = &bytes[..bytes.len().min(4096)];
        // The head may end inside a character: only an error before the last few bytes counts.
        let text = match std::str::from_utf8(head) {
            Ok(t) => Some(t),
            Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
            Err(_) => None,
        };
        let first_line = text.and_then(|t| t.lines().next()).unwrap_or("");
        if name.ends_with(".model") {
            ModelKind::SentencePiece
        } else if (name.ends_with("encoder.json") || name.ends_with("vocab.json"))
            && gpt2_merges_beside(path).is_some()
        {
            ModelKind::Gpt2
        } else if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            ModelKind::TokenizerJson
        } else if name.ends_with(".tiktoken") || is_tiktoken_line(first_line) {
            ModelKind::Tiktoken
        } else if name.ends_with(".txt")
            || (text.is_some()
                && !first_line.is_empty()
                && !first_line.contains(char::is_whitespace))
        {
            ModelKind::VocabTxt
        } else {
            ModelKind::SentencePiece
        }
    }

    /// A name for messages.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::SentencePiece => "SentencePiece",
            ModelKind::TokenizerJson => "tokenizer.json",
            ModelKind::Tiktoken => "tiktoken",
            ModelKind::VocabTxt => "vocab.txt",
            ModelKind::Gpt2 => "GPT-2 encoder.json",
        }
    }
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
    if options.add_special_tokens && matches!(kind, "SentencePiece" | "tiktoken" | "GPT-2") {
        return refuse(format!(
            "adding special tokens is not supported for {kind} models yet"
        ));
    }
    Ok(())
}

/// The merges file next to a GPT-2 `encoder.json`/`vocab.json`.
fn gpt2_merges_beside(path: &Path) -> Option<std::path::PathBuf> {
    let dir = path.parent()?;
    ["vocab.bpe", "merges.txt"]
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

fn is_tiktoken_line(line: &str) -> bool {
    let mut parts = line.split(' ');
    let (Some(token), Some(rank), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
        && rank.parse::<u64>().is_ok()
}

#[derive(Debug)]
enum Inner {
    SentencePiece(Box<SentencePiece>),
    WordPiece(Box<BertWordPiece>),
    Tiktoken(Box<Tiktoken>),
    HfBpe(Box<HfBpe>),
    HfSpmBpe(Box<HfSpmBpe>),
}

fn model_error(path: &str, reason: String) -> Error {
    Error::Model {
        path: path.to_string(),
        reason,
    }
}

/// A loaded tokenizer.
#[derive(Debug)]
pub struct Tokenizer {
    inner: Inner,
}

impl Tokenizer {
    /// Loads a model with the active tier (`SIMDTOK_TIER`, else the best the CPU supports).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Tokenizer> {
        Tokenizer::from_file_with(path, Kernels::active()?)
    }

    /// Loads a model with the tier a caller asked for (`--tier`).
    pub fn from_file_with_tier(path: impl AsRef<Path>, tier: TierRequest) -> Result<Tokenizer> {
        Tokenizer::from_file_with(path, Kernels::request(tier)?)
    }

    /// Loads a model with the given kernels.
    pub fn from_file_with(path: impl AsRef<Path>, kernels: &'static Kernels) -> Result<Tokenizer> {
        Tokenizer::from_file_with_options(path, kernels, &LoadOptions::default())
    }

    /// Loads a model with the given kernels and options. An option that does not apply to the
    /// kind of model is an error ([`Error::Option`]), never silently ignored.
    pub fn from_file_with_options(
        path: impl AsRef<Path>,
        kernels: &'static Kernels,
        options: &LoadOptions,
    ) -> Result<Tokenizer> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: shown.clone(),
            source,
        })?;
        match ModelKind::detect(path, &bytes) {
            ModelKind::SentencePiece => {
                refuse_options(&shown, "SentencePiece", options, false)?;
                let model = spm_proto::parse(&bytes).map_err(|reason| Error::Model {
                    path: shown.clone(),
                    reason,
                })?;
                let spm = SentencePiece::new(model, kernels).map_err(|reason| Error::Model {
                    path: shown,
                    reason,
                })?;
                Ok(Tokenizer {
                    inner: Inner::SentencePiece(Box::new(spm)),
                })
            }
            ModelKind::VocabTxt => {
                refuse_options(&shown, "vocab.txt", options, true)?;
                let bert = bert::from_vocab_txt(&bytes, options, kernels)
                    .map_err(|reason| model_error(&shown, reason))?;
                Ok(Tokenizer {
                    inner: Inner::WordPiece(Box::new(bert)),
                })
            }
            ModelKind::TokenizerJson => {
                let json = TokenizerJson::parse(&bytes).map_err(|r| model_error(&shown, r))?;
                let model_type = json.model_type().map_err(|r| model_error(&shown, r))?;
                match model_type {
                    "WordPiece" => {
                        refuse_options(&shown, "tokenizer.json", options, false)?;
                        let bert = bert::from_tokenizer_json(&json, options, kernels)
                            .map_err(|reason| model_error(&shown, reason))?;
                        Ok(Tokenizer {
                            inner: Inner::WordPiece(Box::new(bert)),
                        })
                    }
                    "BPE" if hf_bpe::is_byte_level(&json) => {
                        refuse_options(&shown, "tokenizer.json", options, false)?;
                        let bpe = hf_bpe::from_tokenizer_json(&json, options, kernels)
                            .map_err(|reason| model_error(&shown, reason))?;
                        Ok(Tokenizer {
                            inner: Inner::HfBpe(Box::new(bpe)),
                        })
                    }
                    "BPE" if hf_spm_bpe::is_spm_style(&json) => {
                        refuse_options(&shown, "tokenizer.json", options, false)?;
                        let bpe = hf_spm_bpe::from_tokenizer_json(&json, options, kernels)
                            .map_err(|reason| model_error(&shown, reason))?;
                        Ok(Tokenizer {
                            inner: Inner::HfSpmBpe(Box::new(bpe)),
                        })
                    }
                    "BPE" => Err(Error::Unsupported {
                        path: shown,
                        what: "a tokenizer.json with a BPE model that is neither byte-level nor \
                               SentencePiece style"
                            .into(),
                    }),
                    other => Err(Error::Unsupported {
                        path: shown,
                        what: format!("a tokenizer.json with a {other} model"),
                    }),
                }
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
                let ranks =
                    tiktoken::parse_rank_file(&bytes).map_err(|r| model_error(&shown, r))?;
                let specials: Vec<(String, u32)> = encoding
                    .special_tokens()
                    .iter()
                    .map(|&(t, id)| (t.to_string(), id))
                    .collect();
                Tokenizer::tiktoken(&shown, ranks, encoding, &specials, options, kernels)
            }
            ModelKind::Gpt2 => {
                refuse_options(&shown, "GPT-2", options, false)?;
                let merges_path = gpt2_merges_beside(path).expect("detected beside it");
                let merges = std::fs::read(&merges_path).map_err(|source| Error::Io {
                    path: merges_path.display().to_string(),
                    source,
                })?;
                let (ranks, specials) =
                    tiktoken::parse_gpt2(&bytes, &merges).map_err(|r| model_error(&shown, r))?;
                let encoding = options.tiktoken_encoding.unwrap_or(TiktokenEncoding::R50k);
                Tokenizer::tiktoken(&shown, ranks, encoding, &specials, options, kernels)
            }
        }
    }

    fn tiktoken(
        shown: &str,
        ranks: Vec<(Vec<u8>, u32)>,
        encoding: TiktokenEncoding,
        specials: &[(String, u32)],
        options: &LoadOptions,
        kernels: &'static Kernels,
    ) -> Result<Tokenizer> {
        let bpe = ByteBpe::new(ranks, kernels).map_err(|r| model_error(shown, r))?;
        let tok = Tiktoken::new(
            bpe,
            encoding.pattern(),
            specials,
            options.allow_special,
            kernels,
        )
        .map_err(|r| model_error(shown, r))?;
        Ok(Tokenizer {
            inner: Inner::Tiktoken(Box::new(tok)),
        })
    }

    /// The token ids of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.encode_ids_into(text, &mut ids);
        ids
    }

    /// The token ids of `text` into a reused vector (cleared first): the fastest path, with no
    /// offsets or token strings.
    pub fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        match &self.inner {
            Inner::SentencePiece(s) => s.encode_ids_into(text, ids),
            Inner::WordPiece(w) => w.encode_ids_into(text, ids),
            Inner::Tiktoken(t) => t.encode_ids_into(text, ids),
            Inner::HfBpe(h) => h.encode_ids_into(text, ids),
            Inner::HfSpmBpe(h) => h.encode_ids_into(text, ids),
        }
    }

    /// Ids, offsets and token strings of `text`.
    pub fn encode_full(&self, text: &str) -> Encoding {
        let mut out = Encoding::default();
        self.encode_into(text, &mut out, true);
        out
    }

    /// Encodes into a reused [`Encoding`] (cleared first); token strings only when `pieces`.
    pub fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        match &self.inner {
            Inner::SentencePiece(s) => s.encode_into(text, out, pieces),
            Inner::WordPiece(w) => w.encode_into(text, out, pieces),
            Inner::Tiktoken(t) => t.encode_into(text, out, pieces),
            Inner::HfBpe(h) => h.encode_into(text, out, pieces),
            Inner::HfSpmBpe(h) => h.encode_into(text, out, pieces),
        }
    }

    /// The text of `ids`, as the reference library decodes it.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match &self.inner {
            Inner::SentencePiece(s) => s.decode(ids).map_err(|id| Error::IdOutOfRange {
                id,
                size: s.vocab().len(),
            }),
            Inner::WordPiece(w) => w.decode(ids).map_err(|id| Error::IdOutOfRange {
                id,
                size: w.vocab_size(),
            }),
            Inner::Tiktoken(t) => t.decode(ids).map_err(|id| Error::IdOutOfRange {
                id,
                size: t.vocab_size(),
            }),
            Inner::HfBpe(h) => h.decode(ids).map_err(|id| Error::IdOutOfRange {
                id,
                size: h.vocab_size(),
            }),
            Inner::HfSpmBpe(h) => h.decode(ids).map_err(|id| Error::IdOutOfRange {
                id,
                size: h.vocab_size(),
            }),
        }
    }

    /// The number of ids.
    pub fn vocab_size(&self) -> usize {
        match &self.inner {
            Inner::SentencePiece(s) => s.vocab().len(),
            Inner::WordPiece(w) => w.vocab_size(),
            Inner::Tiktoken(t) => t.vocab_size(),
            Inner::HfBpe(h) => h.vocab_size(),
            Inner::HfSpmBpe(h) => h.vocab_size(),
        }
    }

    /// The string of a vocabulary entry.
    pub fn id_to_piece(&self, id: u32) -> Option<&str> {
        match &self.inner {
            Inner::SentencePiece(s) => s.vocab().pieces().get(id as usize).map(|p| p.text.as_str()),
            Inner::WordPiece(w) => w.id_to_token(id),
            Inner::Tiktoken(t) => t.token_bytes(id).and_then(|b| std::str::from_utf8(b).ok()),
            Inner::HfBpe(h) => h.id_to_token(id),
            Inner::HfSpmBpe(h) => h.id_to_token(id),
        }
    }

    /// The bytes a token stands for, where the model's tokens are byte strings: tiktoken
    /// encodings (a special token's text for a special id) and byte-level `tokenizer.json` BPE
    /// (the vocabulary entry with GPT-2's byte alphabet undone). `None` for other models (use
    /// [`Tokenizer::id_to_piece`]) and for ids with no bytes (added tokens of byte-level BPE).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        match &self.inner {
            Inner::Tiktoken(t) => t.token_bytes(id),
            Inner::HfBpe(h) => h.token_bytes(id),
            Inner::SentencePiece(_) | Inner::WordPiece(_) | Inner::HfSpmBpe(_) => None,
        }
    }

    /// The kernels (hence the tier) this tokenizer uses.
    pub fn kernels(&self) -> &'static Kernels {
        match &self.inner {
            Inner::SentencePiece(s) => s.kernels(),
            Inner::WordPiece(w) => w.kernels(),
            Inner::Tiktoken(t) => t.kernels(),
            Inner::HfBpe(h) => h.kernels(),
            Inner::HfSpmBpe(h) => h.kernels(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocab_txt_detected_when_the_head_cuts_a_character() {
        // 4096 bytes of head end in the middle of "中" (3 bytes).
        let mut bytes = b"[PAD]\n".to_vec();
        while bytes.len() < 4095 {
            bytes.extend_from_slice("中\n".as_bytes());
        }
        let kind = ModelKind::detect(Path::new("vocab"), &bytes);
        assert_eq!(kind, ModelKind::VocabTxt);
    }
}
