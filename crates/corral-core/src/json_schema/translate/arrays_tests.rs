//! Arrays of distinct items (`uniqueItems`): the values allowed and refused, byte by byte
//! through masks, against what JSON Schema says.

use serde_json::json;

use super::tests::{check, compile, compile_with};
use super::{SchemaOptions, Whitespace};
use crate::error::{Error, SchemaErrorKind};

#[test]
fn distinct_items_from_an_enum_in_any_order() {
    let schema = json!({"type": "array", "uniqueItems": true, "items": {"enum": ["a", "ab", "b"]}});
    check(
        schema,
        &["[]", r#"["a"]"#, r#"["ab","a"]"#, r#"["b","a","ab"]"#, r#"["a","ab","b"]"#],
        &[r#"["a","a"]"#, r#"["ab","b","ab"]"#, r#"["a","ab","b","a"]"#, r#"["c"]"#],
    );
}

#[test]
fn values_equal_as_json_are_one_item() {
    // `1` and `1.0` are one value; `true` is not `1`; null and false are values too.
    let schema = json!({"uniqueItems": true, "items": {"enum": [1, 1.0, true, null, false, "1"]}});
    check(schema, &["[1,true,null,false,\"1\"]", "[true,1]", "[\"1\",1]"], &["[1,1]", "[true,true]", "[null,1,null]"]);
    let booleans = json!({"type": "array", "uniqueItems": true, "items": {"type": ["boolean", "null"]}});
    check(booleans, &["[true,false,null]", "[false]"], &["[true,false,true]", "[null,null]"]);
}

#[test]
fn objects_and_arrays_from_an_enum_are_compared_as_values() {
    let schema = json!({"uniqueItems": true, "items": {"enum": [{"a": 1}, [1, 2], [2, 1]]}});
    check(schema, &[r#"[{"a":1},[1,2],[2,1]]"#, "[[2,1],[1,2]]"], &[r#"[{"a":1},{"a":1}]"#, "[[1,2],[1,2]]"]);
}

#[test]
fn counts_are_counts_of_distinct_items() {
    let schema = json!({"uniqueItems": true, "minItems": 2, "maxItems": 3, "items": {"enum": ["x", "y", "z", "w"]}});
    check(schema, &[r#"["x","y"]"#, r#"["w","z","y"]"#], &[r#"["x"]"#, r#"["x","x"]"#, r#"["x","y","z","w"]"#, "[]"]);
    // More items than values: no array at all, and so no value.
    let schema = json!({"type": "array", "uniqueItems": true, "minItems": 3, "items": {"type": "boolean"}});
    assert!(matches!(compile(&schema), Err(Error::EmptyLanguage { .. })), "three distinct booleans");
    let schema = json!({"uniqueItems": true, "minItems": 3, "items": {"type": "boolean"}});
    check(schema, &["1", "\"s\"", "{}"], &["[true,false]", "[true,false,true]"]);
}

#[test]
fn enum_members_are_checked_against_the_item_schema() {
    let schema = json!({"uniqueItems": true, "items": {"enum": ["a", "bb", 3], "type": "string", "maxLength": 1}});
    check(schema, &[r#"["a"]"#, "[]"], &[r#"["bb"]"#, "[3]", r#"["a","a"]"#]);
    // Under anyOf, under allOf and through a $ref.
    let schema = json!({
        "$defs": {"colors": {"type": "array", "uniqueItems": true, "items": {"enum": ["red", "green"]}}},
        "anyOf": [{"$ref": "#/$defs/colors"}, {"type": "string"}],
    });
    check(schema, &[r#"["red","green"]"#, r#""red""#], &[r#"["red","red"]"#]);
    let schema = json!({"allOf": [{"uniqueItems": true}, {"items": {"enum": [1, 2]}}]});
    check(schema, &["[1,2]", "[2]"], &["[2,2]"]);
}

#[test]
fn a_oneof_of_two_unique_arrays_is_exact() {
    // Disjoint by their items: each branch keeps its own items distinct.
    let schema = json!({"oneOf": [
        {"type": "array", "uniqueItems": true, "items": {"enum": ["a", "b"]}, "minItems": 1},
        {"type": "array", "uniqueItems": true, "items": {"enum": [1, 2]}, "minItems": 1},
    ]});
    check(schema, &[r#"["a","b"]"#, "[2,1]"], &[r#"["a","a"]"#, "[1,1]", r#"["a",1]"#]);
}

#[test]
fn whitespace_and_indent_layouts_keep_items_distinct() {
    let schema = json!({"type": "array", "uniqueItems": true, "items": {"enum": ["a", "b"]}});
    let ws = SchemaOptions { whitespace: Whitespace::Flexible { max: 4 }, ..SchemaOptions::default() };
    let c = compile_with(&schema, &ws).unwrap();
    assert!(super::tests::accepts(&c, r#"[ "a" , "b" ]"#));
    assert!(!super::tests::accepts(&c, r#"[ "a" , "a" ]"#));
    let indented = SchemaOptions { indent: Some("  ".into()), ..SchemaOptions::default() };
    let c = compile_with(&schema, &indented).unwrap();
    assert!(super::tests::accepts(&c, "[\n  \"b\",\n  \"a\"\n]"));
    assert!(super::tests::accepts(&c, "[]"));
    assert!(!super::tests::accepts(&c, "[\n  \"b\",\n  \"b\"\n]"));
}

#[test]
fn items_counted_or_at_tuple_positions_are_kept_distinct_as_values() {
    // Counted by `contains`, or at tuple positions: the whole array is compared at run time.
    check(
        json!({"uniqueItems": true, "items": {"type": "integer"}, "contains": {"minimum": 3}, "minContains": 2}),
        &["[3,4]", "[1,3,5]"],
        &["[3,3]", "[3,1,3]", "[3]", "[3,4,3]"],
    );
    check(
        json!({"uniqueItems": true, "items": {"enum": ["a", "b"]}, "contains": {"const": "a"}}),
        &[r#"["a"]"#, r#"["b","a"]"#],
        &[r#"["a","a"]"#, r#"["b"]"#],
    );
    check(
        json!({"uniqueItems": true, "prefixItems": [{"type": "integer"}, {"type": "number"}], "items": {"type": "boolean"}}),
        &["[1,2]", "[1,2.5,true,false]"],
        &["[1,1]", "[1,1.0]", "[1,2,true,true]"],
    );
    // Draft 4's items as a list.
    check(
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "uniqueItems": true, "items": [{"type": "integer"}], "additionalItems": {"type": "integer"}}),
        &["[1,2,3]"],
        &["[1,2,1]"],
    );
    // At most one item: nothing to compare.
    check(json!({"uniqueItems": true, "maxItems": 1}), &["[1]", "[]"], &["[1,2]"]);
}

#[test]
fn items_of_unboundedly_many_values_are_compared_as_values() {
    check(
        json!({"type": "array", "uniqueItems": true, "items": {"type": "integer"}}),
        &["[]", "[1]", "[1,2,10,-1,0]", "[12,1,2]"],
        &["[1,1]", "[1,2,1]", "[10,2,10]", "[0,-0]"],
    );
    // One number, many spellings.
    check(
        json!({"type": "array", "uniqueItems": true, "items": {"type": "number"}}),
        &["[1,1.5,0.1,10]", "[1e2,1e3]"],
        &["[1,1.0]", "[1.5,15e-1]", "[100,1e2]", "[0.1,1E-1]", "[0,0.0]"],
    );
    // Any value: strings after unescaping, objects whatever their key order, arrays item
    // by item.
    check(
        json!({"properties": {"p": {"uniqueItems": true}}}),
        &[r#"{"p":[1,"1",[1],{"a":1},true,null]}"#, r#"{"p":[[1,2],[2,1]]}"#, r#"{"p":[{"a":1},{"a":1,"b":1}]}"#],
        &[
            r#"{"p":["a","a"]}"#,
            r#"{"p":[{"a":1,"b":[2]},{"b":[2.0],"a":1}]}"#,
            r#"{"p":[[1,[2]],[1,[2]]]}"#,
            r#"{"p":[null,null]}"#,
        ],
    );
    check(
        json!({"uniqueItems": true, "items": {"type": ["string", "object"]}}),
        &[r#"["a",{"a":"a"}]"#],
        &[r#"["a","a"]"#, r#"[{},{}]"#],
    );
}

#[test]
fn an_array_of_distinct_values_has_no_dead_end() {
    // Two objects in all: once both are written, `]` is the only way on, and after the
    // first, the second must differ where it can.
    let schema = json!({"type": "array", "uniqueItems": true, "items": {
        "type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"], "additionalProperties": false}});
    check(schema.clone(), &[r#"[{"a":true},{"a":false}]"#], &[r#"[{"a":true},{"a":true}]"#, r#"[{"a":true},{"a":false},"#]);
    let c = compile(&schema).unwrap();
    let mut m = crate::matcher::Matcher::new(c.clone());
    for &b in br#"[{"a":true},{"a":"# {
        assert!(m.advance(b as u32).unwrap());
    }
    // `t` can only become the first item again.
    assert!(!m.is_allowed(b't' as u32) && m.is_allowed(b'f' as u32));
    // Three distinct values at least, of the three the items allow: the only arrays.
    let three = json!({"type": "array", "uniqueItems": true, "minItems": 3,
        "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 1}, "maxItems": 1}});
    let c = compile(&three).unwrap();
    let m = crate::matcher::Matcher::new(c.clone());
    let done = m.completion().unwrap().unwrap();
    assert!(super::tests::accepts(&c, std::str::from_utf8(&done).unwrap()), "{done:?}");
    check(three, &["[[],[0],[1]]", "[[1],[],[0]]"], &["[[],[0],[0]]", "[[],[],[1]]"]);
}

#[test]
fn objects_named_as_values_match_in_every_key_order_where_keys_may_move() {
    let schema = json!({"const": {"a": 1, "b": {"c": [1, {"d": null, "e": true}], "f": "x"}}});
    let written = r#"{"a":1,"b":{"c":[1,{"d":null,"e":true}],"f":"x"}}"#;
    let moved = r#"{"b":{"f":"x","c":[1,{"e":true,"d":null}]},"a":1}"#;
    // Array items keep their order; an object's members may not repeat or go missing.
    let wrong = [r#"{"b":{"f":"x","c":[{"e":true,"d":null},1]},"a":1}"#, r#"{"a":1,"a":1}"#, r#"{"a":1}"#];
    let c = compile(&schema).unwrap();
    assert!(super::tests::accepts(&c, written) && !super::tests::accepts(&c, moved));
    for opts in [
        SchemaOptions { any_order: true, ..SchemaOptions::default() },
        SchemaOptions { spec_exact: true, ..SchemaOptions::default() },
    ] {
        let c = compile_with(&schema, &opts).unwrap();
        assert!(super::tests::accepts(&c, written) && super::tests::accepts(&c, moved), "{opts:?}");
        for w in wrong {
            assert!(!super::tests::accepts(&c, w), "{opts:?}: {w}");
        }
    }
    // Enum members and the values of distinct items too.
    let schema = json!({"uniqueItems": true, "items": {"enum": [{"k": 1, "v": 2}, {"k": 2, "v": 1}]}});
    let c = compile_with(&schema, &SchemaOptions { any_order: true, ..SchemaOptions::default() }).unwrap();
    assert!(super::tests::accepts(&c, r#"[{"v":2,"k":1},{"k":2,"v":1}]"#));
    assert!(!super::tests::accepts(&c, r#"[{"v":2,"k":1},{"k":1,"v":2}]"#));
}

#[test]
fn several_contains_on_one_array_are_each_counted() {
    let both = json!({"allOf": [{"contains": {"const": "a"}}, {"contains": {"const": "b"}}]});
    check(both, &[r#"["a","b"]"#, r#"["b","x","a"]"#, r#"["a","a","b"]"#], &[r#"["a"]"#, r#"["a","a"]"#, "[]"]);
    // One item may match both.
    let overlap = json!({"allOf": [{"contains": {"minimum": 5}}, {"contains": {"maximum": 5}}]});
    check(overlap, &["[5]", "[4,6]", "[6,1,9]"], &["[6]", "[1,2]", "[]"]);
    // Exact counts of each, in any order, with items that match neither.
    let counted = json!({
        "type": "array",
        "allOf": [
            {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 2},
            {"contains": {"type": "string"}, "maxContains": 1},
        ],
    });
    check(
        counted,
        &[r#"[1,2,"a"]"#, r#"[1,"a",2]"#, r#"["a",null,1,true,2]"#],
        &["[1,2]", r#"[1,2,"a","b"]"#, r#"[1,2,3,"a"]"#, r#"["a",1]"#],
    );
    // With maxItems: every position is counted.
    let bounded =
        json!({"maxItems": 3, "allOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}, {"contains": {"const": 3}}]});
    check(bounded, &["[3,1,2]", "[1,2,3]"], &["[1,2]", "[1,2,3,4]", "[1,1,2]"]);
}

#[test]
fn many_contains_on_one_array_are_a_limit_error() {
    let many: Vec<_> = (0..20).map(|i| json!({"contains": {"const": i}})).collect();
    match compile(&json!({"allOf": many})) {
        Err(Error::SchemaLimit { limit, pointer, .. }) => {
            assert_eq!((limit, pointer.as_str()), ("max_spelled_count", "/allOf/0/contains"))
        }
        other => panic!("expected a limit error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn distinct_free_strings_are_kept_distinct_by_the_matcher() {
    let schema = json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}});
    check(
        schema,
        &[
            "[]",
            r#"["a"]"#,
            r#"["a","ab","b"]"#,
            r#"["ab","a"]"#,
            r#"["a\"","a"]"#,
            r#"["",""x"]"#.replace("\"\"x", "\"x").as_str(),
        ],
        &[r#"["a","a"]"#, r#"["ab","b","ab"]"#, r#"["",""]"#, r#"["a\"","a\""]"#],
    );
    // Counts count distinct strings; minLength keeps every half-written one open.
    let counted =
        json!({"type": "array", "uniqueItems": true, "minItems": 2, "maxItems": 3, "items": {"type": "string", "minLength": 1}});
    check(
        counted,
        &[r#"["a","b"]"#, r#"["a","b","c"]"#],
        &[r#"["a"]"#, r#"["a","a"]"#, r#"["a","b","a"]"#, r#"["a","b","c","d"]"#],
    );
}

#[test]
fn distinct_strings_are_per_array_and_at_any_depth() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
            "more": {"type": "array", "items": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}},
        },
    });
    check(
        schema,
        &[r#"{"tags":["a","b"],"more":[["a","b"],["a","b"]]}"#, r#"{"more":[["x"],["x"]]}"#],
        &[r#"{"tags":["a","a"]}"#, r#"{"more":[["a","b"],["b","b"]]}"#],
    );
    // Under anyOf beside a string, and through a $ref.
    let schema = json!({
        "$defs": {"names": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}},
        "anyOf": [{"$ref": "#/$defs/names"}, {"type": "string"}],
    });
    check(schema, &[r#"["a","b"]"#, r#""a""#], &[r#"["a","a"]"#]);
}

#[test]
fn a_pattern_with_few_strings_names_them_and_one_with_many_is_checked_half_written() {
    // Two strings in all: named one by one, so no array asks for a third.
    let few = json!({"type": "array", "uniqueItems": true, "minItems": 1, "items": {"type": "string", "pattern": "^(a|ab)$"}});
    check(few, &[r#"["ab","a"]"#, r#"["a"]"#], &[r#"["a","a"]"#, r#"["a","ab","a"]"#]);
    // Infinitely many, but after `"ab` only `abc` can follow: once written, `"ab` is refused.
    let many = json!({"type": "array", "uniqueItems": true, "items": {"type": "string", "pattern": "^(abc|x+)$"}});
    let c = compile(&many).unwrap();
    let mut m = crate::matcher::Matcher::new(c.clone());
    let mut mask = vec![0u32; c.vocab().mask_words()];
    for &b in br#"["abc",""# {
        assert!(m.advance(b as u32).unwrap());
    }
    m.fill_mask(&mut mask).unwrap();
    let bit = |mask: &[u32], b: u8| mask[(b / 32) as usize] >> (b % 32) & 1 == 1;
    assert!(!bit(&mask, b'a') && bit(&mask, b'x'), "after a written abc, \"a can only repeat it");
    assert!(!m.advance(b'a' as u32).unwrap());
    assert!(super::tests::accepts(&c, r#"["abc","xx","x"]"#) && !super::tests::accepts(&c, r#"["abc","x","abc"]"#));
}

#[test]
fn distinct_items_beside_arrays_that_may_repeat_are_told_apart_by_their_first_item() {
    // Distinct strings beside integers that may repeat.
    let strings = json!({"anyOf": [
        {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
        {"type": "array", "items": {"type": "integer"}},
    ]});
    check(
        strings,
        &["[]", r#"["a","b"]"#, "[1,1]", "[2,1,2]"],
        &[r#"["a","a"]"#, r#"["a",1]"#, r#"[1,"a"]"#, r#"["b","a","b"]"#],
    );
    // Distinct objects (compared as values) beside strings that may repeat, under oneOf.
    let objects = json!({"oneOf": [
        {"type": "array", "items": {"type": "string"}, "minItems": 1},
        {"type": "array", "uniqueItems": true, "minItems": 1, "items": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    ]});
    check(
        objects,
        &[r#"["a","a"]"#, r#"[{"x":1},{"x":2}]"#, r#"[{"x":1},{}]"#, r#"["a","b","a"]"#],
        &[r#"[{"x":1},{"x":1}]"#, r#"[{},{"x":1},{}]"#, r#"[{"x":1},"a"]"#, "[]"],
    );
    // Distinct arrays of strings beside strings, inside an object, where the first item
    // comes after whitespace.
    let nested = json!({"type": "object", "properties": {"o": {"anyOf": [
        {"type": "array", "uniqueItems": true, "items": {"type": "array", "items": {"type": "string"}}},
        {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    ]}}});
    check(
        nested,
        &[r#"{"o":["a","a"]}"#, r#"{"o":[["a"],["a","a"]]}"#, r#"{"o":[]}"#],
        &[r#"{"o":[["a"],["a"]]}"#, r#"{"o":[[],[]]}"#, r#"{"o":[["a"],"a"]}"#],
    );
}

#[test]
fn distinct_items_beside_arrays_whose_first_item_may_be_alike_are_refused() {
    let same_kind = json!({"anyOf": [
        {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
        {"type": "array", "items": {"type": ["string", "null"]}},
    ]});
    let any_item = json!({"oneOf": [
        {"type": "array", "uniqueItems": true, "items": {"type": "object"}},
        {"type": "array"},
    ]});
    for (schema, at) in [(same_kind, "/anyOf/0/uniqueItems"), (any_item, "/oneOf/0/uniqueItems")] {
        match compile(&schema) {
            Err(Error::Schema { kind: SchemaErrorKind::Unsupported, pointer, .. }) => assert_eq!(pointer, at),
            other => panic!("expected uniqueItems to be unsupported, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn negated_items_after_a_tuple_prefix() {
    // 2020-12: not (prefixItems [integer], items string): the first item is not an
    // integer, or a later one is not a string.
    let schema = json!({"type": "array", "not": {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}});
    check(schema, &[r#"["a"]"#, r#"[1,2]"#, r#"[1,"a",null]"#, r#"[null,"a"]"#], &["[]", "[1]", r#"[1,"a"]"#, r#"[1,"a","b"]"#]);
    // Draft 7: a tuple `items` with additionalItems, negated position by position.
    let draft7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
        "not": {"items": [{"type": "integer"}, {"type": "boolean"}], "additionalItems": {"type": "string"}}});
    check(draft7, &[r#"["x"]"#, r#"[1,2]"#, r#"[1,true,3]"#], &["[]", "[1]", r#"[1,true]"#, r#"[1,true,"s"]"#]);
    // oneOf of a tuple and a list: exact where they overlap (`[1,"a"]` obeys both).
    let one_of = json!({"oneOf": [
        {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
        {"type": "array", "items": {"type": ["integer", "string"]}, "maxItems": 2}
    ]});
    check(one_of, &[r#"[1,"a","b"]"#, "[2,3]", r#"["a"]"#], &[r#"[1,"a"]"#, "[1]", "[]", "[null]"]);
}
