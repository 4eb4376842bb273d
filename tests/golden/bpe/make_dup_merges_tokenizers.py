#!/usr/bin/env python3
"""Write the tokenizer.json files whose merges list a pair more than once, beside this script:

    gpt2-2k-dup-merges.tokenizer.json   byte-level BPE: tests/data/bpe/gpt2-2k-trim.tokenizer.json
                                        (GPT-2 cut to 2000 merges) with its merges relisted
    kjv-spm-dup-merges.tokenizer.json   SentencePiece-style BPE (Metaspace, byte fallback):
                                        tests/data/bpe/kjv-spm-first.tokenizer.json, relisted
    kjv-ws-dup-merges.tokenizer.json    character-level BPE (Whitespace):
                                        tests/data/bpe/kjv-ws-1500.tokenizer.json, relisted

Everything but `model.merges` is the source file's.  Hugging Face `tokenizers` collects the merges
list into a map from pair to (rank, merged token), so when a pair is listed more than once its LAST
place is its rank (0.23.3: `[a b, b c, a b]` merges "abc" as "a bc", `[b c, a b, b c]` as "ab c",
for byte-level, character-level and affixed models alike); the merged token is the pair's parts
joined, the same for every listing.  The relisting (see `relist`) moves many pairs, byte pairs and
the first merges among them, behind merges they would otherwise precede, so an encoder that keeps a
pair's first rank gives other ids on ordinary text.  gen_bpe.py (one directory up) writes the
goldens of these files (configurations of the same names).

Deterministic; needs nothing but Python.
Usage: python3 tests/golden/bpe/make_dup_merges_tokenizers.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "data", "bpe")

# (written file stem, source tokenizer.json stem in tests/data/bpe)
FILES = [
    ("gpt2-2k-dup-merges", "gpt2-2k-trim"),
    ("kjv-spm-dup-merges", "kjv-spm-first"),
    ("kjv-ws-dup-merges", "kjv-ws-1500"),
]


def relist(merges):
    """`merges` with some pairs listed again (each entry copied as it is, string or pair):

    - of the first 300, every third again 37 to 167 places later (a byte pair, or one of the first
      merges, now ranked behind merges that it used to precede);
    - every tenth (from the sixth on) again at the end, in reverse order;
    - every fiftieth (from the eighth on) again right after itself (which changes nothing) and a
      third time after all of those.
    """
    n = len(merges)
    # (place, then: 0 the original, 1 a relisting, 2 a third listing; Python's sort is stable)
    entries = [(i, 0, m) for i, m in enumerate(merges)]
    for i, m in enumerate(merges):
        if i < 300 and i % 3 == 0:
            entries.append((min(n - 1, i + 37 + (i % 11) * 13), 1, m))
        if i % 10 == 5:
            entries.append((2 * n - i, 1, m))
        if i % 50 == 7:
            entries.append((i, 1, m))
            entries.append((3 * n + i, 2, m))
    entries.sort(key=lambda e: (e[0], e[1]))
    return [m for _, _, m in entries]


def main():
    for stem, source in FILES:
        with open(os.path.join(SOURCES, source + ".tokenizer.json"), encoding="utf-8") as f:
            j = json.load(f)
        merges = j["model"]["merges"]
        j["model"]["merges"] = relist(merges)
        path = os.path.join(HERE, stem + ".tokenizer.json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            json.dump(j, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
        print("%s: %d merges (%d listed again), from %s" % (
            path, len(j["model"]["merges"]), len(j["model"]["merges"]) - len(merges), source))


if __name__ == "__main__":
    main()
