use super::*;
use crate::error::Error;
use crate::frontend::{parse, Dialect};
use crate::grammar::lower;
use crate::limits::Limits;

fn grammar(text: &str) -> EarleyGrammar {
    let limits = Limits::default();
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    EarleyGrammar::new(lower(&ast, None, &limits, None).unwrap(), &limits)
}

fn accepts(g: &EarleyGrammar, input: &str) -> bool {
    let mut chart = g.start_chart().unwrap();
    advance_chart(g, &mut chart, input.as_bytes()).unwrap() && chart.is_accepting()
}

fn err(text: &str) -> Error {
    let limits = Limits::default();
    match parse(text, Dialect::Ebnf, &limits) {
        Err(e) => e,
        Ok(ast) => lower(&ast, None, &limits, None).unwrap_err(),
    }
}

#[test]
fn arithmetic_left_recursive() {
    let g = grammar(
        r#"expr ::= expr "+" term | term ;
           term ::= term "*" factor | factor ;
           factor ::= "(" expr ")" | [0-9]+ ;"#,
    );
    for s in ["1", "1+2*3", "(1+2)*3", "((7))", "12*(3+45)+6"] {
        assert!(accepts(&g, s), "{s}");
    }
    for s in ["", "1+", "()", "(1", "1)", "+1", "1 + 2"] {
        assert!(!accepts(&g, s), "{s}");
    }
}

#[test]
fn many_nullable_symbols_in_one_production() {
    // 20 optional (recursive, so not merged into a terminal) symbols in one production:
    // 2^20 variants without the split into a chain of rules. A JSON array with
    // minItems and flexible whitespace looks like this.
    let body = vec!["o"; 20].join(" \",\" ");
    let g = grammar(&format!(r#"s ::= "[" {body} "]" | "x" ; o ::= s | "" ;"#));
    let list = |items: &dyn Fn(usize) -> String| format!("[{}]", (0..20).map(items).collect::<Vec<_>>().join(","));
    for k in [0usize, 1, 7, 20] {
        assert!(accepts(&g, &list(&|i| if i < k { "x".into() } else { String::new() })), "{k}");
    }
    let inner = list(&|i| if i == 3 { "x".into() } else { String::new() });
    assert!(accepts(&g, &list(&|i| if i % 5 == 0 { inner.clone() } else { String::new() })));
    for bad in [
        "[]",
        "[x]",
        "y",
        &list(&|i| if i == 4 { "xx".into() } else { String::new() }),
        &format!("{}]", list(&|_| String::new())),
    ] {
        assert!(!accepts(&g, bad), "{bad}");
    }
}

#[test]
fn balanced_with_empty() {
    let g = grammar(r#"s ::= "(" s ")" s | "" ;"#);
    for s in ["", "()", "(())()", "((()))"] {
        assert!(accepts(&g, s), "{s}");
    }
    for s in ["(", ")(", "(()"] {
        assert!(!accepts(&g, s), "{s}");
    }
}

#[test]
fn right_recursion_is_linear() {
    let g = grammar(r#"a ::= "a" a | "b" ;"#);
    let long = "a".repeat(20_000) + "b";
    let mut chart = g.start_chart().unwrap();
    assert!(advance_chart(&g, &mut chart, long.as_bytes()).unwrap());
    assert!(chart.is_accepting());
    // Leo keeps each set small: items per set do not grow with the input.
    assert!(chart.num_items() < 10 * long.len(), "{} items", chart.num_items());
}

#[test]
fn ambiguous_grammar() {
    let g = grammar(r#"e ::= e e | "x" | "(" e ")" ;"#);
    assert!(accepts(&g, "xxxx"));
    assert!(accepts(&g, "x(xx)x"));
    assert!(!accepts(&g, "x()"));
}

#[test]
fn no_greedy_lexing() {
    // `x` is recursive (not one terminal), so `[a]+` and "ab" are lexed separately:
    // "aab" needs the `[a]+` terminal to stop after one byte.
    let g = grammar(r#"s ::= x "ab" ; x ::= [a]+ | "(" s ")" ;"#);
    assert!(accepts(&g, "aab"));
    assert!(accepts(&g, "aaaab"));
    assert!(accepts(&g, "(aab)ab"));
    assert!(!accepts(&g, "ab"));
}

#[test]
fn except_terminal() {
    let g = grammar(r#"c ::= "/*" except!("*/") "*/" ;"#);
    for s in ["/**/", "/* hi */", "/* * / */", "/* é */"] {
        assert!(accepts(&g, s), "{s}");
    }
    for s in ["/* a */ b */", "/*", "/* */ */"] {
        assert!(!accepts(&g, s), "{s}");
    }
}

/// Every string over `alphabet` (characters) up to `max_len` characters.
fn strings(alphabet: &[char], max_len: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..max_len {
        frontier = frontier.iter().flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}"))).collect();
        out.extend(frontier.iter().cloned());
    }
    out
}

/// Checks a grammar against a predicate on every short string, through the Earley
/// recognizer and, when the grammar is regular, its DFA.
fn agrees(text: &str, alphabet: &[char], max_len: usize, want: impl Fn(&str) -> bool) {
    let limits = Limits::default();
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    let cfg = lower(&ast, None, &limits, None).unwrap();
    let regular = cfg.regular.clone();
    let g = EarleyGrammar::new(cfg, &limits);
    for s in strings(alphabet, max_len) {
        assert_eq!(accepts(&g, &s), want(&s), "{text}: {s:?}");
        if let Some(dfa) = &regular {
            assert_eq!(dfa.matches(s.as_bytes()), want(&s), "{text} (DFA): {s:?}");
        }
    }
}

#[test]
fn and_not_terminals() {
    let lower_word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase());
    agrees(r#"s ::= and!(/[a-z]+/, not!("ab" | "b")) ;"#, &['a', 'b', 'X', 'é'], 4, |s| lower_word(s) && s != "ab" && s != "b");
    // not! matches "" and every string of whole characters outside its argument.
    agrees(r#"s ::= not!("a") ;"#, &['a', 'b', 'é', '\n'], 3, |s| s != "a");
    // Nesting, and commas that concatenate inside a group.
    agrees(r#"s ::= not!(and!(/[a-z]+/, not!(("a", "b")))) ;"#, &['a', 'b', '1'], 4, |s| !lower_word(s) || s == "ab");
    agrees(r#"s ::= and!(/[ab]*/, not!(/.*aa.*/)) ;"#, &['a', 'b'], 6, |s| !s.contains("aa"));
    // An operator inside a concatenation, inside an operator's argument.
    agrees(r#"s ::= not!("a" not!("b")) ;"#, &['a', 'b'], 4, |s| !s.starts_with('a') || s == "ab");
    agrees(r#"s ::= except!(and!(/[a-z]+/, not!("a"))) ;"#, &['a', 'b', '1'], 4, |s| {
        // No run of letters other than a lone "a".
        s.split('1').all(|run| run.is_empty() || run == "a")
    });
    // Repetitions and alternatives of operators.
    agrees(r#"s ::= (not!(/.*b.*/) "b"){2} | and!("ab", /a./) ;"#, &['a', 'b'], 5, |s| {
        s == "ab" || (s.matches('b').count() == 2 && s.ends_with('b'))
    });
}

#[test]
fn boolean_terms_in_rules_and_recursion() {
    // Operators in regular rules used by other rules, and by a recursive one.
    let g = grammar(
        r#"list ::= "[" (item ("," item)*)? "]" ;
           item ::= word | list ;
           word ::= and!(/[a-z]+/, not!(keyword)) ;
           keyword ::= "if" | "for" ;
           quiet ::= not!(word) ;"#,
    );
    for s in ["[]", "[a]", "[iff,[fo,x]]", "[[[]]]"] {
        assert!(accepts(&g, s), "{s}");
    }
    for s in ["[if]", "[a,for]", "[[if]]", "[A]"] {
        assert!(!accepts(&g, s), "{s}");
    }
    // A nullable not! terminal next to others in a recursive rule.
    let g = grammar(r#"s ::= "(" not!(/.*[()a].*/) ")" | "[" s "]" ;"#);
    for s in ["()", "(b)", "[(bc)]", "[[()]]"] {
        assert!(accepts(&g, s), "{s}");
    }
    for s in ["(a)", "[(())]", "[()", "(ba)"] {
        assert!(!accepts(&g, s), "{s}");
    }
    // A regular start rule is one DFA.
    let limits = Limits::default();
    let ast = parse(r#"s ::= "<" w ">" ; w ::= and!(/\w+/, not!("x")) ;"#, Dialect::Ebnf, &limits).unwrap();
    let dfa = lower(&ast, None, &limits, None).unwrap().regular.unwrap();
    assert!(dfa.matches(b"<xy>") && dfa.matches("<é>".as_bytes()));
    assert!(!dfa.matches(b"<x>") && !dfa.matches(b"<>"));
    // A large counted piece is not folded (combining it would spend the fold's whole
    // budget): the parser reads it, with the same language.
    let text = r#"s ::= "<" and!(/[a-z\u00e9]{0,200}/, not!("x")) ">" ;"#;
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    assert!(lower(&ast, None, &limits, None).unwrap().regular.is_none());
    let g = grammar(text);
    for (s, want) in [("<>", true), ("<ab\u{e9}>", true), ("<x>", false), ("<xy>", true), ("<A>", false)] {
        assert_eq!(accepts(&g, s), want, "{s}");
    }
    assert!(accepts(&g, &format!("<{}>", "a".repeat(200))) && !accepts(&g, &format!("<{}>", "a".repeat(201))));
    // Too ambiguous to fold into one DFA cheaply: the parser reads it piece by piece.
    let text = r#"s ::= (and!(/[a-z]+/, not!("if")) " "?){0,200} ;"#;
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    assert!(lower(&ast, None, &limits, None).unwrap().regular.is_none());
    let g = grammar(text);
    // ("if" is "i" then "f": the space is optional.)
    for (s, want) in [("", true), ("ab cd", true), ("if", true), ("ab  cd", false), (" ab", false), ("aB", false)] {
        assert_eq!(accepts(&g, s), want, "{s}");
    }
}

#[test]
fn boolean_term_errors() {
    let cases = [
        (
            r#"s ::= "x" and!("a", "b") ;"#,
            (1, 11),
            "and!(...) matches no string (no string matches all of its arguments); so the start rule `s` matches no string at all",
        ),
        (
            r#"s ::= not!(/(?s:.)*/) ;"#,
            (1, 7),
            "not!(...) matches no string (its argument matches every string); so the start rule `s` matches no string at all",
        ),
        (r#"s ::= and!("a") ;"#, (1, 7), "and! needs two or more arguments, separated by commas"),
        (r#"s ::= not!("a", "b") ;"#, (1, 7), "not! takes exactly one argument"),
        (
            r#"s ::= "x" | "(" and!(s, "a") ")" ;"#,
            (1, 17),
            "and! needs regular arguments (strings, classes, regexes and non-recursive rules)",
        ),
        (
            r#"s ::= "x" | not!("y" and!(s, "a")) ;"#,
            (1, 22),
            "and! needs regular arguments (strings, classes, regexes and non-recursive rules)",
        ),
        (
            "s ::= \"x\" | not!(t) ;\nt ::= \"(\" s \")\" ;",
            (1, 13),
            "not! needs a regular argument (strings, classes, regexes and non-recursive rules)",
        ),
        (
            r#"s ::= except!(not!("a")) ;"#,
            (1, 7),
            "except!(...) matches no string (its argument matches the empty string); so the start rule `s` matches no string at all",
        ),
    ];
    for (text, (line, col), want) in cases {
        match err(text) {
            Error::Grammar { message, line: l, col: c } => {
                assert_eq!(message, want, "{text}");
                assert_eq!((l, c), (line, col), "{text}");
            }
            e => panic!("{text}: {e:?}"),
        }
    }
    // Pathological products stop at the state limit instead of running away.
    let limits = Limits { max_dfa_states: 2000, ..Limits::default() };
    let ast = parse(r#"s ::= and!(/(a|b)*a(a|b){12}/, not!(/(a|b)*b(a|b){12}/)) ;"#, Dialect::Ebnf, &limits).unwrap();
    assert!(matches!(lower(&ast, None, &limits, None), Err(Error::LimitExceeded { .. })));
    let ast = parse(r#"s ::= not!(not!("a"){1000000}) ;"#, Dialect::Ebnf, &Limits::default()).unwrap();
    assert!(matches!(lower(&ast, None, &Limits::default(), None), Err(Error::LimitExceeded { limit: "max_dfa_states", .. })));
    // An ambiguous repetition inside an operator: the subset construction's budget.
    let ast = parse(r#"s ::= not!((not!("ab") "x"){3000}) ;"#, Dialect::Ebnf, &Limits::default()).unwrap();
    assert!(matches!(lower(&ast, None, &Limits::default(), None), Err(Error::LimitExceeded { limit: "dfa_size_limit", .. })));
}

#[test]
fn repetitions_and_groups() {
    let g = grammar(r#"s ::= ("a" | "b" s){2,3} "c"? ;"#);
    for s in ["aa", "aaa", "aac", "babaa", "ab"] {
        let want = matches!(s, "aa" | "aaa" | "aac");
        assert_eq!(accepts(&g, s), want, "{s}");
    }
    let g = grammar(r#"list ::= item ("," item)* ; item ::= "x" | "[" list? "]" ;"#);
    for s in ["x", "x,x", "[]", "[x,[x,x]],x"] {
        assert!(accepts(&g, s), "{s}");
    }
    assert!(!accepts(&g, "x,"));
}

#[test]
fn errors_name_line_and_column() {
    match err("s ::= a ;\n  t ::= \"x\" ;") {
        Error::Grammar { message, line, col } => {
            assert!(message.contains("undefined rule `a`"), "{message}");
            assert_eq!((line, col), (1, 7));
        }
        e => panic!("{e:?}"),
    }
    match err("s ::= \"a\" loop ;\nloop ::= \"b\" loop ;") {
        Error::Grammar { message, line, .. } => {
            assert!(message.contains("can never produce a finite string"), "{message}");
            assert!(message.contains("loop") || message.contains("start"), "{message}");
            assert!(line >= 1);
        }
        e => panic!("{e:?}"),
    }
    match err("s ::= \"a\" (") {
        Error::Grammar { line, col, .. } => assert_eq!((line, col), (1, 12)),
        e => panic!("{e:?}"),
    }
    match err("s ::= [^\\s\\S] ;") {
        Error::Grammar { message, .. } => assert!(message.contains("matches no string"), "{message}"),
        e => panic!("{e:?}"),
    }
}

/// With `max_terminal_source` 0 a property (key then shared value) stays structure
/// instead of one determinized terminal: a different grammar, the same language.
#[test]
fn terminal_source_option_keeps_the_language() {
    let limits = Limits::default();
    let text = r#"start ::= "[" (p ("," p)*)? "]" ; p ::= "\"k\":" v | "\"j\":" w | start ; v ::= /[0-9]{1,3}/ ; w ::= "true" | "false" ;"#;
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    let whole = lower(&ast, None, &limits, None).unwrap();
    let split =
        crate::grammar::lower_with(&ast, None, &limits, &crate::grammar::LowerOptions { max_terminal_source: 0 }, None).unwrap();
    let names = |c: &crate::grammar::Cfg| c.terminals.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_ne!(names(&whole), names(&split), "the option changed nothing");
    let (whole, split) = (EarleyGrammar::new(whole, &limits), EarleyGrammar::new(split, &limits));
    let samples = [
        "[]",
        r#"["k":1]"#,
        r#"["k":123,"j":true]"#,
        r#"[["j":false],"k":0]"#,
        r#"["k":1234]"#,
        r#"["k":]"#,
        r#"["j":tru]"#,
        r#"["k":1,]"#,
        r#"[,"k":1]"#,
        "[[]]",
        r#"["k"1]"#,
        r#"["k":1"j":true]"#,
    ];
    for s in samples {
        assert_eq!(accepts(&whole, s), accepts(&split, s), "{s}");
    }
    assert!(accepts(&split, r#"[["j":false],"k":0]"#) && !accepts(&split, r#"["k":1234]"#));
}

#[test]
fn unused_rules_are_warnings() {
    let limits = Limits::default();
    let ast = parse("s ::= \"a\" ;\nunused ::= \"b\" ;", Dialect::Ebnf, &limits).unwrap();
    let cfg = lower(&ast, None, &limits, None).unwrap();
    assert_eq!(cfg.warnings.len(), 1);
    assert!(cfg.warnings[0].contains("`unused` at line 2, column 1"), "{:?}", cfg.warnings);
}

/// The warnings of a grammar that lowers.
fn warnings(text: &str) -> Vec<String> {
    let limits = Limits::default();
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    lower(&ast, None, &limits, None).unwrap().warnings
}

#[test]
fn unproductive_rules_are_dropped_with_a_warning() {
    // `r1` can never finish, but `r0` does not need it: the grammar matches "c".
    let text = "r0 ::= \"c\" | (r1)+ ;\nr1 ::= (r1)+ ;";
    agrees(text, &['c', 'x'], 4, |s| s == "c");
    let w = warnings(text);
    assert!(w.iter().any(|m| m.contains("rule `r1` at line 2, column 1 can never produce a finite string")), "{w:?}");
    // Longer cycles, used inside a recursive rule and a repetition.
    let text = "s ::= \"(\" s \")\" | \"x\" | \"[\" a \"]\" | b* \"y\" ;\na ::= \"a\" b ;\nb ::= \"b\" a ;";
    agrees(text, &['(', ')', 'x', 'y', 'a', 'b', '['], 4, |s| {
        let inner = s.trim_start_matches('(');
        let depth = s.len() - inner.len();
        inner.len() >= depth
            && inner[..inner.len() - depth].chars().all(|c| c == 'x' || c == 'y')
            && inner.len() - depth == 1
            && inner[1..].chars().all(|c| c == ')')
    });
    let w = warnings(text);
    for rule in ["`a` at line 2", "`b` at line 3"] {
        assert!(w.iter().any(|m| m.contains(rule) && m.contains("can never produce a finite string")), "{rule}: {w:?}");
    }
    // Only a start rule that produces nothing is an error, at the rule that loops.
    match err("s ::= \"a\" | t ;\nt ::= \"b\" t ;\nu ::= s | t ;\nroot ::= t u ;") {
        Error::Grammar { message, line, col } => {
            assert_eq!((line, col), (2, 1), "{message}");
            assert!(message.contains("rule `t` can never produce a finite string"), "{message}");
            assert!(message.contains("start rule `root` matches no string at all"), "{message}");
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn pieces_that_match_nothing_are_dropped_with_a_warning() {
    // An operator, a class and a regular rule that match no string, each in an
    // alternative that is not needed.
    let cases: [(&str, &str); 5] = [
        (
            "s ::= \"c\" | and!(/a+/, /b+/) ;",
            "and!(...) matches no string (no string matches all of its arguments) at line 1, column 13",
        ),
        ("s ::= \"c\" | \"a\" [^\\s\\S] ;", "`[^\\s\\S]` matches no string at line 1, column 17"),
        (
            "s ::= \"c\" | w ;\nw ::= \"a\" not!(/(?s:.)*/) ;",
            "not!(...) matches no string (its argument matches every string) at line 2, column 11",
        ),
        ("s ::= \"c\" | w ;\nw ::= and!(\"a\", \"b\") ;", "rule `w` at line 2, column 1 can never produce a finite string"),
        (
            "s ::= \"c\" | \"(\" s \")\" | except!(\"\") s ;",
            "except!(...) matches no string (its argument matches the empty string) at line 1, column 25",
        ),
    ];
    for (text, warning) in cases {
        let nested = text.contains("\"(\" s");
        agrees(text, &['a', 'b', 'c', '(', ')'], 4, |s| {
            let inner = s.trim_start_matches('(');
            let depth = s.len() - inner.len();
            (nested || depth == 0) && inner.len() == depth + 1 && inner.starts_with('c') && inner[1..].chars().all(|c| c == ')')
        });
        let w = warnings(text);
        assert!(w.iter().any(|m| m.contains(warning)), "{text}: {w:?}");
    }
    // A repetition of nothing is the empty string; not! and except! of nothing match
    // every string.
    agrees(r#"s ::= "a" and!("x", "y")* "b" ;"#, &['a', 'b', 'x', 'y'], 4, |s| s == "ab");
    agrees(r#"s ::= "a" and!("x", "y"){2,3} "b" | "c" ;"#, &['a', 'b', 'c', 'x', 'y'], 4, |s| s == "c");
    agrees(r#"s ::= not!(and!("a", "b")) ;"#, &['a', 'b', 'é'], 3, |_| true);
    agrees(r#"s ::= "<" except!([^\s\S]) ">" ;"#, &['<', '>', 'a'], 4, |s| {
        s.len() >= 2 && s.starts_with('<') && s.ends_with('>') && !s[1..s.len() - 1].is_empty() || s == "<>"
    });
    agrees(r#"s ::= and!(/[ab]+/, "ab" | and!("a", "b")) | "(" s ")" ;"#, &['a', 'b', '(', ')'], 5, |s| {
        let inner = s.trim_start_matches('(');
        let depth = s.len() - inner.len();
        inner.len() == depth + 2 && inner.starts_with("ab") && inner[2..].chars().all(|c| c == ')')
    });
    // A whole grammar that matches nothing is an error at the piece.
    for (text, pos) in [("s ::= [^\\s\\S] ;", (1, 7)), ("s ::= \"b\" w | w \"c\" ;\nw ::= and!(/a/, /b/) ;", (2, 7))] {
        match err(text) {
            Error::Grammar { message, line, col } => {
                assert_eq!((line, col), pos, "{text}: {message}");
                assert!(message.contains("matches no string"), "{message}");
            }
            e => panic!("{text}: {e:?}"),
        }
    }
}

#[test]
fn a_small_regular_rule_is_one_terminal_however_its_pieces_are_written() {
    // JSON strings written as `"\"" strchar* "\"" sp` with `strchar` a rule of its own:
    // lowering's groups once made the rule's regex look too long, so the string was read
    // one `strchar` terminal per character, an Earley set at every byte (masks inside
    // strings walked the trie with the parser: milliseconds each).
    let limits = Limits::default();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus/grammars/json.gbnf")).unwrap();
    let ast = parse(&text, Dialect::Gbnf, &limits).unwrap();
    let cfg = lower(&ast, None, &limits, None).unwrap();
    assert!(cfg.terminals.iter().any(|t| t.name == "str"), "{:?}", cfg.terminals.iter().map(|t| &t.name).collect::<Vec<_>>());
    let g = EarleyGrammar::new(cfg, &limits);
    let mut chart = g.start_chart().unwrap();
    advance_chart(&g, &mut chart, b"{\"").unwrap();
    let items = chart.num_items();
    advance_chart(&g, &mut chart, b"inside a string, no Earley set per byte").unwrap();
    assert_eq!(chart.num_items(), items);
}

/// A grammar text lowered to its normalized grammar.
fn lowered(text: &str) -> crate::grammar::Grammar {
    crate::grammar::Grammar::cfg_text(text, Dialect::Ebnf, None, &Limits::default(), None).unwrap()
}

#[test]
fn joined_grammars_match_their_parts() {
    use crate::grammar::{Grammar, Join};
    let limits = Limits::default();
    let texts = [
        r#"start ::= "(" start ")" | "" ;"#, // recursive, matches ""
        r#"start ::= [ab]+ ;"#,              // regular
        r#"start ::= "a" start | "b" ;"#,    // right recursive
        r#"start ::= "" ;"#,                 // only ""
    ];
    let parts: Vec<Grammar> = texts.iter().map(|t| lowered(t)).collect();
    let single: Vec<EarleyGrammar> = parts.iter().map(cfg_of).collect();
    let part_accepts = |i: usize, s: &str| accepts(&single[i], s);
    let alphabet = ['(', ')', 'a', 'b'];
    for chosen in [vec![0, 1], vec![1, 2, 0], vec![3, 0, 3], vec![2, 1], vec![0, 0, 1]] {
        let picked: Vec<Grammar> = chosen.iter().map(|&i| parts[i].clone()).collect();
        for join in [Join::Union, Join::Concat] {
            let joined = Grammar::join(&picked, join, &limits).unwrap();
            let Grammar::Cfg(c) = &joined else { panic!("a join is a grammar") };
            let regular = c.cfg.regular.clone();
            let g = cfg_of(&joined);
            for s in strings(&alphabet, 6) {
                let want = match join {
                    Join::Union => chosen.iter().any(|&i| part_accepts(i, &s)),
                    Join::Concat => splits(&chosen, &s, &part_accepts),
                };
                assert_eq!(accepts(&g, &s), want, "{join:?} of {chosen:?}: {s:?}");
                if let Some(dfa) = &regular {
                    assert_eq!(dfa.matches(s.as_bytes()), want, "{join:?} of {chosen:?} (DFA): {s:?}");
                }
            }
        }
    }
}

/// The recognizer of a lowered grammar.
fn cfg_of(g: &crate::grammar::Grammar) -> EarleyGrammar {
    match g {
        crate::grammar::Grammar::Cfg(c) => EarleyGrammar::new(c.cfg.clone(), &Limits::default()),
        crate::grammar::Grammar::Regex(_) => panic!("a grammar text lowers to a grammar"),
    }
}

/// Can `s` be split into strings of the parts `chosen`, in order?
fn splits(chosen: &[usize], s: &str, accepts: &impl Fn(usize, &str) -> bool) -> bool {
    match chosen.split_first() {
        None => s.is_empty(),
        Some((&i, rest)) => (0..=s.len()).any(|j| accepts(i, &s[..j]) && splits(rest, &s[j..], accepts)),
    }
}

#[test]
fn repeated_grammars_match_their_part_repeated() {
    use crate::grammar::Grammar;
    let limits = Limits::default();
    let texts = [
        r#"start ::= "(" start ")" | "" ;"#, // recursive, matches ""
        r#"start ::= [ab] ;"#,               // regular, one byte
        r#"start ::= "a" start | "b" ;"#,    // right recursive
        r#"start ::= "ab" | "a" ;"#,         // ambiguous when repeated
    ];
    let alphabet = ['(', ')', 'a', 'b'];
    for text in texts {
        let part = lowered(text);
        let one = cfg_of(&part);
        for (min, max) in [(0, Some(1)), (1, None), (0, None), (2, Some(3)), (3, Some(3)), (0, Some(0)), (2, None)] {
            let repeated = Grammar::repeat(&part, min, max, &limits).unwrap();
            let Grammar::Cfg(c) = &repeated else { panic!("a repetition is a grammar") };
            let regular = c.cfg.regular.clone();
            let g = cfg_of(&repeated);
            for s in strings(&alphabet, 6) {
                let want = pieces(&s, min, max, &|p: &str| accepts(&one, p));
                assert_eq!(accepts(&g, &s), want, "{text} {{{min},{max:?}}}: {s:?}");
                if let Some(dfa) = &regular {
                    assert_eq!(dfa.matches(s.as_bytes()), want, "{text} {{{min},{max:?}}} (DFA): {s:?}");
                }
            }
        }
    }
    assert!(Grammar::repeat(&lowered(texts[1]), 3, Some(2), &limits).is_err());
    let tight = Limits { max_grammar_productions: 10, ..Limits::default() };
    assert!(matches!(Grammar::repeat(&lowered(texts[1]), 11, None, &tight), Err(Error::LimitExceeded { .. })));
}

/// Can `s` be split into `min..=max` strings that each satisfy `accepts` (empty ones too)?
fn pieces(s: &str, min: u32, max: Option<u32>, accepts: &impl Fn(&str) -> bool) -> bool {
    let cap = max.unwrap_or(min + s.len() as u32) as usize;
    // reach[k][i]: s[..i] is k pieces.
    let mut reach = vec![vec![false; s.len() + 1]; cap + 1];
    reach[0][0] = true;
    for k in 0..cap {
        for i in 0..=s.len() {
            if reach[k][i] {
                for j in i..=s.len() {
                    if accepts(&s[i..j]) {
                        reach[k + 1][j] = true;
                    }
                }
            }
        }
    }
    (min as usize..=cap).any(|k| reach[k][s.len()])
}

/// The state key of `chart` after numbering its sets in `numbers` (None: no key).
fn key_of(g: &EarleyGrammar, chart: &mut Chart, numbers: &SetNumbers) -> Option<Vec<u32>> {
    chart.number_sets(g, numbers, true);
    let mut key = Vec::new();
    chart.state_key(&mut key, 1 << 14).then_some(key)
}

/// A state key names sets by numbers that stand for their content: it is as long as the
/// open scans however deep the parse, tells depths apart (each needs its own closing
/// brackets), and is the same for the same position reached by another parse, or again
/// after a rollback.
#[test]
fn state_keys_stay_short_and_tell_positions_apart() {
    let g = grammar(r#"s ::= "(" s ")" | "x" ;"#);
    let numbers = SetNumbers::default();
    let mut chart = g.start_chart().unwrap();
    let mut keys = vec![key_of(&g, &mut chart, &numbers).unwrap()];
    for _ in 0..60 {
        assert!(advance_chart(&g, &mut chart, b"(").unwrap());
        let key = key_of(&g, &mut chart, &numbers).unwrap();
        assert!(key.len() <= 1 + 3 * 2, "a key of {} words at depth {}", key.len(), keys.len());
        assert!(!keys.contains(&key), "depth {} shares a key with a shallower one", keys.len());
        keys.push(key);
    }
    // Another parse of the same grammar, and the first one rolled back and read again.
    let mut other = g.start_chart().unwrap();
    assert!(advance_chart(&g, &mut other, b"(((").unwrap());
    assert_eq!(key_of(&g, &mut other, &numbers).unwrap(), keys[3]);
    chart.truncate_rows(3);
    assert_eq!(key_of(&g, &mut chart, &numbers).unwrap(), keys[2]);
    assert!(advance_chart(&g, &mut chart, b"(").unwrap());
    assert_eq!(key_of(&g, &mut chart, &numbers).unwrap(), keys[3]);
    // The same text read as a different position (after "x" a closing bracket is due).
    assert!(advance_chart(&g, &mut other, b"x").unwrap());
    assert!(!keys.contains(&key_of(&g, &mut other, &numbers).unwrap()));
}

/// Where the table of numbers may not grow, a parse that reaches a set it does not hold
/// has no key (its masks are computed, not cached), and so has every later position that
/// reaches that set.
#[test]
fn sets_without_a_number_give_no_key() {
    let g = grammar(r#"s ::= "(" s ")" | "x" ;"#);
    let numbers = SetNumbers::default();
    let mut chart = g.start_chart().unwrap();
    chart.number_sets(&g, &numbers, true);
    assert!(advance_chart(&g, &mut chart, b"((").unwrap());
    assert_eq!(chart.number_sets(&g, &numbers, false), 0);
    let mut key = Vec::new();
    assert!(!chart.state_key(&mut key, 1 << 14));
    assert!(advance_chart(&g, &mut chart, b"x").unwrap());
    chart.number_sets(&g, &numbers, true);
    assert!(!chart.state_key(&mut key, 1 << 14), "a set reaching an unnumbered one got a key");
    let before = numbers.len();
    let mut fresh = g.start_chart().unwrap();
    assert!(advance_chart(&g, &mut fresh, b"((x").unwrap());
    assert!(fresh.number_sets(&g, &numbers, true) > 0);
    assert!(numbers.len() > before);
    assert!(fresh.state_key(&mut key, 1 << 14));
}
