//! Unit tests of the lowering's BNF steps, each against the language it must keep: the
//! terminal strings (up to a length) every rule derives, computed directly by a fixpoint
//! over the productions, before and after the step, on many small random grammars.

use std::collections::BTreeSet;

use super::*;

/// A small random BNF: `n` rules over terminals 0 and 1, productions of 0 to 3 symbols.
fn random_bnf(seed: u64, n: usize) -> Vec<Alts> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    (0..n)
        .map(|_| {
            (0..1 + next(3))
                .map(|_| {
                    (0..next(4))
                        .map(|_| if next(2) == 0 { Sym::t(next(2) as u32) } else { Sym::n(next(n as u64) as u32) })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Per rule: the terminal strings of length ≤ `k` it derives.
fn languages(bnf: &[Alts], k: usize) -> Vec<BTreeSet<Vec<u32>>> {
    let mut lang: Vec<BTreeSet<Vec<u32>>> = vec![BTreeSet::new(); bnf.len()];
    loop {
        let mut changed = false;
        for (a, alts) in bnf.iter().enumerate() {
            for seq in alts {
                let mut partial: BTreeSet<Vec<u32>> = BTreeSet::from([Vec::new()]);
                for s in seq {
                    let parts: BTreeSet<Vec<u32>> =
                        if s.is_terminal() { BTreeSet::from([vec![s.index()]]) } else { lang[s.index() as usize].clone() };
                    partial = partial
                        .iter()
                        .flat_map(|p| parts.iter().map(move |q| [p.clone(), q.clone()].concat()))
                        .filter(|w| w.len() <= k)
                        .collect();
                }
                for w in partial {
                    changed |= lang[a].insert(w);
                }
            }
        }
        if !changed {
            return lang;
        }
    }
}

const K: usize = 5;

#[test]
fn nullable_rules_are_those_that_derive_the_empty_string() {
    for seed in 0..300 {
        let bnf = random_bnf(seed, 4);
        let lang = languages(&bnf, K);
        let nullable = nullable_rules(&bnf);
        for a in 0..bnf.len() {
            assert_eq!(nullable[a], lang[a].contains(&Vec::new()), "seed {seed} rule {a}: {bnf:?}");
        }
    }
}

#[test]
fn productive_rules_derive_some_string() {
    for seed in 0..300 {
        let bnf = random_bnf(seed, 4);
        let lang = languages(&bnf, 8);
        let productive = derivable(&bnf, true);
        for a in 0..bnf.len() {
            // A string within the bound proves it; an unproductive rule derives none at all.
            if !lang[a].is_empty() {
                assert!(productive[a], "seed {seed} rule {a}: {bnf:?}");
            }
            if !productive[a] {
                assert!(lang[a].is_empty(), "seed {seed} rule {a}: {bnf:?}");
            }
        }
    }
}

#[test]
fn removing_nullable_rules_keeps_every_nonempty_string() {
    for seed in 0..300 {
        let mut bnf = random_bnf(seed, 4);
        let before = languages(&bnf, K);
        let nullable = remove_nullable(&mut bnf, &Limits::default()).unwrap();
        assert!(bnf.iter().flatten().all(|seq| !seq.is_empty()), "seed {seed}: an empty production is left");
        let after = languages(&bnf, K);
        for a in 0..bnf.len() {
            let mut want = before[a].clone();
            want.remove(&Vec::new());
            assert_eq!(after[a], want, "seed {seed} rule {a}");
            assert_eq!(nullable[a], before[a].contains(&Vec::new()), "seed {seed} rule {a}");
        }
    }
}

#[test]
fn removing_unit_rules_keeps_the_language() {
    for seed in 0..300 {
        let mut bnf = random_bnf(seed, 4);
        remove_nullable(&mut bnf, &Limits::default()).unwrap();
        let before = languages(&bnf, K);
        // Rule 3 stands for a `perm!` list: units to it stay, its own productions too.
        let mut lists = vec![false; bnf.len()];
        lists[3] = true;
        let kept_list = bnf[3].clone();
        remove_units(&mut bnf, &Limits::default(), &lists).unwrap();
        // Small closures: every unit is replaced by copies.
        for (a, alts) in bnf.iter().enumerate().filter(|&(a, _)| a != 3) {
            let units: Vec<&Vec<Sym>> =
                alts.iter().filter(|seq| seq.len() == 1 && !seq[0].is_terminal() && seq[0].index() != 3).collect();
            assert!(units.is_empty(), "seed {seed} rule {a}: units {units:?}");
        }
        let mut kept: Vec<Vec<Sym>> = Vec::new();
        for seq in kept_list {
            if !kept.contains(&seq) {
                kept.push(seq);
            }
        }
        assert_eq!(bnf[3], kept, "seed {seed}: the list's own productions changed");
        assert_eq!(languages(&bnf, K), before, "seed {seed}");
    }
}

/// Rules `0..users` each have the unit `U → B` and one production of their own; `B` (rule
/// `users`) has `wide` productions of one terminal each.
fn wide_union(users: usize, wide: usize) -> Vec<Alts> {
    let b = users as u32;
    let mut bnf: Vec<Alts> = (0..users).map(|a| vec![vec![Sym::n(b)], vec![Sym::t(a as u32), Sym::t(a as u32)]]).collect();
    bnf.push((0..wide).map(|t| vec![Sym::t(t as u32)]).collect());
    bnf
}

/// The productions of `bnf` in all, and whether some unit production is left.
fn size_and_units(bnf: &[Alts]) -> (usize, bool) {
    (bnf.iter().map(|a| a.len()).sum(), bnf.iter().flatten().any(|seq| seq.len() == 1 && !seq[0].is_terminal()))
}

#[test]
fn a_large_unit_closure_keeps_its_units() {
    let lists = vec![false; 4];
    // Past MAX_UNIT_COPIES: the units stay, however few rules use them.
    let mut bnf = wide_union(3, MAX_UNIT_COPIES + 1);
    let before = languages(&bnf, 2);
    remove_units(&mut bnf, &Limits::default(), &lists).unwrap();
    assert_eq!(size_and_units(&bnf), (3 * 2 + MAX_UNIT_COPIES + 1, true));
    assert_eq!(languages(&bnf, 2), before);
    // Within it (a rule's own production counts): copies.
    let mut bnf = wide_union(3, MAX_UNIT_COPIES - 1);
    let before = languages(&bnf, 2);
    remove_units(&mut bnf, &Limits::default(), &lists).unwrap();
    assert_eq!(size_and_units(&bnf), (3 * MAX_UNIT_COPIES + MAX_UNIT_COPIES - 1, false));
    assert_eq!(languages(&bnf, 2), before);
}

#[test]
fn copies_past_the_budget_keep_the_largest_closures_units() {
    // 1000 rules reaching 100 alternatives, and 1000 reaching 10: copied, 111,000
    // productions, past half of max_grammar_productions = 200,000. The larger closures
    // keep their units; the smaller are copied.
    let mut bnf = wide_union(1000, 100);
    let small = bnf.len() as u32;
    for a in 0..1000u32 {
        bnf.push(vec![vec![Sym::n(small + 1000)], vec![Sym::t(a), Sym::t(a), Sym::t(a)]]);
    }
    bnf.push((0..10).map(|t| vec![Sym::t(t)]).collect());
    let before = languages(&bnf, 3);
    let lists = vec![false; bnf.len()];
    remove_units(&mut bnf, &Limits::default(), &lists).unwrap();
    assert_eq!(bnf[0].len(), 2, "{:?}", bnf[0]);
    assert_eq!(bnf[small as usize].len(), 11);
    assert_eq!(size_and_units(&bnf).0, 1000 * 2 + 100 + 1000 * 11 + 10);
    assert_eq!(languages(&bnf, 3), before);
    // With a larger limit, everything is copied.
    let mut bnf = wide_union(1000, 100);
    let lists = vec![false; bnf.len()];
    remove_units(&mut bnf, &Limits { max_grammar_productions: 400_000, ..Limits::default() }, &lists).unwrap();
    assert_eq!(size_and_units(&bnf), (1000 * 101 + 100, false));
}

#[test]
fn a_unit_to_itself_goes() {
    let mut bnf = wide_union(1, MAX_UNIT_COPIES + 1);
    bnf[0].push(vec![Sym::n(0)]);
    remove_units(&mut bnf, &Limits::default(), &[false, false]).unwrap();
    assert_eq!(bnf[0], vec![vec![Sym::n(1)], vec![Sym::t(0), Sym::t(0)]]);
}

#[test]
fn too_many_productions_is_a_limit() {
    // Seventeen nullable symbols in one production: 2^17 variants would be spelled out.
    let opt = vec![vec![], vec![Sym::t(0)]];
    let mut bnf: Vec<Alts> = vec![vec![vec![Sym::n(1); 17]], opt];
    match remove_nullable(&mut bnf, &Limits::default()) {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "max_grammar_productions"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn expression_emptiness_is_exact_and_typed() {
    let limits = Limits::default();
    let empty = |e: &str| expression_is_empty(e, &limits, None).unwrap();
    assert!(empty("and!(/[a-z]+/, not!(/[a-z]+/))"));
    assert!(empty("and!(/x{2,4}/, /x{5}/)"));
    assert!(empty("/[^\\s\\S]/"));
    assert!(!empty("and!(/[a-z]+/, not!(\"a\"))"));
    assert!(!empty("and!(/x{2,5}/, /x{5}/)"));
    assert!(!empty("\"a\" | except!(\"b\")"));
    // Not one expression, or one that names a rule: errors, never an answer.
    assert!(matches!(expression_is_empty("\"a\" ; y ::= \"b\"", &limits, None), Err(Error::Grammar { .. })));
    assert!(matches!(expression_is_empty("x", &limits, None), Err(Error::Grammar { .. })));
    let small = Limits { max_dfa_states: 3, ..Limits::default() };
    assert!(matches!(expression_is_empty("and!(/[a-z]{10}/, not!(\"a\"))", &small, None), Err(Error::LimitExceeded { .. })));
}

/// The measures of Python regex `src` (without the interpreter's classes).
fn measure(src: &str) -> super::piece::Measure {
    let hir = crate::frontend::regex::parse(src, &Limits::default(), None).unwrap();
    super::piece::Measure::of(&hir)
}

#[test]
fn weights_follow_the_regex_text_and_weigh_a_class_as_one_position() {
    // Literals by their bytes, operators by theirs, groups nothing.
    assert_eq!(measure("abc").weight, 3);
    assert_eq!(measure("(?:(?:a)b)").weight, measure("ab").weight);
    assert_eq!(measure("x{2,10}").weight, 1 + 6);
    assert_eq!(measure("(?:ab)*").weight, 2 + 1);
    assert_eq!(measure("ab|cd|ef").weight, 6 + 2);
    // A short class weighs its text; a large one is capped: Python's \w (hundreds of
    // ranges) weighs what [A-Za-z0-9_] does.
    assert_eq!(measure("[a-z]").weight, 5);
    assert_eq!(measure("[0-9a-f]").weight, 8);
    assert_eq!(measure(r"\w").weight, 12);
    assert_eq!(measure("[A-Za-z0-9_]").weight, 12);
    assert_eq!(measure(r"[\s\S]").weight, 5);
}

#[test]
fn depth_and_counts_come_from_the_hir() {
    // Nested groups of a concatenation flatten; repetitions and unions nest.
    assert_eq!(measure("(?:(?:(?:ab)c)d)").depth, 0); // one literal
    assert_eq!(measure("(?:a|b+)c").depth, 3);
    let deep = format!("{}a{}", "(?:b".repeat(60), ")*".repeat(60));
    assert!(measure(&deep).depth >= 60);
    // A union of unions is one union.
    let flat = format!("{}a{}", "(?:bc|".repeat(60), ")".repeat(60));
    assert_eq!(measure(&flat).depth, 1);
    assert_eq!(measure("a{3}b{64,100}").largest_count, 100);
    assert_eq!(measure("a*b+c?").largest_count, 1);
    // An escaped brace is a literal, not a count.
    assert_eq!(measure(r"a\{99\}").largest_count, 0);
}
