use super::build::{byte_sequences, dense_dfa};
use super::*;

fn matches(pattern: &str, s: &str) -> bool {
    compile(pattern, &Limits::default()).unwrap().matches(s.as_bytes())
}

#[test]
fn basic_fullmatch() {
    assert!(matches(r"\d{4}", "2024"));
    assert!(!matches(r"\d{4}", "202"));
    assert!(!matches(r"\d{4}", "20245"));
    assert!(matches(r"[Yy]es|[Nn]o", "no"));
    assert!(matches(r"^abc$", "abc"));
    assert!(matches(r"a{,2}", "aa"));
    assert!(!matches(r"a{,2}", "aaa"));
    assert!(matches(r"a{", "a{"));
    assert!(matches(r"[[]", "["));
    assert!(matches(r"[&&]+", "&&&"));
    assert!(matches(r"\<x\>", "<x>"));
    assert!(matches(r"x\Z", "x"));
    assert!(matches(r"a(?#comment)b", "ab"));
    assert!(matches(r"\0", "\0"));
    assert!(matches(r"\101", "A"));
}

#[test]
fn python_classes() {
    assert!(matches(r"\d", "٣")); // Arabic-Indic digit
    assert!(!matches(r"(?a)\d", "٣"));
    assert!(matches(r"\w+", "héllo_1"));
    assert!(matches(r"\s", "\u{1f}"));
    assert!(!matches(r"\S", "\u{1f}"));
    assert!(matches(r"[^\W\d]\w*", "_x1"));
    assert!(!matches(r"[^\W\d]\w*", "1x"));
}

#[test]
fn utf8_dot() {
    assert!(matches(r".", "é"));
    assert!(matches(r".", "😀"));
    assert!(!matches(r".", "\n"));
    assert!(matches(r"(?s).", "\n"));
    let dfa = compile(".", &Limits::default()).unwrap();
    assert!(!dfa.matches(&[0xff]));
}

fn err(pattern: &str) -> Error {
    compile(pattern, &Limits::default()).unwrap_err()
}

#[test]
fn unsupported_constructs_are_named() {
    let cases = [
        (r"(a)\1", "backreference", 3),
        (r"a*+", "possessive", 1),
        (r"(?>a)", "atomic", 0),
        (r"(?P<x>a)(?P=x)", "named backreference", 8),
        (r"(a)(?(1)a|b)", "conditional", 3),
        // What would look past a look-behind's own text.
        (r"x(?<=a(?=b))", "inside a look-behind", 6),
        (r"(?<!a$)b", "inside a look-behind", 5),
        (r"(?<=a\b)b", "inside a look-behind", 5),
        (r"\N{DIGIT ONE}", "named character", 0),
        (r"[a\N{DIGIT ONE}-9]", "named character", 2),
    ];
    for (p, what, pos) in cases {
        match err(p) {
            Error::UnsupportedRegex { construct, position, .. } => {
                assert!(construct.contains(what), "{p}: {construct}");
                assert_eq!(position, pos, "{p}");
            }
            e => panic!("{p}: unexpected {e:?}"),
        }
    }
}

#[test]
fn syntax_errors_have_positions() {
    match err(r"ab(c") {
        Error::RegexSyntax { position, .. } => assert_eq!(position, 2),
        e => panic!("{e:?}"),
    }
    match err(r"abc[de") {
        Error::RegexSyntax { position, .. } => assert_eq!(position, 3),
        e => panic!("{e:?}"),
    }
}

#[test]
fn assertions_build_whole_patterns_and_stay_refused_in_pieces() {
    let l = Limits::default();
    // (A pattern of no string at all is an error: none matches.)
    let m = |p: &str, s: &str| compile(p, &l).is_ok_and(|d| d.matches(s.as_bytes()));
    assert!(m(r"a(?=b)b", "ab") && !m(r"a(?!b)[bc]", "ab") && m(r"a(?!b)[bc]", "ac"));
    assert!(m(r"(?<=a)b|ab", "ab") && m(r"\w+\b.*", "ab c") && !m(r"ab\bc", "abc") && m(r"a\Bb", "ab"));
    // `$` before a final newline; under (?m) before any; `^` under (?m) after any.
    assert!(m(r"a$\n", "a\n") && !m(r"a$\nb", "a\nb") && m(r"(?m)a$\nb", "a\nb") && m(r"(?m)a\n^b", "a\nb"));
    assert!(!m(r"a\n^b", "a\nb") && !m(r"a\Z\n", "a\n"));
    // A grammar's piece keeps refusing them: its look-ahead would see past it.
    assert!(matches!(parse(r"a(?=b)", &l, None), Err(Error::UnsupportedRegex { position: 1, .. })));
}

/// Python's answers (`re.fullmatch`, CPython 3.11) on the spots where its syntax differs
/// from other dialects: braces, classes, scoped flags, case folding, verbose mode.
#[test]
fn python_dialect_matches_re() {
    let cases: &[(&str, &[(&str, bool)])] = &[
        // `{` that is not a repetition is a literal; `{,}` is `{0,}`.
        ("a{,}", &[("", true), ("aaaa", true), ("a{,}", false)]),
        ("a{,2}", &[("aa", true), ("aaa", false)]),
        ("a{ 1}", &[("a{ 1}", true), ("a", false)]),
        ("a{x}", &[("a{x}", true)]),
        ("a{1,2", &[("a{1,2", true)]),
        ("{}", &[("{}", true)]),
        ("a{", &[("a{", true)]),
        // `]` first in a class is a literal and can start a range.
        ("[]-a]", &[("]", true), ("^", true), ("a", true), ("b", false), ("-", false)]),
        ("[^]-a]", &[("]", false), ("_", false), ("b", true)]),
        ("[]]", &[("]", true)]),
        ("[]-]", &[("]", true), ("-", true), ("^", false)]),
        // `--`, `&&`, `~~`, `[` and POSIX-like names are plain characters in a class.
        ("[--A]", &[("5", true), ("-", true), ("A", true), ("B", false)]),
        ("[^--A-Z]", &[("5", false), ("B", true), ("a", true)]),
        ("[a&&b]", &[("&", true), ("a", true)]),
        ("[a~~b]", &[("~", true)]),
        ("[[:alpha:]]", &[("a", false), ("a]", true), (":]", true)]),
        ("[[]", &[("[", true)]),
        // Scoped flags apply inside their group only.
        (r"(?a:x)|\S", &[("\x1c", false), ("x", true), ("é", true)]),
        (r"(?a:\w)|\d", &[("é", false), ("٣", true), ("a", true)]),
        ("(?i:A)a", &[("aa", true), ("aA", false), ("Aa", true)]),
        ("(?x:a b)c d", &[("abc d", true), ("abcd", false)]),
        // Case folding: Python's, ASCII-only under (?a).
        ("(?ai)s", &[("S", true), ("ſ", false)]),
        ("(?ai)k", &[("K", true), ("\u{212a}", false)]),
        ("(?ai)[^k]", &[("\u{212a}", true), ("K", false)]),
        ("(?i)s", &[("ſ", true), ("S", true)]),
        ("(?i)k", &[("\u{212a}", true)]),
        ("(?i)[a-z]", &[("\u{212a}", true), ("ſ", true), ("İ", true), ("ı", true)]),
        ("(?i)i", &[("İ", true), ("ı", true), ("I", true)]),
        // A set tests the lower-cased character against members outside the BMP as
        // written; a single character, or an alternation of them, becomes such a set.
        ("(?i)[\u{10400}x]", &[("\u{10400}", false), ("\u{10428}", false), ("X", true)]),
        ("(?i)\u{10400}|x", &[("\u{10400}", false), ("\u{10428}", false)]),
        ("(?i)\u{10400}", &[("\u{10428}", true)]),
        // Verbose mode skips only Python's whitespace, and not inside classes.
        ("(?x)a b#c", &[("ab", true), ("a b", false)]),
        ("(?x)[ #]", &[(" ", true), ("#", true)]),
        ("(?x)a\u{a0}b", &[("a\u{a0}b", true), ("ab", false)]),
        // Fullmatch: `$` at the end does not let a final newline through.
        ("a$", &[("a", true), ("a\n", false)]),
        (r"\0", &[("\0", true)]),
        (r"\101", &[("A", true)]),
        (r"[\b]", &[("\u{8}", true)]),
        ("a(?#x)*", &[("aaa", true)]),
    ];
    for (pattern, strings) in cases {
        let dfa = compile(pattern, &Limits::default()).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        for (s, expected) in *strings {
            assert_eq!(dfa.matches(s.as_bytes()), *expected, "/{pattern}/ on {s:?}");
        }
    }
}

/// What `re.compile` refuses is a syntax error at `re`'s position (None: `re` gives none).
#[test]
fn refusals_are_syntax_errors_at_re_positions() {
    let cases: &[(&str, Option<usize>)] = &[
        ("a???", Some(3)),
        ("a+?{1,3}", Some(3)),
        ("a{1,3}?{1,3}", Some(7)),
        ("a**", Some(2)),
        ("*a", Some(0)),
        ("^*", Some(1)),
        (r"[--\d]", Some(1)),
        ("[z-a]", Some(1)),
        (r"[\d-z]", Some(1)),
        (r"\q", Some(0)),
        (r"\p{L}", Some(0)),
        (r"\P{L}", Some(0)),
        ("(a", Some(0)),
        ("[a", Some(0)),
        ("[]", Some(0)),
        ("[^]", Some(0)),
        ("(?z)", Some(1)),
        ("(?P<1>a)", Some(4)),
        ("(?<=a|bc)d", None),
        ("a|(?i)b", Some(2)),
        ("(?au)a", Some(4)),
        ("(?-a:a)", Some(4)),
        ("(?L)a", Some(3)),
        ("(?i", Some(3)),
        ("(?(2)a|b)", Some(3)),
        ("(?P=x)", Some(4)),
        ("(?P<a>x)(?P<a>y)", Some(12)),
        (")", Some(0)),
        (r"\400", Some(0)),
        (r"\12", Some(1)),
        (r"\x4", Some(0)),
        ("a{2,1}", Some(2)),
        ("(?#", Some(0)),
        ("\\", Some(0)),
        ("a{99999999999}", None),
        ("(?a)(?u)a", None),
        ("(?t)a*", None),
        // After an unsupported construct, still a syntax error: re refuses the pattern.
        (r"(a)\1(", Some(5)),
        ("(?=a)[", Some(5)),
    ];
    for (pattern, position) in cases {
        match compile(pattern, &Limits::default()) {
            Err(Error::RegexSyntax { position: p, .. }) => {
                if let Some(want) = position {
                    assert_eq!(p, *want, "{pattern}");
                }
            }
            other => panic!("{pattern}: {other:?}"),
        }
    }
    // `\p` says why.
    let message = err(r"\p{L}").to_string();
    assert!(message.contains("no \\p"), "{message}");
}

/// Big counted repetitions are built as counters (not by the regex engine): the
/// language must be the same, including when the repeated piece revisits its start
/// state (`a*b`) or is not prefix-free (`a|ab`, built by subset construction instead).
#[test]
fn counted_repetitions_are_exact() {
    type Case<'a> = (&'a str, &'a dyn Fn(&str) -> bool);
    let cases: &[Case] = &[
        (r"[aé]{16,20}", &|s: &str| s.chars().all(|c| c == 'a' || c == 'é') && (16..=20).contains(&s.chars().count())),
        (r"(?:a*b){16,18}", &|s: &str| {
            s.ends_with('b') && s.chars().all(|c| c == 'a' || c == 'b') && (16..=18).contains(&s.matches('b').count())
        }),
        (r"x(?:[aé]){17,}y", &|s: &str| {
            s.len() >= 2
                && s.starts_with('x')
                && s.ends_with('y')
                && s[1..s.len() - 1].chars().all(|c| c == 'a' || c == 'é')
                && s[1..s.len() - 1].chars().count() >= 17
        }),
        (r"(?:a|ab){16,17}", &|s: &str| {
            // Tokens "a" / "ab": the count of units is the number of a's.
            let ok = s.chars().all(|c| c == 'a' || c == 'b') && !s.starts_with('b') && !s.contains("bb");
            ok && (16..=17).contains(&s.matches('a').count())
        }),
        (r"(?:a{0,20}|b)c", &|s: &str| {
            let body = s.strip_suffix('c');
            body.is_some_and(|b| b == "b" || (b.len() <= 20 && b.chars().all(|c| c == 'a')))
        }),
    ];
    let alphabet = ["a", "é", "b", "x", "y", "c"];
    for (pattern, expected) in cases {
        let dfa = compile(pattern, &Limits::default()).unwrap();
        // Strings of each length around the bounds, from a few generators.
        for n in 0..24usize {
            for k in 0..alphabet.len() {
                for shape in 0..4 {
                    let mut s = String::new();
                    match shape {
                        0 => (0..n).for_each(|_| s.push_str(alphabet[k])),
                        1 => (0..n).for_each(|i| s.push_str(alphabet[(k + i) % 3])),
                        2 => {
                            s.push('x');
                            (0..n).for_each(|i| s.push_str(if i % 2 == 0 { "a" } else { "é" }));
                            s.push('y');
                        }
                        _ => {
                            (0..n).for_each(|i| s.push_str(if i % 3 == 2 { "b" } else { "a" }));
                            s.push_str(alphabet[k]);
                        }
                    }
                    assert_eq!(dfa.matches(s.as_bytes()), expected(&s), "/{pattern}/ on {s:?}");
                }
            }
        }
    }
    // A lone continuation byte never matches, at any count.
    let dfa = compile(r"[aé]{16,20}", &Limits::default()).unwrap();
    let mut bytes = "a".repeat(16).into_bytes();
    bytes.push(0xa9);
    assert!(!dfa.matches(&bytes));
}

/// The counter's size is checked before it is built: a count written out is bounded by
/// `max_dfa_states`, one kept as a counted region by its block of rows (and by the states
/// a `Dfa` can number), whatever its count.
#[test]
fn counted_repetition_limit() {
    let limits = Limits { max_dfa_states: 1000, ..Limits::default() };
    let long = compile(r"[aé]{5000}", &limits).unwrap();
    assert!(long.has_counted_region() && long.num_states() > 10_000 && long.memory_bytes() < 4096);
    assert!(long.matches("é".repeat(5000).as_bytes()) && !long.matches("é".repeat(4999).as_bytes()));
    assert!(compile(r"[aé]{300}", &limits).is_ok());
    for p in [r"[aé]{1000000000}", r"(?:[aé]{5000}){5000}"] {
        match compile(p, &limits) {
            Err(Error::LimitExceeded { limit: "max_dfa_states", .. }) => {}
            other => panic!("{p}: {other:?}"),
        }
    }
}

#[test]
fn dfa_size_limit() {
    let limits = Limits { dfa_size_limit: 1 << 16, ..Limits::default() };
    match compile(r"(a|b)*a(a|b){20}", &limits) {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "dfa_size_limit"),
        r => panic!("{r:?}"),
    }
}

#[test]
fn empty_language_is_an_error() {
    assert!(matches!(err(r"[^\s\S]"), Error::EmptyLanguage { .. }));
}

#[test]
fn pieces_agree_with_the_regex_engine_alone() {
    let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
    let patterns = [
        "\"Always\"|\"IfNotPresent\"|\"Never\"".to_string(),
        "[a-zé-ü]+|[0-9]{2,3}".to_string(),
        format!("\"{json_char}*\""),
        format!("{json_char}{{0,15}}"),
        format!("{json_char}{{1,63}}x"),
        format!(",\"name\":\"{json_char}*\"(?:,\"value\":\"{json_char}*\"|,\"n\":(?:0|[1-9][0-9]*))?"),
        format!("(?:\"a\":\"{json_char}*\"|\"b\":[0-9]+)(?:,\"{json_char}*\":\"{json_char}*\")*"),
        "(?:[0-9A-Fa-f]{1,4}:){6}[0-9A-Fa-f]{1,4}|::(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}".to_string(),
        "(?:ab|a)(?:bc|c)".to_string(),
        // Repeated finite units, built from the unit's DFA: prefix-free (counted) and not.
        format!("x{json_char}+y"),
        format!("{json_char}{{2,}}"),
        "(?:abcdefghijklmnopqrstuvwxyz0123456789|abcdefghijklmnopqrstuvwxyz0123456789ab)*".to_string(),
        // Long literals next to a repetition are pieces of their own, and `x|` is `x`
        // with an accepting start (optional object properties).
        r#"(?:,"tolerationSeconds":(?:0|[1-9][0-9]*)(?:\.0+)?)|"#.to_string(),
        r#"|,"sizeLimit":"[0-9]+(?:\.[0-9]+)?(?:m|Ki|Mi)?"(?:,"medium":"(?:Memory|)")?"#.to_string(),
        "abcdefghij(?:x|y)klmnopqrst".to_string(),
        "(?:abcdefgh[0-9])+|abcdefghij[a-c]*abcdefghij".to_string(),
        "(?:xabcdefghij[0-9]*)+|".to_string(),
    ];
    let limits = Limits::default();
    let mut shared = PieceCache::default();
    for p in &patterns {
        let parsed = parse_whole(p, &limits, None).unwrap();
        let whole = dense_dfa(parsed.hir().unwrap(), p, &limits).unwrap();
        let alone = build_dfa(&parsed, &limits).unwrap();
        // Twice through one cache: the second build reuses the first one's pieces.
        for _ in 0..2 {
            let cached = build_dfa_cached(&parsed, &limits, &mut shared).unwrap();
            assert_eq!(whole.difference(&cached), None, "{p}");
        }
        assert_eq!(whole.difference(&alone), None, "{p}");
    }
    assert!(!shared.built.is_empty());
}

/// Plain literals skip the parser; they must mean what the parser makes of them, and
/// anything with regex syntax must still take the full parse.
#[test]
fn plain_literals_take_the_fast_path_with_the_same_language() {
    let limits = Limits::default();
    for p in [r#""containerPort""#, r#""ephemeral\-storage""#, r#"a\.b\+c\\d"#, "é😀 x", ",\"port\":", r"\<x\>"] {
        let lit = plain_literal(p).unwrap_or_else(|| panic!("{p} is a plain literal"));
        let fast = compile_cached(p, &limits, None, &mut PieceCache::default()).unwrap();
        let full = compile(p, &limits).unwrap();
        assert_eq!(fast.num_states(), full.num_states(), "{p}");
        assert!(fast.matches(&lit) && full.matches(&lit), "{p}");
        // Every prefix, and the literal with a byte changed or added, read alike.
        for cut in 0..lit.len() {
            assert_eq!(fast.matches(&lit[..cut]), full.matches(&lit[..cut]), "{p} prefix {cut}");
            let mut changed = lit.clone();
            changed[cut] ^= 1;
            assert!(!fast.matches(&changed) && !full.matches(&changed), "{p} changed at {cut}");
        }
        let mut longer = lit.clone();
        longer.push(lit[0]);
        assert!(!fast.matches(&longer), "{p}");
    }
    for p in ["", "a.b", "a|b", "ab*", r"\d", r"\n", "(?i)ab", "a{2}", "[a]", "a#b", r"\1"] {
        assert!(plain_literal(p).is_none(), "{p} is not a plain literal");
    }
    // Over max_pattern_bytes the fast path is not taken: the limit error still comes.
    let small = Limits { max_pattern_bytes: 4, ..Limits::default() };
    let r = compile_cached("abcdef", &small, None, &mut PieceCache::default());
    assert!(matches!(r, Err(Error::LimitExceeded { limit: "max_pattern_bytes", .. })), "{r:?}");
}

/// Long counted repetitions keep their rows unstored (see `dfa::Counted`), alone, between
/// other parts, before a nullable part, inside unions and nested counts, and where a
/// junction is not deterministic (subset construction reads the region): every one
/// has the regex engine's language.
#[test]
fn counted_regions_agree_with_the_regex_engine() {
    let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
    let unit = r"(?:[a-c]|\\[nt])";
    // (pattern, how many times smaller than written out the result is: 0 = no region)
    let cases = [
        (format!("\"{unit}{{0,1100}}\""), 20),
        (format!("x{unit}{{3,1100}}y"), 20),
        (format!("{unit}{{1100,}}z"), 20),
        (format!("{unit}{{0,1100}}(?:z|)"), 20),
        (format!("\"{json_char}{{1,160}}\""), 20),
        // Two regions: one is kept, the other written out.
        (format!("\"{unit}{{0,1100}}\",\"{unit}{{0,1100}}\""), 1),
        (format!("{unit}{{1100}}"), 20),
        ("q(?:ab|c){0,1200}c?".to_string(), 0),
        (format!("{unit}{{0,1100}}|zz"), 0),
        (format!("{unit}{{0,1100}}|"), 0),
        ("(?:(?:ab|c){0,1100}d){0,3}".to_string(), 0),
    ];
    let limits = Limits::default();
    for (p, smaller) in &cases {
        let parsed = parse_whole(p, &limits, None).unwrap();
        let whole = dense_dfa(parsed.hir().unwrap(), p, &limits).unwrap();
        let built = build_dfa(&parsed, &limits).unwrap();
        assert_eq!(whole.difference(&built), None, "{p}");
        assert_eq!(built.has_counted_region(), *smaller > 0, "{p}");
        assert_eq!(built.num_states(), built.stored().num_states(), "{p}");
        if *smaller > 0 {
            assert!(built.memory_bytes() * smaller < built.stored().memory_bytes(), "{p}: the rows are stored");
        }
        // State by state, the computed rows are those written out.
        let stored = built.stored();
        for s in 0..built.num_states() as u32 {
            assert_eq!(built.is_accepting(s), stored.is_accepting(s), "{p}: state {s}");
            for b in 0..=255u8 {
                assert_eq!(built.next(s, b), stored.next(s, b), "{p}: state {s}, byte {b}");
            }
        }
        // A state and its stand-in read every string of up to `depth` bytes alike.
        let mut shared = 0;
        for s in (1..built.num_states() as u32).step_by(11) {
            for depth in [1usize, 4, 40] {
                let e = built.equivalent_within(s, depth);
                shared += (e != s) as usize;
                built.assert_reads_alike(s, e, depth, p);
            }
        }
        assert_eq!(shared > 0, *smaller > 0, "{p}: states share a stand-in only in a counted region");
    }
}

/// Finite pieces built by corral directly are the regex engine's language, minimal.
#[test]
fn byte_sequence_pieces_are_exact_and_minimal() {
    let patterns = [
        r#"[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f])"#,
        "null|true|false|nul",
        "abc|abd|xbc|xbd",
        "[a-zé-ü]|[0-9][0-9]",
        "(?:)",
    ];
    let limits = Limits::default();
    for p in patterns {
        let parsed = parse_whole(p, &limits, None).unwrap();
        let seqs = byte_sequences(parsed.hir().unwrap()).expect(p);
        let direct = Dfa::from_byte_sequences(&seqs, &limits, p).unwrap();
        assert_eq!(dense_dfa(parsed.hir().unwrap(), p, &limits).unwrap().difference(&direct), None, "{p}");
        assert_eq!(direct.minimized().num_states(), direct.num_states(), "{p}: not minimal");
    }
}

#[test]
fn a_large_union_of_literals_is_exact() {
    // More literals than one piece of byte sequences holds: built in one pass all the same.
    let words: Vec<String> = (0..700).map(|i| format!("key{i}_{}", "x".repeat(i % 7))).collect();
    let hir = regex_syntax::hir::Hir::alternation(words.iter().map(|w| regex_syntax::hir::Hir::literal(w.as_bytes())).collect());
    let dfa = compile_hir(&hir, "keys", &Limits::default()).unwrap();
    for w in &words {
        assert!(dfa.matches(w.as_bytes()), "{w}");
        assert!(!dfa.matches(format!("{w}y").as_bytes()), "{w}y");
    }
    assert!(!dfa.matches(b"key") && !dfa.matches(b"key700_") && !dfa.matches(b""));
}
