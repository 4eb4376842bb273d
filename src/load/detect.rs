//! What kind of model file a path holds, told from its first bytes and its name.

use std::path::{Path, PathBuf};

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
    /// GGUF (llama.cpp's model file), told by its magic bytes `GGUF`: the tokenizer in its
    /// metadata.
    Gguf,
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
        if bytes.starts_with(crate::load::gguf::reader::MAGIC) {
            ModelKind::Gguf
        } else if name.ends_with(".model") {
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
            ModelKind::Gguf => "GGUF",
        }
    }
}

/// The merges file next to a GPT-2 `encoder.json`/`vocab.json`.
pub(crate) fn gpt2_merges_beside(path: &Path) -> Option<PathBuf> {
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
