//! Structural tags: what each format accepts and refuses, read through the recognizer, and
//! the errors of malformed descriptions, each naming its place.

use serde_json::json;

use super::*;
use crate::parser::{advance_chart, EarleyGrammar};

pub(super) fn compile(spec: Value) -> Grammar {
    structural_tag(&spec.to_string(), &TagOptions::default(), &Limits::default()).unwrap().grammar
}

pub(super) fn accepts(g: &Grammar, text: &str) -> bool {
    let Grammar::Cfg(c) = g else { panic!("a structural tag is a grammar") };
    if let Some(dfa) = &c.cfg.regular {
        let by_dfa = dfa.matches(text.as_bytes());
        assert_eq!(by_dfa, by_parser(c, text), "the DFA and the parser disagree on {text:?}");
    }
    by_parser(c, text)
}

fn by_parser(c: &crate::grammar::CfgGrammar, text: &str) -> bool {
    let g = EarleyGrammar::new(c.cfg.clone(), &Limits::default());
    let mut chart = g.start_chart().unwrap();
    advance_chart(&g, &mut chart, text.as_bytes()).unwrap() && chart.is_accepting()
}

pub(super) fn error(spec: Value) -> String {
    match structural_tag(&spec.to_string(), &TagOptions::default(), &Limits::default()) {
        Ok(_) => panic!("expected an error for {spec}"),
        Err(e) => e.to_string(),
    }
}

fn weather_tag() -> Value {
    json!({
        "type": "tag",
        "begin": "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ",
        "content": {"type": "json_schema", "json_schema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
        "end": "}\n</tool_call>"
    })
}

fn tools(at_least_one: bool, stop_after_first: bool) -> Grammar {
    compile(json!({"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [weather_tag()],
        "at_least_one": at_least_one, "stop_after_first": stop_after_first}}))
}

const CALL: &str = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

#[test]
fn triggered_tags_leave_text_free_until_a_trigger() {
    let g = tools(false, false);
    for ok in ["", "Just text.", "a <tool_cal b", "<tool_call", &format!("Sure.{CALL}"), &format!("{CALL}{CALL} done")] {
        assert!(accepts(&g, ok), "{ok:?}");
    }
    for bad in [
        "text <tool_call> garbage",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>",
        &format!("{CALL}<tool_call>"),
    ] {
        assert!(!accepts(&g, bad), "{bad:?}");
    }
}

/// Triggers that begin one another, or repeat one another: each tag belongs to the
/// shortest trigger it starts with (the one a reader meets first), and every trigger stays
/// out of free text.
#[test]
fn triggers_that_begin_one_another() {
    let tag =
        |begin: &str| json!({"type": "tag", "begin": begin, "content": {"type": "const_string", "value": "1"}, "end": "</a>"});
    let g = |triggers: Value, tags: Value| compile(json!({"type": "triggered_tags", "triggers": triggers, "tags": tags}));
    let only_long = g(json!(["<a", "<ab", "<a"]), json!([tag("<ab>")]));
    for ok in ["", "x<", "x<ab>1</a>y", "<ab>1</a><ab>1</a>"] {
        assert!(accepts(&only_long, ok), "{ok:?}");
    }
    for bad in ["x<a", "x<ac>1</a>", "x<a y", "<ab>2</a>"] {
        assert!(!accepts(&only_long, bad), "{bad:?}");
    }
    let both = g(json!(["<ab", "<a"]), json!([tag("<ab>"), tag("<ac>")]));
    for ok in ["x<ab>1</a>", "x<ac>1</a><ab>1</a>"] {
        assert!(accepts(&both, ok), "{ok:?}");
    }
    assert!(!accepts(&both, "x<ad>1</a>"));
    // A trigger that no tag's begin starts with is still refused.
    assert!(error(json!({"type": "triggered_tags", "triggers": ["<a", "<b"], "tags": [tag("<ab>")]})).contains("/triggers/1"));
}

/// The text up to a trigger is read as a parser reads it: the first trigger written is the
/// one that counts, and no excluded string (nor the enclosing tag's end) occurs in it,
/// across the trigger too.
#[test]
fn text_up_to_a_trigger_is_read_as_a_parser_reads_it() {
    let tag = |begin: &str| json!({"type": "tag", "begin": begin, "content": {"type": "const_string", "value": "1"}, "end": "."});
    let g = |triggers: Value, tags: Value, excludes: Value| {
        compile(json!({"type": "triggered_tags", "triggers": triggers, "tags": tags, "excludes": excludes}))
    };
    // Straddling triggers: in "xab", "ab" ends first.
    let straddle = g(json!(["ab", "bc"]), json!([tag("ab!"), tag("bc!")]), json!([]));
    assert!(accepts(&straddle, "xbc!1.") && accepts(&straddle, "xab!1.bc!1."));
    assert!(!accepts(&straddle, "xabc!1."));
    // An excluded string inside a trigger, or across its start.
    let inside = g(json!(["<a"]), json!([tag("<a>")]), json!(["<"]));
    assert!(accepts(&inside, "x") && !accepts(&inside, "x<a>1.") && !accepts(&inside, "x<"));
    let across = g(json!(["<t"]), json!([tag("<t>")]), json!(["x<"]));
    assert!(accepts(&across, "y<t>1.") && !accepts(&across, "yx<t>1."));
    // The enclosing tag's end inside an inner trigger: that trigger is never written.
    let outer = compile(json!({"type": "tag", "begin": "<o>", "content": {"type": "triggered_tags", "triggers": ["<b"],
        "tags": [tag("<b>")]}, "end": ["</o>", "<"]}));
    assert!(accepts(&outer, "<o>x</o>") && accepts(&outer, "<o>x<") && !accepts(&outer, "<o>x<b>1.</o>"));
}

#[test]
fn at_least_one_and_stop_after_first() {
    let first = tools(true, false);
    assert!(accepts(&first, CALL) && accepts(&first, &format!("{CALL} and {CALL}.")));
    assert!(!accepts(&first, "") && !accepts(&first, "text") && !accepts(&first, &format!("hi {CALL}")));
    let once = tools(false, true);
    assert!(accepts(&once, "") && accepts(&once, "hi") && accepts(&once, &format!("hi {CALL}")));
    assert!(!accepts(&once, &format!("{CALL}{CALL}")) && !accepts(&once, &format!("{CALL} then")));
    let exactly = tools(true, true);
    assert!(accepts(&exactly, CALL) && !accepts(&exactly, "") && !accepts(&exactly, &format!("x{CALL}")));
}

#[test]
fn free_text_in_a_tag_stops_at_its_end() {
    let g = compile(json!({"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
        {"type": "const_string", "value": "A"}]}));
    assert!(accepts(&g, "<think>x < y</think>A") && accepts(&g, "<think></think>A"));
    assert!(!accepts(&g, "<think>a</think>b</think>A") && !accepts(&g, "<think>a</think>"));
    let excludes = compile(json!({"type": "any_text", "excludes": ["ab", "c"]}));
    assert!(accepts(&excludes, "bbaa") && !accepts(&excludes, "xaby") && !accepts(&excludes, "c"));
    // An empty excluded string is refused where it is given, in free text and in a
    // triggered tags' text alike.
    let e = error(json!({"type": "sequence", "elements": [{"type": "any_text", "excludes": ["a", ""]}]}));
    assert!(e.contains("/elements/0/excludes/1") && e.contains("empty"), "{e}");
    let e = error(json!({"type": "triggered_tags", "triggers": ["<a"], "tags": [
        {"type": "tag", "begin": "<a>", "content": {"type": "any_text"}, "end": "</a>"}], "excludes": [""]}));
    assert!(e.contains("/excludes/0"), "{e}");
    // Wherever free text is in the content, it does not hold the end; a nested tag's
    // free text stops at its own end only.
    let any = json!({"type": "any_text"});
    let bang = json!({"type": "const_string", "value": "!"});
    let tag = |content: Value| compile(json!({"type": "tag", "begin": "<x>", "content": content, "end": "</x>"}));
    let before = tag(json!({"type": "sequence", "elements": [any, bang]}));
    assert!(accepts(&before, "<x>ab!</x>") && !accepts(&before, "<x>a</x>b!</x>"));
    let deep = tag(
        json!({"type": "sequence", "elements": [{"type": "star", "content": {"type": "sequence", "elements": [any, bang]}}, {"type": "const_string", "value": "?"}]}),
    );
    assert!(accepts(&deep, "<x>a!b!?</x>") && !accepts(&deep, "<x>a</x>!?</x>"));
    let triggered = tag(json!({"type": "sequence", "elements": [
        {"type": "triggered_tags", "triggers": ["<t"], "tags": [{"type": "tag", "begin": "<t>", "content": bang, "end": "</t>"}]}, bang]}));
    assert!(accepts(&triggered, "<x>a<t>!</t>b!</x>") && !accepts(&triggered, "<x>a</x>b!</x>"));
    let nested =
        tag(json!({"type": "sequence", "elements": [{"type": "tag", "begin": "<i>", "content": any, "end": "</i>"}, bang]}));
    assert!(accepts(&nested, "<x><i>a</x>b</i>!</x>") && !accepts(&nested, "<x><i>a</i>b</i>!</x>"));
}

#[test]
fn compositions_and_primitives() {
    let g = compile(json!({"type": "sequence", "elements": [
        {"type": "or", "elements": [{"type": "const_string", "value": "yes"}, {"type": "regex", "pattern": "n[o]+"}]},
        {"type": "optional", "content": {"type": "const_string", "value": "!"}},
        {"type": "repeat", "min": 1, "max": 2, "content": {"type": "grammar", "grammar": "root ::= \"(\" root \")\" | \"x\""}},
        {"type": "star", "content": {"type": "const_string", "value": "."}}]}));
    for ok in ["yesx", "nooo!(x)((x))", "yes!x..."] {
        assert!(accepts(&g, ok), "{ok:?}");
    }
    for bad in ["yes", "yes!!x", "nx(x)x", "mayx"] {
        assert!(!accepts(&g, bad), "{bad:?}");
    }
    let plus = compile(json!({"type": "plus", "content": {"type": "const_string", "value": "ab"}}));
    assert!(accepts(&plus, "abab") && !accepts(&plus, "") && !accepts(&plus, "aba"));
}

#[test]
fn tags_with_separator() {
    let tag = json!({"type": "tag", "begin": "<a>", "content": {"type": "regex", "pattern": "[0-9]+"}, "end": ["</a>", "</A>"]});
    let list = |first: bool, stop: bool| {
        compile(
            json!({"type": "tags_with_separator", "tags": [tag], "separator": ",", "at_least_one": first, "stop_after_first": stop}),
        )
    };
    let any = list(false, false);
    assert!(
        accepts(&any, "") && accepts(&any, "<a>1</a>,<a>22</A>") && !accepts(&any, ",<a>1</a>") && !accepts(&any, "<a>1</a>,")
    );
    assert!(!accepts(&list(true, false), "") && accepts(&list(true, false), "<a>1</a>"));
    assert!(accepts(&list(false, true), "") && !accepts(&list(false, true), "<a>1</a>,<a>2</a>"));
    assert!(accepts(&list(true, true), "<a>5</a>") && !accepts(&list(true, true), ""));
}

#[test]
fn malformed_descriptions_name_their_place() {
    let cases = [
        (
            json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [{"type": "nope"}]}}),
            "/format/elements/0",
            "unknown format type",
        ),
        (
            json!({"type": "triggered_tags", "triggers": ["<x>", "<y>"], "tags": [{"type": "tag", "begin": "<x>", "content": {"type": "any_text"}, "end": "</x>"}]}),
            "/triggers/1",
            "begins no tag",
        ),
        (
            json!({"type": "triggered_tags", "triggers": ["<x>"], "tags": [{"type": "tag", "begin": "<z>", "content": {"type": "any_text"}, "end": "</z>"}]}),
            "/tags/0/begin",
            "does not start with any trigger",
        ),
        (
            json!({"type": "triggered_tags", "triggers": ["<x>"], "tags": [
            {"type": "tag", "begin": "<x>", "content": {"type": "any_text"}, "end": "</x>"},
            {"type": "tag", "begin": "<z>", "content": {"type": "any_text"}, "end": "</z>"}]}),
            "/tags/1/begin",
            "does not start with any trigger",
        ),
        (json!({"type": "exclude_token", "exclude_tokens": "<x>"}), "/exclude_tokens", "list of tokens"),
        (
            json!({"type": "tags_with_separator", "separator": ",", "tags": [{"type": "const_string", "value": "x"}]}),
            "/tags/0",
            "of type \"tag\"",
        ),
        (json!({"type": "any_text", "max_tokens": -5}), "/max_tokens", "count from 0"),
        (json!({"type": "tag", "begin": "<a>", "content": {"type": "any_text"}, "end": 5}), "/end", "string"),
        (json!({"type": "repeat", "min": 3, "max": 1, "content": {"type": "any_text"}}), "/max", "below min"),
        (json!({"type": "sequence", "elements": []}), "/elements", "non-empty"),
        (json!({"type": "json_schema", "json_schema": {"type": "object"}, "style": "yaml"}), "/style", "unknown style"),
    ];
    for (spec, at, what) in cases {
        let e = error(spec.clone());
        assert!(e.contains(at) && e.contains(what), "{spec}: {e}");
    }
    let e = error(json!({"type": "json_schema", "json_schema": {"type": "object", "minProperties": "x"}}));
    assert!(e.contains("structural tag at /json_schema") && e.contains("minProperties"), "{e}");
    assert!(structural_tag("{", &TagOptions::default(), &Limits::default()).unwrap_err().to_string().contains("not valid JSON"));
    // The parts' own errors name the innermost format they arose in.
    let in_sequence = |f: Value| error(json!({"type": "sequence", "elements": [{"type": "const_string", "value": "a"}, f]}));
    let e = in_sequence(json!({"type": "regex", "pattern": "(a"}));
    assert!(e.contains("structural tag at /elements/1: ") && e.contains("position 0"), "{e}");
    let e = in_sequence(
        json!({"type": "repeat", "min": 1_000_000_000, "max": -1, "content": {"type": "const_string", "value": "a"}}),
    );
    assert!(e.contains("structural tag at /elements/1: ") && e.contains("max_grammar_productions"), "{e}");
    let e = in_sequence(json!({"type": "grammar", "grammar": "root ::= (("}));
    assert!(e.contains("structural tag at /elements/1: ") && !e.contains("structural tag at /:"), "{e}");
}

/// A description nested past serde_json's default bound (128) reads; past the document
/// depth limit it is refused with that limit's name, not as invalid JSON.
#[test]
fn deep_descriptions_read_within_the_document_depth_limit() {
    let nest = |levels: usize| {
        let mut f = json!({"type": "const_string", "value": "a"});
        for _ in 0..levels {
            f = json!({"type": "sequence", "elements": [f, {"type": "const_string", "value": "b"}]});
        }
        json!({"type": "structural_tag", "format": f}).to_string()
    };
    let g = structural_tag(&nest(150), &TagOptions::default(), &Limits::default()).unwrap().grammar;
    assert!(accepts(&g, &format!("a{}", "b".repeat(150))) && !accepts(&g, &format!("a{}", "b".repeat(149))));
    let e = structural_tag(&nest(300), &TagOptions::default(), &Limits::default()).unwrap_err();
    assert!(matches!(e, Error::LimitExceeded { limit: "max_schema_document_depth", .. }), "{e}");
}

#[test]
fn a_character_budget_bounds_free_text() {
    let think = |n: u64| {
        compile(json!({"type": "tag", "begin": "<think>", "content": {"type": "any_text", "max_chars": n}, "end": "</think>"}))
    };
    let g = think(5);
    for ok in ["<think></think>", "<think>abcde</think>", "<think>ééé\u{1F600}x</think>", "<think></thi</think>"] {
        assert!(accepts(&g, ok), "{ok:?}");
    }
    for bad in ["<think>abcdef</think>", "<think>ab</think>c</think>", "<think>ééééé\u{1F600}</think>"] {
        assert!(!accepts(&g, bad), "{bad:?}");
    }
    // A long budget is one counted region, not a copy of the text per character.
    let long = think(30_000);
    assert!(accepts(&long, &format!("<think>{}</think>", "é".repeat(30_000))));
    assert!(!accepts(&long, &format!("<think>{}</think>", "a".repeat(30_001))));
    let e = error(json!({"type": "any_text", "max_tokens": "10"}));
    assert!(e.contains("/max_tokens"), "{e}");
    let e = error(json!({"type": "any_text", "max_chars": -1}));
    assert!(e.contains("/max_chars"), "{e}");
}

#[test]
fn a_part_that_allows_no_text_is_dropped_with_a_warning() {
    let never = json!({"type": "json_schema", "json_schema": false});
    let build = |spec: Value| structural_tag(&spec.to_string(), &TagOptions::default(), &Limits::default());
    let or = build(json!({"type": "or", "elements": [never, {"type": "const_string", "value": "a"}]})).unwrap();
    assert!(or.warnings.iter().any(|w| w.contains("/elements/0: dropped")), "{:?}", or.warnings);
    assert!(accepts(&or.grammar, "a") && !accepts(&or.grammar, ""));
    let optional = build(
        json!({"type": "sequence", "elements": [{"type": "optional", "content": never}, {"type": "const_string", "value": "b"}]}),
    )
    .unwrap();
    assert!(accepts(&optional.grammar, "b"));
    // A tool whose parameters allow nothing: its tag is dropped, the others stay.
    let tool = |name: &str, schema: Value| json!({"type": "tag", "begin": format!("<{name}>"), "content": {"type": "json_schema", "json_schema": schema}, "end": "</f>"});
    let calls = build(json!({"type": "triggered_tags", "triggers": ["<"], "tags": [tool("x", json!(false)), tool("y", json!({"type": "integer"}))]})).unwrap();
    assert!(accepts(&calls.grammar, "hi <y>1</f>") && !accepts(&calls.grammar, "<x>1</f>"));
    let only =
        build(json!({"type": "triggered_tags", "triggers": ["<"], "tags": [tool("x", json!(false))], "at_least_one": true}));
    assert!(matches!(only, Err(Error::EmptyLanguage { .. })), "{only:?}");
    let free = build(json!({"type": "triggered_tags", "triggers": ["<"], "tags": [tool("x", json!(false))]})).unwrap();
    assert!(accepts(&free.grammar, "no calls") && !accepts(&free.grammar, "<x>"));
    let separated = build(json!({"type": "tags_with_separator", "tags": [tool("x", json!(false))], "separator": ","})).unwrap();
    assert!(accepts(&separated.grammar, "") && !accepts(&separated.grammar, ","));
    assert!(matches!(build(json!({"type": "or", "elements": [never]})), Err(Error::EmptyLanguage { .. })));
}

#[test]
fn dispatch_starts_a_format_after_each_pattern() {
    let rules = json!([["<call>", {"type": "regex", "pattern": "[0-9]+;"}], ["!!", {"type": "const_string", "value": "end"}]]);
    let looped = compile(json!({"type": "dispatch", "rules": rules, "excludes": ["zz"]}));
    for ok in ["", "text", "a <call>12; b !!end c <call>3;"] {
        assert!(accepts(&looped, ok), "{ok:?}");
    }
    for bad in ["<call>x", "!!en", "zz", "<call>1;zz"] {
        assert!(!accepts(&looped, bad), "{bad:?}");
    }
    let once = compile(json!({"type": "dispatch", "rules": rules, "loop": false}));
    assert!(accepts(&once, "a <call>12;") && !accepts(&once, "a <call>12; b") && accepts(&once, "just text"));
    let e = error(json!({"type": "dispatch", "rules": [["x"]]}));
    assert!(e.contains("/rules/0"), "{e}");
    for bad in [json!(""), json!(-1), json!(null)] {
        let e = error(json!({"type": "token", "token": bad}));
        assert!(e.contains("at /token") && e.contains("token id"), "{e}");
    }
}

/// Reads `bytes` (text and token readings) through the parser, and the DFA when the
/// grammar is regular.
fn accepts_bytes(g: &Grammar, bytes: &[u8]) -> bool {
    let Grammar::Cfg(c) = g else { panic!("a structural tag is a grammar") };
    let e = EarleyGrammar::new(c.cfg.clone(), &Limits::default());
    let mut chart = e.start_chart().unwrap();
    let by_parser = advance_chart(&e, &mut chart, bytes).unwrap() && chart.is_accepting();
    if let Some(dfa) = &c.cfg.regular {
        assert_eq!(dfa.matches(bytes), by_parser, "the DFA and the parser disagree on {bytes:?}");
    }
    by_parser
}

/// `parts` joined: `<...>` and `[id]` items as the readings of those tokens, by text and
/// by id; anything else as text.
fn spelled(parts: &[&str]) -> Vec<u8> {
    use crate::vocab::readings::{id_reading, name_reading};
    let mut out = Vec::new();
    for p in parts {
        match p.strip_prefix('[').and_then(|p| p.strip_suffix(']')).and_then(|id| id.parse::<u32>().ok()) {
            Some(id) => out.extend(id_reading(id)),
            None if p.starts_with('<') && p.ends_with('>') && p.len() > 2 => out.extend(name_reading(p.as_bytes())),
            None => out.extend_from_slice(p.as_bytes()),
        }
    }
    out
}

#[test]
fn token_formats_read_whole_tokens() {
    // Qwen 3.5's layout as XGrammar writes it with its markers bound to tokens.
    let call = json!({"type": "tag", "begin": {"type": "token", "token": "<tool_call>"},
        "content": {"type": "const_string", "value": "\n{}\n"}, "end": {"type": "token", "token": "</tool_call>"}});
    let g = compile(json!({"type": "sequence", "elements": [
        {"type": "tag", "begin": "", "content": {"type": "any_tokens", "exclude_tokens": ["<think>", "</think>"]},
         "end": {"type": "token", "token": "</think>"}},
        {"type": "token_triggered_tags", "trigger_tokens": ["<tool_call>"], "tags": [call],
         "exclude_tokens": ["<think>", "</think>"]}]}));
    let names = |g: &Grammar| match g {
        Grammar::Cfg(c) => c.cfg.tokens.names.len(),
        Grammar::Regex(_) => 0,
    };
    assert_eq!(names(&g), 4, "the grammar names the tokens it reads");
    for ok in [
        &["hmm", "</think>"][..],
        &["a", "[7]", "<tool_call>", "b", "</think>", "text", "<tool_call>", "\n{}\n", "</tool_call>", "more"],
        // The end's text spelled in other tokens is text.
        &["</", "think>", "</think>", "x</tool_call>y"],
        &["</think>", "<tool_call>", "\n{}\n", "</tool_call>", "<tool_call>", "\n{}\n", "</tool_call>"],
    ] {
        assert!(accepts_bytes(&g, &spelled(ok)), "{ok:?}");
    }
    for bad in [
        &["hmm"][..],
        &["<think>", "</think>"],
        &["</think>", "<tool_call>", "\n{x}\n", "</tool_call>"],
        &["</think>", "<tool_call>", "\n{}\n"],
        &["</think>", "</think>"],
        &["</think>", "<think>"],
    ] {
        assert!(!accepts_bytes(&g, &spelled(bad)), "{bad:?}");
    }
    // Tokens by id; at least one tag, first; token_dispatch once.
    let g = compile(json!({"type": "token_triggered_tags", "trigger_tokens": [9], "at_least_one": true, "tags": [
        {"type": "tag", "begin": {"type": "token", "token": 9}, "content": {"type": "const_string", "value": "x"}, "end": "."}]}));
    assert!(accepts_bytes(&g, &spelled(&["[9]", "x.", "a", "[9]", "x."])) && !accepts_bytes(&g, &spelled(&["a", "[9]", "x."])));
    assert!(!accepts_bytes(&g, &spelled(&["[9]", "x.", "[9]"])) && !accepts_bytes(&g, b""));
    let once = compile(json!({"type": "token_dispatch", "loop": false, "exclude_tokens": [3],
        "rules": [[5, {"type": "regex", "pattern": "[0-9]+"}], ["<x>", {"type": "const_string", "value": "!"}]]}));
    for ok in [&["free", "[4]", "text"][..], &["a", "[5]", "12"], &["<x>", "!"]] {
        assert!(accepts_bytes(&once, &spelled(ok)), "{ok:?}");
    }
    for bad in [&["[3]"][..], &["[5]", "1", "[5]", "2"], &["[5]"], &["<x>", "!!"], &["[5]", "1", "more"]] {
        assert!(!accepts_bytes(&once, &spelled(bad)), "{bad:?}");
    }
    // A tool that allows no arguments is dropped with a warning; with none left, free text.
    let never = json!({"type": "tag", "begin": {"type": "token", "token": 9}, "content": {"type": "json_schema", "json_schema": false}, "end": "."});
    let built = structural_tag(
        &json!({"type": "token_triggered_tags", "trigger_tokens": [9], "tags": [never]}).to_string(),
        &TagOptions::default(),
        &Limits::default(),
    )
    .unwrap();
    assert!(built.warnings.iter().any(|w| w.contains("/tags/0: dropped")), "{:?}", built.warnings);
    assert!(accepts_bytes(&built.grammar, b"free text") && !accepts_bytes(&built.grammar, &spelled(&["[9]"])));
    // A token also written as text (GLM's `<arg_key>`: excluded from free text, written
    // in arguments) is text everywhere: free text leaves its text out.
    let built = structural_tag(
        &json!({"type": "sequence", "elements": [
            {"type": "tag", "begin": "", "content": {"type": "any_tokens", "exclude_tokens": ["<a>"]},
             "end": {"type": "token", "token": "</t>"}},
            {"type": "const_string", "value": "x<a>y"}]})
        .to_string(),
        &TagOptions::default(),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(names(&built.grammar), 1, "only </t> stays a token");
    assert!(built.markers.iter().any(|m| m == "x<a>y"));
    assert!(accepts_bytes(&built.grammar, &spelled(&["h<b>i", "[3]", "</t>", "x<a>y"])));
    assert!(!accepts_bytes(&built.grammar, &spelled(&["h<a>i", "</t>", "x<a>y"])));
    let e = error(json!({"type": "sequence", "elements": [
        {"type": "token_triggered_tags", "trigger_tokens": ["<a>"], "tags": [
            {"type": "tag", "begin": {"type": "token", "token": "<a>"}, "content": {"type": "any_text"}, "end": "."}]},
        {"type": "const_string", "value": "<a>"}]}));
    assert!(e.contains("/elements/0/trigger_tokens/0") && e.contains("both"), "{e}");
    let cases = [
        (json!({"type": "token_triggered_tags", "trigger_tokens": [], "tags": []}), "/trigger_tokens", "non-empty"),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": ["<a>"], "tags": [{"type": "tag", "begin": "<a>", "content": {"type": "any_text"}, "end": "."}]}),
            "/tags/0/begin",
            "of type \"token\"",
        ),
        (
            json!({"type": "token_triggered_tags", "trigger_tokens": ["<a>"], "tags": [{"type": "tag", "begin": {"type": "token", "token": 4}, "content": {"type": "any_text"}, "end": "."}]}),
            "/tags/0/begin",
            "none of the trigger tokens",
        ),
        (json!({"type": "any_tokens", "exclude_tokens": [true]}), "/exclude_tokens/0", "token id"),
        (json!({"type": "any_tokens", "max_tokens": 2.5}), "/max_tokens", "count from 0"),
        (json!({"type": "token_dispatch", "rules": [[1, {"type": "any_text"}, 2]]}), "/rules/0", "pair"),
    ];
    for (spec, at, what) in cases {
        let e = error(spec.clone());
        assert!(e.contains(at) && e.contains(what), "{spec}: {e}");
    }
}

/// Tools whose parameters share value types, written as Qwen's XML (`style`).
fn xml_tools(style: &str, n: usize) -> Grammar {
    let tags: Vec<Value> = (0..n)
        .map(|i| {
            json!({"type": "tag", "begin": format!("<tool_call>\n<function=f{i}>\n"), "end": "\n</function>\n</tool_call>",
                "content": {"type": "json_schema", "style": style, "json_schema": {"type": "object", "properties": {
                    format!("q{i}"): {"type": "string", "maxLength": 5},
                    "note": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}}},
                "required": [format!("q{i}")]}}})
        })
        .collect();
    compile(json!({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": tags}}))
}

#[test]
fn joined_grammars_share_their_equal_terminals() {
    let Grammar::Cfg(c) = xml_tools("qwen_xml", 3) else { panic!("a structural tag is a grammar") };
    let terminals = &c.cfg.terminals;
    for (i, a) in terminals.iter().enumerate() {
        for b in &terminals[i + 1..] {
            assert!(a.dfa != b.dfa || a.token_budget != b.token_budget, "{:?} and {:?} are one automaton", a.name, b.name);
        }
    }
    // Each tool's own marker stays its own terminal.
    for i in 0..3 {
        assert!(terminals.iter().any(|t| t.dfa.matches(format!("<parameter=q{i}>").as_bytes())), "tool {i}");
    }
}

#[test]
fn a_raw_string_ends_only_with_its_closing_marker() {
    for style in ["qwen_xml", "glm_xml", "minimax_m3_xml", "kimi_k3_xml", "cohere_xml", "deepseek_xml"] {
        let g = xml_tools(style, 2);
        let Grammar::Cfg(c) = &g else { panic!("a structural tag is a grammar") };
        // A raw text alone would be a terminal that may end at every byte (the parser then
        // runs under every byte of every token inside it): only the free text around the
        // calls may.
        let closing = XmlStyle::from_name(style).expect("a style").closing();
        let free = b"some text that goes on and on <tool_cal";
        for t in &c.cfg.terminals {
            let ends_anywhere = ["a", "ab", "a b", "abc"].iter().all(|s| t.dfa.matches(s.as_bytes()));
            assert!(!ends_anywhere || t.dfa.matches(free), "{style}: the terminal {:?} ends after any text", t.name);
        }
        let value = format!("abc{closing}");
        assert!(c.cfg.terminals.iter().any(|t| t.dfa.matches(value.as_bytes())), "{style}: no terminal reads {value:?}");
    }
    let g = xml_tools("qwen_xml", 1);
    let call = |q: &str| format!("<tool_call>\n<function=f0>\n<parameter=q0>{q}</parameter>\n</function>\n</tool_call>");
    for ok in ["", "abcde", "</pa", "a</p>", "é<é"] {
        assert!(accepts(&g, &call(ok)), "{ok:?}");
    }
    // Six characters; the marker inside; a marker's prefix that makes the value too long.
    for bad in ["abcdef", "a</parameter>", "</parameter"] {
        assert!(!accepts(&g, &call(bad)), "{bad:?}");
    }
}
