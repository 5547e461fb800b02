//! Hostile and careless input: every case here once crashed the process, ran without
//! bound or took memory out of proportion to its size. Each must now finish quickly with
//! a result or a `corral_core::Error` that names what was exceeded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use corral_core::interrupt::{self, Scope};
use corral_core::Dialect;
use corral_core::{CompiledGrammar, Error, Grammar, Limits, Matcher, Vocabulary};

fn ebnf(text: &str, limits: &Limits) -> corral_core::Result<Grammar> {
    Grammar::cfg_text(text, Dialect::Ebnf, None, limits, None)
}

/// A vocabulary of the given tokens (ids in order) with an EOS after them.
fn vocab(tokens: &[Vec<u8>]) -> Arc<Vocabulary> {
    let mut t: Vec<Option<Vec<u8>>> = tokens.iter().cloned().map(Some).collect();
    t.push(None);
    let eos = (t.len() - 1) as u32;
    Arc::new(Vocabulary::new(t, &[], &[eos], None).unwrap())
}

fn mask(m: &Matcher) -> corral_core::Result<Vec<u32>> {
    let mut out = vec![0u32; m.grammar().vocab().mask_words()];
    m.fill_mask(&mut out)?;
    Ok(out)
}

fn bit(mask: &[u32], t: u32) -> bool {
    mask[(t / 32) as usize] >> (t % 32) & 1 == 1
}

fn limit_of(e: &Error) -> &'static str {
    match e {
        Error::LimitExceeded { limit, .. } => limit,
        other => panic!("expected a LimitExceeded error, got {other:?}"),
    }
}

#[test]
fn a_long_chain_of_rules_builds_without_deep_recursion() {
    // r0 ::= "a" r1 ; ... ; r{n-1} ::= "a" : the whole chain is regular. Building it once
    // recursed per rule (a stack overflow) and kept each rule's regex (quadratic memory).
    let n = 35_000;
    let mut text = String::new();
    for i in 0..n - 1 {
        text.push_str(&format!("r{i} ::= \"a\" r{} ;\n", i + 1));
    }
    text.push_str(&format!("r{} ::= \"a\" ;\n", n - 1));
    let g = ebnf(&text, &Limits::default()).unwrap();
    let v = vocab(&[b"a".to_vec(), b"aa".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    assert!(c.matches(&vec![b'a'; n]).unwrap());
    assert!(!c.matches(&vec![b'a'; n - 1]).unwrap());
    assert!(!c.matches(&vec![b'a'; n + 1]).unwrap());
}

#[test]
fn a_long_token_is_walked_without_deep_recursion() {
    // s ::= "a" s | "a": a terminal ends after every byte of a token of a's, and the mask
    // walk below each end once recursed per byte.
    let g = ebnf(r#"s ::= "a" s | "a" ;"#, &Limits::default()).unwrap();
    let long = vec![b'a'; 27_000];
    let v = vocab(&[b"a".to_vec(), long, b"ab".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    let m = Matcher::new(c);
    // Run on a thread with a small stack, as a batch fill's helper threads have.
    let mask = std::thread::Builder::new().stack_size(256 << 10).spawn(move || mask(&m)).unwrap().join().unwrap().unwrap();
    assert!(bit(&mask, 0) && bit(&mask, 1) && !bit(&mask, 2) && !bit(&mask, 3));
}

#[test]
fn a_cycle_of_many_rules_compiles_in_linear_space() {
    // r0 ::= r1 "a" | "b" ; r1 ::= r2 "a" | "b" ; ... ; r{n-1} ::= r0 "a" | "b": every rule
    // predicts every other (a closure table of n² entries once).
    let n = 20_000;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!("r{i} ::= r{} \"a\" | \"b\" ;\n", (i + 1) % n));
    }
    let g = ebnf(&text, &Limits::default()).unwrap();
    let v = vocab(&[b"a".to_vec(), b"b".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    assert!(c.matches(b"baaa").unwrap());
    assert!(!c.matches(b"ab").unwrap());
}

#[test]
fn an_ambiguous_grammar_hits_the_work_limit_per_byte() {
    // s ::= s s | "a" derives the same items from every origin: the work of one byte
    // grows with the input, and is bounded by max_earley_items.
    let limits = Limits { max_earley_items: 20_000, ..Limits::default() };
    let g = ebnf(r#"s ::= s s | "a" ;"#, &limits).unwrap();
    let v = vocab(&[b"a".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &limits, false).unwrap());
    let mut m = Matcher::new(c);
    let started = Instant::now();
    let err = loop {
        match m.advance(0) {
            Ok(true) => {}
            Ok(false) => panic!("the grammar accepts every run of a's"),
            Err(e) => break e,
        }
        assert!(m.num_tokens() < 5_000, "no limit fired");
    };
    assert_eq!(limit_of(&err), "max_earley_items");
    assert!(m.num_tokens() > 50, "fired too early: {}", m.num_tokens());
    assert!(started.elapsed() < Duration::from_secs(20));
    // The matcher is still usable after the refused token.
    assert!(m.is_accepting());
    m.rollback(10).unwrap();
    assert!(m.advance(0).unwrap());
}

#[test]
fn a_chart_that_grows_faster_than_its_input_hits_max_chart_bytes() {
    // Even-length palindromes: every position may be the middle, so each Earley set holds
    // an item per earlier position: the chart is quadratic in the input.
    let limits = Limits { max_chart_bytes: 4 << 20, ..Limits::default() };
    let g = ebnf(r#"s ::= "a" s "a" | "b" s "b" | "a" | "b" | "" ;"#, &limits).unwrap();
    let v = vocab(&[b"a".to_vec(), b"b".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &limits, false).unwrap());
    let mut m = Matcher::new(c);
    let err = loop {
        match m.advance(0) {
            Ok(true) => {}
            Ok(false) => panic!("a run of a's is a palindrome prefix"),
            Err(e) => break e,
        }
        assert!(m.num_tokens() < 20_000, "no limit fired");
    };
    assert_eq!(limit_of(&err), "max_chart_bytes");
    // Masks on the refused position's predecessor still work.
    let mask = mask(&m).unwrap();
    assert!(bit(&mask, 0));
}

#[test]
fn a_deep_completion_is_linear() {
    // 50,000 open brackets: the completion closes each; its search was quadratic.
    let g = ebnf(r#"s ::= "(" s ")" | "x" ;"#, &Limits::default()).unwrap();
    let v = vocab(&[b"(".to_vec(), b")".to_vec(), b"x".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    let mut m = Matcher::new(c.clone());
    let depth = 50_000;
    for _ in 0..depth {
        assert!(m.advance(0).unwrap());
    }
    let started = Instant::now();
    let tail = m.completion().unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let mut whole = vec![b'('; depth];
    whole.extend_from_slice(&tail);
    assert_eq!(tail.len(), depth + 1);
    assert!(c.matches(&whole).unwrap());
}

#[test]
fn a_completion_longer_than_the_limit_is_refused() {
    // The shortest sentence doubles with each rule: 2^40 bytes.
    let mut text = String::from("s ::= \"<\" r0 ;\n");
    for i in 0..40 {
        text.push_str(&format!("r{i} ::= r{} r{} ;\n", i + 1, i + 1));
    }
    text.push_str("r40 ::= \"a\" | \"(\" s \")\" ;\n");
    let g = ebnf(&text, &Limits::default()).unwrap();
    let v = vocab(&[b"<".to_vec(), b"a".to_vec()]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    let mut m = Matcher::new(c);
    assert!(m.advance(0).unwrap());
    assert_eq!(limit_of(&m.completion().unwrap_err()), "max_completion_bytes");
}

#[test]
fn a_huge_vocabulary_size_is_refused_before_allocating() {
    let err = Vocabulary::new(vec![Some(b"a".to_vec())], &[], &[0], Some(2_000_000_000)).unwrap_err();
    assert_eq!(limit_of(&err), "max_vocab_size");
    let small = Limits { max_vocab_size: 100, ..Limits::default() };
    let err = Vocabulary::with_limits(vec![Some(b"a".to_vec())], &[], &[0], Some(101), &small).unwrap_err();
    assert_eq!(limit_of(&err), "max_vocab_size");
    assert!(Vocabulary::with_limits(vec![Some(b"a".to_vec())], &[], &[0], Some(100), &small).is_ok());
}

#[test]
fn the_compile_budget_stops_a_long_build() {
    // Thousands of distinct regular pieces: far more than a millisecond of work.
    let mut text = String::from("s ::= ");
    for i in 0..3_000 {
        text.push_str(&format!("\"k{i}\" s \"{i}v\" | "));
    }
    text.push_str("\"x\" ;");
    let limits = Limits { max_compile_ms: 1, ..Limits::default() };
    let Err(err) = ebnf(&text, &limits) else { panic!("built within 1 ms") };
    assert_eq!(limit_of(&err), "max_compile_ms");
    assert!(ebnf(&text, &Limits::default()).is_ok());
}

#[test]
fn a_stop_flag_interrupts_a_mask() {
    // A long token under an ambiguous grammar: a slow mask, stopped from outside.
    let g = ebnf(r#"s ::= s s | "a" ;"#, &Limits::default()).unwrap();
    let v = vocab(&[b"a".to_vec(), vec![b'a'; 3_000]]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    let m = Matcher::new(c);
    let scope = Scope::default();
    let flag = scope.stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        flag.stop();
    });
    let started = Instant::now();
    let result = interrupt::run(&scope, || mask(&m));
    stopper.join().unwrap();
    match result {
        Err(Error::Interrupted) => assert!(started.elapsed() < Duration::from_secs(2)),
        // Bounded by the work limit before the flag came: also fine, but say which.
        Err(e) => assert_eq!(limit_of(&e), "max_earley_items"),
        Ok(_) => panic!("a 3,000-byte token under `s ::= s s` should not finish within the defaults"),
    }
    // Nothing was left behind: the matcher still works.
    assert!(m.is_allowed(0));
}

#[test]
fn a_deep_chain_of_operator_rules_is_an_error_not_a_stack_overflow() {
    // Rules with boolean operators are built as automata by following their references
    // one by one; a chain of them under an operator used to recurse once per rule.
    let n = 5_000;
    let mut text = String::from("s ::= not!(r0) ;\n");
    for i in 0..n - 1 {
        text.push_str(&format!("r{i} ::= and!(/[ab]/, \"a\") r{} ;\n", i + 1));
    }
    text.push_str(&format!("r{} ::= \"a\" ;\n", n - 1));
    let built = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || ebnf(&text, &Limits::default()).err())
        .unwrap()
        .join()
        .unwrap();
    match built {
        Some(Error::LimitExceeded { limit: "max_grammar_nesting", context, .. }) => {
            assert!(context.contains("nested rule references"), "{context}")
        }
        other => panic!("expected the nesting limit, named, got {other:?}"),
    }
}

#[test]
fn a_long_token_under_an_ambiguous_grammar_hits_the_work_limit_at_the_defaults() {
    // One mask for a 2,000-byte token under `s ::= s s | "a"` took seconds (cubic work);
    // the per-byte work bound now ends it early with an error naming the limit.
    let g = ebnf(r#"s ::= s s | "a" ;"#, &Limits::default()).unwrap();
    let v = vocab(&[b"a".to_vec(), vec![b'a'; 2_000]]);
    let c = Arc::new(CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap());
    let m = Matcher::new(c);
    let started = Instant::now();
    assert_eq!(limit_of(&mask(&m).unwrap_err()), "max_earley_items");
    assert!(started.elapsed() < Duration::from_secs(20));
    // A short token is fine.
    assert!(m.is_allowed(0));
}

#[test]
fn a_terminal_that_follows_itself_inside_long_tokens_stays_polynomial() {
    // `t` ends after every "=" and may follow itself: each end inside a token starts `t`
    // again, and the ends found from a node and from its descendants coincide. Kept as
    // lists with repeats they multiplied at every level (an abort on a 64-byte token).
    let g = ebnf(r#"s ::= t s | t ; t ::= [=]+ ;"#, &Limits::default()).unwrap();
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for n in [24, 32, 48, 64, 200] {
        tokens.push(vec![b'='; n]);
    }
    tokens.push(b"==x".to_vec());
    let v = vocab(&tokens);
    let c = Arc::new(CompiledGrammar::new(&g, v.clone(), &Limits::default(), false).unwrap());
    let m = Matcher::new(c);
    let fast = mask(&m).unwrap();
    let mut reference = vec![0u32; v.mask_words()];
    m.fill_mask_reference(&mut reference).unwrap();
    assert_eq!(fast, reference);
    let allowed: Vec<u32> = (0..v.size() as u32).filter(|&t| bit(&fast, t)).collect();
    assert_eq!(allowed, vec![b'=' as u32, 256, 257, 258, 259, 260]);
}

#[test]
fn a_long_chain_of_unused_lark_rules_is_linear() {
    // Which Lark rules count as kept was found by re-checking every rule until nothing
    // changed: one rule per round on a chain, quadratic in all.
    let n = 20_000;
    let mut text = String::from("start: \"a\"\n");
    for i in 0..n - 1 {
        text.push_str(&format!("r{i}: \"b\" r{}\n", i + 1));
    }
    text.push_str(&format!("r{}: \"b\"\n", n - 1));
    let started = Instant::now();
    let g = Grammar::cfg_text(&text, Dialect::Lark, None, &Limits::default(), None).unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    let v = vocab(&[b"a".to_vec(), b"b".to_vec()]);
    let c = CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap();
    assert!(c.matches(b"a").unwrap() && !c.matches(b"b").unwrap());
}

#[test]
fn sampling_a_long_chain_is_linear() {
    // Shortest lengths for sampling were fixpoints that settled one rule (or one DFA
    // state) per pass: quadratic in a chain. Found by the ebnf fuzzer (a long literal
    // beside except!), kept in fuzz/regressions/ebnf/.
    let n = 20_000;
    let mut text = format!("start ::= \"{}\" r0 ;\n", "a".repeat(3_000));
    for i in 0..n - 1 {
        text.push_str(&format!("r{i} ::= \"(\" r{} \")\" | \"[\" r{i} \"]\" ;\n", i + 1));
    }
    text.push_str(&format!("r{} ::= \"x\" ;\n", n - 1));
    let g = ebnf(&text, &Limits::default()).unwrap();
    let v = vocab(&[b"a".to_vec(), b"(".to_vec(), b")".to_vec(), b"x".to_vec()]);
    let c = CompiledGrammar::new(&g, v, &Limits::default(), false).unwrap();
    for seed in 0..3 {
        let s = g.sample(seed, 64, usize::MAX).unwrap();
        assert!(s.len() >= 3_000 + 2 * n - 1, "{}", s.len());
        assert!(c.matches(&s).unwrap());
    }
}

#[test]
fn sampling_stops_at_its_byte_cap() {
    // A counted region's shortest string can be millions of bytes long (a JSON Schema
    // `minLength` of 20,000,000): the draw used to write it all out, about a minute of
    // work. Found by the JSON Schema fuzzer, kept in fuzz/regressions/json_schema/.
    let schema = r#"{"anyOf": [{"type": "string", "minLength": 20000000}, {"type": "integer"}]}"#;
    let options = corral_core::json_schema::translate::SchemaOptions::default();
    let g = corral_core::json_schema::compile::schema_grammar(schema, &[], &options, &Limits::default()).unwrap().grammar;
    let started = Instant::now();
    let (mut long, mut short) = (0, 0);
    for seed in 0..20 {
        match g.sample(seed, 64, 1 << 12) {
            None => long += 1,
            Some(s) => {
                assert!(s.len() <= 1 << 12 && s.iter().all(|&b| b == b'-' || b.is_ascii_digit()), "{s:?}");
                short += 1;
            }
        }
    }
    assert!(long > 0 && short > 0, "{long} long, {short} short draws");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    // Under the cap, a count past it is met exactly.
    let g = ebnf("start ::= [a-z]{5000} ;", &Limits::default()).unwrap();
    assert_eq!(g.sample(1, 64, 5000).map(|s| s.len()), Some(5000));
    assert_eq!(g.sample(1, 64, 4999), None);
}

#[test]
fn a_large_determinization_stops_with_its_scope() {
    // regex-automata's determinization cannot check for a stop itself: a large DFA is
    // built on a helper thread while the calling thread keeps checking. At the defaults
    // this DFA takes about half a second to build.
    let g = Grammar::regex(r".*x.{12}", &Limits::default(), None).unwrap();
    let v = vocab(&[b"x".to_vec(), b"y".to_vec()]);
    // The whole build, not stopped, for scale (the machine may be busy: the stopped build
    // is compared with this one, not with a fixed time).
    let started = Instant::now();
    let c = CompiledGrammar::new(&g, v.clone(), &Limits::default(), false).unwrap();
    let whole = started.elapsed();
    assert!(c.matches(b"yyxyyyyyyyyyyyy").unwrap());
    let scope = Scope::default();
    let flag = scope.stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        flag.stop();
    });
    let started = Instant::now();
    let result = interrupt::run(&scope, || CompiledGrammar::new(&g, v.clone(), &Limits::default(), false));
    let took = started.elapsed();
    stopper.join().unwrap();
    assert!(matches!(result, Err(Error::Interrupted)), "{:?}", result.map(|c| c.num_states()));
    // Stopped 30 ms in: it returns long before the determinization would have ended.
    assert!(took < whole / 3, "stopped after {took:?}; the whole build takes {whole:?}");
}
