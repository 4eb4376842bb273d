"""Tokenize a Spark DataFrame with simdtok: ``simdtok.spark.tokenize(df, model)``.

Runs over ``DataFrame.mapInArrow``: each Python worker loads the model once (kept while the
worker is reused) and encodes whole Arrow record batches in place; the ids come back as an
``array<int>`` column (Spark has no unsigned type; every id fits). The model file must be
readable at the same path on every executor (a shared file system, or ``SparkContext.addFile``
and ``SparkFiles.get``; see python/README.md).
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import simdtok

__all__ = ["tokenize"]

# The tokenizers of this worker process, by (path, options): loaded once per worker.
_LOADED: dict[tuple[str, tuple], simdtok.Tokenizer] = {}


def _tokenizer(model: str, options: dict[str, Any]) -> simdtok.Tokenizer:
    key = (model, tuple(sorted(options.items())))
    tok = _LOADED.get(key)
    if tok is None:
        tok = _LOADED[key] = simdtok.Tokenizer.from_file(model, **options)
    return tok


def _ids_column(tok: simdtok.Tokenizer, texts, num_threads: int | None):
    import pyarrow as pa

    ids, offsets, validity, nulls = tok._tok.encode_batch(texts, num_threads)
    ids = np.asarray(ids).view(np.int32)
    offsets = np.asarray(offsets).astype(np.int32)
    values = pa.Array.from_buffers(pa.int32(), len(ids), [None, pa.py_buffer(ids)])
    return pa.Array.from_buffers(
        pa.list_(pa.field("element", pa.int32())),
        len(offsets) - 1,
        [None if validity is None else pa.py_buffer(np.asarray(validity)), pa.py_buffer(offsets)],
        null_count=nulls,
        children=[values],
    )


def _map(model: str, column: str, output_column: str, num_threads: int | None, options: dict[str, Any]):
    def run(batches: Iterator) -> Iterator:
        import pyarrow as pa

        tok = _tokenizer(model, options)
        for batch in batches:
            ids = _ids_column(tok, batch.column(column), num_threads)
            names = [n for n in batch.schema.names if n != output_column]
            arrays = [batch.column(n) for n in names]
            yield pa.RecordBatch.from_arrays(arrays + [ids], names=names + [output_column])

    return run


def tokenize(
    df,
    model: str,
    column: str = "text",
    output_column: str = "ids",
    *,
    num_threads: int | None = 1,
    check: bool = True,
    **options: Any,
):
    """A DataFrame with ``output_column`` (``array<int>``) added: the ids of ``column``'s texts
    under ``model`` (a null text gives null ids, an empty text an empty array).

    ``options`` are ``Tokenizer.from_file``'s. ``num_threads``: simdtok threads per Python worker
    (default 1: Spark runs one worker per task slot). With ``check`` (the default) the model is
    loaded once on the driver first, so a bad path or option raises here, not in a task.
    """
    from pyspark.sql.types import ArrayType, IntegerType, StructField, StructType

    if check:
        simdtok.Tokenizer.from_file(model, **options)
    if column not in df.columns:
        raise ValueError(f"no column {column!r} in the DataFrame (columns: {df.columns})")
    fields = [f for f in df.schema.fields if f.name != output_column]
    schema = StructType(fields + [StructField(output_column, ArrayType(IntegerType(), True), True)])
    return df.mapInArrow(_map(str(model), column, output_column, num_threads, options), schema)
