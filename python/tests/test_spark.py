"""simdtok.spark.tokenize on PySpark local[2]: ids equal to the CLI's on a few thousand
documents, nulls and empty texts, Parquet in and out, a bad model path raised on the driver."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

import simdtok
from dist_common import cli_ids, documents, model

pyspark = pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

import simdtok.spark  # noqa: E402

pytestmark = pytest.mark.timeout(400)

DOCS = documents()


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java (apt-get install openjdk-17-jre-headless)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(sys.path)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("simdtok-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "700")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def want(cli, tmp_path_factory):
    return cli_ids(cli, model(), DOCS, tmp_path_factory.mktemp("spark"))


def test_tokenize_equals_cli(spark, want):
    df = spark.createDataFrame([(i, d) for i, d in enumerate(DOCS)], "row long, text string").repartition(3)
    out = simdtok.spark.tokenize(df, str(model()))
    assert out.columns == ["row", "text", "ids"]
    rows = sorted(out.collect(), key=lambda r: r["row"])
    assert [r["text"] for r in rows] == DOCS
    assert [r["ids"] for r in rows] == want


def test_parquet_in_parquet_out(spark, want, tmp_path):
    src, dst = tmp_path / "in.parquet", tmp_path / "out"
    pq.write_table(pa.table({"row": list(range(len(DOCS))), "body": pa.array(DOCS, pa.string())}), src)
    df = spark.read.parquet(str(src))
    simdtok.spark.tokenize(df, str(model()), column="body", output_column="tokens").write.parquet(str(dst))
    back = pq.read_table(dst).sort_by("row")
    assert back.column("tokens").to_pylist() == want


def test_bad_model_raises_on_driver(spark, tmp_path):
    df = spark.createDataFrame([("hello",)], "text string")
    with pytest.raises(FileNotFoundError, match="no-such.model"):
        simdtok.spark.tokenize(df, str(tmp_path / "no-such.model"))
    with pytest.raises(ValueError, match="no column 'body'"):
        simdtok.spark.tokenize(df, str(model()), column="body")
