#!/usr/bin/env bash
# CI smoke run of corral's fuzz targets (see fuzz/README.md).
#
# With a nightly toolchain and cargo-fuzz: each Rust target fuzzes for SMOKE_SECONDS
# (default 10; seven targets, about a minute in all, bounded by -max_total_time) from its
# seed corpus. Without them: the stable replay test (seeds, recorded findings and
# pseudo-random inputs through the same target bodies). Then, if atheris is importable and
# the native module is built, the JSON Schema target runs its seeds and 300 more inputs.
# Exits non-zero on any crash, timeout, out-of-memory or failed check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
seconds=${SMOKE_SECONDS:-10}
targets=(regex ebnf gbnf lark vocabulary matcher structural)

if cargo +nightly --version >/dev/null 2>&1 && cargo +nightly fuzz --version >/dev/null 2>&1; then
    cd "$here"
    cargo +nightly fuzz build -s none --features libfuzzer
    for t in "${targets[@]}"; do
        dict=()
        [ -f "dicts/$t.dict" ] && dict=("-dict=dicts/$t.dict")
        work=$(mktemp -d)
        echo "== fuzz target $t: ${seconds}s"
        cargo +nightly fuzz run -s none --features libfuzzer "$t" "$work" "seeds/$t" -- \
            -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}"
        rm -rf "$work"
    done
else
    echo "== no nightly cargo-fuzz: running the stable replay test"
    cargo test --release --manifest-path "$here/Cargo.toml"
fi

# The native module of this checkout if it was built in place, else the installed corral.
if [ -e "$root/python/corral/_core.so" ]; then export PYTHONPATH="$root/python"; fi
if python3 -c "import atheris, corral._core" >/dev/null 2>&1; then
    # -runs counts the seeds too: every seed, then 300 mutated inputs.
    seeds=$(find "$here/python/seeds" -type f | wc -l)
    work=$(mktemp -d)
    echo "== fuzz target json_schema (atheris): the seeds and 300 more inputs"
    python3 "$here/python/fuzz_json_schema.py" "$work" "$here/python/seeds" \
        -runs=$((seeds + 300)) -max_total_time=120 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    rm -rf "$work"
else
    echo "== json_schema: atheris or corral is not importable" >&2
    exit 1
fi
