//! Hugging Face `tokenizer.json`: the components of a tokenizer as JSON objects tagged by
//! `type`. Each component simdtok implements is read into its options here; any other is an
//! error naming it — never a silent difference.

use std::sync::Arc;

use serde_json::{Map, Value};
use simdtok_kernels::Kernels;

use crate::models::dense_ids::check_dense_ids;
use crate::normalize::bert::BertNormalizer;
use crate::normalize::hf::{Normalizer, Pattern, Precompiled, Step};
use crate::pipeline::added_tokens::AddedToken;
use crate::pipeline::wordpiece::WordPieceDecoder;
use crate::pretokenize::chain::Behavior;

/// A parsed `tokenizer.json`, components still as JSON.
#[derive(Debug)]
pub struct TokenizerJson {
    root: Map<String, Value>,
}

/// A WordPiece `model` section.
#[derive(Debug)]
pub struct WordPieceModel {
    /// (token, id) pairs.
    pub vocab: Vec<(String, u32)>,
    /// The unknown token.
    pub unk_token: String,
    /// The continuation prefix.
    pub prefix: String,
    /// Longer words become the unknown token.
    pub max_input_chars_per_word: usize,
}

/// A BPE `model` section.
#[derive(Debug)]
pub struct BpeModel {
    /// (token, id) pairs.
    pub vocab: Vec<(String, u32)>,
    /// The merges, in rank order.
    pub merges: Vec<(String, String)>,
    /// A pre-token in the vocabulary is that token, merges or not.
    pub ignore_merges: bool,
    /// Put before every symbol but a word's first (empty: none).
    pub continuing_subword_prefix: String,
    /// Put after a word's last symbol (empty: none).
    pub end_of_word_suffix: String,
}

/// The decoder of a byte-level BPE file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteLevelDecoder {
    /// `ByteLevel` (or none): the tokens' bytes.
    ByteLevel,
    /// `BPEDecoder`: the tokens' strings (in the byte-level alphabet: the reference does not map
    /// them back to bytes), `suffix` becoming a space but in the last.
    Bpe { suffix: String },
}

/// How the text is cut before byte-level BPE: stages, each cutting the pieces of the one
/// before (see [`crate::pretokenize::chain`]), then `ByteLevel`'s prefix space.
#[derive(Debug, PartialEq, Eq)]
pub struct ByteLevelPreTokenizer {
    pub stages: Vec<StageSpec>,
    /// `ByteLevel`'s `add_prefix_space`: a space before a text that does not start with one.
    pub add_prefix_space: bool,
}

/// One stage of a pre-tokenizer.
#[derive(Debug, PartialEq, Eq)]
pub struct StageSpec {
    /// A regex's source, or `None` for each numeric character (`Digits`).
    pub regex: Option<String>,
    /// The string a `String` pattern matches (the regex is it escaped).
    pub literal: Option<String>,
    pub behavior: Behavior,
    pub invert: bool,
}

/// GPT-2's pre-tokenization regex, as `tokenizers`' `ByteLevel` has it.
pub const BYTE_LEVEL_REGEX: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// The special tokens a post-processor puts around one sequence.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SingleTemplate {
    /// Ids before the sequence.
    pub prefix: Vec<u32>,
    /// Ids after it.
    pub suffix: Vec<u32>,
}

impl TokenizerJson {
    /// Parses the file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<TokenizerJson, String> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| format!("invalid tokenizer.json: {e}"))?;
        match value {
            Value::Object(root) => Ok(TokenizerJson { root }),
            _ => Err("invalid tokenizer.json: the top level is not an object".into()),
        }
    }

    /// A `tokenizer.json` built in memory (by the GGUF loader) rather than read.
    pub fn from_value(value: Value) -> Result<TokenizerJson, String> {
        match value {
            Value::Object(root) => Ok(TokenizerJson { root }),
            _ => Err("invalid tokenizer.json: the top level is not an object".into()),
        }
    }

    /// A top-level component (`None` when absent or null).
    pub fn component(&self, name: &str) -> Option<&Value> {
        self.root.get(name).filter(|v| !v.is_null())
    }

    /// The `type` of the model.
    pub fn model_type(&self) -> Result<&str, String> {
        let model = self
            .component("model")
            .ok_or("tokenizer.json has no model")?;
        // Old files leave out the model's type; WordPiece is recognised by its fields.
        match model.get("type") {
            Some(t) => t
                .as_str()
                .ok_or_else(|| "model.type is not a string".into()),
            None if model.get("continuing_subword_prefix").is_some()
                && model.get("merges").is_none() =>
            {
                Ok("WordPiece")
            }
            None => Err("model has no type".into()),
        }
    }

    /// The `WordPiece` model.
    pub fn wordpiece(&self) -> Result<WordPieceModel, String> {
        let model = self
            .component("model")
            .ok_or("tokenizer.json has no model")?;
        let vocab = model
            .get("vocab")
            .and_then(Value::as_object)
            .ok_or("model.vocab is missing or not an object")?
            .iter()
            .map(|(token, id)| {
                let id = id
                    .as_u64()
                    .and_then(|id| u32::try_from(id).ok())
                    .ok_or_else(|| format!("model.vocab[{token:?}] is not a 32-bit id"))?;
                Ok((token.clone(), id))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(WordPieceModel {
            vocab,
            unk_token: str_field(model, "unk_token", "model")?
                .unwrap_or("[UNK]")
                .into(),
            prefix: str_field(model, "continuing_subword_prefix", "model")?
                .unwrap_or("##")
                .into(),
            max_input_chars_per_word: match model.get("max_input_chars_per_word") {
                None | Some(Value::Null) => 100,
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or("model.max_input_chars_per_word is not a non-negative integer")?,
            },
        })
    }

    /// The `BPE` model, refusing the options simdtok does not implement for it.
    pub fn bpe(&self) -> Result<BpeModel, String> {
        let model = self
            .component("model")
            .ok_or("tokenizer.json has no model")?;
        type Check = fn(&Value) -> bool;
        let checks: [(&str, Check); 2] = [
            ("dropout", |v: &Value| v.is_null()),
            ("byte_fallback", |v: &Value| v == &Value::Bool(false)),
        ];
        for (name, ok) in checks {
            if let Some(v) = model.get(name)
                && !ok(v)
            {
                return Err(format!(
                    "model.{name} = {v} is not supported yet for BPE tokenizer.json models"
                ));
            }
        }
        self.bpe_vocab_and_merges()
    }

    /// The vocabulary, merges and `ignore_merges` of a `BPE` model, whatever its other options.
    pub fn bpe_vocab_and_merges(&self) -> Result<BpeModel, String> {
        let model = self
            .component("model")
            .ok_or("tokenizer.json has no model")?;
        let vocab = model
            .get("vocab")
            .and_then(Value::as_object)
            .ok_or("model.vocab is missing or not an object")?
            .iter()
            .map(|(token, id)| {
                let id = id
                    .as_u64()
                    .and_then(|id| u32::try_from(id).ok())
                    .ok_or_else(|| format!("model.vocab[{token:?}] is not a 32-bit id"))?;
                Ok((token.clone(), id))
            })
            .collect::<Result<Vec<_>, String>>()?;
        check_dense_ids(vocab.iter().map(|&(_, id)| id), vocab.len(), "id")?;
        let merges = model
            .get("merges")
            .and_then(Value::as_array)
            .ok_or("model.merges is missing or not a list")?
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let pair = match m {
                    Value::String(s) => s
                        .split_once(' ')
                        .map(|(a, b)| (a.to_string(), b.to_string())),
                    Value::Array(v) if v.len() == 2 => match (&v[0], &v[1]) {
                        (Value::String(a), Value::String(b)) => Some((a.clone(), b.clone())),
                        _ => None,
                    },
                    _ => None,
                };
                pair.ok_or_else(|| format!("model.merges[{i}] is not a pair of tokens"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(BpeModel {
            vocab,
            merges,
            ignore_merges: model
                .get("ignore_merges")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            continuing_subword_prefix: str_field(model, "continuing_subword_prefix", "model")?
                .unwrap_or_default()
                .to_owned(),
            end_of_word_suffix: str_field(model, "end_of_word_suffix", "model")?
                .unwrap_or_default()
                .to_owned(),
        })
    }

    /// The normalizer of a BPE file: none, or the steps of [`Normalizer`] (nested `Sequence`s
    /// flattened).
    pub fn bpe_normalizer(&self) -> Result<Normalizer, String> {
        let mut steps = Vec::new();
        if let Some(n) = self.component("normalizer") {
            normalizer_steps(n, &mut steps, None)?;
        }
        Ok(Normalizer::new(steps))
    }

    /// The normalizer of a Unigram file: [`TokenizerJson::bpe_normalizer`]'s steps and
    /// `Precompiled` (its charsmap read as SentencePiece's normalizer reads it, applied as
    /// `tokenizers` applies it: [`Precompiled`]).
    pub fn unigram_normalizer(&self, kernels: &'static Kernels) -> Result<Normalizer, String> {
        let mut steps = Vec::new();
        if let Some(n) = self.component("normalizer") {
            normalizer_steps(n, &mut steps, Some(kernels))?;
        }
        Ok(Normalizer::new(steps))
    }

    /// The pre-tokenizer of a byte-level BPE file: `ByteLevel` (with its regex), or a
    /// `Sequence` of a `Split` and a `ByteLevel` that does not split again.
    pub fn byte_level_pre_tokenizer(&self) -> Result<ByteLevelPreTokenizer, String> {
        let p = self
            .component("pre_tokenizer")
            .ok_or("a BPE tokenizer.json without a pre_tokenizer is not supported yet")?;
        let list = sequence_items(p, "pre_tokenizer", "pretokenizers")?;
        let mut stages = Vec::new();
        let mut add_prefix_space = false;
        for (i, q) in list.iter().enumerate() {
            let flag =
                |name: &str, default: bool| q.get(name).and_then(Value::as_bool).unwrap_or(default);
            match type_of(q, "pre_tokenizer")? {
                "ByteLevel" => {
                    // It maps the bytes to characters: a stage after it would see those.
                    if i + 1 != list.len() {
                        return Err(
                            "pre_tokenizer: a stage after ByteLevel is not supported yet".into(),
                        );
                    }
                    add_prefix_space = flag("add_prefix_space", true);
                    if add_prefix_space && i > 0 {
                        // The reference puts the space before every piece of the stages before.
                        return Err(
                            "pre_tokenizer ByteLevel with add_prefix_space after a Split is not supported yet"
                                .into(),
                        );
                    }
                    if flag("use_regex", true) {
                        stages.push(StageSpec {
                            regex: Some(BYTE_LEVEL_REGEX.into()),
                            literal: None,
                            behavior: Behavior::Isolated,
                            invert: false,
                        });
                    }
                }
                "Split" => stages.push(split_stage(q)?),
                "Digits" => stages.push(StageSpec {
                    regex: None,
                    literal: None,
                    behavior: if flag("individual_digits", false) {
                        Behavior::Isolated
                    } else {
                        Behavior::Contiguous
                    },
                    invert: false,
                }),
                other => {
                    return Err(unsupported(
                        "pre_tokenizer",
                        other,
                        "ByteLevel, Split, Digits, and a Sequence of them ending with ByteLevel",
                    ));
                }
            }
        }
        if list
            .last()
            .and_then(|q| q.get("type"))
            .and_then(Value::as_str)
            != Some("ByteLevel")
        {
            return Err("pre_tokenizer: a byte-level BPE needs ByteLevel last".into());
        }
        Ok(ByteLevelPreTokenizer {
            stages,
            add_prefix_space,
        })
    }

    /// The special tokens of a byte-level BPE file's post-processor for one sequence:
    /// `ByteLevel` without trimming (adds nothing), `TemplateProcessing`, or none.
    pub fn byte_level_template(&self) -> Result<SingleTemplate, String> {
        let Some(p) = self.component("post_processor") else {
            return Ok(SingleTemplate::default());
        };
        match type_of(p, "post_processor")? {
            "ByteLevel" => Ok(SingleTemplate::default()),
            "TemplateProcessing" => template_single(p),
            "RobertaProcessing" => {
                // `cls A sep` (its trimming: [`TokenizerJson::byte_level_trim_offsets`]).
                cls_sep_template(p)
            }
            other => Err(unsupported(
                "post_processor",
                other,
                "ByteLevel, TemplateProcessing, RobertaProcessing",
            )),
        }
    }

    /// Whether the post-processor of a byte-level BPE file trims the spaces off the tokens'
    /// offsets (`ByteLevel` or `RobertaProcessing` with `trim_offsets`, their default), and if so
    /// its `add_prefix_space` (default `true`): `Some(add_prefix_space)`.
    pub fn byte_level_trim_offsets(&self) -> Result<Option<bool>, String> {
        let Some(p) = self.component("post_processor") else {
            return Ok(None);
        };
        let flag = |name: &str| p.get(name).and_then(Value::as_bool).unwrap_or(true);
        Ok(match type_of(p, "post_processor")? {
            "ByteLevel" | "RobertaProcessing" if flag("trim_offsets") => {
                Some(flag("add_prefix_space"))
            }
            _ => None,
        })
    }

    /// The decoder of a byte-level BPE file: `ByteLevel` (or none) or `BPEDecoder`.
    pub fn byte_level_decoder(&self) -> Result<ByteLevelDecoder, String> {
        let Some(d) = self.component("decoder") else {
            return Ok(ByteLevelDecoder::ByteLevel);
        };
        match type_of(d, "decoder")? {
            "ByteLevel" => Ok(ByteLevelDecoder::ByteLevel),
            "BPEDecoder" => Ok(ByteLevelDecoder::Bpe {
                suffix: str_field(d, "suffix", "decoder")?
                    .unwrap_or("</w>")
                    .to_owned(),
            }),
            other => Err(unsupported("decoder", other, "ByteLevel, BPEDecoder")),
        }
    }

    /// The added tokens.
    pub fn added_tokens(&self) -> Result<Vec<AddedToken>, String> {
        let Some(list) = self.component("added_tokens") else {
            return Ok(Vec::new());
        };
        let list = list.as_array().ok_or("added_tokens is not a list")?;
        let tokens = list
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let what = format!("added_tokens[{i}]");
                let id = t
                    .get("id")
                    .and_then(Value::as_u64)
                    .and_then(|id| u32::try_from(id).ok())
                    .ok_or_else(|| format!("{what}.id is missing or not a 32-bit id"))?;
                let content = str_field(t, "content", &what)?
                    .ok_or_else(|| format!("{what}.content is missing"))?;
                let flag = |name: &str, default: bool| -> Result<bool, String> {
                    match t.get(name) {
                        None | Some(Value::Null) => Ok(default),
                        Some(Value::Bool(b)) => Ok(*b),
                        Some(_) => Err(format!("{what}.{name} is not a boolean")),
                    }
                };
                let special = flag("special", false)?;
                Ok(AddedToken {
                    id,
                    content: content.to_string(),
                    single_word: flag("single_word", false)?,
                    lstrip: flag("lstrip", false)?,
                    rstrip: flag("rstrip", false)?,
                    normalized: flag("normalized", !special)?,
                    special,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        // Their ids index the same tables as the vocabulary's.
        let vocab = self
            .component("model")
            .and_then(|m| m.get("vocab"))
            .map_or(0, |v| match v {
                Value::Object(o) => o.len(),
                Value::Array(a) => a.len(),
                _ => 0,
            });
        check_dense_ids(tokens.iter().map(|t| t.id), vocab + tokens.len(), "id")?;
        Ok(tokens)
    }

    /// The normalizer, when it is a `BertNormalizer` (or absent).
    pub fn bert_normalizer(&self) -> Result<Option<BertNormalizer>, String> {
        let Some(n) = self.component("normalizer") else {
            return Ok(None);
        };
        match type_of(n, "normalizer")? {
            "BertNormalizer" => {
                let flag = |name: &str, default: bool| -> Result<bool, String> {
                    match n.get(name) {
                        None | Some(Value::Null) => Ok(default),
                        Some(Value::Bool(b)) => Ok(*b),
                        Some(_) => Err(format!("normalizer.{name} is not a boolean")),
                    }
                };
                let strip_accents = match n.get("strip_accents") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(_) => return Err("normalizer.strip_accents is not a boolean".into()),
                };
                Ok(Some(BertNormalizer::new(
                    flag("clean_text", true)?,
                    flag("handle_chinese_chars", true)?,
                    strip_accents,
                    flag("lowercase", true)?,
                )))
            }
            other => Err(unsupported("normalizer", other, "BertNormalizer")),
        }
    }

    /// Checks that the pre-tokenizer is `BertPreTokenizer`.
    pub fn require_bert_pre_tokenizer(&self) -> Result<(), String> {
        let p = self
            .component("pre_tokenizer")
            .ok_or("a WordPiece tokenizer.json without a pre_tokenizer is not supported")?;
        match type_of(p, "pre_tokenizer")? {
            "BertPreTokenizer" => Ok(()),
            other => Err(unsupported("pre_tokenizer", other, "BertPreTokenizer")),
        }
    }

    /// The special tokens of the post-processor for one sequence.
    pub fn single_template(&self) -> Result<SingleTemplate, String> {
        let Some(p) = self.component("post_processor") else {
            return Ok(SingleTemplate::default());
        };
        match type_of(p, "post_processor")? {
            "BertProcessing" => cls_sep_template(p),
            "TemplateProcessing" => template_single(p),
            other => Err(unsupported(
                "post_processor",
                other,
                "BertProcessing, TemplateProcessing",
            )),
        }
    }

    /// The decoder, when it is a `WordPiece` decoder (`None` when absent).
    pub fn wordpiece_decoder(&self) -> Result<Option<WordPieceDecoder>, String> {
        let Some(d) = self.component("decoder") else {
            return Ok(None);
        };
        match type_of(d, "decoder")? {
            "WordPiece" => Ok(Some(WordPieceDecoder {
                prefix: str_field(d, "prefix", "decoder")?.unwrap_or("##").into(),
                cleanup: match d.get("cleanup") {
                    None | Some(Value::Null) => true,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err("decoder.cleanup is not a boolean".into()),
                },
            })),
            other => Err(unsupported("decoder", other, "WordPiece")),
        }
    }
}

/// A `Split` pre-tokenizer `q` as a stage: its pattern as a regex (a `String` escaped, as the
/// reference escapes it), its behavior and `invert` (default `false`).
pub(crate) fn split_stage(q: &Value) -> Result<StageSpec, String> {
    let mut literal = None;
    let regex = match q.get("pattern") {
        Some(p) => match (
            p.get("Regex").and_then(Value::as_str),
            p.get("String").and_then(Value::as_str),
        ) {
            (Some(r), _) => r.to_owned(),
            (None, Some(s)) => {
                literal = Some(s.to_owned());
                regex::escape(s)
            }
            _ => {
                return Err(
                    "pre_tokenizer Split: the pattern is neither a String nor a Regex".into(),
                );
            }
        },
        None => return Err("pre_tokenizer Split has no pattern".into()),
    };
    let name = q.get("behavior").and_then(Value::as_str).unwrap_or("");
    let behavior = Behavior::from_name(name)
        .ok_or_else(|| format!("pre_tokenizer Split: unknown behavior {name:?}"))?;
    Ok(StageSpec {
        regex: Some(regex),
        literal,
        behavior,
        invert: q.get("invert").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// The ids of the `single` template of a `TemplateProcessing` around sequence `A`.
fn template_single(p: &Value) -> Result<SingleTemplate, String> {
    let items = p
        .get("single")
        .and_then(Value::as_array)
        .ok_or("post_processor.single is not a list")?;
    let specials = p.get("special_tokens").and_then(Value::as_object);
    let mut out = SingleTemplate::default();
    let mut seen_sequence = false;
    for item in items {
        if let Some(seq) = item.get("Sequence") {
            if seq.get("id").and_then(Value::as_str) != Some("A") || seen_sequence {
                return Err("post_processor.single must hold sequence A once".into());
            }
            seen_sequence = true;
        } else if let Some(special) = item.get("SpecialToken") {
            let name = special
                .get("id")
                .and_then(Value::as_str)
                .ok_or("a SpecialToken of post_processor.single has no id")?;
            let ids = specials
                .and_then(|s| s.get(name))
                .and_then(|s| s.get("ids"))
                .and_then(Value::as_array)
                .ok_or_else(|| format!("post_processor.special_tokens has no ids for {name:?}"))?;
            let target = if seen_sequence {
                &mut out.suffix
            } else {
                &mut out.prefix
            };
            for id in ids {
                target.push(
                    id.as_u64()
                        .and_then(|id| u32::try_from(id).ok())
                        .ok_or_else(|| format!("a special token id of {name:?} is not 32-bit"))?,
                );
            }
        } else {
            return Err(
                "post_processor.single holds something other than Sequence and SpecialToken".into(),
            );
        }
    }
    if !seen_sequence {
        return Err("post_processor.single has no sequence A".into());
    }
    Ok(out)
}

/// Appends the steps of normalizer `n` to `steps`; `Precompiled` only with `kernels` (the
/// models whose pipelines take it).
fn normalizer_steps(
    n: &Value,
    steps: &mut Vec<Step>,
    kernels: Option<&'static Kernels>,
) -> Result<(), String> {
    let text = |name: &str| -> Result<String, String> {
        n.get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("normalizer.{name} is missing or not a string"))
    };
    let flag = |name: &str| -> Result<bool, String> {
        n.get(name)
            .and_then(Value::as_bool)
            .ok_or_else(|| format!("normalizer.{name} is missing or not a boolean"))
    };
    let step = match type_of(n, "normalizer")? {
        "Sequence" => {
            for m in n
                .get("normalizers")
                .and_then(Value::as_array)
                .ok_or("normalizer.normalizers is not a list")?
            {
                normalizer_steps(m, steps, kernels)?;
            }
            return Ok(());
        }
        "NFC" => Step::Nfc,
        "NFD" => Step::Nfd,
        "NFKC" => Step::Nfkc,
        "NFKD" => Step::Nfkd,
        "Lowercase" => Step::Lowercase,
        "Prepend" => Step::Prepend(text("prepend")?),
        "Strip" => Step::Strip {
            left: flag("strip_left")?,
            right: flag("strip_right")?,
        },
        "Replace" => {
            let p = n.get("pattern");
            let pattern = match (
                p.and_then(|p| p.get("String")).and_then(Value::as_str),
                p.and_then(|p| p.get("Regex")).and_then(Value::as_str),
            ) {
                (Some(s), _) if !s.is_empty() => Pattern::Literal(s.to_owned()),
                // An empty string matches nowhere in the reference.
                (Some(_), _) => return Ok(()),
                (None, Some(r)) => Pattern::Regex(regex::Regex::new(r).map_err(|e| {
                    format!("normalizer Replace: the regex {r:?} is not supported: {e}")
                })?),
                (None, None) => {
                    return Err(
                        "normalizer Replace: the pattern is neither a String nor a Regex".into(),
                    );
                }
            };
            Step::Replace(pattern, text("content")?)
        }
        "Precompiled" if kernels.is_some() => {
            let blob = match n.get("precompiled_charsmap") {
                Some(Value::String(s)) => {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map_err(|e| {
                            format!(
                                "normalizer Precompiled: precompiled_charsmap is not base64: {e}"
                            )
                        })?
                }
                _ => {
                    return Err(
                        "normalizer Precompiled: precompiled_charsmap is missing or not a string"
                            .into(),
                    );
                }
            };
            let p = Precompiled::new(&blob, kernels.expect("checked"))
                .map_err(|e| format!("normalizer Precompiled: {e}"))?;
            Step::Precompiled(Arc::new(p))
        }
        other => {
            return Err(unsupported(
                "normalizer",
                other,
                if kernels.is_some() {
                    "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Strip, Replace, Precompiled, Sequence"
                } else {
                    "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Strip, Replace, Sequence"
                },
            ));
        }
    };
    steps.push(step);
    Ok(())
}

/// The `[cls, id] A [sep, id]` template of a `BertProcessing` or `RobertaProcessing`.
fn cls_sep_template(p: &Value) -> Result<SingleTemplate, String> {
    let id = |name: &str| -> Result<u32, String> {
        p.get(name)
            .and_then(|pair| pair.get(1))
            .and_then(Value::as_u64)
            .and_then(|id| u32::try_from(id).ok())
            .ok_or_else(|| format!("post_processor.{name} is not a [token, id] pair"))
    };
    Ok(SingleTemplate {
        prefix: vec![id("cls")?],
        suffix: vec![id("sep")?],
    })
}

/// The components of `v` (the `what` of the file): the list under `key` of a `Sequence`, else
/// `v` alone.
pub(crate) fn sequence_items<'a>(
    v: &'a Value,
    what: &str,
    key: &str,
) -> Result<Vec<&'a Value>, String> {
    Ok(match v.get("type").and_then(Value::as_str) {
        Some("Sequence") => v
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{what}.{key} is not a list"))?
            .iter()
            .collect(),
        _ => vec![v],
    })
}

fn type_of<'a>(v: &'a Value, what: &str) -> Result<&'a str, String> {
    v.get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what} has no type"))
}

fn str_field<'a>(v: &'a Value, name: &str, what: &str) -> Result<Option<&'a str>, String> {
    match v.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{what}.{name} is not a string")),
    }
}

fn unsupported(component: &str, kind: &str, supported: &str) -> String {
    format!("{component} of type {kind} is not supported for this model (supported: {supported})")
}

/// Each id's token string, for decoding: the vocabulary's, then the added tokens' (which win
/// where both name an id); `None` for an id neither names.
pub fn token_strings(vocab: &[(String, u32)], added: &[AddedToken]) -> Vec<Option<Box<str>>> {
    let size = added
        .iter()
        .map(|t| t.id as usize + 1)
        .chain(vocab.iter().map(|(_, id)| *id as usize + 1))
        .max()
        .unwrap_or(0);
    let mut strings: Vec<Option<Box<str>>> = vec![None; size];
    for (t, id) in vocab {
        strings[*id as usize] = Some(t.as_str().into());
    }
    for t in added {
        strings[t.id as usize] = Some(t.content.as_str().into());
    }
    strings
}
