//! Tests of [`super::resources`]: identifiers, anchors, drafts and `$ref` resolution.

use serde_json::{json, Value};

use super::resources::{Draft, Resources, Subschema, ROOT_URI};
use crate::error::{Error, SchemaErrorKind};

const DEPTH: usize = 1_000;

fn root(schema: &Value) -> (Resources<'_>, Subschema<'_>) {
    Resources::new(schema, Draft::Draft2020, DEPTH).expect("indexed")
}

/// The node `reference` (written in the root) resolves to.
fn target<'a>(r: &Resources<'a>, from: &Subschema<'a>, reference: &str) -> (&'a Value, String) {
    let s = r.resolve(from, &json!(reference)).unwrap_or_else(|e| panic!("{reference}: {e}"));
    (s.node, s.pointer)
}

fn schema_error(e: Error) -> (SchemaErrorKind, String, String) {
    match e {
        Error::Schema { kind, pointer, keyword, .. } => (kind, pointer, keyword),
        other => panic!("not a schema error: {other}"),
    }
}

#[test]
fn json_pointers_resolve_with_escapes_and_indexes() {
    let s = json!({"$defs": {"a/b": {"type": "string"}, "t~x": {"type": "null"}, "é": {"const": 1}},
                   "allOf": [{"type": "integer"}, {"minimum": 2}]});
    let (r, top) = root(&s);
    assert_eq!(target(&r, &top, "#/$defs/a~1b"), (&s["$defs"]["a/b"], "/$defs/a~1b".to_string()));
    assert_eq!(target(&r, &top, "#/$defs/t~0x").0, &s["$defs"]["t~x"]);
    assert_eq!(target(&r, &top, "#/$defs/%C3%A9").0, &s["$defs"]["é"]);
    assert_eq!(target(&r, &top, "#/allOf/1").0, &s["allOf"][1]);
    assert_eq!(target(&r, &top, "#").0, &s);
    for bad in ["#/$defs/nope", "#/allOf/2", "#/allOf/01", "#/allOf/-1"] {
        let (kind, pointer, keyword) = schema_error(r.resolve(&top, &json!(bad)).unwrap_err());
        assert_eq!((kind, pointer.as_str(), keyword.as_str()), (SchemaErrorKind::Invalid, "/$ref", "$ref"), "{bad}");
    }
    assert!(r.resolve(&top, &json!(3)).is_err());
}

#[test]
fn ids_change_the_base_of_references() {
    let s = json!({
        "$id": "http://example.com/root.json",
        "$defs": {
            "A": {"$id": "nested/a.json", "$defs": {"x": {"type": "integer"}}},
            "B": {"$id": "urn:uuid:deadbeef-1234", "$defs": {"y": {"type": "string"}}}
        }
    });
    let (r, top) = root(&s);
    assert_eq!(&*top.base, "http://example.com/root.json");
    assert_eq!(target(&r, &top, "nested/a.json#/$defs/x").0, &s["$defs"]["A"]["$defs"]["x"]);
    assert_eq!(target(&r, &top, "http://example.com/nested/a.json").0, &s["$defs"]["A"]);
    assert_eq!(target(&r, &top, "urn:uuid:deadbeef-1234#/$defs/y").0, &s["$defs"]["B"]["$defs"]["y"]);
    // Inside B, "#/..." is relative to B (a `urn:` base resolves fragments too).
    let b = r.resolve(&top, &json!("#/$defs/B")).unwrap();
    let b = r.enter(&b);
    assert_eq!(&*b.base, "urn:uuid:deadbeef-1234");
    assert_eq!(target(&r, &b, "#/$defs/y").0, &s["$defs"]["B"]["$defs"]["y"]);
}

#[test]
fn anchors_of_each_draft() {
    let s = json!({"$defs": {"a": {"$anchor": "foo", "type": "string"}, "d": {"$dynamicAnchor": "items"}}});
    let (r, top) = root(&s);
    assert_eq!(target(&r, &top, "#foo").0, &s["$defs"]["a"]);
    assert_eq!(target(&r, &top, "#items").0, &s["$defs"]["d"]);
    let (kind, ..) = schema_error(r.resolve(&top, &json!("#bar")).unwrap_err());
    assert_eq!(kind, SchemaErrorKind::Invalid);
    // Draft 7 names a location with `"$id": "#name"`, draft 4 with `"id"`.
    let s7 =
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$id": "#foo", "type": "integer"}}});
    let (r7, top7) = root(&s7);
    assert_eq!(top7.draft, Draft::Draft7);
    assert_eq!(target(&r7, &top7, "#foo").0, &s7["definitions"]["a"]);
    let s4 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "definitions": {"a": {"id": "#foo"}}});
    let (r4, top4) = root(&s4);
    assert_eq!(target(&r4, &top4, "#foo").0, &s4["definitions"]["a"]);
}

#[test]
fn before_2019_a_ref_hides_its_sibling_id() {
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#",
                   "definitions": {"a": {"$id": "http://other/x.json", "$ref": "#/definitions/b"}, "b": {"type": "null"}}});
    let (r, top) = root(&s);
    let a = r.resolve(&top, &json!("#/definitions/a")).unwrap();
    assert_eq!(&*r.enter(&a).base, ROOT_URI);
    let e = r.resolve(&top, &json!("http://other/x.json"));
    assert!(e.is_err(), "{e:?}");
}

#[test]
fn an_identifier_given_twice_is_refused() {
    let s = json!({"$defs": {"a": {"$id": "http://x/a.json"}, "b": {"$id": "http://x/a.json"}}});
    let (kind, pointer, keyword) = schema_error(Resources::new(&s, Draft::Draft2020, DEPTH).unwrap_err());
    assert_eq!((kind, pointer.as_str(), keyword.as_str()), (SchemaErrorKind::Invalid, "/$defs/b/$id", "$id"));
    let s = json!({"$defs": {"a": {"$anchor": "n"}, "b": {"$anchor": "n"}}});
    let (_, pointer, _) = schema_error(Resources::new(&s, Draft::Draft2020, DEPTH).unwrap_err());
    assert_eq!(pointer, "/$defs/b/$anchor");
    // A $dynamicAnchor may share its name with an $anchor of the same subschema.
    let s = json!({"$defs": {"a": {"$anchor": "n", "$dynamicAnchor": "n"}}});
    assert!(Resources::new(&s, Draft::Draft2020, DEPTH).is_ok());
}

#[test]
fn unknown_metaschemas_are_unsupported_and_drafts_change_where_named() {
    let s = json!({"$schema": "http://example.com/my-meta"});
    let (kind, pointer, _) = schema_error(Resources::new(&s, Draft::Draft2020, DEPTH).unwrap_err());
    assert_eq!((kind, pointer.as_str()), (SchemaErrorKind::Unsupported, "/$schema"));
    let s = json!({"$defs": {"a": {"properties": {"b": {"$schema": "http://example.com/my-meta"}}}}});
    let (kind, pointer, _) = schema_error(Resources::new(&s, Draft::Draft2020, DEPTH).unwrap_err());
    assert_eq!((kind, pointer.as_str()), (SchemaErrorKind::Unsupported, "/$defs/a/properties/b/$schema"));
    // A subschema without an id that names another draft is read with it, and so is
    // what lies below it, whether reached by a path or by a `$ref`.
    let s = json!({"$defs": {"a": {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"b": {}}}}});
    let (r, top) = root(&s);
    assert_eq!(r.resolve(&top, &json!("#/$defs/a")).unwrap().draft, Draft::Draft7);
    assert_eq!(r.resolve(&top, &json!("#/$defs/a/properties/b")).unwrap().draft, Draft::Draft7);
    assert_eq!(r.resolve(&top, &json!("#/$defs")).unwrap().draft, Draft::Draft2020);
    // Unless it holds a `$ref`: validators disagree on the draft of the reference's target.
    let s =
        json!({"$defs": {"n": {}, "a": {"$schema": "http://json-schema.org/draft-04/schema#", "items": {"$ref": "#/$defs/n"}}}});
    let (kind, pointer, _) = schema_error(Resources::new(&s, Draft::Draft2020, DEPTH).unwrap_err());
    assert_eq!((kind, pointer.as_str()), (SchemaErrorKind::Unsupported, "/$defs/a/$schema"));
    let s = json!({"$defs": {"a": {"$id": "http://x/a", "$schema": "http://json-schema.org/draft-07/schema#"}}});
    let (r, top) = root(&s);
    assert_eq!(r.resolve(&top, &json!("http://x/a")).unwrap().draft, Draft::Draft7);
}

#[test]
fn missing_documents_are_listed_and_can_be_supplied() {
    let s = json!({"$id": "http://example.com/s.json", "properties": {
        "a": {"$ref": "other.json#/$defs/n"}, "b": {"$ref": "#/properties/a"}}});
    let (mut r, top) = root(&s);
    assert_eq!(r.missing_documents(), vec!["http://example.com/other.json".to_string()]);
    let a = r.resolve(&top, &json!("#/properties/a")).unwrap();
    let err = r.resolve(&a, &s["properties"]["a"]["$ref"]).unwrap_err();
    assert!(err.to_string().contains("http://example.com/other.json"), "{err}");
    let other = json!({"$defs": {"n": {"type": "number"}}, "items": {"$ref": "third.json"}});
    r.add_document("http://example.com/other.json", &other, Draft::Draft2020, DEPTH).unwrap();
    assert_eq!(r.missing_documents(), vec!["http://example.com/third.json".to_string()]);
    let n = r.resolve(&a, &s["properties"]["a"]["$ref"]).unwrap();
    assert_eq!((n.node, n.pointer.as_str()), (&other["$defs"]["n"], "http://example.com/other.json#/$defs/n"));
}

#[test]
fn deep_documents_are_refused_with_the_limit() {
    let mut s = json!({});
    for _ in 0..50 {
        s = json!({"items": s});
    }
    match Resources::new(&s, Draft::Draft2020, 20).unwrap_err() {
        Error::SchemaLimit { limit, value, pointer, .. } => {
            assert_eq!((limit, value), ("max_schema_document_depth", 20));
            assert_eq!(pointer, "/items".repeat(21), "the pointer of the first value too deep");
        }
        other => panic!("{other}"),
    }
    assert!(Resources::new(&s, Draft::Draft2020, 60).is_ok());
}

#[test]
fn malformed_references_are_invalid() {
    let s = json!({"$ref": "http://["});
    let (r, top) = root(&s);
    let (kind, pointer, _) = schema_error(r.resolve(&top, &s["$ref"]).unwrap_err());
    assert_eq!((kind, pointer.as_str()), (SchemaErrorKind::Invalid, "/$ref"));
}
