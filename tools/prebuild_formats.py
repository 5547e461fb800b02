#!/usr/bin/env python
"""Regenerates crates/corral-core/src/frontend/regex/prebuilt/formats.bin: the DFAs of the JSON Schema
``format`` patterns, built once and shipped in the library (see corral_core::prebuilt).

    python tools/prebuild_formats.py          # rewrite the table (then rebuild corral)
    python tools/prebuild_formats.py --check  # exit 1 if the table lacks a pattern

Run it (with corral built from this checkout) after changing a format's pattern
(crates/corral-core/src/json_schema/formats/) or the way the translator renders formats,
then rebuild. A stale table is never wrong (a pattern not in it is compiled as usual, and the
Rust tests check every entry against a fresh compile), only slower; the Python tests fail
when a format's pattern is missing from it.
"""

import argparse
import pathlib
import sys

from corral import _core

TABLE = pathlib.Path(__file__).resolve().parent.parent / "crates/corral-core/src/frontend/regex/prebuilt/formats.bin"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only report patterns missing from the shipped table")
    args = ap.parse_args()
    patterns = _core._format_sources()
    if args.check:
        missing = sorted(set(patterns) - set(_core._prebuilt_patterns()))
        for p in missing:
            print(f"missing: {p[:100]}", file=sys.stderr)
        return 1 if missing else 0
    table = _core._prebuild_table(patterns)
    TABLE.write_bytes(table)
    print(f"{TABLE}: {len(patterns)} patterns, {len(table):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
