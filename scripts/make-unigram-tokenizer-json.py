#!/usr/bin/env python3
"""Make the Unigram `tokenizer.json` files simdtok's conformance tests read, from the SentencePiece
`.model` files in ../shared/data, with `transformers`' own slow-to-fast converters
(`transformers.convert_slow_tokenizer`), offline.

    pip install transformers==5.24.0 sentencepiece==0.2.3 protobuf tokenizers==0.23.3
    python3 scripts/make-unigram-tokenizer-json.py [--data ../shared/data] [--check]

The converters need only the tokenizer object's `vocab_file` (and, for some, `legacy`,
`_extra_ids`, `convert_tokens_to_ids`): a small stand-in gives them (transformers 5 has no slow
tokenizer classes to build; a `*TokenizerFast(vocab_file=...)` call can silently give a tiny
default vocabulary, so it is not used). Every result is checked to hold the model's whole
vocabulary: each piece of the `.model`, with its score, at the id the converter gives it.

Files (tokenizer.json written by tokenizers 0.23.3's `Tokenizer.to_str()`):

| file | from | converter |
|---|---|---|
| tests/data/unigram/botchan-t5.tokenizer.json | botchan_en_unigram_1000.model | `T5Converter` (100 `<extra_id_N>`, added as special tokens as `T5TokenizerFast` adds them); `$A </s>` |
| tests/data/unigram/kyoto-xlmr.tokenizer.json | kyoto_ja_unigram_8000.model | `XLMRobertaConverter` (fairseq ids, `<mask>` added with `lstrip` as `XLMRobertaTokenizerFast` adds it); `<s> $A </s>` |
| tests/data/unigram/botchan-spm.tokenizer.json | botchan_en_unigram_1000.model | `SpmConverter.build_tokenizer_from_spm_proto(legacy=False)`: the converter of a model without a class (prepend_scheme `first`, no split, regex Replaces) |
| tests/data/unigram/botchan-bytes.tokenizer.json | botchan-t5's | DERIVED: the T5 conversion with 256 `<0xXX>` pieces appended (score: the lowest − 1), `byte_fallback`, normalizers NFKC + Lowercase + Strip, pre-tokenizer WhitespaceSplit then Metaspace (`never`, split), decoders Replace, ByteFallback, Fuse, Strip — the other components the loader reads |
| tests/data/unigram/local/xlm-roberta-nomic.tokenizer.json | xlm-roberta-nomic.from-gguf.model | `XLMRobertaConverter` with the model's own vocabulary and unk id (the model is in fairseq order already: its `vocab()` would shift it twice). NOT committed (9 MB; git-ignored): the tests say when it is absent |

The botchan and kyoto models are Apache-2.0 (tests/data/sentencepiece, license beside them).
"""

import argparse
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "tests", "data", "unigram")

EXPECTED = {"tokenizers": "0.23.3", "transformers": "5.24.0"}


def stand_in(model_path, proto, legacy=True, extra_ids=0):
    """What the converters read of a slow tokenizer."""
    pieces = {p.piece: i for i, p in enumerate(proto.pieces)}
    t = types.SimpleNamespace()
    t.vocab_file = model_path
    t.legacy = legacy
    t._extra_ids = extra_ids
    t.convert_tokens_to_ids = lambda tok: pieces[tok]
    return t


def load_proto(path):
    from transformers.convert_slow_tokenizer import import_protobuf
    m = import_protobuf().ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    return m


def check_vocab(tok_json, proto, first_id, what):
    """Every piece of `proto` from index `first_id` on is in the Unigram vocab at the same
    index (shifted as the converter shifts it), with its score."""
    vocab = tok_json["model"]["vocab"]
    shift = {"t5": 0, "xlmr": 1, "spm": 0, "xlmr-own": 0}[what]
    for i, p in enumerate(proto.pieces):
        if i < first_id:
            continue
        piece, score = vocab[i + shift]
        if piece != p.piece or score != float(p.score):
            raise SystemExit(f"{what}: piece {i} is {piece!r} {score}, not {p.piece!r} {p.score}")
    return len(vocab)


def convert(kind, model_path):
    import transformers.convert_slow_tokenizer as c
    from tokenizers import AddedToken
    proto = load_proto(model_path)
    if kind == "t5":
        tok = c.T5Converter(stand_in(model_path, proto, extra_ids=100)).converted()
        # T5TokenizerFast registers its extra ids as special tokens.
        tok.add_special_tokens([AddedToken(f"<extra_id_{i}>", normalized=False, special=True)
                                for i in range(100)])
        first = 0
    elif kind == "xlmr":
        conv = c.XLMRobertaConverter(stand_in(model_path, proto))
        # The post-processor asks the stand-in for the ids of <s> and </s>: fairseq's.
        conv.original_tokenizer.convert_tokens_to_ids = {"<s>": 0, "</s>": 2}.__getitem__
        tok = conv.converted()
        # XLMRobertaTokenizerFast's mask token: lstrip, special.
        tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                           special=True)])
        first = 3
    elif kind == "xlmr-own":
        class OwnOrder(c.XLMRobertaConverter):
            vocab = c.SpmConverter.vocab
            unk_id = c.SpmConverter.unk_id
        conv = OwnOrder(stand_in(model_path, proto))
        tok = conv.converted()
        first = 0
    elif kind == "spm":
        vocab = [(p.piece, p.score) for p in proto.pieces]
        tok = c.SpmConverter.build_tokenizer_from_spm_proto(proto, vocab, legacy=False)
        first = 0
    else:
        raise ValueError(kind)
    j = json.loads(tok.to_str())
    if j["model"]["type"] != "Unigram":
        raise SystemExit(f"{model_path}: not converted to a Unigram model")
    n = check_vocab(j, proto, first, kind)
    return tok, j, n, len(proto.pieces)


def bytes_variant(t5_json):
    """botchan-t5 with byte fallback and the remaining components."""
    j = json.loads(json.dumps(t5_json))
    vocab = j["model"]["vocab"]
    low = min(s for _, s in vocab)
    n = len(vocab)
    vocab += [[f"<0x{b:02X}>", low - 1.0] for b in range(256)]
    # The added tokens come after the vocabulary: move their ids past the byte pieces.
    for t in j["added_tokens"]:
        if t["id"] >= n:
            t["id"] += 256
    for name, sp in (j["post_processor"] or {}).get("special_tokens", {}).items():
        sp["ids"] = [i + 256 if i >= n else i for i in sp["ids"]]
    j["model"]["byte_fallback"] = True
    j["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "NFKC"}, {"type": "Lowercase"},
        {"type": "Strip", "strip_left": True, "strip_right": True}]}
    j["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": True}]}
    j["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    from tokenizers import Tokenizer
    # Through the library: the file is what tokenizers itself writes for it.
    return json.loads(Tokenizer.from_str(json.dumps(j)).to_str())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"))
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if a committed file would change")
    args = ap.parse_args()
    import tokenizers
    import transformers
    for name, mod in (("tokenizers", tokenizers), ("transformers", transformers)):
        if mod.__version__ != EXPECTED[name]:
            print(f"warning: {name} {mod.__version__}, the files were made with {EXPECTED[name]}",
                  file=sys.stderr)
    spm = os.path.join(args.data, "models", "sentencepiece")
    botchan = os.path.join(spm, "botchan_en_unigram_1000.model")
    kyoto = os.path.join(spm, "kyoto_ja_unigram_8000.model")
    nomic = os.path.join(spm, "xlm-roberta-nomic.from-gguf.model")
    outputs = []
    tok, t5, n, pieces = convert("t5", botchan)
    print(f"botchan-t5: {n} vocabulary entries ({pieces} pieces + 100 extra ids)")
    outputs.append(("botchan-t5", t5))
    tok, j, n, pieces = convert("xlmr", kyoto)
    print(f"kyoto-xlmr: {n} vocabulary entries ({pieces} pieces, fairseq shift, <mask>)")
    outputs.append(("kyoto-xlmr", j))
    tok, j, n, pieces = convert("spm", botchan)
    print(f"botchan-spm: {n} vocabulary entries ({pieces} pieces)")
    outputs.append(("botchan-spm", j))
    outputs.append(("botchan-bytes", bytes_variant(t5)))
    if os.path.exists(nomic):
        tok, j, n, pieces = convert("xlmr-own", nomic)
        print(f"xlm-roberta-nomic: {n} vocabulary entries ({pieces} pieces)")
        outputs.append(("local/xlm-roberta-nomic", j))
    else:
        print(f"SKIPPED xlm-roberta-nomic: {nomic} is absent", file=sys.stderr)
    changed = False
    for name, j in outputs:
        path = os.path.join(OUT, name + ".tokenizer.json")
        text = json.dumps(j, ensure_ascii=False, indent=1) + "\n"
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if args.check:
            if old != text:
                print(f"{path}: would change")
                changed = True
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path} ({len(text.encode())} bytes)")
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
