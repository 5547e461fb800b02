"""Matcher API behaviour: masks, advance, rollback, EOS, forced tokens, buffers, threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import corral
from _util import allowed_ids


def small_vocab(tokens, eos_name=b"<eos>", specials=(), size=None):
    toks = [t.encode() if isinstance(t, str) else t for t in tokens]
    eos = len(toks)
    toks = toks + [eos_name] + [s.encode() for s in specials]
    special_ids = list(range(eos + 1, len(toks)))
    return corral.Vocabulary.from_token_bytes(toks, eos_token_ids=[eos], special_token_ids=special_ids, size=size)


def ids_of(vocab, *strings):
    return [next(i for i in range(vocab.n_tokens) if vocab.token_bytes(i) == s.encode()) for s in strings]


def test_mask_layout_and_eos_only_when_accepting():
    v = small_vocab(["1", "2", "12", "a", "123"])
    c = corral.compile(corral.Grammar.regex(r"12?3?"), v)
    m = c.matcher()
    eos = v.eos_token_ids[0]
    assert sorted(allowed_ids(m, v)) == sorted(ids_of(v, "1", "12", "123"))
    assert m.advance(ids_of(v, "1")[0])
    assert m.is_accepting()
    got = set(allowed_ids(m, v))
    assert got == set(ids_of(v, "2")) | {eos}
    # Bit layout: bit t % 32 of int32 word t // 32.
    bm = corral.allocate_bitmask(1, v.size)
    m.fill_bitmask(bm)
    assert bm.shape == (1, 1) and bm.dtype == np.int32
    expected = sum(1 << t for t in got)
    assert int(bm[0, 0]) & 0xFFFFFFFF == expected


def test_rejected_token_leaves_state_unchanged():
    v = small_vocab(["a", "b", "ab"])
    m = corral.compile(corral.Grammar.regex("ab"), v).matcher()
    a, b, ab = ids_of(v, "a", "b", "ab")
    assert not m.advance(b)
    assert m.num_tokens == 0
    assert m.advance(a)
    before = list(allowed_ids(m, v))
    assert not m.advance(a) and not m.advance(ab)
    assert list(allowed_ids(m, v)) == before and m.num_tokens == 1
    assert m.advance(b) and m.is_accepting()


def test_special_tokens_never_allowed():
    v = small_vocab(["<s>", "x"], specials=["<|im_start|>"])
    # "<s>" here is an ordinary token whose bytes are "<s>"; the special one is never allowed.
    c = corral.compile(corral.Grammar.regex(r".*"), v)
    m = c.matcher()
    special = v.special_token_ids
    assert special and all(t not in set(allowed_ids(m, v)) for t in special)
    assert not m.advance(special[0])


def test_rollback_and_reset():
    v = small_vocab(["1", "2", "3", "."])
    m = corral.compile(corral.Grammar.regex(r"\d+\.\d"), v).matcher()
    one, two, dot = ids_of(v, "1", "2", ".")
    for t in (one, two, dot):
        assert m.advance(t)
    masks = []
    assert not m.is_accepting()
    m.rollback(1)
    masks.append(list(allowed_ids(m, v)))
    assert set(masks[0]) >= {one, two, dot}
    m.rollback(2)
    assert m.num_tokens == 0
    with pytest.raises(corral.MatcherError, match="only 0"):
        m.rollback(1)
    assert m.advance(one) and m.advance(dot) and m.advance(two)
    eos = v.eos_token_ids[0]
    assert m.advance(eos) and m.is_finished()
    assert not m.advance(one)
    m.rollback(1)
    assert not m.is_finished() and m.is_accepting()
    m.reset()
    assert m.num_tokens == 0 and not m.is_accepting()


def test_finished_row_allows_only_eos():
    v = small_vocab(["a"])
    m = corral.compile(corral.Grammar.regex("a"), v).matcher()
    assert m.advance(0) and m.advance(v.eos_token_ids[0])
    assert list(allowed_ids(m, v)) == v.eos_token_ids


def test_forced_tokens():
    v = small_vocab(['{"name": "', '{"', "name", '": "', "x", '"}'])
    c = corral.compile(corral.Grammar.regex(r'\{"name": "x+"\}'), v)
    m = c.matcher()
    # Two tokens can start: '{"name": "' and '{"': nothing is forced yet.
    assert m.forced_tokens() == []
    m.advance(ids_of(v, '{"')[0])
    forced = m.forced_tokens()
    assert forced == ids_of(v, "name", '": "', "x")
    assert m.num_tokens == 1  # forced_tokens() does not advance
    # A pattern with one completion is forced to the end, EOS included.
    v2 = small_vocab(["ab", "c"])
    m2 = corral.compile(corral.Grammar.regex("abc"), v2).matcher()
    assert m2.forced_tokens() == [0, 1, v2.eos_token_ids[0]]
    m3 = corral.compile(corral.Grammar.regex(""), v2).matcher()
    assert m3.forced_tokens() == [v2.eos_token_ids[0]]


def test_forced_tokens_limit():
    v = small_vocab(["a"])
    limits = corral.Limits(max_forced_tokens=5)
    m = corral.compile(corral.Grammar.regex("a{50}"), v, limits=limits).matcher()
    assert m.forced_tokens() == [0] * 5


def test_tokens_ending_mid_utf8_character():
    # "é" is C3 A9, "😀" is F0 9F 98 80: tokens split inside characters.
    v = small_vocab([b"\xc3", b"\xa9", b"\xf0\x9f", b"\x98\x80", b"\xc3\xa9", b"e", b"\xa9\xc3"])
    c = corral.compile(corral.Grammar.regex(r"[é😀]+"), v)
    m = c.matcher()
    assert set(allowed_ids(m, v)) == {0, 2, 4}
    assert m.advance(0)  # half of é
    assert not m.is_accepting()
    assert set(allowed_ids(m, v)) == {1, 6}  # A9, or A9 followed by the start of the next é
    assert m.advance(6) and not m.is_accepting()
    assert m.advance(1) and m.is_accepting()
    assert m.advance(2) and m.advance(3) and m.is_accepting()
    # A negated class matches whole characters only: a lone continuation byte never fits.
    m2 = corral.compile(corral.Grammar.regex(r"[^a]"), v).matcher()
    assert 1 not in set(allowed_ids(m2, v))


def test_empty_matching_patterns():
    v = small_vocab(["a", "b"])
    eos = v.eos_token_ids[0]
    m = corral.compile(corral.Grammar.regex("a*"), v).matcher()
    assert m.is_accepting() and set(allowed_ids(m, v)) == {0, eos}
    m = corral.compile(corral.Grammar.regex(""), v).matcher()
    assert list(allowed_ids(m, v)) == [eos]
    m = corral.compile(corral.Grammar.regex("(|b)"), v).matcher()
    assert set(allowed_ids(m, v)) == {1, eos}


def test_state_with_no_allowed_token_is_reported():
    v = small_vocab(["a", "b"])
    m = corral.compile(corral.Grammar.regex("ac"), v).matcher()
    assert m.advance(0)
    bm = corral.allocate_bitmask(1, v.size)
    with pytest.raises(corral.DeadEndError, match="after 1 tokens"):
        m.fill_bitmask(bm)


def test_logits_width_beyond_tokens():
    v = small_vocab(["a", "b"], size=100)
    assert v.size == 100 and v.n_tokens == 3 and v.mask_width == 4
    m = corral.compile(corral.Grammar.regex("[ab]*"), v).matcher()
    bm = corral.allocate_bitmask(2, v.size)
    assert bm.shape == (2, 4)
    m.fill_bitmask(bm, 1)
    assert (bm[0] == -1).all()  # the other row is untouched
    assert set(allowed_ids(m, v)) == {0, 1, 2}
    assert not m.advance(50)
    with pytest.raises(corral.MatcherError, match="out of range"):
        m.advance(100)


def test_bitmask_buffer_checks():
    v = small_vocab(["a"] * 1 + ["b"], size=64)
    m = corral.compile(corral.Grammar.regex("a"), v).matcher()
    with pytest.raises(corral.MatcherError, match="words"):
        m.fill_bitmask(np.zeros((1, 3), dtype=np.int32))
    with pytest.raises(corral.MatcherError, match="row 2"):
        m.fill_bitmask(np.zeros((2, 2), dtype=np.int32), 2)
    with pytest.raises(corral.MatcherError):
        m.fill_bitmask(np.zeros((1, 2), dtype=np.int64))
    with pytest.raises(corral.MatcherError, match="C-contiguous"):
        m.fill_bitmask(np.zeros((2, 4), dtype=np.int32)[:, ::2])
    ro = np.zeros((1, 2), dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises(corral.MatcherError, match="read-only"):
        m.fill_bitmask(ro)
    one_d = np.zeros(2, dtype=np.int32)
    m.fill_bitmask(one_d)
    assert one_d[0] == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_apply_bitmask_numpy(dtype):
    v = small_vocab(["a", "b", "c"], size=70)
    m = corral.compile(corral.Grammar.regex("[ac]"), v).matcher()
    bm = corral.allocate_bitmask(1, v.size)
    m.fill_bitmask(bm)
    logits = np.arange(70, dtype=dtype)
    out = corral.apply_bitmask(logits, bm[0])
    assert out is logits
    assert np.isfinite(logits).nonzero()[0].tolist() == [0, 2]
    batch = np.ones((2, 70), dtype=dtype)
    bms = corral.allocate_bitmask(2, v.size)
    m.fill_bitmask(bms, 1)
    corral.apply_bitmask(batch, bms)
    assert np.isfinite(batch[0]).all()
    assert np.isfinite(batch[1]).nonzero()[0].tolist() == [0, 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apply_bitmask_native_equals_unpacked_bits(dtype):
    """The native loop against the bits unpacked by numpy, on masks whose words are all
    allowed, all refused (alone and in runs, up to the last word), refuse one to five ids,
    or are random; logits as wide as the mask, narrower (a partial last word) and wider
    (ids past the mask refused)."""
    rng = np.random.default_rng(11)
    for width, words in [(96, 3), (70, 3), (1000, 32), (1100, 32)]:
        raw = rng.integers(0, 2**32, size=(4, words), dtype=np.uint64)
        kinds = rng.integers(0, 4, size=(4, words))
        for r, w in np.ndindex(4, words):
            if kinds[r, w] == 0:
                raw[r, w] = 0xFFFFFFFF
            elif kinds[r, w] == 1:
                raw[r, w] = 0
            elif kinds[r, w] == 2:
                refused = rng.choice(32, size=int(rng.integers(1, 6)), replace=False)
                raw[r, w] = 0xFFFFFFFF & ~int(sum(1 << int(k) for k in refused))
        # Runs of refused words: from the start, around one mixed word, to the end.
        raw[3, : words // 2] = 0
        raw[3, words // 2 + 1 :] = 0
        raw[2, :] = 0
        mask = raw.astype(np.uint32).view(np.int32)
        logits = rng.standard_normal((4, width)).astype(dtype)
        bits = np.unpackbits(mask.view(np.uint8), axis=-1, bitorder="little").astype(bool)
        allowed = np.zeros((4, width), dtype=bool)
        allowed[:, : min(width, bits.shape[1])] = bits[:, :width]
        want = np.where(allowed, logits, -np.inf)
        got = corral.apply_bitmask(logits.copy(), mask)
        assert np.array_equal(got, want), (width, words)


def test_apply_bitmask_torch():
    import torch  # part of the test extra: a missing torch fails here, it is not skipped
    v = small_vocab(["a", "b", "c"], size=70)
    m = corral.compile(corral.Grammar.regex("[bc]"), v).matcher()
    bm = corral.allocate_bitmask(2, v.size, backend="torch")
    assert bm.dtype == torch.int32 and tuple(bm.shape) == (2, 3)
    m.fill_bitmask(bm, 0)  # torch CPU tensors are filled in place
    logits = torch.zeros(2, 70)
    corral.apply_bitmask(logits, bm)
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == [1, 2]
    assert torch.isfinite(logits[1]).all()
    np_mask = corral.allocate_bitmask(1, v.size)
    m.fill_bitmask(np_mask)
    one = torch.zeros(70, dtype=torch.float16)
    corral.apply_bitmask(one, np_mask[0])
    assert torch.isfinite(one).nonzero().flatten().tolist() == [1, 2]
    if torch.cuda.is_available():
        gpu = torch.zeros(2, 70, device="cuda")
        corral.apply_bitmask(gpu, bm)
        assert torch.isfinite(gpu[0]).nonzero().flatten().tolist() == [1, 2]


def test_apply_bitmask_torch_cpu_native_and_fallback_agree():
    """CPU float32/float64 tensors go through the native loop, the rest (float16, a
    non-contiguous view, a tensor that requires grad) through torch ops: same result, also
    for logits wider than the mask (those ids masked) and 1-D logits."""
    import torch

    rng = np.random.default_rng(3)
    mask = rng.integers(-(2**31), 2**31, size=(3, 4), dtype=np.int64).astype(np.int32)
    mask[1, 1] = -1
    mask[2, 2] = 0
    width = 4 * 32 + 9  # wider than the mask
    base = torch.from_numpy(rng.standard_normal((3, width)).astype(np.float32))
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little").reshape(3, -1).astype(bool)
    want = np.zeros((3, width), dtype=bool)
    want[:, : bits.shape[1]] = bits
    variants = {
        "float32": base.clone(),
        "float64": base.double(),
        "float16": base.half(),
        "strided": base.t().contiguous().t(),
    }
    for name, logits in variants.items():
        out = corral.apply_bitmask(logits, torch.from_numpy(mask))
        assert out is logits
        assert np.array_equal(torch.isfinite(out).numpy(), want), name
    grad = base.clone().requires_grad_(True)
    with torch.no_grad():
        corral.apply_bitmask(grad, torch.from_numpy(mask))
    assert np.array_equal(torch.isfinite(grad).detach().numpy(), want)
    one = base[0].clone()
    corral.apply_bitmask(one, mask[0])
    assert np.array_equal(torch.isfinite(one).numpy(), want[0])


def test_fill_bitmasks_batch_matches_single(deepseek):
    v = deepseek.vocab
    pats = [r"\d+", r"[a-z]+", r"\s*19[0-9]{2}", r"[^\W\d]\w*"]
    matchers = [corral.compile(corral.Grammar.regex(p), v).matcher() for p in pats]
    batch = corral.allocate_bitmask(len(pats), v.size)
    corral.fill_bitmasks(matchers, batch)
    for i, m in enumerate(matchers):
        one = corral.allocate_bitmask(1, v.size)
        m.fill_bitmask(one)
        assert (one[0] == batch[i]).all()
    with pytest.raises(corral.MatcherError, match="twice"):
        corral.fill_bitmasks(matchers[:2], batch, rows=[1, 1])


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_fill_bitmasks_with_any_number_of_threads(deepseek, threads):
    """The batch pool's size changes who fills which row, never what a row holds."""
    v = deepseek.vocab
    before = corral.get_num_threads()
    assert before >= 1
    pats = [r"\d+", r"[a-z]+", r"\s*19[0-9]{2}", r"[^\W\d]\w*", r"(ab)+", r"x|yz", r"[0-9a-f]{4}"]
    matchers = [corral.compile(corral.Grammar.regex(p), v).matcher() for p in pats]
    try:
        corral.set_num_threads(threads)
        assert corral.get_num_threads() == threads
        batch = corral.allocate_bitmask(len(pats), v.size)
        corral.fill_bitmasks(matchers, batch)
    finally:
        corral.set_num_threads(before)
    for i, m in enumerate(matchers):
        one = corral.allocate_bitmask(1, v.size)
        m.fill_bitmask(one)
        assert (one[0] == batch[i]).all(), pats[i]


def test_set_num_threads_refuses_nonsense():
    with pytest.raises(corral.MatcherError, match="at least 1"):
        corral.set_num_threads(0)
    with pytest.raises(TypeError):
        corral.set_num_threads(1.5)
    with pytest.raises(corral.MatcherError):
        corral.set_num_threads(-2)


def test_compiled_grammar_shared_across_threads(deepseek):
    v = deepseek.vocab
    compiled = corral.compile(corral.Grammar.regex(r"[^\W\d]\w{0,20}"), v, cache=False)
    text_ids = deepseek.encode("hello_world")
    reference = []
    m = corral.compile(corral.Grammar.regex(r"[^\W\d]\w{0,20}"), v, cache=False).matcher()
    for t in text_ids:
        reference.append(allowed_ids(m, v).tolist())
        m.advance(t)
    errors = []

    def worker():
        try:
            mm = compiled.matcher()
            for i, t in enumerate(text_ids):
                if allowed_ids(mm, v).tolist() != reference[i]:
                    errors.append(i)
                assert mm.advance(t)
        except Exception as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_compile_cache_by_content(byte_vocab):
    corral.clear_cache()
    a = corral.compile(corral.Grammar.regex(r"\d+"), byte_vocab)
    b = corral.compile(corral.Grammar.regex(r"\d+"), byte_vocab)
    assert a is b
    same_content = corral.Vocabulary.from_token_bytes(
        [bytes([i]) for i in range(256)] + [b"</s>"], eos_token_ids=[256]
    )
    assert same_content.fingerprint == byte_vocab.fingerprint
    assert corral.compile(corral.Grammar.regex(r"\d+"), same_content) is a
    assert corral.compile(corral.Grammar.regex(r"\d*"), byte_vocab) is not a
    assert corral.compile(corral.Grammar.regex(r"\d+"), byte_vocab, cache=False) is not a


def test_eager_and_lazy_agree(deepseek):
    v = deepseek.vocab
    g = corral.Grammar.regex(r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)")
    eager = corral.compile(g, v, eager=True, cache=False)
    lazy = corral.compile(g, v, cache=False)
    assert eager.cached_states == eager.num_states - 1
    assert lazy.cached_states == 0
    me, ml = eager.matcher(), lazy.matcher()
    for t in deepseek.encode("192.168.1.254"):
        assert allowed_ids(me, v).tolist() == allowed_ids(ml, v).tolist()
        assert me.advance(t) and ml.advance(t)
    assert me.is_accepting() and ml.is_accepting()
    assert 0 < lazy.cached_states < lazy.num_states


def test_warm_up_changes_no_mask(deepseek):
    """A warmed-up compile (the masks into each terminal built before the first step) gives
    the masks of a cold one along a document, holds more cached masks before any step,
    and warming a regular grammar or an intersection is allowed."""
    v = deepseek.vocab
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 40}, "email": {"type": "string", "format": "email"}, "n": {"type": "integer"}},
        "required": ["name", "email", "n"],
    }
    g = corral.Grammar.json_schema(schema)
    warm, cold = corral.compile(g, v, cache=False), corral.compile(g, v, cache=False)
    before = warm.memory_bytes
    warm.warm_up()
    assert warm.memory_bytes > before + 4096
    mw, mc = warm.matcher(), cold.matcher()
    for t in deepseek.encode('{"name":"Ana Lopez","email":"ana.lopez@example.org","n":42}'):
        assert allowed_ids(mw, v).tolist() == allowed_ids(mc, v).tolist()
        assert mw.advance(t) and mc.advance(t)
    assert mw.is_accepting() and mc.is_accepting()
    regex = corral.compile(corral.Grammar.regex(r"[a-z]{2,8}"), v, cache=False)
    regex.warm_up()
    assert regex.cached_states == 0
    both = corral.compile(corral.Grammar.regex(r"\{.*") & g, v, cache=False)
    both.warm_up()
    assert both.memory_bytes > 0


def test_matcher_copy_is_independent():
    v = small_vocab(["a", "b"])
    m = corral.compile(corral.Grammar.regex("[ab]+"), v).matcher()
    m.advance(0)
    c = m.copy()
    c.advance(1)
    assert m.num_tokens == 1 and c.num_tokens == 2


def test_vocabulary_errors():
    with pytest.raises(corral.VocabularyError, match="EOS"):
        corral.Vocabulary.from_token_bytes([b"a"], eos_token_ids=[])
    with pytest.raises(corral.VocabularyError, match="EOS token id 3 is out of range"):
        corral.Vocabulary.from_token_bytes([b"a"], eos_token_ids=[3])
    with pytest.raises(corral.VocabularyError, match="smaller"):
        corral.Vocabulary.from_token_bytes([b"a", b"b", b"c"], eos_token_ids=[0], size=2)


def test_choice_grammar(deepseek):
    options = ["yes", "no", "maybe so", "a.b*c", "日本", ""]
    g = corral.Grammar.choice(options)
    assert g.kind == "choice"
    c = corral.compile(g, deepseek.vocab)
    for s in options:
        assert c.matches(s.encode())
    for s in ["ye", "yes ", "abbc", "nope"]:
        assert not c.matches(s.encode())
    with pytest.raises(corral.GrammarError):
        corral.Grammar.choice([])
    with pytest.raises(TypeError):
        corral.Grammar.choice([1])
