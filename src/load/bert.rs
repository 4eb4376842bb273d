//! Builds a [`BertWordPiece`] from a BERT `vocab.txt` (as `tokenizers`'
//! `BertWordPieceTokenizer` sets one up) or from a `tokenizer.json` with a WordPiece model.

use simdtok_kernels::Kernels;

use crate::load::tokenizer_json::TokenizerJson;
use crate::load::vocab_txt;
use crate::models::wordpiece::WordPiece;
use crate::normalize::bert::BertNormalizer;
use crate::options::{LoadOptions, WordPieceAlgorithm};
use crate::pipeline::added_tokens::{AddedToken, AddedTokens};
use crate::pipeline::wordpiece::{BertParts, BertWordPiece, WordPieceDecoder};

/// The special tokens `BertWordPieceTokenizer` registers, in its order, when the vocabulary
/// has them.
const BERT_SPECIALS: [&str; 5] = ["[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"];

/// `BertWordPieceTokenizer(vocab, lowercase=L)` with its defaults: clean text, isolate CJK,
/// strip accents when lowercasing, `[UNK]`, `##`, 100 characters per word, `[CLS] … [SEP]`.
pub fn from_vocab_txt(
    bytes: &[u8],
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<BertWordPiece, String> {
    let vocab = vocab_txt::parse(bytes)?;
    let algorithm = options
        .wordpiece_algorithm
        .unwrap_or(WordPieceAlgorithm::DEFAULT);
    let model = WordPiece::new(vocab, "[UNK]", "##", 100, algorithm, kernels)?;
    let added = BERT_SPECIALS
        .iter()
        .filter_map(|&t| {
            Some(AddedToken {
                id: model.token_to_id(t)?,
                content: t.to_string(),
                single_word: false,
                lstrip: false,
                rstrip: false,
                normalized: false,
                special: true,
            })
        })
        .collect();
    let (cls, sep) = (model.token_to_id("[CLS]"), model.token_to_id("[SEP]"));
    if options.add_special_tokens && (cls.is_none() || sep.is_none()) {
        return Err("adding special tokens needs [CLS] and [SEP] in the vocabulary".into());
    }
    let parts = BertParts {
        normalizer: Some(BertNormalizer::new(
            true,
            true,
            None,
            options.lowercase.unwrap_or(true),
        )),
        added: AddedTokens::new(added)?,
        special_prefix: cls.into_iter().collect(),
        special_suffix: sep.into_iter().collect(),
        decoder: Some(WordPieceDecoder {
            prefix: "##".into(),
            cleanup: true,
        }),
        model,
    };
    Ok(BertWordPiece::new(
        parts,
        options.add_special_tokens,
        kernels,
    ))
}

/// A `tokenizer.json` whose model is WordPiece.
pub fn from_tokenizer_json(
    json: &TokenizerJson,
    options: &LoadOptions,
    kernels: &'static Kernels,
) -> Result<BertWordPiece, String> {
    let m = json.wordpiece()?;
    let normalizer = json.bert_normalizer()?;
    json.require_bert_pre_tokenizer()?;
    let template = json.single_template()?;
    let decoder = json.wordpiece_decoder()?;
    let added = json.added_tokens()?;
    if let Some(t) = added.iter().find(|t| t.normalized) {
        return Err(format!(
            "added token {:?} has normalized: true, which is not supported yet",
            t.content
        ));
    }
    if options.add_special_tokens && template.prefix.is_empty() && template.suffix.is_empty() {
        return Err("adding special tokens: the file's post_processor adds none".into());
    }
    let algorithm = options
        .wordpiece_algorithm
        .unwrap_or(WordPieceAlgorithm::DEFAULT);
    let model = WordPiece::new(
        m.vocab,
        &m.unk_token,
        &m.prefix,
        m.max_input_chars_per_word,
        algorithm,
        kernels,
    )?;
    let parts = BertParts {
        model,
        normalizer,
        added: AddedTokens::new(added)?,
        special_prefix: template.prefix,
        special_suffix: template.suffix,
        decoder,
    };
    Ok(BertWordPiece::new(
        parts,
        options.add_special_tokens,
        kernels,
    ))
}
