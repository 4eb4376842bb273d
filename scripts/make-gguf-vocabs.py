#!/usr/bin/env python3
"""Writes vocabulary-only GGUF files from ../shared/data's tokenizer.json files, with PyPI
`gguf`'s writer (`pip install gguf`), laid out as llama.cpp's converter lays them out
(`convert_hf_to_gguf.py`: `get_vocab_base` and, for BERT, the `▁word`/`word` pieces), for the
round trip of tests/gguf.rs (a GGUF and the file it was made from give the same ids):

    DIR/llama3.gguf   gpt2 vocabulary, pre llama-bpe    (Llama 3 tokenizer.json)
    DIR/qwen3.gguf    gpt2 vocabulary, pre qwen2        (Qwen 3 tokenizer.json)
    DIR/gpt4o.gguf    gpt2 vocabulary, pre gpt-4o       (GPT-4o tokenizer.json)
    DIR/minilm.gguf   bert vocabulary                   (all-MiniLM-L6-v2 tokenizer.json)

DIR is --dir DIR, else $SIMDTOK_GGUF_ROUNDTRIP, else tests/data/gguf/roundtrip (ignored by
git: the vocabularies carry their models' licenses and are several MB each).

    scripts/make-gguf-vocabs.py [--shared ../shared/data] [--dir DIR]
"""

import argparse
import json
import os
from pathlib import Path

import gguf

ROOT = Path(__file__).resolve().parent.parent

# (output name, tokenizer.json name, tokenizer.ggml.model, tokenizer.ggml.pre)
MODELS = [
    ("llama3", "llama3", "gpt2", "llama-bpe"),
    ("qwen3", "qwen3", "gpt2", "qwen2"),
    ("gpt4o", "gpt4o", "gpt2", "gpt-4o"),
    ("minilm", "all-MiniLM-L6-v2.bert-uncased", "bert", "bert-bge"),
]


def vocab_of(tj):
    """The tokens in id order and their llama.cpp token types, as get_vocab_base makes them:
    added tokens CONTROL when special, USER_DEFINED otherwise; the rest NORMAL; ids the
    vocabulary lacks become [PAD{i}] (UNUSED)."""
    vocab = dict(tj["model"]["vocab"])
    added = {t["id"]: t for t in tj.get("added_tokens", [])}
    for i, t in added.items():
        vocab[t["content"]] = i
    size = max(vocab.values()) + 1
    reverse = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(size):
        if i not in reverse:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif i in added:
            tokens.append(reverse[i])
            types.append(gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
        else:
            tokens.append(reverse[i])
            types.append(gguf.TokenType.NORMAL)
    return tokens, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT / "../shared/data"))
    ap.add_argument("--dir", default=os.environ.get("SIMDTOK_GGUF_ROUNDTRIP", str(ROOT / "tests/data/gguf/roundtrip")))
    args = ap.parse_args()
    out_dir = Path(args.dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, source, model, pre in MODELS:
        path = Path(args.shared) / "models/hf-tokenizer-json" / f"{source}.tokenizer.json"
        tj = json.loads(path.read_text(encoding="utf-8"))
        tokens, types = vocab_of(tj)
        w = gguf.GGUFWriter(str(out_dir / f"{name}.gguf"), arch="llama")
        w.add_tokenizer_model(model)
        w.add_tokenizer_pre(pre)
        if model == "bert":
            # convert_hf_to_gguf's phantom space: `word` → `▁word`, `##word` → `word`.
            def phantom(tok, ty):
                if ty == gguf.TokenType.CONTROL:
                    return tok
                return tok[2:] if tok.startswith("##") else "\u2581" + tok
            tokens = [phantom(t, ty) for t, ty in zip(tokens, types)]
            ids = {t: i for i, t in enumerate(tokens)}
            for key, tok in [("unk", "[UNK]"), ("sep", "[SEP]"), ("bos", "[CLS]"), ("pad", "[PAD]"), ("mask", "[MASK]")]:
                if tok in ids:
                    getattr(w, f"add_{key}_token_id")(ids[tok])
        else:
            merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
            w.add_token_merges(merges)
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        print(out_dir / f"{name}.gguf")


if __name__ == "__main__":
    main()
