//! Tests of repetitions counted by the parser (`x{min,max}` past
//! `MAX_UNROLLED_COUNT`, see `grammar::lower`): the counts are exact at their edges,
//! an item that may be empty fills the least count, and completions and samples are
//! sentences.

use super::*;
use crate::frontend::{parse, Dialect};
use crate::grammar::shortest::Shortest;
use crate::grammar::{lower, sample};
use crate::limits::Limits;

fn grammar(text: &str) -> EarleyGrammar {
    let limits = Limits::default();
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    EarleyGrammar::new(lower(&ast, None, &limits, None).unwrap(), &limits)
}

fn read(g: &EarleyGrammar, input: &str) -> Option<Chart> {
    let mut chart = g.start_chart().unwrap();
    advance_chart(g, &mut chart, input.as_bytes()).unwrap().then_some(chart)
}

fn accepts(g: &EarleyGrammar, input: &str) -> bool {
    read(g, input).is_some_and(|c| c.is_accepting())
}

/// An item that is not regular (so the repetition stays a rule): `a` or a nested group.
const ITEM: &str = r#"x ::= "a" | "(" x* ")" ;"#;

#[test]
fn counts_are_exact_at_their_edges() {
    let g = grammar(&format!(r#"s ::= "[" x{{70,100}} "]" ; {ITEM}"#));
    let list = |n: usize| format!("[{}]", "a".repeat(n));
    for n in [0, 1, 69, 101, 150] {
        assert!(!accepts(&g, &list(n)), "{n} items");
    }
    for n in [70, 71, 99, 100] {
        assert!(accepts(&g, &list(n)), "{n} items");
    }
    assert!(accepts(&g, &format!("[(a(a)){}]", "a".repeat(69))));
    // The 101st item is refused where it starts.
    assert!(read(&g, &format!("[{}", "a".repeat(100))).is_some());
    assert!(read(&g, &format!("[{}a", "a".repeat(100))).is_none());
    assert!(read(&g, &format!("[{}(", "a".repeat(100))).is_none());
}

#[test]
fn unbounded_with_a_large_least_count() {
    let g = grammar(&format!(r#"s ::= x{{80,}} ";" ; {ITEM}"#));
    assert!(!accepts(&g, &format!("{};", "a".repeat(79))));
    assert!(accepts(&g, &format!("{};", "a".repeat(80))));
    assert!(accepts(&g, &format!("{};", "a".repeat(500))));
}

#[test]
fn a_huge_bound_is_a_small_grammar() {
    let g = grammar(&format!(r#"s ::= "[" x{{2,1000000}} "]" ; {ITEM}"#));
    assert!(g.cfg().productions.len() < 40, "{} productions", g.cfg().productions.len());
    assert!(accepts(&g, &format!("[{}]", "a".repeat(3000))));
    assert!(!accepts(&g, "[a]"));
}

#[test]
fn an_item_that_may_be_empty_fills_the_least_count() {
    // `o` matches "": any 0..=100 nonempty items make a sentence.
    let g = grammar(r#"s ::= "[" o{70,100} "]" ; o ::= "(" o ")" | "" ;"#);
    assert!(accepts(&g, "[]"));
    assert!(accepts(&g, "[(())()]"));
    assert!(accepts(&g, &format!("[{}]", "()".repeat(100))));
    assert!(!accepts(&g, &format!("[{}]", "()".repeat(101))));
}

#[test]
fn completions_and_samples_are_sentences() {
    let text = format!(r#"s ::= "[" x{{70,100}} "]" ; {ITEM}"#);
    let g = grammar(&text);
    let shortest = Shortest::new(g.cfg());
    for prefix in ["[", "[aaa(", "[(((a"] {
        let chart = read(&g, prefix).unwrap();
        let rest = String::from_utf8(chart.completion(&g, &shortest, 1 << 16).unwrap().unwrap()).unwrap();
        let done = format!("{prefix}{rest}");
        assert!(accepts(&g, &done), "{prefix} completed to {done}");
    }
    let chart = read(&g, "[").unwrap();
    let rest = String::from_utf8(chart.completion(&g, &shortest, 1 << 16).unwrap().unwrap()).unwrap();
    assert_eq!(rest, format!("{}]", "a".repeat(70)));
    let cfg = lower(&parse(&text, Dialect::Ebnf, &Limits::default()).unwrap(), None, &Limits::default(), None).unwrap();
    for seed in 0..20 {
        let s = String::from_utf8(sample::sample(&cfg, seed, 200, usize::MAX).unwrap()).unwrap();
        assert!(accepts(&g, &s), "sampled {s}");
    }
}

#[test]
fn an_item_that_matches_nothing_is_a_warning() {
    let limits = Limits::default();
    let text = r#"s ::= "[" x{0,100} "]" ; x ::= "(" x ")" ;"#;
    let cfg = lower(&parse(text, Dialect::Ebnf, &limits).unwrap(), None, &limits, None).unwrap();
    assert!(cfg.warnings.iter().any(|w| w.contains("rule `x`") && w.contains("dropped")), "{:?}", cfg.warnings);
    let g = EarleyGrammar::new(cfg, &limits);
    assert!(accepts(&g, "[]"));
    assert!(read(&g, "[(").is_none());
}
