"""Tokenize a Ray Dataset with simdtok: ``simdtok.ray.tokenize(dataset, model)``.

Each actor loads the model once and encodes whole Arrow batches (``map_batches(...,
batch_format="pyarrow")``) in place: the text column is read without a copy, the ids come back as
a ``list<uint32>`` column. The model file must be readable at the same path on every node (a
shared file system, or copy it there first; see python/README.md).
"""

from __future__ import annotations

from typing import Any

import simdtok

__all__ = ["tokenize", "TokenizeBatch"]


class TokenizeBatch:
    """The callable class ``map_batches`` runs in each actor: loads the model once, then adds
    ``output_column`` (``list<uint32>``, null for a null text) to every ``pyarrow.Table`` batch."""

    def __init__(
        self,
        model: str,
        column: str = "text",
        output_column: str = "ids",
        num_threads: int | None = 1,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.tokenizer = simdtok.Tokenizer.from_file(model, **(options or {}))
        self.column = column
        self.output_column = output_column
        self.num_threads = num_threads

    def __call__(self, batch):
        ids = self.tokenizer.encode_batch(
            batch.column(self.column), num_threads=self.num_threads, format="arrow"
        )
        index = batch.schema.get_field_index(self.output_column)
        if index >= 0:
            return batch.set_column(index, self.output_column, ids)
        return batch.append_column(self.output_column, ids)


def tokenize(
    dataset,
    model: str,
    column: str = "text",
    output_column: str = "ids",
    *,
    num_threads: int | None = 1,
    concurrency: int | tuple[int, int] | None = None,
    num_cpus: float | None = None,
    batch_size: int | None = None,
    check: bool = True,
    **options: Any,
):
    """A Dataset with ``output_column`` (``list<uint32>``) added: the ids of ``column``'s texts
    under ``model`` (a null text gives null ids, an empty text an empty list).

    ``options`` are ``Tokenizer.from_file``'s (``tier``, ``lowercase``, ``add_special_tokens``,
    ``pattern``, ``allow_special``, ``wordpiece_algorithm``, ``cache_budget``). ``num_threads``:
    simdtok threads per actor (default 1: Ray gives parallelism through actors; raise it with ``num_cpus``).
    ``concurrency``, ``num_cpus`` and ``batch_size`` go to ``map_batches``. With ``check`` (the
    default) the model is loaded once on the driver first, so a bad path or option raises here,
    not inside an actor.
    """
    if check:
        simdtok.Tokenizer.from_file(model, **options)
    kwargs: dict[str, Any] = {}
    if concurrency is not None:
        kwargs["concurrency"] = concurrency
    if num_cpus is not None:
        kwargs["num_cpus"] = num_cpus
    if batch_size is not None:
        kwargs["batch_size"] = batch_size
    return dataset.map_batches(
        TokenizeBatch,
        batch_format="pyarrow",
        fn_constructor_kwargs=dict(
            model=str(model),
            column=column,
            output_column=output_column,
            num_threads=num_threads,
            options=options,
        ),
        **kwargs,
    )
