use super::*;
use crate::frontend::regex::compile;
use crate::grammar::lower;
use crate::parser::{advance_chart, EarleyGrammar};

/// The grammar's matcher and warnings (it must build).
fn build(text: &str, dialect: Dialect) -> (impl Fn(&str) -> bool, Vec<String>) {
    let limits = Limits::default();
    let ast = crate::frontend::parse(text, dialect, &limits).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let cfg = lower(&ast, None, &limits, None).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let warnings = cfg.warnings.clone();
    let g = EarleyGrammar::new(cfg, &limits);
    let accepts = move |s: &str| {
        let mut chart = g.start_chart().unwrap();
        advance_chart(&g, &mut chart, s.as_bytes()).unwrap() && chart.is_accepting()
    };
    (accepts, warnings)
}

/// The grammar error of `text` (it must fail in the parser): line, column, message.
fn refused(text: &str, dialect: Dialect) -> (u32, u32, String) {
    match crate::frontend::parse(text, dialect, &Limits::default()) {
        Err(Error::Grammar { message, line, col }) => (line, col, message),
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn gbnf_escapes_are_llama_cpps() {
    let (accepts, _) = build(r#"root ::= "\x41\u00e9\U0001F600\t\r\n\\\"\[\]\-""#, Dialect::Gbnf);
    assert!(accepts("Aé😀\t\r\n\\\"[]-"));
    // Any other escape is refused, in strings and in classes, where it is written.
    for e in ["@", "0", "f", "v", "'", "a", "d", "/", ".", "^", " "] {
        let (line, col, message) = refused(&format!("root ::= \"ab\\{e}\""), Dialect::Gbnf);
        assert_eq!((line, col), (1, 13), "{e}: {message}");
        assert!(message.starts_with(&format!("unknown escape `\\{e}` in a GBNF string")), "{message}");
        let (line, col, message) = refused(&format!("root ::= \"x\"\nx ::= [ab\\{e}]"), Dialect::Gbnf);
        assert_eq!((line, col), (2, 10), "{e}: {message}");
        assert!(message.starts_with(&format!("unknown escape `\\{e}` in a GBNF class")), "{message}");
    }
    for bad in [r#"root ::= "\x4""#, r#"root ::= [\u12]"#, r#"root ::= "\UFFFFFFFF""#] {
        let (line, col, message) = refused(bad, Dialect::Gbnf);
        assert_eq!((line, col), (1, 11), "{bad}: {message}");
    }
}

#[test]
fn gbnf_classes_are_character_lists() {
    let cases: [(&str, &str, &str); 8] = [
        (r"[\x41-\x43]", "ABC", "@Da-"),
        ("[a-]", "a-", "b"),
        ("[a-c/ ]", "abc/ ", "-d"),
        ("[-a]", "-a", "b"),
        (r"[\]\[\\]", "][\\", "a"),
        ("[a^.*]", "a^.*", "b"),
        (r"[^\n\-]", "ab^", "\n-"),
        ("[^z-a]", "az\n", ""),
    ];
    for (class, yes, no) in cases {
        let (accepts, _) = build(&format!("root ::= {class}"), Dialect::Gbnf);
        for c in yes.chars() {
            assert!(accepts(&c.to_string()), "{class} should match {c:?}");
        }
        for c in no.chars() {
            assert!(!accepts(&c.to_string()), "{class} should not match {c:?}");
        }
    }
    // A reversed range matches nothing, as in llama.cpp: the alternative is dropped.
    let (accepts, warnings) = build("root ::= \"x\" | [z-a]", Dialect::Gbnf);
    assert!(accepts("x") && !accepts("a") && !accepts("z"));
    assert!(warnings.iter().any(|w| w.contains("matches no string")), "{warnings:?}");
    let (line, col, message) = refused("root ::= []a]", Dialect::Gbnf);
    assert_eq!((line, col), (1, 11), "{message}");
}

#[test]
fn gbnf_rules_end_at_the_end_of_their_line() {
    let (accepts, _) = build("root ::= \"a\" |\n  \"b\" (\n \"c\"\n | \"d\"\n)\nother ::=\n \"x\"", Dialect::Gbnf);
    assert!(accepts("a") && accepts("bc") && accepts("bd") && !accepts("b"));
    let cases: [(&str, (u32, u32)); 7] = [
        ("root ::= \"a\"\n  | \"b\"", (2, 3)),
        ("root ::= \"a\" b ::= \"c\"", (1, 14)),
        ("root ::= \"a\" ;", (1, 14)),
        ("root ::= 'a'", (1, 10)),
        ("root ::= a_b\na_b ::= \"x\"", (1, 11)),
        ("_x ::= \"x\"", (1, 1)),
        ("root ::= \"x\"{,3}", (1, 13)),
    ];
    for (text, pos) in cases {
        let (line, col, message) = refused(text, Dialect::Gbnf);
        assert_eq!((line, col), pos, "{text:?}: {message}");
    }
    // A line break inside a string is the character itself, as in llama.cpp.
    let (accepts, _) = build("root ::= \"a\nb\"", Dialect::Gbnf);
    assert!(accepts("a\nb"));
}

#[test]
fn gbnf_rule_defined_again_replaces_the_earlier_definition() {
    let (accepts, warnings) = build("root ::= a \"!\"\na ::= \"x\"\na ::= \"y\"", Dialect::Gbnf);
    assert!(accepts("y!") && !accepts("x!"));
    assert!(warnings.iter().any(|w| w.contains("rule `a` at line 2, column 1 is defined again later")), "{warnings:?}");
    // In corral EBNF, definitions of one name are alternatives (documented).
    let (accepts, warnings) = build("root ::= a \"!\" ;\na ::= \"x\" ;\na ::= \"y\" ;", Dialect::Ebnf);
    assert!(accepts("y!") && accepts("x!") && warnings.is_empty());
}

#[test]
fn ebnf_escapes_are_the_documented_ones() {
    let (accepts, _) = build(r#"s ::= "\n\t\r\0\f\v\\\"\'\x41\u00e9\U0001F600" '\'' ;"#, Dialect::Ebnf);
    assert!(accepts("\n\t\r\0\x0c\x0b\\\"'Aé😀'"));
    for e in ["@", "/", "[", "-", "a", "d", " "] {
        let (line, col, message) = refused(&format!("s ::= \"a\\{e}\" ;"), Dialect::Ebnf);
        assert_eq!((line, col), (1, 9), "{e}: {message}");
        assert!(message.starts_with(&format!("unknown escape `\\{e}` in an EBNF string")), "{message}");
    }
}

fn terminal(text: &str) -> String {
    let mut s = Scanner::new(text);
    if text.starts_with('[') {
        s.class().unwrap()
    } else {
        s.regex().unwrap()
    }
}

/// A terminal's regex is joined into larger patterns: its flags (trailing, or global
/// groups at its start) must hold for it alone and still parse after other text.
#[test]
fn terminal_flags_scope_the_terminal() {
    let limits = Limits::default();
    for (text, yes, no) in [
        ("/(?i)ab/", "xAB", "XAB"),
        ("/ab/i", "xAb", "XAb"),
        ("/(?s)(?i)a./", "xA\n", "XA\n"),
        ("/a b # comment/x", "xab", "xa b"),
        ("/(?x)a b/", "xab", "xa b"),
    ] {
        let joined = format!("x{}", terminal(text));
        let dfa = compile(&joined, &limits).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(dfa.matches(yes.as_bytes()), "{text} on {yes:?}");
        assert!(!dfa.matches(no.as_bytes()), "{text} on {no:?}");
    }
}

/// Classes and regex terminals read Python's class syntax: `]` first is a literal,
/// `--` and `&&` are plain characters.
#[test]
fn classes_read_python_syntax() {
    let limits = Limits::default();
    for (text, yes, no) in [
        ("[]-a]", "^", "b"),
        ("[--A]", "5", "B"),
        ("[^--A-Z]", "a", "5"),
        ("/[--A]/", "5", "B"),
        ("/[^--A-Z]/", "B", "5"),
        ("[a&&b]", "&", "c"),
    ] {
        let dfa = compile(&terminal(text), &limits).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(dfa.matches(yes.as_bytes()), "{text} on {yes:?}");
        assert!(!dfa.matches(no.as_bytes()), "{text} on {no:?}");
    }
}
