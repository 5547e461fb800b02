"""corral as SGLang's grammar backend, driven through SGLang's own code (the installed
`sglang` package, CPU only, no model): the plugin entry point and registry, the backend's
dispatch and cache as SGLang's grammar manager calls them, and a batch loop over SGLang's
real `BaseGrammarObject` API with seeded logits, mixing JSON Schema, regex, EBNF and
structural-tag requests, rollbacks, copies and reasoning; every output is validated
(`jsonschema`, `re`, corral's own matcher for the grammars)."""

from __future__ import annotations

import json
import random
import re
from importlib.metadata import entry_points

import jsonschema
import pytest
import torch
from sglang.srt.constrained import base_grammar_backend as sgl_base
from sglang.srt.constrained.base_grammar_backend import GrammarRow, InvalidGrammarObject

import corral
from corral.integrations import sglang as corral_sglang

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 10},
        "days": {"type": "integer", "minimum": 1, "maximum": 9},
        "tags": {"type": "array", "items": {"enum": ["sun", "rain", 3]}, "uniqueItems": True},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
REGEX = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])"
EBNF = 'root ::= "(" item ("," item)* ")"\nitem ::= [a-c]+ | root'
TAG = {
    "type": "structural_tag",
    "format": {
        "type": "triggered_tags",
        "triggers": ["<call>"],
        "tags": [{"type": "tag", "begin": "<call>", "content": {"type": "json_schema", "json_schema": SCHEMA}, "end": "</call>"}],
        "at_least_one": True,
        "stop_after_first": True,
    },
}
REQUESTS = [("json", json.dumps(SCHEMA)), ("regex", REGEX), ("ebnf", EBNF), ("structural_tag", json.dumps(TAG))]


@pytest.fixture(scope="module")
def hf_tokenizer(deepseek_hf):
    return deepseek_hf


@pytest.fixture(scope="module")
def backend(hf_tokenizer):
    corral_sglang.register()

    class Args:  # the server arguments the backend reads
        constrained_json_disable_any_whitespace = False
        constrained_json_max_whitespace_cnt = 2
        reasoning_parser = None

    vocab_size = len(hf_tokenizer)
    return sgl_base.GRAMMAR_BACKEND_REGISTRY["corral"](Args(), hf_tokenizer, vocab_size, {hf_tokenizer.eos_token_id})


def test_the_entry_point_registers_the_backend():
    # What sglang.srt.plugins.load_plugins finds and runs in every SGLang process.
    (ep,) = [e for e in entry_points(group="sglang.srt.plugins") if e.name == "corral"]
    assert ep.value == "corral.integrations.sglang:register"
    sgl_base.GRAMMAR_BACKEND_REGISTRY.pop("corral", None)
    from sglang.srt import plugins

    plugins._plugins_loaded = False
    plugins.load_plugins()
    assert sgl_base.GRAMMAR_BACKEND_REGISTRY["corral"] is corral_sglang.create_backend
    from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES

    assert GRAMMAR_BACKEND_CHOICES.count("corral") == 1
    corral_sglang.register()
    assert GRAMMAR_BACKEND_CHOICES.count("corral") == 1


def test_the_command_line_accepts_the_backend():
    # What `python -m sglang.launch_server ... --grammar-backend corral` parses, after the
    # load_plugins() it runs first.
    import argparse

    from sglang.srt import plugins
    from sglang.srt.server_args import ServerArgs

    plugins._plugins_loaded = False
    plugins.load_plugins()
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    assert parser.parse_args(["--model-path", "m", "--grammar-backend", "corral"]).grammar_backend == "corral"


def _compile(backend, key, reasoning=False):
    """As SGLang's grammar manager does: the cache, else a future on the executor."""
    value, hit = backend.get_cached_or_future_value(key, reasoning)
    if not hit:
        value = value.result(timeout=120)
        backend.set_cache(key, value.copy())
    return value, hit


def test_refusals_become_invalid_grammar_objects(backend):
    for key in [("json", '{"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}'), ("regex", "(a"), ("ebnf", "root ::= undefined_rule"), ("json", "{not json")]:
        value, _ = _compile(backend, key)
        assert isinstance(value, InvalidGrammarObject), key
        assert value.error_message and "Unknown" not in value.error_message
    value, _ = _compile(backend, ("regex", "(a"))
    assert "position" in value.error_message or "missing" in value.error_message, value.error_message


def test_cache_hits_share_the_compiled_grammar(backend):
    first, hit = _compile(backend, ("regex", REGEX))
    again, hit2 = _compile(backend, ("regex", REGEX))
    assert not hit and hit2
    assert again is not first and again.compiled is first.compiled
    assert again.grammar_stats.is_cache_hit


def _validate(kind, text):
    if kind == "json":
        jsonschema.validate(json.loads(text), SCHEMA)
    elif kind == "regex":
        assert re.fullmatch(REGEX, text), text
    elif kind == "ebnf":
        assert corral.compile(corral.Grammar.gbnf(EBNF), corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"$"], eos_token_ids=[256])).matches(text.encode())
    else:
        start, end = text.index("<call>") + len("<call>"), text.index("</call>")
        jsonschema.validate(json.loads(text[start:end]), SCHEMA)


def test_batch_loop_through_sglangs_api(backend, hf_tokenizer):
    """SGLang's decode step, as SamplingBatchInfo.update_regex_vocab_mask and the sampler
    run it: allocate, fill the batch's rows in one call, move, apply, sample, accept; with
    rollbacks of a few tokens (speculative rejections) and requests that reuse a cached
    grammar (copies)."""
    rng = random.Random(11)
    gen = torch.Generator().manual_seed(11)
    vocab_size = len(hf_tokenizer)
    eos = hf_tokenizer.eos_token_id
    reqs = []
    for i in range(16):
        kind, key = REQUESTS[i % len(REQUESTS)]
        grammar, _ = _compile(backend, (kind, key))
        reqs.append({"kind": kind, "grammar": grammar, "ids": []})
    rolled = 0
    for _step in range(400):
        live = [r for r in reqs if not r["grammar"].is_terminated()]
        if not live:
            break
        first = live[0]["grammar"]
        mask = first.allocate_vocab_mask(vocab_size=vocab_size, batch_size=len(live), device="cpu")
        entries = [GrammarRow(row=i, grammar=r["grammar"]) for i, r in enumerate(live)]
        first.fill_vocab_mask_batched(entries, mask)
        mask = first.move_vocab_mask(mask, torch.device("cpu"))
        logits = torch.randn(len(live), vocab_size, generator=gen)
        # Make ending likely once allowed, so that requests finish.
        logits[:, eos] += 4.0
        first.apply_vocab_mask(logits=logits, vocab_mask=mask)
        tokens = torch.argmax(logits, dim=-1).tolist()
        for r, t in zip(live, tokens, strict=True):
            g = r["grammar"]
            assert g.matcher.is_allowed(t) or (t == eos and g.matcher.is_accepting()), (r["kind"], t)
            g.accept_token(t)
            r["ids"].append(t)
            if len(r["ids"]) > 3 and rng.random() < 0.05 and not g.is_terminated():
                k = rng.randint(1, 3)
                g.rollback(k)
                del r["ids"][-k:]
                rolled += 1
    assert rolled > 5
    for r in reqs:
        assert r["grammar"].is_terminated(), (r["kind"], r["ids"])
        text = hf_tokenizer.decode([t for t in r["ids"] if t != eos])
        _validate(r["kind"], text)


def test_jump_forward(backend, hf_tokenizer):
    """Jump-forward writes the tokens the constraint forces (single-token masks); with
    flexible whitespace nothing is forced at the start, after the last value `}` is."""
    compact = corral_sglang.CorralGrammarBackend(backend.vocab, whitespace="compact")
    schema = {"type": "object", "properties": {"alpha": {"const": "xyz"}}, "required": ["alpha"]}
    grammar, _ = _compile(compact, ("json", json.dumps(schema)))
    prefix = hf_tokenizer.encode('{"alpha":"xyz"', add_special_tokens=False)
    for t in prefix:
        grammar.accept_token(t)
    helper = grammar.try_jump_forward(hf_tokenizer)
    assert helper is not None and helper[1] == "}", helper
    text, state = grammar.jump_forward_str_state(helper)
    old = list(prefix)
    new = hf_tokenizer.encode('{"alpha":"xyz"' + text, add_special_tokens=False)
    grammar.jump_and_retokenize(old, new, state)
    assert grammar.matcher.num_tokens == len(new) and grammar.matcher.is_accepting()
    assert grammar.try_jump_forward(hf_tokenizer) is None  # only EOS is left
    start, _ = _compile(backend, ("json", json.dumps(schema)))
    assert start.try_jump_forward(hf_tokenizer) is None  # whitespace may come first


def test_reasoning_is_free_until_the_end_marker(backend, hf_tokenizer):
    end_ids = hf_tokenizer.encode("</think>", add_special_tokens=False)
    thinking = corral_sglang.CorralGrammarBackend(backend.vocab, think_end_ids=end_ids)
    grammar, _ = _compile(thinking, ("regex", REGEX), reasoning=True)
    assert grammar.thinking
    mask = grammar.allocate_vocab_mask(len(hf_tokenizer), 2, "cpu")
    mask.zero_()
    grammar.fill_vocab_mask_batched([GrammarRow(0, grammar)], mask)
    assert (mask[0] == -1).all(), "reasoning rows are unconstrained"
    free = hf_tokenizer.encode("Let me think: (a", add_special_tokens=False)
    for t in free + end_ids:
        grammar.accept_token(t)
    assert not grammar.thinking and grammar.matcher.num_tokens == 0
    grammar.rollback(1)  # back into the marker
    assert grammar.thinking
    grammar.accept_token(end_ids[-1])
    for t in hf_tokenizer.encode("2024-05", add_special_tokens=False):
        grammar.accept_token(t)
    grammar.accept_token(hf_tokenizer.eos_token_id)
    assert grammar.is_terminated()
    with pytest.raises(ValueError, match="does not continue"):
        fresh, _ = _compile(thinking, ("regex", REGEX), reasoning=False)
        fresh.accept_token(hf_tokenizer.encode("x", add_special_tokens=False)[0])


def test_strict_thinking_matches_sglangs_reasoning_wrapper(hf_tokenizer, monkeypatch):
    """`--enable-strict-thinking` with a budget: every reasoning row equals the one SGLang's
    own reasoning wrapper (around its XGrammar backend) writes, with and without a
    constraint, along random reasoning that sometimes writes part of the end marker; both
    leave reasoning at the same token."""
    from sglang.srt.constrained.reasoner_grammar_backend import ReasonerGrammarBackend
    from sglang.srt.constrained.xgrammar_backend import XGrammarGrammarBackend
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    monkeypatch.setenv("SGLANG_MAX_THINK_TOKENS", "14")
    eos, size = hf_tokenizer.eos_token_id, len(hf_tokenizer)

    class Args:
        constrained_json_disable_any_whitespace = False
        constrained_json_max_whitespace_cnt = None
        reasoning_parser = "qwen3"
        enable_strict_thinking = True

    ours = corral_sglang.create_backend(Args(), hf_tokenizer, size, {eos})
    assert ours.enable_strict_thinking and ours.thinking_rule.max_tokens == 14 and ours.thinking_rule.excluded_ids
    parser = ReasoningParser(model_type="qwen3", stream_reasoning=False, tokenizer=hf_tokenizer)
    xgr = XGrammarGrammarBackend(hf_tokenizer, vocab_size=size, model_eos_token_ids=[eos])
    theirs = ReasonerGrammarBackend(xgr, parser, hf_tokenizer, enable_strict_thinking=True)
    end = list(theirs.think_end_ids)
    assert list(ours.think_end_ids) == end
    rng = random.Random(7)
    for key in [("regex", REGEX), None]:
        for run in range(6):
            a = ours._init_value_dispatch(key, True) if key else ours.init_strict_reasoning_grammar(True)
            b = theirs._init_value_dispatch(key, True) if key else theirs.init_strict_reasoning_grammar(True)
            for step in range(40):
                ma = torch.zeros((1, (size + 31) // 32), dtype=torch.int32)
                mb = torch.zeros_like(ma)
                a.fill_vocab_mask(ma, 0)
                b.fill_vocab_mask(mb, 0)
                assert a.thinking == b._is_thinking(), (run, step)
                if not a.thinking:
                    break
                assert torch.equal(ma, mb), f"reasoning row {step} of run {run} ({key})"
                bits = ((mb[0].unsqueeze(1).to(torch.int64) >> torch.arange(32)) & 1).flatten()[:size]
                allowed = bits.nonzero().flatten().tolist()
                # Now and then the end marker (whole or in part), else any allowed token.
                nxt = end[b._matched_think_end_tokens] if rng.random() < 0.3 and run % 2 else rng.choice(allowed)
                assert nxt in allowed
                a.accept_token(nxt)
                b.accept_token(nxt)
            assert not a.thinking, f"run {run} never left reasoning"
            if key:  # the constraint applies from the token after the marker
                ma = torch.zeros((1, (size + 31) // 32), dtype=torch.int32)
                a.fill_vocab_mask(ma, 0)
                digit = hf_tokenizer.encode("2", add_special_tokens=False)[0]
                letter = hf_tokenizer.encode("x", add_special_tokens=False)[0]
                assert (int(ma[0, digit // 32]) >> (digit % 32)) & 1 and not (int(ma[0, letter // 32]) >> (letter % 32)) & 1
    # The end marker forced past the budget, then rolled back into the reasoning.
    a = ours.init_strict_reasoning_grammar(True)
    for t in hf_tokenizer.encode("a b c d e f g h i j k l m n o p", add_special_tokens=False)[:14]:
        a.accept_token(t)
    ma = torch.zeros((1, (size + 31) // 32), dtype=torch.int32)
    a.fill_vocab_mask(ma, 0)
    assert int(ma.ne(0).sum()) == 1 and (int(ma[0, end[0] // 32]) >> (end[0] % 32)) & 1
    for t in end:
        a.accept_token(t)
    assert not a.thinking
    a.rollback(len(end))
    assert a.thinking


def test_strict_thinking_without_a_reasoning_parser_is_refused(backend):
    with pytest.raises(ValueError, match="reasoning end marker"):
        corral_sglang.CorralGrammarBackend(backend.vocab, strict_thinking=True)
    assert backend.init_strict_reasoning_grammar(True) is None


def test_legacy_structural_tag(backend, hf_tokenizer):
    legacy = {"type": "structural_tag", "structures": [{"begin": "<f>", "schema": SCHEMA, "end": "</f>"}], "triggers": ["<f>"]}
    grammar, _ = _compile(backend, ("structural_tag", json.dumps(legacy)))
    assert isinstance(grammar, corral_sglang.CorralGrammar)
    ok = 'Sure. <f>{"city": "Oslo", "days": 2}</f>'
    assert grammar.compiled.matches(ok.encode())
    assert not grammar.compiled.matches(b'<f>{"city": "Oslo"}</f>')
