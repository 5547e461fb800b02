use super::*;
use crate::grammar::lower;
use crate::parser::{advance_chart, EarleyGrammar};

fn matcher(text: &str) -> impl Fn(&str) -> bool {
    let limits = Limits::default();
    let ast = parse(text, &limits).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let cfg = lower(&ast, Some("start"), &limits, None).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let g = EarleyGrammar::new(cfg, &limits);
    move |s: &str| {
        let mut chart = g.start_chart().unwrap();
        advance_chart(&g, &mut chart, s.as_bytes()).unwrap() && chart.is_accepting()
    }
}

fn refused(text: &str) -> (u32, u32, String) {
    match parse(text, &Limits::default()) {
        Err(Error::Grammar { message, line, col }) => (line, col, message),
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn names_defined_twice_are_refused_unless_overridden() {
    let cases: [(&str, (u32, u32), &str); 6] = [
        ("start: a\na: \"x\"\na: \"y\"\n", (3, 1), "rule `a` is defined more than once (first at 2:1)"),
        ("start: A\nA: \"x\"\nA: \"y\"\n", (3, 1), "terminal `A` is defined more than once (first at 2:1)"),
        ("start: INT\nINT: \"x\"\n%import common.INT\n", (3, 1), "cannot import `INT`: it is already defined (at 2:1)"),
        ("start: INT\n%import common.INT\nINT: \"x\"\n", (3, 1), "terminal `INT` is defined more than once (first at 2:1)"),
        ("start: a\n%override a: \"y\"\na: \"x\"\n", (2, 11), "cannot override rule `a`: it is not defined before"),
        ("start: A\n%extend A: \"y\"\nA: \"x\"\n", (2, 9), "cannot extend terminal `A`: it is not defined before"),
    ];
    for (text, pos, want) in cases {
        let (line, col, message) = refused(text);
        assert_eq!((line, col), pos, "{text:?}: {message}");
        assert!(message.starts_with(want), "{text:?}: {message}");
    }
    let m = matcher("start: a A\na: \"x\"\n%override a: \"y\"\nA: \"1\"\n%extend A: \"2\"\n");
    assert!(m("y1") && m("y2") && !m("x1") && !m("y3"));
    // The same import twice is one import.
    let m = matcher("start: WS? \"a\"\n%import common.WS\n%import common.WS\n");
    assert!(m(" a") && m("a"));
}

#[test]
fn recursive_terminals_are_refused() {
    let cases: [(&str, (u32, u32), &str); 3] = [
        ("start: FOO\nFOO: \"a\" | BAR\nBAR: \"b\" FOO\n", (2, 1), "terminal `FOO` is recursive (FOO -> BAR -> FOO)"),
        ("start: A\nA: \"a\" A?\n", (2, 1), "terminal `A` is recursive (A -> A)"),
        ("start: X\nX: Y\nY: \"y\" | Z\nZ: \"(\" Y \")\"\n", (3, 1), "terminal `Y` is recursive (Y -> Z -> Y)"),
    ];
    for (text, pos, want) in cases {
        let (line, col, message) = refused(text);
        assert_eq!((line, col), pos, "{text:?}: {message}");
        assert!(message.starts_with(want), "{text:?}: {message}");
    }
    // The same shape with rules is fine.
    let m = matcher("start: foo\nfoo: \"a\" | bar\nbar: \"b\" foo\n");
    assert!(m("a") && m("ba") && m("bba") && !m("b"));
}

#[test]
fn names_directives_and_imports_follow_lark() {
    for (text, pos) in [
        ("start: Foo\n", (1, 8)),
        ("Start: \"a\"\n", (1, 1)),
        ("start: \"a\"\n%foo x\n", (2, 1)),
        ("start: A\n%declare A\n", (2, 1)),
    ] {
        let (line, col, message) = refused(text);
        assert_eq!((line, col), pos, "{text:?}: {message}");
    }
    // What an import uses lives in the library's namespace: the grammar's own DIGIT
    // does not change common.INT.
    let m = matcher("start: INT DIGIT\nDIGIT: \"x\"\n%import common.INT\n");
    assert!(m("12x") && !m("x1x") && !m("12"));
}

/// The grammar error of `text` from parsing or lowering.
fn refused_anywhere(text: &str) -> (u32, u32, String) {
    let limits = Limits::default();
    let err = match parse(text, &limits) {
        Err(e) => e,
        Ok(ast) => lower(&ast, Some("start"), &limits, None).err().unwrap_or_else(|| panic!("{text:?} builds")),
    };
    match err {
        Error::Grammar { message, line, col } => (line, col, message),
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn tokens_that_match_the_empty_string_are_refused_as_lark_does() {
    let cases: [(&str, (u32, u32), &str); 6] = [
        ("start: \"x\" | \"\"\n", (1, 14), "empty string"),
        ("start: A \"x\"\nA: \"a\"?\n", (2, 1), "terminal `A` matches the empty string"),
        ("start: /a*/ \"x\"\n", (1, 8), "this token matches the empty string"),
        ("start: \"x\"\n%ignore /\\s*/\n", (2, 9), "this token matches the empty string"),
        ("start: b\nb: \"x\" | c\nc: B\nB: (\"b\" \"c\")*\n", (4, 1), "terminal `B` matches the empty string"),
        ("start: \"a\"\nb: \"b\"\n%ignore b\n", (3, 9), "%ignore uses the rule `b`"),
    ];
    for (text, pos, want) in cases {
        let (line, col, message) = refused_anywhere(text);
        assert_eq!((line, col), pos, "{text:?}: {message}");
        assert!(message.starts_with(want), "{text:?}: {message}");
    }
    // Unused rules, and terminals used only inside other terminals, may be empty.
    let m = matcher("start: \"x\" B\nB: A \"b\"\nA: \"a\"?\nunused: /a*/\n");
    assert!(m("xb") && m("xab") && !m("x"));
}

#[test]
fn a_later_import_of_a_name_renames_it() {
    let (line, col, message) = refused_anywhere("start: CNAME\n%import common (CNAME, WS)\n%import common.CNAME -> NAME\n");
    assert_eq!((line, col), (1, 8), "{message}");
    let m = matcher("start: NAME\n%import common (CNAME, WS)\n%import common.CNAME -> NAME\n");
    assert!(m("ab_1") && !m("1a"));
}

#[test]
fn strings_decode_escapes_as_lark_does() {
    let cases: [(&str, &str); 8] = [
        (r#""\d""#, "\\d"),
        (r#""\@""#, "\\@"),
        (r#""\\""#, "\\"),
        (r#""\"""#, "\""),
        (r#""\x41\u00e9\U0001F600""#, "Aé😀"),
        (r#""\n\t\r\f""#, "\n\t\r\x0c"),
        (r#""\'""#, "\\'"),
        (r#""\x5c\x5c""#, "\\"),
    ];
    for (lit, want) in cases {
        let m = matcher(&format!("start: {lit}\n"));
        assert!(m(want), "{lit} should be {want:?}");
    }
    let (line, col, _) = refused("start: \"a\\x4g\"\n");
    assert_eq!((line, col), (1, 10));
}
