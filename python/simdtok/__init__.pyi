import os
from typing import Any, Iterable, Literal, NamedTuple, overload

import numpy as np
import numpy.typing as npt

__version__: str

class Encoding(NamedTuple):
    ids: list[int]
    offsets: list[tuple[int, int]]
    pieces: list[str]

class Tokenizer:
    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        tier: str | None = None,
        lowercase: bool | None = None,
        add_special_tokens: bool = False,
        pattern: str | None = None,
        allow_special: bool = False,
        wordpiece_algorithm: Literal["fast", "linear"] | None = None,
        cache_budget: str | int | None = None,
    ) -> Tokenizer: ...
    @property
    def path(self) -> str: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def tier(self) -> str: ...
    def encode(self, text: str) -> list[int]: ...
    def encode_full(self, text: str) -> Encoding: ...
    @overload
    def encode_batch(
        self,
        texts: Iterable[str | None] | Any,
        num_threads: int | None = None,
        format: Literal["numpy"] = "numpy",
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]: ...
    @overload
    def encode_batch(
        self, texts: Iterable[str | None] | Any, num_threads: int | None = None, *, format: Literal["arrow"]
    ) -> Any: ...
    @overload
    def encode_batch(
        self, texts: Iterable[str | None] | Any, num_threads: int | None = None, *, format: Literal["list"]
    ) -> list[list[int] | None]: ...
    def count_batch(
        self, texts: Iterable[str | None] | Any, num_threads: int | None = None
    ) -> npt.NDArray[np.int64]: ...
    def decode(self, ids: Iterable[int] | npt.NDArray[np.integer]) -> str: ...
    def id_to_piece(self, id: int) -> str | None: ...

def cpu() -> dict[str, Any]: ...
