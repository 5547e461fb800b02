use super::render::render_json;
use super::*;
use crate::frontend::regex::prebuilt;

fn limits() -> Limits {
    Limits::default()
}

#[test]
fn rendering_writes_each_set_as_its_json_encodings() {
    let cases = [
        ("[0-9]{4}", "(?:[0-9]){4}"),
        ("a|bc", "(?:a|bc)"),
        ("x(?:a|b)?-", "x(?:a|b)?[\\u002d]"),
        ("[13578]", "[1357-8]"),
        (r"\.", "[\\u002e]"),
        ("[^/~]", "(?:[ -!#-\\u002e0-\\u005b\\u005d-\\u007d\\u007f-\\ud7ff\\ue000-\\U0010ffff]|\\\\[btnfr\"\\\\]|\\\\u00(?:0[0-7bef]|1[0-9a-f]))"),
        ("\"", "\\\\\""),
        (r"[\\]", "\\\\\\\\"),
        ("a{2,}b{0,3}c+?", "(?:a){2,}(?:b){0,3}(?:c)+"),
        ("x{a}", "x[\\u007b]a[\\u007d]"),
        (r"\d", "[0-9]"),
    ];
    for (pattern, rendered) in cases {
        assert_eq!(render_json(pattern).unwrap(), rendered, "{pattern}");
    }
    for bad in ["(?=a)", "a)", "(a", "[a", "^a", "a$"] {
        assert!(render_json(bad).is_err(), "{bad}");
    }
}

#[test]
fn every_format_renders_and_ships_prebuilt() {
    let shipped = prebuilt::patterns();
    for name in FORMAT_NAMES {
        let source = format_source(name).unwrap();
        assert!(!source.is_empty() && value_pattern(name).is_some(), "{name}");
        assert!(shipped.contains(&source), "{name}: no prebuilt entry");
    }
    assert_eq!(format_sources().len(), 2 * FORMAT_NAMES.len());
    let mut sorted = FORMAT_NAMES;
    sorted.sort_unstable();
    assert_eq!(sorted, FORMAT_NAMES);
}

/// Each of `yes` is in format `name` (as JSON writes it between the quotes), none of `no`.
fn check(name: &str, yes: &[&str], no: &[&str]) {
    let dfa = format_dfa(name, &limits()).unwrap().unwrap();
    for s in yes {
        assert!(dfa.matches(s.as_bytes()), "{s:?} is a {name}");
    }
    for s in no {
        assert!(!dfa.matches(s.as_bytes()), "{s:?} is not a {name}");
    }
}

#[test]
fn formats_accept_what_their_rfcs_allow() {
    check("date", &["2020-02-29", "1999-12-31"], &["2019-02-29", "2020-13-01", "2020-04-31", "20200101"]);
    check("time", &["23:59:60Z", "08:30:06.283185+01:00"], &["15:59:60-08:00", "24:00:00Z", "08:30:06"]);
    check("date-time", &["1963-06-19T08:30:06.283185Z"], &["1963-06-19 08:30:06Z"]);
    check("duration", &["P4DT12H30M5S", "P1W", "PT0S"], &["P", "PT", "P1D2H", "p1d"]);
    check("ipv4", &["192.168.0.1", "0.0.0.0"], &["256.1.1.1", "01.1.1.1", "1.1.1"]);
    check("ipv6", &["::1", "1:2:3:4:5:6:7:8", "::ffff:192.168.0.1"], &["1:2:3:4:5:6:7:8:9", ":::", "12345::"]);
    check("email", &["joe.bloggs@example.com", "\\\"a b\\\"@x", "a@[127.0.0.1]"], &["2962", "a..b@x", "a@-x"]);
    check("idn-email", &["실례@실례.테스트"], &["2962"]);
    check("hostname", &["www.example.com", "xn--4gbwdl.xn--wgbh1c"], &["-a.com", "a_b.com", &"a".repeat(64)]);
    check("uri", &["http://example.com/a?b#c", "urn:isbn:0451450523"], &["//example.com", "\\\\\\\\WINDOWS"]);
    check("uri-reference", &["/a/b", "#frag", ""], &["\\\\\\\\WINDOWS", "#frag\\\\"]);
    check("iri", &["http://ƒøø.ßår/?∂éœ=πîx#πîüx"], &["/relative"]);
    check("iri-reference", &["//ƒøø.ßår/"], &["#€frag\\\\"]);
    check("uri-template", &["http://example.com/dictionary/{term:1}/{term}", "'{x}'"], &["{x", "{=x}"]);
    check(
        "uuid",
        &["2EB8AA08-AA98-11EA-B4AA-73B441D16380"],
        &["2eb8aa08-aa98-11ea-b4aa-73b441d1638", "2eb8aa08aa9811eab4aa73b441d16380"],
    );
    check("json-pointer", &["/foo/0", "", "/~0~1", "/\\\"x"], &["foo", "/~2"]);
    check("relative-json-pointer", &["0#", "1/a"], &["-1", "01", "0##"]);
}

#[test]
fn string_and_value_automata() {
    let quoted = format_string_dfa("ipv4", &limits()).unwrap().unwrap();
    assert!(quoted.matches(b"\"10.0.0.1\"") && !quoted.matches(b"10.0.0.1"));
    let value = value_dfa("json-pointer", &limits()).unwrap().unwrap();
    assert!(value.matches(b"/a\"b") && !value.matches(b"a"));
    // A limit the prebuilt entry does not fit falls back to a compile, which fails on it.
    let small = Limits { max_dfa_states: 20, ..Limits::default() };
    assert!(format_dfa("uri", &small).is_err());
    assert_eq!(kind("date"), FormatKind::Regular);
}
