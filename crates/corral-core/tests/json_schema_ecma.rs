//! Differential test of the ECMAScript patterns of the JSON Schema translator
//! (`corral_core::json_schema::ecma`) against recorded renderings.
//!
//! `tests/fixtures/ecma.json` holds, for each pattern of a corpus, the Python `re` sources
//! of its search and full languages (over the JSON encoding and over the decoded value),
//! or its error, as an independent implementation (in Python) rendered them: recorded
//! once, and kept as regression data (the "Python" side of the messages below).
//! Each source is compiled by the core's Python-`re` front-end; the HIR built in Rust is
//! determinized by the same builder; the two DFAs must accept the same bytes. Errors must
//! agree: the same patterns refused, for the same reason (invalid or unsupported), at the
//! same position, with the same message. The recording predates assertions (look-around,
//! word boundaries, anchors inside a pattern) and Unicode property escapes, which it
//! refuses: there the Rust side may build the language (its meaning is checked against a
//! JavaScript engine by `tests/corpus/ecma_search.jsonl` and `ecma_properties.jsonl`) or
//! refuse it for another reason.

use corral_core::automata::Dfa;
use corral_core::frontend::regex::{compile, compile_hir};
use corral_core::json_schema::ecma::{self, Language};
use corral_core::{Error, Limits};
use regex_syntax::hir::Hir;
use serde_json::Value;

#[path = "support/language.rs"]
#[allow(dead_code)] // a support module shared by tests that each use part of it
mod language;
use language::difference;

/// How the languages of the corpus agreed.
#[derive(Default, Debug)]
struct Tally {
    /// DFAs (one per language and encoding) compared and found equal.
    equal: usize,
    /// The patterns of DFAs past the same limit on both sides.
    past_limit: Vec<String>,
    /// Languages refused by both, in the same way.
    refused: usize,
    /// Languages with a count past the HIR's bound: refused in Rust, by `re` in Python.
    count_refused: usize,
    /// Languages with assertions or property escapes the recording refuses, built in Rust.
    assertions_built: usize,
}

/// The recording's refusals of assertions and Unicode property escapes, which corral now
/// builds (see the module docs).
fn refuses_an_assertion(message: &str) -> bool {
    [
        "anchor `",
        "look-around is not supported",
        "word boundaries",
        "a quantifier cannot follow an anchor",
        "Unicode property escapes",
    ]
    .iter()
    .any(|m| message.starts_with(m))
}

/// A DFA or the empty language (both front-ends report a language without strings as
/// `EmptyLanguage`).
fn dfa_of(built: Result<Dfa, Error>, what: &str) -> Result<Option<Dfa>, String> {
    match built {
        Ok(d) => Ok(Some(d)),
        Err(Error::EmptyLanguage { .. }) => Ok(None),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// Does the HIR accept the same bytes as the Python `re` source? An explanation if not.
///
/// A language whose DFA is past a limit on the Python side must be past the same limit on
/// the HIR side (the unanchored search of a long counted pattern can be); such a language
/// is counted apart.
fn same_language(python_source: &str, hir: &Hir, pattern: &str, limits: &Limits, tally: &mut Tally) -> Result<(), String> {
    let (expected, got) = (compile(python_source, limits), compile_hir(hir, pattern, limits));
    if let Err(Error::LimitExceeded { limit, .. }) = &expected {
        return match &got {
            Err(Error::LimitExceeded { limit: l, .. }) if l == limit => {
                tally.past_limit.push(pattern.to_string());
                Ok(())
            }
            _ => Err(format!("the Python rendering is past Limits.{limit}, the HIR is not")),
        };
    }
    let expected = dfa_of(expected, "the Python rendering")?;
    let got = dfa_of(got, "the HIR")?;
    tally.equal += 1; // (an error is reported whatever the count)
    match (expected, got) {
        (None, None) => Ok(()),
        (Some(_), None) => Err("the HIR matches nothing".into()),
        (None, Some(_)) => Err("the Python rendering matches nothing, the HIR matches".into()),
        (Some(e), Some(g)) => match difference(&e, &g) {
            None => Ok(()),
            Some(w) => Err(format!(
                "they differ on {:?} (accepted by {})",
                String::from_utf8_lossy(&w),
                if e.matches(&w) { "Python" } else { "the HIR" }
            )),
        },
    }
}

/// The error of a repetition count past the HIR's bound (and Python's `re`'s).
const TOO_LARGE: &str = "the repetition number is too large";

/// Does the Rust outcome of one language agree with the Python one (`expected`)?
fn agree(
    expected: &Value,
    got: Result<Language, Error>,
    pattern: &str,
    limits: &Limits,
    tally: &mut Tally,
) -> Result<(), String> {
    if let Some(message) = expected.get("error") {
        if refuses_an_assertion(message.as_str().unwrap_or_default()) {
            return match &got {
                Ok(lang) if lang.has_assertions() || message.as_str().is_some_and(|m| m.starts_with("Unicode property")) => {
                    tally.assertions_built += 1;
                    Ok(())
                }
                Ok(_) => Err(format!("the recording refuses an assertion ({message}), Rust reads none")),
                Err(Error::RegexSyntax { .. } | Error::UnsupportedRegex { .. }) => {
                    tally.refused += 1;
                    Ok(())
                }
                Err(e) => Err(format!("the recording refuses an assertion ({message}), Rust: {e}")),
            };
        }
        let (msg, at, unsupported) = match &got {
            Err(Error::RegexSyntax { message, position, .. }) => (message, *position, false),
            Err(Error::UnsupportedRegex { construct, position, .. }) => (construct, *position, true),
            Err(e) => return Err(format!("Python refuses it ({message}), Rust: {e}")),
            Ok(_) => return Err(format!("Python refuses it ({message}), Rust accepts it")),
        };
        let want = (message.as_str().unwrap_or_default(), expected["position"].as_u64(), expected["unsupported"].as_bool());
        if want != (msg.as_str(), Some(at as u64), Some(unsupported)) {
            return Err(format!("Python refuses it with {want:?}, Rust with {:?}", (msg, at, unsupported)));
        }
        tally.refused += 1;
        return Ok(());
    }
    let json = expected["json"].as_str().unwrap_or_default();
    let value = expected["value"].as_str().unwrap_or_default();
    if let Err(Error::RegexSyntax { message, .. }) = &got {
        // A count past the HIR's bound is refused where it is read; the recorded side
        // renders it, and Python's `re` refuses it (as the core's front-end does).
        if message == TOO_LARGE {
            return match compile(json, limits) {
                Err(Error::RegexSyntax { message, .. }) if message == TOO_LARGE => {
                    tally.count_refused += 1;
                    Ok(())
                }
                other => Err(format!("Rust refuses a count ({message}); the Python rendering gives {other:?}")),
            };
        }
    }
    let lang = got.map_err(|e| format!("Python accepts it, Rust: {e}"))?;
    same_language(json, &lang.json_hir(), pattern, limits, tally).map_err(|e| format!("over the JSON encoding, {e}"))?;
    same_language(value, &lang.value_hir(), pattern, limits, tally).map_err(|e| format!("over the value, {e}"))
}

fn fixtures() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ecma.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("tests/fixtures/ecma.json")).expect("valid JSON")
}

#[test]
fn patterns_mean_what_the_python_translator_makes_of_them() {
    let doc = fixtures();
    let limits = Limits::default();
    let patterns = doc["patterns"].as_array().expect("patterns");
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    for f in patterns {
        let pattern = f["pattern"].as_str().expect("pattern");
        for (kind, got) in [("search", ecma::search_language(pattern, &limits)), ("full", ecma::full_language(pattern, &limits))]
        {
            if let Err(e) = agree(&f[kind], got, pattern, &limits, &mut tally) {
                failures.push(format!("{kind} language of {pattern:?}: {e}"));
            }
        }
    }
    assert!(patterns.len() >= 300, "the corpus is short: {} patterns", patterns.len());
    assert!(failures.is_empty(), "{} of {} languages disagree:\n{}", failures.len(), 2 * patterns.len(), failures.join("\n"));
    eprintln!("{} patterns (a search and a full language each): {tally:?}", patterns.len());
}

#[test]
fn any_json_character_is_the_python_translators() {
    let doc = fixtures();
    let limits = Limits::default();
    let source = doc["json_char"].as_str().expect("json_char");
    same_language(source, &ecma::json_any_char_hir(), "JSON_CHAR", &limits, &mut Tally::default()).unwrap();
}
