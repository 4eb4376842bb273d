#!/usr/bin/env bash
# Seconds and peak memory of `simdtok encode` on one corpus of JSON lines, plain, gzip and zstd,
# and the same texts as Parquet (snappy, pyarrow's default; row groups of 100 000 rows), into
# u32 and the dataset formats (issue 49's comparison, without the peers): 200 MB of 20-line
# documents of the KJV and the Jargon File (../shared/data), cl100k, three rounds alternated.
#
# Usage: scripts/bench-corpus-inputs.sh [THREADS...]   (default: 1 2; needs gzip, zstd and
# python3 with pyarrow)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${SIMDTOK_SHARED_DATA:-../shared/data}
work=${TMPDIR:-/tmp}/simdtok-bench-corpus
mkdir -p "$work"
cargo build --release --quiet
bin=target/release/simdtok
model=$data/models/tiktoken/cl100k_base.tiktoken
if [ ! -f "$work/big.jsonl" ]; then
    python3 - "$data" "$work/big.jsonl" <<'PY'
import json, sys
data, out = sys.argv[1], sys.argv[2]
src = []
for name in ["en_kjv_bible.txt", "en_jargon_file_4.4.7.txt"]:
    src += open(f"{data}/corpora/{name}", encoding="utf-8").read().splitlines()
size, i, doc = 0, 0, []
with open(out, "w", encoding="utf-8") as f:
    while size < 200_000_000:
        doc.append(src[i % len(src)])
        i += 1
        if len(doc) == 20:
            line = json.dumps({"text": "\n".join(doc)}) + "\n"
            f.write(line)
            size += len(line)
            doc = []
PY
    gzip -6 -kf "$work/big.jsonl"
    zstd -3 -qf "$work/big.jsonl" -o "$work/big.jsonl.zst"
fi
if [ ! -f "$work/big.parquet" ]; then
    python3 - "$work/big.jsonl" "$work/big.parquet" <<'PY'
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
texts = [json.loads(l)["text"] for l in open(sys.argv[1], encoding="utf-8")]
table = pa.table({"id": list(range(len(texts))), "text": texts})
pq.write_table(table, sys.argv[2], row_group_size=100_000, compression="snappy")
PY
fi
threads=("${@:-1 2}")
for round in 1 2 3; do
    for t in ${threads[@]}; do
        for input in big.jsonl big.jsonl.gz big.jsonl.zst; do
            /usr/bin/time -f "round $round threads $t $input u32: %e s, %M KB" \
                "$bin" encode --model "$model" --input "$work/$input" --input-format jsonl \
                --output-format u32 --output "$work/out.u32" --threads "$t"
        done
        /usr/bin/time -f "round $round threads $t big.parquet u32: %e s, %M KB" \
            "$bin" encode --model "$model" --input "$work/big.parquet" \
            --output-format u32 --output "$work/out-parquet.u32" --threads "$t"
        cmp "$work/out.u32" "$work/out-parquet.u32"
        for format in megatron datatrove llmc; do
            out=$work/out.$format
            [ "$format" = datatrove ] && out=$work/out.ds
            /usr/bin/time -f "round $round threads $t big.jsonl $format: %e s, %M KB" \
                "$bin" encode --model "$model" --input "$work/big.jsonl" --input-format jsonl \
                --output-format "$format" --output "$out" --threads "$t" || true
        done
    done
done
