//! Equal value rules written once (`share`): the grammar shrinks, the language does not
//! change.

use serde_json::{json, Value};

use super::expr::{lit, rule, seq};
use super::share::merged;
use super::tests::check;
use super::{translate, Rules, SchemaOptions, Whitespace};
use crate::frontend::ast::Expr;
use crate::limits::Limits;

fn rule_count(schema: &Value, options: &SchemaOptions) -> usize {
    translate(schema, &[], options, &Limits::default()).unwrap_or_else(|e| panic!("{schema}: {e}")).ast.rules.len()
}

/// An object nested two deep with an array of bounded strings: several rules.
fn member() -> Value {
    json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "minLength": 2}},
        "inner": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]}},
        "required": ["tags"], "additionalProperties": false})
}

#[test]
fn a_subschema_written_twice_is_translated_as_one_referred_to_twice() {
    for whitespace in [Whitespace::Compact, Whitespace::Flexible { max: 2 }] {
        let options = SchemaOptions { whitespace, ..SchemaOptions::default() };
        // Two copies, and one copy referred to twice: the same grammar size.
        let copies = json!({"type": "object", "properties": {"a": member(), "b": member()}});
        let referred = json!({"type": "object", "properties": {"a": member(), "b": {"$ref": "#/properties/a"}}});
        assert_eq!(rule_count(&copies, &options), rule_count(&referred, &options), "{whitespace:?}");
        // A copy that differs (a bound) keeps its own rules.
        let mut other = member();
        other["properties"]["inner"]["properties"]["n"]["minimum"] = json!(4);
        let differing = json!({"type": "object", "properties": {"a": member(), "b": other}});
        assert!(rule_count(&differing, &options) > rule_count(&referred, &options), "{whitespace:?}");
    }
    check(
        json!({"type": "object", "properties": {"a": member(), "b": member()}, "additionalProperties": false}),
        &[r#"{"a":{"tags":["ab"]},"b":{"tags":[],"inner":{"n":3}}}"#],
        &[r#"{"a":{"tags":["a"]}}"#, r#"{"b":{"tags":[],"inner":{"n":2}}}"#, r#"{"b":{}}"#],
    );
}

#[test]
fn equal_recursive_definitions_keep_their_languages() {
    // Two definitions alike but for their names: each refers to itself (a cycle is
    // compared as written), and a third, equal to the first but for a bound, stays apart.
    let schema = json!({
        "$defs": {
            "A": {"type": "array", "items": {"$ref": "#/$defs/A"}},
            "B": {"type": "array", "items": {"$ref": "#/$defs/B"}},
            "C": {"type": "array", "items": {"$ref": "#/$defs/C"}, "maxItems": 1}
        },
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/B"}, "c": {"$ref": "#/$defs/C"}},
        "additionalProperties": false
    });
    check(
        schema,
        &[r#"{"a":[[],[[]]],"b":[[[]]],"c":[[[]]]}"#, r#"{"c":[]}"#],
        &[r#"{"a":[1]}"#, r#"{"c":[[],[]]}"#, r#"{"b":[{}]}"#],
    );
}

fn rules(defs: Vec<(&str, Option<Expr>)>) -> Rules {
    defs.into_iter().map(|(n, b)| (n.to_string(), b)).collect()
}

fn names(kept: &[(String, Expr)]) -> Vec<&str> {
    kept.iter().map(|(n, _)| n.as_str()).collect()
}

#[test]
fn rules_merge_bottom_up_and_references_follow() {
    // x1 ≡ x2 as written; y1 ≡ y2 once x2 reads as x1; z names y2, and so y1 after.
    let r = rules(vec![
        ("x1", Some(lit("x"))),
        ("y1", Some(seq(vec![lit("["), rule("x1"), lit("]")]))),
        ("x2", Some(lit("x"))),
        ("y2", Some(seq(vec![lit("["), rule("x2"), lit("]")]))),
        ("z", Some(seq(vec![rule("y2"), rule("ws"), rule("gone")]))),
        ("gone", None),
    ]);
    let (start, kept) = merged(r, "y2");
    assert_eq!(start, "y1");
    assert_eq!(names(&kept), ["x1", "y1", "z"]);
    assert_eq!(kept[2].1, seq(vec![rule("y1"), rule("ws"), rule("gone")]));
}

#[test]
fn names_outside_the_rules_are_compared_as_written() {
    // `ws` and `sp` are no rules of the pass: bodies naming them differ.
    let r = rules(vec![("a", Some(seq(vec![lit("x"), rule("ws")]))), ("b", Some(seq(vec![lit("x"), rule("sp")])))]);
    let (_, kept) = merged(r, "a");
    assert_eq!(names(&kept), ["a", "b"]);
    // A rule with no body (allows nothing) is not equal to one that allows "".
    let r = rules(vec![("e", None), ("f", Some(Expr::Empty)), ("g", Some(rule("e"))), ("h", Some(rule("f")))]);
    let (_, kept) = merged(r, "g");
    assert_eq!(names(&kept), ["f", "g", "h"]);
}

#[test]
fn rules_on_a_cycle_merge_where_equal_as_written() {
    // p and q each name themselves: not merged (compared as written); s and t name
    // p, which is finished by then: merged.
    let looped = |me: &str| Some(Expr::Alt(vec![lit("."), seq(vec![lit("("), rule(me), lit(")")])]));
    let r = rules(vec![
        ("p", looped("p")),
        ("q", looped("q")),
        ("s", Some(seq(vec![rule("p"), lit("!")]))),
        ("t", Some(seq(vec![rule("p"), lit("!")]))),
    ]);
    let (_, kept) = merged(r, "s");
    assert_eq!(names(&kept), ["p", "q", "s"]);
}

#[test]
fn with_an_indent_the_scalars_of_every_depth_are_one_rule() {
    // Each depth's value rule lays its containers out apart, and takes its scalars from
    // a rule of their own: equal at every depth, written once.
    let level = |items: Value| json!({"type": ["array", "string", "null"], "items": items});
    let schema = level(level(level(json!({"type": "string"}))));
    let options = SchemaOptions { indent: Some("  ".into()), ..SchemaOptions::default() };
    let t = translate(&schema, &[], &options, &Limits::default()).expect("translates");
    let scalar_rules = t.ast.rules.iter().filter(|r| r.name.starts_with('s') && r.name[1..].parse::<u32>().is_ok()).count();
    assert_eq!(scalar_rules, 1);
}
