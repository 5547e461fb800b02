//! Speculative decoding through the public API: `validate_tokens` and `fill_draft_masks`
//! agree with advancing token by token (and masking before each), on random drafts of
//! tokens both allowed and not, over grammars of every engine (DFA, Earley, intersection)
//! and with the run-time checks beside the parser (distinct keys, distinct array items);
//! the matcher is left exactly where it was (same masks, same token count, same rollback).

use std::sync::Arc;

use corral_core::json_schema::compile::schema_grammar;
use corral_core::json_schema::translate::SchemaOptions;
use corral_core::{CompiledGrammar, Dialect, Error, Grammar, Limits, Matcher, Vocabulary};

/// Tokens of 1–3 bytes over the characters JSON and the test grammars use, and EOS.
fn vocab() -> Arc<Vocabulary> {
    let chars: Vec<u8> = br#"{}[]":,ab1 xy"#.to_vec();
    let mut tokens: Vec<Option<Vec<u8>>> = chars.iter().map(|&c| Some(vec![c])).collect();
    for &x in &chars {
        for &y in &chars {
            tokens.push(Some(vec![x, y]));
        }
    }
    for t in [&br#"{"a"#[..], br#"":"#, br#"","#, b"1,1", br#"["a"#, br#"a",""#] {
        tokens.push(Some(t.to_vec()));
    }
    tokens.push(None);
    let eos = tokens.len() as u32 - 1;
    Arc::new(Vocabulary::new(tokens, &[], &[eos], None).unwrap())
}

fn compiled(grammar: &Grammar, vocab: &Arc<Vocabulary>) -> Arc<CompiledGrammar> {
    Arc::new(CompiledGrammar::new(grammar, vocab.clone(), &Limits::default(), false).unwrap())
}

fn schema(text: &str, vocab: &Arc<Vocabulary>) -> Arc<CompiledGrammar> {
    let grammar = schema_grammar(text, &[], &SchemaOptions::default(), &Limits::default()).unwrap().grammar;
    compiled(&grammar, vocab)
}

/// The grammars under test: a DFA, an Earley grammar, JSON Schemas whose matchers keep
/// keys and array items distinct, and an intersection.
fn grammars(vocab: &Arc<Vocabulary>) -> Vec<(&'static str, Arc<CompiledGrammar>)> {
    let limits = Limits::default();
    let regex = compiled(&Grammar::regex("(ab|1x)*y?", &limits, None).unwrap(), vocab);
    let cfg = Grammar::cfg_text(r#"s ::= "[" (s ("," s)*)? "]" | "a" ;"#, Dialect::Ebnf, None, &limits, None).unwrap();
    let cfg = compiled(&cfg, vocab);
    let keys = schema(r#"{"type":"object","additionalProperties":{"type":"integer"},"maxProperties":3}"#, vocab);
    let items = schema(r#"{"type":"array","items":{"enum":["a","ab","b",1,11]},"uniqueItems":true}"#, vocab);
    let either = Grammar::regex("[\\[\\]a,]*", &limits, None).unwrap();
    let both = CompiledGrammar::intersection(vec![cfg.clone(), compiled(&either, vocab)], &limits).unwrap();
    vec![("regex", regex), ("cfg", cfg), ("keys", keys), ("items", items), ("intersection", Arc::new(both))]
}

/// A small deterministic generator (xorshift), so failures repeat.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn allowed_ids(mask: &[u32]) -> Vec<u32> {
    (0..mask.len() as u32 * 32).filter(|&t| mask[(t / 32) as usize] >> (t % 32) & 1 == 1).collect()
}

/// A draft of `k` tokens: mostly allowed ones (a walk), sometimes any id.
fn draft(m: &Matcher, rng: &mut Rng, k: usize, size: usize) -> Vec<u32> {
    let mut probe = m.fork();
    let mut mask = vec![0u32; m.grammar().vocab().mask_words()];
    let mut out = Vec::new();
    for _ in 0..k {
        let ok = probe.fill_mask(&mut mask).is_ok();
        let ids = if ok { allowed_ids(&mask) } else { Vec::new() };
        let t = if ids.is_empty() || rng.below(5) == 0 { rng.below(size) as u32 } else { ids[rng.below(ids.len())] };
        out.push(t);
        let _ = probe.advance(t);
    }
    out
}

/// What advancing one token at a time says of `draft`: the accepted count and the mask
/// before each accepted token and after the last.
fn one_by_one(m: &Matcher, draft: &[u32]) -> (usize, Vec<Vec<u32>>) {
    let mut probe = m.fork();
    let words = m.grammar().vocab().mask_words();
    let mut masks = Vec::new();
    for &t in draft {
        let mut row = vec![0u32; words];
        probe.fill_mask(&mut row).unwrap();
        masks.push(row);
        if !probe.advance(t).unwrap() {
            return (masks.len() - 1, masks);
        }
    }
    let mut row = vec![0u32; words];
    probe.fill_mask(&mut row).unwrap();
    masks.push(row);
    (draft.len(), masks)
}

fn state(m: &Matcher) -> (usize, Vec<u32>, bool) {
    let mut row = vec![0u32; m.grammar().vocab().mask_words()];
    m.fill_mask(&mut row).unwrap();
    (m.num_tokens(), row, m.is_accepting())
}

#[test]
fn drafts_agree_with_one_token_at_a_time_and_leave_no_trace() {
    let vocab = vocab();
    let words = vocab.mask_words();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, g) in grammars(&vocab) {
        let mut refused = 0;
        for walk in 0..40 {
            let mut m = Matcher::new(g.clone());
            for step in 0..12 {
                let k = 1 + rng.below(6);
                let d = draft(&m, &mut rng, k, vocab.size());
                let before = state(&m);
                let (expect_n, expect_masks) = one_by_one(&m, &d);
                assert_eq!(m.validate_tokens(&d).unwrap(), expect_n, "{name} walk {walk} step {step}: {d:?}");
                assert_eq!(state(&m), before, "{name}: validate_tokens left a trace");
                // Rows after the refused token are not written: a sentinel shows it.
                let mut out = vec![0xdead_beef_u32; words * (k + 1)];
                let got = m.fill_draft_masks(&d, &mut out).unwrap();
                assert_eq!(got.accepted, expect_n, "{name}: accepted count of {d:?}");
                assert_eq!(got.rows.len(), expect_n + 1);
                for (i, row) in expect_masks.iter().enumerate() {
                    assert_eq!(&out[i * words..(i + 1) * words], &row[..], "{name}: row {i} of {d:?}");
                    assert_eq!(got.rows[i].allowed as usize, allowed_ids(row).len(), "{name}: count of row {i}");
                }
                assert!(out[(expect_n + 1) * words..].iter().all(|&w| w == 0xdead_beef), "{name}: rows past the refusal");
                assert_eq!(state(&m), before, "{name}: fill_draft_masks left a trace");
                refused += usize::from(expect_n < k);
                // Move on by the accepted part, sometimes rolling some of it back.
                for &t in &d[..expect_n] {
                    assert!(m.advance(t).unwrap());
                }
                let back = rng.below(expect_n + 1).min(m.num_tokens());
                m.rollback(back).unwrap();
                if m.is_finished() {
                    break;
                }
            }
        }
        assert!(refused > 0, "{name}: no draft was refused: the test did not test refusal");
    }
}

#[test]
fn bad_drafts_are_errors_that_leave_no_trace() {
    let vocab = vocab();
    let words = vocab.mask_words();
    for (name, g) in grammars(&vocab) {
        let mut m = Matcher::new(g);
        let mut row = vec![0u32; words];
        m.fill_mask(&mut row).unwrap();
        let first = allowed_ids(&row)[0];
        let before = state(&m);
        let out_of_range = vocab.size() as u32 + 3;
        let e = m.validate_tokens(&[first, out_of_range]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{name}: {e}");
        assert_eq!(state(&m), before, "{name}: an out-of-range draft left a trace");
        let mut short = vec![0u32; words * 2];
        let e = m.fill_draft_masks(&[first, first], &mut short).unwrap_err();
        assert!(e.to_string().contains("needs 3 bitmask rows"), "{name}: {e}");
        let mut out = vec![0u32; words * 3];
        assert!(m.fill_draft_masks(&[first, out_of_range], &mut out).is_err());
        assert_eq!(state(&m), before, "{name}: a failed draft mask left a trace");
    }
}

#[test]
fn a_draft_through_eos_masks_only_eos_after_it() {
    let vocab = vocab();
    let eos = vocab.eos_ids()[0];
    let limits = Limits::default();
    let g = compiled(&Grammar::regex("ab", &limits, None).unwrap(), &vocab);
    let mut m = Matcher::new(g);
    let a = (0..vocab.size() as u32).find(|&t| vocab.token_bytes(t) == b"ab").unwrap();
    let words = vocab.mask_words();
    let mut out = vec![0u32; words * 4];
    let got = m.fill_draft_masks(&[a, eos, a], &mut out).unwrap();
    assert_eq!(got.accepted, 2, "nothing follows EOS");
    assert_eq!(allowed_ids(&out[2 * words..3 * words]), vec![eos]);
    assert_eq!(m.num_tokens(), 0);
}
