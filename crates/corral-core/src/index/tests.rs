use std::sync::Arc;

use super::compiled::*;
use super::lexer_mask::{self as lexmask, Ends};
use super::string_safe::string_safe_slice_mask;
use crate::automata::DEAD;
use crate::grammar::Grammar;
use crate::limits::Limits;
use crate::vocab::{TokenKind, Vocabulary};
use crate::Matcher;

/// Every byte string of length 1..=3 over a small alphabet that includes the halves of a
/// two-byte UTF-8 character, plus EOS.
/// Every string of 1 to 3 bytes over `alphabet`, then `extra`, then an EOS with no bytes.
fn strings_over(alphabet: &[u8], extra: &[&[u8]]) -> Vocabulary {
    let mut toks: Vec<Option<Vec<u8>>> = Vec::new();
    for len in 1..=3u32 {
        for mut n in 0..alphabet.len().pow(len) {
            let mut t = Vec::new();
            for _ in 0..len {
                t.push(alphabet[n % alphabet.len()]);
                n /= alphabet.len();
            }
            toks.push(Some(t));
        }
    }
    toks.extend(extra.iter().map(|t| Some(t.to_vec())));
    toks.push(None);
    let eos = toks.len() as u32 - 1;
    Vocabulary::new(toks, &[], &[eos], None).unwrap()
}

fn all_short_tokens() -> Vocabulary {
    strings_over(&[b'a', b'b', b'1', b'.', 0xc3, 0xa9], &[])
}

#[test]
fn trie_masks_equal_brute_force_on_every_state() {
    let vocab = Arc::new(all_short_tokens());
    for pattern in [r"a+b?", r"(ab|1\.)*é", r"[^a]{2,5}", r"\d+(\.\d+)?", r"(a|é)b(1|\.)+", ""] {
        let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
        let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), true).unwrap();
        for state in 1..c.dfa().unwrap().num_states() as u32 {
            let mut got = vec![0u32; vocab.mask_words()];
            c.state_mask(state).write(&mut got);
            for id in 0..vocab.size() as u32 {
                let want = match vocab.kind(id) {
                    TokenKind::Normal => c.dfa().unwrap().walk(state, vocab.token_bytes(id)) != DEAD,
                    TokenKind::Eos => c.dfa().unwrap().is_accepting(state),
                    _ => false,
                };
                let bit = got[(id >> 5) as usize] >> (id & 31) & 1 == 1;
                assert_eq!(bit, want, "/{pattern}/ state {state} token {id}");
            }
        }
    }
}

/// Tokens of free text and of JSON syntax, short and long (past the 8- and 16-byte slice
/// bounds), with unfinished and malformed UTF-8.
fn text_tokens() -> Vocabulary {
    let mut toks: Vec<Option<Vec<u8>>> = Vec::new();
    let pieces: [&[u8]; 14] =
        [b"a", b"b", b" ", b"\"", b"\\", b"n", "é".as_bytes(), &[0xc3], &[0xa9], b"\n", b"}", b":", b"%", b"1"];
    for x in pieces {
        toks.push(Some(x.to_vec()));
        for y in pieces {
            toks.push(Some([x, y].concat()));
        }
    }
    for n in [5usize, 8, 9, 12, 16, 17, 24, 40] {
        toks.push(Some(b"ab".repeat(n).into_iter().take(n).collect()));
        toks.push(Some("é".repeat(n / 2).into_bytes()));
        let mut t = b"x".repeat(n - 1);
        t.push(b'"');
        toks.push(Some(t));
    }
    toks.push(Some(b"a\\nb".to_vec()));
    toks.push(Some(b"\",\"".to_vec()));
    toks.push(None);
    let eos = toks.len() as u32 - 1;
    Vocabulary::new(toks, &[], &[eos], None).unwrap()
}

/// Masks through the string-safe slices equal those of a walk of the whole trie, for
/// regular grammars (per DFA state) and for lexer masks (tokens and end nodes).
#[test]
fn string_safe_slices_change_no_mask() {
    let vocab = Arc::new(text_tokens());
    assert_eq!(vocab.string_safe_slices().iter().map(|s| s.max_len).collect::<Vec<_>>(), vec![40, 32, 16, 8]);
    let patterns = [
        r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])*""#,
        r#""[^"\\\x00-\x1f]{0,20}""#,
        r#"[^"\\\x00-\x1f]{3,30}"#,
        r"[ab ]*",
        r"(?s:.)*",
        r#"[^"]*"x"#,
        r"(?:ab)+",
        r"a{0,12}",
        // Risky bytes: `b` dies always; `b` after `a` only; the second byte of `é` only.
        r#""[^"\\\x00-\x1fb]*""#,
        r#""(?:[^"\\\x00-\x1fa]|a[^"\\\x00-\x1fb])*""#,
        r"(?:[^é])*",
        r#""[^"\\\x00-\x1f]*b[^"\\\x00-\x1f]*""#,
        // Dangerous states entered by `%`: ASCII only, and with any character.
        r#""(?:[0-9a-z :}]|%[0-9a-f][0-9a-f])*""#,
        r#""(?:[^"\\\x00-\x1f%]|%1[0-9a-f])*""#,
        r"(?:[ab1]|%1)*",
        // Counts that run out inside a slice token: the short tokens need no reading.
        r#""[ab1 ]{2,12}""#,
        r"[ab1%]{0,6}",
        r#""(?:[ab1 ]|é){2,12}""#,
        // Room for 32 bytes but not 40: the 32-byte slice, with the 40-byte tokens read.
        r#""[^"\\\x00-\x1f]{0,36}""#,
        // Character budgets (a small maxLength), with and without the quotes, and a
        // count over a class that is not every character (no budget).
        r#""[^"\\\x00-\x1f]{0,3}""#,
        r#""[^"\\\x00-\x1f]{2,5}""#,
        r#"[^"\\\x00-\x1f]{1,4}"#,
        r#""[ab1 é]{0,3}""#,
        // A terminal that may end inside slice tokens (a closing marker): going on after
        // it and dying after it, after a count, and at `ab`, whose node has slice tokens
        // only below it (no walk of the rest meets it).
        r#"[^"\\\x00-\x1f]*}"#,
        r#"[^"\\\x00-\x1f}]*}"#,
        r#"[^"\\\x00-\x1f]{0,20}%1"#,
        r#"[^"\\\x00-\x1f]*ab"#,
        r#"[^"\\\x00-\x1fb]*ab"#,
    ];
    let (mut sliced, mut risky, mut mid, mut budgets, mut ending) = (0, 0, 0, 0, 0);
    for pattern in patterns {
        let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
        let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
        let dfa = c.dfa().unwrap();
        for state in 1..dfa.num_states() as u32 {
            let (mut got, mut want) = (vec![0u32; vocab.mask_words()], vec![0u32; vocab.mask_words()]);
            c.state_mask(state).write(&mut got);
            c.compute_mask_full(state).write(&mut want);
            assert_eq!(got, want, "/{pattern}/ state {state}");
            let fast = lexmask::compute(&vocab, dfa, state, Ends::ANY);
            let full = lexmask::compute_full(vocab.trie(), dfa, state, vocab.mask_words(), Ends::ANY);
            let (mut a, mut b) = (vec![0u32; vocab.mask_words()], vec![0u32; vocab.mask_words()]);
            fast.tokens.write(&mut a);
            full.tokens.write(&mut b);
            assert_eq!(a, b, "lexer /{pattern}/ state {state}");
            let (mut ea, mut eb) = (fast.completions.clone(), full.completions.clone());
            ea.sort_unstable();
            eb.sort_unstable();
            assert_eq!(ea, eb, "ends /{pattern}/ state {state}");
            let clear = vocab.string_safe_slices().iter().any(|s| dfa.admits_string_safe(state, s.max_len, true));
            sliced += clear as usize;
            budgets += dfa.string_safe_char_budget(state, false).is_some() as usize;
            mid += (string_safe_slice_mask(&vocab, dfa, state, Ends::NONE).map(|m| m.slice.max_len) == Some(32)) as usize;
            risky += (!clear && string_safe_slice_mask(&vocab, dfa, state, Ends::NONE).is_some()) as usize;
            ending += string_safe_slice_mask(&vocab, dfa, state, Ends::ANY).is_some_and(|m| !m.ends.is_empty()) as usize;
        }
    }
    assert!(sliced >= 10, "the slices were used in {sliced} states only");
    assert!(risky >= 4, "slices with risky bytes were used in {risky} states only");
    assert!(mid >= 4, "the 32-byte slice was used in {mid} states only");
    assert!(budgets >= 8, "character budgets were used in {budgets} states only");
    assert!(ending >= 3, "slices where the terminal ends inside tokens were used in {ending} states only");
}

/// A slice token that passes a closing marker and then a byte that kills everywhere ends
/// the terminal inside it: the slice mask reads it rather than refuse it for that byte, so
/// the marker's node (which only such tokens reach) is an end node, as a walk finds.
#[test]
fn slice_tokens_that_end_a_terminal_before_a_killing_byte_are_read() {
    let pieces = ["a", "b", "<", "/", "p", ">", "~", "\"", "\n", "ab", "a<", "</p>~", "</p>~~", "a</p>~"];
    let vocab = Vocabulary::new(
        pieces.iter().map(|p| Some(p.as_bytes().to_vec())).chain([None]).collect(),
        &[],
        &[pieces.len() as u32],
        None,
    )
    .unwrap();
    let g = Grammar::regex(r#"[^"\\\x00-\x1f~]*</p>"#, &Limits::default(), None).unwrap();
    let c = CompiledGrammar::new(&g, Arc::new(vocab.clone()), &Limits::default(), false).unwrap();
    let dfa = c.dfa().unwrap();
    let ends: Vec<u32> = [&b"</p>"[..], b"a</p>"].iter().map(|m| vocab.trie().node_of(m).unwrap()).collect();
    let sliced = string_safe_slice_mask(&vocab, dfa, dfa.start(), Ends::ANY).expect("a slice applies");
    assert_eq!(sliced.ends, ends);
    let (fast, full) = (
        lexmask::compute(&vocab, dfa, dfa.start(), Ends::ANY),
        lexmask::compute_full(vocab.trie(), dfa, dfa.start(), 1, Ends::ANY),
    );
    assert_eq!((fast.completions, fast.slice), (ends.clone(), None));
    assert_eq!(full.completions, ends);
    let (mut a, mut b) = ([0u32], [0u32]);
    fast.tokens.write(&mut a);
    full.tokens.write(&mut b);
    assert_eq!(a, b);
}

/// A lexer mask that takes its slice part from a sibling state's (states that read every
/// text of the slice's bound alike: inside long counts, far from their bounds) equals the
/// one computed directly, tokens and end nodes, with and without ends.
#[test]
fn slice_sibling_lexer_masks_equal_computed() {
    let vocab = Arc::new(text_tokens());
    let words = vocab.mask_words();
    let mut derived = 0;
    for pattern in [
        r#""[^"\\\x00-\x1f]{1,120}""#,
        r#""[^"\\\x00-\x1f]{0,90}"x"#,
        r#""(?:[ab1 ]|é){2,100}""#,
        r#""[a-z0-9%]{1,63}(?:\.[a-z0-9]{1,63})*""#,
        r#"[^"\\\x00-\x1f]{3,80}"#,
    ] {
        let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
        let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
        let dfa = c.dfa().unwrap();
        for ends in [Ends::ANY, Ends::NONE] {
            let compute = |s| lexmask::compute(&vocab, dfa, s, ends);
            let masks: Vec<_> = (0..dfa.num_states() as u32).map(|s| (s > 0).then(|| compute(s))).collect();
            for a in 1..dfa.num_states() as u32 {
                let sibling = masks[a as usize].as_ref().unwrap();
                for b in 1..dfa.num_states() as u32 {
                    if a == b || !lexmask::slice_sibling_agrees(&vocab, dfa, b, a, sibling) {
                        continue;
                    }
                    let got = lexmask::from_slice_sibling(&vocab, dfa, b, sibling, ends);
                    let want = masks[b as usize].as_ref().unwrap();
                    let (mut g, mut w) = (vec![0u32; words], vec![0u32; words]);
                    got.tokens.write(&mut g);
                    want.tokens.write(&mut w);
                    assert_eq!(g, w, "/{pattern}/ tokens of state {b} from {a} (ends {ends:?})");
                    let (mut gc, mut wc) = (got.completions.clone(), want.completions.clone());
                    gc.sort_unstable();
                    wc.sort_unstable();
                    assert_eq!(gc, wc, "/{pattern}/ completions of state {b} from {a} (ends {ends:?})");
                    derived += 1;
                }
            }
        }
    }
    assert!(derived > 1000, "only {derived} derivations checked");
}

/// A lexer mask that takes its tokens up to some depth from a sibling state's (states that
/// read every text of that many bytes alike: inside counted character classes, far from
/// their bounds) equals the one computed directly, tokens and end nodes, with and without
/// ends, at every depth the two states agree to.
#[test]
fn depth_sibling_lexer_masks_equal_computed() {
    let vocab = Arc::new(text_tokens());
    let words = vocab.mask_words();
    let max_depth = vocab.trie().max_depth();
    let (mut derived, mut deep) = (0, 0);
    for pattern in [
        r#""[ab1%-]{1,39}""#,
        r#""[ab1]([ab1-]{0,30}[ab1])?""#,
        r#""[ab1]{1,20}(?:\.[ab]{1,9})*""#,
        r#""[^"\\\x00-\x1f]{1,60}""#,
        r#"[ab ]{3,45}x"#,
    ] {
        let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
        let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
        let dfa = c.dfa().unwrap();
        for ends in [Ends::ANY, Ends::NONE] {
            let compute = |s| lexmask::compute(&vocab, dfa, s, ends);
            let masks: Vec<_> = (0..dfa.num_states() as u32).map(|s| (s > 0).then(|| compute(s))).collect();
            for a in 1..dfa.num_states() as u32 {
                let sibling = masks[a as usize].as_ref().unwrap();
                for b in 1..dfa.num_states() as u32 {
                    let depth = dfa.agreeing_depth(b, a, max_depth, usize::MAX);
                    if a == b {
                        continue;
                    }
                    let got = lexmask::from_depth_sibling(&vocab, dfa, b, sibling, depth, ends);
                    let want = masks[b as usize].as_ref().unwrap();
                    let (mut g, mut w) = (vec![0u32; words], vec![0u32; words]);
                    got.tokens.write(&mut g);
                    want.tokens.write(&mut w);
                    assert_eq!(g, w, "/{pattern}/ tokens of state {b} from {a} within {depth} (ends {ends:?})");
                    let mut wc = want.completions.clone();
                    wc.sort_unstable();
                    assert_eq!(
                        got.completions, wc,
                        "/{pattern}/ completions of state {b} from {a} within {depth} (ends {ends:?})"
                    );
                    derived += 1;
                    deep += usize::from(depth >= 8 && w.iter().any(|&x| x != 0));
                }
            }
        }
    }
    assert!(derived > 5000 && deep > 1000, "only {derived} derivations checked, {deep} of them 8 bytes deep or more");
}

/// A regular grammar's masks inside long counts, where a new state borrows the slice part
/// of a recent state's mask: every state's mask equals a walk of the whole trie, and the
/// borrowing happened.
#[test]
fn regular_masks_inside_long_counts_equal_full_walks() {
    let vocab = Arc::new(text_tokens());
    let depth = vocab.trie().max_depth();
    let mut borrowed = 0;
    for pattern in [r#""[^"\\\x00-\x1f]{1,120}""#, r#""[a-z0-9%]{1,63}(?:\.[a-z0-9]{1,63})*""#, r#""(?:[ab1 ]|é){2,90}""#] {
        let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
        let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
        let Engine::Dfa { dfa, sliced, .. } = &c.engine else { panic!("a regular grammar") };
        for state in 1..dfa.num_states() as u32 {
            let canonical = dfa.equivalent_within(state, depth);
            borrowed += usize::from(c.state_slice_sibling(dfa, sliced, canonical).is_some());
            let (mut got, mut want) = (vec![0u32; vocab.mask_words()], vec![0u32; vocab.mask_words()]);
            c.state_mask(state).write(&mut got);
            c.compute_mask_full(state).write(&mut want);
            assert_eq!(got, want, "/{pattern}/ state {state}");
        }
    }
    assert!(borrowed > 100, "only {borrowed} states borrowed a slice part");
}

/// JSON strings with long `maxLength`s and a pattern of counted labels, inside a grammar:
/// masks along random walks (where most states of a count take their lexer masks'
/// slice part from an earlier state's) equal the reference trie walk.
#[test]
fn masks_inside_long_counts_equal_reference() {
    use crate::frontend::Dialect;
    let vocab = Arc::new(text_tokens());
    let limits = Limits::default();
    // (Separators the vocabulary has: it has no `{` or `,`.)
    let text = r#"start: "1" (pair " " (pair " ")*)? "}"
pair: NAME ":" (LONG | LABEL | SHORT | LOGIN)
NAME: /"[a-z]{1,3}"/
LOGIN: /"[ab1-]{1,39}(\[bot\])?"/
LONG: /"[^"\\\x00-\x1f]{1,120}"/
LABEL: /"[a-z0-9%]{1,63}(\.[a-z0-9]{1,63})*"/
SHORT: /"(?:[ab1 ]|é){0,40}"/
"#;
    let g = Grammar::cfg_text(text, Dialect::Lark, None, &limits, None).unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &limits, false).unwrap());
    walks_agree_with_reference(&c, (30, 60), 11, Some(b"a"), "long counts", |m, slow| {
        m.fill_mask_reference(slow).unwrap();
    });
    // Far from their bounds, a count's states end below the same trie nodes: they share
    // one completions list (and so what the parser reads below it).
    let Engine::Cfg { lex_cache, .. } = &c.engine else { panic!("a context-free grammar") };
    let cache = lex_cache.read().unwrap();
    let ending = cache.masks.values().filter(|m| !m.completions.is_empty()).count();
    assert!(ending > 40 && cache.completion_lists() * 3 < ending, "{} lists for {ending} masks", cache.completion_lists());
    for m in cache.masks.values() {
        assert!(m.completions.windows(2).all(|w| w[0] < w[1]), "cached completions are sorted, without repeats");
    }
}

/// `warm_up` computes the lexer mask of every terminal at its start and one byte in (so a
/// first visit there reads the cache), and changes no mask: walks over the warmed grammar
/// equal the reference trie walk. A regular grammar has nothing to warm.
#[test]
fn warm_up_caches_entry_masks_and_changes_no_mask() {
    use crate::frontend::Dialect;
    let vocab = Arc::new(text_tokens());
    let limits = Limits::default();
    // (Separators the vocabulary has: it has no `{` or `,`.)
    let text = r#"start: "1" (pair " " (pair " ")*)? "}"
pair: NAME ":" (LONG | LOGIN | NUMBER)
NAME: /"[a-z]{1,3}"/
LONG: /"[^"\\\x00-\x1f]{1,120}"/
LOGIN: /"[ab1-]{1,39}"/
NUMBER: /-?[0-9]+/
"#;
    let g = Grammar::cfg_text(text, Dialect::Lark, None, &limits, None).unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &limits, false).unwrap());
    let Engine::Cfg { earley, lex_cache, .. } = &c.engine else { panic!("a context-free grammar") };
    assert!(lex_cache.read().unwrap().masks.is_empty());
    c.warm_up().unwrap();
    let depth = vocab.trie().max_depth();
    let cache = lex_cache.read().unwrap();
    let mut warmed = 0;
    for (term, t) in earley.cfg().terminals.iter().enumerate() {
        let flag = if earley.ends_output(term as u32) { 1 << 31 } else { 0 };
        let mut states = vec![t.dfa.start()];
        states.extend((0..=255u8).map(|b| t.dfa.next(t.dfa.start(), b)).filter(|&s| s != DEAD));
        for s in states {
            let key = (term as u32, t.dfa.equivalent_within(s, depth) | flag);
            assert!(cache.masks.contains_key(&key), "terminal {term} state {s} not warmed");
            warmed += 1;
        }
    }
    assert!(warmed >= 2 * earley.cfg().terminals.len());
    drop(cache);
    walks_agree_with_reference(&c, (20, 40), 5, Some(b"a"), "warmed", |m, slow| {
        m.fill_mask_reference(slow).unwrap();
    });
    let r = CompiledGrammar::new(&Grammar::regex("[ab]{2,9}", &limits, None).unwrap(), vocab.clone(), &limits, false).unwrap();
    r.warm_up().unwrap();
    assert_eq!(r.cached_states(), 0);
    // Under a small bound on cached masks, warming stops there (a few masks, not all).
    let small = Limits { max_mask_cache_bytes: 1, ..Limits::default() };
    let c = CompiledGrammar::new(&g, vocab, &small, false).unwrap();
    c.warm_up().unwrap();
    let Engine::Cfg { lex_cache, .. } = &c.engine else { panic!("a context-free grammar") };
    let kept = lex_cache.read().unwrap().masks.len();
    assert!((1..warmed).contains(&kept), "{kept} masks warmed under a 1-byte bound ({warmed} without)");
}

/// Masks on a vocabulary where a node's children are exactly the readable bytes, or
/// none of them, or only part of a multi-byte character (regular and lexer masks).
#[test]
fn masks_where_children_are_partly_readable() {
    let words: [&[u8]; 12] = [b"a", b"ab", b"abb", b"abx", b"b", b"ba", b"x", b"xy", b"\xc3", b"\xc3\xa9", b"a\xc3\xa9", b"b\""];
    let mut toks: Vec<Option<Vec<u8>>> = words.iter().map(|w| Some(w.to_vec())).collect();
    toks.push(None);
    let eos = toks.len() as u32 - 1;
    let vocab = Arc::new(Vocabulary::new(toks, &[], &[eos], None).unwrap());
    for pattern in [r"[ab]*", r"a(?:b|é)*", r#"[ab]*""#, r"x|xy", r"b|ba"] {
        let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
        let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
        let dfa = c.dfa().unwrap();
        for state in 1..dfa.num_states() as u32 {
            let mut got = vec![0u32; vocab.mask_words()];
            c.state_mask(state).write(&mut got);
            let lex = lexmask::compute(&vocab, dfa, state, Ends::ANY);
            let mut lex_bits = vec![0u32; vocab.mask_words()];
            lex.tokens.write(&mut lex_bits);
            for id in 0..eos {
                let want = dfa.walk(state, vocab.token_bytes(id)) != DEAD;
                assert_eq!(got[(id >> 5) as usize] >> (id & 31) & 1 == 1, want, "/{pattern}/ state {state} token {id}");
                assert_eq!(
                    lex_bits[(id >> 5) as usize] >> (id & 31) & 1 == 1,
                    want,
                    "lexer /{pattern}/ state {state} token {id}"
                );
            }
        }
    }
}

#[test]
fn matcher_rejects_and_rolls_back() {
    let vocab = Arc::new(all_short_tokens());
    let g = Grammar::regex(r"ab1", &Limits::default(), None).unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap());
    let id = |s: &[u8]| (0..vocab.size() as u32).find(|&i| vocab.token_bytes(i) == s).unwrap();
    let mut m = Matcher::new(c);
    assert!(!m.advance(id(b"b")).unwrap());
    assert!(m.advance(id(b"ab")).unwrap());
    assert!(!m.is_accepting());
    assert!(m.advance(id(b"1")).unwrap());
    assert!(m.is_accepting());
    m.rollback(1).unwrap();
    assert!(!m.is_accepting());
    assert!(m.rollback(2).is_err());
    assert_eq!(m.forced_tokens().unwrap(), vec![id(b"1"), vocab.eos_ids()[0]]);
}

/// The cached lexer path and the plain Earley trie walk give the same masks, along
/// random walks through several grammars.
#[test]
fn cfg_fast_masks_equal_reference() {
    use crate::frontend::Dialect;
    let vocab = Arc::new(all_short_tokens());
    let grammars = [
        r#"s ::= "a" s "b" | "1" | s "." s ;"#,
        r#"s ::= ws v ; v ::= "[" ws (v ("." ws v)*)? "b" ws | [a1]+ ws | "é" ; ws ::= "b"* ;"#,
        r#"s ::= x "ab" ; x ::= [a]+ | "1" s "." ;"#,
        r#"s ::= "1" except!("a.") "a." s? ;"#,
        r#"e ::= e e | "a" | "b1" | "(" e ")" ;"#,
    ];
    for text in grammars {
        let g = Grammar::cfg_text(text, Dialect::Ebnf, None, &Limits::default(), None).unwrap();
        let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap());
        walks_agree_with_reference(&c, (20, 12), 12345, None, text, |m, slow| {
            let Some(chart) = m.chart() else { panic!("a grammar has a chart") };
            c.chart_mask_reference(chart, slow).unwrap();
        });
    }
}

/// Random walks through `c` (`walks` of up to `steps` tokens each, from `seed`), where the
/// fast mask equals `reference`'s at every step. A token starting with `favoured` is chosen
/// a quarter of the time, when one is allowed.
fn walks_agree_with_reference(
    c: &Arc<CompiledGrammar>,
    (walks, steps): (usize, usize),
    mut seed: u64,
    favoured: Option<&[u8]>,
    what: &str,
    reference: impl Fn(&Matcher, &mut [u32]),
) {
    let vocab = c.vocab().clone();
    for _walk in 0..walks {
        let mut m = Matcher::new(c.clone());
        for _step in 0..steps {
            let mut fast = vec![0u32; vocab.mask_words()];
            let mut slow = vec![0u32; vocab.mask_words()];
            m.fill_mask(&mut fast).unwrap();
            reference(&m, &mut slow);
            assert_eq!(fast, slow, "{what}");
            let allowed: Vec<u32> = (0..vocab.size() as u32).filter(|&t| fast[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
            if allowed.is_empty() {
                break;
            }
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let pick = match favoured {
                Some(prefix) if seed >> 62 == 0 => allowed.iter().copied().find(|&t| vocab.token_bytes(t).starts_with(prefix)),
                _ => None,
            };
            let t = pick.unwrap_or(allowed[(seed >> 33) as usize % allowed.len()]);
            assert!(m.advance(t).unwrap());
            if m.is_finished() {
                break;
            }
        }
    }
}

/// A vocabulary of `n` distinct random lowercase tokens of 4 to 8 letters over the first
/// `letters` letters, plus EOS.
fn random_words(n: usize, letters: u8, seed: u64) -> Vocabulary {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) as usize
    };
    let mut seen = std::collections::HashSet::new();
    let mut toks: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    while seen.len() < n {
        let len = 4 + next() % 5;
        let t: Vec<u8> = (0..len).map(|_| b'a' + (next() % letters as usize) as u8).collect();
        if seen.insert(t.clone()) {
            toks.push(Some(t));
        }
    }
    toks.push(None);
    let eos = toks.len() as u32 - 1;
    Vocabulary::new(toks, &[], &[eos], None).unwrap()
}

/// A state where one common byte must be read token by token (`a` kills after an `a`):
/// with more such tokens than a fixed bound of 16,384 allowed, the string-safe slice
/// still applies (a walk of the whole trie cost several milliseconds on a real
/// vocabulary), and its masks equal the whole walk's.
#[test]
fn slices_read_many_risky_tokens_one_by_one() {
    let vocab = Arc::new(random_words(60_000, 8, 7));
    let g = Grammar::regex(r#""(?:[^"\\\x00-\x1fa]|a[^"\\\x00-\x1fa])*a?""#, &Limits::default(), None).unwrap();
    let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
    let dfa = c.dfa().unwrap();
    let risky = (256..vocab.size() as u32 - 1).filter(|&t| vocab.token_bytes(t).windows(2).any(|w| w == b"aa")).count();
    let with_a = (256..vocab.size() as u32 - 1).filter(|&t| vocab.token_bytes(t).contains(&b'a')).count();
    assert!(risky > 1_000 && with_a > 16_384, "{risky} tokens with `aa`, {with_a} with `a`");
    for prefix in [&b"\""[..], b"\"a", b"\"ba"] {
        let state = dfa.walk(dfa.start(), prefix);
        assert!(
            string_safe_slice_mask(&vocab, dfa, state, Ends::ANY).is_some(),
            "no slice after {prefix:?} ({} trie nodes)",
            vocab.trie().num_nodes()
        );
        let fast = lexmask::compute(&vocab, dfa, state, Ends::ANY);
        let full = lexmask::compute_full(vocab.trie(), dfa, state, vocab.mask_words(), Ends::ANY);
        let (mut a, mut b) = (vec![0u32; vocab.mask_words()], vec![0u32; vocab.mask_words()]);
        fast.tokens.write(&mut a);
        full.tokens.write(&mut b);
        assert_eq!(a, b, "lexer mask after {prefix:?}");
        let allowed = b.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        assert!(allowed > 10_000 && allowed < vocab.size() - risky, "{allowed} allowed after {prefix:?}");
    }
}

/// A walk's token set, collected as ids and then as bits past a quarter of the row's
/// words, equals the set built from the ids directly, on both sides of that switch; a
/// repeated id counts once.
#[test]
fn token_collector_equals_the_id_list() {
    use super::state_mask::{StateMask, TokenCollector};
    let words = 64; // 2,048 ids; the collector switches to bits past 16 ids
    for count in [0usize, 1, 5, 16, 17, 40, 600, 2_048] {
        let ids: Vec<u32> = (0..count as u32).map(|i| (i * 977) % 2_048).collect();
        let mut c = TokenCollector::new(words);
        for chunk in ids.chunks(3) {
            c.extend(chunk);
        }
        let (mut got, mut want) = (vec![0u32; words], vec![0u32; words]);
        c.into_mask().write(&mut got);
        StateMask::from_ids(ids.clone(), words).write(&mut want);
        assert_eq!(got, want, "{count} ids");
        assert_eq!(got.iter().map(|w| w.count_ones() as usize).sum::<usize>(), count, "{count} ids");
    }
    // Ids met twice (a walk below nested end nodes) count once.
    let mut c = TokenCollector::new(words);
    c.extend(&[9, 5, 9]);
    c.extend(&[5]);
    let m = c.into_mask();
    assert_eq!(m.count, 2);
    let mut got = vec![0u32; words];
    m.write(&mut got);
    assert_eq!(got[0], 1 << 5 | 1 << 9);
}

/// A small vocabulary with special tokens (`<think>` 0, `</think>` 1, `<tool>` 2), EOS
/// `<eos>` 3 and `<end>` 13, text tokens, a `0xFF` byte token and an ordinary token `<t>` (9).
fn vocab_with_specials() -> Vocabulary {
    let toks: Vec<&[u8]> = vec![
        b"<think>",
        b"</think>",
        b"<tool>",
        b"<eos>",
        b"a",
        b"b",
        b"ab",
        b"<",
        b"t>",
        b"<t>",
        &[0xFF],
        b"<think",
        b">",
        b"<end>",
    ];
    let toks = toks.into_iter().map(|t| Some(t.to_vec())).collect();
    Vocabulary::new(toks, &[0, 1, 2], &[3, 13], None).unwrap()
}

/// Token references: masks along every walk equal a token-level oracle, the fast path
/// equals the reference, and completions spell named tokens as text.
#[test]
fn token_references_mask_by_id() {
    use crate::frontend::Dialect;
    let vocab = Arc::new(vocab_with_specials());
    // (grammar, dialect, oracle: which token may come after `seq`, given whether `seq` so
    // far is a whole sentence)
    type Oracle = fn(&[u32], u32) -> bool;
    let cases: [(&str, Dialect, Oracle); 4] = [
        // `<think>` then text then `</think>`: text tokens only between, `<t>` as text.
        (r#"root ::= <think> [ab<t>]* <[1]> "b""#, Dialect::Gbnf, |seq, t| match seq {
            [] => t == 0,
            [0, rest @ ..] if !rest.contains(&1) => matches!(t, 4 | 5 | 6 | 7 | 8 | 9 | 12 | 1),
            [0, .., 1] => matches!(t, 5),
            [0, .., 1, 5] => t == 3 || t == 13,
            _ => false,
        }),
        // Any token but `</think>`, then `</think>`: specials but EOS allowed inside.
        (r#"root ::= !<[1]>* <[1]>"#, Dialect::Gbnf, |seq, t| match seq.last() {
            Some(1) => t == 3 || t == 13,
            _ => !matches!(t, 3 | 10 | 13),
        }),
        // A range by id: `a` or `b` as ids only, then an ordinary token by name.
        (r#"start: <[4-5]>+ <t>?"#, Dialect::Lark, |seq, t| match seq.last() {
            None => matches!(t, 4 | 5),
            Some(9) => t == 3 || t == 13,
            Some(_) => matches!(t, 4 | 5 | 9 | 3 | 13),
        }),
        // Naming the EOS token makes it ordinary: it ends nothing by itself.
        (r#"root ::= "a" <eos> "b""#, Dialect::Ebnf, |seq, t| match seq {
            [] => t == 4,
            [4] => t == 3,
            [4, 3] => t == 5,
            [4, 3, 5] => t == 13,
            _ => false,
        }),
    ];
    for (text, dialect, oracle) in cases {
        let g = Grammar::cfg_text(text, dialect, None, &Limits::default(), None).unwrap();
        assert!(g.token_refs().is_some(), "{text}");
        let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap());
        let mut seed = 99u64;
        for _walk in 0..30 {
            let mut m = Matcher::new(c.clone());
            let mut seq: Vec<u32> = Vec::new();
            for _step in 0..8 {
                let mut fast = vec![0u32; vocab.mask_words()];
                m.fill_mask(&mut fast).unwrap();
                let mut slow = vec![0u32; vocab.mask_words()];
                m.fill_mask_reference(&mut slow).unwrap();
                assert_eq!(fast, slow, "{text} after {seq:?}");
                let allowed: Vec<u32> =
                    (0..vocab.size() as u32).filter(|&t| fast[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
                for t in 0..vocab.size() as u32 {
                    assert_eq!(allowed.contains(&t), oracle(&seq, t), "{text} after {seq:?}: token {t}");
                }
                if allowed.is_empty() {
                    break;
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let t = allowed[(seed >> 33) as usize % allowed.len()];
                assert!(m.advance(t).unwrap());
                seq.push(t);
                if m.is_finished() {
                    break;
                }
            }
        }
    }
    // Completions write named tokens as their text.
    let g = Grammar::cfg_text(r#"root ::= "a" <think> <[2]> "b""#, Dialect::Gbnf, None, &Limits::default(), None).unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap());
    let m = Matcher::new(c.clone());
    assert_eq!(m.completion_text().unwrap().unwrap(), b"a<think><tool>b".to_vec());
    let raw = m.completion().unwrap().unwrap();
    assert!(raw.starts_with(b"a\xFF") && c.matches(&raw).unwrap());
}

/// Naming a token the vocabulary lacks, an id past it, or a token both ways is an error
/// that names it; so is a negation not repeated.
#[test]
fn token_reference_errors_name_the_token() {
    use crate::frontend::Dialect;
    let vocab = Arc::new(vocab_with_specials());
    let compile = |text: &str| {
        let g = Grammar::cfg_text(text, Dialect::Gbnf, None, &Limits::default(), None)?;
        CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).map(|_| ())
    };
    let message = |text: &str| compile(text).unwrap_err().to_string();
    assert!(message("root ::= <nope>").contains("`<nope>`"));
    assert!(message("root ::= <[99]>").contains("99"));
    assert!(message("root ::= <think> <[0]>").contains("both"));
    assert!(message("root ::= <eos> <end>").contains("end-of-sequence"));
    let m = message("root ::= \"a\" !<[1]>");
    assert!(m.contains("repeated") && m.contains("column 14"), "{m}");
    assert!(message("root ::= <[5-2]>").contains("empty"));
    assert!(message("root ::= <[1,,2]>").contains("missing") && message("root ::= <[3-]>").contains("missing"));
    assert!(compile("root ::= <think> !<[1]>+").is_ok());
}

/// Every string of 1 to 3 bytes over the bytes of a marker and some text, plus EOS.
fn marker_tokens() -> Vocabulary {
    strings_over(b"<t_>a ", &[b"<t_>"])
}

/// A lexer mask derived from a sibling state's equals the one computed by a full walk,
/// for every pair of states that differ on a few first bytes, with and without ends.
#[test]
fn derived_lexer_masks_equal_computed() {
    let vocab = Arc::new(marker_tokens());
    let limits = Limits::default();
    let mut grammars = vec![Grammar::text_excluding(&[b"<t_>".to_vec()], &limits).unwrap()];
    for pattern in [r"[a ]*<t_>[a ]*", r"(a|<t>|_)*", r"(?s:.)*<t_>"] {
        grammars.push(Grammar::regex(pattern, &limits, None).unwrap());
    }
    let mut derived = 0;
    for g in grammars {
        let c = CompiledGrammar::new(&g, vocab.clone(), &limits, false).unwrap();
        let dfa = c.dfa().expect("a regular grammar").clone();
        let words = vocab.mask_words();
        for ends in [Ends::ANY, Ends::NONE] {
            let compute = |s| lexmask::compute(&vocab, &dfa, s, ends);
            for a in 1..dfa.num_states() as u32 {
                let sibling = compute(a);
                for b in 1..dfa.num_states() as u32 {
                    let Some(differ) = lexmask::differing_bytes(&dfa, b, a) else { continue };
                    let got = lexmask::derive(&vocab, &dfa, b, &sibling, &differ, ends);
                    let want = compute(b);
                    let (mut g, mut w) = (vec![0u32; words], vec![0u32; words]);
                    got.tokens.write(&mut g);
                    want.tokens.write(&mut w);
                    assert_eq!(g, w, "tokens of state {b} from {a} (ends {ends:?})");
                    let mut wc = want.completions.clone();
                    wc.sort_unstable();
                    assert_eq!(got.completions, wc, "completions of state {b} from {a} (ends {ends:?})");
                    derived += usize::from(!differ.is_empty());
                }
            }
        }
    }
    assert!(derived > 20, "only {derived} derivations checked");
}

/// A parser state's cached mask, kept as the lexer and after-end masks it is made of
/// (see `index::parts_mask`), writes on a later visit what its first visit computed:
/// walks replayed on the same compiled grammar (every mask then from the cache) give the
/// reference masks.
#[test]
fn masks_kept_as_parts_write_what_was_computed() {
    use crate::frontend::Dialect;
    // Tokens the grammar never allows make rows long next to the few ids after an end.
    let unused: Vec<Vec<u8>> = (0..4000).map(|i| format!("x{i}").into_bytes()).collect();
    let vocab = Arc::new(strings_over(b"[],a1", &unused.iter().map(|t| t.as_slice()).collect::<Vec<_>>()));
    let limits = Limits::default();
    let g =
        Grammar::cfg_text(r#"s ::= "[" item ("," item)* "]" ; item ::= "a" | "11" | s ;"#, Dialect::Ebnf, None, &limits, None)
            .unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab, &limits, false).unwrap());
    for what in ["first visits", "cached masks"] {
        walks_agree_with_reference(&c, (40, 30), 3, None, what, |m, slow| {
            m.fill_mask_reference(slow).unwrap();
        });
    }
    let Engine::Cfg { state_cache, .. } = &c.engine else { panic!("a context-free grammar") };
    let shapes: Vec<(usize, u32)> = state_cache.read().unwrap().values().map(|m| m.shape()).collect();
    let several = shapes.iter().filter(|s| s.0 >= 2).count();
    assert!(several >= 5, "{several} of {} cached masks with several parts", shapes.len());
}

/// Free text, a marker, then a small grammar: masks along random walks (where half-written
/// markers derive their lexer masks from free text's) equal the reference trie walk.
#[test]
fn masks_with_derived_lexer_masks_equal_reference() {
    use crate::frontend::Dialect;
    use crate::grammar::Join;
    let vocab = Arc::new(marker_tokens());
    let limits = Limits::default();
    let text = Grammar::text_excluding(&[b"<t_>".to_vec()], &limits).unwrap();
    let marker = Grammar::literal(b"<t_>", &limits).unwrap();
    let body = Grammar::cfg_text(r#"s ::= "a" s "_" | "> " ;"#, Dialect::Ebnf, None, &limits, None).unwrap();
    let call = Grammar::join(&[text.clone(), marker, body], Join::Concat, &limits).unwrap();
    let more = Grammar::repeat(&call, 0, None, &limits).unwrap();
    let g = Grammar::join(&[more, text], Join::Concat, &limits).unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &limits, false).unwrap());
    // Favour the marker's bytes, so that half-written markers are visited often.
    walks_agree_with_reference(&c, (40, 16), 7, Some(b"<"), "free text and a marker", |m, slow| {
        m.fill_mask_reference(slow).unwrap();
    });
}

/// Every 1- and 2-piece string over some text and the bytes of a closing marker `</t>`,
/// with longer tokens that hold the marker or its first byte, plus EOS.
fn closing_marker_tokens() -> Vocabulary {
    let pieces: [&[u8]; 9] = [b"a", b"b", b" ", b"<", b"/", b"t", b">", b"\n", b"\""];
    let mut toks: Vec<Option<Vec<u8>>> = Vec::new();
    for x in pieces {
        toks.push(Some(x.to_vec()));
        toks.extend(pieces.iter().map(|y| Some([x, *y].concat())));
    }
    for n in [5usize, 9, 12, 17, 24] {
        toks.push(Some(b"ab".repeat(n)[..n].to_vec()));
        toks.push(Some([&b"a</t>"[..], &b"b".repeat(n - 5)].concat()));
        toks.push(Some([b"x".repeat(n - 1), b"<".to_vec()].concat()));
        toks.push(Some([b"a ".repeat(n)[..n].to_vec(), b"</t>a".to_vec()].concat()));
    }
    toks.push(Some(b"</t>".to_vec()));
    toks.push(None);
    let eos = toks.len() as u32 - 1;
    Vocabulary::new(toks, &[], &[eos], None).unwrap()
}

/// Free text with a budget in tokens ends at every byte, but only its closing marker can
/// follow it: its lexer masks record the ends before the marker's first byte only, so a
/// string-safe slice serves them (which recording every end would refuse), and masks
/// along random walks equal the reference trie walk.
#[test]
fn text_that_ends_anywhere_records_ends_before_what_follows() {
    use crate::frontend::Dialect;
    use crate::grammar::Join;
    let vocab = Arc::new(closing_marker_tokens());
    let limits = Limits::default();
    let text = Grammar::text_excluding(&[b"</t>".to_vec()], &limits).unwrap().within_tokens(5, &limits).unwrap();
    let marker = Grammar::literal(b"</t>", &limits).unwrap();
    let body = Grammar::cfg_text(r#"s ::= "a" s | " b" ;"#, Dialect::Ebnf, None, &limits, None).unwrap();
    let g = Grammar::join(&[text, marker, body], Join::Concat, &limits).unwrap();
    let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &limits, false).unwrap());
    let Engine::Cfg { earley, .. } = &c.engine else { panic!("a context-free grammar") };
    let term = earley.cfg().terminals.iter().position(|t| t.token_budget.is_some()).expect("a budgeted terminal") as u32;
    let follow = *earley.follow_bytes(term);
    assert_eq!(crate::util::bytes::set_bytes(&follow).collect::<Vec<u8>>(), b"<");
    let dfa = &earley.cfg().terminals[term as usize].dfa;
    assert!(string_safe_slice_mask(&vocab, dfa, dfa.start(), Ends::ANY).is_none());
    let sliced = string_safe_slice_mask(&vocab, dfa, dfa.start(), Ends::before(&follow)).expect("a slice applies");
    let want = lexmask::compute_full(vocab.trie(), dfa, dfa.start(), vocab.mask_words(), Ends::before(&follow));
    let a_marker = vocab.trie().node_of(b"a").unwrap();
    assert!(sliced.ends.contains(&a_marker) && want.completions.contains(&a_marker));
    for what in ["first visits", "cached masks"] {
        walks_agree_with_reference(&c, (40, 10), 11, Some(b"<"), what, |m, slow| {
            m.fill_mask_reference(slow).unwrap();
        });
    }
}
