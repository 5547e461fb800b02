//! The matcher of an intersection (`g1 & g2`, see `index::intersection`): one matcher per
//! part, moved together. A token is allowed where every part allows it, so a mask is the
//! parts' masks ANDed word by word, and a token that any part refuses changes no part.

use std::sync::{Arc, Mutex, TryLockError};

use super::{MaskInfo, Matcher};
use crate::error::{Error, Result};
use crate::index::CompiledGrammar;

/// The matchers of an intersection's parts, all at the same number of tokens.
#[derive(Debug, Clone)]
pub(super) struct Parts {
    matchers: Vec<Matcher>,
    /// One part's mask at a time, while it is ANDed into the caller's row.
    scratch: Scratch,
}

/// A mask row kept between calls (masks are filled through `&self`, hence the lock); a
/// copied matcher starts with an empty one.
#[derive(Debug, Default)]
struct Scratch(Mutex<Vec<u32>>);

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

impl Scratch {
    /// Runs `f` on a zeroed-or-stale row of `words` words: the kept one, or (if another
    /// thread is using it) one of this call's own.
    fn with<R>(&self, words: usize, f: impl FnOnce(&mut [u32]) -> R) -> R {
        let mut buf = match self.0.try_lock() {
            Ok(buf) => buf,
            // A panic while it was held left only stale bits, which every fill overwrites.
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return f(&mut vec![0; words]),
        };
        buf.resize(words, 0);
        f(&mut buf)
    }
}

/// How the parts' masks met.
enum Combined {
    /// This many ids are allowed by every part.
    Allowed(u32),
    /// A part allows nothing at all: its own dead end.
    PartStuck,
    /// Every part allows something, but no id is allowed by all.
    Disjoint,
}

/// A part's mask filler: [`Matcher::fill_mask`] or [`Matcher::fill_mask_reference`].
type Fill = fn(&Matcher, &mut [u32]) -> Result<MaskInfo>;

impl Parts {
    /// Matchers at the start of each part.
    pub(super) fn new(parts: &[Arc<CompiledGrammar>]) -> Parts {
        Parts { matchers: parts.iter().map(|p| Matcher::new(p.clone())).collect(), scratch: Scratch::default() }
    }

    /// The parts' matchers.
    pub(super) fn matchers(&self) -> &[Matcher] {
        &self.matchers
    }

    /// ANDs the parts' masks, each made by `fill`, into `out`.
    fn combine(&self, out: &mut [u32], fill: Fill) -> Result<Combined> {
        let Some((first, rest)) = self.matchers.split_first() else {
            return Err(Error::Internal("an intersection without grammars".into()));
        };
        let mut allowed = fill(first, out)?.allowed;
        if allowed == 0 {
            return Ok(Combined::PartStuck);
        }
        let stuck = self.scratch.with(out.len(), |buf| -> Result<bool> {
            for (i, m) in rest.iter().enumerate() {
                if fill(m, buf)?.allowed == 0 {
                    return Ok(true);
                }
                // Only the last AND needs counting.
                if i + 1 == rest.len() {
                    allowed = and_count(out, buf);
                } else {
                    out.iter_mut().zip(buf.iter()).for_each(|(o, &b)| *o &= b);
                }
            }
            Ok(false)
        })?;
        if stuck {
            out.fill(0);
            return Ok(Combined::PartStuck);
        }
        Ok(if allowed == 0 { Combined::Disjoint } else { Combined::Allowed(allowed) })
    }

    /// Writes the intersection's mask into `out` (the parts' masks made by
    /// [`Matcher::fill_mask`], or by its reference when `reference`). A part's own dead
    /// end is `allowed == 0`, as for a single grammar; parts that each allow something
    /// but nothing in common are [`Error::NoCommonToken`].
    #[inline(never)] // keeps the single-grammar `Matcher::fill_mask` small (see `chart_mask`)
    pub(super) fn fill_mask(&self, out: &mut [u32], reference: bool) -> Result<MaskInfo> {
        let fill: Fill = if reference { Matcher::fill_mask_reference } else { Matcher::fill_mask };
        match self.combine(out, fill)? {
            Combined::Allowed(allowed) => Ok(MaskInfo { allowed }),
            Combined::PartStuck => Ok(MaskInfo { allowed: 0 }),
            Combined::Disjoint => Err(Error::NoCommonToken { grammars: self.matchers.len(), tokens: self.num_tokens() }),
        }
    }

    /// The only id every part allows here, if there is exactly one (`bits`: a mask row to
    /// work in).
    fn single(&self, bits: &mut [u32]) -> Result<Option<u32>> {
        if self.is_finished() {
            return Ok(None);
        }
        let Combined::Allowed(1) = self.combine(bits, Matcher::fill_mask)? else { return Ok(None) };
        Ok(bits.iter().position(|&w| w != 0).map(|i| (i * 32) as u32 + bits[i].trailing_zeros()))
    }

    /// Consumes `token` in every part, or in none: a part that refuses it (or fails)
    /// makes the parts that took it give it back.
    pub(super) fn advance(&mut self, token: u32) -> Result<bool> {
        for i in 0..self.matchers.len() {
            let step = self.matchers[i].advance(token);
            if !matches!(step, Ok(true)) {
                for m in &mut self.matchers[..i] {
                    m.rollback(1)?;
                }
                return step;
            }
        }
        Ok(true)
    }

    /// Would every part accept `token` now?
    pub(super) fn is_allowed(&self, token: u32) -> bool {
        self.matchers.iter().all(|m| m.is_allowed(token))
    }

    /// Undoes the last `n` tokens in every part (the caller has checked `n`).
    pub(super) fn rollback(&mut self, n: usize) -> Result<()> {
        self.matchers.iter_mut().try_for_each(|m| m.rollback(n))
    }

    /// Tokens accepted so far (the same in every part).
    pub(super) fn num_tokens(&self) -> usize {
        self.matchers.first().map_or(0, Matcher::num_tokens)
    }

    /// May the output end here under every part?
    pub(super) fn is_accepting(&self) -> bool {
        self.matchers.iter().all(Matcher::is_accepting)
    }

    /// Has EOS been accepted (by every part, as tokens are taken by all or none)?
    pub(super) fn is_finished(&self) -> bool {
        self.matchers.first().is_some_and(Matcher::is_finished)
    }

    /// Reads `bytes` as one more step in every part (for copies: see
    /// [`Matcher::try_push_bytes`]); false if a part refuses them.
    pub(super) fn try_push_bytes(&mut self, bytes: &[u8]) -> Result<bool> {
        for m in &mut self.matchers {
            if !m.try_push_bytes(bytes)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The tokens that are the only way forward under every part, as
    /// [`Matcher::forced_tokens`]: while the intersection's mask holds a single id, it
    /// is taken (on a copy). At most `limit`; `words`: the vocabulary's mask width.
    pub(super) fn forced_tokens(&self, limit: usize, words: usize) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        let mut bits = vec![0u32; words];
        // Most positions force nothing: say so before copying the parts.
        let Some(mut next) = (if limit == 0 { None } else { self.single(&mut bits)? }) else { return Ok(out) };
        let mut probe = self.clone();
        while probe.advance(next)? {
            out.push(next);
            if out.len() >= limit {
                break;
            }
            match probe.single(&mut bits)? {
                Some(t) => next = t,
                None => break,
            }
        }
        Ok(out)
    }

    /// Bytes that complete the output under every part: the shortest of the parts' own
    /// completions that all the other parts accept as an ending too. None when there is
    /// none such (the parts may still share a longer ending: finding one in general means
    /// searching their product). A part's error is returned only if no completion was
    /// found; one longer than `max_bytes` is [`Error::LimitExceeded`].
    pub(super) fn completion(&self, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        if self.is_accepting() {
            return Ok(Some(Vec::new()));
        }
        let mut best: Option<Vec<u8>> = None;
        let mut failure = None;
        for (i, m) in self.matchers.iter().enumerate() {
            let rest = match m.completion() {
                Ok(Some(rest)) => rest,
                Ok(None) => continue,
                Err(e) => {
                    failure.get_or_insert(e);
                    continue;
                }
            };
            if best.as_ref().is_none_or(|b| rest.len() < b.len()) && self.others_accept(i, &rest)? {
                best = Some(rest);
            }
        }
        match (best, failure) {
            (Some(rest), _) if rest.len() > max_bytes => Err(Error::LimitExceeded {
                limit: "max_completion_bytes",
                value: max_bytes,
                context: format!("the completion of an intersection ({} bytes)", rest.len()),
            }),
            (Some(rest), _) => Ok(Some(rest)),
            (None, Some(e)) => Err(e),
            (None, None) => Ok(None),
        }
    }

    /// Do all parts but part `i` accept the output followed by `rest`?
    fn others_accept(&self, i: usize, rest: &[u8]) -> Result<bool> {
        for (j, m) in self.matchers.iter().enumerate() {
            if j == i {
                continue;
            }
            let mut copy = m.clone();
            if !copy.try_push_bytes(rest)? || !copy.is_accepting() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// ANDs `other` into `out` and returns how many bits are left set.
fn and_count(out: &mut [u32], other: &[u32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { and_count_avx2(out, other) };
    }
    and_count_portable(out, other)
}

/// [`and_count`] compiled for AVX2: x86-64's baseline has no popcount instruction, and
/// counting a 129k-token row bit by bit took most of an intersection's mask time; AVX2's
/// byte shuffles count it about four times faster.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn and_count_avx2(out: &mut [u32], other: &[u32]) -> u32 {
    and_count_portable(out, other)
}

/// [`and_count`] in plain code (inlined into the AVX2 version, which compiles it anew).
#[inline(always)]
fn and_count_portable(out: &mut [u32], other: &[u32]) -> u32 {
    let mut allowed = 0;
    for (o, &b) in out.iter_mut().zip(other) {
        *o &= b;
        allowed += o.count_ones();
    }
    allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dispatched count (AVX2 where the CPU has it) equals the plain one.
    #[test]
    fn and_count_agrees_with_the_portable_code() {
        let mut seed = 1u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 32) as u32
        };
        for len in [0usize, 1, 7, 8, 9, 33, 4040] {
            let a: Vec<u32> = (0..len).map(|_| next()).collect();
            let b: Vec<u32> = (0..len).map(|_| next() | next()).collect();
            let (mut x, mut y) = (a.clone(), a.clone());
            let want: u32 = a.iter().zip(&b).map(|(p, q)| (p & q).count_ones()).sum();
            assert_eq!((and_count(&mut x, &b), and_count_portable(&mut y, &b)), (want, want));
            assert_eq!(x, y);
            assert!(x.iter().zip(&a).all(|(r, p)| r & !p == 0));
        }
    }
}
