#!/usr/bin/env python3
"""Generate the Unigram tokenizer.json golden files for simdtok's conformance tests: what Hugging
Face `tokenizers` 0.23.3 returns for the tokenizer.json files that
scripts/make-unigram-tokenizer-json.py made from the SentencePiece `.model` files (with
`transformers`' converters).

Usage (from the repository root, or anywhere):

    pip install tokenizers==0.23.3
    python3 scripts/make-unigram-tokenizer-json.py      # the files (the XLM-R one is not committed)
    python3 tests/golden/gen_unigram.py [--data ../shared/data] [--check] [--models botchan-t5]

Everything but the configurations is gen_bpe.py's: the same reference calls (`Tokenizer.from_file`,
`no_padding()`, `no_truncation()`, `encode(text, add_special_tokens=False)`: ids, tokens, offsets
converted to UTF-8 byte offsets, `decode(ids)`, and `special_ids` with add_special_tokens), the
same inputs (corpus samples, the SentencePiece, WordPiece and BPE edge cases and generated inputs),
digests, storage rules and file format (tests/golden/README.md, "Byte-level BPE" and
"Unigram tokenizer.json"). The configuration whose tokenizer.json is not committed
(xlm-roberta-nomic, under the git-ignored tests/data/unigram/local/) is skipped, with a message,
when its file is absent.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import gen_bpe as bpe  # noqa: E402
import gen_sentencepiece as spg  # noqa: E402
import gen_wordpiece as wpg  # noqa: E402

UNIGRAM_DIR = "tests/data/unigram/"

# `local:PATH`: a file in the repository's tree that is not committed (git-ignored), made by a
# script; the tests skip its configuration, with a message, when it is absent.
_resolve = bpe.resolve


def _resolve_local(location, data):
    if location.startswith("local:"):
        return os.path.join(REPO, location[len("local:"):])
    return _resolve(location, data)


bpe.resolve = _resolve_local


def _repo(stem, where="repo:"):
    return {"loader": "Tokenizer.from_file", "file": where + UNIGRAM_DIR + stem + ".tokenizer.json",
            "no_padding": True, "no_truncation": True}


CONFIGS = [
    ("botchan-t5", _repo("botchan-t5")),
    ("botchan-spm", _repo("botchan-spm")),
    ("botchan-bytes", _repo("botchan-bytes")),
    ("kyoto-xlmr", _repo("kyoto-xlmr")),
    ("xlm-roberta-nomic", _repo("local/xlm-roberta-nomic", "local:")),
]

# Texts aimed at the Unigram model and the Precompiled normalizer's graphemes.
UNIGRAM_EDGE_TEXT = [
    ("ug_crlf_words", "one\r\ntwo\r\n\r\nthree\r"),
    ("ug_grapheme_cr_lf_mix", "a\r\n\nb\n\r\nc"),
    ("ug_fullwidth_combining", "\uff21\u0301 \uff41\u0308x \uff10\u20e3"),
    ("ug_latin_combining", "A\u030a e\u0301\u0301 o\u0308\u0304 n\u0303"),
    ("ug_control_pieces", "<s> </s> <unk> <pad> <mask> <extra_id_0> <extra_id_99>x"),
    ("ug_fullwidth_control_lookalikes", "\uff1cs\uff1e \uff1c/s\uff1e \uff1cunk\uff1e"),
    ("ug_byte_piece_lookalikes", "<0x41> <0xE3><0x81><0x82> <0x0A>"),
    ("ug_unknown_runs", "\u2603\u2603 \u2603x\u2603 \U0001f600\U0001f601\U0001f602"),
    ("ug_mask_lstrip", "hello   <mask> world<mask>  x"),
    ("ug_spaces_runs", "a  b   c    d\t\te"),
    ("ug_space_only_words", "   \u3000  "),
    ("ug_ties", "aaaa bbbb ab ab ab abab"),
]




def main():
    only = [n for n, c in CONFIGS if os.path.exists(_resolve_local(c["file"], ""))]
    configs = [(n, c) for n, c in CONFIGS if n in only]
    for n, c in CONFIGS:
        if n not in only:
            print("SKIPPED %s: %s is absent (run scripts/make-unigram-tokenizer-json.py)"
                  % (n, c["file"]), file=sys.stderr)
    spg.run_generator(__doc__, "tests/golden/gen_unigram.py", "unigram", configs, bpe.make_ref,
                      spg.EDGE_TEXT + wpg.WP_EDGE_TEXT + bpe.BPE_EDGE_TEXT + UNIGRAM_EDGE_TEXT,
                      spg.EDGE_GEN + wpg.WP_EDGE_GEN + bpe.BPE_EDGE_GEN,
                      [("tokenizers", bpe.EXPECTED_TOKENIZERS)])


if __name__ == "__main__":
    main()
