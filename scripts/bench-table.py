#!/usr/bin/env python3
"""Print the results of `cargo bench --bench kernels` as a Markdown table.

Reads criterion's output (`<criterion dir>/<group>/<tier>/<size>/new/{benchmark.json,
estimates.json}`) and prints, for each kernel (criterion group) and input size, the throughput
of every tier in GB/s (10^9 bytes per second, from the *median* time per iteration and the
`Throughput::Bytes` recorded in benchmark.json), then each SIMD tier's speed-up over scalar.
Ratios below 0.95 (a SIMD tier clearly slower than scalar) are printed in bold.

Usage:
    python3 scripts/bench-table.py                  # target/criterion of this workspace
    python3 scripts/bench-table.py path/to/criterion
    python3 scripts/bench-table.py --filter 'crc32c'  # only groups matching a regex

The default directory is $CARGO_TARGET_DIR/criterion when that variable is set, else
target/criterion next to this script's parent directory. Results of every benchmark ever run
there are shown (criterion keeps them), so delete the directory first for a clean table.
"""

import argparse
import json
import os
import platform
import re
import sys

TIER_ORDER = ["scalar", "sse4.2", "avx2", "neon"]
KERNEL_ORDER = [
    "classify",
    "find_in",
    "find_not_in",
    "count_utf8_chars",
    "ascii_prefix_len",
    "crc32c",
    "crc32c_short",
    "prune_map",
    "prune_find_nonzero",
    "trie_prefix_search_batch",
    "trie_prefix_search",
]
# Groups whose parameter is not the buffer size.
PARAM_NOTES = {
    "crc32c_short": "piece length (1024 independent hashes per iteration; 4-16 = random lengths)",
}
# Ratios below this are printed in bold: the SIMD tier is clearly slower than scalar (a few
# percent either way is measurement noise).
SLOWER = 0.95
BYTE_UNITS = {"Bytes": 1, "BytesDecimal": 1, "Bits": 1 / 8}

# ARM CPU part numbers (implementer 0x41) of common server and desktop cores.
ARM_PARTS = {
    0xD03: "Cortex-A53",
    0xD05: "Cortex-A55",
    0xD07: "Cortex-A57",
    0xD08: "Cortex-A72",
    0xD0B: "Cortex-A76",
    0xD0C: "Neoverse N1",
    0xD40: "Neoverse V1",
    0xD41: "Cortex-A78",
    0xD49: "Neoverse N2",
    0xD4F: "Neoverse V2",
    0xD8E: "Neoverse N3",
    0xD84: "Neoverse V3",
}


def default_dir():
    target = os.environ.get("CARGO_TARGET_DIR")
    if not target:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        target = os.path.join(root, "target")
    return os.path.join(target, "criterion")


def cpu_model():
    """The CPU model from /proc/cpuinfo, and the number of logical CPUs."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            info = f.read()
    except OSError:
        return platform.processor() or platform.machine() or "unknown", os.cpu_count()
    fields = {}
    for line in info.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    cpus = len(re.findall(r"^processor\s*:", info, re.M)) or os.cpu_count()
    for key in ("model name", "Model", "Hardware", "cpu model"):
        if fields.get(key):
            return fields[key], cpus
    implementer, part = fields.get("CPU implementer"), fields.get("CPU part")
    if implementer and part:
        try:
            imp, prt = int(implementer, 0), int(part, 0)
        except ValueError:
            return f"CPU implementer {implementer}, part {part}", cpus
        name = ARM_PARTS.get(prt) if imp == 0x41 else None
        return name or f"CPU implementer {imp:#x}, part {prt:#x}", cpus
    return platform.processor() or platform.machine() or "unknown", cpus


def load(directory, group_filter):
    """{(group, size): {tier: GB/s}} from every `new/` result under `directory`."""
    results = {}
    for root, _dirs, files in os.walk(directory):
        if os.path.basename(root) != "new":
            continue
        if "benchmark.json" not in files or "estimates.json" not in files:
            continue
        try:
            with open(os.path.join(root, "benchmark.json"), encoding="utf-8") as f:
                bench = json.load(f)
            with open(os.path.join(root, "estimates.json"), encoding="utf-8") as f:
                estimates = json.load(f)
        except (OSError, ValueError) as e:
            print(f"warning: skipping {root}: {e}", file=sys.stderr)
            continue
        group = bench.get("group_id")
        tier = bench.get("function_id")
        size = bench.get("value_str")
        if group is None or tier is None or size is None:
            continue
        if group_filter and not re.search(group_filter, group):
            continue
        throughput = bench.get("throughput") or {}
        nbytes = None
        for unit, scale in BYTE_UNITS.items():
            if unit in throughput:
                nbytes = throughput[unit] * scale
        median_ns = estimates["median"]["point_estimate"]
        gbps = nbytes / median_ns if nbytes is not None and median_ns > 0 else None
        results.setdefault((group, size), {})[tier] = gbps
    return results


def order_key(items, name):
    return (items.index(name), "") if name in items else (len(items), name)


def size_key(size):
    m = re.match(r"\d+", size)
    return (0, int(size), "") if size.isdigit() else (1, int(m.group()) if m else 0, size)


def size_label(size):
    if not size.isdigit():
        return f"{size} B" if re.fullmatch(r"[\d-]+", size) else size
    n = int(size)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def fmt_gbps(value):
    if value is None:
        return "n/a"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def fmt_ratio(value):
    if value is None:
        return ""
    text = f"{value:.2f}×"
    return f"**{text}**" if value < SLOWER else text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", default=default_dir(), help="criterion output directory")
    parser.add_argument("--filter", help="only groups (kernels) matching this regex")
    args = parser.parse_args()

    if not os.path.isdir(args.dir):
        sys.exit(f"error: no criterion results at {args.dir}; run `cargo bench --bench kernels` first")
    results = load(args.dir, args.filter)
    if not results:
        sys.exit(f"error: no benchmark results under {args.dir}")

    tiers = sorted({t for r in results.values() for t in r}, key=lambda t: order_key(TIER_ORDER, t))
    simd = [t for t in tiers if t != "scalar"] if "scalar" in tiers else []
    rows = sorted(results, key=lambda gs: (order_key(KERNEL_ORDER, gs[0]), size_key(gs[1])))

    model, cpus = cpu_model()
    print(f"CPU: {model} ({cpus} logical CPUs, {platform.machine()})")
    print()
    print("Throughput in GB/s (10^9 input bytes per second, median time per iteration);")
    print("the last columns give each SIMD tier's speed-up over scalar (bold: below 0.95×, slower than scalar).")
    print()
    header = ["kernel", "size"] + [f"{t}" for t in tiers] + [f"{t} ÷ scalar" for t in simd]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join([":---", "---:"] + ["---:"] * (len(header) - 2)) + "|")
    previous = None
    for group, size in rows:
        speeds = results[(group, size)]
        base = speeds.get("scalar")
        cells = [f"`{group}`" if group != previous else "", size_label(size)]
        cells += [fmt_gbps(speeds.get(t)) if t in speeds else "" for t in tiers]
        for t in simd:
            v = speeds.get(t)
            cells.append(fmt_ratio(v / base) if v is not None and base else "")
        print("| " + " | ".join(cells) + " |")
        previous = group
    notes = [f"`{g}`: size = {note}." for g, note in PARAM_NOTES.items() if any(r[0] == g for r in rows)]
    if notes:
        print()
        for note in notes:
            print(note)


if __name__ == "__main__":
    main()
