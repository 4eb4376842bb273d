//! What `add_special_tokens` puts around a text for a SentencePiece `.model`. The file names its
//! control pieces (`<s>`, `</s>`) but not how a wrapper uses them, and `sentencepiece` itself
//! adds none unless asked. The rule is that of the wrappers such files are used with
//! (`transformers`' `LlamaTokenizer` and `T5Tokenizer`, by their documented defaults):
//! - a model with a BOS piece: BOS before the text, nothing after — `LlamaTokenizer`
//!   (`add_bos_token=True`, `add_eos_token=False`), the wrapper of Llama 1 and 2, Mistral and
//!   most SentencePiece BPE models;
//! - a model without one but with an EOS piece: EOS after the text — `T5Tokenizer` (`$A </s>`);
//! - neither: nothing to add, and the load refuses `add_special_tokens` (`crate::load`).
//!
//! `transformers` 5 differs for a bare `.model`: `LlamaTokenizer.from_pretrained` on a folder with
//! only `tokenizer.model` adds nothing unless given `add_bos_token=True` (its backend's default is
//! off), where `transformers` 4's `LlamaTokenizer` and Llama 2's own `tokenizer_config.json`
//! (`"add_bos_token": true`) add the BOS. simdtok follows the latter.
//!
//! Files whose wrapper adds both (XLM-R's `<s> … </s>`, ALBERT's `[CLS] … [SEP]`) are served by
//! their `tokenizer.json`, whose post-processor says so.

use crate::load::document_tokens::DocumentTokens;

/// The ids before and after every text, by the rule above, from the model's boundary tokens.
pub(crate) fn wrapper(tokens: &DocumentTokens) -> (Vec<u32>, Vec<u32>) {
    match (&tokens.bos, &tokens.eos) {
        (Some(bos), _) => (vec![bos.id], Vec::new()),
        (None, Some(eos)) => (Vec::new(), vec![eos.id]),
        (None, None) => (Vec::new(), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::document_tokens::DocumentToken;

    fn token(id: u32, content: &str) -> Option<DocumentToken> {
        Some(DocumentToken {
            id,
            content: content.into(),
            source: "test".into(),
        })
    }

    #[test]
    fn bos_when_the_model_has_one_else_eos() {
        let llama = DocumentTokens {
            bos: token(1, "<s>"),
            eos: token(2, "</s>"),
        };
        assert_eq!(wrapper(&llama), (vec![1], vec![]), "LlamaTokenizer");
        let t5 = DocumentTokens {
            bos: None,
            eos: token(1, "</s>"),
        };
        assert_eq!(wrapper(&t5), (vec![], vec![1]), "T5Tokenizer");
        assert_eq!(wrapper(&DocumentTokens::default()), (vec![], vec![]));
    }
}
