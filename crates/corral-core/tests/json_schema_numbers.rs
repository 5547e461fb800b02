//! The JSON Schema number languages against recorded ones: `tests/fixtures/numbers.json`
//! holds inputs (the test suite's bounds and steps, boundaries, seeded random values) with
//! the outputs of an independent implementation (in Python), recorded once and kept as
//! regression data (the "Python" side of the messages below): a Python `re` source per
//! language, compiled by the core's Python-`re` front-end and compared as a language with
//! the automaton of the HIR built here, and a `multiple_dfa` transition table per step,
//! compared with the automaton built here.
//!
//! The recorded functions of a decimal were run with a wide `Decimal` context: under the
//! default one (28 digits) they round a bound of more significant digits, so they are not
//! exact there; the fixture marks those cases `rounded`, and this side is exact.

#[path = "support/language.rs"]
mod language;

use corral_core::automata::Dfa;
use corral_core::frontend::regex::{compile, compile_hir};
use corral_core::json_schema::numbers::{self, Decimal};
use corral_core::{Error, Limits, Result};
use regex_syntax::hir::Hir;
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/numbers.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture is there")).expect("the fixture is JSON")
}

/// Limits under which the longest bounds of the fixture (300-digit ones) build on both
/// sides: the Python regex text nests three levels per digit, past the default limit.
fn deep() -> Limits {
    Limits { regex_nest_limit: 4000, ..Limits::default() }
}

fn dec(v: &Value) -> Decimal {
    let text = v.as_str().expect("a number as text");
    Decimal::parse(text).unwrap_or_else(|| panic!("not JSON number text: {text}"))
}

fn dec_opt(v: &Value) -> Option<Decimal> {
    (!v.is_null()).then(|| dec(v))
}

/// The Rust side of one case: the HIR (None: the empty range).
fn rust_side(fun: &str, args: &[Value], limits: &Limits) -> Result<Option<Hir>> {
    let strict = || args[1].as_bool().expect("strict is a bool");
    match fun {
        "decimal_ge" => numbers::decimal_ge(&dec(&args[0]), strict(), limits).map(Some),
        "decimal_le" => numbers::decimal_le(&dec(&args[0]), strict(), limits).map(Some),
        "canonical_forms" => numbers::canonical_forms(&dec(&args[0]), limits).map(Some),
        "int_range" => numbers::int_range(dec_opt(&args[0]).as_ref(), dec_opt(&args[1]).as_ref(), limits),
        "uint_range" => numbers::uint_range(&dec(&args[0]), dec_opt(&args[1]).as_ref(), limits),
        _ => panic!("unknown function {fun}"),
    }
}

/// Why the two sides of a case differ (None: they agree).
fn compare(python: Option<&str>, rust: Result<Option<Hir>>, limits: &Limits) -> Option<String> {
    match (python, rust) {
        (None, Ok(None)) => None,
        (Some(src), Ok(Some(hir))) => {
            let py = compile(src, limits).map_err(|e| format!("the Python regex does not compile: {e}"));
            let rs = compile_hir(&hir, "the Rust HIR", limits).map_err(|e| format!("the Rust HIR does not build: {e}"));
            match (py, rs) {
                (Ok(py), Ok(rs)) => Some(language::describe(&py, &rs)).filter(|m| !m.is_empty()),
                (Err(e), _) | (_, Err(e)) => Some(e),
            }
        }
        (None, Ok(Some(_))) => Some("Python: empty; Rust: a language".to_string()),
        (Some(_), Ok(None)) => Some("Python: a language; Rust: empty".to_string()),
        (_, Err(e)) => Some(format!("Rust failed: {e}")),
    }
}

#[test]
fn bounds_ranges_and_spellings_match_the_recorded_languages() {
    let data = fixture();
    let cases = data["cases"].as_array().expect("cases");
    assert!(cases.len() > 1000, "the fixture lost its cases");
    let mut disagreements = Vec::new();
    let mut builds_where_python_cannot = 0;
    let rounded = cases.iter().filter(|c| c["rounded"].as_bool() == Some(true)).count();
    for case in cases {
        let (fun, args, src) = (case["fn"].as_str().unwrap(), case["args"].as_array().unwrap(), case["src"].as_str());
        if let Some(why) = compare(src, rust_side(fun, args, &deep()), &deep()) {
            disagreements.push(format!("{fun}{args:?}: {why}"));
        }
        // Under the default limits, whatever the Python regex text builds, the HIR builds.
        let rust_default = rust_side(fun, args, &Limits::default()).and_then(|h| match h {
            Some(h) => compile_hir(&h, fun, &Limits::default()).map(|_| ()),
            None => Ok(()),
        });
        let python_default = src.map_or(Ok(()), |s| compile(s, &Limits::default()).map(|_| ()));
        match (python_default, rust_default) {
            (Ok(()), Err(e)) => disagreements.push(format!("{fun}{args:?}: fails under the default limits: {e}")),
            (Err(_), Ok(())) => builds_where_python_cannot += 1,
            _ => {}
        }
    }
    eprintln!(
        "{} cases, {} agree ({rounded} of them where the recorded side, under a 28-digit context, rounds the bound); \
         {builds_where_python_cannot} build under the default limits where the Python regex text does not",
        cases.len(),
        cases.len() - disagreements.len()
    );
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.join("\n"));
}

/// A builder of one of the fixed languages.
type FixedLanguage = fn() -> Hir;

#[test]
fn fixed_languages_match_the_recorded_ones() {
    let data = fixture();
    let constants: [(&str, FixedLanguage); 10] = [
        ("NUMBER", numbers::number),
        ("PLAIN_NUMBER", numbers::plain_number),
        ("UINT", numbers::uint),
        ("INTEGER", numbers::integer),
        ("CANONICAL_INTEGER", numbers::canonical_integer),
        ("CANONICAL_PLAIN_FLOAT", numbers::canonical_plain_float),
        ("CANONICAL_EXP_FLOAT", numbers::canonical_exp_float),
        ("CANONICAL_PLAIN_NUMBER", numbers::canonical_plain_number),
        ("CANONICAL_NUMBER", numbers::canonical_number),
        ("CANONICAL_EXP_INTEGRAL", numbers::canonical_exp_integral),
    ];
    let in_fixture = data["constants"].as_object().expect("constants");
    assert_eq!(in_fixture.len(), constants.len(), "a fixed language of the Python module has no Rust counterpart");
    for (name, build) in constants {
        let src = in_fixture[name].as_str().expect("a source");
        let why = compare(Some(src), Ok(Some(build())), &Limits::default());
        assert!(why.is_none(), "{name}: {}", why.unwrap_or_default());
    }
}

/// The automaton of a Python `multiple_dfa` table (targets per character of `alphabet`).
fn table_dfa(table: &Value, alphabet: &str, limits: &Limits) -> Dfa {
    let moves: Vec<Vec<i64>> = serde_json::from_value(table["moves"].clone()).expect("moves");
    let finals: Vec<usize> = serde_json::from_value(table["finals"].clone()).expect("finals");
    let start = table["start"].as_u64().expect("start") as usize;
    let mut class_of = [0u8; 256];
    for (i, b) in alphabet.bytes().enumerate() {
        class_of[b as usize] = i as u8 + 1;
    }
    let next = |s: usize, b: u8| {
        let class = class_of[b as usize] as usize;
        let t = *moves[s].get(class.checked_sub(1)?)?;
        usize::try_from(t).ok()
    };
    Dfa::from_automaton(start, &class_of, next, |s| finals.contains(&s), limits, "a Python table").expect("a table builds")
}

#[test]
fn multiple_automata_match_the_recorded_languages() {
    let data = fixture();
    let alphabet = data["alphabet"].as_str().expect("alphabet");
    let (mut built, mut refused) = (0, 0);
    for case in data["multiples"].as_array().expect("multiples") {
        let step = dec(&case["step"]);
        let limits = Limits { max_multiple_states: case["max_states"].as_u64().unwrap() as usize, ..Limits::default() };
        match (&case["dfa"], numbers::multiple_dfa(&step, &limits)) {
            (Value::Null, Err(Error::LimitExceeded { limit: "max_multiple_states", .. })) => refused += 1,
            (Value::Null, other) => panic!("multipleOf {step}: Python refuses it, Rust gives {other:?}"),
            (table, Ok(rust)) => {
                let python = table_dfa(table, alphabet, &limits);
                let why = language::describe(&python, &rust);
                assert!(why.is_empty(), "multipleOf {step}: {why}");
                built += 1;
            }
            (_, Err(e)) => panic!("multipleOf {step}: Python builds it, Rust fails: {e}"),
        }
    }
    eprintln!("{built} residue automata agree, {refused} steps refused by both");
    assert!(built >= 30 && refused >= 3, "the fixture lost its steps");
}
