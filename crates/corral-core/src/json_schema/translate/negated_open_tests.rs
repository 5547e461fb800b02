//! The negation of `additionalProperties` on objects open to keys their schema does not
//! name: "some other key has a value that breaks it", written as an alternative per named
//! key and one whose open class of keys must hold such a member, in the schema's order and
//! in any order, with and without property counts.

use serde_json::{json, Value};

use super::tests::{accepts, compile_with};
use super::SchemaOptions;

/// Checks `schema` in the schema's property order, in any order and in `spec_exact`.
fn check_all(schema: Value, pass: &[&str], fail: &[&str]) {
    let orders = [
        SchemaOptions::default(),
        SchemaOptions { any_order: true, ..SchemaOptions::default() },
        SchemaOptions { spec_exact: true, ..SchemaOptions::default() },
    ];
    for options in &orders {
        let c = compile_with(&schema, options).unwrap_or_else(|e| panic!("{schema}: {e}"));
        for s in pass {
            assert!(accepts(&c, s), "{schema} ({options:?}): {s} must be allowed");
        }
        for s in fail {
            assert!(!accepts(&c, s), "{schema} ({options:?}): {s} must not be allowed");
        }
    }
}

#[test]
fn not_additional_properties_needs_one_breaking_member() {
    let schema = json!({"not": {"additionalProperties": {"type": "string"}}});
    check_all(
        schema,
        &[r#"{"a":1}"#, r#"{"a":"x","b":2}"#, r#"{"b":2,"a":"x"}"#, r#"{"a":null,"b":[]}"#],
        &["{}", r#"{"a":"x"}"#, r#"{"a":"x","b":"y"}"#, "1", r#""s""#],
    );
}

#[test]
fn named_properties_beside_are_not_other_keys() {
    // `a` is named: it breaks `properties`, not `additionalProperties`; either makes the
    // value fail the negated schema. (`additionalProperties: true` keeps the object open
    // outside `spec_exact` too.)
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": true, "not": {
        "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "integer"}
    }});
    check_all(schema, &[r#"{"b":"x"}"#, r#"{"a":1,"b":"x"}"#], &["{}", r#"{"a":1}"#, r#"{"a":1,"b":2}"#, r#"{"a":"x"}"#]);
}

#[test]
fn a_named_key_of_the_object_may_be_the_breaking_one() {
    // The object names `k` (an integer); `k` is another key to the negated schema.
    let schema = json!({"type": "object", "properties": {"k": {"type": ["integer", "string"]}}, "additionalProperties": true,
        "not": {"properties": {"a": true}, "additionalProperties": {"type": "integer"}}});
    check_all(schema, &[r#"{"k":"x"}"#, r#"{"z":null}"#, r#"{"k":1,"z":"s"}"#], &["{}", r#"{"k":1}"#, r#"{"a":"x"}"#]);
}

#[test]
fn counts_bound_the_members_with_one_breaking_among_them() {
    let schema = json!({"type": "object", "minProperties": 2, "maxProperties": 3,
        "not": {"additionalProperties": {"type": "integer"}}});
    check_all(
        schema,
        &[r#"{"a":1,"b":"x"}"#, r#"{"a":"x","b":1}"#, r#"{"a":1,"b":2,"c":"x"}"#, r#"{"a":"x","b":"y","c":"z"}"#],
        &[r#"{"a":"x"}"#, r#"{"a":1,"b":2}"#, r#"{"a":1,"b":2,"c":3}"#, r#"{"a":1,"b":2,"c":3,"d":"x"}"#],
    );
}

#[test]
fn one_of_an_open_dict_and_a_closed_object_is_exact() {
    // `{"product": []}` obeys both branches, so neither holds it.
    let schema = json!({"oneOf": [
        {"type": "object", "required": ["product"], "additionalProperties": false,
         "properties": {"product": {"type": "array"}, "exclude": {"type": "array"}}},
        {"type": "object", "minProperties": 1, "maxProperties": 1, "not": {"required": ["prefix"]},
         "additionalProperties": {"type": "array", "items": {"type": "string"}}}
    ]});
    check_all(
        schema,
        &[r#"{"product":[["a"]]}"#, r#"{"x":["a"]}"#, r#"{"product":[1],"exclude":[]}"#],
        &[r#"{"product":[]}"#, r#"{"product":["a"]}"#, r#"{"prefix":["a"]}"#, "{}"],
    );
}
