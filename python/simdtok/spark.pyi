from typing import Any

def tokenize(
    df: Any,
    model: str,
    column: str = "text",
    output_column: str = "ids",
    *,
    num_threads: int | None = 1,
    check: bool = True,
    **options: Any,
) -> Any: ...
