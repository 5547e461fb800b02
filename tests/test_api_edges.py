"""The edges of corral's surface: the command line's --version, --help defaults, flag names in
its errors and file positions in its messages; type errors for values of the wrong kind; the
one spelling of the EOS argument; matcher reprs; transformers models without deprecation
warnings."""

from __future__ import annotations

import argparse
import base64
import importlib.metadata
import inspect
import json
import logging
import re
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import corral
import corral.models
from corral import cli
from corral.models import TrivialModel

BYTES_VOCAB = corral.Vocabulary.from_token_bytes([bytes([i]) for i in range(256)] + [b""], eos_token_ids=[256])


def run_cli(capsys, *args):
    """``corral *args`` in this process: (exit status, stdout, stderr)."""
    try:
        status = cli.main(list(args))
    except SystemExit as e:  # argparse's --version and --help
        status = e.code
    out = capsys.readouterr()
    return status, out.out, out.err


def place(text: str, needle: str) -> str:
    """``line:column`` (1-based) of the first ``needle`` in ``text``."""
    offset = text.index(needle)
    return f"{text.count(chr(10), 0, offset) + 1}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


# --- --version ----------------------------------------------------------------------------


def test_version_flag_prints_the_installed_version(capsys):
    status, out, err = run_cli(capsys, "--version")
    assert status == 0 and err == ""
    assert out == f"corral {importlib.metadata.version('corral')}\n"
    proc = subprocess.run([sys.executable, "-m", "corral", "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == out


def test_version_falls_back_to_the_package_version(capsys, monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    status, out, _ = run_cli(capsys, "--version")
    assert status == 0 and out == f"corral {corral.__version__}\n"


# --- --help -------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _help_entry(help_text: str, flag: str) -> str:
    """The help of option ``flag``: its line and the continuation lines under it."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+{re.escape(flag)}(\s|,|$)", line))
    entry = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.strip() or re.match(r"\s{1,4}-", line) or not line.startswith(" "):
            break
        entry.append(line)
    return " ".join(" ".join(entry).split())


def test_help_of_every_subcommand_shows_every_default(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    subcommands = _subcommands(cli.build_parser())
    assert set(subcommands) >= {"generate", "demo"}
    checked = 0
    for name, parser in subcommands.items():
        text = parser.format_help()
        for action in parser._actions:
            default = action.default
            if not action.option_strings or default is None or default is False or default == argparse.SUPPRESS:
                continue
            entry = _help_entry(text, action.option_strings[0])
            assert "(default: " in entry, (name, entry)
            if default != "":
                assert f"(default: {default})" in entry, (name, entry)
            checked += 1
    assert checked >= 9  # generate: 6 (--prompt's is ""), demo: 3


# --- one default for the command line and the API ------------------------------------------


def test_command_line_defaults_are_the_api_defaults():
    args = cli.build_parser().parse_args(["generate"])
    generate = inspect.signature(corral.generate).parameters
    for name in ("max_tokens", "temperature", "top_k", "top_p", "seed", "max_rollbacks"):
        assert getattr(args, name) == generate[name].default, name
    ban = inspect.signature(corral.Grammar.ban).parameters
    assert args.ban_mode == ban["mode"].default
    assert args.ignore_case == ban["ignore_case"].default and args.whole_words == ban["whole_words"].default
    # --whitespace defaults to each constructor's own default.
    for constructor in (corral.Grammar.json_schema, corral.Grammar.structural_tag):
        assert cli._whitespace(args, constructor) == inspect.signature(constructor).parameters["whitespace"].default


# --- errors name flags on the command line, arguments in the API ---------------------------


@pytest.mark.parametrize(
    "flag, value, python_value",
    [
        ("--top-p", "2", 2.0),
        ("--top-k", "0", 0),
        ("--max-tokens", "-1", -1),
        ("--temperature", "-1", -1.0),
        ("--seed", "-4", -4),
        ("--max-rollbacks", "-1", -1),
    ],
)
def test_setting_errors_name_the_flag(capsys, flag, value, python_value):
    status, out, err = run_cli(capsys, "generate", "--regex", "a", flag, value)
    python_name = flag[2:].replace("-", "_")
    assert status == 2 and out == ""
    assert err.startswith(f"corral: error: {flag} "), err
    assert not re.search(rf"(?<![\w-]){python_name}", err), err
    # The API's own message names the Python argument, and says which one it is about.
    with pytest.raises(corral.GenerationError, match=rf"^{python_name} ") as info:
        corral.generate(TrivialModel(), "x", None, **{python_name: python_value})
    assert info.value.parameters == (python_name,)


def test_rollback_limit_names_the_flags(capsys):
    status, _, err = run_cli(
        capsys, "generate", "--prompt", "ROMEO:\n", "--ban", "e", "--ban-mode", "rollback", "--max-rollbacks", "0",
        "--seed", "0", "--max-tokens", "40",
    )
    assert status == 2
    assert "--max-rollbacks" in err and "--ban-mode mask" in err, err
    assert "max_rollbacks" not in err and "mode=" not in err, err
    # The API's own message names the Python arguments.
    ban = corral.Grammar.ban(["e"], mode="rollback")
    with pytest.raises(corral.RollbackLimitError, match="max_rollbacks.*mode='mask'") as info:
        corral.generate(corral.models.BuiltinModel(), "ROMEO:\n", ban, seed=0, max_tokens=40, max_rollbacks=0)
    assert set(info.value.parameters) == {"max_rollbacks", "mode"}


# --- errors about a file's content say file:line:column ------------------------------------


@pytest.mark.parametrize(
    "suffix, text",
    [
        (".ebnf", 'start ::= "a" tail ;\ntail ::= "b" missing ;\n'),
        (".gbnf", 'root ::= "a" tail\ntail ::= "b" missing\n'),
        (".lark", 'start: "a" tail\ntail: "b" missing\n'),
    ],
)
def test_grammar_file_errors_say_file_line_column(capsys, tmp_path, suffix, text):
    path = tmp_path / f"answer{suffix}"
    path.write_text(text)
    status, out, err = run_cli(capsys, "generate", "--grammar", str(path))
    assert status == 2 and out == ""
    assert err.startswith(f"corral: error: {path}:{place(text, 'missing')}: ") and "missing" in err, err
    # The same grammar on stdin is named <stdin>.
    fmt = suffix[1:]
    proc = subprocess.run(
        [sys.executable, "-m", "corral", "generate", "--grammar", "-", "--grammar-format", fmt],
        input=text, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.startswith(f"corral: error: <stdin>:{place(text, 'missing')}: ")


def test_schema_file_errors_point_at_the_keyword(capsys, tmp_path):
    path = tmp_path / "person.json"
    cases = [
        ({"type": "object", "properties": {"age": {"type": "integr"}}}, '"integr"'),
        ({"type": "object", "properties": {"name": {"type": "string", "pattern": "(("}}}, '"(("'),
        ({"anyOf": [{"type": "string"}, {"type": "number", "minimum": "zero"}]}, '"zero"'),
    ]
    for schema, needle in cases:
        body = json.dumps(schema, indent=2)
        path.write_text(body)
        status, _, err = run_cli(capsys, "generate", "--json-schema", str(path))
        assert status == 2 and err.startswith(f"corral: error: {path}:{place(body, needle)}: "), err
    path.write_text("\n  [1, 2]\n")
    status, _, err = run_cli(capsys, "generate", "--json-schema", str(path))
    assert status == 2 and err.startswith(f"corral: error: {path}:2:3: "), err


def test_undecodable_file_says_where(capsys, tmp_path):
    data = 'start ::= "a" tail ;\ntail ::= "\xff" ;\n'.encode("latin-1")
    path = tmp_path / "latin1.ebnf"
    path.write_bytes(data)
    status, _, err = run_cli(capsys, "generate", "--grammar", str(path))
    bad = data.index(b"\xff")
    column = bad - (data.rindex(b"\n", 0, bad) + 1) + 1
    assert status == 2 and err.startswith(f"corral: error: {path}:2:{column}: not UTF-8"), err


def test_grammar_warnings_name_the_file(capsys, tmp_path):
    path = tmp_path / "unused.ebnf"
    path.write_text('start ::= "a" ;\nunused ::= "b" ;\n')
    status, out, err = run_cli(capsys, "generate", "--grammar", str(path))
    assert status == 0 and out == "a\n"
    assert err.startswith(f"corral: warning: {path}: ") and "unused" in err and "Warning" not in err, err


def _json_values():
    leaves = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
    return st.recursive(
        leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=12,
    )


def _pointers(value, prefix=""):
    yield prefix, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _pointers(v, f"{prefix}/{k.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _pointers(v, f"{prefix}/{i}")


@settings(max_examples=150, deadline=None)
@given(_json_values(), st.sampled_from([None, 0, 2]))
def test_json_pointer_offset_finds_the_value(doc, indent):
    text = json.dumps(doc, indent=indent)
    decoder = json.JSONDecoder()
    for pointer, value in _pointers(doc):
        offset = cli._json_pointer_offset(text, pointer)
        assert offset is not None, pointer
        assert decoder.raw_decode(text, offset)[0] == value, pointer
    assert cli._json_pointer_offset(text, "/no such key/9") is None


# --- a value of the wrong kind is a TypeError that says what to pass -----------------------


def _grammar_entry_points():
    from corral.integrations import transformers as hf, vllm
    from corral.integrations.llama_cpp import CorralLlamaLogitsProcessor

    llama = types.SimpleNamespace(n_vocab=lambda: BYTES_VOCAB.size)
    return {
        "compile": lambda g: corral.compile(g, BYTES_VOCAB),
        "generate": lambda g: corral.generate(TrivialModel(), "x", g),
        "transformers": lambda g: hf.CorralLogitsProcessor(g, vocab=BYTES_VOCAB),
        "vllm": lambda g: vllm.CorralRequestLogitsProcessor(g, BYTES_VOCAB),
        "llama_cpp": lambda g: CorralLlamaLogitsProcessor(g, llama, vocab=BYTES_VOCAB),
    }


@pytest.mark.parametrize("entry", ["compile", "generate", "transformers", "vllm", "llama_cpp"])
def test_a_str_for_a_grammar_is_a_type_error(entry):
    call = _grammar_entry_points()[entry]
    with pytest.raises(TypeError, match=r"corral\.Grammar.*got str 'a\+'.*Grammar\.regex\('a\+'\)"):
        call("a+")
    with pytest.raises(TypeError, match=r"corral\.Grammar.*got dict"):
        call({"type": "string"})


def test_a_grammar_and_a_str_is_a_type_error():
    # Grammar.__and__ declines a str, so Python raises its own TypeError.
    with pytest.raises(TypeError, match="unsupported operand"):
        corral.Grammar.regex("a") & "x"
    with pytest.raises(TypeError, match="unsupported operand"):
        "x" & corral.Grammar.regex("a")


def test_a_wrong_vocabulary_model_or_tokenizer_is_a_type_error():
    from corral.integrations import transformers as hf
    from corral.integrations.llama_cpp import CorralLlamaLogitsProcessor

    grammar = corral.Grammar.regex("a+")
    with pytest.raises(TypeError, match=r"corral\.Vocabulary, got str 'gpt2'.*from_huggingface"):
        corral.compile(grammar, "gpt2")
    with pytest.raises(TypeError, match=r"corral\.Vocabulary, got str"):
        hf.CorralLogitsProcessor(grammar, vocab="gpt2")
    with pytest.raises(TypeError, match=r"transformers tokenizer.*AutoTokenizer"):
        hf.CorralLogitsProcessor(grammar, "gpt2")
    with pytest.raises(TypeError, match=r"corral\.Vocabulary, got str"):
        CorralLlamaLogitsProcessor(grammar, types.SimpleNamespace(n_vocab=lambda: 257), vocab="x")
    with pytest.raises(TypeError, match=r"llama_cpp\.Llama, got str"):
        CorralLlamaLogitsProcessor(grammar, "model.gguf", vocab=BYTES_VOCAB)
    with pytest.raises(TypeError, match=r"model must be .* got dict"):
        corral.generate({"a": 1}, "x")
    with pytest.raises(TypeError, match=r"TransformersModel expects a transformers causal LM, got str"):
        corral.models.TransformersModel("gpt2", None)
    with pytest.raises(TypeError, match=r"CharLevelModel expects a token-level model .* got str"):
        corral.models.CharLevelModel("gpt2")
    with pytest.raises(TypeError, match=r"on_text must be a function"):
        corral.generate(TrivialModel(), "x", on_text="print")


def test_a_list_of_prompts_is_a_type_error():
    model = TrivialModel()
    expected = r"prompt must be a str or a sequence of token ids .* item 0 is str 'a'.*once per prompt"
    with pytest.raises(TypeError, match=expected):
        corral.generate(model, ["a", "b"])
    with pytest.raises(TypeError, match=r"prompt must be a str .* got bytes"):
        corral.generate(model, b"ab")
    with pytest.raises(TypeError, match=r"prompt must be a str .* got None"):
        corral.generate(model, None)
    with pytest.raises(TypeError, match=r"item 1 is float"):
        corral.generate(model, [1, 2.5])
    # Token ids in any integer form are one prompt.
    ids = model.encode("The King")
    grammar = corral.Grammar.regex("[a-z]{3,6}")
    want = corral.generate(model, ids, grammar, temperature=0).text
    assert corral.generate(model, np.array(ids, dtype=np.int64), grammar, temperature=0).text == want
    assert corral.generate(model, tuple(np.int32(i) for i in ids), grammar, temperature=0).text == want


# --- EOS: eos_token_ids= everywhere --------------------------------------------------------


def test_every_vocabulary_constructor_takes_eos_token_ids():
    for name in ("from_token_bytes", "from_huggingface", "from_tokenizer_file", "from_tiktoken", "from_sentencepiece"):
        assert "eos_token_ids" in inspect.signature(getattr(corral.Vocabulary, name)).parameters, name


def test_eos_token_ids_takes_one_id_or_a_list():
    tokens = [b"a", b"b", b"<e>", b"<f>"]
    one = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=2)
    assert one.eos_token_ids == [2] and one.fingerprint == corral.Vocabulary.from_token_bytes(tokens, [2]).fingerprint
    assert corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=(2, 3)).eos_token_ids == [2, 3]
    with pytest.raises(TypeError, match="eos_token_ids"):
        corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=True)


def _builtin_tokenizer_json():
    path = corral.models.builtin_model_path() / "tokenizer.json"
    return path, json.loads(path.read_text())["model"]["vocab"]["<|endoftext|>"]


def test_old_eos_spelling_of_from_tokenizer_file_warns_and_still_works():
    path, end = _builtin_tokenizer_json()
    new = corral.Vocabulary.from_tokenizer_file(path, eos_token_ids="<|endoftext|>")
    assert new.eos_token_ids == [end]
    assert corral.Vocabulary.from_tokenizer_file(path, eos_token_ids=end).fingerprint == new.fingerprint
    with pytest.warns(DeprecationWarning, match="eos_token_ids") as caught:
        old = corral.Vocabulary.from_tokenizer_file(path, eos_token="<|endoftext|>")
    assert old.fingerprint == new.fingerprint
    assert caught[0].filename == __file__  # the warning points at the caller
    with pytest.raises(TypeError, match="eos_token_ids"):
        corral.Vocabulary.from_tokenizer_file(path, eos_token_ids=end, eos_token="<|endoftext|>")


def test_old_eos_spelling_of_from_tiktoken_warns_and_still_works(tmp_path):
    ranks = tmp_path / "tiny.tiktoken"
    ranks.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    specials = {"<|endoftext|>": 256, "<|im_end|>": 257}
    new = corral.Vocabulary.from_tiktoken(ranks, special_tokens=specials, eos_token_ids=[257])
    assert new.eos_token_ids == [257]
    one = corral.Vocabulary.from_tiktoken(ranks, special_tokens=specials, eos_token_ids=257)
    assert one.fingerprint == new.fingerprint
    by_text = corral.Vocabulary.from_tiktoken(ranks, special_tokens=specials, eos_token_ids=["<|im_end|>"])
    assert by_text.fingerprint == new.fingerprint
    with pytest.warns(DeprecationWarning, match="eos_token_ids"):
        old = corral.Vocabulary.from_tiktoken(ranks, special_tokens=specials, eos_tokens=["<|im_end|>"])
    assert old.fingerprint == new.fingerprint
    with pytest.raises(TypeError, match="eos_token_ids"):
        corral.Vocabulary.from_tiktoken(ranks, special_tokens=specials, eos_token_ids=[257], eos_tokens=[257])


def test_from_huggingface_takes_eos_token_ids():
    transformers = pytest.importorskip("transformers")  # in the test extra: never skips in CI
    tokenizer = transformers.AutoTokenizer.from_pretrained(corral.models.builtin_model_path())
    _, end = _builtin_tokenizer_json()
    default = corral.Vocabulary.from_huggingface(tokenizer)
    assert default.eos_token_ids == [tokenizer.eos_token_id] == [end]
    other = corral.Vocabulary.from_huggingface(tokenizer, eos_token_ids=5)
    assert other.eos_token_ids == [5] and other.token_kind(5) == "eos"


def test_no_eos_error_names_the_new_argument(tmp_path):
    ranks = tmp_path / "tiny.tiktoken"
    ranks.write_text("IQ== 0\nIg== 1\n")
    with pytest.raises(corral.VocabularyError, match="eos_token_ids="):
        corral.Vocabulary.from_tiktoken(ranks)


# --- matcher reprs -------------------------------------------------------------------------


def _repr_fields(m) -> str:
    return f"tokens={m.num_tokens} accepting={m.is_accepting()} finished={m.is_finished()}"


def test_matcher_repr_shows_the_grammar_and_the_position():
    m = corral.compile(corral.Grammar.regex("a+b"), BYTES_VOCAB).matcher()
    assert repr(m).startswith("<corral.Matcher regex /a+b/ ") and repr(m).endswith(_repr_fields(m) + ">")
    for tok in b"aab":
        assert m.advance(tok)
        assert repr(m).endswith(_repr_fields(m) + ">")
    assert m.is_accepting() and "accepting=True" in repr(m)
    assert m.advance(256) and "finished=True" in repr(m)
    cfg = corral.compile(corral.Grammar.ebnf('start ::= "x" start | "y" ;'), BYTES_VOCAB).matcher()
    assert repr(cfg).startswith("<corral.Matcher ebnf") and repr(cfg).endswith(_repr_fields(cfg) + ">")


def test_matcher_repr_is_bounded():
    long = corral.compile(corral.Grammar.regex("(abc|d\n)" * 300), BYTES_VOCAB).matcher()
    assert len(repr(long)) < 200 and "\n" not in repr(long)


def test_intersection_matcher_repr():
    m = corral.compile(corral.Grammar.regex("[a-z]+") & corral.Grammar.ban(["bad"]), BYTES_VOCAB).matcher()
    assert isinstance(m, corral.IntersectionMatcher)
    assert m.advance(ord("b"))
    assert repr(m) == f"<corral.IntersectionMatcher of 2 grammars {_repr_fields(m)}>"


# --- transformers models: the cache argument the installed version expects ------------------


def _tiny_llama():
    torch = pytest.importorskip("torch")  # in the test extra: never skips in CI
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(corral.models.builtin_model_path())
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=2048, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128)
    return LlamaForCausalLM(config).eval(), tokenizer


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_transformers_generation_uses_the_current_cache_argument():
    lm, tokenizer = _tiny_llama()
    # transformers reports deprecated names once per process, through its logger or a
    # FutureWarning: forget what it already said, then catch both.
    cache_clear = getattr(logging.Logger.warning_once, "cache_clear", None)
    if cache_clear is not None:
        cache_clear()
    records = _Records()
    logger = logging.getLogger("transformers")
    logger.addHandler(records)
    pattern = r"[a-z]{2,6}( [a-z]{2,6}){1,3}\."
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = corral.models.TransformersModel(lm, tokenizer)
            out = corral.generate(model, "ROMEO:\n", corral.Grammar.regex(pattern), seed=0, max_tokens=30)
            # A rollback crops the cache.
            ban = corral.Grammar.ban(["e"], mode="rollback")
            banned = corral.generate(model, "ROMEO:\n", corral.Grammar.regex(pattern) & ban, seed=1, max_tokens=30)
    finally:
        logger.removeHandler(records)
    assert re.fullmatch(pattern, out.text) and "e" not in banned.text
    assert [m for m in records.messages if "deprecat" in m.lower()] == []


def _old_style_lm(vocab_size: int):
    """A causal LM with the older interface: ``past_key_values`` in and out, no ``cache``."""
    torch = pytest.importorskip("torch")

    class Cache:
        def __init__(self, length):
            self.length = length

        def get_seq_length(self):
            return self.length

        def crop(self, n):
            self.length = self.length + n if n < 0 else n

    class OldLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.embed = torch.nn.Embedding(vocab_size, 8)
            self.head = torch.nn.Linear(8, vocab_size)
            self.config = types.SimpleNamespace(max_position_embeddings=512)
            self.calls = []

        def get_output_embeddings(self):
            return self.head

        def forward(self, input_ids=None, past_key_values=None, use_cache=False):
            read = 0 if past_key_values is None else past_key_values.get_seq_length()
            self.calls.append((read, input_ids.shape[1]))
            logits = self.head(self.embed(input_ids))
            return types.SimpleNamespace(logits=logits, past_key_values=Cache(read + input_ids.shape[1]))

    return OldLM()


def test_transformers_model_with_the_older_cache_argument():
    from corral.models.transformers_lm import cache_argument

    lm, tokenizer = _tiny_llama()
    expected = "cache" if "cache" in inspect.signature(lm.forward).parameters else "past_key_values"
    assert cache_argument(lm) == expected
    old = _old_style_lm(len(tokenizer))
    assert cache_argument(old) == "past_key_values"
    model = corral.models.TransformersModel(old, tokenizer)
    prompt = model.encode("ROMEO:\n")
    out = corral.generate(model, prompt, corral.Grammar.regex("[a-z]{4}"), seed=0)
    assert re.fullmatch("[a-z]{4}", out.text)
    # The cache was passed back in: after the prompt, one new position per call.
    assert old.calls[0] == (0, len(prompt)) and all(new == 1 for _, new in old.calls[1:])


def test_vllm_processors_repr():
    from corral.integrations import vllm

    proc = vllm.CorralRequestLogitsProcessor(corral.Grammar.regex("ab"), BYTES_VOCAB)
    torch = pytest.importorskip("torch")
    proc([ord("a")], torch.zeros(BYTES_VOCAB.size))
    assert repr(proc) == f"<CorralRequestLogitsProcessor output=1 tokens, {proc.matcher!r}>"
    assert "tokens=1 accepting=False finished=False" in repr(proc)
    batch = vllm.CorralLogitsProcessor(None, "cpu")
    assert repr(batch) == "<CorralLogitsProcessor constrained_rows=0 vocab=not loaded>"
