"""simdtok.ray.tokenize on Ray Data in local mode: ids equal to the CLI's on a few thousand
documents, nulls and empty texts, Parquet in and out, a bad model path raised on the driver.
Each actor takes a quarter of a CPU (with one CPU per actor the job deadlocks on two cores);
Ray is shut down in ``finally``; every test is bounded in time."""

from __future__ import annotations

import os

import pytest

import simdtok
from dist_common import cli_ids, documents, model

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

import simdtok.ray  # noqa: E402

pytestmark = pytest.mark.timeout(400)

DOCS = documents()


@pytest.fixture(scope="module")
def ray_local():
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def want(cli, tmp_path_factory):
    return cli_ids(cli, model(), DOCS, tmp_path_factory.mktemp("ray"))


def test_tokenize_equals_cli(ray_local, want):
    table = pa.table({"row": list(range(len(DOCS))), "text": pa.array(DOCS, pa.string())})
    ds = ray.data.from_arrow(table).repartition(4)
    out = simdtok.ray.tokenize(ds, str(model()), concurrency=2, num_cpus=0.25, batch_size=500)
    result = pa.concat_tables(ray.get(out.to_arrow_refs())).sort_by("row")
    assert result.column("row").to_pylist() == list(range(len(DOCS)))
    assert result.schema.field("ids").type == pa.list_(pa.uint32())
    assert result.column("text").to_pylist() == DOCS
    assert result.column("ids").to_pylist() == want


def test_parquet_in_parquet_out(ray_local, want, tmp_path):
    src, dst = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    table = pa.table({"row": list(range(len(DOCS))), "body": pa.array(DOCS, pa.large_string())})
    for k in range(3):  # three files
        pq.write_table(table.slice(k * 1000, 1000), src / f"part-{k}.parquet")
    ds = ray.data.read_parquet(str(src))
    out = simdtok.ray.tokenize(ds, str(model()), column="body", output_column="tokens", concurrency=2, num_cpus=0.25)
    out.write_parquet(str(dst))
    back = pq.read_table(dst).sort_by("row")
    assert back.column("tokens").to_pylist() == want[: len(back)]
    assert back.num_rows == min(3000, len(DOCS))


def test_bad_model_raises_on_driver(ray_local, tmp_path):
    ds = ray.data.from_items([{"text": "hello"}])
    with pytest.raises(FileNotFoundError, match="no-such.model"):
        simdtok.ray.tokenize(ds, str(tmp_path / "no-such.model"))
    with pytest.raises(ValueError, match="applies only to"):
        simdtok.ray.tokenize(ds, str(model()), lowercase=True)
