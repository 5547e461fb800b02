//! Tests of `perm!` through the whole pipeline (parse → lower → Earley), against a
//! direct check of the rules on sequences of entries.

use super::*;
use crate::error::Error;
use crate::frontend::{parse, Dialect};
use crate::grammar::shortest::Shortest;
use crate::grammar::{lower, sample};
use crate::limits::Limits;

fn grammar(text: &str) -> EarleyGrammar {
    let limits = Limits::default();
    let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
    EarleyGrammar::new(lower(&ast, None, &limits, None).unwrap(), &limits)
}

fn err(text: &str) -> Error {
    let limits = Limits::default();
    match parse(text, Dialect::Ebnf, &limits) {
        Err(e) => e,
        Ok(ast) => lower(&ast, None, &limits, None).unwrap_err(),
    }
}

/// `Some(accepting)` if the input is a live prefix, None if the parser refused a byte.
fn read(g: &EarleyGrammar, input: &str) -> Option<Chart> {
    let mut chart = g.start_chart().unwrap();
    advance_chart(g, &mut chart, input.as_bytes()).unwrap().then_some(chart)
}

fn accepts(g: &EarleyGrammar, input: &str) -> bool {
    read(g, input).is_some_and(|c| c.is_accepting())
}

/// A perm of single-letter entries: (letter, required, repeat).
struct Spec {
    entries: Vec<(char, bool, bool)>,
    min: u32,
    max: Option<u32>,
}

impl Spec {
    fn grammar_text(&self) -> String {
        let entries: Vec<String> = self
            .entries
            .iter()
            .map(|&(c, req, rep)| {
                format!(
                    "\"{c}\"{}",
                    match (req, rep) {
                        (true, false) => "",
                        (false, false) => "?",
                        (false, true) => "*",
                        (true, true) => "+",
                    }
                )
            })
            .collect();
        let max = self.max.map_or(String::new(), |m| m.to_string());
        format!(r#"start ::= "[" perm!{{{},{max}}}(",", {}) "]" ;"#, self.min, entries.join(", "))
    }

    /// Is `letters` (the entries in order) a list of this perm?
    fn valid(&self, letters: &[char]) -> bool {
        let n = letters.len() as u32;
        if n < self.min || self.max.is_some_and(|m| n > m) {
            return false;
        }
        self.entries.iter().all(|&(c, req, rep)| {
            let k = letters.iter().filter(|&&x| x == c).count();
            (!req || k >= 1) && (rep || k <= 1)
        }) && letters.iter().all(|x| self.entries.iter().any(|e| e.0 == *x))
    }

    fn text(letters: &[char]) -> String {
        format!("[{}]", letters.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","))
    }
}

/// Every sequence of up to `len` letters from `alphabet`.
fn sequences(alphabet: &[char], len: usize) -> Vec<Vec<char>> {
    let mut out = vec![Vec::new()];
    let mut layer = vec![Vec::new()];
    for _ in 0..len {
        let mut next = Vec::new();
        for s in &layer {
            for &c in alphabet {
                let mut t: Vec<char> = s.clone();
                t.push(c);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        layer = next;
    }
    out
}

fn specs() -> Vec<Spec> {
    let mut out = vec![
        Spec { entries: vec![('a', true, false), ('b', false, false), ('c', false, true)], min: 0, max: None },
        Spec {
            entries: vec![('a', false, false), ('b', false, false), ('c', false, false), ('d', false, false)],
            min: 2,
            max: Some(3),
        },
        Spec { entries: vec![('a', true, false), ('b', false, false), ('c', false, false)], min: 0, max: Some(2) },
        Spec { entries: vec![('a', true, true), ('b', true, false)], min: 3, max: Some(4) },
        Spec { entries: vec![('a', false, false), ('b', false, false)], min: 0, max: None },
        Spec { entries: vec![('a', false, true)], min: 0, max: Some(2) },
    ];
    // A deterministic spread of the rest.
    let mut x = 12345u64;
    for _ in 0..30 {
        let mut entries = Vec::new();
        for c in ['a', 'b', 'c', 'd'].iter().take(2 + (x % 3) as usize) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            entries.push((*c, (x >> 33) % 3 == 0, (x >> 40) % 4 == 0));
        }
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let min = ((x >> 35) % 3) as u32;
        let max = if (x >> 45) % 3 == 0 { None } else { Some(min + ((x >> 50) % 3) as u32) };
        out.push(Spec { entries, min, max });
    }
    out
}

#[test]
fn lists_are_accepted_exactly_when_the_rules_hold() {
    for spec in specs() {
        let text = spec.grammar_text();
        let g = match lower(&parse(&text, Dialect::Ebnf, &Limits::default()).unwrap(), None, &Limits::default(), None) {
            Ok(cfg) => EarleyGrammar::new(cfg, &Limits::default()),
            // A perm that allows no list at all: no sequence may be valid.
            Err(e) => {
                let letters: Vec<char> = spec.entries.iter().map(|e| e.0).chain(['z']).collect();
                assert!(sequences(&letters, 5).iter().all(|s| !spec.valid(s)), "{text}: {e}");
                continue;
            }
        };
        let letters: Vec<char> = spec.entries.iter().map(|e| e.0).chain(['z']).collect();
        for seq in sequences(&letters, 5) {
            let s = Spec::text(&seq);
            assert_eq!(accepts(&g, &s), spec.valid(&seq), "{text} on {s}");
        }
    }
}

#[test]
fn every_live_prefix_can_be_finished_and_the_completion_is_a_list() {
    for spec in specs() {
        let text = spec.grammar_text();
        let Ok(cfg) = lower(&parse(&text, Dialect::Ebnf, &Limits::default()).unwrap(), None, &Limits::default(), None) else {
            continue;
        };
        let g = EarleyGrammar::new(cfg, &Limits::default());
        let shortest = Shortest::new(g.cfg());
        let letters: Vec<char> = spec.entries.iter().map(|e| e.0).collect();
        for seq in sequences(&letters, 4) {
            let full = Spec::text(&seq);
            // Every prefix of the text (without the closing bracket): live or not.
            for cut in 1..full.len() {
                let prefix = &full[..cut];
                let Some(chart) = read(&g, prefix) else { continue };
                let rest = chart.completion(&g, &shortest, 1 << 16).unwrap();
                let rest = rest.unwrap_or_else(|| panic!("{text}: live prefix {prefix} has no completion"));
                let done = format!("{prefix}{}", String::from_utf8(rest).unwrap());
                let inner: Vec<char> =
                    done[1..done.len() - 1].split(',').filter(|x| !x.is_empty()).map(|x| x.chars().next().unwrap()).collect();
                assert!(spec.valid(&inner) && accepts(&g, &done), "{text}: {prefix} completed to {done}");
            }
        }
        // A live prefix exists only if some list starts with it: "[" then a letter that
        // can begin a list.
        for &c in &letters {
            let live = read(&g, &format!("[{c}")).is_some();
            let wanted = sequences(&letters, 5).iter().any(|s| s.first() == Some(&c) && spec.valid(s));
            assert_eq!(live, wanted, "{text}: [{c}");
        }
    }
}

#[test]
fn sampled_sentences_are_lists() {
    for spec in specs() {
        let text = spec.grammar_text();
        let Ok(cfg) = lower(&parse(&text, Dialect::Ebnf, &Limits::default()).unwrap(), None, &Limits::default(), None) else {
            continue;
        };
        for seed in 0..20 {
            let s = String::from_utf8(sample::sample(&cfg, seed, 30, usize::MAX).unwrap()).unwrap();
            let inner: Vec<char> =
                s[1..s.len() - 1].split(',').filter(|x| !x.is_empty()).map(|x| x.chars().next().unwrap()).collect();
            assert!(spec.valid(&inner), "{text}: sampled {s}");
        }
    }
}

#[test]
fn two_hundred_entries_in_any_order() {
    let entries: Vec<String> = (0..200).map(|i| format!("\"k{i}\"{}", if i % 50 == 0 { "" } else { "?" })).collect();
    let g = grammar(&format!(r#"start ::= "{{" perm!(",", {}) "}}" ;"#, entries.join(", ")));
    // A permutation of all 200, and of a few with the required ones.
    let mut order: Vec<usize> = (0..200).collect();
    let mut x = 7u64;
    for i in (1..order.len()).rev() {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        order.swap(i, (x >> 33) as usize % (i + 1));
    }
    let text = |keys: &[usize]| format!("{{{}}}", keys.iter().map(|k| format!("k{k}")).collect::<Vec<_>>().join(","));
    assert!(accepts(&g, &text(&order)));
    assert!(accepts(&g, &text(&[150, 7, 100, 0, 50])));
    assert!(!accepts(&g, &text(&[150, 7, 100, 0])), "k50 is required");
    assert!(!accepts(&g, &text(&[150, 7, 100, 0, 50, 7])), "k7 twice");
    let mut twice = order.clone();
    twice.push(order[17]);
    assert!(!accepts(&g, &text(&twice)));
    // After all but one required key, the parser still knows what is left.
    let chart = read(&g, "{k0,k50,k100,").unwrap();
    let shortest = Shortest::new(g.cfg());
    let rest = String::from_utf8(chart.completion(&g, &shortest, 1 << 16).unwrap().unwrap()).unwrap();
    assert_eq!(rest, "k150}");
}

#[test]
fn lists_nest_and_recurse() {
    let g = grammar(r#"v ::= "{" perm!(",", ("a:" v)?, "b:1", ("c:" v)*) "}" | "0" ;"#);
    for ok in ["0", "{b:1}", "{a:0,b:1}", "{b:1,a:{b:1}}", "{c:0,b:1,c:{c:0,b:1,a:0}}"] {
        assert!(accepts(&g, ok), "{ok}");
    }
    for bad in ["{}", "{a:0}", "{a:0,b:1,a:0}", "{b:1,a:{a:0}}", "{b:1,b:1}", "{c:0,c:{b:1,b:1},b:1}"] {
        assert!(!accepts(&g, bad), "{bad}");
    }
}

#[test]
fn no_separator_and_a_separator_that_is_a_rule() {
    let g = grammar(r#"start ::= perm!("", "x", "y"?, "z"?) ; "#);
    for (s, ok) in [("x", true), ("zyx", true), ("yx", true), ("xx", false), ("y", false), ("zz", false)] {
        assert_eq!(accepts(&g, s), ok, "{s}");
    }
    let g = grammar(r#"start ::= "(" perm!(sep, "x", "y"?) ")" ; sep ::= ws "," ws ; ws ::= " "* ;"#);
    for (s, ok) in [("(x)", true), ("(y , x)", true), ("(x,y)", true), ("(x  ,y)", true), ("(y)", false), ("(x,)", false)] {
        assert_eq!(accepts(&g, s), ok, "{s}");
    }
}

#[test]
fn bad_perms_are_errors_at_their_place() {
    let e = err(r#"start ::= perm!(",", "a"{2}) ;"#).to_string();
    assert!(e.contains("line 1, column 25") && e.contains("`?`, `*` or `+`"), "{e}");
    let e = err(r#"start ::= perm!(",", "a", "b"*, ("c"?)?) ;"#).to_string();
    assert!(e.contains("empty string"), "{e}");
    let e = err(r#"start ::= "x" perm!(" "?, "a", "b") ;"#).to_string();
    assert!(e.contains("separator") && e.contains("empty string"), "{e}");
    let e = err(r#"start ::= perm!(",") ;"#).to_string();
    assert!(e.contains("at least one entry"), "{e}");
    let e = err(r#"start ::= perm!{3,2}(",", "a") ;"#).to_string();
    assert!(e.contains("max < min"), "{e}");
    // Inside a boolean operator: not regular.
    let e = err(r#"start ::= not!(perm!(",", "a")) ;"#).to_string();
    assert!(e.contains("not! needs a regular argument"), "{e}");
    // A least count beyond what a grammar may spell out is a limit, not an allocation.
    match err(r#"start ::= perm!{4294967295,}(",", "x"*) ;"#) {
        Error::LimitExceeded { limit, .. } => assert_eq!(limit, "max_grammar_productions"),
        e => panic!("{e}"),
    }
    // A perm that can never be finished makes its rule produce nothing.
    let e = err(r#"start ::= perm!{3,}(",", "a"?, "b"?) ;"#).to_string();
    assert!(e.contains("no string"), "{e}");
}

#[test]
fn wide_lists_build_and_finish_without_quadratic_passes() {
    // Many entries, two required: lowering, parsing and completion each pass over the
    // entries a few times, not once per entry.
    const N: usize = 20_000;
    let entries: Vec<String> = (0..N).map(|i| format!("\"k{i}\"{}", if i == 5 || i == N - 1 { "" } else { "?" })).collect();
    let g = grammar(&format!(r#"start ::= "{{" perm!(",", {}) "}}" ;"#, entries.join(", ")));
    let chart = read(&g, "{k7,k5,").unwrap();
    let shortest = Shortest::new(g.cfg());
    let rest = String::from_utf8(chart.completion(&g, &shortest, 1 << 16).unwrap().unwrap()).unwrap();
    assert_eq!(rest, format!("k{}}}", N - 1));
    assert!(accepts(&g, &format!("{{k{},k3,k5}}", N - 1)) && !accepts(&g, &format!("{{k{},k5,k5}}", N - 1)));
}

#[test]
fn an_entry_may_be_the_list_itself() {
    // Entry 0 is a whole nested list (no brackets): its production `L → L` starts a list,
    // it does not add to one, and the nested list must be finished.
    let g = grammar(r#"a ::= perm!(",", a?, "x") ;"#);
    for (s, ok) in [("x", true), ("x,x", true), ("x,x,x", true), ("", false), (",x", false), ("x,", false)] {
        assert_eq!(accepts(&g, s), ok, "{s}");
    }
    // Required, it recurses forever: no string at all.
    let e = err(r#"a ::= perm!(",", a, "x") ;"#).to_string();
    assert!(e.contains("can never produce a finite string"), "{e}");
    // Optional ones that need the list are dropped; the rest stays.
    let g = grammar(r#"a ::= "<" perm!(",", (a "!")?, "y"?, "x") ">" ;"#);
    assert!(accepts(&g, "<x>") && accepts(&g, "<<x>!,x>") && !accepts(&g, "<<y>!,x>"));
}
