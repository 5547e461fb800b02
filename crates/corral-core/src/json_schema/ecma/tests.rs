use super::*;

fn limits() -> Limits {
    Limits::default()
}

fn chars(ranges: &[(u32, u32)]) -> Node {
    Node::Chars(ranges.to_vec())
}

fn lit(c: char) -> Node {
    chars(&[(c as u32, c as u32)])
}

/// The error of `pattern`: (unsupported rather than invalid, position, message).
fn refusal(pattern: &str) -> (bool, usize, String) {
    match parse(pattern, &limits()).and_then(|_| search_language(pattern, &limits())) {
        Err(Error::RegexSyntax { message, position, .. }) => (false, position, message),
        Err(Error::UnsupportedRegex { construct, position, .. }) => (true, position, construct),
        other => panic!("{pattern:?}: {other:?}"),
    }
}

/// The DFA of `hir`, None when it matches nothing.
fn dfa(hir: &Hir) -> Option<Dfa> {
    match crate::frontend::regex::compile_hir(hir, "test", &limits()) {
        Ok(d) => Some(d),
        Err(Error::EmptyLanguage { .. }) => None,
        Err(e) => panic!("{e}"),
    }
}

fn matches(hir: &Hir, s: &str) -> bool {
    dfa(hir).is_some_and(|d| d.matches(s.as_bytes()))
}

#[test]
fn ranges_are_sorted_merged_and_without_surrogates() {
    assert_eq!(normalize([(5, 9), (0, 3), (4, 4), (20, 30), (25, 26)]), vec![(0, 9), (20, 30)]);
    assert_eq!(normalize([(0xD000, 0xE100)]), vec![(0xD000, 0xD7FF), (0xE000, 0xE100)]);
    assert_eq!(normalize([(0xD800, 0xDFFF)]), vec![]);
    assert_eq!(normalize([(0xDA00, 0xDA00), (0x41, 0x41)]), vec![(0x41, 0x41)]);
    // Either side of the surrogates stays apart: they are not adjacent code points.
    assert_eq!(normalize([(0xD7FF, 0xD7FF), (0xE000, 0xE000)]), vec![(0xD7FF, 0xD7FF), (0xE000, 0xE000)]);
    let all = vec![(0, 0xD7FF), (0xE000, MAX_CODE_POINT)];
    assert_eq!(complement(&[]), all);
    assert_eq!(complement(&all), vec![]);
    assert_eq!(complement(&[(0, 9), (0x10FFFF, 0x10FFFF)]), vec![(10, 0xD7FF), (0xE000, 0x10FFFE)]);
    let a = normalize([(0, 100), (200, 0x10000)]);
    assert_eq!(complement(&complement(&a)), a);
    assert_eq!(intersect(&a, &[(50, 250)]), vec![(50, 100), (200, 250)]);
    assert_eq!(intersect(&a, &[(101, 199)]), vec![]);
    assert_eq!(intersect(&a, &a), a);
}

#[test]
fn the_reader_builds_the_recorded_nodes() {
    let p = |s: &str| parse(s, &limits()).unwrap();
    assert_eq!(p("a|b"), Node::Alt(vec![lit('a'), lit('b')]));
    assert_eq!(p(""), Node::Seq(vec![]));
    assert_eq!(p("a|"), Node::Alt(vec![lit('a'), Node::Seq(vec![])]));
    // Groups are their contents; lazy quantifiers have the same language.
    let ab = Node::Seq(vec![lit('a'), lit('b')]);
    assert_eq!(p("(?:ab)*?"), Node::Repeat { item: Box::new(ab.clone()), min: 0, max: None });
    assert_eq!(p("(?<x>ab)"), ab);
    assert_eq!(p("(ab)"), ab);
    assert_eq!(p("a{2,3}"), Node::Repeat { item: Box::new(lit('a')), min: 2, max: Some(3) });
    assert_eq!(p("a{2,}"), Node::Repeat { item: Box::new(lit('a')), min: 2, max: None });
    // Quantifiers stack.
    let a01 = Node::Repeat { item: Box::new(lit('a')), min: 0, max: Some(1) };
    assert_eq!(p("a???"), Node::Repeat { item: Box::new(a01), min: 0, max: Some(1) });
    // A brace that is not a quantifier is a literal (Annex B).
    assert_eq!(p("a{"), Node::Seq(vec![lit('a'), lit('{')]));
    assert_eq!(p("a{,5}"), Node::Seq(vec![lit('a'), lit('{'), lit(','), lit('5'), lit('}')]));
    assert_eq!(
        p("^a$"),
        Node::Seq(vec![Node::Anchor { start: true, position: 0 }, lit('a'), Node::Anchor { start: false, position: 2 }])
    );
}

#[test]
fn escapes_and_classes_are_sets_of_code_points() {
    let p = |s: &str| parse(s, &limits()).unwrap();
    assert_eq!(p(r"\u{1F600}"), lit('😀'));
    assert_eq!(p(r"\uD83D\uDE00"), lit('😀'));
    assert_eq!(p(r"\u{0000041}"), lit('A'));
    // A lone surrogate is no character.
    assert_eq!(p(r"\uD83D"), chars(&[]));
    assert_eq!(p(r"\uD83D\u0041"), Node::Seq(vec![chars(&[]), lit('A')]));
    assert_eq!(p(r"\x41\cJ\0\t\v"), Node::Seq(vec![lit('A'), lit('\n'), lit('\0'), lit('\t'), lit('\x0B')]));
    assert_eq!(p(r"\/\-\é"), Node::Seq(vec![lit('/'), lit('-'), lit('é')]));
    assert_eq!(p(r"\d"), chars(&[(0x30, 0x39)]));
    assert_eq!(p(r"[\b]"), lit('\x08'));
    assert_eq!(p(r"[\d-a]"), chars(&[(0x2D, 0x2D), (0x30, 0x39), (0x61, 0x61)]));
    assert_eq!(p(r"[a-]"), chars(&[(0x2D, 0x2D), (0x61, 0x61)]));
    assert_eq!(p(r"[^\s\S]"), chars(&[]));
    assert_eq!(p(r"[^]"), chars(&ranges::any()));
    assert_eq!(p(r"[\uD83D\uDE00-\uD83D\uDE02]"), chars(&[(0x1F600, 0x1F602)]));
    // `.` is every character but the line terminators.
    assert_eq!(p("."), chars(&[(0, 9), (0xB, 0xC), (0xE, 0x2027), (0x202A, 0xD7FF), (0xE000, MAX_CODE_POINT)]));
    // `\s` is ECMAScript's white space and line terminators.
    let space = match p(r"\s") {
        Node::Chars(r) => r,
        other => panic!("{other:?}"),
    };
    let has = |c: u32| space.iter().any(|&(lo, hi)| lo <= c && c <= hi);
    assert!(has(0xFEFF) && has(0x3000) && !has(0x85) && !has(0x1C));
}

#[test]
fn refusals_name_the_construct_and_its_position() {
    let cases: &[(&str, bool, usize)] = &[
        (r"ab\1", true, 2),
        (r"\k<n>", true, 0),
        (r"[\B]", false, 1),
        // A property ECMAScript does not know, spelled otherwise or alone as a script.
        (r"a\p{letter}", false, 1),
        (r"[\p{Greek}]", false, 1),
        (r"\P{L", false, 0),
        // A look-behind cannot hold what looks ahead.
        ("(?<=a(?=b))", true, 5),
        ("x(?<!a$)", true, 6),
        (r"(?<=(?<!\b))", true, 8),
        ("(?=a)*", false, 5),
        (r"\b+", false, 2),
        ("ab)", false, 2),
        ("(ab", false, 0),
        ("(?<ab", false, 1),
        ("(?x)", false, 0),
        ("*a", false, 0),
        ("a|+", false, 2),
        ("{2}", false, 0),
        ("a{3,2}", false, 1),
        ("^*", false, 1),
        ("[ab", false, 0),
        ("[z-a]", false, 4),
        (r"[a-\d]", false, 5),
        (r"a\", false, 1),
        (r"\q", false, 0),
        (r"\x4", false, 0),
        (r"\u{110000}", false, 0),
        (r"\c1", false, 0),
        // Positions count characters, not bytes.
        ("😀é(", false, 2),
        // Python's reader takes any decimal digit (str.isdigit) for a backreference.
        (r"\٣", true, 0),
        (r"\²", true, 0),
    ];
    for &(pattern, unsupported, position) in cases {
        let (u, at, message) = refusal(pattern);
        assert_eq!((u, at), (unsupported, position), "{pattern:?}: {message}");
    }
    assert_eq!(refusal("(a").2, "missing `)`");
    assert_eq!(refusal("a{3,2}").2, "numbers out of order in quantifier `{3,2}`");
    // Only search languages let anchors stand at the ends.
    assert!(search_language("^a$", &limits()).is_ok());
    assert!(matches!(full_language("^a", &limits()), Err(Error::UnsupportedRegex { position: 0, .. })));
}

#[test]
fn counts_past_the_hir_bound_and_limits_are_errors() {
    let l = limits();
    assert!(matches!(parse("a{4294967294}", &l), Ok(Node::Repeat { min: 4_294_967_294, .. })));
    assert!(matches!(parse("a{4294967295}", &l), Err(Error::RegexSyntax { position: 1, .. })));
    assert!(matches!(parse("a{1,99999999999999999999999}", &l), Err(Error::RegexSyntax { position: 1, .. })));
    // The errors come in the order of the pattern's text.
    assert_eq!(refusal("^{99999999999}").2, "a quantifier cannot follow an anchor or look-around (Unicode mode)");
    assert!(refusal("^{3,2}").2.starts_with("numbers out of order"));
    // Huge counts are still ordered as numbers.
    let (_, _, m) = refusal("a{99999999999999999999999,99999999999999999999998}");
    assert!(m.starts_with("numbers out of order"), "{m}");
    // Any decimal digits count, as Python's `re` reads `\d`.
    assert!(matches!(parse("a{٣}", &l), Ok(Node::Repeat { min: 3, max: Some(3), .. })));
    let small = Limits { max_pattern_bytes: 3, ..Limits::default() };
    assert!(matches!(parse("abcd", &small), Err(Error::LimitExceeded { limit: "max_pattern_bytes", .. })));
    let nest = Limits { regex_nest_limit: 3, ..Limits::default() };
    assert!(parse("((a))*", &nest).is_ok());
    for deep in ["(((a)))*", "((((a))))", "a****", "(a*)**"] {
        assert!(matches!(parse(deep, &nest), Err(Error::LimitExceeded { limit: "regex_nest_limit", .. })), "{deep}");
    }
    // Deep nesting is refused before it can overflow the stack.
    let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(matches!(parse(&deep, &l), Err(Error::LimitExceeded { limit: "regex_nest_limit", .. })));
    assert!(parse(&"a*".repeat(100_000), &l).is_ok());
}

#[test]
fn anchors_at_the_ends_of_branches_bound_the_search() {
    let l = limits();
    let any_run = || Node::Repeat { item: Box::new(chars(&ranges::any())), min: 0, max: None };
    let lang = search_language("^(a|b)$", &l).unwrap();
    let alt = Node::Alt(vec![Node::Seq(vec![lit('a')]), Node::Seq(vec![lit('b')])]);
    assert_eq!(lang.root(), &Node::Seq(vec![Node::Seq(vec![alt])]));
    let lang = search_language("^a|b", &l).unwrap();
    let b = Node::Seq(vec![any_run(), Node::Seq(vec![lit('b')]), any_run()]);
    assert_eq!(lang.root(), &Node::Alt(vec![Node::Seq(vec![Node::Seq(vec![lit('a')]), any_run()]), b]));
    let m = |p: &str, s: &str| search_language(p, &l).unwrap().value_matcher(&l).unwrap().is_match(s);
    assert!(m("b", "abc") && !m("^b", "abc") && m("c$", "abc") && !m("a$", "abc"));
    assert!(m("(^a|^b)", "bc!") && !m("(^a|^b)", "xb"));
    // Anchors anywhere else are assertions where they stand.
    for p in ["(^a|^b)c", "^(a|b$)", "x(^a)"] {
        assert!(search_language(p, &l).unwrap().has_assertions(), "{p}");
    }
    // `\A`, `\Z` and `\z` as Python's `re` and PCRE read them (ECMAScript has none).
    assert!(m(r"\A[^\n]*\Z", "one line") && !m(r"\A[^\n]*\Z", "two\nlines") && !m(r"x\z", "x\n") && m(r"a|\Ab", "bc"));
    assert!(m("(^a|^b)c", "bc!") && !m("(^a|^b)c", "xbc") && m("^(a|b$)", "ab") && !m("^(a|b$)", "bc"));
    assert!(!m("x(^a)", "xa") && !m("a^", "a") && m("a$|^b", "ba") && m("a$|^b", "ca") && !m("a$|^b", "cb"));
    assert!(!m("[^\\s\\S]", "") && m("", "anything"));
    assert!(m("^\\u{1F600}+$", "😀😀") && !m("^\\u{1F600}+$", "😀a"));
    assert!(m("^\\d{3}-\\d{4}$", "555-1234") && !m("^\\d{3}-\\d{4}$", "555-12345") && !m("^\\d$", "٣"));
    let full = full_language("a|bc", &l).unwrap().value_matcher(&l).unwrap();
    assert!(full.is_match("bc") && !full.is_match("abc"));
}

#[test]
fn unanchored_branches_share_their_ends() {
    // Thirty units a string may contain anywhere (a CSS length pattern): one `.*(…).*`,
    // a DFA of a few states per unit; as thirty `.*u.*` branches the subset construction
    // kept which ones had matched.
    let l = limits();
    let units: Vec<String> = (0..30).map(|i| format!("{}{}", (b'a' + i / 6) as char, (b'a' + i % 6) as char)).collect();
    let pattern = units.join("|");
    let lang = search_language(&pattern, &l).unwrap();
    let Node::Seq(items) = lang.root() else { panic!("{:?}", lang.root()) };
    assert_eq!(items.len(), 3);
    let d = dfa(&lang.json_hir()).unwrap();
    assert!(d.num_states() < 400, "{} states", d.num_states());
    assert!(d.matches(b"x-ab-y") && d.matches(b"ee") && !d.matches(b"a-b") && !d.matches(b"ag"));
    // Anchored alike, grouped alike; the language is the union of the branches.
    let m = |p: &str, s: &str| search_language(p, &l).unwrap().value_matcher(&l).unwrap().is_match(s);
    for (s, want) in [("xay", true), ("bz", true), ("zb", false), ("zc", true), ("cz", false), ("d", true), ("xdx", false)] {
        assert_eq!(m("a|^b|c$|^d$|a", s), want, "{s}");
    }
}

#[test]
fn json_characters_have_their_canonical_encoding_only() {
    let one = |c: char| json_char_hir(&normalize([(c as u32, c as u32)]));
    let cases: &[(char, &str, &[&str])] = &[
        ('"', "\\\"", &["\"", "\\u0022"]),
        ('\\', "\\\\", &["\\", "\\u005c"]),
        ('\n', "\\n", &["\n", "\\u000a"]),
        ('\x08', "\\b", &["\x08", "\\u0008"]),
        ('\x01', "\\u0001", &["\x01", "\\u0001 ", "\\U0001"]),
        ('\x1f', "\\u001f", &["\\u001F", "\x1f"]),
        ('/', "/", &["\\/"]),
        ('\x7f', "\x7f", &["\\u007f"]),
        ('é', "é", &["\\u00e9"]),
        ('😀', "😀", &["\\ud83d\\ude00", "\\u{1f600}"]),
    ];
    for &(c, yes, nos) in cases {
        assert!(matches(&one(c), yes), "{c:?} as {yes:?}");
        for no in nos {
            assert!(!matches(&one(c), no), "{c:?} as {no:?}");
        }
    }
    // A class: the raw part and the escapes together.
    let set = json_char_hir(&normalize([(0, 0x22)]));
    for s in ["\\u0000", "\\u000b", "\\u0019", "\\t", "\\r", "\\f", " ", "!", "\\\""] {
        assert!(matches(&set, s), "{s}");
    }
    assert!(!matches(&set, "\\u0009") && !matches(&set, "\\\\") && !matches(&set, "#"));
    // Surrogates are cut: a class of them alone has no character.
    assert!(dfa(&json_char_hir(&normalize([(0xD800, 0xDFFF)]))).is_none());
    assert!(dfa(&value_char_hir(&[])).is_none());
    let any = json_any_char_hir();
    assert!(["a", "\\\"", "\\u001e", "\u{10FFFF}", "\u{2028}"].iter().all(|s| matches(&any, s)));
    assert!(["\\u0041", "\\/", "ab", "", "\\x"].iter().all(|s| !matches(&any, s)));
}

#[test]
fn a_pattern_over_the_json_encoding() {
    let l = limits();
    let lang = search_language(r#"^"[^"]*"\\$"#, &l).unwrap();
    let hir = lang.json_hir();
    assert!(matches(&hir, r#"\"a\\b\"\\"#));
    assert!(!matches(&hir, r#"\"a\"b\"\\"#) && !matches(&hir, r#""a"\"#));
    assert!(lang.value_matcher(&l).unwrap().is_match(r#""a\b"\"#));
    // Lengths count characters, each one encoded unit.
    let two = full_language(r"[\s\S]{2}", &l).unwrap().json_hir();
    assert!(matches(&two, "\\n\\u0000") && matches(&two, "😀\\\"") && !matches(&two, "\\u0000"));
}

/// Patterns with assertions and a JavaScript engine's verdicts (`RegExp.test`), written by
/// `tools/gen_ecma_search_cases.py`: the first line is the strings, then
/// `[pattern, "0110..."]` per line.
const SEARCH_CASES: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus/ecma_search.jsonl"));

#[test]
fn assertions_find_matches_as_a_javascript_engine_does() {
    let l = limits();
    let mut lines = SEARCH_CASES.lines();
    let strings: Vec<String> = serde_json::from_str(lines.next().unwrap()).unwrap();
    let mut with_assertions = 0;
    for line in lines {
        let (pattern, verdicts): (String, String) = serde_json::from_str(line).unwrap();
        let language = search_language(&pattern, &l).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
        with_assertions += usize::from(language.has_assertions());
        let m = language.value_matcher(&l).unwrap();
        for (s, v) in strings.iter().zip(verdicts.chars()) {
            assert_eq!(m.is_match(s), v == '1', "{pattern:?} on {s:?}");
        }
    }
    assert!(with_assertions > 150, "{with_assertions}");
}
