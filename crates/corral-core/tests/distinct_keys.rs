//! Grammars with distinct keys through the public API: masks, advance, rollback,
//! completion and `matches` agree that no JSON object repeats a key, on both engines.

use std::sync::Arc;

use corral_core::Dialect;
use corral_core::{CompiledGrammar, Grammar, Limits, Matcher, Vocabulary};

/// Objects of `1`s and objects; keys `abc` or `x+` (regular when `nested` is false, so
/// the DFA engine runs it).
fn grammar(nested: bool) -> Grammar {
    let value = if nested { r#""1" | o"# } else { r#""1""# };
    let text = format!(
        "start ::= o ;\no ::= \"{{\" (m (\",\" m)*)? \"}}\" ;\nm ::= \"\\\"\" /(?:abc|x+)/ \"\\\"\" \":\" v ;\nv ::= {value} ;\n"
    );
    Grammar::cfg_text(&text, Dialect::Ebnf, None, &Limits::default(), None).unwrap().with_distinct_keys(false)
}

const TOKENS: &[&str] =
    &["{", "}", ",", ":", "1", "\"", "a", "b", "c", "x", "\"ab", "\"abc\"", "\"x", "abc\":1,\"abc\"", "\"x\":1,\"xx"];

fn compiled(nested: bool) -> Arc<CompiledGrammar> {
    let mut tokens: Vec<Option<Vec<u8>>> = TOKENS.iter().map(|t| Some(t.as_bytes().to_vec())).collect();
    tokens.push(None);
    let eos = TOKENS.len() as u32;
    let vocab = Arc::new(Vocabulary::new(tokens, &[], &[eos], None).unwrap());
    Arc::new(CompiledGrammar::new(&grammar(nested), vocab, &Limits::default(), false).unwrap())
}

fn id(token: &str) -> u32 {
    TOKENS.iter().position(|t| *t == token).unwrap() as u32
}

fn allowed(m: &Matcher) -> Vec<&'static str> {
    let mut out = vec![0u32; m.grammar().vocab().mask_words()];
    let info = m.fill_mask(&mut out).unwrap();
    let got: Vec<&str> = TOKENS.iter().enumerate().filter(|(i, _)| out[i / 32] >> (i % 32) & 1 == 1).map(|(_, t)| *t).collect();
    let eos = TOKENS.len();
    assert_eq!(info.allowed as usize, got.len() + (out[eos / 32] >> (eos % 32) & 1) as usize);
    got
}

fn feed(m: &mut Matcher, tokens: &[&str]) {
    for t in tokens {
        assert!(m.advance(id(t)).unwrap(), "{t}");
    }
}

#[test]
fn repeated_keys_are_masked_refused_and_not_matched() {
    for nested in [false, true] {
        let c = compiled(nested);
        let mut m = Matcher::new(c.clone());
        feed(&mut m, &["{", "\"abc\"", ":", "1", ","]);
        let ok = allowed(&m);
        // `"ab` can only become `abc` again: a dead end. `"x` and `"` are fine.
        assert!(!ok.contains(&"\"ab") && !ok.contains(&"\"abc\""), "{ok:?}");
        assert!(ok.contains(&"\"x") && ok.contains(&"\""), "{ok:?}");
        for t in ["\"ab", "\"abc\""] {
            assert!(!m.is_allowed(id(t)));
            assert!(!m.advance(id(t)).unwrap());
        }
        // A token that repeats a key of its own.
        feed(&mut m, &["\""]);
        assert!(!allowed(&m).contains(&"abc\":1,\"abc\""));
        m.rollback(1).unwrap();
        feed(&mut m, &["\"x\":1,\"xx"]);
        // Inside `xx`: `"` closes a new key.
        assert!(allowed(&m).contains(&"\""));
        // Rolling back past the first key allows it again.
        m.rollback(5).unwrap();
        assert_eq!(m.num_tokens(), 1);
        assert!(allowed(&m).contains(&"\"abc\""));
        assert!(!c.matches(br#"{"abc":1,"abc":1}"#).unwrap());
        assert!(c.matches(br#"{"abc":1,"x":1}"#).unwrap());
    }
    assert!(compiled(true).matches(br#"{"abc":{"abc":1},"x":1}"#).unwrap());
}

#[test]
fn completions_use_new_keys() {
    for nested in [false, true] {
        let c = compiled(nested);
        let mut m = Matcher::new(c.clone());
        feed(&mut m, &["{", "\"abc\"", ":", "1", ",", "\"x\":1,\"xx", "\"", ":", "1", ",", "\""]);
        let rest = m.completion().unwrap().unwrap();
        let mut whole = br#"{"abc":1,"x":1,"xx":1,""#.to_vec();
        whole.extend_from_slice(&rest);
        assert!(c.matches(&whole).unwrap(), "{}", String::from_utf8_lossy(&whole));
    }
}

/// A schema whose array of strings must hold distinct strings, on a byte vocabulary.
fn distinct_strings() -> Grammar {
    let schema = r#"{"type": "array", "uniqueItems": true, "items": {"type": "string"}}"#;
    let options = corral_core::json_schema::translate::SchemaOptions::default();
    corral_core::json_schema::compile::schema_grammar(schema, &[], &options, &Limits::default()).unwrap().grammar
}

#[test]
fn distinct_strings_through_the_public_api_and_joins() {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.push(None);
    let vocab = Arc::new(Vocabulary::new(tokens, &[], &[256], None).unwrap());
    let g = distinct_strings();
    let c = Arc::new(CompiledGrammar::new(&g, vocab, &Limits::default(), false).unwrap());
    assert!(c.matches(br#"["a","b"]"#).unwrap() && !c.matches(br#"["a","b","a"]"#).unwrap());
    let mut m = Matcher::new(c.clone());
    for &b in br#"["a","a"# {
        assert!(m.advance(b as u32).unwrap());
    }
    assert!(!m.is_allowed(b'"' as u32) && m.is_allowed(b'b' as u32));
    // The completion of a half-written repeat writes a new string.
    let done = m.completion().unwrap().unwrap();
    let whole = [br#"["a","a"#.as_slice(), &done].concat();
    assert!(c.matches(&whole).unwrap(), "{}", String::from_utf8_lossy(&whole));
    // Joined with text that is not JSON, the check could not run: refused.
    let text = Grammar::cfg_text("start ::= \"say: \" ;", Dialect::Ebnf, None, &Limits::default(), None).unwrap();
    let e = Grammar::join(&[text, g.clone()], corral_core::grammar::Join::Concat, &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("uniqueItems"), "{e}");
    // Repeated, JSON after JSON, it holds.
    assert!(Grammar::repeat(&g, 1, Some(2), &Limits::default()).is_ok());
}
