//! Distributing `anyOf`/`oneOf`/`if` into alternative shapes without needless products:
//! `oneOf` branches negated only against the branches they may share a value with, a
//! disjunction already implied by the shape dropped, a key required outside some names
//! resolved against a closed object at once, and a subschema met twice read once.

use serde_json::{json, Value};

use super::tests::{check, compile};
use super::{translate, SchemaOptions};
use crate::error::Error;
use crate::limits::Limits;

/// Translates `schema` with at most `alternatives` alternative shapes per value.
fn translate_within(schema: &Value, alternatives: usize) -> Result<(), Error> {
    let limits = Limits { max_schema_alternatives: alternatives, ..Limits::default() };
    translate(schema, &[], &SchemaOptions::default(), &limits).map(|_| ())
}

#[test]
fn one_of_negates_only_the_branches_that_may_overlap() {
    // The array branch shares no value with the integers, so its `uniqueItems` (which
    // cannot be negated) is never negated; the two integer ranges overlap on 0..=10.
    let schema = json!({"oneOf": [
        {"type": "array", "uniqueItems": true},
        {"type": "integer", "minimum": 0},
        {"type": "integer", "maximum": 10}
    ]});
    check(schema, &["[1,2]", "11", "-1", "[]"], &["5", "0", "10", "[1,1]", "null"]);
}

#[test]
fn a_required_key_the_other_branch_allows_only_another_kind_of_value_parts_them() {
    // `replace` is a string in the first branch and an array wherever the second has it.
    let schema = json!({"oneOf": [
        {"type": "object", "required": ["replace"], "properties": {"replace": {"const": "env"}},
         "additionalProperties": false},
        {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {"type": "array"}}
    ]});
    check(schema, &[r#"{"replace":"env"}"#, r#"{"x":[]}"#, r#"{"replace":[]}"#], &[r#"{"x":1}"#, "{}", r#"{"replace":"x"}"#]);
}

#[test]
fn property_counts_that_do_not_meet_part_branches() {
    let schema = json!({"type": "object", "oneOf": [
        {"maxProperties": 1, "additionalProperties": {"type": "array", "uniqueItems": true}},
        {"minProperties": 2}
    ]});
    check(schema, &["{}", r#"{"a":[1]}"#, r#"{"a":1,"b":2}"#], &[r#"{"a":[1,1]}"#, r#"{"a":1}"#]);
}

/// `count` `if`/`then` pairs on a `kind` property, each `then` the same three-way `anyOf`.
fn repeated_any_of(count: usize) -> Value {
    let rule = |i: usize| {
        json!({"if": {"properties": {"kind": {"const": format!("k{i}")}}},
               "then": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}, {"$ref": "#/$defs/c"}]}})
    };
    json!({
        "$defs": {
            "a": {"type": "object", "properties": {"p": {"type": "string"}}},
            "b": {"type": "object", "properties": {"q": {"type": "integer"}}},
            "c": {"type": "object", "properties": {"r": {"type": "boolean"}}}
        },
        "allOf": (0..count).map(rule).collect::<Vec<_>>()
    })
}

#[test]
fn a_disjunction_the_shape_already_obeys_adds_no_alternatives() {
    // Distributed blindly, six copies of a three-way anyOf make 3^6 = 729 alternatives
    // where there is no `kind`; once one branch is read, the other copies hold already.
    let schema = repeated_any_of(6);
    translate_within(&schema, 64).expect("within 64 alternatives");
    check(
        schema,
        &[r#"{"p":"x"}"#, r#"{"q":1}"#, r#"{"kind":"k1","r":true}"#, r#"{"kind":"other"}"#],
        // Not an object: every `if` holds, and every branch of the `then`s is an object.
        &[r#"{"p":1,"q":"s","r":3}"#, r#"{"kind":"k2","p":1,"q":"s","r":3}"#, "1"],
    );
}

#[test]
fn one_of_closed_single_key_objects_stays_linear() {
    // Exactly one of twelve closed objects, each allowing one key: an object with one
    // of the keys (`{}` obeys every branch). Negated naively, each branch meets eleven
    // three-way disjunctions.
    let branches: Vec<Value> =
        (0..12).map(|i| json!({"properties": {format!("k{i}"): {"type": "integer"}}, "additionalProperties": false})).collect();
    let schema = json!({"type": "object", "oneOf": branches});
    translate_within(&schema, 64).expect("within 64 alternatives");
    check(schema, &[r#"{"k3":1}"#, r#"{"k11":-2}"#], &["{}", r#"{"k1":1,"k2":2}"#, r#"{"k1":"x"}"#, r#"{"z":1}"#]);
}

#[test]
fn one_of_open_objects_each_requiring_its_own_key_stays_linear() {
    // As Vega's number values: exactly one of `signal`, `value`, `field`, `range`, ...,
    // each with its own type. Each branch negates the other six: "absent, or present with
    // a value of another type", one alternative each (read as `required` and `properties`
    // apart, two: 2^6 per branch, 448 in all).
    let keys = [
        ("signal", "string"),
        ("value", "number"),
        ("field", "string"),
        ("range", "boolean"),
        ("band", "number"),
        ("scale", "string"),
        ("offset", "integer"),
    ];
    let branches: Vec<Value> = keys.iter().map(|(k, t)| json!({"properties": {*k: {"type": t}}, "required": [k]})).collect();
    let schema = json!({"type": "object", "oneOf": branches});
    translate_within(&schema, 64).expect("within 64 alternatives");
    check(
        schema,
        &[r#"{"value":1}"#, r#"{"signal":"s","value":"x"}"#, r#"{"range":true,"field":1,"band":"b"}"#],
        &["{}", r#"{"value":1,"range":false}"#, r#"{"signal":"s","field":"f"}"#, r#"{"value":"x"}"#, r#"{"offset":1.5}"#],
    );
}

#[test]
fn an_any_of_with_a_branch_that_asserts_nothing_adds_no_alternatives() {
    // dofigen's `Copy`: `anyOf: [{oneOf: [...]}, {}]` holds whatever the `oneOf` says.
    let choices: Vec<Value> = (0..13).map(|i| json!({"anyOf": [{"minLength": i + 1}, {"maxLength": i}]})).collect();
    for trivial in [json!({}), json!(true), json!({"title": "anything", "description": "at all"})] {
        let schema = json!({"type": "string", "anyOf": [{"allOf": choices.clone()}, trivial]});
        translate_within(&schema, 64).expect("within 64 alternatives");
        check(schema, &[r#""""#, r#""abcdefghijklmnopq""#], &["1"]);
    }
    // A branch that asserts something still counts.
    let schema = json!({"type": "string", "anyOf": [{"allOf": choices.clone()}, {"maxLength": 100}]});
    assert!(translate_within(&schema, 64).is_err());
}

#[test]
fn keys_with_the_same_dependency_make_one_disjunction() {
    // A metaschema's "minimum, maximum, … need a numeric type": eleven keys, three
    // dependencies, and two keys that need the same others. Per key, 3^13 alternatives;
    // per group, 3^4.
    let numeric = json!({"properties": {"type": {"enum": ["integer", "number"]}}});
    let string = json!({"properties": {"type": {"const": "string"}}});
    let array = json!({"properties": {"type": {"const": "array"}}});
    let mut deps = serde_json::Map::new();
    let mut props = serde_json::Map::new();
    for (keys, dep) in [
        (&["minimum", "maximum", "multipleOf", "exclusiveMinimum", "exclusiveMaximum"][..], numeric),
        (&["minLength", "maxLength", "pattern"][..], string),
        (&["minItems", "maxItems", "uniqueItems"][..], array),
        (&["then", "else"][..], json!(["if"])),
    ] {
        for k in keys {
            deps.insert(k.to_string(), dep.clone());
            props.insert(k.to_string(), json!({}));
        }
    }
    props.insert("type".into(), json!({"type": "string"}));
    props.insert("if".into(), json!({}));
    let schema = json!({"type": "object", "properties": props, "dependencies": deps});
    translate_within(&schema, 128).expect("within 128 alternatives");
    check(
        schema,
        &[
            r#"{"minimum":1,"type":"number"}"#,
            r#"{"minimum":1,"maxLength":2}"#,
            r#"{"pattern":"x","type":"string"}"#,
            r#"{"then":2,"else":3,"if":1}"#,
            "{}",
        ],
        &[
            r#"{"minimum":1,"type":"string"}"#,
            r#"{"minimum":1,"maxLength":2,"type":"string"}"#,
            r#"{"maxItems":1,"type":"number"}"#,
            r#"{"then":2}"#,
            r#"{"else":2,"type":"array"}"#,
        ],
    );
}

#[test]
fn a_recursive_one_of_beside_its_properties_makes_finitely_many_rules() {
    // Each branch names `s` again beside the object's own `s`: read blindly, the value
    // of `s` is the conjunction of one more copy at every level, a new rule each time.
    let schema = json!({
        "$defs": {"item": {
            "type": "object",
            "properties": {"s": {"$ref": "#/$defs/item"}, "l": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
            "additionalProperties": false,
            "oneOf": [
                {"properties": {"s": {"$ref": "#/$defs/item"}}, "required": ["s"]},
                {"properties": {"l": {"type": "array", "items": {"$ref": "#/$defs/item"}}}, "required": ["l"]}
            ]
        }},
        "$ref": "#/$defs/item"
    });
    check(
        schema,
        &[r#"{"l":[]}"#, r#"{"s":{"l":[]}}"#, r#"{"l":[{"s":{"l":[]}}]}"#],
        &["{}", r#"{"s":{"l":[]},"l":[]}"#, r#"{"s":{}}"#],
    );
}

#[test]
fn too_many_alternatives_names_the_subschema() {
    // Thirteen independent two-way choices: 8192 alternatives, past the default 4096.
    let choices: Vec<Value> = (0..13).map(|i| json!({"anyOf": [{"minLength": i + 1}, {"maxLength": i}]})).collect();
    let schema = json!({"properties": {"a": {"allOf": choices}}});
    match compile(&schema) {
        Err(Error::SchemaLimit { limit, pointer, .. }) => {
            assert_eq!((limit, pointer.as_str()), ("max_schema_alternatives", "/properties/a"));
        }
        Err(e) => panic!("expected a schema limit, got {e}"),
        Ok(_) => panic!("expected a schema limit, got a grammar"),
    }
}

#[test]
fn proofs_over_a_discriminator_read_each_list_from_its_prefix() {
    // One `if`/`then` pair per value of a required `type` (as configuration schemas
    // write their node kinds): each alternative proves the other pairs' `if`s apart over
    // lists of the property's subschemas that grow by one. Read from the start, the
    // reads grew with the cube of the pairs (125 pairs: seconds).
    let n = 40;
    let kinds: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let pairs: Vec<Value> = (0..n)
        .map(|i| {
            json!({"if": {"properties": {"type": {"const": format!("t{i}")}}},
                   "then": {"required": [format!("p{i}")], "properties": {format!("p{i}"): {"type": "integer"}}}})
        })
        .collect();
    let schema = json!({"type": "object", "required": ["type"], "properties": {"type": {"enum": kinds}}, "allOf": pairs});
    super::expand::SATISFIABLE_READS.with(|c| c.set((0, 0)));
    check(
        schema,
        &[r#"{"type":"t3","p3":1}"#, r#"{"type":"t39","p39":-2}"#],
        &[r#"{"type":"t3"}"#, r#"{"type":"t3","p3":"x"}"#, r#"{"type":"t40","p40":1}"#, r#"{"p3":1}"#],
    );
    let (reads, lists) = super::expand::SATISFIABLE_READS.with(|c| c.get());
    assert!(lists > n, "{lists} lists proven");
    assert!(reads <= 3 * lists, "{reads} subschemas read for {lists} lists");
}
