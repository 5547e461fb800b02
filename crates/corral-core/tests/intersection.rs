//! Intersections of compiled grammars (`g1 & g2`) through the public API: along random
//! walks, the mask is exactly the set of tokens that every part accepts (each token's
//! `advance` agrees with its bit), a refused token changes nothing, rollback restores
//! every earlier mask, and forced tokens are the chain of single-token masks.

use std::sync::Arc;

use corral_core::{CompiledGrammar, Dialect, Error, Grammar, Limits, Matcher, Vocabulary};

/// A grammar of a test: a regex or a corral EBNF text.
#[derive(Clone, Copy)]
enum Spec {
    Regex(&'static str),
    Ebnf(&'static str),
}

fn compile(spec: Spec, vocab: &Arc<Vocabulary>, limits: &Limits) -> Arc<CompiledGrammar> {
    let grammar = match spec {
        Spec::Regex(p) => Grammar::regex(p, limits, None).unwrap(),
        Spec::Ebnf(t) => Grammar::cfg_text(t, Dialect::Ebnf, None, limits, None).unwrap(),
    };
    Arc::new(CompiledGrammar::new(&grammar, vocab.clone(), limits, false).unwrap())
}

fn intersect(specs: &[Spec], vocab: &Arc<Vocabulary>, limits: &Limits) -> (Vec<Arc<CompiledGrammar>>, Arc<CompiledGrammar>) {
    let parts: Vec<_> = specs.iter().map(|&s| compile(s, vocab, &Limits::default())).collect();
    let both = Arc::new(CompiledGrammar::intersection(parts.clone(), limits).unwrap());
    (parts, both)
}

/// Every string of 1 or 2 characters over `a b 1 space`, some longer ones, the halves of
/// `é`, a special token, EOS, and a few ids with no token (the mask spans two words).
fn rich_vocab() -> Arc<Vocabulary> {
    let alphabet = ["a", "b", "1", " "];
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    for x in alphabet {
        tokens.push(Some(x.as_bytes().to_vec()));
        for y in alphabet {
            tokens.push(Some(format!("{x}{y}").into_bytes()));
        }
    }
    for t in ["aab", "ba1", "1 a", "abab", "b b", "a1b1"] {
        tokens.push(Some(t.as_bytes().to_vec()));
    }
    tokens.extend([Some(vec![0xc3]), Some(vec![0xa9]), Some("é".as_bytes().to_vec()), Some(b"<s>".to_vec()), None]);
    let eos = tokens.len() as u32 - 1;
    let special = eos - 1;
    Arc::new(Vocabulary::new(tokens.clone(), &[special], &[eos], Some(tokens.len() + 5)).unwrap())
}

/// One token per character of `chars`, then EOS: single-token masks (forced runs) are
/// common here.
fn char_vocab(chars: &str) -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = chars.bytes().map(|b| Some(vec![b])).collect();
    tokens.push(None);
    let eos = tokens.len() as u32 - 1;
    Arc::new(Vocabulary::new(tokens, &[], &[eos], None).unwrap())
}

const CFG_NEST: &str = r#"s ::= "a" s "b" | "1" | s " " s ;"#;
const CFG_WORDS: &str = r#"s ::= w (" " w)* ; w ::= [ab]+ | "1" [ab]* ;"#;
const BAN_AB_11: &str = r#"start ::= not!(/(?s:.*)(?:ab|11)(?s:.*)/) ;"#;
const BAN_B_SPACE_B: &str = r#"start ::= not!(/(?s:.*)(?:b b|aaa)(?s:.*)/) ;"#;

/// The pairs and triples walked: regex & regex, regex & CFG, CFG & ban, and a triple.
fn combinations() -> Vec<Vec<Spec>> {
    vec![
        vec![Spec::Regex(r"(ab|b)*1?"), Spec::Regex(r"[ab1]{0,5}")],
        vec![Spec::Regex(r"[ab1 ]*"), Spec::Ebnf(CFG_NEST)],
        vec![Spec::Regex(r"(a|1| )*b{0,3}"), Spec::Ebnf(CFG_NEST)],
        vec![Spec::Ebnf(CFG_WORDS), Spec::Ebnf(BAN_AB_11)],
        vec![Spec::Regex(r"[ab1 ]{0,9}"), Spec::Ebnf(CFG_NEST), Spec::Ebnf(BAN_B_SPACE_B)],
    ]
}

/// A small deterministic generator (a linear congruential one).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % n
    }
}

fn bit(mask: &[u32], t: u32) -> bool {
    mask[(t >> 5) as usize] >> (t & 31) & 1 == 1
}

/// The mask of `m`, or None where no token is allowed by all its parts (checked to be the
/// `NoCommonToken` error with the right counts).
fn mask_of(m: &Matcher) -> Option<Vec<u32>> {
    let mut out = vec![0u32; m.grammar().vocab().mask_words()];
    match m.fill_mask(&mut out) {
        Ok(info) => {
            assert_eq!(info.allowed, out.iter().map(|w| w.count_ones()).sum::<u32>());
            Some(out)
        }
        Err(Error::NoCommonToken { grammars, tokens }) => {
            assert_eq!((grammars, tokens), (m.parts().unwrap().len(), m.num_tokens()));
            None
        }
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// The tokens every one of `parts` allows, each asked separately (`is_allowed`).
fn brute_force(parts: &[Matcher], size: usize) -> Vec<u32> {
    let mut out = vec![0u32; size.div_ceil(32)];
    for t in 0..size as u32 {
        if parts.iter().all(|p| p.is_allowed(t)) {
            out[(t >> 5) as usize] |= 1 << (t & 31);
        }
    }
    out
}

/// The forced run by its definition: while one token alone is allowed, take it.
fn single_token_chain(m: &Matcher, limit: usize) -> Vec<u32> {
    let mut probe = m.clone();
    let mut out = Vec::new();
    while !probe.is_finished() && out.len() < limit {
        let Some(mask) = mask_of(&probe) else { break };
        let allowed: Vec<u32> = (0..mask.len() as u32 * 32).filter(|&t| bit(&mask, t)).collect();
        if allowed.len() != 1 {
            break;
        }
        assert!(probe.advance(allowed[0]).unwrap());
        out.push(allowed[0]);
    }
    out
}

/// Checks one position of an intersection matcher `m` against the separate matchers of
/// its parts (`solo`, at the same position); returns the allowed tokens.
fn check_position(m: &Matcher, solo: &[Matcher], forced_runs: &mut usize) -> Vec<u32> {
    let size = m.grammar().vocab().size();
    let want = brute_force(solo, size);
    let got = mask_of(m);
    match &got {
        Some(mask) => assert_eq!(mask, &want, "mask after {} tokens", m.num_tokens()),
        None => {
            assert!(want.iter().all(|&w| w == 0), "a dead end where tokens are allowed");
            assert!(solo.iter().all(|p| mask_of(p).is_some_and(|k| k.iter().any(|&w| w != 0))));
        }
    }
    for t in 0..size as u32 {
        let mut copy = m.clone();
        let allowed = bit(&want, t);
        assert_eq!(copy.advance(t).unwrap(), allowed, "token {t}");
        assert_eq!(m.is_allowed(t), allowed);
        if !allowed {
            // A refused token changes no part.
            assert_eq!(copy.num_tokens(), m.num_tokens());
            assert_eq!(mask_of(&copy), got, "token {t} changed the state");
        }
    }
    let limit = m.grammar().limits().max_forced_tokens;
    let forced = m.forced_tokens().unwrap();
    assert_eq!(forced, single_token_chain(m, limit));
    *forced_runs += (forced.len() >= 2) as usize;
    (0..size as u32).filter(|&t| bit(&want, t)).collect()
}

/// Random walks through the intersection of `specs`: every position checked, then
/// rolled back step by step and at random to the masks seen on the way.
fn walk(specs: &[Spec], vocab: &Arc<Vocabulary>, seed: u64) -> usize {
    let (parts, both) = intersect(specs, vocab, &Limits::default());
    let mut rng = Rng(seed);
    let mut forced_runs = 0;
    for _ in 0..12 {
        let mut m = Matcher::new(both.clone());
        let mut solo: Vec<Matcher> = parts.iter().map(|p| Matcher::new(p.clone())).collect();
        let mut seen = vec![mask_of(&m)];
        for _ in 0..10 {
            if m.is_finished() {
                // Only EOS is set, to pad the row; nothing is accepted any more.
                let eos = vocab.eos_ids()[0];
                let mut only_eos = vec![0u32; vocab.mask_words()];
                only_eos[(eos >> 5) as usize] |= 1 << (eos & 31);
                assert_eq!(mask_of(&m), Some(only_eos));
                assert!((0..vocab.size() as u32).all(|t| !m.is_allowed(t) && !m.clone().advance(t).unwrap()));
                assert!(m.forced_tokens().unwrap().is_empty());
                break;
            }
            let allowed = check_position(&m, &solo, &mut forced_runs);
            if allowed.is_empty() {
                break;
            }
            let t = allowed[rng.below(allowed.len())];
            assert!(m.advance(t).unwrap());
            for p in &mut solo {
                assert!(p.advance(t).unwrap());
            }
            assert_eq!(m.is_accepting(), solo.iter().all(Matcher::is_accepting));
            assert_eq!(m.is_finished(), solo[0].is_finished());
            seen.push(mask_of(&m));
        }
        assert_eq!(m.num_tokens(), seen.len() - 1);
        let mut back = m.clone();
        for n in (0..seen.len()).rev() {
            assert_eq!(mask_of(&back), seen[n], "after rolling back to {n} tokens");
            if n > 0 {
                back.rollback(1).unwrap();
            }
        }
        assert!(back.rollback(1).is_err());
        let n = rng.below(seen.len());
        m.rollback(m.num_tokens() - n).unwrap();
        assert_eq!((m.num_tokens(), mask_of(&m)), (n, seen[n].clone()));
        m.reset();
        assert_eq!((m.num_tokens(), mask_of(&m)), (0, seen[0].clone()));
    }
    forced_runs
}

#[test]
fn masks_are_the_intersection_of_the_parts_along_random_walks() {
    let vocab = rich_vocab();
    for (i, specs) in combinations().iter().enumerate() {
        walk(specs, &vocab, 7 + i as u64);
    }
}

#[test]
fn forced_runs_are_the_chain_of_single_token_masks() {
    let vocab = char_vocab("ab1 ");
    let mut forced_runs = 0;
    for (i, specs) in combinations().iter().enumerate() {
        forced_runs += walk(specs, &vocab, 99 + i as u64);
    }
    // Grammars with long single-token stretches.
    let forcing = [
        vec![Spec::Regex(r"(ab1 )*"), Spec::Regex(r"[ab1 ]{0,12}")],
        vec![Spec::Ebnf(r#"s ::= "a" "b" s "1" | " " ;"#), Spec::Regex(r"[ab1 ]*")],
        vec![Spec::Ebnf(r#"s ::= ("a" | "b1 ")* " " ;"#), Spec::Ebnf(BAN_AB_11), Spec::Regex(r"[ab1 ]{0,9}")],
    ];
    for (i, specs) in forcing.iter().enumerate() {
        forced_runs += walk(specs, &vocab, 5 + i as u64);
    }
    assert!(forced_runs >= 10, "only {forced_runs} positions forced a run of two tokens or more");
}

#[test]
fn forced_runs_stop_at_the_intersections_limit() {
    let vocab = char_vocab("ab");
    let specs = [Spec::Regex(r"(ab){5}"), Spec::Regex(r"[ab]*")];
    let (_, unlimited) = intersect(&specs, &vocab, &Limits::default());
    let all = Matcher::new(unlimited).forced_tokens().unwrap();
    assert_eq!(all, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2]);
    // The parts were compiled under the default limits: the intersection's own apply.
    let (_, capped) = intersect(&specs, &vocab, &Limits { max_forced_tokens: 3, ..Limits::default() });
    let mut m = Matcher::new(capped);
    assert_eq!(m.forced_tokens().unwrap(), [0, 1, 0]);
    assert!(m.advance(0).unwrap());
    assert_eq!(m.forced_tokens().unwrap(), [1, 0, 1]);
}

#[test]
fn disjoint_parts_are_a_dead_end_that_forced_runs_stop_at() {
    let vocab = char_vocab("talk");
    let specs = [Spec::Regex("talk"), Spec::Ebnf(r#"start ::= not!(/(?s:.*)talk(?s:.*)/) ;"#)];
    let (_, both) = intersect(&specs, &vocab, &Limits::default());
    let mut m = Matcher::new(both);
    assert_eq!(m.forced_tokens().unwrap(), [0, 1, 2]);
    for t in [0, 1, 2] {
        assert!(m.advance(t).unwrap());
    }
    let mut out = vec![0u32; vocab.mask_words()];
    let err = m.fill_mask(&mut out).unwrap_err();
    assert_eq!(err, Error::NoCommonToken { grammars: 2, tokens: 3 });
    assert!(err.to_string().starts_with("no token is allowed by all 2 combined grammars after 3 tokens"), "{err}");
    assert!(m.forced_tokens().unwrap().is_empty());
    // Each part alone would take "k" or EOS; together neither, and nothing changes.
    assert!(!m.advance(3).unwrap() && !m.advance(4).unwrap());
    assert_eq!(m.num_tokens(), 3);
    assert_eq!(m.completion().unwrap(), None);
}

#[test]
fn a_parts_own_dead_end_is_an_empty_mask() {
    // No token spells "x": after "a", the first part allows nothing by itself.
    let vocab = char_vocab("ab");
    let (_, both) = intersect(&[Spec::Regex("ax"), Spec::Regex("[a-z]*")], &vocab, &Limits::default());
    let mut m = Matcher::new(both);
    assert!(m.advance(0).unwrap());
    let mut out = vec![u32::MAX; vocab.mask_words()];
    assert_eq!(m.fill_mask(&mut out).unwrap().allowed, 0);
    assert!(out.iter().all(|&w| w == 0));
}

#[test]
fn nested_intersections_flatten() {
    let vocab = rich_vocab();
    let limits = Limits::default();
    let [a, b, c] =
        [Spec::Regex(r"[ab1 ]{0,9}"), Spec::Ebnf(CFG_NEST), Spec::Ebnf(BAN_B_SPACE_B)].map(|s| compile(s, &vocab, &limits));
    let inner = Arc::new(CompiledGrammar::intersection(vec![a.clone(), b.clone()], &limits).unwrap());
    let nested = CompiledGrammar::intersection(vec![inner, c.clone()], &limits).unwrap();
    let parts = nested.parts().unwrap();
    assert_eq!(parts.len(), 3);
    assert!(parts.iter().zip([&a, &b, &c]).all(|(p, q)| Arc::ptr_eq(p, q) && p.parts().is_none()));
    assert!(a.parts().is_none());
    let flat = Arc::new(CompiledGrammar::intersection(vec![a, b, c], &limits).unwrap());
    let (mut x, mut y) = (Matcher::new(Arc::new(nested)), Matcher::new(flat));
    assert_eq!(x.parts().unwrap().len(), 3);
    for t in [0u32, 0, 2, 3, 3] {
        assert_eq!(mask_of(&x), mask_of(&y));
        assert_eq!(x.advance(t).unwrap(), y.advance(t).unwrap());
    }
}

#[test]
fn parts_must_share_a_vocabulary() {
    let limits = Limits::default();
    let (small, rich) = (char_vocab("ab"), rich_vocab());
    let a = compile(Spec::Regex("a+"), &small, &limits);
    let b = compile(Spec::Regex("a+"), &rich, &limits);
    let err = CompiledGrammar::intersection(vec![a.clone(), b], &limits).unwrap_err();
    assert!(matches!(&err, Error::Vocabulary(m) if m.contains("same vocabulary") && m.contains("grammar 2")), "{err}");
    // Equal content is the same vocabulary, whichever object holds it.
    let c = compile(Spec::Regex("a*"), &char_vocab("ab"), &limits);
    assert!(CompiledGrammar::intersection(vec![a, c], &limits).is_ok());
    assert!(CompiledGrammar::intersection(Vec::new(), &limits).is_err());
}

#[test]
fn completions_are_accepted_by_every_part() {
    let vocab = char_vocab("ab");
    let limits = Limits::default();
    let complete = |specs: &[Spec], prefix: &[u32]| {
        let (_, both) = intersect(specs, &vocab, &limits);
        let mut m = Matcher::new(both.clone());
        for &t in prefix {
            assert!(m.advance(t).unwrap());
        }
        let rest = m.completion().unwrap();
        if let Some(rest) = &rest {
            let mut text: Vec<u8> = prefix.iter().flat_map(|&t| vocab.token_bytes(t).to_vec()).collect();
            text.extend_from_slice(rest);
            assert!(both.matches(&text).unwrap(), "{text:?}");
        }
        rest
    };
    assert_eq!(complete(&[Spec::Regex("a+b"), Spec::Regex("[ab]{2}")], &[0]).as_deref(), Some(&b"b"[..]));
    // The first part may end now, the second needs two more bytes: its ending serves both.
    assert_eq!(complete(&[Spec::Regex("a[ab]*"), Spec::Regex("[ab]{3}")], &[0]).as_deref(), Some(&b"aa"[..]));
    assert_eq!(complete(&[Spec::Ebnf(r#"s ::= "a" s "b" | "b" ;"#), Spec::Regex("a*b+")], &[0, 0]).as_deref(), Some(&b"bbb"[..]));
    assert_eq!(complete(&[Spec::Regex("a+b"), Spec::Regex("[ab]{2}")], &[0, 1]).as_deref(), Some(&b""[..]));
    // Each part's own shortest ending ("b", then three bytes) fails the other: no
    // completion is given, though "abbbb" would do.
    assert_eq!(complete(&[Spec::Regex("a(a|bbbb)|b"), Spec::Regex("[ab]{3,}")], &[]), None);
    let (_, both) = intersect(&[Spec::Regex("a"), Spec::Regex("a|b")], &vocab, &limits);
    let mut m = Matcher::new(both);
    assert!(m.advance(0).unwrap() && m.advance(2).unwrap() && m.is_finished());
    assert_eq!(m.completion().unwrap(), None);
    assert!(!m.advance(0).unwrap());
}
