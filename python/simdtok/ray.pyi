from typing import Any

import pyarrow as pa

class TokenizeBatch:
    def __init__(
        self,
        model: str,
        column: str = "text",
        output_column: str = "ids",
        num_threads: int | None = 1,
        options: dict[str, Any] | None = None,
    ) -> None: ...
    def __call__(self, batch: pa.Table) -> pa.Table: ...

def tokenize(
    dataset: Any,
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
) -> Any: ...
