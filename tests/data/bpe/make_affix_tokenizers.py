#!/usr/bin/env python3
"""Write the two small byte-level BPE tokenizer.json files that test the BPE model's affixes,
trained by Hugging Face `tokenizers` (BpeTrainer, 1500 tokens, GPT-2's byte-level alphabet) on the
King James Bible and the UDHR in 532 languages from the shared data set (public domain; MIT):

    kjv-1500-suffix.tokenizer.json   end_of_word_suffix "</w>" (as CLIP and OpenAI GPT have it)
    kjv-1500-prefix.tokenizer.json   continuing_subword_prefix "##"

Every byte gets its starting symbols in every place in a word (bare, prefixed, suffixed, both),
appended to the vocabulary after training where the corpus had no such word: without them the
reference drops the byte. ByteLevel pre-tokenizer (GPT-2's regex, no prefix space) and decoder.

Usage: pip install tokenizers==0.23.3; python3 tests/data/bpe/make_affix_tokenizers.py [--data DIR]
"""

import argparse
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def build(data, name, prefix, suffix):
    affixes = {k: v for k, v in (("continuing_subword_prefix", prefix),
                                 ("end_of_word_suffix", suffix)) if v}
    model = models.BPE(**affixes)
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=1500, show_progress=False, initial_alphabet=alphabet,
                                  **affixes)
    corpora = [os.path.join(data, "corpora", f)
               for f in ("en_kjv_bible.txt", "multi_udhr_all_languages.txt")]
    tok.train(corpora, trainer)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for c in sorted(alphabet):
        for symbol in (c, c + suffix, prefix + c, prefix + c + suffix):
            if symbol not in vocab:
                vocab[symbol] = len(vocab)
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"))
    data = ap.parse_args().data
    build(data, "kjv-1500-suffix.tokenizer.json", "", "</w>")
    build(data, "kjv-1500-prefix.tokenizer.json", "##", "")


main()
