//! The tokens a model's own files say begin and end a document (`bos` / `eos`), for the
//! document boundaries training data marks (`simdtok encode --prepend-bos --append-eos`).
//!
//! Each is the one the model's reference library reports, and none where it reports none:
//! - `tokenizer.json`: the `bos_token` / `eos_token` of the `tokenizer_config.json` beside it
//!   (`transformers`' `bos_token_id` / `eos_token_id`), named `tokenizer_config.json` in the same
//!   folder, or `NAME.tokenizer_config.json` beside `NAME.tokenizer.json`; without that file,
//!   none (the tokens a post-processor's template adds are `--add-special-tokens`' business);
//! - a SentencePiece `.model`: the control pieces its trainer spec names `bos_piece` and
//!   `eos_piece` (`<s>` and `</s>` by default), as `SentencePieceProcessor.bos_id()` /
//!   `eos_id()` give them;
//! - a tiktoken encoding (rank file, GPT-2 files): `<|endoftext|>` as the end (tiktoken's
//!   `eot_token`), no beginning;
//! - `vocab.txt`: none (BERT has `[CLS]` and `[SEP]`, not a beginning and an end).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::load::spm_proto::{PieceKind, SpmModelFile};
use crate::load::tokenizer_json::TokenizerJson;

/// One boundary token: its id, its text and where the model says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentToken {
    /// The id.
    pub id: u32,
    /// The token's text (`</s>`, `<|endoftext|>`).
    pub content: String,
    /// Where it was found, for messages (a file and a field).
    pub source: String,
}

/// The tokens that begin and end a document, where the model names them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocumentTokens {
    /// The beginning-of-sequence token.
    pub bos: Option<DocumentToken>,
    /// The end-of-sequence (end-of-document) token.
    pub eos: Option<DocumentToken>,
}

/// tiktoken's end of a text (its `eot_token`), in every encoding and in GPT-2's files.
const END_OF_TEXT: &str = "<|endoftext|>";

/// The `tokenizer_config.json` that goes with the `tokenizer.json` at `path`, when there is one.
fn config_beside(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix("tokenizer.json")?;
    let config = path.with_file_name(format!("{stem}tokenizer_config.json"));
    config.is_file().then_some(config)
}

/// A `bos_token` / `eos_token` value of `tokenizer_config.json`: a string, or an added token's
/// object with its `content`.
fn config_content(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("content")?.as_str(),
        _ => None,
    }
}

/// The id of `content` in a `tokenizer.json`: an added token's, else the model's vocabulary's.
fn json_id(json: &TokenizerJson, content: &str) -> Option<u32> {
    let added = json.component("added_tokens").and_then(Value::as_array);
    let from_added = added.into_iter().flatten().find_map(|t| {
        (t.get("content")?.as_str()? == content)
            .then(|| t.get("id")?.as_u64())
            .flatten()
    });
    let id = from_added.or_else(|| {
        let vocab = json.component("model")?.get("vocab")?;
        match vocab {
            Value::Object(o) => o.get(content)?.as_u64(),
            // Unigram's list of [piece, score]: the id is the place.
            Value::Array(a) => a
                .iter()
                .position(|e| e.get(0).and_then(Value::as_str) == Some(content))
                .map(|i| i as u64),
            _ => None,
        }
    })?;
    u32::try_from(id).ok()
}

/// The boundary tokens of the `tokenizer.json` at `path`: those its `tokenizer_config.json`
/// names. A config that names a token the file does not have is an error.
pub(crate) fn of_tokenizer_json(
    path: &Path,
    json: &TokenizerJson,
) -> Result<DocumentTokens, String> {
    let mut tokens = DocumentTokens::default();
    if let Some(config_path) = config_beside(path) {
        let shown = config_path.display().to_string();
        let bytes = std::fs::read(&config_path).map_err(|e| format!("{shown}: {e}"))?;
        let config: Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("{shown}: not valid JSON: {e}"))?;
        for (field, slot) in [
            ("bos_token", &mut tokens.bos),
            ("eos_token", &mut tokens.eos),
        ] {
            let Some(content) = config.get(field).and_then(config_content) else {
                continue;
            };
            let id = json_id(json, content).ok_or_else(|| {
                format!(
                    "{shown}: {field} {content:?} is not a token of {}",
                    path.display()
                )
            })?;
            *slot = Some(DocumentToken {
                id,
                content: content.to_owned(),
                source: format!("{shown}: {field}"),
            });
        }
    }
    Ok(tokens)
}

/// The boundary tokens of a SentencePiece model, as `SentencePieceProcessor.bos_id()` and
/// `eos_id()` give them: the pieces its trainer spec names (`<s>` and `</s>` unless it says
/// otherwise), when they are control pieces.
pub(crate) fn of_sentencepiece(path: &Path, model: &SpmModelFile) -> DocumentTokens {
    let token = |name: &str, field: &str| {
        let id = model
            .pieces
            .iter()
            .position(|p| p.text == name && p.kind == PieceKind::Control)?;
        Some(DocumentToken {
            id: u32::try_from(id).ok()?,
            content: name.to_owned(),
            source: format!("{}: trainer_spec.{field}", path.display()),
        })
    };
    DocumentTokens {
        bos: token(&model.bos_piece, "bos_piece"),
        eos: token(&model.eos_piece, "eos_piece"),
    }
}

/// The boundary tokens of a tiktoken encoding whose special tokens are `specials`:
/// `<|endoftext|>` ends a document; nothing begins one.
pub(crate) fn of_tiktoken(path: &Path, specials: &[(String, u32)]) -> DocumentTokens {
    DocumentTokens {
        bos: None,
        eos: specials
            .iter()
            .find(|(t, _)| t == END_OF_TEXT)
            .map(|&(ref t, id)| DocumentToken {
                id,
                content: t.clone(),
                source: format!("{}: tiktoken's end-of-text token", path.display()),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> TokenizerJson {
        TokenizerJson::parse(text.as_bytes()).expect("valid")
    }

    const FILE: &str = r#"{"added_tokens": [{"id": 3, "content": "<eos>"}, {"id": 4, "content": "<bos>"}],
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": []}}"#;

    #[test]
    fn without_a_config_there_are_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tokenizer.json");
        let got = of_tokenizer_json(&path, &json(FILE)).expect("no config");
        assert_eq!(got, DocumentTokens::default());
    }

    #[test]
    fn the_config_beside_names_them_and_must_name_tokens() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("m.tokenizer.json");
        let config = dir.path().join("m.tokenizer_config.json");
        std::fs::write(
            &config,
            r#"{"bos_token": {"content": "ab", "special": true}, "eos_token": "<eos>"}"#,
        )
        .expect("write");
        let got = of_tokenizer_json(&path, &json(FILE)).expect("config");
        assert_eq!(got.bos.map(|t| t.id), Some(2));
        let eos = got.eos.expect("eos");
        assert_eq!((eos.id, eos.source.ends_with("eos_token")), (3, true));
        std::fs::write(&config, r#"{"eos_token": "<nope>"}"#).expect("write");
        let err = of_tokenizer_json(&path, &json(FILE)).expect_err("unknown");
        assert!(err.contains("\"<nope>\" is not a token"), "{err}");
        std::fs::write(&config, r#"{"bos_token": null, "eos_token": "<eos>"}"#).expect("write");
        let got = of_tokenizer_json(&path, &json(FILE)).expect("config");
        assert_eq!((got.bos, got.eos.map(|t| t.id)), (None, Some(3)));
        std::fs::write(&config, "{").expect("write");
        assert!(of_tokenizer_json(&path, &json(FILE)).is_err());
    }

    #[test]
    fn tiktoken_ends_documents_with_endoftext() {
        let specials = vec![
            ("<|fim_prefix|>".to_owned(), 9),
            ("<|endoftext|>".to_owned(), 7),
        ];
        let got = of_tiktoken(Path::new("x.tiktoken"), &specials);
        assert_eq!((got.bos, got.eos.map(|t| t.id)), (None, Some(7)));
    }
}
