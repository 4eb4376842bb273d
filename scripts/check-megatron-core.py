#!/usr/bin/env python3
"""Reads a dataset that `simdtok encode --output-format megatron` wrote with megatron-core's own
`IndexedDataset` and checks every document against `simdtok encode --output-format ids` of the
same input (one line of ids per text), plus an optional end-of-document id.

megatron-core's `indexed_dataset.py` imports torch and Megatron's distributed utilities at its
top, though reading a dataset needs only numpy; this script runs that file unchanged from the
wheel with those imports stubbed (nothing of torch is called on the reading path), so no torch
install (gigabytes) is needed. The wheel is not committed; fetch it with:

    pip download --no-deps megatron-core==0.16.1 -d /tmp/mcore

Usage:
    scripts/check-megatron-core.py WHEEL PREFIX IDS_FILE [--eod ID]
"""

import argparse
import importlib.util
import sys
import types
import zipfile
import tempfile
from pathlib import Path


def load_indexed_dataset(wheel: Path):
    """megatron/core/datasets/indexed_dataset.py from the wheel, with its imports stubbed."""
    out = Path(tempfile.mkdtemp(prefix="mcore-"))
    name = "megatron/core/datasets/indexed_dataset.py"
    with zipfile.ZipFile(wheel) as z:
        z.extract(name, out)
    stubs = {
        "torch": {},
        "megatron": {},
        "megatron.core": {},
        "megatron.core.datasets": {},
        "megatron.core.datasets.object_storage_utils": {
            n: object
            for n in [
                "ObjectStorageConfig",
                "S3Config",
                "cache_index_file",
                "dataset_exists",
                "get_index_cache_path",
                "get_object_storage_access",
                "is_object_storage_path",
                "parse_s3_path",
            ]
        },
        "megatron.core.msc_utils": {
            "MultiStorageClientFeature": type(
                "MultiStorageClientFeature", (), {"is_enabled": staticmethod(lambda: False)}
            )
        },
        "megatron.core.utils": {"log_single_rank": lambda *a, **k: None},
    }
    for mod, attrs in stubs.items():
        m = types.ModuleType(mod)
        m.__dict__.update(attrs)
        sys.modules[mod] = m
    # `IndexedDataset` subclasses `torch.utils.data.Dataset` (a plain base class).
    torch = sys.modules["torch"]
    torch.utils = types.SimpleNamespace(data=types.SimpleNamespace(Dataset=object))
    torch.Tensor = object  # only in the builder's annotations
    # The reader compares paths with the object-storage prefixes.
    sys.modules["megatron.core.datasets.object_storage_utils"].is_object_storage_path = (
        lambda p: False
    )
    spec = importlib.util.spec_from_file_location("indexed_dataset", out / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("wheel", type=Path)
    ap.add_argument("prefix")
    ap.add_argument("ids", type=Path)
    ap.add_argument("--eod", type=int)
    a = ap.parse_args()
    indexed = load_indexed_dataset(a.wheel)
    ds = indexed.IndexedDataset(a.prefix, multimodal=False, mmap=True)
    want = [
        [int(t) for t in line.split()] + ([a.eod] if a.eod is not None else [])
        for line in a.ids.read_text().splitlines()
    ]
    docs = ds.document_indices
    if len(docs) != len(want) + 1:
        print(f"{len(docs) - 1} documents, {len(want)} texts", file=sys.stderr)
        return 1
    bad = 0
    for i, ids in enumerate(want):
        got = []
        for s in range(docs[i], docs[i + 1]):
            got.extend(int(t) for t in ds[s])
        if got != ids:
            bad += 1
            if bad <= 5:
                print(f"document {i}: {got[:10]}... != {ids[:10]}...", file=sys.stderr)
    dtype = ds.index.dtype.__name__
    print(
        f"megatron-core IndexedDataset: {len(ds)} sequences, {len(want)} documents, "
        f"dtype {dtype}, {bad} differing"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
