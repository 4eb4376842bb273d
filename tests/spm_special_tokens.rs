//! `add_special_tokens` for SentencePiece `.model` files (`src/load/spm_specials.rs`): the
//! model's BOS before every text, as `LlamaTokenizer` adds it, with the offsets `(0, 0)` the
//! references give added tokens, on the bundled models. (Llama 2's own `tokenizer.json` says the
//! same with its post-processor `<s> $A`, whose ids `bpe_conformance` checks against
//! `tokenizers`.)

use std::path::{Path, PathBuf};

use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer};

fn load(path: &Path, add_special_tokens: bool) -> Tokenizer {
    let options = LoadOptions {
        add_special_tokens,
        ..LoadOptions::default()
    };
    let kernels = Kernels::active().expect("kernels");
    Tokenizer::from_file_with_options(path, kernels, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const TEXTS: [&str; 6] = [
    "Hello world",
    "",
    "  leading and trailing spaces  ",
    "吾輩は猫である。",
    "<s> a control piece's text </s>",
    "line one\nline two",
];

#[test]
fn bundled_models_get_their_bos_before_each_text() {
    for name in [
        "botchan_en_bpe_1000.model",
        "botchan_en_unigram_1000.model",
        "kyoto_ja_unigram_8000.model",
    ] {
        let path = root().join("tests/data/sentencepiece").join(name);
        let (plain, special) = (load(&path, false), load(&path, true));
        let bos = special
            .document_tokens()
            .bos
            .clone()
            .expect("a BOS piece")
            .id;
        assert_eq!(special.added_suffix_len(), 0, "{name}");
        for text in TEXTS {
            let want: Vec<u32> = std::iter::once(bos).chain(plain.encode(text)).collect();
            assert_eq!(special.encode(text), want, "{name}: {text:?}");
            let (p, s) = (plain.encode_full(text), special.encode_full(text));
            assert_eq!(s.ids, want, "{name}: {text:?}");
            assert_eq!(s.offsets[0], (0, 0), "{name}: {text:?}");
            assert_eq!(&s.offsets[1..], &p.offsets[..], "{name}: {text:?}");
        }
    }
}
