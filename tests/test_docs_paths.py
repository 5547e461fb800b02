"""Every source path the docs name exists, so that the map of the code stays true as the
code moves. A path with a folder is looked up from the places the docs write paths from
(the repository, the core's and the binding's sources, the Python package); a bare file
name must exist somewhere in the sources."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BASES = [
    ROOT,
    ROOT / "crates/corral-core/src",
    ROOT / "crates/corral-core/src/frontend",
    ROOT / "crates/corral-core",
    ROOT / "crates/corral-py/src",
    ROOT / "python/corral",
    ROOT / "python",
    ROOT / "bench",
]
# Paths in other projects (vLLM's sources and docs) and in the JSON Schema Test Suite.
EXTERNAL = {
    "vllm/v1/sample/logits_processor/interface.py",
    "docs/design/logits_processors.md",
    "docs/features/custom_logitsprocs.md",
    "docs/features/custom_arguments.md",
    "optional/",
    "tests/draft2020-12/",
}
PATH = re.compile(r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*(?:\.rs|\.py|\.pyi|\.md|/))`")
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md", ROOT / "bench/README.md"]


def source_names() -> set[str]:
    names: set[str] = set()
    for top in ("crates", "python", "tests", "bench", "tools"):
        names.update(p.name for p in (ROOT / top).rglob("*") if "target" not in p.parts)
    return names


def named_paths(text: str) -> list[str]:
    return [p for p in PATH.findall(text) if p not in EXTERNAL]


def missing(paths: list[str], names: set[str]) -> list[str]:
    gone = []
    for p in paths:
        if "/" in p.rstrip("/"):
            found = any((base / p).exists() for base in BASES)
        else:
            found = p.rstrip("/") in names
        if not found:
            gone.append(p)
    return gone


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    assert missing(named_paths(doc.read_text(encoding="utf-8")), source_names()) == []


def test_the_check_finds_a_path_that_is_gone() -> None:
    names = source_names()
    text = "see `index/cfg_mask.rs`, `index/no_such_walker.rs` and `nowhere.py`"
    assert missing(named_paths(text), names) == ["index/no_such_walker.rs", "nowhere.py"]
