//! The translator end to end: a schema is translated, lowered and compiled against a
//! vocabulary of one token per byte, and strings are fed byte by byte (mask and
//! `advance` checked against each other) to see which values it allows.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{translate, SchemaOptions, Whitespace};
use crate::error::{Error, Result, SchemaErrorKind};
use crate::grammar::{Grammar, LowerOptions};
use crate::index::CompiledGrammar;
use crate::limits::Limits;
use crate::matcher::Matcher;
use crate::vocab::Vocabulary;

/// One token per byte, then EOS (256).
pub(crate) fn byte_vocab() -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.push(None);
    Arc::new(Vocabulary::new(tokens, &[], &[256], None).expect("byte vocabulary"))
}

/// `schema` translated with `options` and compiled as the Python package compiles it.
pub(crate) fn compile_with(schema: &Value, options: &SchemaOptions) -> Result<Arc<CompiledGrammar>> {
    let limits = Limits::default();
    let t = translate(schema, &[], options, &limits)?;
    let lower = LowerOptions { max_terminal_source: 0 };
    let g =
        Grammar::cfg_ast(&t.ast, "json schema", Some("start"), &limits, &lower, None)?.with_distinct_keys(!t.finite_key_endings);
    Ok(Arc::new(CompiledGrammar::new(&g, byte_vocab(), &limits, false)?))
}

/// [`compile_with`] the default options.
pub(crate) fn compile(schema: &Value) -> Result<Arc<CompiledGrammar>> {
    compile_with(schema, &SchemaOptions::default())
}

/// Does the grammar allow exactly `s`?
pub(crate) fn accepts(c: &Arc<CompiledGrammar>, s: &str) -> bool {
    let bit = |mask: &[u32], t: u32| mask[(t / 32) as usize] >> (t % 32) & 1 == 1;
    let mut m = Matcher::new(c.clone());
    let mut mask = vec![0u32; c.vocab().mask_words()];
    for &b in s.as_bytes() {
        m.fill_mask(&mut mask).expect("mask");
        let allowed = bit(&mask, b as u32);
        let took = m.advance(b as u32).expect("advance");
        assert_eq!(allowed, took, "mask and advance disagree in {s:?}");
        if !took {
            return false;
        }
    }
    m.fill_mask(&mut mask).expect("mask");
    assert_eq!(bit(&mask, 256), m.is_accepting(), "EOS and is_accepting disagree after {s:?}");
    m.is_accepting()
}

/// Checks the values `schema` must allow and must not.
pub(crate) fn check(schema: Value, pass: &[&str], fail: &[&str]) {
    let c = compile(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for s in pass {
        assert!(accepts(&c, s), "{schema}: {s} must be allowed");
    }
    for s in fail {
        assert!(!accepts(&c, s), "{schema}: {s} must not be allowed");
    }
}

fn schema_error(schema: Value) -> (SchemaErrorKind, String, String) {
    match compile(&schema) {
        Err(Error::Schema { kind, pointer, keyword, .. }) => (kind, pointer, keyword),
        Err(e) => panic!("{schema}: expected a schema error, got {e}"),
        Ok(_) => panic!("{schema}: expected a schema error, got a grammar"),
    }
}

#[test]
fn types_and_combinators_of_constants() {
    check(json!({"type": "null"}), &["null"], &["true", "nul", ""]);
    check(json!({"type": ["boolean", "null"]}), &["true", "false", "null"], &["1"]);
    check(json!({"anyOf": [{"type": "null"}, {"type": "boolean"}]}), &["null", "false"], &["{}"]);
    check(json!({"type": "boolean", "not": {"const": true}}), &["false"], &["true"]);
    check(json!({"allOf": [{"type": ["null", "boolean"]}, {"type": "boolean"}]}), &["true"], &["null"]);
}

#[test]
fn references_and_recursion_through_allof() {
    let schema = json!({"$defs": {"b": {"type": "boolean"}}, "$ref": "#/$defs/b"});
    check(schema, &["true"], &["null"]);
    // A subschema that needs itself in place adds no value: only the other branch.
    let cyclic = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}, "$ref": "#/$defs/a"});
    check(cyclic, &["null"], &["true"]);
}

#[test]
fn if_then_else_and_one_of_on_constants() {
    check(json!({"type": ["null", "boolean"], "if": {"type": "null"}, "then": false}), &["true"], &["null"]);
    // Not disjoint: exactly one of (null or true), (true or false) → null, false.
    let one_of =
        json!({"oneOf": [{"type": "null"}, {"type": "boolean"}, {"type": ["null", "boolean"], "not": {"type": "null"}}]});
    check(one_of, &["null"], &["true", "false"]);
}

#[test]
fn a_schema_with_no_value_is_an_empty_language() {
    assert!(matches!(compile(&json!(false)), Err(Error::EmptyLanguage { .. })));
    assert!(matches!(compile(&json!({"type": "null", "not": {"type": "null"}})), Err(Error::EmptyLanguage { .. })));
}

#[test]
fn errors_name_the_keyword_and_its_pointer() {
    let (kind, pointer, keyword) = schema_error(json!({"properties": {"a": {"type": "nothing"}}}));
    assert_eq!((kind, pointer.as_str(), keyword.as_str()), (SchemaErrorKind::Invalid, "/properties/a/type", "type"));
    let (kind, pointer, keyword) = schema_error(json!({"$ref": "#/nowhere"}));
    assert_eq!((kind, pointer.as_str(), keyword.as_str()), (SchemaErrorKind::Invalid, "/$ref", "$ref"));
    let (kind, pointer, keyword) = schema_error(json!({"items": {"not": {"uniqueItems": true}}}));
    assert_eq!(
        (kind, pointer.as_str(), keyword.as_str()),
        (SchemaErrorKind::Unsupported, "/items/not/uniqueItems", "uniqueItems")
    );
    // A dynamic anchor that two resources declare, where the outermost one depends on the
    // way in (`list` entered directly, or through `ints`): not followed.
    let two = json!({"$defs": {
            "list": {"$id": "list", "items": {"$dynamicRef": "#x"}, "$defs": {"d": {"$dynamicAnchor": "x"}}},
            "ints": {"$id": "ints", "$ref": "list", "$defs": {"d": {"$dynamicAnchor": "x", "type": "integer"}}}},
        "not": {"anyOf": [{"$ref": "list"}, {"$ref": "ints"}]}});
    let (kind, pointer, keyword) = schema_error(two);
    assert_eq!(
        (kind, pointer.as_str(), keyword.as_str()),
        (SchemaErrorKind::Unsupported, "/$defs/list/items/$dynamicRef", "$dynamicRef")
    );
    // Where every way in has the same outermost declaration (here the root's), it is read.
    let root = json!({"$defs": {"a": {"$dynamicAnchor": "x", "type": "integer"}, "b": {"$id": "b", "$dynamicAnchor": "x"}},
        "not": {"$dynamicRef": "#x"}});
    assert!(compile(&root).is_ok());
    // A reference to nothing is invalid, at the keyword.
    let (kind, pointer, keyword) = schema_error(json!({"not": {"$dynamicRef": "#x"}}));
    assert_eq!((kind, pointer.as_str(), keyword.as_str()), (SchemaErrorKind::Invalid, "/not/$dynamicRef", "$dynamicRef"));
}

#[test]
fn flexible_whitespace_surrounds_the_value() {
    let options = SchemaOptions { whitespace: Whitespace::Flexible { max: 2 }, ..Default::default() };
    let c = compile_with(&json!({"type": "null"}), &options).expect("compiles");
    assert!(accepts(&c, " null\n"));
    assert!(!accepts(&c, "   null"));
}

/// A schema whose values nest `n` objects deep through a chain of definitions (each
/// `$defs` entry's property refers to the next): deep values, shallow document.
fn definition_chain(n: usize) -> String {
    let mut defs = serde_json::Map::new();
    for i in 0..n {
        let next = if i + 1 < n { json!({"$ref": format!("#/$defs/d{}", i + 1)}) } else { json!({"type": "null"}) };
        defs.insert(format!("d{i}"), json!({"type": "object", "properties": {"x": next}, "required": ["x"]}));
    }
    json!({"$defs": defs, "$ref": "#/$defs/d0"}).to_string()
}

#[test]
fn values_nested_past_the_limit_are_refused_and_deep_ones_within_it_compile() {
    use super::super::compile::schema_grammar;
    let limits = Limits { max_schema_value_depth: 300, ..Limits::default() };
    let too_deep = schema_grammar(&definition_chain(400), &[], &SchemaOptions::default(), &limits);
    assert!(
        matches!(
            too_deep,
            Err(Error::LimitExceeded { limit: "max_schema_value_depth", .. }
                | Error::SchemaLimit { limit: "max_schema_value_depth", .. })
        ),
        "{too_deep:?}"
    );
    // Within a raised limit, the thread's stack holds the recursion.
    let limits = Limits { max_schema_value_depth: 20_000, ..Limits::default() };
    let deep = schema_grammar(&definition_chain(12_000), &[], &SchemaOptions::default(), &limits);
    assert!(deep.is_ok(), "{:?}", deep.err());
}

#[test]
fn documents_nested_past_the_limit_are_refused_before_they_are_read() {
    use super::super::compile::schema_grammar;
    let text = format!("{}{{}}{}", "{\"not\":".repeat(100_000), "}".repeat(100_000));
    let r = schema_grammar(&text, &[], &SchemaOptions::default(), &Limits::default());
    assert!(
        matches!(
            r,
            Err(Error::LimitExceeded { limit: "max_schema_document_depth", .. }
                | Error::SchemaLimit { limit: "max_schema_document_depth", .. })
        ),
        "{r:?}"
    );
}

// oneOf without negation: branches proven disjoint by the rules of `shapes_disjoint`.
// Each branch here holds a keyword whose negation is not exact (`propertyNames`,
// `additionalProperties`), so without a proof the schema would be refused.

#[test]
fn one_of_with_number_ranges_apart_needs_no_negation() {
    let schema = json!({"oneOf": [
        {"type": "integer", "maximum": 5, "propertyNames": {"maxLength": 3}},
        {"type": "integer", "minimum": 6, "propertyNames": {"maxLength": 3}}
    ]});
    check(schema, &["5", "6", "-3", "40"], &["5.5", "\"a\""]);
}

#[test]
fn one_of_with_string_languages_apart_needs_no_negation() {
    let schema = json!({"oneOf": [
        {"enum": ["pip", "build"]},
        {"type": "string", "pattern": "^pip; ?args:", "propertyNames": {"maxLength": 3}},
        {"type": "string", "pattern": "^build; ?args:", "propertyNames": {"maxLength": 3}},
        {"type": "object", "additionalProperties": false, "properties": {"name": {"type": "string"}}}
    ]});
    check(schema, &["\"pip\"", "\"pip;args: -v\"", "\"build; args: x\"", "{\"name\":\"x\"}"], &["\"uv\"", "\"pipx\""]);
}

#[test]
fn one_of_with_a_required_property_the_other_cannot_have_needs_no_negation() {
    let schema = json!({"oneOf": [
        {"type": "object", "required": ["phase"], "properties": {"phase": {"type": "string"}}, "additionalProperties": false},
        {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}, "additionalProperties": false}
    ]});
    check(schema, &["{\"phase\":\"a\"}", "{\"name\":\"b\"}"], &["{\"phase\":\"a\",\"name\":\"b\"}", "{}"]);
}

#[test]
fn one_of_branches_that_overlap_still_need_negation() {
    // Both allow {"a": 1}: no proof of disjointness, so each branch is read with the
    // other negated (closed objects: "some other named key" is spelled out).
    let schema = json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false},
        {"type": "object", "properties": {"a": {"type": "number"}}, "additionalProperties": false}
    ]});
    check(schema, &[r#"{"a":1.5}"#], &["{}", r#"{"a":1}"#, r#"{"b":1}"#]);
    // A branch open to other keys (in the specification's language): "some other key
    // breaks additionalProperties: false" is "some other key". By default it is closed to
    // its named keys.
    let open = json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false},
        {"type": "object", "properties": {"a": {"type": "number"}}}
    ]});
    let exact = SchemaOptions { spec_exact: true, ..SchemaOptions::default() };
    let c = compile_with(&open, &exact).unwrap_or_else(|e| panic!("{open}: {e}"));
    for (s, valid) in
        [(r#"{"a":1.5}"#, true), (r#"{"b":1}"#, true), (r#"{"a":1,"b":1}"#, true), ("{}", false), (r#"{"a":1}"#, false)]
    {
        assert_eq!(accepts(&c, s), valid, "{s}");
    }
    check(open, &[r#"{"a":1.5}"#], &["{}", r#"{"a":1}"#]);
}

#[test]
fn a_number_whose_exponent_is_out_of_range_is_an_invalid_schema_not_another_number() {
    use super::super::compile::schema_grammar;
    let text = r#"{"properties": {"a": {"minimum": 1e99999999999999999999}}}"#;
    match schema_grammar(text, &[], &SchemaOptions::default(), &Limits::default()) {
        Err(Error::Schema { kind: SchemaErrorKind::Invalid, pointer, .. }) => assert_eq!(pointer, "/properties/a/minimum"),
        other => panic!("expected an invalid schema, got {other:?}"),
    }
}

#[test]
fn arrays_and_objects_are_excluded_as_values() {
    // JSON equality: key order does not count, `1` = `1.0`, nested values are values too.
    // In the specification's language (objects open to other keys, in any order), exactly
    // one value goes.
    let exact = |schema: Value, pass: &[&str], fail: &[&str]| {
        let opts = SchemaOptions { spec_exact: true, integer_fraction: true, any_order: true, ..SchemaOptions::default() };
        let c = compile_with(&schema, &opts).unwrap_or_else(|e| panic!("{schema}: {e}"));
        for s in pass {
            assert!(accepts(&c, s), "{schema}: {s} must be allowed");
        }
        for s in fail {
            assert!(!accepts(&c, s), "{schema}: {s} must not be allowed");
        }
    };
    let not_object = json!({"not": {"const": {"a": 1, "b": [1, {"c": null}]}}});
    exact(
        not_object.clone(),
        &[
            r#"{"a":1,"b":[1,{"c":0}]}"#,
            r#"{"a":1}"#,
            r#"{"a":1,"b":[1,{"c":null}],"d":0}"#,
            "[1]",
            "1",
            r#"{"a":2,"b":[1,{"c":null}]}"#,
        ],
        &[r#"{"a":1,"b":[1,{"c":null}]}"#, r#"{"b":[1,{"c":null}],"a":1}"#, r#"{"a":1.0,"b":[1,{"c":null}]}"#],
    );
    // By default too the value itself is refused (objects that name keys are closed to them).
    check(not_object, &[r#"{"a":1}"#, "[1]"], &[r#"{"a":1,"b":[1,{"c":null}]}"#]);
    let not_enum = json!({"not": {"enum": [[1, 2], [], "x", {}]}});
    exact(not_enum, &["[2,1]", "[1,2,3]", "[1]", "\"y\"", r#"{"k":1}"#, "null"], &["[1,2]", "[]", "\"x\"", "{}", "[1.0,2]"]);
    // A oneOf whose branch is an object const: exactly one branch.
    let one_of =
        json!({"oneOf": [{"const": {"k": 1}}, {"type": "object", "properties": {"k": {"type": "integer"}}, "required": ["k"]}]});
    exact(one_of.clone(), &[r#"{"k":2}"#, r#"{"k":2,"j":1}"#], &[r#"{"k":1}"#]);
    check(one_of, &[r#"{"k":2}"#], &[r#"{"k":1}"#]);
}

#[test]
fn a_metaschema_uri_of_another_scheme_is_not_the_draft() {
    // Found by the fuzzer: `httk://…/draft-04/schema#` was read as draft 4, where `const`
    // is no keyword, so `true` passed a schema whose const is an object.
    let schema = json!({"$schema": "httk://json-schema.org/draft-04/schema#", "const": {"k": 1}});
    let (kind, _, keyword) = schema_error(schema.clone());
    assert_eq!((kind, keyword.as_str()), (SchemaErrorKind::Unsupported, "$schema"));
    // strict=False reads it as the draft in force (2020-12): `const` applies.
    let loose = SchemaOptions { strict: false, ..SchemaOptions::default() };
    let c = compile_with(&schema, &loose).unwrap();
    assert!(!accepts(&c, "true") && accepts(&c, r#"{"k":1}"#));
    // http and https both name draft 4, where `const` is not a keyword.
    for scheme in ["http", "https"] {
        let d4 = json!({"$schema": format!("{scheme}://json-schema.org/draft-04/schema#"), "const": 1});
        assert!(accepts(&compile(&d4).unwrap(), "true"), "{scheme}");
    }
}
