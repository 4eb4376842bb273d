#!/usr/bin/env bash
# Builds the Russian, German and Korean corpora of bench-peers' tokbench protocol from Debian
# packages (`apt-get download`, pinned versions), into a cache directory outside the repository:
#
#   DIR/corpora/ru_debian_docs.txt       Russian: Debian Installation Guide (amd64) + Debian FAQ
#   DIR/corpora/de_debian_reference.txt  German: Debian Reference (the document that shared/data's
#                                        ja_ and zh-cn_debian_reference.txt are translations of)
#   DIR/corpora/ko_debian_docs.txt       Korean: Debian Installation Guide (amd64) + Debian FAQ
#   DIR/corpora/SOURCES.md               packages, versions, paths, licenses, sha256
#
# DIR is --dir DIR, else $SIMDTOK_BENCH_CACHE, else $HOME/.cache/simdtok-bench: the directory
# `cargo bench-peers --family tokbench` reads. Hugging Face's tokbench uses FineWeb-2 excerpts
# for these languages, which this machine cannot reach; Debian's translated documentation is the
# largest Russian and Korean prose in its packages. HTML pages are turned into text by
# scripts/debian-doc-to-text.py (standard library only), in file-name order. Licenses: Debian
# Installation Guide GPL-2+, Debian FAQ GPL-2+ (see each package's copyright file), Debian
# Reference GPL-2+. Nothing here is committed.
#
#   scripts/fetch-bench-corpora.sh [--dir DIR]
set -euo pipefail

dir="${SIMDTOK_BENCH_CACHE:-$HOME/.cache/simdtok-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
here="$(cd "$(dirname "$0")" && pwd)"
command -v apt-get >/dev/null || { echo "apt-get not found: these corpora come from Debian packages" >&2; exit 1; }

packages=(
  installation-guide-amd64=20230508+deb12u1
  debian-faq-ru=11.1
  debian-faq-ko=11.1
  debian-reference-de=2.100
)
# The sha256 of each corpus as built from these versions.
declare -A want=(
  [ru_debian_docs.txt]=e69ada8fae0268e0f05a2fed8c4418c19ef8580bc903de5f7d0b028c42698b95
  [de_debian_reference.txt]=7442bea63334fd70c10f7a2a6d3dbab34fd9bb15e004a866953d252f9a6f5bc8
  [ko_debian_docs.txt]=1df663af36172822ab0c1a7d435580fd519aabde682a7937534ba91d3a0b0f01
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "${packages[@]}") || {
  echo "apt-get download failed (run apt-get update first; these versions are Debian 12's)" >&2
  exit 1
}
for deb in "$work"/*.deb; do
  name="$(basename "$deb")"; name="${name%%_*}"
  mkdir -p "$work/x/$name"
  dpkg-deb -x "$deb" "$work/x/$name"
done

guide="$work/x/installation-guide-amd64/usr/share/doc/installation-guide-amd64"
faq="$work/x/debian-faq-LANG/usr/share/doc/debian/FAQ/LANG"
ref="$work/x/debian-reference-de/usr/share/debian-reference/debian-reference.de.txt.gz"
sorted() { LC_ALL=C ls "$@" | LC_ALL=C sort; }

mkdir -p "$dir/corpora"
for lang in ru ko; do
  faq_dir="${faq//LANG/$lang}"
  # shellcheck disable=SC2046
  python3 "$here/debian-doc-to-text.py" "$dir/corpora/${lang}_debian_docs.txt" \
    $(sorted "$guide/$lang"/*.html) $(sorted "$faq_dir"/*.html)
done
python3 "$here/debian-doc-to-text.py" "$dir/corpora/de_debian_reference.txt" "$ref"

{
  echo "# Corpora of bench-peers' tokbench protocol built from Debian packages"
  echo
  echo "Built by scripts/fetch-bench-corpora.sh on $(date -u +%Y-%m-%d) from Debian 12 packages:"
  echo
  for p in "${packages[@]}"; do echo "- \`$p\`"; done
  echo
  echo "| file | text | bytes | sha256 | license |"
  echo "|---|---|---:|---|---|"
} > "$dir/corpora/SOURCES.md"
status=0
for f in ru_debian_docs.txt de_debian_reference.txt ko_debian_docs.txt; do
  path="$dir/corpora/$f"
  sha="$(sha256sum "$path" | cut -d' ' -f1)"
  bytes="$(wc -c < "$path")"
  case "$f" in
    ru_*) what="installation-guide-amd64 ru/*.html, then debian-faq-ru FAQ/ru/*.html" ;;
    ko_*) what="installation-guide-amd64 ko/*.html, then debian-faq-ko FAQ/ko/*.html" ;;
    de_*) what="debian-reference-de debian-reference.de.txt.gz" ;;
  esac
  echo "| \`$f\` | $what | $bytes | \`$sha\` | GPL-2+ |" >> "$dir/corpora/SOURCES.md"
  if [ "$sha" = "${want[$f]}" ]; then
    echo "$f: $bytes bytes, sha256 as expected"
  else
    echo "$f: $bytes bytes, sha256 $sha differs from the expected ${want[$f]}:" \
      "figures on it are not comparable with ones on the expected text" >&2
    status=1
  fi
done
echo "corpora in $dir/corpora"
exit $status
