//! The XML styles of `json_schema` content: each style's layout, raw strings, typed
//! markers, nesting, and the keys and values a layout cannot write.

use serde_json::json;

use super::tests::{accepts, compile, error};
use super::*;

/// The arguments of a weather tool in `style`: `city` (a string, required), `days` (an
/// integer) and `units` (an object), any of them with `extra` keywords.
fn weather(style: &str, extra: Value) -> Grammar {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1},
            "units": {"type": "object", "properties": {"temp": {"enum": ["C", "F"]}}, "required": ["temp"]}
        },
        "required": ["city"]
    });
    for (k, v) in extra.as_object().unwrap() {
        schema[k] = v.clone();
    }
    compile(json!({"type": "json_schema", "json_schema": schema, "style": style}))
}

fn check(g: &Grammar, good: &[&str], bad: &[&str]) {
    for text in good {
        assert!(accepts(g, text), "refused {text:?}");
    }
    for text in bad {
        assert!(!accepts(g, text), "accepted {text:?}");
    }
}

#[test]
fn qwen_parameters_in_schema_order_with_raw_strings() {
    let g = weather("qwen_xml", json!({}));
    check(
        &g,
        &[
            "<parameter=city>Paris</parameter>",
            "\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n",
            "<parameter=city>a <b> & \"c\"</parameter><parameter=units>{\"temp\": \"C\"}</parameter>",
            "<parameter=city></parameter>",
        ],
        &[
            "",
            "<parameter=days>3</parameter>",
            "<parameter=days>3</parameter><parameter=city>Paris</parameter>",
            "<parameter=city>Paris</parameter><parameter=city>Rome</parameter>",
            "<parameter=city>Paris</parameter><parameter=wind>3</parameter>",
            "<parameter=city>Paris</parameter><parameter=days>0</parameter>",
            "<parameter=city>Paris</parameter><parameter=days>\"3\"</parameter>",
            "<parameter=city>a</parameter>b</parameter>",
            "<parameter=city>\"Paris\"</parameter><parameter=units>{\"temp\": \"K\"}</parameter>",
            "{\"city\": \"Paris\"}",
        ],
    );
    let any = compile(json!({"type": "json_schema", "any_order": true, "style": "qwen_xml", "json_schema": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}));
    check(
        &any,
        &["<parameter=b>1</parameter><parameter=a>2</parameter>", "<parameter=a>1</parameter> <parameter=b>2</parameter>"],
        &["<parameter=a>1</parameter>", "<parameter=a>1</parameter><parameter=a>2</parameter><parameter=b>2</parameter>"],
    );
}

#[test]
fn each_style_writes_its_markers() {
    let cases: [(&str, &str, &str); 7] = [
        ("minimax_xml", "<parameter name=\"city\">Paris</parameter><parameter name=\"days\"> 3 </parameter>", "<parameter=city>Paris</parameter>"),
        (
            "deepseek_xml",
            "<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter><｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>",
            "<｜DSML｜parameter name=\"city\" string=\"false\">Paris</｜DSML｜parameter>",
        ),
        (
            "deepseek_v4_1_xml",
            "<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>",
            "<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>",
        ),
        (
            "glm_xml",
            "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key><arg_value>3</arg_value>",
            "<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>x</arg_value>",
        ),
        (
            "kimi_k3_xml",
            "<|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>3<|close|>argument<|sep|>",
            "<|open|>argument key=\"city\" type=\"number\"<|sep|>Paris<|close|>argument<|sep|>",
        ),
        (
            "cohere_xml",
            "<cofl:value name=\"city\" type=\"raw\">Paris</cofl:value><cofl:value name=\"units\" type=\"dict\"><cofl:value name=\"temp\" type=\"raw\">C</cofl:value></cofl:value>",
            "<cofl:value name=\"city\" type=\"raw\">Paris</cofl:value><cofl:value name=\"units\" type=\"json\">{\"temp\": \"C\"}</cofl:value>",
        ),
        (
            "minimax_m3_xml",
            "]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[<units>]<]minimax[>[<temp>F]<]minimax[>[</temp>]<]minimax[>[</units>",
            "]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[<days> 3 ]<]minimax[>[</days>",
        ),
    ];
    for (style, good, bad) in cases {
        let g = weather(style, json!({}));
        assert!(accepts(&g, good), "{style} refused {good:?}");
        assert!(!accepts(&g, bad), "{style} accepted {bad:?}");
    }
}

#[test]
fn nesting_styles_write_lists_as_items() {
    let schema = json!({"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "pts": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
    }, "required": ["tags"]});
    let m3 = compile(json!({"type": "json_schema", "json_schema": schema, "style": "minimax_m3_xml"}));
    let mark = "]<]minimax[>[";
    let good = format!(
        "{mark}<tags>{mark}<item>a{mark}</item> {mark}<item>b{mark}</item>{mark}</tags>{mark}<pts>{mark}<item>{mark}<x>1{mark}</x>{mark}</item>{mark}</pts>"
    );
    check(&m3, &[&good], &[&format!("{mark}<tags>{mark}</tags>"), &format!("{mark}<tags>[\"a\"]{mark}</tags>")]);
    let cohere = compile(json!({"type": "json_schema", "json_schema": schema, "style": "cohere_xml"}));
    check(
        &cohere,
        &["<cofl:value name=\"tags\" type=\"list\"><cofl:value type=\"raw\">a</cofl:value><cofl:value type=\"raw\">b</cofl:value></cofl:value>"],
        &[
            "<cofl:value name=\"tags\" type=\"list\"></cofl:value>",
            "<cofl:value name=\"tags\" type=\"list\"><cofl:value type=\"json\">1</cofl:value></cofl:value>",
        ],
    );
}

#[test]
fn raw_strings_keep_their_constraints() {
    let g = compile(json!({"type": "json_schema", "style": "qwen_xml", "json_schema": {"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "note": {"type": "string", "maxLength": 3},
        "mode": {"enum": ["a<b", "x</parameter>", 2]},
        "day": {"type": "string", "format": "date"},
        "maybe": {"type": ["string", "null"]}
    }}}));
    check(
        &g,
        &[
            "<parameter=code>ABC</parameter>",
            "<parameter=note>\n\n\n</parameter>",
            "<parameter=mode>a<b</parameter>",
            "<parameter=mode> 2 </parameter>",
            "<parameter=day>2024-02-29</parameter>",
        ],
        &[
            "<parameter=code>AB</parameter>",
            "<parameter=code> ABC </parameter>",
            "<parameter=note>four</parameter>",
            "<parameter=mode>x</parameter></parameter>",
            "<parameter=mode>\"a<b\"</parameter>",
            "<parameter=day>2024-02-30</parameter>",
        ],
    );
    check(&g, &["<parameter=maybe> null </parameter>", "<parameter=maybe> anything</parameter>"], &[]);
}

#[test]
fn keys_and_schemas_a_layout_cannot_write() {
    let e = error(json!({"type": "json_schema", "style": "qwen_xml", "json_schema": {
        "type": "object", "properties": {"a>b": {"type": "string"}}}}));
    assert!(e.contains("\"a>b\"") && e.contains("/json_schema"), "{e}");
    let e = error(json!({"type": "json_schema", "style": "yaml", "json_schema": {}}));
    assert!(e.contains("/style") && e.contains("qwen_xml"), "{e}");
    // Cohere escapes its keys.
    let g = compile(json!({"type": "json_schema", "style": "cohere_xml", "json_schema": {
        "type": "object", "properties": {"a&<b": {"type": "integer"}}, "required": ["a&<b"]}}));
    check(
        &g,
        &["<cofl:value name=\"a&amp;&lt;b\" type=\"json\">1</cofl:value>"],
        &["<cofl:value name=\"a&<b\" type=\"json\">1</cofl:value>"],
    );
    // Other keys are not written, with a warning.
    let built = structural_tag(
        &json!({"type": "json_schema", "style": "qwen_xml", "json_schema": {"type": "object", "additionalProperties": {"type": "integer"}}})
            .to_string(),
        &TagOptions::default(),
        &Limits::default(),
    )
    .unwrap();
    assert!(built.warnings.iter().any(|w| w.contains("named keys only")), "{:?}", built.warnings);
    check(&built.grammar, &["", " "], &["<parameter=a>1</parameter>"]);
}

#[test]
fn excludes_keep_texts_out_of_strings_and_keys() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 8},
        "b": {"enum": ["x<|y", "ok"]},
        "c": {"type": "string", "pattern": "^<\\|"},
        "d": {"type": "object", "additionalProperties": {"type": "integer"}}
    }});
    let json_style = compile(json!({"type": "json_schema", "json_schema": schema, "excludes": ["<|"], "any_order": true}));
    check(
        &json_style,
        &[r#"{"a": "x<y|", "b": "ok", "c": "<|z", "d": {"k": 1}}"#],
        &[r#"{"a": "x<|"}"#, r#"{"b": "x<|y"}"#, r#"{"d": {"k<|": 1}}"#, r#"{"a": "123456789"}"#],
    );
    let xml = compile(json!({"type": "json_schema", "json_schema": schema, "excludes": ["<|"], "style": "kimi_k3_xml"}));
    let param =
        |k: &str, t: &str, v: &str| format!("<|open|>argument key=\"{k}\" type=\"{t}\"<|sep|>{v}<|close|>argument<|sep|>");
    check(
        &xml,
        &[&param("a", "string", "x<y"), &format!("{}{}", param("b", "string", "ok"), param("c", "string", "<|z"))],
        &[&param("a", "string", "<|"), &param("b", "string", "x<|y")],
    );
    let e = error(json!({"type": "json_schema", "json_schema": schema, "excludes": [""]}));
    assert!(e.contains("/excludes/0"), "{e}");
}

#[test]
fn nested_empty_containers_are_nothing_at_all() {
    let schema = json!({"type": "object", "properties": {
        "l": {"type": "array", "items": {"type": "string"}},
        "o": {"type": "object", "properties": {"x": {"type": "boolean"}}}
    }});
    let m3 = compile(json!({"type": "json_schema", "json_schema": schema, "style": "minimax_m3_xml"}));
    let mark = "]<]minimax[>[";
    check(
        &m3,
        &[&format!("{mark}<l>{mark}</l>{mark}<o>{mark}</o>"), &format!(" {mark}<o> {mark}<x>true{mark}</x> {mark}</o> ")],
        &[&format!("{mark}<l> {mark}</l>"), &format!("{mark}<o> {mark}</o>")],
    );
}

#[test]
fn pythonic_keyword_arguments_with_python_literals() {
    let g = weather(
        "pythonic",
        json!({"properties": {
            "city": {"type": "string"},
            "days": {"type": ["integer", "null"]},
            "units": {"type": "object", "properties": {"metric": {"type": "boolean"}, "tags": {"type": "array", "items": {"enum": [true, null, "x"]}}}}
        }}),
    );
    check(
        &g,
        &[
            "city=\"Paris\"",
            "city=\"Par\\\"is\", days=3",
            "city=\"a\", days=None",
            "city=\"a\",days=None, units={\"metric\": True, \"tags\": [True, None, \"x\"]}",
            "city=\"a\", units={}",
        ],
        &[
            "",
            "city='Paris'",
            "city=Paris",
            "city=\"a\", days=null",
            "city=\"a\" days=1",
            " city=\"a\"",
            "city=\"a\", units={\"metric\": true}",
            "city=\"a\", units={\"tags\": [false]}",
            "days=1, city=\"a\"",
            "city=\"a\", wind=1",
        ],
    );
    for (key, why) in [("class", "no Python keyword argument"), ("2d", "no Python keyword argument"), ("a-b", "")] {
        let e = error(
            json!({"type": "json_schema", "style": "pythonic", "json_schema": {"type": "object", "properties": {key: {}}}}),
        );
        assert!(e.contains(key) && e.contains(why), "{e}");
    }
    let e = error(json!({"type": "json_schema", "style": "pythonic", "json_schema": {"type": "object", "properties": {
        "xs": {"type": "array", "uniqueItems": true}}}}));
    assert!(e.contains("uniqueItems") && e.contains("Python literals"), "{e}");
}
