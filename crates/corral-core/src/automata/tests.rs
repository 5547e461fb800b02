use super::classes::refine;
use super::*;
use crate::frontend::regex::compile;
use crate::util::bytes::set_bytes;

/// Every byte string over `alphabet` up to `max_len` bytes.
fn strings(alphabet: &[&[u8]], max_len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut frontier = vec![Vec::new()];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for s in &frontier {
            for piece in alphabet {
                let mut t: Vec<u8> = s.clone();
                t.extend_from_slice(piece);
                if t.len() <= max_len {
                    out.push(t.clone());
                    next.push(t);
                }
            }
        }
        frontier = next;
    }
    out
}

/// Pieces that exercise ASCII, multi-byte characters and malformed UTF-8.
const PIECES: &[&[u8]] = &[b"a", b"b", b"\n", "\u{e9}".as_bytes(), &[0xc3], &[0xa9], &[0xff]];

fn dfa(pattern: &str) -> Dfa {
    compile(pattern, &Limits::default()).unwrap()
}

#[test]
fn utf8_any_is_exactly_well_formed_utf8() {
    let any = Dfa::utf8_any();
    for s in strings(PIECES, 4) {
        assert_eq!(any.matches(&s), std::str::from_utf8(&s).is_ok(), "{s:?}");
    }
    // Every two-byte string, and the edges of the multi-byte ranges.
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            let s = [a, b];
            assert_eq!(any.matches(&s), std::str::from_utf8(&s).is_ok(), "{s:?}");
        }
    }
    for c in ['\u{7ff}', '\u{800}', '\u{d7ff}', '\u{e000}', '\u{ffff}', '\u{10000}', '\u{10ffff}'] {
        assert!(any.matches(c.to_string().as_bytes()), "{c:?}");
    }
    for bad in [&[0xed, 0xa0, 0x80][..], &[0xf4, 0x90, 0x80, 0x80], &[0xe0, 0x80, 0x80], &[0xf0, 0x80, 0x80, 0x80]] {
        assert!(!any.matches(bad), "{bad:?}");
    }
}

#[test]
fn intersect_and_complement_agree_with_their_definition() {
    let limits = Limits::default();
    let pairs = [("[ab]*", "(?s:.)*a"), ("a*b?", "[^b]*"), ("(?s:.)+", "\u{e9}|a|\n"), ("(ab)*", "a(ba)*b|")];
    for (p, q) in pairs {
        let (a, b) = (dfa(p), dfa(q));
        let both = a.intersect(&b, &limits, "test").unwrap();
        let not_a = a.complement(&limits, "test").unwrap();
        for s in strings(PIECES, 4) {
            assert_eq!(both.matches(&s), a.matches(&s) && b.matches(&s), "{p} & {q}: {s:?}");
            let valid = std::str::from_utf8(&s).is_ok();
            assert_eq!(not_a.matches(&s), valid && !a.matches(&s), "not {p}: {s:?}");
        }
        // Pruned: every live state can still reach a match.
        assert!((1..not_a.num_states() as u32).all(|st| (0..=255u8).any(|x| not_a.next(st, x) != DEAD) || not_a.is_accepting(st)));
    }
    assert!(matches!(dfa("a").intersect(&dfa("b"), &limits, "t"), Err(Error::EmptyLanguage { .. })));
    assert!(matches!(dfa("(?s:.)*").complement(&limits, "t"), Err(Error::EmptyLanguage { .. })));
    // Complementing twice gives the language back (on well-formed input).
    let back = dfa("a+|\u{e9}").complement(&limits, "t").unwrap().complement(&limits, "t").unwrap();
    for s in strings(PIECES, 3) {
        assert_eq!(back.matches(&s), dfa("a+|\u{e9}").matches(&s), "{s:?}");
    }
}

/// The literal chain is exactly what the general finite-language construction builds
/// for one string (same classes, numbering and rows), so the two are interchangeable.
#[test]
fn literal_chain_equals_the_general_construction() {
    let limits = Limits::default();
    let all: Vec<u8> = (0..=255).collect();
    let cases: Vec<Vec<u8>> = vec![
        b"\"containerPort\"".to_vec(),
        b"aaaa".to_vec(),
        vec![0, 1, 0, 255],
        "é😀".as_bytes().to_vec(),
        b"x".to_vec(),
        all.clone(),
        all.iter().rev().copied().collect(),
    ];
    for bytes in &cases {
        let fast = Dfa::literal(bytes, &limits, "t").unwrap();
        let seq: Vec<(u8, u8)> = bytes.iter().map(|&b| (b, b)).collect();
        let general = Dfa::from_byte_sequences(&[seq], &limits, "t").unwrap();
        assert_eq!(fast.class_of, general.class_of, "{bytes:?}");
        assert_eq!(fast.stride, general.stride, "{bytes:?}");
        assert_eq!(fast.table, general.table, "{bytes:?}");
        assert_eq!(fast.accepting, general.accepting, "{bytes:?}");
    }
    let small = Limits { max_dfa_states: 5, ..Limits::default() };
    assert!(Dfa::literal(b"abc", &small, "t").is_ok());
    assert!(matches!(Dfa::literal(b"abcd", &small, "t"), Err(Error::LimitExceeded { limit: "max_dfa_states", .. })));
}

/// A counted region's block and row by multiplication are those of a division, up
/// to the largest state id.
#[test]
fn counted_block_row_is_exact() {
    for per in (1..=70).chain([255, 1000, 65_537, u32::MAX / 3]) {
        let c = Counted::new(per, 1, true, 0, Vec::new(), Vec::new(), true);
        let edges = [0, 1, per - 1, per, per + 1, u32::MAX / 2, u32::MAX - per, u32::MAX - 1, u32::MAX];
        let steps = (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761));
        for rel in edges.into_iter().chain(steps) {
            assert_eq!(c.block_row(rel), (rel / per, rel % per), "{rel} / {per}");
        }
    }
}

#[test]
fn optional_by_an_accepting_start() {
    let plus = dfa("(?:ab)+").or_empty().expect("the start of (ab)+ is not re-entered");
    assert!(plus.difference(&dfa("(?:ab)*")).is_none());
    assert!(dfa("a*b").or_empty().is_none(), "a* re-enters the start");
    assert!(dfa("(?:ab)*").or_empty().is_none());
    assert!(Dfa::from_expr(&DfaExpr::Empty, &Limits::default(), "").unwrap().is_only_empty());
    assert!(!dfa("a?").is_only_empty() && !dfa("a").is_only_empty());
}

#[test]
fn bytes_round_trip_and_malformed_bytes_are_refused() {
    // Two-byte entries, and four-byte ones past 65,536 states.
    for pattern in ["[a-c]x|y+", "(?:[0-9a-f]{2}:)*z", "[a-z]{70000}"] {
        let d = dfa(pattern);
        let bytes = d.to_bytes();
        let back = Dfa::from_bytes(&bytes).expect("round trip");
        // (A counted region is written out: the bytes hold every state.)
        let d = d.stored();
        assert_eq!((back.class_of, back.stride, &back.table, &back.accepting), (d.class_of, d.stride, &d.table, &d.accepting));
        assert_eq!(bytes[5], if d.num_states() > 1 << 16 { 4 } else { 2 }, "{pattern}");
    }
    let good = dfa("[a-c]x|y+").to_bytes();
    assert!(Dfa::from_bytes(&good[..good.len() - 1]).is_none(), "short table");
    assert!(Dfa::from_bytes(&[&good[..], &[0]].concat()).is_none(), "trailing byte");
    let mut bad = good.clone();
    bad[0] = b'X';
    assert!(Dfa::from_bytes(&bad).is_none(), "magic");
    let mut bad = good.clone();
    bad[12 + b'a' as usize] = 200; // a class id past the stride
    assert!(Dfa::from_bytes(&bad).is_none(), "class id");
    let mut bad = good.clone();
    let last = bad.len() - 2;
    bad[last..].copy_from_slice(&60_000u16.to_le_bytes()); // a target past the states
    assert!(Dfa::from_bytes(&bad).is_none(), "target");
    let mut bad = good.clone();
    bad[12 + 256] |= 1; // the dead state accepting
    assert!(Dfa::from_bytes(&bad).is_none(), "dead state");
}

/// The subset-free concatenation: taken only where the junction is deterministic, and
/// then the same language as the regex engine's.
#[test]
fn classes_are_the_coarsest() {
    // The regex engine splits [a-c] from [d-f]; both move alike, so they share a class.
    let d = dfa("[a-c]x|[d-f]x");
    assert_eq!(d.num_classes(), 3, "[a-f], x, everything else");
    let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-7bef]|1[0-9a-f]))"#;
    for p in ["[a-c]x|[d-f]x", "(?:ab|cd)*e", json_char, &format!("\"{json_char}{{0,40}}\"")] {
        let d = dfa(p);
        // No two classes move alike from every state...
        for a in 0..d.num_classes() {
            for b in a + 1..d.num_classes() {
                let apart = (0..d.num_states()).any(|s| d.table[s * d.stride + a] != d.table[s * d.stride + b]);
                assert!(apart, "{p}: classes {a} and {b} move alike");
            }
        }
        // Spread over one class per byte, then coarsened again: the same classes and
        // the same moves.
        let table: Vec<u32> =
            (0..d.num_states() as u32).flat_map(|s| (0..=255u8).map(move |b| (s, b))).map(|(s, b)| d.next(s, b)).collect();
        let mut class_of = [0u8; 256];
        for (b, c) in class_of.iter_mut().enumerate() {
            *c = b as u8;
        }
        let wide = Dfa { class_of, stride: 256, table, accepting: d.accepting.clone(), counted: None };
        let narrow = wide.with_coarsest_classes();
        assert_eq!(narrow.num_classes(), d.num_classes(), "{p}");
        for s in 0..d.num_states() as u32 {
            for b in 0..=255u8 {
                assert_eq!(narrow.next(s, b), d.next(s, b), "{p}: state {s}, byte {b}");
            }
        }
    }
}

#[test]
fn deterministic_concat() {
    let limits = Limits::default();
    let cases = [("\"", "[^\"]*", true), ("[^\"]*", "\"", true), ("a+", "b*", true), ("a+", "a", false), ("a|ab", "c", true)];
    for (p, q, deterministic) in cases {
        let got = dfa(p).concat(&dfa(q), &limits, "t").unwrap();
        assert_eq!(got.is_some(), deterministic, "{p} . {q}");
        // Through from_expr: either path, the regex engine's language.
        let (a, b) = (dfa(p), dfa(q));
        let via_expr =
            Dfa::from_expr(&DfaExpr::Seq(vec![DfaExpr::Leaf(&a), DfaExpr::Empty, DfaExpr::Leaf(&b)]), &limits, "t").unwrap();
        let want = dfa(&format!("(?:{p})(?:{q})"));
        for s in strings(&[b"a", b"b", b"c", b"\"", "\u{e9}".as_bytes(), &[0xc3]], 4) {
            assert_eq!(via_expr.matches(&s), want.matches(&s), "{p} . {q}: {s:?}");
            if let Some(d) = &got {
                assert_eq!(d.matches(&s), want.matches(&s), "{p} . {q}: {s:?}");
            }
        }
    }
    // Three parts, the middle one nullable: deterministic only if "b" cannot both
    // start the middle part and the last one.
    for (parts, deterministic) in
        [(["a+", "b?", "c"], true), (["a+", "b?", "b"], false), (["a*", "b*", "c*"], true), (["(?:)", "a", "(?:)"], true)]
    {
        let dfas: Vec<Dfa> = parts.iter().map(|p| dfa(p)).collect();
        let refs: Vec<&Dfa> = dfas.iter().collect();
        let got = Dfa::concat_all(&refs, &limits, "t").unwrap();
        assert_eq!(got.is_some(), deterministic, "{parts:?}");
        let want = dfa(&parts.map(|p| format!("(?:{p})")).concat());
        let via_expr = Dfa::from_expr(&DfaExpr::Seq(refs.iter().map(|d| DfaExpr::Leaf(d)).collect()), &limits, "t").unwrap();
        for s in strings(&[b"a", b"b", b"c", &[0xc3]], 5) {
            assert_eq!(via_expr.matches(&s), want.matches(&s), "{parts:?}: {s:?}");
            if let Some(d) = &got {
                assert_eq!(d.matches(&s), want.matches(&s), "{parts:?}: {s:?}");
            }
        }
    }
}

/// A planned concatenation knows what planning needs of it before it is built: its
/// facts equal those read from the built automaton (the bytes where it may end and go on
/// may be more: a junction it calls deterministic is one). Joins of unbuilt joins build
/// on first read, to the regex engine's language.
#[test]
fn planned_joins_know_their_facts_before_they_are_built() {
    use super::concat::ConcatPlan;
    use std::sync::Arc;
    let limits = Limits::default();
    let counted = |min, max| dfa("[a-c]").repeat_counted(min, Some(max), &limits, "t").unwrap().unwrap();
    let lists: Vec<Vec<Dfa>> = vec![
        vec![dfa("\""), dfa("[^\"]*"), dfa("\"")],
        vec![dfa("a+"), dfa("b?"), dfa("c")],
        vec![dfa("a*"), dfa("b*"), dfa("c*")],
        vec![dfa("(?:ab|a)c"), dfa("[x-z]{2,5}"), dfa(",?")],
        vec![dfa("x"), counted(3, 40), dfa("[xy]z|xz")],
        vec![counted(2, 30), dfa("-"), counted(5, 90), dfa("!")],
        vec![dfa("k"), counted(0, 12)],
    ];
    for parts in &lists {
        let refs: Vec<&Dfa> = parts.iter().collect();
        let facts: Vec<_> = refs.iter().map(|d| d.join_facts()).collect();
        let plan = ConcatPlan::new(&facts, &limits, "t").unwrap().expect("deterministic junctions");
        let built = plan.build(&refs);
        let (want, got) = (plan.facts(), built.join_facts());
        assert_eq!(
            (want.accepts_empty, want.first, want.stored, want.states),
            (got.accepts_empty, got.first, got.stored, got.states)
        );
        assert_eq!(want.region, got.region, "{} parts", parts.len());
        assert!(
            (0..4).all(|w| got.end_continues[w] & !want.end_continues[w] == 0),
            "ends go on by no byte the plan did not name"
        );
    }
    // Joined lazily in two levels: nothing is built until the outer join is read.
    let leaves: Vec<Arc<LazyDfa>> =
        ["\\{", "\"[a-z]*\"", ":", "[0-9]+", "\\}"].iter().map(|p| Arc::new(LazyDfa::from(dfa(p)))).collect();
    let inner_facts: Vec<_> = leaves[..3].iter().map(|l| l.facts()).collect();
    let inner = ConcatPlan::new(&inner_facts, &limits, "t").unwrap().unwrap();
    let inner = Arc::new(LazyDfa::concat(inner, leaves[..3].to_vec()));
    let outer_parts = vec![inner.clone(), leaves[3].clone(), leaves[4].clone()];
    let outer_facts: Vec<_> = outer_parts.iter().map(|l| l.facts()).collect();
    let outer = LazyDfa::concat(ConcatPlan::new(&outer_facts, &limits, "t").unwrap().unwrap(), outer_parts);
    assert!(!inner.is_built() && !outer.is_built());
    assert!(!outer.accepts_empty());
    assert_eq!(set_bytes(&outer.first_bytes()).collect::<Vec<_>>(), vec![b'{'], "read from its facts");
    assert!(!outer.is_built(), "facts build nothing");
    let want = dfa("\\{\"[a-z]*\":[0-9]+\\}");
    for s in [&b"{\"ab\":12}"[..], b"{\"\":0}", b"{\"a\":}", b"{\"a\"12}", b"{\"a\":1"] {
        assert_eq!(outer.matches(s), want.matches(s), "{s:?}");
    }
    assert!(outer.is_built() && inner.is_built(), "reading the outer join built both");
}

#[test]
fn from_expr_agrees_with_the_regex_engine() {
    let limits = Limits::default();
    let (a, b, c) = (dfa("a"), dfa("b"), dfa("c"));
    let (astar, opt_b) = (dfa("a*"), dfa("b?"));
    let leaf = DfaExpr::Leaf;
    fn rep(e: DfaExpr<'_>, min: u32, max: Option<u32>) -> DfaExpr<'_> {
        DfaExpr::Repeat { expr: Box::new(e), min, max }
    }
    let (a, b, c, astar, opt_b) = (&a, &b, &c, &astar, &opt_b);
    let cases: Vec<(DfaExpr<'_>, &str)> = vec![
        (DfaExpr::Seq(vec![leaf(a), leaf(b)]), "ab"),
        (DfaExpr::Alt(vec![leaf(a), leaf(b), DfaExpr::Empty]), "a|b|"),
        // A loop next to an alternative: (a*b | c) must not accept "ac".
        (DfaExpr::Alt(vec![DfaExpr::Seq(vec![rep(leaf(a), 0, None), leaf(b)]), leaf(c)]), "a*b|c"),
        (rep(DfaExpr::Seq(vec![leaf(a), leaf(opt_b)]), 2, Some(4)), "(ab?){2,4}"),
        (rep(leaf(astar), 0, None), "a*"),
        (rep(DfaExpr::Alt(vec![leaf(astar), leaf(b)]), 1, None), "(a*|b)+"),
        (DfaExpr::Seq(vec![rep(leaf(opt_b), 3, Some(3)), leaf(c)]), "b{0,3}c"),
        (rep(DfaExpr::Seq(vec![rep(leaf(a), 1, None), leaf(b)]), 0, Some(2)), "(a+b){0,2}"),
    ];
    let pieces: &[&[u8]] = &[b"a", b"b", b"c"];
    for (e, pattern) in &cases {
        let got = Dfa::from_expr(e, &limits, pattern).unwrap();
        let want = dfa(pattern);
        for s in strings(pieces, 6) {
            assert_eq!(got.matches(&s), want.matches(&s), "{pattern}: {s:?}");
        }
    }
}

#[test]
fn constructions_honour_limits() {
    let small = Limits { max_dfa_states: 500, ..Limits::default() };
    let a = dfa("(a|b)*a(a|b){12}");
    let b = dfa("(a|b)*b(a|b){12}");
    // The regexes compile under the default limits; their product is far larger.
    for r in [a.intersect(&b, &small, "t"), a.complement(&small, "t")] {
        assert!(matches!(r, Err(Error::LimitExceeded { limit: "max_dfa_states", .. })), "{r:?}");
    }
    let x = dfa("x?");
    let huge = DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&x)), min: 1_000_000_000, max: None };
    let r = Dfa::from_expr(&huge, &Limits::default(), "t");
    assert!(matches!(r, Err(Error::LimitExceeded { limit: "max_dfa_states", .. })), "{r:?}");
    // Subset construction blow-up: (a|b)* a (a|b){n} from leaves.
    let (ab, la) = (dfa("a|b"), dfa("a"));
    let e = DfaExpr::Seq(vec![
        DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&ab)), min: 0, max: None },
        DfaExpr::Leaf(&la),
        DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&ab)), min: 20, max: Some(20) },
    ]);
    let r = Dfa::from_expr(&e, &Limits::default(), "t");
    assert!(matches!(r, Err(Error::LimitExceeded { .. })), "{r:?}");
}

#[test]
fn minimized_keeps_the_language_and_is_minimal() {
    for pattern in ["(a|b)*abb", "abc|abd|xbc|xbd", "[a-c]+(x|y)?", "\\d{2,5}", "(é|ê|[^a])*z", "a{3}|b{3}"] {
        let d = dfa(pattern);
        let m = d.minimized();
        assert_eq!(d.difference(&m), None, "{pattern}");
        assert_eq!(m.minimized().num_states(), m.num_states(), "{pattern}: not a fixpoint");
        assert!(m.num_states() <= d.num_states(), "{pattern}");
    }
    // Hopcroft against Moore's refinement (states split until no signature changes)
    // over the states reachable from the start, on DFAs that are not minimal: unions
    // of equivalent branches, counters and joins.
    let moore_states = |d: &Dfa| {
        let mut reachable = vec![DEAD, d.start()];
        let mut i = 0;
        while i < reachable.len() {
            for &t in &d.table[reachable[i] as usize * d.stride..(reachable[i] as usize + 1) * d.stride] {
                if !reachable.contains(&t) {
                    reachable.push(t);
                }
            }
            i += 1;
        }
        let mut block: Vec<u32> = (0..d.num_states()).map(|s| d.accepting[s] as u32).collect();
        let mut count = 0;
        loop {
            let mut ids: std::collections::HashMap<Vec<u32>, u32> = Default::default();
            let mut next = block.clone();
            for &s in &reachable {
                let s = s as usize;
                next[s] = {
                    let mut sig = vec![block[s]];
                    sig.extend(d.table[s * d.stride..(s + 1) * d.stride].iter().map(|&t| block[t as usize]));
                    let k = ids.len() as u32;
                    *ids.entry(sig).or_insert(k)
                };
            }
            block = next;
            if ids.len() == count {
                return count;
            }
            count = ids.len();
        }
    };
    let limits = Limits::default();
    let (ab, ab2) = (dfa("(?:ab|a)*"), dfa("(?:a|ab)*"));
    let joined = Dfa::from_expr(
        &DfaExpr::Alt(vec![DfaExpr::Leaf(&ab), DfaExpr::Leaf(&ab2)]),
        &Limits { max_dfa_states: 10_000, ..limits.clone() },
        "t",
    )
    .unwrap();
    let mut cases = vec![joined, dfa("x(?:[ab]c|[ab]d){20}y"), dfa("(?:1[0-9]|2[0-9]|[3-9][0-9]){3}|(?:[0-9]{2}){3}")];
    let counter = dfa("[a-c]").repeat_counted(3, Some(40), &limits, "t").unwrap().unwrap();
    cases.push(Dfa::concat_all(&[&counter, &dfa("[xy]z|xz")], &limits, "t").unwrap().unwrap());
    // Every live state twice (copies alternate on each move): a DFA of twice the states
    // with the same minimal automaton.
    let doubled = |d: &Dfa| {
        let n = d.num_states() as u32;
        let id = |s: u32, copy: u32| if s == DEAD { DEAD } else { s + copy * (n - 1) };
        let mut table = vec![DEAD; (2 * n as usize - 1) * d.stride];
        let mut accepting = vec![false; 2 * n as usize - 1];
        for copy in 0..2 {
            for s in 1..n {
                accepting[id(s, copy) as usize] = d.accepting[s as usize];
                for c in 0..d.stride {
                    table[id(s, copy) as usize * d.stride + c] = id(d.table[s as usize * d.stride + c], 1 - copy);
                }
            }
        }
        Dfa { class_of: d.class_of, stride: d.stride, table, accepting, counted: None }
    };
    for p in [
        "(?:[0-9A-Fa-f]{1,4}:){6}[0-9A-Fa-f]{1,4}|::(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}",
        "(a|b)*abb",
        "[a-z]+@[a-z]+(?:\\.[a-z]+)*",
    ] {
        let d = dfa(p);
        cases.push(doubled(&d));
    }
    for d in &cases {
        let m = d.minimized();
        assert_eq!(d.difference(&m), None);
        assert_eq!(m.num_states(), moore_states(d), "Hopcroft and Moore disagree on a DFA of {} states", d.num_states());
    }
    // The textbook example: 4 live states (plus the dead one).
    assert_eq!(dfa("(a|b)*abb").minimized().num_states(), 5);
    // Equivalent suffixes are shared: "abc|abd|xbc|xbd" is [ax]b[cd].
    assert_eq!(dfa("abc|abd|xbc|xbd").minimized().num_states(), dfa("[ax]b[cd]").minimized().num_states());
}

#[test]
fn byte_sequences_build_their_language() {
    let seqs: Vec<Vec<(u8, u8)>> = vec![
        b"cat".iter().map(|&b| (b, b)).collect(),
        vec![(b'c', b'c'), (b'a', b'z')],
        vec![],
        vec![(0xC3, 0xC3), (0x80, 0xBF)],
    ];
    let d = Dfa::from_byte_sequences(&seqs, &Limits::default(), "t").unwrap();
    for (s, want) in [
        (&b"cat"[..], true),
        (b"cz", true),
        (b"c", false),
        (b"", true),
        ("é".as_bytes(), true),
        (b"ca", true),
        (b"cats", false),
        (b"\xC3", false),
    ] {
        assert_eq!(d.matches(s), want, "{s:?}");
    }
    assert!(matches!(Dfa::from_byte_sequences(&[], &Limits::default(), "t"), Err(Error::EmptyLanguage { .. })));
}

/// Risky bytes: where entering a restricted state is rarer than what it refuses, only
/// the entering byte is read; from inside it, what it refuses.
#[test]
fn string_safe_risk_checks_the_bytes_that_enter_danger() {
    const ONE: [u32; 256] = [1; 256];
    let d = dfa(r#""(?:[0-9a-z]|%[0-9a-f][0-9a-f])*""#);
    let body = d.next(d.start(), b'"');
    let set = |bytes: &[u8]| {
        let mut s = [0u64; 4];
        bytes.iter().for_each(|&b| s[(b >> 6) as usize] |= 1 << (b & 63));
        s
    };
    let r = d.string_safe_risk(body, 8, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    assert_eq!(r.check, set(b"%"));
    let always: Vec<u8> = set_bytes(&r.always).collect();
    assert!(always.contains(&b'A') && always.contains(&0xC3) && !always.contains(&b'a') && !always.contains(&b'z'));
    // After `%`: the state is dangerous; what kills somewhere is read (`g`-`z`, `%`).
    let pct = d.next(body, b'%');
    let r = d.string_safe_risk(pct, 8, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    let check: Vec<u8> = set_bytes(&r.check).collect();
    assert!(check.contains(&b'z') && check.contains(&b'%') && !check.contains(&b'0'), "{check:?}");
    // Limits: too many bytes dead at once, too many to check; a reachable accept.
    assert_eq!(d.string_safe_risk(pct, 8, Some(&ANY_BYTE), 256, 5, &ONE), None);
    assert_eq!(d.string_safe_risk(d.start(), 8, Some(&ANY_BYTE), 100, 48, &ONE), None);
    // Where accepting is a risk: a few bytes that accept are read, a class is not.
    assert_eq!(dfa("[a-z]*").string_safe_risk(1, 8, Some(&ANY_BYTE), 256, 48, &ONE), None);
    assert!(dfa("[a-z]*").string_safe_risk(1, 8, None, 256, 48, &ONE).is_some());
    let r = dfa("[ab]*").string_safe_risk(1, 8, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    assert_eq!((r.ends, r.safe_len), (set(b"ab"), 0));
    // A count: fragments up to what is left of it need no reading.
    let d = dfa("\"[a-z]{2,12}\"");
    let mut q = d.next(d.start(), b'"');
    assert_eq!(d.string_safe_risk(q, 8, Some(&ANY_BYTE), 256, 48, &ONE).unwrap().safe_len, 8);
    for _ in 0..7 {
        q = d.next(q, b'x');
    }
    let r = d.string_safe_risk(q, 8, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    assert_eq!((r.safe_len, r.short_only, set_bytes(&r.check).count()), (5, true, 0));
    // With two-byte characters, 6 bytes may still be 3 characters: read them.
    let d = dfa("\"(?:[a-z]|é){2,12}\"");
    let mut q = d.next(d.start(), b'"');
    for _ in 0..7 {
        q = d.next(q, b'x');
    }
    let r = d.string_safe_risk(q, 8, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    assert_eq!((r.safe_len, r.short_only), (5, false));
    assert!(set_bytes(&r.check).any(|b| b == b'a'));
    // A closing marker: fragments shorter than it need no reading; longer ones holding
    // the byte that ends it are read, also when they hold a byte that kills after it.
    let d = dfa(r#"[^"\\\x00-\x1f~]*</p>"#);
    let r = d.string_safe_risk(d.start(), 16, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    assert_eq!((r.ends, r.check, r.safe_len, r.short_only), (set(b">"), set(b">"), 3, false));
    assert!(set_bytes(&r.always).any(|b| b == b'~'));
    let r = d.string_safe_risk(d.walk(d.start(), b"</p"), 16, Some(&ANY_BYTE), 256, 48, &ONE).unwrap();
    assert_eq!((r.ends, r.safe_len), (set(b">"), 0));
    assert_eq!(d.string_safe_risk(d.start(), 16, None, 256, 48, &ONE).map(|r| r.ends), Some([0; 4]));
    // Text that may end at every letter: the risk is reading, where it may end, a byte
    // that can follow it (`<`), not every letter; followed by a byte of a class with
    // many (`:`, with every other byte the text refuses), no answer.
    let d = dfa("(?:[a-z]|<[a-z])*");
    assert_eq!(d.string_safe_risk(d.start(), 8, Some(&ANY_BYTE), 256, 48, &ONE), None);
    let r = d.string_safe_risk(d.start(), 8, Some(&set(b"<")), 256, 48, &ONE).unwrap();
    assert_eq!((r.ends, r.check, r.safe_len), (set(b"<"), set(b"<"), 0));
    assert_eq!(d.string_safe_risk(d.start(), 8, Some(&set(b":")), 256, 48, &ONE), None);
}

#[test]
fn refine_is_the_coarsest_common_refinement() {
    let a = dfa("[a-m]x").class_of;
    let b = dfa("[h-z]y").class_of;
    let r = refine(&[&a, &b]);
    for x in 0..256 {
        for y in 0..256 {
            let same = a[x] == a[y] && b[x] == b[y];
            assert_eq!(r[x] == r[y], same, "{x} {y}");
        }
    }
    // Numbered by first occurrence: byte 0 is in class 0, new classes count up.
    assert_eq!(r[0], 0);
    let mut top = 0;
    for &c in &r {
        assert!(c <= top + 1);
        top = top.max(c);
    }
}

/// Every string over `alphabet` up to `len` bytes.
fn strings_upto(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut layer = vec![Vec::new()];
    for _ in 0..len {
        layer = layer.iter().flat_map(|s: &Vec<u8>| alphabet.iter().map(move |&b| [s.as_slice(), &[b]].concat())).collect();
        out.extend(layer.iter().cloned());
    }
    out
}

#[test]
fn deterministic_repetition_agrees_with_subset_construction() {
    let limits = Limits::default();
    let patterns = ["a|aa", "ab", "a|ab", "a(ba)*", "(ab)*", "a*b", "x?ab", "abc|b", "a|b", "(a|bc)d", "[ab]c", "a+", "ba*"];
    let alphabet = b"abcdx";
    for p in patterns {
        let d = compile(p, &limits).unwrap();
        for (min, max) in [(0, Some(1)), (0, None), (1, None)] {
            let general = Dfa::from_expr(&DfaExpr::Repeat { expr: Box::new(DfaExpr::Leaf(&d)), min, max }, &limits, p).unwrap();
            let Some(fast) = d.repeat_deterministic(min, max) else { continue };
            for s in strings_upto(alphabet, 6) {
                assert_eq!(fast.matches(&s), general.matches(&s), "/{p}/{{{min},{max:?}}} on {:?}", String::from_utf8_lossy(&s));
            }
        }
    }
    // The junction decides: `a|ab` then `b...` is ambiguous after `a`, `ab` then `ab` is not.
    assert!(compile("a|ab", &limits).unwrap().repeat_deterministic(0, None).is_some());
    assert!(compile("ab", &limits).unwrap().repeat_deterministic(1, None).is_some());
    let plus = compile("a+", &limits).unwrap().minimized();
    assert!(plus.repeat_deterministic(0, None).is_some(), "{plus:?}");
    assert!(compile("ab|b", &limits).unwrap().repeat_deterministic(0, None).is_some());
    assert!(compile("a|aa", &limits).unwrap().repeat_deterministic(0, None).is_none());
}

#[test]
fn difference_is_intersection_with_the_complement() {
    let limits = Limits::default();
    let pairs =
        [("ab|ac", "ab"), ("[a-c]*", "a|ab|abc"), ("(ab|b)*", "b*"), ("a[bc]?d*", "ad+"), ("[ab]{0,3}", "[ab]{2}"), ("x*", "x*")];
    for (a, b) in pairs {
        let (da, db) = (compile(a, &limits).unwrap(), compile(b, &limits).unwrap());
        let minus = da.minus(&db, &limits, "test");
        for s in strings_upto(b"abcdx", 5) {
            let want = da.matches(&s) && !db.matches(&s);
            assert_eq!(minus.as_ref().is_ok_and(|d| d.matches(&s)), want, "{a} minus {b} on {:?}", String::from_utf8_lossy(&s));
        }
    }
    // Nothing left: the empty-language error.
    assert!(matches!(
        compile("ab", &limits).unwrap().minus(&compile("a*b*", &limits).unwrap(), &limits, "t"),
        Err(Error::EmptyLanguage { .. })
    ));
}

/// A state inside a string of at most three characters counts them, whatever they are
/// (one byte or four); free text, a count over some characters only, and a count whose
/// states accept part way (without the closing quote) have no budget.
#[test]
fn character_budgets_count_whole_characters() {
    let limits = crate::limits::Limits::default();
    let key = compile(r#""[^"\\\x00-\x1f]{0,3}""#, &limits).unwrap();
    let after = |d: &Dfa, s: &str| d.walk(d.start(), s.as_bytes());
    for (prefix, want) in [("\"", Some(3)), ("\"a", Some(2)), ("\"é", Some(2)), ("\"a😀", Some(1)), ("\"abc", Some(0))] {
        assert_eq!(key.string_safe_char_budget(after(&key, prefix), false), want, "after {prefix:?}");
    }
    // Part way through `é`, every fragment dies at its first byte (fragments start with a
    // whole character's first byte): a budget of none.
    let mid = key.walk(after(&key, "\"a"), &[0xc3]);
    assert_eq!(key.string_safe_char_budget(mid, false), Some(0));
    let free = compile(r#""[^"\\\x00-\x1f]*""#, &limits).unwrap();
    assert_eq!(free.string_safe_char_budget(after(&free, "\""), false), None);
    let some = compile(r#""[a-z]{0,3}""#, &limits).unwrap();
    assert_eq!(some.string_safe_char_budget(after(&some, "\""), false), None);
    let open = compile(r#"[^"\\\x00-\x1f]{0,3}"#, &limits).unwrap();
    assert_eq!(open.string_safe_char_budget(open.start(), false), None);
    assert_eq!(key.string_safe_char_budget(after(&key, "\""), true), Some(3));
    // Unminimized, the count's states after one byte and after four are kept apart (no
    // budget: the mask is found the slower way); minimized, they are one.
    assert_eq!(open.string_safe_char_budget(open.start(), true), None);
    let m = open.minimized();
    assert_eq!(m.string_safe_char_budget(m.start(), true), Some(3));
}

/// Do `a` and `b` read every byte string alike: the same bytes dead at each step, the
/// same acceptance? (Against a pruned `b`, that is `a`'s language and its pruning.)
fn same_moves(a: &Dfa, b: &Dfa) -> std::result::Result<(), String> {
    let start = (a.start(), b.start());
    let mut seen = std::collections::HashSet::from([start]);
    let mut todo = vec![start];
    while let Some((x, y)) = todo.pop() {
        if a.is_accepting(x) != b.is_accepting(y) {
            return Err(format!("acceptance differs at ({x}, {y})"));
        }
        for byte in 0..=255u8 {
            let (x2, y2) = (a.next(x, byte), b.next(y, byte));
            if (x2 == DEAD) != (y2 == DEAD) {
                return Err(format!("byte {byte} dead on one side only at ({x}, {y})"));
            }
            if x2 as usize >= a.num_states() {
                return Err(format!("state {x2} past the {} states", a.num_states()));
            }
            if x2 != DEAD && seen.insert((x2, y2)) {
                todo.push((x2, y2));
            }
        }
    }
    Ok(())
}

/// A bounded JSON string meeting a pattern is one block of (character row, pattern state)
/// pairs: the same language and the same pruning (no state that cannot finish within the
/// bound) as the product written out, where a pattern needs characters right up to the
/// bound too, and a state deep in the count stands for its row.
#[test]
fn a_counted_string_meets_a_pattern_as_one_block() {
    let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
    let limits = Limits::default();
    let patterns = [
        "[a-z]+(?:-[a-z]+)*",
        // Six characters after the last `x`: near the bound, letters stop early.
        "[a-z]*x[0-9]{5}",
        // Any text, with a UTF-8 letter or an escape somewhere.
        r#"(?:[ -~]|\\n)*(?:é|\\t)(?:[ -~]|\\n)*"#,
        "(?:ab){3,}",
    ];
    for n in [250u32, 263, 600] {
        let region = dfa(&format!("{json_char}{{0,{n}}}"));
        assert!(region.has_counted_region(), "{n}");
        for p in patterns {
            let pattern = dfa(p);
            let built = region.intersect(&pattern, &limits, "t").unwrap();
            assert!(built.has_counted_region(), "{p} {n}");
            assert!(built.memory_bytes() * 5 < built.stored().memory_bytes(), "{p} {n}: the rows are stored");
            // The product written out: pruned by exploration.
            let whole = region.stored().intersect(&pattern, &limits, "t").unwrap();
            assert!(!whole.has_counted_region());
            same_moves(&built, &whole).unwrap_or_else(|e| panic!("{p} {n}: {e}"));
            // Either order of operands.
            same_moves(&pattern.intersect(&region, &limits, "t").unwrap(), &whole).unwrap();
            // Written out, state by state, the rows are the computed ones.
            let stored = built.stored();
            for s in (0..built.num_states() as u32).step_by(7) {
                assert_eq!(built.is_accepting(s), stored.is_accepting(s), "{p} {n}: state {s}");
                for b in 0..=255u8 {
                    assert_eq!(built.next(s, b), stored.next(s, b), "{p} {n}: state {s}, byte {b}");
                }
            }
            // A per-state cache holds every state a stand-in leaves as it is, each in its
            // own slot, and fewer slots than states where the count is long.
            let depth = 8;
            let own = built.own_states(depth);
            let slots: std::collections::HashSet<usize> = own.iter().map(|&s| built.state_slot(s, depth)).collect();
            assert_eq!(slots.len(), own.len(), "{p} {n}");
            assert!(slots.iter().all(|&x| x < built.state_slots(depth)), "{p} {n}");
            for s in (1..built.num_states() as u32).step_by(13) {
                let e = built.equivalent_within(s, depth);
                assert!(own.contains(&e), "{p} {n}: {s} stands for {e}");
            }
            if n >= 600 {
                assert!(built.state_slots(depth) * 2 < built.num_states(), "{p} {n}");
            }
            // A stand-in reads the next bytes as the state does (see `equivalent_within`).
            let mut shared = 0;
            for s in (1..built.num_states() as u32).step_by(97) {
                let e = built.equivalent_within(s, 8);
                if e == s {
                    continue;
                }
                shared += 1;
                built.assert_reads_alike(s, e, 8, p);
            }
            assert!(shared > 0, "{p} {n}");
        }
    }
    // A pattern longer than the bound allows: no string.
    let short = dfa(&format!("{json_char}{{0,250}}"));
    assert!(matches!(short.intersect(&dfa("a{251}"), &limits, "t"), Err(Error::EmptyLanguage { .. })));
    assert!(short.intersect(&dfa("a{250}"), &limits, "t").unwrap().matches(&[b'a'; 250]));
}

/// A short count kept as a region only to meet a pattern as one block, then written out:
/// the pattern's language within the bound, read state by state as the product explored
/// pair by pair reads it, and over the coarsest byte classes (the block's classes are
/// the refinement of both sides', and every table built from the DFA is as wide as its
/// classes: masks walked finer classes a third slower).
#[test]
fn a_short_count_met_as_a_block_is_written_out_over_the_coarsest_classes() {
    let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
    let limits = Limits::default();
    let unit = dfa(json_char);
    for (p, n) in [("[a-z]+@[a-z]{1,9}\\.(?:com|org)", 30u32), ("(?:[0-9]{1,3}\\.){3}[0-9]{1,3}", 12), ("[ -~]*x", 40)] {
        let region = unit.repeat_counted_region(0, Some(n), &limits, "t").unwrap().expect("prefix-free unit");
        assert!(region.has_counted_region(), "{p}: a region however short");
        let built = region.intersect(&dfa(p), &limits, "t").unwrap();
        let written = built.short_count_written_out(&limits).unwrap().expect("short");
        assert!(!written.has_counted_region(), "{p}");
        let whole = dfa(&format!("{json_char}{{0,{n}}}")).stored().intersect(&dfa(p), &limits, "t").unwrap();
        same_moves(&written, &whole).unwrap_or_else(|e| panic!("{p}: {e}"));
        same_moves(&whole, &written).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(written.num_classes(), written.clone().with_coarsest_classes().num_classes(), "{p}");
    }
    // A pattern of thousands of states under a bound near the short counts' end: the
    // block numbers over a million (count, row) pairs, of which a few hundred are reached
    // (the walk keeps a map of those, not a table of every pair).
    let n = counted::SHORT_COUNT - 6;
    let p = "(?:[a-z]{3}[0-9]){0,2500}";
    let region = unit.repeat_counted_region(0, Some(n), &limits, "t").unwrap().expect("prefix-free unit");
    let long = region.intersect(&dfa(p), &limits, "t").unwrap();
    assert!(long.num_states() > 1 << 20, "{}", long.num_states());
    let written = long.short_count_written_out(&limits).unwrap().expect("short");
    assert!(written.num_states() < 1 << 10, "{}", written.num_states());
    let whole = dfa(&format!("{json_char}{{0,{n}}}")).stored().intersect(&dfa("(?:[a-z]{3}[0-9])*"), &limits, "t").unwrap();
    same_moves(&written, &whole).unwrap();
    same_moves(&whole, &written).unwrap();
}

/// `agreeing_depth` is the depth of bounded equivalence over every byte: against Moore's
/// refinement (the states' classes after `d` rounds over all bytes), for every pair of
/// states of counted character classes near and far from their bounds, free text and a
/// union of counts; a bound on pairs makes the answer shallower, never deeper.
#[test]
fn agreeing_depth_is_the_depth_of_bounded_equivalence() {
    const DEEPEST: usize = 12;
    let mut parted = 0;
    for pattern in [
        r#""[A-Za-z0-9-]{1,39}""#,
        r#""[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?""#,
        r#""[^"\\\x00-\x1f]{1,20}""#,
        r"[ab]{3,9}x|[ab]*y",
        r#""(?:[ab1 ]|é){2,15}""#,
    ] {
        let d = dfa(pattern).minimized();
        let n = d.num_states();
        let mut class: Vec<u32> = (0..n as u32).map(|q| if q == DEAD { 0 } else { 1 + d.is_accepting(q) as u32 }).collect();
        let signature = |class: &[u32], q: u32| -> Vec<u32> { (0..=255u8).map(|b| class[d.next(q, b) as usize]).collect() };
        // want[a][b]: the depth found so far (states agree within `depth` while their
        // signatures after `depth - 1` rounds are equal).
        let mut want: crate::util::hash::FastMap<(usize, usize), usize> = Default::default();
        for depth in 1..=DEEPEST {
            let sigs: Vec<Vec<u32>> = (0..n as u32).map(|q| signature(&class, q)).collect();
            for a in 1..n {
                for b in 1..n {
                    if sigs[a] != sigs[b] {
                        want.entry((a, b)).or_insert(depth - 1);
                    }
                }
            }
            let mut ids: crate::util::hash::FastMap<(u32, Vec<u32>), u32> = Default::default();
            class = (0..n as u32)
                .map(|q| {
                    let key = (class[q as usize], signature(&class, q));
                    let next = ids.len() as u32;
                    *ids.entry(key).or_insert(next)
                })
                .collect();
        }
        for a in 1..n {
            for b in 1..n {
                let expect = want.get(&(a, b)).copied().unwrap_or(DEEPEST);
                assert_eq!(d.agreeing_depth(a as u32, b as u32, DEEPEST, usize::MAX), expect, "/{pattern}/ states {a} {b}");
                assert!(d.agreeing_depth(a as u32, b as u32, DEEPEST, 3) <= expect, "/{pattern}/ states {a} {b}, 3 pairs");
                parted += usize::from((1..DEEPEST).contains(&expect));
            }
        }
    }
    assert!(parted > 200, "only {parted} pairs part between 1 and {DEEPEST} bytes deep");
    // Inside a count of 39, two neighbouring states read alike up to the nearer bound.
    let d = dfa(r#""[A-Za-z0-9-]{1,39}""#).minimized();
    let (a, b) = (d.walk(d.start(), b"\"ab"), d.walk(d.start(), b"\"abc"));
    assert_eq!(d.agreeing_depth(a, b, 100, usize::MAX), 36);
    assert!(d.agreeing_depth(a, b, 100, 4) < 36);
}

/// `same_within` is equivalence over string-safe text of bounded length: against Moore's
/// refinement (the states' classes after `d` rounds over every string-safe byte), for
/// every pair of states of counts near and far from their bounds, formats and free text.
#[test]
fn same_within_is_bounded_equivalence_over_string_safe_text() {
    use crate::util::bytes::is_string_safe_byte;
    let safe: Vec<u8> = (0..=255u8).filter(|&b| is_string_safe_byte(b)).collect();
    let mut agreeing = 0;
    for pattern in [
        r#""[^"\\\x00-\x1f]{1,20}""#,
        r#""[a-z0-9]{1,6}(?:\.[a-z0-9]{1,6})*""#,
        r#""(?:[ab1 ]|é){2,15}""#,
        r#""[^"\\\x00-\x1f]*""#,
        r"[ab]{3,9}x|[ab]*y",
    ] {
        let d = dfa(pattern).minimized();
        let n = d.num_states();
        // class[q] after round i: equal iff q and q' agree on every text of at most i bytes
        // (liveness and acceptance, the state itself included).
        let mut class: Vec<u32> = (0..n as u32).map(|q| if q == DEAD { 0 } else { 1 + d.is_accepting(q) as u32 }).collect();
        let signature = |class: &[u32], q: u32| -> Vec<u32> { safe.iter().map(|&b| class[d.next(q, b) as usize]).collect() };
        for depth in 1..=12usize {
            // States agree within `depth` when every byte takes them to states of one
            // class after `depth - 1` rounds (their own acceptance does not count).
            let sigs: Vec<Vec<u32>> = (0..n as u32).map(|q| signature(&class, q)).collect();
            for a in 1..n as u32 {
                for b in 1..n as u32 {
                    let want = sigs[a as usize] == sigs[b as usize];
                    assert_eq!(d.same_within(a, b, depth, usize::MAX), want, "/{pattern}/ states {a} {b} within {depth}");
                    agreeing += usize::from(want && a != b);
                }
            }
            let mut ids: crate::util::hash::FastMap<(u32, Vec<u32>), u32> = Default::default();
            class = (0..n as u32)
                .map(|q| {
                    let key = (class[q as usize], signature(&class, q));
                    let next = ids.len() as u32;
                    *ids.entry(key).or_insert(next)
                })
                .collect();
        }
    }
    assert!(agreeing > 1000, "only {agreeing} agreeing pairs of distinct states");
    // Past its budget of pairs, the check says no rather than search on.
    let d = dfa(r#""[^"\\\x00-\x1f]{1,40}""#).minimized();
    let (a, b) = (d.walk(d.start(), b"\"a"), d.walk(d.start(), b"\"ab"));
    assert!(d.same_within(a, b, 8, usize::MAX));
    assert!(!d.same_within(a, b, 8, 2));
}

/// Sameness answered in part from a counted region's structure (see
/// `region_reads_alike`) is the plain pair search's, over string-safe text and over every
/// byte: a JSON string's count (whose minimum only the closing quote can tell), a counted
/// class that accepts, a count that the minimum lets leave, and a product region that
/// prunes near its bound; stored states and blocks near the minimum, far inside and near
/// the bound, rows alike and apart.
#[test]
fn counted_region_sameness_is_the_searched_one() {
    let json_char = r#"(?:[ -!#-\[\]-\uD7FF\uE000-\U0010FFFF]|\\[btnfr"\\]|\\u00(?:0[0-9a-f]|1[0-9a-f]))"#;
    let limits = Limits::default();
    let string = dfa(&format!(r#""{json_char}{{2,300}}""#));
    let letters = dfa("[a-z]{3,3000}");
    let pairs = dfa("(?:ab){3,3000}c");
    let product = dfa(&format!("{json_char}{{0,300}}")).intersect(&dfa("[a-z]*x[0-9]{5}"), &limits, "t").unwrap();
    let (mut shortcut, mut searched_only) = (0, 0);
    for (what, d) in [("string", &string), ("letters", &letters), ("pairs", &pairs), ("product", &product)] {
        assert!(d.has_counted_region(), "{what}");
        let first = d.accepting.len() as u32;
        let c = d.counted.as_ref().unwrap();
        let blocks = [0, 1, 2, 3, 7, 60, c.last - 45, c.last - 30, c.last - 3];
        let states: Vec<u32> = (1..first)
            .chain(blocks.iter().flat_map(|&k| (0..c.per).step_by(3).map(move |r| first + k * c.per + r)))
            .filter(|&s| (s as usize) < d.num_states())
            .collect();
        for bytes in [d.string_safe_representatives(), d.class_representatives()] {
            let exits_unseen = d.region_exits_unseen(&bytes);
            for &a in &states {
                for &b in &states {
                    for depth in [6, 24] {
                        let searched = d.search_layers(a, b, &bytes, depth, usize::MAX, false);
                        let found = d.search_layers(a, b, &bytes, depth, usize::MAX, true);
                        assert_eq!(found, searched, "{what}: {a} {b} within {depth}");
                        if d.region_reads_alike(a, b, exits_unseen, depth) {
                            assert_eq!(searched, depth, "{what}: {a} {b} within {depth}");
                            shortcut += usize::from(a != b);
                        } else {
                            searched_only += usize::from(searched == depth && a != b);
                        }
                    }
                }
            }
        }
    }
    assert!(shortcut > 500, "only {shortcut} pairs answered from the structure");
    assert!(searched_only > 0, "every agreeing pair was answered from the structure");
    // Below a minimum only the closing quote reaches, the string-safe answer is yes.
    let c = string.counted.as_ref().unwrap();
    let first = string.accepting.len() as u32;
    assert!(c.min > 0 && string.region_exits_unseen(&string.string_safe_representatives()));
    assert!(!string.region_exits_unseen(&string.class_representatives()));
    assert!(string.region_reads_alike(first, first + 2 * c.per, true, 40));
    assert!(!string.region_reads_alike(first, first + 2 * c.per, false, 40));
}

/// The string-safe moves a thread keeps per class map are those built afresh for each
/// DFA asked, over more distinct class maps than are kept (so some are dropped and built
/// again), asked in turns.
#[test]
fn safe_moves_kept_per_class_map_equal_built_ones() {
    use super::string_safe::{build_safe_moves, safe_moves};
    let dfas: Vec<Dfa> =
        (0..20).map(|i| dfa(&format!(r#""[a-{}0-9%]{{1,{}}}(é|[^"\\])?""#, (b'c' + i as u8) as char, 3 + i))).collect();
    let maps: std::collections::HashSet<[u8; 256]> = dfas.iter().map(|d| d.class_of).collect();
    assert!(maps.len() > 16, "only {} distinct class maps", maps.len());
    for round in 0..3 {
        for (i, d) in dfas.iter().enumerate() {
            assert_eq!(*safe_moves(d), build_safe_moves(d), "round {round}, DFA {i}");
        }
    }
}

#[test]
fn without_empty_keeps_a_counted_region_counted() {
    let limits = Limits { max_dfa_states: 1_000, ..Limits::default() };
    // A counted region whose first state is the start (the product with another automaton)
    // and one behind a stored start: neither is written out.
    let counted = dfa("(?s:.)").repeat_counted(0, Some(5_000), &limits, "t").unwrap().unwrap();
    let product = counted.intersect(&dfa("[^x]*"), &limits, "t").unwrap();
    for d in [&counted, &product] {
        assert!(d.accepts_empty() && d.num_states() > limits.max_dfa_states);
        let plus = d.without_empty(&limits, "t").unwrap();
        assert!(!plus.accepts_empty());
        for (text, ok) in [("a".to_string(), true), ("é".repeat(5_000), true), ("a".repeat(5_001), false)] {
            assert_eq!(plus.matches(text.as_bytes()), ok, "{} chars", text.chars().count());
        }
    }
    assert!(!product.without_empty(&limits, "t").unwrap().matches(b"abxc"));
}
