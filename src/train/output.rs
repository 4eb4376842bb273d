//! The files a trained model is written to: a `tokenizer.json` laid out as Hugging Face
//! `tokenizers` saves the same training (field for field, so its `save` and this give the same
//! JSON), and a tiktoken rank file.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::load::tiktoken::{ByteLevelInverse, byte_level_decode};

use super::{Model, TrainError};

impl Model {
    /// The merges as the reference's model keeps them: a pair merged twice (see
    /// [`super::greedy`]) keeps only its later rank, so appears once, where it was merged last.
    pub fn saved_merges(&self) -> Vec<(u32, u32)> {
        let merges = &self.trained.merges;
        let mut last: HashMap<(u32, u32), usize> = HashMap::with_capacity(merges.len());
        for (rank, m) in merges.iter().enumerate() {
            last.insert((m.left, m.right), rank);
        }
        merges
            .iter()
            .enumerate()
            .filter(|(rank, m)| last[&(m.left, m.right)] == *rank)
            .map(|(_, m)| (m.left, m.right))
            .collect()
    }

    /// The `tokenizer.json` (pretty-printed as `tokenizers` saves it).
    pub fn tokenizer_json(&self) -> String {
        let tokens = &self.trained.tokens;
        let added: Vec<Value> = tokens[..self.specials]
            .iter()
            .enumerate()
            .map(|(id, content)| {
                json!({
                    "id": id,
                    "content": content,
                    "single_word": false,
                    "lstrip": false,
                    "rstrip": false,
                    "normalized": false,
                    "special": true,
                })
            })
            .collect();
        let (pre_tokenizer, decoder) = match self.pre_tokenizer.pattern() {
            Some(pattern) => (
                json!({
                    "type": "Sequence",
                    "pretokenizers": [
                        {
                            "type": "Split",
                            "pattern": {"Regex": pattern.regex_source()},
                            "behavior": "Isolated",
                            "invert": false,
                        },
                        {
                            "type": "ByteLevel",
                            "add_prefix_space": false,
                            "trim_offsets": true,
                            "use_regex": false,
                        },
                    ],
                }),
                json!({
                    "type": "ByteLevel",
                    "add_prefix_space": true,
                    "trim_offsets": true,
                    "use_regex": true,
                }),
            ),
            None => (json!({"type": "Whitespace"}), Value::Null),
        };
        let vocab: serde_json::Map<String, Value> = tokens
            .iter()
            .enumerate()
            .map(|(id, t)| (t.clone(), json!(id)))
            .collect();
        let merges: Vec<Value> = self
            .saved_merges()
            .into_iter()
            .map(|(l, r)| json!([tokens[l as usize], tokens[r as usize]]))
            .collect();
        let file = json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": null,
            "pre_tokenizer": pre_tokenizer,
            "post_processor": null,
            "decoder": decoder,
            "model": {
                "type": "BPE",
                "dropout": null,
                "unk_token": null,
                "continuing_subword_prefix": null,
                "end_of_word_suffix": null,
                "fuse_unk": false,
                "byte_fallback": false,
                "ignore_merges": false,
                "vocab": vocab,
                "merges": merges,
            },
        });
        serde_json::to_string_pretty(&file).expect("JSON values always serialize")
    }

    /// A tiktoken rank file: `base64(token bytes) rank` per line, rank = id, for every token
    /// but the special ones (tiktoken takes those apart, by name).
    pub fn tiktoken(&self) -> Result<String, TrainError> {
        if !self.pre_tokenizer.byte_level() {
            return Err(TrainError::NotByteLevel);
        }
        let inverse = ByteLevelInverse::new();
        let mut out = String::new();
        for (id, token) in self.trained.tokens.iter().enumerate().skip(self.specials) {
            let bytes = byte_level_decode(token, &inverse)
                .expect("byte-level tokens hold byte characters only");
            out.push_str(&STANDARD.encode(&bytes));
            out.push(' ');
            out.push_str(&id.to_string());
            out.push('\n');
        }
        Ok(out)
    }
}
