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

/// A JSON Schema compiled as its grammar, with compact separators.
fn compile_schema(schema: &str, limits: &Limits) -> corral_core::Result<Arc<CompiledGrammar>> {
    let options = corral_core::json_schema::translate::SchemaOptions::default();
    let built = corral_core::json_schema::compile::schema_grammar(schema, &[], &options, limits)?;
    Ok(Arc::new(CompiledGrammar::new(&built.grammar, byte_vocab(), limits, false)?))
}

#[test]
fn automata_too_large_to_join_stay_grammar_structure() {
    // Keys of up to 200 characters, each the key of an array of up to 100 strings of up to
    // 200: one automaton for a whole member would need more than `max_dfa_states`; its
    // parts are terminals of their own instead, and the bounds all hold.
    let schema = r#"{"type": "object", "propertyNames": {"maxLength": 200},
        "additionalProperties": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 200}}}"#;
    let c = compile_schema(schema, &Limits::default()).expect("the members are read over their parts");
    let key = "k".repeat(200);
    let item = format!("\"{}\"", "x".repeat(200));
    let full = format!("{{\"{key}\":[{}],\"b\":[]}}", vec![item.as_str(); 100].join(","));
    let over = format!("{{\"a\":[{}]}}", vec!["\"x\""; 101].join(","));
    let long_key = format!("{{\"{key}k\":[]}}");
    let long_item = format!("{{\"a\":[\"{}\"]}}", "x".repeat(201));
    check(&c, &["{}", "{\"a\":[]}", &full], &[&over, &long_key, &long_item, "{\"a\":[1]}"]);
}

#[test]
fn an_operator_argument_past_the_limit_is_still_refused() {
    // An operator needs its argument as one automaton: no grammar structure can stand in.
    let small = Limits { max_dfa_states: 1_000, ..Limits::default() };
    let text = "start ::= not!(/[a-z]{0,40}(,[a-z]{0,40}){0,40}/)\n";
    match compile(text, Dialect::Ebnf, &small) {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "max_dfa_states"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
