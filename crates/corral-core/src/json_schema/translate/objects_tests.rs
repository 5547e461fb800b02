//! Arrays and objects end to end (translated, compiled, fed byte by byte), against the
//! documents each schema must accept and refuse; and the pruning of counted states on
//! its own.
//!
//! Values are nulls and booleans here: they need none of the scalar emitters.

use serde_json::{json, Value};

use super::arrays::{live_states, Moves, State};
use super::tests::{accepts, compile, compile_with};
use super::SchemaOptions;
use crate::error::{Error, SchemaErrorKind};

/// Checks the values `schema` allows and does not, under `options`.
fn check_with(schema: Value, options: &SchemaOptions, pass: &[&str], fail: &[&str]) {
    let c = compile_with(&schema, options).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for s in pass {
        assert!(accepts(&c, s), "{schema}: {s} must be allowed");
    }
    for s in fail {
        assert!(!accepts(&c, s), "{schema}: {s} must not be allowed");
    }
}

fn check(schema: Value, pass: &[&str], fail: &[&str]) {
    check_with(schema, &SchemaOptions::default(), pass, fail);
}

fn any_order() -> SchemaOptions {
    SchemaOptions { any_order: true, ..Default::default() }
}

// --- counted states ---------------------------------------------------------------

/// Moves from a list of (state, [(item, next)]).
fn moves(list: &[(State, &[(&str, State)])]) -> Moves {
    list.iter().map(|(st, out)| (*st, out.iter().map(|(i, t)| (i.to_string(), *t)).collect())).collect()
}

#[test]
fn live_states_are_those_that_can_still_close() {
    // (0,0) → (1,0) → (2,0) dead end; (0,0) → (1,1) → stop.
    let m = moves(&[((0, 0), &[("a", (1, 0)), ("b", (1, 1))]), ((1, 0), &[("a", (2, 0))]), ((2, 0), &[]), ((1, 1), &[])]);
    let alive = live_states(&m, &|st: State| st == (1, 1));
    assert!(alive.contains(&(0, 0)) && alive.contains(&(1, 1)));
    assert!(!alive.contains(&(1, 0)) && !alive.contains(&(2, 0)));
    // Nothing may close: nothing lives.
    assert!(live_states(&m, &|_| false).is_empty());
}

#[test]
fn live_states_follow_cycles() {
    // A loop on (1,0) that can leave to a stopping state keeps both alive.
    let m = moves(&[((0, 0), &[("a", (1, 0))]), ((1, 0), &[("a", (1, 0)), ("b", (1, 1))]), ((1, 1), &[("a", (1, 1))])]);
    let alive = live_states(&m, &|st: State| st == (1, 1));
    assert_eq!(alive.len(), 3);
}

// --- arrays -----------------------------------------------------------------------

#[test]
fn arrays_of_items_with_counts() {
    let items = json!({"type": "array", "items": {"type": "null"}, "minItems": 1, "maxItems": 3});
    check(items, &["[null]", "[null,null,null]"], &["[]", "[null,null,null,null]", "[true]", "[null,]"]);
    let open = json!({"type": "array", "items": {"type": "boolean"}});
    check(open, &["[]", "[true]", "[true,false,true,true]"], &["[null]", "[,]", "[true false]"]);
    let exact = json!({"type": "array", "items": {"type": "null"}, "minItems": 2, "maxItems": 2});
    check(exact, &["[null,null]"], &["[null]", "[null,null,null]"]);
}

#[test]
fn tuples_then_the_rest() {
    let tuple = json!({"type": "array", "prefixItems": [{"type": "null"}, {"type": "boolean"}], "items": false});
    check(tuple, &["[]", "[null]", "[null,true]"], &["[true]", "[null,true,null]", "[null,null]"]);
    let rest = json!({"type": "array", "prefixItems": [{"type": "boolean"}], "items": {"type": "null"}, "minItems": 2});
    check(rest, &["[true,null]", "[false,null,null]"], &["[true]", "[true,true]", "[]"]);
    // A position no item fits ends the array there.
    let blocked = json!({"type": "array", "prefixItems": [{"type": "null"}, false, {"type": "null"}], "items": false});
    check(blocked, &["[]", "[null]"], &["[null,null]", "[null,null,null]"]);
    let needed = json!({"type": "array", "prefixItems": [{"type": "null"}, false], "items": false, "minItems": 2});
    assert!(matches!(compile_with(&needed, &SchemaOptions::default()), Err(Error::EmptyLanguage { .. })));
}

#[test]
fn contains_with_counts() {
    let items = json!({"type": ["null", "boolean"]});
    let at_least = json!({"type": "array", "items": items, "contains": {"type": "null"}, "minContains": 2});
    check(at_least, &["[null,null]", "[true,null,false,null]", "[null,null,null]"], &["[]", "[null]", "[true,null,true]"]);
    let between =
        json!({"type": "array", "items": items, "contains": {"type": "null"}, "minContains": 1, "maxContains": 2, "maxItems": 4});
    check(
        between,
        &["[null]", "[true,null,null]", "[null,true,true,null]"],
        &["[]", "[true]", "[null,null,null]", "[null,true,true,true,true]"],
    );
    let none = json!({"type": "array", "items": items, "contains": {"type": "null"}, "minContains": 0, "maxContains": 0});
    check(none, &["[]", "[true,false]"], &["[null]", "[true,null]"]);
    let with_tuple = json!({"type": "array", "prefixItems": [{"type": ["boolean", "null"]}], "items": {"type": "null"}, "contains": {"type": "boolean"}});
    check(with_tuple, &["[true]", "[false,null]"], &["[null]", "[null,null]", "[]"]);
}

#[test]
fn contains_past_its_limits_is_refused() {
    let s = json!({"type": "array", "contains": {"type": "null"}, "maxItems": 100000});
    match compile_with(&s, &SchemaOptions::default()) {
        Err(Error::Schema { keyword, pointer, .. }) => {
            assert_eq!((keyword.as_str(), pointer.as_str()), ("contains", "/contains"))
        }
        other => panic!("expected a schema error, got {other:?}"),
    }
    let s = json!({"type": "array", "items": {"type": "null"}, "contains": {"type": "null"}, "minContains": 20000});
    assert!(matches!(
        compile_with(&s, &SchemaOptions::default()),
        Err(Error::LimitExceeded { limit: "max_spelled_count", .. } | Error::SchemaLimit { limit: "max_spelled_count", .. })
    ));
    let s = json!({"type": "array", "items": {"type": "null"}, "minItems": 1_000_000});
    assert!(matches!(
        compile_with(&s, &SchemaOptions::default()),
        Err(Error::LimitExceeded { limit: "max_grammar_productions", .. }
            | Error::SchemaLimit { limit: "max_grammar_productions", .. })
    ));
}

// --- objects ----------------------------------------------------------------------

#[test]
fn the_class_of_other_keys_is_joined_to_its_members_not_multiplied() {
    // ty's lint rules (the JSON Schema Store's `ty.json`, MIT): 124 named keys and any
    // other key, all of one level. The class of other keys is an automaton of the names'
    // trie (1,311 states); joined with the members around it as one regular rule, it was
    // a product built for each rule of the layout (most of the schema's compile).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/json_schemas/store/ty.schema.json");
    let ty: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the Store's ty.json")).expect("JSON");
    let schema = json!({"$ref": "#/definitions/Rules", "definitions": ty["definitions"]});
    let joins = || crate::grammar::lower::OPERATOR_STATES.with(|n| n.get());
    let before = joins();
    let c = compile(&schema).unwrap_or_else(|e| panic!("{e}"));
    let joined = joins() - before;
    let pass = [
        r#"{}"#,
        r#"{"division-by-zero":"warn"}"#,
        r#"{"abstract-and-final-method":"error","zero-stepsize-in-slice":"ignore","my-own-rule":"warn"}"#,
        r#"{"my-own-rule":"ignore","another":"warn"}"#,
    ];
    let fail = [
        r#"{"division-by-zero":"off"}"#,
        r#"{"my-own-rule":1}"#,
        r#"{"division-by-zero":"warn","division-by-zero":"warn"}"#,
        r#"{"my-own-rule":"warn","my-own-rule":"warn"}"#,
    ];
    for s in pass {
        assert!(accepts(&c, s), "{s} must be allowed");
    }
    for s in fail {
        assert!(!accepts(&c, s), "{s} must not be allowed");
    }
    let crate::grammar::Grammar::Cfg(g) = c.grammar() else { panic!("an object of open keys is context-free here") };
    let states: Vec<usize> = g.cfg.terminals.iter().map(|t| t.dfa.num_states()).collect();
    let class = states.iter().copied().max().unwrap_or(0);
    assert!(class > 1000, "the class of other keys is one terminal: {states:?}");
    assert!(joined < class, "the lowering joined the class of keys into products of {joined} states");
}

#[test]
fn required_and_optional_properties_in_order() {
    let s = json!({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "boolean"}}, "required": ["b"]});
    check(
        s,
        &[r#"{"b":true}"#, r#"{"a":null,"b":false}"#],
        &["{}", r#"{"a":null}"#, r#"{"b":true,"a":null}"#, r#"{"b":null}"#, r#"{"b":true,"c":null}"#],
    );
    // Open with spec_exact: other keys take any value (here only nulls and booleans fit
    // the test; any value needs the scalar emitters).
    let exact = SchemaOptions { spec_exact: true, ..Default::default() };
    let s = json!({"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": {"type": "boolean"}});
    check_with(
        s.clone(),
        &exact,
        &["{}", r#"{"a":null,"x":true}"#, r#"{"x":true,"y":false}"#],
        &[r#"{"x":null}"#, r#"{"a":true}"#],
    );
    check(s, &[r#"{"x":true,"y":false}"#, r#"{"a":null,"x":true}"#], &[r#"{"x":true,"x":false}"#]);
}

#[test]
fn additional_properties_false_and_schemas() {
    let closed = json!({"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": false});
    check(closed, &["{}", r#"{"a":null}"#], &[r#"{"b":null}"#, r#"{"a":null,"b":null}"#]);
    let only_extra = json!({"type": "object", "additionalProperties": {"type": "null"}});
    check(
        only_extra,
        &["{}", r#"{"x":null}"#, r#"{"x":null,"y":null}"#, r#"{"\n":null}"#],
        &[r#"{"x":true}"#, r#"{"x":null,"x":null}"#],
    );
}

#[test]
fn property_counts() {
    let s = json!({"type": "object", "additionalProperties": {"type": "null"}, "minProperties": 1, "maxProperties": 2});
    check(s, &[r#"{"a":null}"#, r#"{"a":null,"b":null}"#], &["{}", r#"{"a":null,"b":null,"c":null}"#]);
    let named = json!({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "null"}, "c": {"type": "null"}}, "minProperties": 2, "maxProperties": 2});
    check(
        named,
        &[r#"{"a":null,"b":null}"#, r#"{"a":null,"c":null}"#, r#"{"b":null,"c":null}"#],
        &[r#"{"a":null}"#, r#"{"a":null,"b":null,"c":null}"#],
    );
    let mixed = json!({"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": {"type": "boolean"}, "minProperties": 2});
    check(mixed, &[r#"{"a":null,"x":true}"#, r#"{"x":true,"y":true}"#], &[r#"{"a":null}"#, r#"{"x":true}"#]);
    let none = json!({"type": "object", "properties": {"a": {"type": "null"}}, "required": ["a"], "maxProperties": 0});
    assert!(matches!(compile_with(&none, &SchemaOptions::default()), Err(Error::EmptyLanguage { .. })));
}

#[test]
fn forbidden_and_impossible_required_keys() {
    let s = json!({"type": "object", "properties": {"a": false, "b": {"type": "null"}}});
    check(s, &["{}", r#"{"b":null}"#], &[r#"{"a":null}"#]);
    let s = json!({"type": "object", "properties": {"a": false}, "required": ["a"]});
    assert!(matches!(compile_with(&s, &SchemaOptions::default()), Err(Error::EmptyLanguage { .. })));
    let s = json!({"type": "object", "additionalProperties": {"type": "null"}, "not": {"required": ["x"]}});
    check(s, &[r#"{"y":null}"#], &[r#"{"x":null}"#]);
}

#[test]
fn any_order_is_one_perm() {
    let s = json!({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "boolean"}}, "required": ["a"]});
    check_with(
        s,
        &any_order(),
        &[r#"{"a":null}"#, r#"{"a":null,"b":true}"#, r#"{"b":true,"a":null}"#],
        &["{}", r#"{"b":true}"#, r#"{"a":null,"a":null}"#, r#"{"b":true,"a":null,"b":true}"#],
    );
    let counted = json!({"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": {"type": "boolean"}, "minProperties": 2, "maxProperties": 3});
    check_with(
        counted,
        &any_order(),
        &[r#"{"x":true,"a":null}"#, r#"{"x":true,"y":false,"z":true}"#],
        &[r#"{"a":null}"#, r#"{"x":true,"a":null,"y":true,"z":true}"#, r#"{"x":true,"x":true}"#],
    );
    check_with(
        json!({"type": "object", "additionalProperties": {"type": "null"}, "maxProperties": 0}),
        &any_order(),
        &["{}"],
        &[r#"{"a":null}"#],
    );
}

#[test]
fn indent_lays_containers_out() {
    let opts = SchemaOptions { indent: Some("  ".into()), ..Default::default() };
    let s = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "null"}}}});
    check_with(
        s,
        &opts,
        &["{}", "{\n  \"a\": []\n}", "{\n  \"a\": [\n    null,\n    null\n  ]\n}"],
        &["{ }", "{\"a\":[]}", "{\n  \"a\": [null]\n}", "{\n}"],
    );
    let required = json!({"type": "object", "properties": {"a": {"type": "null"}}, "required": ["a"]});
    check_with(required, &opts, &["{\n  \"a\": null\n}"], &["{}"]);
    let contains = json!({"type": "array", "items": {"type": "null"}, "contains": {"type": "null"}});
    check_with(contains, &opts, &["[\n  null\n]"], &["[]"]);
}

#[test]
fn whitespace_between_members() {
    let opts = SchemaOptions { whitespace: super::Whitespace::Flexible { max: 2 }, ..Default::default() };
    let s = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "null"}}}});
    check_with(s, &opts, &["{ }", "{ \"a\" : [ null , null ] }", "{\"a\":[]}"], &["{     }", "{ \"a\" :[null,,null]}"]);
}

#[test]
fn too_many_named_properties_for_counts() {
    let props: serde_json::Map<String, Value> = (0..400).map(|i| (format!("k{i}"), json!({"type": "null"}))).collect();
    let s = json!({"type": "object", "properties": props, "maxProperties": 300});
    assert!(matches!(
        compile_with(&s, &SchemaOptions::default()),
        Err(Error::LimitExceeded { limit: "max_spelled_count", .. } | Error::SchemaLimit { limit: "max_spelled_count", .. })
    ));
}

// --- key classes (need the string emitters) ----------------------------------------

#[test]
fn pattern_properties_and_the_keys_left() {
    let s = json!({
        "type": "object",
        "properties": {"ab": {"type": "string"}},
        "patternProperties": {"^a": {"type": "null"}, "b$": {"type": "boolean"}},
        "additionalProperties": false
    });
    // "ab" obeys its property and both patterns: nothing fits (string, null and boolean).
    check(
        s,
        &["{}", r#"{"ax":null}"#, r#"{"xb":true}"#, r#"{"ax":null,"xb":false}"#],
        &[r#"{"ab":"s"}"#, r#"{"ab":null}"#, r#"{"axb":null}"#, r#"{"x":null}"#, r#"{"ax":true}"#, r#"{"ax":null,"ax":null}"#],
    );
    let open =
        json!({"type": "object", "patternProperties": {"^x-": {"type": "null"}}, "additionalProperties": {"type": "boolean"}});
    check(open, &[r#"{"x-a":null,"y":true}"#, r#"{"x-":null}"#], &[r#"{"x-a":true}"#, r#"{"y":null}"#]);
}

#[test]
fn property_names_make_classes() {
    // A finite class: its keys are named, each at most once.
    let finite = json!({"type": "object", "propertyNames": {"enum": ["x", "y"]}, "additionalProperties": {"type": "null"}});
    check(
        finite,
        &["{}", r#"{"x":null}"#, r#"{"x":null,"y":null}"#],
        &[r#"{"z":null}"#, r#"{"x":null,"x":null}"#, r#"{"y":null,"x":null}"#],
    );
    let open = json!({"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}, "additionalProperties": {"type": "null"}});
    check(open, &[r#"{"abc":null,"d":null}"#], &[r#"{"abcd":null}"#, r#"{"A":null}"#, r#"{"":null}"#]);
    // Named keys must obey propertyNames too.
    let named = json!({"type": "object", "properties": {"ok": {"type": "null"}, "NO": {"type": "null"}}, "propertyNames": {"pattern": "^[a-z]+$"}});
    check(named, &[r#"{"ok":null}"#], &[r#"{"NO":null}"#]);
    let none = json!({"type": "object", "propertyNames": false, "minProperties": 1});
    assert!(matches!(compile_with(&none, &SchemaOptions::default()), Err(Error::EmptyLanguage { .. })));
}

#[test]
fn a_pattern_of_finitely_many_keys_names_them() {
    let s = json!({"type": "object", "patternProperties": {"^(a|bc)$": {"type": "null"}}, "additionalProperties": false});
    check(
        s.clone(),
        &["{}", r#"{"a":null,"bc":null}"#, r#"{"bc":null}"#],
        &[r#"{"a":null,"a":null}"#, r#"{"b":null}"#, r#"{"bc":null,"a":null}"#],
    );
    let t = super::translate(&s, &[], &SchemaOptions::default(), &crate::limits::Limits::default()).unwrap();
    assert!(!t.finite_key_endings);
}

#[test]
fn a_class_with_finite_endings_is_flagged() {
    let s = json!({"type": "object", "patternProperties": {"^(abc|x+)$": {"type": "null"}}, "additionalProperties": false});
    let t = super::translate(&s, &[], &SchemaOptions::default(), &crate::limits::Limits::default()).unwrap();
    assert!(t.finite_key_endings);
    check(s, &[r#"{"abc":null,"xx":null}"#], &[r#"{"abc":null,"abc":null}"#, r#"{"ab":null}"#]);
    let plain = json!({"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": {"type": "null"}});
    let t = super::translate(&plain, &[], &SchemaOptions::default(), &crate::limits::Limits::default()).unwrap();
    assert!(!t.finite_key_endings);
}

#[test]
fn key_classes_in_any_order() {
    let s = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": false,
        "required": ["id"]
    });
    check_with(
        s,
        &any_order(),
        &[r#"{"x-a":"s","id":1}"#, r#"{"id":2,"x-a":"s","x-b":"t"}"#],
        &[r#"{"x-a":"s"}"#, r#"{"id":1,"x-a":"s","x-a":"t"}"#, r#"{"id":1,"y":"s"}"#],
    );
}

#[test]
fn too_many_patterns_are_refused() {
    let most = crate::limits::Limits::default().max_pattern_properties;
    let patterns: serde_json::Map<String, Value> = (0..=most).map(|i| (format!("^p{i}_"), json!({"type": "null"}))).collect();
    let s = json!({"type": "object", "patternProperties": patterns});
    match compile_with(&s, &SchemaOptions::default()) {
        Err(Error::Schema { keyword, pointer, .. }) => {
            assert_eq!((keyword.as_str(), pointer.as_str()), ("patternProperties", "/patternProperties/^p0_"))
        }
        other => panic!("expected a schema error, got {other:?}"),
    }
}

#[test]
fn any_values_inside_containers() {
    let s = json!({"type": "object", "properties": {"a": {}, "b": {"type": "array"}}, "required": ["a"]});
    check(
        s,
        &[r#"{"a":1}"#, r#"{"a":"s","b":[1,"x",{"k":[]}]}"#, r#"{"a":{"z":null}}"#],
        &["{}", r#"{"a":1,"c":2}"#, r#"{"b":[]}"#],
    );
}

#[test]
fn one_of_closed_objects_is_exclusive() {
    // `{}` obeys both branches: oneOf refuses it; each non-empty object obeys one.
    let schema = json!({"oneOf": [
        {"type": "object", "additionalProperties": false, "properties": {"except": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "additionalProperties": false, "properties": {"only": {"type": "array", "items": {"type": "string"}}}}
    ]});
    check(schema.clone(), &[r#"{"except":["a"]}"#, r#"{"only":[]}"#], &["{}", r#"{"except":[],"only":[]}"#, "[]"]);
    check_with(schema, &any_order(), &[r#"{"only":["x"]}"#], &["{}"]);
    // Branches that share a key: told apart by another named key only.
    let shared = json!({"oneOf": [
        {"properties": {"order": {"const": "legacy"}, "legacy": {"type": "object"}}, "additionalProperties": false, "type": "object"},
        {"properties": {"order": {"type": "string"}}, "additionalProperties": false, "type": "object"}
    ]});
    check(
        shared,
        &[r#"{"order":"legacy","legacy":{}}"#, r#"{"order":"fifo"}"#, r#"{"legacy":{}}"#],
        &[r#"{"order":"legacy"}"#, "{}"],
    );
}

#[test]
fn not_additional_properties_needs_another_key() {
    // Some key other than `a`, with a value that fails the additionalProperties schema.
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "additionalProperties": false,
        "not": {"properties": {"a": {}}, "additionalProperties": {"maximum": 5}}
    });
    check(schema, &[r#"{"b":6}"#, r#"{"a":1,"c":9}"#], &["{}", r#"{"a":1}"#, r#"{"b":5}"#, r#"{"a":9,"b":1,"c":2}"#]);
    // Where the object may have keys its schema does not name: some key at all, any value.
    check(json!({"not": {"additionalProperties": false}}), &[r#"{"x":1}"#, r#"{"a":"b","c":[]}"#], &["{}", "1", "[]"]);
    // A second such negation on the same object: one key breaking both, or a key for
    // each (the two members are different keys).
    let twice = json!({"type": "object", "not": {"additionalProperties": {"type": "string"}},
        "allOf": [{"not": {"additionalProperties": {"type": "integer"}}}]});
    check(
        twice,
        &[r#"{"x":1,"y":"s"}"#, r#"{"x":1.5}"#, r#"{"x":null}"#, r#"{"y":"s","x":1}"#],
        &["{}", r#"{"x":1}"#, r#"{"y":"s"}"#, r#"{"x":1,"y":2}"#],
    );
}

#[test]
fn unevaluated_properties_beside_applicators_that_evaluate_no_property_or_always_do() {
    // The oneOf's branches only require: the keys left to unevaluatedProperties are
    // those `properties` leaves, as for additionalProperties.
    let schema = json!({
        "type": "object",
        "properties": {"include": {"type": "string"}, "name": {"type": "string"}},
        "oneOf": [{"required": ["include"], "not": {"required": ["name"]}}, {"required": ["name"]}],
        "unevaluatedProperties": false
    });
    check(
        schema,
        &[r#"{"include":"a"}"#, r#"{"name":"b"}"#, r#"{"include":"a","name":"b"}"#],
        &[r#"{"x":1}"#, r#"{"name":"b","x":1}"#, "{}", r#"{"include":1}"#],
    );
    // Negated: some key outside `properties` (any value breaks `false`).
    let negated = json!({"type": "object", "not": {"properties": {"a": {}}, "unevaluatedProperties": false}});
    check(negated, &[r#"{"b":1}"#, r#"{"a":1,"c":[]}"#], &[r#"{"a":1}"#, "{}"]);
    // An allOf that evaluates properties always does: its keys are left alone too.
    let unconditional = json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": false});
    check(unconditional, &[r#"{"a":1,"b":2}"#, r#"{"b":[]}"#, "{}"], &[r#"{"c":1}"#, r#"{"a":1,"c":1}"#]);
    // Where a branch evaluates properties, each alternative knows the branches it took.
    let evaluating = json!({"properties": {"a": {}}, "anyOf": [{"properties": {"b": {}}}], "unevaluatedProperties": false});
    check(evaluating, &[r#"{"a":1,"b":2}"#, r#"{"b":[]}"#, "{}"], &[r#"{"c":1}"#]);
}

#[test]
fn unevaluated_properties_see_the_branches_a_value_takes() {
    // if/then/else: `b` only where `a` is "x", `c` elsewhere; the `if` evaluates `a` only
    // where it holds.
    let cond = json!({"type": "object", "if": {"properties": {"a": {"const": "x"}}, "required": ["a"]},
        "then": {"properties": {"b": {}}}, "else": {"properties": {"c": {}}}, "unevaluatedProperties": false});
    check(cond, &[r#"{"a":"x","b":1}"#, r#"{"c":1}"#, r#"{"a":"x"}"#], &[r#"{"a":"y"}"#, r#"{"a":"x","c":1}"#, r#"{"b":1}"#]);
    // anyOf: every branch that holds evaluates, so both keys may stand together.
    let any = json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]}], "unevaluatedProperties": false});
    check(any, &[r#"{"a":1}"#, r#"{"b":2}"#, r#"{"a":1,"b":2}"#], &[r#"{"a":"s","b":2}"#, r#"{"a":1,"c":3}"#, "{}"]);
    // 2ⁿ - 1 sets of n branches: past max_schema_alternatives, a limit error at the anyOf.
    let wide: Vec<Value> = (0..13).map(|i| json!({"properties": {format!("k{i}"): {}}})).collect();
    let wide = json!({"type": "object", "anyOf": wide, "unevaluatedProperties": false});
    match compile(&wide) {
        Err(Error::SchemaLimit { limit: "max_schema_alternatives", pointer, .. }) => assert_eq!(pointer, "/anyOf"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // Branches that evaluate nothing (only `required`) stay one alternative each.
    let requiring: Vec<Value> = (0..13).map(|i| json!({"required": [format!("k{i}")]})).collect();
    let requiring = json!({"type": "object", "anyOf": requiring, "properties": {"k0": {}, "k5": {}},
        "if": {"properties": {"k1": {"const": 1}}}, "then": {"properties": {"k1": {}}}, "unevaluatedProperties": false});
    check(requiring, &[r#"{"k0":1}"#, r#"{"k1":1}"#, r#"{"k0":2,"k5":1}"#], &[r#"{"k1":2}"#, r#"{"k2":1}"#, "{}"]);
    // oneOf and dependentSchemas.
    let one = json!({"type": "object", "oneOf": [{"properties": {"a": {"const": 1}}, "required": ["a"]},
        {"properties": {"b": {"const": 2}}, "required": ["b"]}], "unevaluatedProperties": false});
    check(one, &[r#"{"a":1}"#, r#"{"b":2}"#], &[r#"{"a":1,"b":2}"#, r#"{"a":1,"b":3}"#]);
    let dep = json!({"type": "object", "properties": {"s": {}}, "dependentSchemas": {"s": {"properties": {"t": {}}}},
        "unevaluatedProperties": false});
    check(dep, &[r#"{"s":1,"t":2}"#, r#"{"s":1}"#, "{}"], &[r#"{"t":2}"#]);
    // What a negated branch holds is no annotation: the `not` evaluates nothing.
    let negated = json!({"type": "object", "anyOf": [{"not": {"not": {"properties": {"a": {}}}}}],
        "properties": {"b": {}}, "unevaluatedProperties": false});
    check(negated, &[r#"{"b":1}"#, "{}"], &[r#"{"a":1}"#]);
    // An `unevaluatedProperties` below evaluates every key for the one above, not its own.
    let nested = json!({"type": "object", "anyOf": [{"properties": {"a": {}}, "unevaluatedProperties": {"type": "integer"}}],
        "unevaluatedProperties": false});
    check(nested, &[r#"{"a":"s","b":1}"#], &[r#"{"b":"s"}"#]);
    // A dynamic reference to an anchor one subschema declares is a `$ref` (its
    // properties evaluated); so is one whose outermost declaration is the same on every
    // way in (the root's); where ways differ, refused at the keyword.
    let dynamic = json!({"$defs": {"d": {"$dynamicAnchor": "d", "properties": {"a": {}}}},
        "$dynamicRef": "#d", "unevaluatedProperties": false});
    check(dynamic, &[r#"{"a":1}"#], &[r#"{"b":1}"#]);
    let two = json!({"$defs": {"d": {"$dynamicAnchor": "d", "properties": {"a": {}}}, "e": {"$id": "e", "$dynamicAnchor": "d"}},
        "$dynamicRef": "#d", "unevaluatedProperties": false});
    check(two, &[r#"{"a":1}"#], &[r#"{"b":1}"#]);
    let ways = json!({"$defs": {
            "base": {"$id": "base", "$dynamicRef": "#d", "unevaluatedProperties": false,
                "$defs": {"d": {"$dynamicAnchor": "d", "properties": {"a": {}}}}},
            "alt": {"$id": "alt", "$ref": "base", "$defs": {"d": {"$dynamicAnchor": "d", "properties": {"b": {}}}}}},
        "anyOf": [{"$ref": "base"}, {"$ref": "alt"}]});
    assert!(matches!(compile(&ways), Err(Error::Schema { kind: SchemaErrorKind::Unsupported, .. })));
}
