//! The `format` languages against recorded ones: `tests/fixtures/formats.json` holds each
//! format's pattern, the source rendered from it, and every string the JSON Schema Test
//! Suite checks a format on, with the pattern's verdict (Python's `re`), as an independent
//! implementation (in Python) gave them: recorded once, and kept as regression data (the
//! "Python" side of the messages below).

#[path = "support/language.rs"]
mod language;

use corral_core::frontend::regex::{compile, prebuilt};
use corral_core::json_schema::formats::{self, FormatKind};
use corral_core::Limits;
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/formats.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture is there")).expect("the fixture is JSON")
}

#[test]
fn patterns_and_rendered_sources_are_the_recorded_ones() {
    let data = fixture();
    let entries = data["formats"].as_array().expect("formats");
    let names: Vec<&str> = entries.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, formats::FORMAT_NAMES, "the same formats, in the same order");
    for f in entries {
        let name = f["name"].as_str().unwrap();
        assert_eq!(formats::value_pattern(name), f["pattern"].as_str(), "the pattern of {name}");
        assert_eq!(formats::format_source(name), f["source"].as_str(), "the rendered source of {name}");
        assert_eq!(formats::kind(name), FormatKind::Regular);
    }
    let gaps: Vec<&str> = data["gaps"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
    let ours: Vec<&str> = formats::FORMAT_NAMES.iter().copied().filter(|n| formats::gap(n).is_some()).collect();
    let mut sorted = ours.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, gaps, "the same formats have gaps");
}

#[test]
fn every_source_ships_prebuilt_and_means_its_pattern() {
    let shipped = prebuilt::patterns();
    let missing: Vec<String> = formats::format_sources().into_iter().filter(|p| !shipped.contains(&p.as_str())).collect();
    assert!(missing.is_empty(), "{} format sources have no prebuilt entry: {:?}", missing.len(), missing);
    let data = fixture();
    let limits = Limits::default();
    for f in data["formats"].as_array().unwrap() {
        let (name, source) = (f["name"].as_str().unwrap(), f["source"].as_str().unwrap());
        let fresh = compile(source, &limits).expect("the Python source compiles");
        let ours = formats::format_dfa(name, &limits).unwrap().expect("a language");
        let why = language::describe(&fresh, &ours);
        assert!(why.is_empty(), "{name}: {why}");
        let quoted = formats::format_string_dfa(name, &limits).unwrap().expect("a language");
        let fresh_quoted = compile(&format!("\"{source}\""), &limits).unwrap();
        let why = language::describe(&fresh_quoted, &quoted);
        assert!(why.is_empty(), "{name} between quotes: {why}");
    }
}

#[test]
fn suite_strings_get_the_python_verdict() {
    let data = fixture();
    let limits = Limits::default();
    let strings = data["strings"].as_array().expect("strings");
    let mut disagreements = Vec::new();
    let mut checked = 0;
    for name in formats::FORMAT_NAMES {
        let encoded = formats::format_dfa(name, &limits).unwrap().unwrap();
        let quoted = formats::format_string_dfa(name, &limits).unwrap().unwrap();
        let decoded = formats::value_dfa(name, &limits).unwrap().unwrap();
        for s in strings.iter().filter(|s| s["format"] == name) {
            let text = s["encoded"].as_str().unwrap();
            let value: String = serde_json::from_str(&format!("\"{text}\"")).expect("a JSON string's content");
            let expected = s["matches"].as_bool().unwrap();
            let got = [
                encoded.matches(text.as_bytes()),
                quoted.matches(format!("\"{text}\"").as_bytes()),
                decoded.matches(value.as_bytes()),
            ];
            if got != [expected; 3] {
                disagreements.push(format!("{name} {text:?}: Python {expected}, Rust {got:?}"));
            }
            checked += 1;
        }
    }
    eprintln!("{checked} suite strings, {} agree with the Python patterns", checked - disagreements.len());
    assert!(checked > 500, "the fixture lost its strings: {checked}");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn names_without_a_language() {
    let limits = Limits::default();
    for name in ["idn-hostname", "regex"] {
        assert_eq!(formats::kind(name), FormatKind::Inexpressible);
        assert!(formats::format_dfa(name, &limits).unwrap().is_none());
    }
    for name in ["color", "int32", "", "Date"] {
        assert_eq!(formats::kind(name), FormatKind::Unknown);
        assert!(formats::value_pattern(name).is_none() && formats::format_source(name).is_none());
    }
}
