#!/usr/bin/env python
"""Mask time per step of combined grammars (``g1 & g2``) on DeepSeek's vocabulary.

    python bench/bench_intersection.py --label after                 # one run, appended to the results
    python bench/bench_intersection.py --table                       # the table of every recorded run

Each constraint's matcher walks a fixed document (tokenized by DeepSeek's tokenizer,
129,280 ids), timing every ``fill_bitmask`` call; one untimed walk first fills the mask
caches, so the numbers are the steady state of a generation. Single-threaded. Each part
alone is timed the same way, for reference. The script only uses ``corral.compile``,
``matcher()``, ``fill_bitmask`` and ``advance``, so the same file measures any build of
corral: run it from an environment where another build is installed (with a ``--label``
of its own) to compare them.
"""

import os

for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402

import corral  # noqa: E402
from mask_timing import deepseek, median_p99_us, walk_times  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "intersection.json")

SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "speaker": {"type": "string", "pattern": "^[A-Z][A-Z ]{0,20}$"},
            "line": {"type": "string", "maxLength": 200},
        },
        "required": ["speaker", "line"],
        "additionalProperties": False,
    },
}

PLAY_EBNF = r"""
start  ::= speech+ ;
speech ::= name ":\n" verse+ "\n" ;
name   ::= /[A-Z][A-Z ]{1,20}/ ;
verse  ::= /[A-Z][A-Za-z',;:.!? -]{0,70}/ "\n" ;
"""

LINES = [
    ("ROMEO", "But soft, what light through yonder window breaks?"),
    ("ROMEO", "It is my lady, O, it is my love! O, that she knew she were!"),
    ("JULIET", "Ay me!"),
    ("ROMEO", "She speaks: O, speak again, bright angel!"),
    ("JULIET", "O Romeo, Romeo! wherefore art you Romeo?"),
    ("JULIET", "Deny your father, refuse your name."),
    ("ROMEO", "Shall I hear more, or shall I speak at this?"),
    ("JULIET", "What's in a name? That which we call a rose"),
    ("JULIET", "By any other name would smell as sweet."),
]


def documents():
    """(name, grammar, text): each text satisfies every part of its grammar."""
    ban = corral.Grammar.ban(["the", "and", "thou"], ignore_case=True, whole_words=True)
    play = "".join(f"{who}:\n{line}\n\n" for who, line in LINES)
    dialogue = json.dumps([{"speaker": who, "line": line} for who, line in LINES], separators=(",", ":"))
    speaker_lines = corral.Grammar.regex(r"([A-Z][A-Z ]{0,20}:\n([A-Za-z ,;:.!?'-]{1,80}\n){1,6}\n)+")
    return [
        ("regex & ban", speaker_lines & ban, play),
        ("json schema & ban", corral.Grammar.json_schema(SCHEMA) & ban, dialogue),
        ("ebnf & regex & ban", corral.Grammar.ebnf(PLAY_EBNF) & corral.Grammar.regex(r"[^0-9]*") & ban, play),
    ]


def timed(compiled, ids, width, repeats):
    """Median and p99 (µs) of every mask along ``ids``, after an untimed walk."""
    walk_times(compiled, ids, width, 1)
    gc.disable()
    try:
        return median_p99_us(walk_times(compiled, ids, width, repeats))
    finally:
        gc.enable()


def run(label, repeats):
    tok = deepseek()
    vocab = tok.vocab
    rows = []
    for name, grammar, text in documents():
        ids = list(tok.encode(text))
        compiled = corral.compile(grammar, vocab)
        median, p99 = timed(compiled, ids, vocab.mask_width, repeats)
        parts = [timed(corral.compile(p, vocab), ids, vocab.mask_width, repeats)[0] for p in grammar.parts]
        rows.append({"constraint": name, "steps": len(ids), "median_us": median, "p99_us": p99, "parts_median_us": parts})
        print(f"{label:10} {name:22} {len(ids):4} steps  median {median:8.1f} µs  p99 {p99:8.1f} µs  parts {parts}", flush=True)
    return {
        "label": label,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "python": sys.version.split()[0],
        "corral": os.path.dirname(corral.__file__),
        "repeats": repeats,
        "rows": rows,
    }


def table(runs):
    """Markdown: one row per constraint, median / p99 of each run in recorded order."""
    names = [r["constraint"] for r in runs[0]["rows"]] if runs else []
    head = " | ".join(f"{r['label']} ({r['date'][11:16]}) median / p99" for r in runs)
    lines = [
        "# Combined grammars: mask time per step",
        "",
        "`bench/bench_intersection.py`: µs per `fill_bitmask` along a fixed document on DeepSeek's "
        "129,280-id vocabulary, single-threaded, after one untimed walk (steady state), "
        f"{runs[0]['repeats'] if runs else 0} walks per run. `before`: the numpy AND of the parts' "
        "masks in Python; `after`: the native intersection matcher. "
        + (f"Machine: {runs[0]['machine']}, Python {runs[0]['python']}." if runs else ""),
        "",
        f"| constraint | steps | {head} | each part alone, median (last run) |",
        "|---|---:|" + "---:|" * (len(runs) + 1),
    ]
    for i, name in enumerate(names):
        cells = " | ".join(f"{r['rows'][i]['median_us']:.1f} / {r['rows'][i]['p99_us']:.1f}" for r in runs)
        alone = ", ".join(f"{us:.1f}" for us in runs[-1]["rows"][i]["parts_median_us"])
        lines.append(f"| {name} | {runs[0]['rows'][i]['steps']} | {cells} | {alone} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", help="record one run under this name")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--table", action="store_true", help="write results/intersection.md from the recorded runs")
    parser.add_argument("--results", default=RESULTS)
    args = parser.parse_args(argv)
    runs = []
    if os.path.exists(args.results):
        with open(args.results) as f:
            runs = json.load(f)
    if args.label:
        runs.append(run(args.label, args.repeats))
        with open(args.results, "w") as f:
            json.dump(runs, f, indent=1)
    if args.table:
        text = table(runs)
        with open(os.path.join(os.path.dirname(args.results), "intersection.md"), "w") as f:
            f.write(text)
        print(text)


if __name__ == "__main__":
    main()
