//! Regular pieces of any size: a rule's regular piece is a HIR, never regex text, so no
//! rule is refused for the length its regex would have had; too heavy a piece stays
//! grammar structure, and chains of rules that double at each step stay cheap.

use std::sync::Arc;

use corral_core::{CompiledGrammar, Dialect, Error, Grammar, Limits};

#[path = "support/bytes.rs"]
mod bytes;
use bytes::{accepts, byte_vocab};

fn compile(text: &str, dialect: Dialect, limits: &Limits) -> corral_core::Result<Arc<CompiledGrammar>> {
    let g = Grammar::cfg_text(text, dialect, None, limits, None)?;
    Ok(Arc::new(CompiledGrammar::new(&g, byte_vocab(), limits, false)?))
}

fn check(c: &Arc<CompiledGrammar>, pass: &[&str], fail: &[&str]) {
    for s in pass {
        assert!(accepts(c, s, "grammar"), "{s:?} must match");
    }
    for s in fail {
        assert!(!accepts(c, s, "grammar"), "{s:?} must not match");
    }
}

/// 3,000 distinct words: `w0k0`, `w1k1`, ... (no word is a prefix of another).
fn words() -> Vec<String> {
    (0..3000).map(|i| format!("w{i}k{}", i % 7)).collect()
}

/// Limits under which the words' union, written as one regex, is far too long (it is
/// about 24 KB of text): only user-written regexes are bounded by `max_pattern_bytes`.
fn short_patterns() -> Limits {
    Limits { max_pattern_bytes: 1_000, ..Limits::default() }
}

#[test]
fn a_rule_whose_regex_would_exceed_the_pattern_limit_compiles_and_matches_exactly() {
    let alts: Vec<String> = words().iter().map(|w| format!("\"{w}\"")).collect();
    let text = format!("start ::= \"<\" word \">\"\nword ::= {}\n", alts.join(" | "));
    let c = compile(&text, Dialect::Ebnf, &short_patterns()).expect("a large regular rule compiles");
    check(&c, &["<w0k0>", "<w1234k2>", "<w2999k3>"], &["<w1234k3>", "<w3000k4>", "<w12>", "<>", "w0k0"]);
}

#[test]
fn a_large_lark_token_is_one_terminal_of_any_size() {
    // A Lark TERMINAL is one token (ignored text may follow it), however heavy its piece.
    let alts: Vec<String> = words().iter().map(|w| format!("\"{w}\"")).collect();
    let text = format!("start: WORD (\",\" WORD)*\nWORD: {}\n%ignore \" \"\n", alts.join(" | "));
    let c = compile(&text, Dialect::Lark, &short_patterns()).expect("a large Lark token compiles");
    check(&c, &["w7k0", "w7k0, w2999k3 ,w10k3"], &["w7k1", "w7k0,", "w7 k0"]);
}

#[test]
fn a_regex_longer_than_the_pattern_limit_is_still_refused() {
    let text = format!("start ::= /{}/\n", "a".repeat(1_001));
    match compile(&text, Dialect::Ebnf, &short_patterns()) {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "max_pattern_bytes"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// `a0 ::= base`, then `ak ::= a(k-1) op a(k-1)` up to `a60`, and `start ::= <a60>`
/// (`op` "" doubles the strings, "|" keeps the language): written as one regex, `a60`
/// would be 2^60 copies of `base`.
fn chain(base: &str, op: &str) -> String {
    let mut text = format!("start ::= \"<\" a60 \">\"\na0 ::= {base}\n");
    for k in 1..=60 {
        text += &format!("a{k} ::= a{} {op} a{}\n", k - 1, k - 1);
    }
    text
}

#[test]
fn an_exponential_chain_of_rules_stays_structure() {
    let c = compile(&chain("\"ab\"", ""), Dialect::Ebnf, &Limits::default()).expect("compiles");
    // Its strings are far too long to write: the start and a prefix are enough.
    check(&c, &[], &["<", "<ab", "<ab>", "<>"]);
    let mut m = corral_core::Matcher::new(c.clone());
    for &b in b"<abababab" {
        assert!(m.advance(b as u32).unwrap(), "{:?} must be allowed", b as char);
    }
    assert!(!m.advance(b'>' as u32).unwrap() && !m.advance(b'b' as u32).unwrap());
}

#[test]
fn an_exponential_chain_of_unions_keeps_its_small_language() {
    let c = compile(&chain("\"ab\" | \"c\"", "|"), Dialect::Ebnf, &Limits::default()).expect("compiles");
    check(&c, &["<ab>", "<c>"], &["<abc>", "<>", "<a>"]);
    // With a boolean operator at the bottom, every rule is one automaton.
    let c = compile(&chain("not!(\"x\")", "|"), Dialect::Ebnf, &Limits::default()).expect("compiles");
    check(&c, &["<>", "<y>", "<xy>"], &["<x>"]);
}

#[test]
fn a_deep_chain_of_optional_rules_stays_structure() {
    // a(k) ::= a(k-1)? "x": one to 61 x's, nested 60 deep.
    let mut text = "start ::= a60\na0 ::= \"x\"\n".to_string();
    for k in 1..=60 {
        text += &format!("a{k} ::= a{}? \"x\"\n", k - 1);
    }
    let c = compile(&text, Dialect::Ebnf, &Limits::default()).expect("compiles");
    let (most, too_many) = ("x".repeat(61), "x".repeat(62));
    check(&c, &["x", "xxxx", &most], &["", &too_many]);
}
