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
        // Written by hand around the small parts (serde_json's pretty printer, re-indented):
        // a `Value` of 200 000 entries costs more than the training of a small corpus.
        let part = |value: &Value, depth: usize| -> String {
            let text = serde_json::to_string_pretty(value).expect("JSON values always serialize");
            text.replace('\n', &format!("\n{}", "  ".repeat(depth)))
        };
        let mut out = String::with_capacity(64 * tokens.len());
        out.push_str("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n");
        out.push_str(&format!(
            "  \"added_tokens\": {},\n",
            part(&Value::Array(added), 1)
        ));
        out.push_str("  \"normalizer\": null,\n");
        out.push_str(&format!(
            "  \"pre_tokenizer\": {},\n",
            part(&pre_tokenizer, 1)
        ));
        out.push_str("  \"post_processor\": null,\n");
        out.push_str(&format!("  \"decoder\": {},\n", part(&decoder, 1)));
        out.push_str(concat!(
            "  \"model\": {\n",
            "    \"type\": \"BPE\",\n",
            "    \"dropout\": null,\n",
            "    \"unk_token\": null,\n",
            "    \"continuing_subword_prefix\": null,\n",
            "    \"end_of_word_suffix\": null,\n",
            "    \"fuse_unk\": false,\n",
            "    \"byte_fallback\": false,\n",
            "    \"ignore_merges\": false,\n",
            "    \"vocab\": {",
        ));
        let mut id = itoa::Buffer::new();
        for (i, token) in tokens.iter().enumerate() {
            out.push_str(if i == 0 { "\n      " } else { ",\n      " });
            push_json_string(&mut out, token);
            out.push_str(": ");
            out.push_str(id.format(i));
        }
        out.push_str(if tokens.is_empty() { "}," } else { "\n    }," });
        out.push_str("\n    \"merges\": [");
        let merges = self.saved_merges();
        for (i, &(l, r)) in merges.iter().enumerate() {
            out.push_str(if i == 0 {
                "\n      [\n        "
            } else {
                ",\n      [\n        "
            });
            push_json_string(&mut out, &tokens[l as usize]);
            out.push_str(",\n        ");
            push_json_string(&mut out, &tokens[r as usize]);
            out.push_str("\n      ]");
        }
        out.push_str(if merges.is_empty() { "]" } else { "\n    ]" });
        out.push_str("\n  }\n}");
        out
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

/// Appends `s` as a JSON string, as serde_json writes it (the reference's escapes): a token with
/// nothing to escape (nearly all) is copied between quotes, without serde_json's allocation of
/// a string per token (three per merge in all).
fn push_json_string(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).expect("strings always serialize"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ASCII character alone and inside text, and characters beyond ASCII, come out as
    /// serde_json writes them.
    #[test]
    fn json_strings_are_serde_jsons() {
        let mut cases: Vec<String> = (0u8..0x80)
            .flat_map(|b| {
                let c = b as char;
                [c.to_string(), format!("ab{c}cd")]
            })
            .collect();
        cases.extend(["", "Ġthe", "日本語", "\u{2028}", "é\u{7f}", "😀\"\\\n"].map(String::from));
        for case in cases {
            let mut out = String::from("x");
            push_json_string(&mut out, &case);
            assert_eq!(
                out,
                format!("x{}", serde_json::to_string(&case).unwrap()),
                "{case:?}"
            );
        }
    }
}
