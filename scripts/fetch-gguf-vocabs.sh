#!/usr/bin/env bash
# Fetches llama.cpp's vocabulary test suite (models/ggml-vocab-*.gguf with .gguf.inp and
# .gguf.out: inputs, and the ids Hugging Face `tokenizers` gave them with the original models)
# from the llama-cpp-python source distribution on PyPI (0.3.36, which vendors llama.cpp), into
#
#   DIR/llama.cpp/models/ggml-vocab-*     (+ DIR/llama.cpp/LICENSE, llama.cpp's MIT license)
#
# DIR is --dir DIR, else tests/data/gguf (ignored by git; what tests/gguf.rs reads, or
# $SIMDTOK_GGUF_VOCABS pointing at a models/ directory). The sdist (77 MB) is found through
# PyPI's JSON API, checked against the sha256 below, and only those files are extracted (the
# vocabularies are 76 MB, too large to commit). Licenses: llama.cpp is MIT; the vocabularies
# carry their models' terms.
#
#   scripts/fetch-gguf-vocabs.sh [--dir DIR]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/data/gguf"
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

version=0.3.36
sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# `pip download --no-binary :all:` would build the sdist's metadata (scikit-build-core, CMake):
# the file is fetched by its URL from the JSON API instead.
python3 - "$version" "$work/sdist.tar.gz" <<'PY'
import json, sys, urllib.parse, urllib.request
version, out = sys.argv[1], sys.argv[2]
api = "https://pypi.org/pypi/llama-cpp-python/json"
meta = json.load(urllib.request.urlopen(api))
(url,) = [u["url"] for u in meta["releases"][version] if u["packagetype"] == "sdist"]
url = urllib.parse.urljoin(api, url)
with urllib.request.urlopen(url) as r, open(out, "wb") as f:
    while chunk := r.read(1 << 20):
        f.write(chunk)
PY
echo "$sha  $work/sdist.tar.gz" | sha256sum -c --quiet
top="llama_cpp_python-$version/vendor/llama.cpp"
tar -xzf "$work/sdist.tar.gz" -C "$work" --wildcards "$top/models/ggml-vocab-*" "$top/LICENSE"
mkdir -p "$dir/llama.cpp/models"
cp "$work/$top/LICENSE" "$dir/llama.cpp/LICENSE"
cp "$work/$top"/models/ggml-vocab-* "$dir/llama.cpp/models/"
echo "llama.cpp's vocabulary files are in $dir/llama.cpp/models ($(ls "$dir/llama.cpp/models" | wc -l) files)"
