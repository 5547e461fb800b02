//! JSON Schemas inside grammar text (`%json {...}` in Lark and corral EBNF, as llguidance
//! writes them): each schema is translated by the JSON Schema engine and its rules join
//! the grammar's, so the whole is lowered and parsed as one grammar.
//!
//! The front-end leaves a reference to the rule `%json#k` where the `k`-th schema is
//! written (see [`EmbeddedSchema`]). Here the schema's grammar is renamed into
//! `%json#k/...` and `%json#k` defined as its start. The JSON is compact (no whitespace
//! between tokens), as in `Grammar.json_schema`'s default; in Lark, `%ignore`d text may come
//! before and after the value but not inside it. Objects never repeat a key and
//! `uniqueItems` arrays an item: where the schema needs that checked, its value is a
//! JSON region of the output (see [`SchemaOptions::json_region`]), which the check
//! reads as JSON.

use std::sync::Arc;

use super::compile::{on_deep_stack, read_schema};
use super::translate::{self, SchemaOptions};
use crate::error::{Error, Result};
use crate::frontend::ast::{EmbeddedSchema, Expr, GrammarAst, Pos, RuleDef};
use crate::frontend::regex::PerlClasses;
use crate::frontend::Dialect;
use crate::grammar::{Grammar, LowerOptions};
use crate::limits::Limits;

/// Parses, validates and normalizes a grammar text that may hold `%json {...}` schemas
/// (otherwise exactly [`Grammar::cfg_text_with`]).
pub fn grammar_text(
    text: &str,
    dialect: Dialect,
    start: Option<&str>,
    limits: &Limits,
    options: &LowerOptions,
    classes: Option<&PerlClasses>,
) -> Result<Grammar> {
    let ast = Grammar::parse_text(text, dialect, limits)?;
    let description = Grammar::text_description(dialect);
    if ast.schemas.is_empty() {
        return Grammar::cfg_ast(&ast, &description, start, limits, options, classes);
    }
    // The schemas' translation and the lowering recurse as deep as the schemas nest.
    on_deep_stack(limits, || {
        let (ast, warnings, checks) = with_schemas(ast, limits)?;
        let grammar = Grammar::cfg_ast(&ast, &description, start, limits, options, classes)?;
        let grammar = match checks {
            Some(key_endings_infinite) => grammar.with_distinct_keys(key_endings_infinite).with_json_regions(),
            None => grammar,
        };
        Ok(with_warnings(grammar, warnings))
    })
}

/// `ast` with each schema's grammar added under its own names, the translations'
/// warnings, and whether a schema needs the check of distinct keys and items (then
/// whether every half-written key is known to have infinitely many endings).
fn with_schemas(mut ast: GrammarAst, limits: &Limits) -> Result<(GrammarAst, Vec<String>, Option<bool>)> {
    let mut warnings = Vec::new();
    let mut checks: Option<bool> = None;
    let schemas = std::mem::take(&mut ast.schemas);
    for (k, schema) in schemas.iter().enumerate() {
        let at = |e: Error| located(e, schema.pos);
        let (value, documents) = read_schema(&schema.text, &[], limits).map_err(at)?;
        // The output is not JSON throughout: the value is a JSON region of it.
        let options = SchemaOptions { json_region: true, ..SchemaOptions::default() };
        let t = match translate::translate(&value, &documents, &options, limits) {
            Err(Error::EmptyLanguage { what }) => {
                // A rule that derives nothing: the lowering drops the alternatives that need
                // it, as it drops any part that matches nothing (an error if none is left).
                warnings.push(format!("%json at {}: {what}: the alternatives that need it are dropped", schema.pos));
                let name = EmbeddedSchema::rule_name(k);
                let nothing = Expr::Ref { name: name.clone(), pos: schema.pos };
                ast.rules.push(RuleDef { name, expr: nothing, pos: schema.pos, is_terminal: false });
                continue;
            }
            other => other.map_err(at)?,
        };
        let prefix = format!("{}/", EmbeddedSchema::rule_name(k));
        warnings.extend(t.warnings.iter().map(|w| format!("%json at {}: {w}", schema.pos)));
        if t.open_keys {
            checks = Some(checks.unwrap_or(true) && !t.finite_key_endings);
        }
        for mut rule in t.ast.rules {
            rule.name = format!("{prefix}{}", rule.name);
            rule.expr.visit_refs_mut(&mut |name| *name = format!("{prefix}{name}"));
            rule.pos = schema.pos;
            ast.rules.push(rule);
        }
        let start = Expr::Ref { name: format!("{prefix}start"), pos: schema.pos };
        ast.rules.push(RuleDef { name: EmbeddedSchema::rule_name(k), expr: start, pos: schema.pos, is_terminal: false });
    }
    ast.schemas = schemas;
    Ok((ast, warnings, checks))
}

/// A schema's error, saying where in the grammar the schema is written.
fn located(e: Error, pos: Pos) -> Error {
    let here = |m: String| format!("%json at {pos}: {m}");
    match e {
        Error::Schema { kind, message, pointer, keyword } => Error::Schema { kind, message: here(message), pointer, keyword },
        Error::SchemaLimit { limit, value, context, pointer, keyword } => {
            Error::SchemaLimit { limit, value, context: here(context), pointer, keyword }
        }
        Error::LimitExceeded { limit, value, context } => Error::LimitExceeded { limit, value, context: here(context) },
        other => other,
    }
}

/// `grammar` with the lowering's findings about the schemas' own rules (one unused, say:
/// nothing the author wrote) replaced by `warnings`.
fn with_warnings(grammar: Grammar, warnings: Vec<String>) -> Grammar {
    match grammar {
        Grammar::Cfg(c) => {
            let mut c = Arc::try_unwrap(c).unwrap_or_else(|shared| (*shared).clone());
            let cfg = Arc::make_mut(&mut c.cfg);
            cfg.warnings.retain(|w| !w.contains(EmbeddedSchema::PREFIX));
            cfg.warnings.extend(warnings);
            Grammar::Cfg(Arc::new(c))
        }
        g => g,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::CompiledGrammar;
    use crate::vocab::Vocabulary;

    fn compiled(text: &str, dialect: Dialect) -> CompiledGrammar {
        let limits = Limits::default();
        let g = grammar_text(text, dialect, None, &limits, &LowerOptions::default(), None).unwrap();
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        tokens.push(None);
        CompiledGrammar::new(&g, Arc::new(Vocabulary::new(tokens, &[], &[256], None).unwrap()), &limits, false).unwrap()
    }

    const POINT: &str =
        r#"{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": false}"#;

    #[test]
    fn a_schema_stands_where_it_is_written() {
        for (text, dialect) in [
            (format!("start: \"call \" %json {POINT} \";\"\n%ignore \" \""), Dialect::Lark),
            (format!("root ::= \"call \" %json {POINT} \";\""), Dialect::Ebnf),
        ] {
            let c = compiled(&text, dialect);
            assert!(c.matches(br#"call {"x":12};"#).unwrap(), "{text}");
            assert!(!c.matches(br#"call {"x":1.5};"#).unwrap());
            assert!(!c.matches(br#"call {"y":1};"#).unwrap());
            // Lark's %ignore comes around the value, never inside it.
            let lark = dialect == Dialect::Lark;
            assert_eq!(c.matches(br#"call  {"x":1} ;"#).unwrap(), lark);
            assert!(!c.matches(br#"call {"x": 1};"#).unwrap());
        }
    }

    #[test]
    fn a_schema_that_allows_nothing_drops_its_alternative() {
        let limits = Limits::default();
        for (text, dialect) in
            [(r#"root ::= %json {"not": {}} | "a""#, Dialect::Ebnf), (r#"start: %json {"not": {}} | "a""#, Dialect::Lark)]
        {
            let g = grammar_text(text, dialect, None, &limits, &LowerOptions::default(), None).unwrap();
            let Grammar::Cfg(cfg) = &g else { panic!("a grammar") };
            assert!(cfg.cfg.warnings.iter().any(|w| w.contains("allows no JSON value")), "{:?}", cfg.cfg.warnings);
            let c = compiled(text, dialect);
            assert!(c.matches(b"a").unwrap() && !c.matches(b"{}").unwrap(), "{text}");
        }
        // Nothing left: an error.
        let only = grammar_text(r#"root ::= %json {"not": {}}"#, Dialect::Ebnf, None, &limits, &LowerOptions::default(), None);
        assert!(only.is_err());
    }

    #[test]
    fn schema_errors_say_where_the_schema_is() {
        let limits = Limits::default();
        let bad = "start: \"a\"\n    | %json {\"type\": \"object\", \"minProperties\": \"x\"}";
        let e = grammar_text(bad, Dialect::Lark, None, &limits, &LowerOptions::default(), None).unwrap_err();
        assert!(e.to_string().contains("%json at 2:7"), "{e}");
        let gbnf = grammar_text("root ::= %json {}", Dialect::Gbnf, None, &limits, &LowerOptions::default(), None);
        assert!(gbnf.is_err_and(|e| e.to_string().contains("not in GBNF")));
    }

    #[test]
    fn keys_and_items_stay_distinct_inside_the_schema_only() {
        // Text before the value may look like JSON; only the value is read as JSON.
        let open = "root ::= [a-z{}\":,0-9]* \"=\" %json {\"type\": \"object\"} \"!\"";
        let c = compiled(open, Dialect::Ebnf);
        assert!(c.matches(br#"{"a":1,"a":1}={"a":1,"b":2}!"#).unwrap());
        assert!(!c.matches(br#"x={"a":1,"a":2}!"#).unwrap());
        assert!(!c.matches(br#"x={"b":{"a":1,"a":2}}!"#).unwrap());
        let tags = "root ::= \"x\" %json {\"properties\": {\"t\": {\"type\": \"array\", \"uniqueItems\": true, \"items\": {\"type\": \"string\"}}}} \"\\\"a\\\"\"";
        let c = Arc::new(compiled(tags, Dialect::Ebnf));
        assert!(c.matches(br#"x{"t":["a","b"]}"a""#).unwrap());
        assert!(!c.matches(br#"x{"t":["a","a"]}"a""#).unwrap());
        let mut m = crate::matcher::Matcher::new(c.clone());
        for &b in br#"x{"t":["a","a"# {
            assert!(m.advance(b as u32).unwrap());
        }
        assert!(!m.is_allowed(b'"' as u32) && m.is_allowed(b'b' as u32));
        // The completion of a half-written repeat writes a new string.
        let done = m.completion().unwrap().unwrap();
        let whole = [br#"x{"t":["a","a"#.as_slice(), &done].concat();
        assert!(c.matches(&whole).unwrap(), "{}", String::from_utf8_lossy(&whole));
    }

    #[test]
    fn where_text_may_stand_for_the_value_the_text_is_free() {
        // The value or text, both starting with `{`: a repeated key is fine as text (the
        // check stays off there, wider rather than narrower than the grammar).
        let either = "root ::= %json {\"type\": \"object\"} | [a-z{}\":,0-9]+";
        let c = Arc::new(compiled(either, Dialect::Ebnf));
        assert!(c.matches(br#"{"a":1,"a":2}"#).unwrap() && c.matches(br#"{"a":1}"#).unwrap());
        let mut m = crate::matcher::Matcher::new(c.clone());
        for &b in br#"{"a":1,"a"# {
            assert!(m.advance(b as u32).unwrap());
        }
        assert!(m.is_allowed(b'"' as u32));
        // After a marker only the value can follow: checked.
        let marked = "root ::= [a-z{}\":,0-9]* \"=\" %json {\"type\": \"object\"}";
        let c = compiled(marked, Dialect::Ebnf);
        assert!(!c.matches(br#"{"a":1,"a":2}={"a":1,"a":2}"#).unwrap());
        assert!(c.matches(br#"{"a":1,"a":2}={"a":1,"b":2}"#).unwrap());
    }
}
