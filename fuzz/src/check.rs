//! The consistency checks every target runs on a grammar that compiled: a [`Session`]
//! drives one [`Matcher`] through a sequence of operations and checks each result against
//! another way of computing it (the slow reference mask, `is_allowed`, `matches` over the
//! output so far, masks remembered before a rollback). A failed check panics.

use std::cell::Cell;
use std::sync::Arc;

use corral_core::{CompiledGrammar, Error, Matcher, Result, TokenKind};

use crate::input::{Reader, Rng};

/// A source of choices: the fuzz input itself, or a generator seeded from it.
pub trait Chooser {
    /// A number in `0..n` (0 when `n` is 0).
    fn pick(&mut self, n: usize) -> usize;
}

impl Chooser for Reader<'_> {
    fn pick(&mut self, n: usize) -> usize {
        self.below(n)
    }
}

impl Chooser for Rng {
    fn pick(&mut self, n: usize) -> usize {
        self.below(n)
    }
}

/// The value of `r`, or None when a resource limit stopped the work (an allowed outcome
/// under the fuzzers' small limits). Any other error is a finding.
pub fn within_limits<T>(r: Result<T>, what: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(Error::LimitExceeded { .. }) => None,
        Err(e) => panic!("{what}: unexpected error {e:?}"),
    }
}

/// Is bit `t` set in `mask`?
pub fn bit(mask: &[u32], t: u32) -> bool {
    mask.get((t >> 5) as usize).is_some_and(|w| w & (1 << (t & 31)) != 0)
}

/// The set bits of `mask`.
pub fn ids(mask: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    for (i, &w) in mask.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            out.push(i as u32 * 32 + w.trailing_zeros());
            w &= w - 1;
        }
    }
    out
}

thread_local! {
    static CHECKED_OPS: Cell<usize> = const { Cell::new(0) };
}

/// Operations checked by sessions so far on this thread (lets the replay test confirm
/// that its inputs get past parsing and compiling).
pub fn checked_ops() -> usize {
    CHECKED_OPS.with(Cell::get)
}

/// Vocabularies up to this size get every token checked with `is_allowed` at each step.
const CHECK_EVERY_TOKEN: usize = 1024;

/// An independent judge of whole outputs (e.g. the `regex` crate on a generated pattern):
/// `matches` must agree with it.
pub type Oracle = Box<dyn Fn(&[u8]) -> bool>;

/// Most tokens [`Session::advance_completion`] takes in one call.
const COMPLETION_WALK: usize = 24;

/// One matcher under test, with what it has been given and the masks seen along the way.
pub struct Session {
    compiled: Arc<CompiledGrammar>,
    m: Matcher,
    /// The output so far: the bytes of the accepted normal tokens.
    bytes: Vec<u8>,
    /// `bytes.len()` after each accepted token.
    lens: Vec<usize>,
    /// `masks[k]`: the mask after `k` accepted tokens.
    masks: Vec<Vec<u32>>,
    oracle: Option<Oracle>,
}

impl Session {
    /// A session at the start of `compiled`; None if a limit stops the first mask.
    pub fn start(compiled: Arc<CompiledGrammar>) -> Option<Session> {
        Session::start_with(compiled, None)
    }

    /// [`Session::start`], with `matches` also checked against `oracle`.
    pub fn start_with(compiled: Arc<CompiledGrammar>, oracle: Option<Oracle>) -> Option<Session> {
        let m = Matcher::new(compiled.clone());
        let mut s = Session { compiled, m, bytes: Vec::new(), lens: Vec::new(), masks: Vec::new(), oracle };
        let mask = s.mask()?;
        s.masks.push(mask);
        Some(s)
    }

    /// The matcher.
    pub fn matcher(&self) -> &Matcher {
        &self.m
    }

    /// The output so far.
    pub fn output(&self) -> &[u8] {
        &self.bytes
    }

    /// The current mask, checked: fast = reference, the count, `is_allowed` on every token
    /// (small vocabularies), EOS ⇔ accepting ⇔ `matches(output)`, no special or missing id.
    pub fn mask(&self) -> Option<Vec<u32>> {
        mask_of(&self.compiled, &self.m, &self.bytes, self.oracle.as_ref())
    }

    /// Runs up to `ops` operations chosen by `c`, checking each. Returns early when a limit
    /// stops the work.
    pub fn run(&mut self, c: &mut dyn Chooser, ops: usize) {
        for _ in 0..ops {
            let ok = match c.pick(11) {
                0..=3 => self.advance(c),
                4 => self.rollback(c),
                5 => self.forced(),
                6 => self.completion(),
                7 => self.reset(),
                8 => self.bad_calls(c),
                9 => self.draft(c),
                _ => self.advance_completion(c),
            };
            if ok.is_none() {
                return;
            }
            CHECKED_OPS.with(|c| c.set(c.get() + 1));
        }
    }

    /// Advances by a token chosen by `c` (usually an allowed one) and checks that it is
    /// accepted exactly when its mask bit is set.
    pub fn advance(&mut self, c: &mut dyn Chooser) -> Option<()> {
        let before = self.masks.last().cloned().unwrap_or_default();
        let size = self.compiled.vocab().size();
        let allowed = ids(&before);
        let t = if !allowed.is_empty() && c.pick(4) != 0 {
            allowed[c.pick(allowed.len())]
        } else {
            c.pick(size) as u32
        };
        self.advance_token(t, &before)
    }

    fn advance_token(&mut self, t: u32, before: &[u32]) -> Option<()> {
        let finished = self.m.is_finished();
        let n = self.m.num_tokens();
        let accepted = within_limits(self.m.advance(t), "advance")?;
        assert_eq!(
            accepted,
            bit(before, t) && !finished,
            "advance({t}) returned {accepted} but its mask bit is {} (finished: {finished}, output {:?})",
            bit(before, t),
            String::from_utf8_lossy(&self.bytes)
        );
        if accepted {
            assert_eq!(self.m.num_tokens(), n + 1);
            self.bytes.extend_from_slice(self.compiled.vocab().token_bytes(t));
            self.lens.push(self.bytes.len());
            let mask = self.mask()?;
            self.masks.push(mask);
        } else {
            assert_eq!(self.m.num_tokens(), n);
            let mask = self.mask()?;
            assert_eq!(&mask[..], before, "a refused advance({t}) changed the mask");
        }
        Some(())
    }

    /// Rolls back a number of tokens chosen by `c` (sometimes too many: an error that must
    /// change nothing) and checks that the mask is the one seen before.
    pub fn rollback(&mut self, c: &mut dyn Chooser) -> Option<()> {
        let have = self.m.num_tokens();
        assert_eq!(have, self.lens.len());
        let n = c.pick(have + 2);
        match self.m.rollback(n) {
            Ok(()) => {
                assert!(n <= have, "rollback({n}) succeeded with only {have} tokens");
                self.lens.truncate(have - n);
                self.bytes.truncate(self.lens.last().copied().unwrap_or(0));
                self.masks.truncate(have - n + 1);
            }
            Err(Error::InvalidArgument(_)) => assert!(n > have, "rollback({n}) failed with {have} tokens"),
            Err(e) => panic!("rollback({n}): unexpected error {e:?}"),
        }
        assert_eq!(self.m.num_tokens(), self.lens.len());
        let mask = self.mask()?;
        assert_eq!(Some(&mask), self.masks.last(), "rollback({n}) did not restore the earlier mask");
        Some(())
    }

    /// Checks the speculative-decoding calls on a draft chosen by `c` (allowed tokens
    /// along the way, now and then any id, sometimes one past the vocabulary):
    /// `validate_tokens` counts the prefix `advance` accepts on a fork, `fill_draft_masks`
    /// writes each position's mask (after the draft's prefix) up to the first refused
    /// token and leaves the rows after it untouched, and both leave the matcher where it
    /// was, an error included.
    pub fn draft(&mut self, c: &mut dyn Chooser) -> Option<()> {
        let size = self.compiled.vocab().size();
        let words = self.compiled.vocab().mask_words();
        // The draft, and along it the masks and acceptance a fork sees.
        let mut fork = self.m.fork();
        let (mut draft, mut want_rows, mut accepted, mut live) = (Vec::new(), Vec::new(), 0, true);
        let mut bytes = self.bytes.clone();
        for _ in 0..c.pick(6) {
            let mask = if live { Some(mask_of(&self.compiled, &fork, &bytes, self.oracle.as_ref())?) } else { None };
            let allowed = mask.as_deref().map(ids).unwrap_or_default();
            let t = match c.pick(8) {
                0 => c.pick(size) as u32,
                1 if c.pick(4) == 0 => size as u32 + c.pick(2) as u32,
                _ if !allowed.is_empty() => allowed[c.pick(allowed.len())],
                _ => c.pick(size) as u32,
            };
            draft.push(t);
            if let Some(mask) = mask {
                want_rows.push(mask);
                if (t as usize) < size && within_limits(fork.advance(t), "advance")? {
                    accepted += 1;
                    bytes.extend_from_slice(self.compiled.vocab().token_bytes(t));
                } else {
                    live = false;
                }
            }
        }
        if live {
            want_rows.push(mask_of(&self.compiled, &fork, &bytes, self.oracle.as_ref())?);
        }
        let past_vocab = draft.iter().take(accepted + 1).any(|&t| t as usize >= size);
        let n = self.m.num_tokens();
        match self.m.validate_tokens(&draft) {
            Ok(k) => assert_eq!(k, accepted, "validate_tokens({draft:?})"),
            Err(Error::InvalidArgument(_)) => assert!(past_vocab, "validate_tokens({draft:?}) failed"),
            Err(e) => {
                within_limits::<()>(Err(e), "validate_tokens")?;
            }
        }
        assert_eq!(self.m.num_tokens(), n, "validate_tokens moved the matcher");
        const SENTINEL: u32 = 0xdead_beef;
        let mut out = vec![SENTINEL; words * (draft.len() + 1)];
        match self.m.fill_draft_masks(&draft, &mut out) {
            Ok(d) => {
                assert_eq!(d.accepted, accepted, "fill_draft_masks({draft:?}) accepted");
                assert_eq!(d.rows.len(), accepted + 1);
                for (i, want) in want_rows.iter().enumerate().take(accepted + 1) {
                    assert_eq!(&out[i * words..(i + 1) * words], &want[..], "draft row {i} of {draft:?}");
                }
                assert!(out[(accepted + 1) * words..].iter().all(|&w| w == SENTINEL), "rows past the refusal were written");
            }
            Err(Error::InvalidArgument(_)) => assert!(past_vocab, "fill_draft_masks({draft:?}) failed"),
            Err(e) => {
                within_limits::<()>(Err(e), "fill_draft_masks")?;
            }
        }
        assert_eq!(self.m.num_tokens(), n, "fill_draft_masks moved the matcher");
        let mask = self.mask()?;
        assert_eq!(Some(&mask), self.masks.last(), "a draft left a trace in the mask");
        Some(())
    }

    /// Checks `forced_tokens`: each is the only allowed token at its step, and the run
    /// stops where more than one (or none) is allowed or at the limit.
    pub fn forced(&mut self) -> Option<()> {
        let forced = within_limits(self.m.forced_tokens(), "forced_tokens")?;
        let limit = self.compiled.limits().max_forced_tokens;
        assert!(forced.len() <= limit);
        let mut probe = self.m.clone();
        let mut bytes = self.bytes.clone();
        for (i, &t) in forced.iter().enumerate() {
            let mask = mask_of(&self.compiled, &probe, &bytes, self.oracle.as_ref())?;
            assert_eq!(ids(&mask), vec![t], "forced token {i} ({t}) is not the only allowed one");
            assert!(within_limits(probe.advance(t), "advance")?, "forced token {t} refused");
            bytes.extend_from_slice(self.compiled.vocab().token_bytes(t));
        }
        if forced.len() < limit && !probe.is_finished() {
            let mask = mask_of(&self.compiled, &probe, &bytes, self.oracle.as_ref())?;
            assert_ne!(ids(&mask).len(), 1, "forced_tokens stopped ({forced:?}) while one token is still forced");
        }
        Some(())
    }

    /// Checks `completion`: None once finished; otherwise the output plus it is accepted,
    /// and it is empty when the output may end here.
    pub fn completion(&mut self) -> Option<()> {
        let c = within_limits(self.m.completion(), "completion")?;
        if self.m.is_finished() {
            assert!(c.is_none(), "completion after EOS");
            return Some(());
        }
        let c = c.unwrap_or_else(|| panic!("no completion of a live output {:?}", String::from_utf8_lossy(&self.bytes)));
        if self.m.is_accepting() {
            assert!(c.is_empty(), "completion {:?} of an output that may end", String::from_utf8_lossy(&c));
        }
        let mut whole = self.bytes.clone();
        whole.extend_from_slice(&c);
        let ok = within_limits(self.compiled.matches(&whole), "matches")?;
        if let Some(judge) = &self.oracle {
            assert!(judge(&whole), "the reference rejects output + completion {:?}", String::from_utf8_lossy(&whole));
        }
        assert!(
            ok,
            "output {:?} + completion {:?} is not accepted",
            String::from_utf8_lossy(&self.bytes),
            String::from_utf8_lossy(&c)
        );
        Some(())
    }

    /// Checks `reset`: back to no tokens and the first mask.
    pub fn reset(&mut self) -> Option<()> {
        self.m.reset();
        assert_eq!(self.m.num_tokens(), 0);
        self.bytes.clear();
        self.lens.clear();
        self.masks.truncate(1);
        let mask = self.mask()?;
        assert_eq!(Some(&mask), self.masks.first(), "reset did not restore the first mask");
        Some(())
    }

    /// Calls that must fail cleanly: a token id past the vocabulary, a mask row of the
    /// wrong width.
    pub fn bad_calls(&mut self, c: &mut dyn Chooser) -> Option<()> {
        let size = self.compiled.vocab().size();
        let t = size as u32 + c.pick(3) as u32;
        assert!(matches!(self.m.advance(t), Err(Error::InvalidArgument(_))), "advance({t}) past the vocabulary");
        let words = self.compiled.vocab().mask_words();
        let mut row = vec![0u32; words + 1];
        assert!(matches!(self.m.fill_mask(&mut row), Err(Error::InvalidArgument(_))), "fill_mask with a long row");
        if words > 0 {
            let mut row = vec![0u32; words - 1];
            assert!(matches!(self.m.fill_mask(&mut row), Err(Error::InvalidArgument(_))), "fill_mask with a short row");
        }
        Some(())
    }

    /// Walks to the end along the completion: advances by allowed tokens whose bytes are a
    /// prefix of the remaining completion, checking at the end that the output is accepted
    /// if the walk got there.
    pub fn advance_completion(&mut self, c: &mut dyn Chooser) -> Option<()> {
        let Some(rest) = within_limits(self.m.completion(), "completion")? else { return Some(()) };
        let mut rest = &rest[..];
        // A bounded walk: each step re-checks the whole mask, and completions can be long.
        for _ in 0..COMPLETION_WALK {
            if rest.is_empty() {
                let mask = self.masks.last().cloned().unwrap_or_default();
                assert!(self.m.is_accepting(), "the completion was walked but the output may not end");
                assert!(
                    self.compiled.vocab().eos_ids().iter().all(|&e| bit(&mask, e)),
                    "accepting but EOS is not allowed"
                );
                return Some(());
            }
            let mask = self.masks.last().cloned().unwrap_or_default();
            let vocab = self.compiled.vocab().clone();
            let fits: Vec<u32> = ids(&mask)
                .into_iter()
                .filter(|&t| vocab.kind(t) == TokenKind::Normal && rest.starts_with(vocab.token_bytes(t)))
                .collect();
            if fits.is_empty() {
                return Some(());
            }
            let t = fits[c.pick(fits.len())];
            rest = &rest[vocab.token_bytes(t).len()..];
            self.advance_token(t, &mask)?;
        }
        Some(())
    }
}

/// The mask of `m` (whose output so far is `bytes`), checked as [`Session::mask`] says.
pub fn mask_of(compiled: &CompiledGrammar, m: &Matcher, bytes: &[u8], oracle: Option<&Oracle>) -> Option<Vec<u32>> {
    let vocab = compiled.vocab();
    let words = vocab.mask_words();
    let mut fast = vec![0u32; words];
    let mut slow = vec![0u32; words];
    let info = within_limits(m.fill_mask(&mut fast), "fill_mask")?;
    let slow_info = within_limits(m.fill_mask_reference(&mut slow), "fill_mask_reference")?;
    let out = String::from_utf8_lossy(bytes);
    assert_eq!(fast, slow, "fill_mask differs from fill_mask_reference after {out:?}");
    let set = ids(&fast);
    assert_eq!(info.allowed as usize, set.len(), "fill_mask's count");
    assert_eq!(slow_info.allowed as usize, set.len(), "fill_mask_reference's count");
    assert!(set.iter().all(|&t| (t as usize) < vocab.size()), "a bit past the vocabulary size");
    let finished = m.is_finished();
    for &t in &set {
        let kind = vocab.kind(t);
        assert!(
            kind == TokenKind::Eos || (kind == TokenKind::Normal && !finished),
            "token {t} ({kind:?}) allowed (finished: {finished}) after {out:?}"
        );
    }
    if finished {
        assert_eq!(set, vocab.eos_ids(), "a finished matcher allows exactly EOS");
        return Some(fast);
    }
    let accepting = m.is_accepting();
    for &e in vocab.eos_ids() {
        assert_eq!(bit(&fast, e), accepting, "EOS bit vs is_accepting after {out:?}");
    }
    let matches = within_limits(compiled.matches(bytes), "matches")?;
    assert_eq!(matches, accepting, "matches(output) vs is_accepting after {out:?}");
    if let Some(judge) = oracle {
        assert_eq!(matches, judge(bytes), "matches({out:?}) vs the reference");
    }
    if vocab.size() <= CHECK_EVERY_TOKEN {
        for t in 0..vocab.size() as u32 {
            assert_eq!(m.is_allowed(t), bit(&fast, t), "is_allowed({t}) vs the mask after {out:?}");
        }
    }
    Some(fast)
}

/// For a vocabulary whose ids 0..=255 are the single bytes: does advancing byte by byte
/// over `s` end accepting? None when a limit stops it.
pub fn bytewise_accepts(compiled: &Arc<CompiledGrammar>, s: &[u8]) -> Option<bool> {
    let mut m = Matcher::new(compiled.clone());
    for &b in s {
        if !within_limits(m.advance(b as u32), "advance")? {
            return Some(false);
        }
    }
    Some(m.is_accepting())
}

/// Checks `matches(s)` against advancing byte by byte (ids 0..=255 must be the bytes).
pub fn check_bytewise(compiled: &Arc<CompiledGrammar>, s: &[u8]) -> Option<bool> {
    let whole = within_limits(compiled.matches(s), "matches")?;
    let stepped = bytewise_accepts(compiled, s)?;
    assert_eq!(whole, stepped, "matches({:?}) vs advancing byte by byte", String::from_utf8_lossy(s));
    Some(whole)
}
