//! Reading a subschema's keywords into a shape. Disjunctions (`anyOf`, `oneOf`, `if`,
//! dependencies) are set aside for [`super::expand`] to distribute.

use crate::util::hash::{HashSet, HashSetExt};
use serde_json::{Map, Value};

use super::super::numbers::Decimal;
use super::super::resources::{escape_pointer, Draft, Subschema};
use super::shape::{CountField, Evaluated, ObjClause, Shape, Sub, SubKey, SubNode, Synthetic};
use super::value::{self, show};
use super::{Kinds, Translator, REGEX_FORMAT};
use crate::error::Result;

/// Keywords that only annotate.
const ANNOTATIONS: [&str; 24] = [
    "title",
    "description",
    "examples",
    "default",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$defs",
    "definitions",
    "$vocabulary",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "discriminator",
    "example",
    "externalDocs",
    "xml",
    "$recursiveAnchor",
];

/// Does keyword `k` only annotate?
pub(crate) fn is_annotation(k: &str) -> bool {
    ANNOTATIONS.contains(&k)
}

/// Is `b` a subschema that every value obeys by its form alone: `true`, or an object of
/// annotations only (`{}`, `{"title": …}`)?
fn asserts_nothing(b: &Sub<'_>) -> bool {
    match &**b {
        SubNode::Schema { sub, negated: false } => match sub.node {
            Value::Bool(true) => true,
            Value::Object(obj) => obj.keys().all(|k| is_annotation(k)),
            _ => false,
        },
        _ => false,
    }
}

/// The draft that introduced an assertion keyword newer than draft 4 (in a schema of an
/// earlier draft it is an unknown keyword, which validators ignore).
pub(crate) fn introduced(kw: &str) -> Draft {
    match kw {
        "const" | "contains" | "propertyNames" => Draft::Draft6,
        "if" | "then" | "else" => Draft::Draft7,
        "dependentRequired"
        | "dependentSchemas"
        | "minContains"
        | "maxContains"
        | "unevaluatedProperties"
        | "unevaluatedItems" => Draft::Draft2019,
        "prefixItems" => Draft::Draft2020,
        _ => Draft::Draft4,
    }
}

/// Formats that JSON Schema defines but no regular language expresses exactly.
const IRREGULAR_FORMATS: [&str; 19] = [
    "date",
    "time",
    "date-time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "uuid",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords that apply other subschemas in place.
const IN_PLACE: [&str; 9] = ["allOf", "anyOf", "oneOf", "not", "if", "$ref", "contains", "$dynamicRef", "dependentSchemas"];

/// A pending disjunction: its alternatives (each a conjunction) and the chain of
/// subschemas being read in place around it.
pub(crate) type Disjunction<'a> = (Vec<Vec<Sub<'a>>>, Vec<SubKey>);

/// The child subschema at `tokens` below `sub`, entered (its own id and draft applied).
pub(crate) fn child<'a>(t: &Translator<'a>, sub: &Subschema<'a>, node: &'a Value, tokens: &[&str]) -> Sub<'a> {
    let mut pointer = sub.pointer.clone();
    for tok in tokens {
        pointer.push('/');
        pointer.push_str(&escape_pointer(tok));
    }
    let raw = Subschema { node, pointer, base: sub.base.clone(), draft: sub.draft };
    SubNode::schema(t.res.enter(&raw))
}

/// A number keyword's value.
pub(crate) fn num(sub: &Subschema<'_>, kw: &str, val: &Value) -> Result<Decimal> {
    value::number(val).ok_or_else(|| Translator::invalid(&sub.pointer, kw, &format!("must be a number, got {}", show(val))))
}

/// A count keyword's value (a non-negative integer; past `u64` it is as good as infinite).
pub(crate) fn count(sub: &Subschema<'_>, kw: &str, val: &Value) -> Result<u64> {
    match value::number(val) {
        Some(d) if d.is_integer() && !d.is_negative() => Ok(to_u64(&d)),
        _ => Err(Translator::invalid(&sub.pointer, kw, &format!("must be a non-negative integer, got {}", show(val)))),
    }
}

/// A non-negative integer as `u64`, saturating.
fn to_u64(d: &Decimal) -> u64 {
    let digits = d.significant_digits();
    let len = digits.len() as i64 + d.exponent();
    if len > 20 {
        return u64::MAX;
    }
    let mut n: u64 = 0;
    for b in digits.bytes().chain(std::iter::repeat(b'0')).take(len.max(0) as usize) {
        n = match n.checked_mul(10).and_then(|x| x.checked_add((b - b'0') as u64)) {
            Some(x) => x,
            None => return u64::MAX,
        };
    }
    n
}

/// A keyword's list of subschemas (`prefixItems` may be empty).
pub(crate) fn schema_list<'a>(t: &Translator<'a>, sub: &Subschema<'a>, kw: &str, val: &'a Value) -> Result<Vec<Sub<'a>>> {
    match val.as_array() {
        Some(items) if !items.is_empty() || kw == "prefixItems" => {
            Ok(items.iter().enumerate().map(|(i, s)| child(t, sub, s, &[kw, &i.to_string()])).collect())
        }
        _ => Err(Translator::invalid(&sub.pointer, kw, "must be a non-empty array of schemas")),
    }
}

/// The kinds of a `type` value (with OpenAPI's `nullable: true`, null too).
pub(crate) fn type_kinds(sub: &Subschema<'_>, val: &Value, obj: &Map<String, Value>) -> Result<Kinds> {
    let names: Vec<&Value> = match val {
        Value::String(_) => vec![val],
        Value::Array(a) => a.iter().collect(),
        _ => vec![],
    };
    if names.is_empty() && !matches!(val, Value::Array(_)) || names.iter().any(|n| !n.is_string()) {
        return Err(Translator::invalid(
            &sub.pointer,
            "type",
            &format!("must be a type name or a list of them, got {}", show(val)),
        ));
    }
    let mut kinds = Kinds::NONE;
    for n in names.iter().filter_map(|n| n.as_str()) {
        let Some(k) = Kinds::of_type_name(n) else {
            return Err(Translator::invalid(
                &sub.pointer,
                "type",
                &format!(
                    "unknown type {} (expected one of null, boolean, integer, number, string, array, object)",
                    value::repr(n)
                ),
            ));
        };
        kinds = kinds.or(k);
    }
    if obj.get("nullable") == Some(&Value::Bool(true)) {
        kinds = kinds.or(Kinds::NULL);
    }
    Ok(kinds)
}

/// The members of an enum without repeats (by JSON equality), with their canonical keys.
pub(crate) fn enum_members(val: &Value) -> (Vec<&Value>, Vec<String>) {
    let mut seen = crate::util::hash::HashSet::default();
    let (mut values, mut keys) = (Vec::new(), Vec::new());
    for v in val.as_array().into_iter().flatten() {
        let k = value::canon(v);
        if seen.insert(k.clone()) {
            values.push(v);
            keys.push(k);
        }
    }
    (values, keys)
}

impl<'a> Translator<'a> {
    /// [`enum_members`] of an `enum` array, canonicalized once per array: a disjunction's
    /// alternatives each read it again.
    pub(crate) fn enum_members_of(&mut self, val: &'a Value) -> (Vec<&'a Value>, Vec<String>) {
        self.enums.entry(val as *const Value as usize).or_insert_with(|| enum_members(val)).clone()
    }

    /// Adds the keywords of the (entered, positive) subschema `sub` to `shape`.
    pub(crate) fn absorb_keywords(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let Some(obj) = sub.node.as_object() else { return Ok(()) };
        for (kw, val) in obj {
            if introduced(kw) > sub.draft {
                continue; // not a keyword of this draft: an unknown keyword, ignored
            }
            self.keyword(shape, sub, obj, kw, val, disj, chain)?;
        }
        Ok(())
    }

    /// Adds keyword `kw` (with value `val`) of `sub` (whose object is `obj`) to `shape`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn keyword(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        kw: &str,
        val: &'a Value,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        match kw {
            "type" => {
                let kinds = type_kinds(sub, val, obj)?;
                let says_integer = val == "integer" || val.as_array().is_some_and(|a| a.iter().any(|n| n == "integer"));
                if sub.draft == Draft::Draft4 && says_integer {
                    shape.int_without_fraction = true;
                }
                shape.restrict(kinds);
            }
            "nullable" if !val.is_boolean() => return Err(Self::invalid(&sub.pointer, "nullable", "must be a boolean")),
            "enum" | "const" => self.k_enum(shape, sub, obj, kw, val)?,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => k_bound(shape, sub, obj, kw, val)?,
            "multipleOf" => {
                let d = num(sub, kw, val)?;
                if d.is_negative() || d.is_zero() {
                    return Err(Self::invalid(&sub.pointer, kw, &format!("must be greater than 0, got {}", show(val))));
                }
                shape.mults.push((d, format!("{}/multipleOf", sub.pointer)));
            }
            "minLength" | "minItems" | "minProperties" => k_count_min(shape, sub, kw, val)?,
            "maxLength" | "maxItems" | "maxProperties" => k_count_max(shape, sub, kw, val)?,
            "pattern" => {
                let Some(src) = val.as_str() else { return Err(Self::invalid(&sub.pointer, kw, "must be a string")) };
                let pointer = format!("{}/pattern", sub.pointer);
                if self.usable_pattern(src, &pointer)? {
                    shape.patterns.push((src.to_string(), pointer));
                }
            }
            "format" => self.k_format(shape, sub, val)?,
            "items" => self.k_items(shape, sub, obj, val)?,
            "prefixItems" => self.k_prefix(shape, sub, obj, val)?,
            "contains" => self.k_contains(shape, sub, obj, val)?,
            "uniqueItems" => self.k_unique(shape, sub, val)?,
            "properties" | "patternProperties" | "additionalProperties" | "unevaluatedProperties" => {
                if self.in_branching_unevaluated(chain) {
                    note_evaluation(shape, sub, obj, kw, chain);
                }
                self.k_object(shape, sub, obj, kw, val, chain)?
            }
            "unevaluatedItems" => self.k_unevaluated_items(shape, sub, obj, val)?,
            "required" => k_required(shape, sub, val)?,
            "propertyNames" => shape.prop_names.push(child(self, sub, val, &["propertyNames"])),
            "dependentRequired" | "dependentSchemas" | "dependencies" => self.k_dependencies(sub, kw, val, disj, chain)?,
            "allOf" => {
                for s in schema_list(self, sub, kw, val)? {
                    self.absorb(shape, &s, disj, chain)?;
                }
            }
            "anyOf" => {
                let branches = schema_list(self, sub, kw, val)?;
                let branching = self.in_branching_unevaluated(chain);
                // A branch that asserts nothing makes the `anyOf` hold whatever the others
                // say (where no `unevaluatedProperties` asks which branches hold).
                if !branching && branches.iter().any(asserts_nothing) {
                    return Ok(());
                }
                let alts = if branching && self.some_evaluate(&branches)? {
                    self.any_of_subsets(sub, branches)?
                } else {
                    branches.into_iter().map(|s| vec![s]).collect()
                };
                disj.push((alts, chain.to_vec()));
            }
            "oneOf" => self.k_one_of(shape, sub, val, disj, chain)?,
            "not" => {
                let neg = child(self, sub, val, &["not"]).negate();
                self.absorb(shape, &neg, disj, chain)?;
            }
            "if" => {
                let alone = self.in_branching_unevaluated(chain);
                self.k_if(sub, obj, val, disj, chain, alone)
            }
            "$dynamicRef" | "$recursiveRef" => match self.res.resolve_dynamic(sub, kw, val)? {
                // One subschema declares the anchor: the reference is a `$ref`.
                Some(target) => self.absorb(shape, &SubNode::schema(target), disj, chain)?,
                None => self.unsupported(
                    &sub.pointer,
                    kw,
                    "dynamic references are not supported where several subschemas declare the anchor they name and \
                     which one applies depends on the way a value is reached",
                )?,
            },
            _ => {} // annotations, `then`/`else`/`minContains`… (read with their keyword), unknown keywords
        }
        Ok(())
    }

    fn k_enum(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        kw: &str,
        val: &'a Value,
    ) -> Result<()> {
        let (mut values, mut keys) = if kw == "const" {
            (vec![val], vec![value::canon(val)])
        } else {
            if !val.is_array() {
                return Err(Self::invalid(&sub.pointer, "enum", "must be an array"));
            }
            self.enum_members_of(val)
        };
        if kw == "enum" && obj.get("nullable") == Some(&Value::Bool(true)) && shape.enumeration.is_none() {
            static NULL: Value = Value::Null;
            if !keys.iter().any(|k| k == "n") {
                values.push(&NULL);
                keys.push("n".to_string());
            }
        }
        if shape.enumeration.is_some() {
            let (v2, k2): (Vec<_>, Vec<_>) = values.into_iter().zip(keys).filter(|(_, k)| shape.enum_keys.contains(k)).unzip();
            (values, keys) = (v2, k2);
        }
        shape.unsat |= values.is_empty();
        shape.enumeration = Some(values);
        shape.enum_keys = keys.into_iter().collect();
        Ok(())
    }

    fn k_format(&mut self, shape: &mut Shape<'a>, sub: &Subschema<'a>, val: &Value) -> Result<()> {
        let Some(name) = val.as_str() else { return Err(Self::invalid(&sub.pointer, "format", "must be a string")) };
        if super::super::formats::format_source(name).is_some() || name == REGEX_FORMAT {
            shape.formats.push((name.to_string(), format!("{}/format", sub.pointer)));
        } else if IRREGULAR_FORMATS.contains(&name) {
            self.unsupported(
                &sub.pointer,
                "format",
                &format!("format {} cannot be expressed as a regular language", value::repr(name)),
            )?;
        }
        Ok(()) // unknown formats are annotations
    }

    fn k_items(&mut self, shape: &mut Shape<'a>, sub: &Subschema<'a>, obj: &'a Map<String, Value>, val: &'a Value) -> Result<()> {
        if val.is_array() {
            if sub.draft >= Draft::Draft2020 {
                return Err(Self::invalid(&sub.pointer, "items", "must be a schema (use prefixItems for tuples)"));
            }
            let prefix =
                if val.as_array().is_some_and(|a| a.is_empty()) { Vec::new() } else { schema_list(self, sub, "items", val)? };
            static TRUE: Value = Value::Bool(true);
            let rest = child(self, sub, obj.get("additionalItems").unwrap_or(&TRUE), &["additionalItems"]);
            shape.arr_clauses.push((prefix, Some(rest)));
            return Ok(());
        }
        if sub.draft >= Draft::Draft2020 && obj.contains_key("prefixItems") {
            return Ok(()); // read together with prefixItems
        }
        shape.arr_clauses.push((Vec::new(), Some(child(self, sub, val, &["items"]))));
        Ok(())
    }

    fn k_prefix(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        val: &'a Value,
    ) -> Result<()> {
        if sub.draft < Draft::Draft2020 {
            return Ok(()); // not a keyword before 2020-12
        }
        let prefix = schema_list(self, sub, "prefixItems", val)?;
        let rest = if let Some(items) = obj.get("items") {
            Some(child(self, sub, items, &["items"]))
        } else if let (Some(u), false) = (obj.get("unevaluatedItems"), IN_PLACE.iter().any(|k| obj.contains_key(*k))) {
            Some(child(self, sub, u, &["unevaluatedItems"]))
        } else {
            None
        };
        shape.arr_clauses.push((prefix, rest));
        Ok(())
    }

    fn k_contains(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        val: &'a Value,
    ) -> Result<()> {
        let newer = sub.draft >= Draft::Draft2019;
        let lo = match obj.get("minContains").filter(|_| newer) {
            Some(v) => count(sub, "minContains", v)?,
            None => 1,
        };
        let hi = match obj.get("maxContains").filter(|_| newer) {
            Some(v) => Some(count(sub, "maxContains", v)?),
            None => None,
        };
        if lo == 0 && hi.is_none() {
            return Ok(());
        }
        shape.contains.push((child(self, sub, val, &["contains"]), lo, hi, 0));
        Ok(())
    }

    fn k_unique(&mut self, shape: &mut Shape<'a>, sub: &Subschema<'a>, val: &Value) -> Result<()> {
        let Some(unique) = val.as_bool() else { return Err(Self::invalid(&sub.pointer, "uniqueItems", "must be a boolean")) };
        // Whether it can be enforced depends on the whole shape: see `emit_array`.
        if unique && shape.unique.is_none() {
            shape.unique = Some(sub.pointer.clone());
            shape.unsat |= shape.duplicate.is_some();
        }
        Ok(())
    }

    fn k_object(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        kw: &str,
        val: &'a Value,
        chain: &[SubKey],
    ) -> Result<()> {
        match kw {
            "properties" => {
                let Some(map) = val.as_object() else { return Err(Self::invalid(&sub.pointer, kw, "must be an object")) };
                let props = map.iter().map(|(k, s)| (k.clone(), child(self, sub, s, &["properties", k]))).collect();
                self.object_clause(shape, sub, obj, props)
            }
            "patternProperties" => {
                if !val.is_object() {
                    return Err(Self::invalid(&sub.pointer, kw, "must be an object"));
                }
                if obj.contains_key("properties") {
                    return Ok(()); // read together with properties
                }
                self.object_clause(shape, sub, obj, Vec::new())
            }
            "additionalProperties" => {
                if obj.contains_key("properties") || obj.contains_key("patternProperties") {
                    return Ok(());
                }
                self.object_clause(shape, sub, obj, Vec::new())
            }
            _ => {
                if obj.contains_key("additionalProperties") {
                    return Ok(()); // every key is evaluated beside it
                }
                match self.unevaluated_reach(sub)? {
                    Reach::Dynamic => {
                        return self.unsupported(
                            &sub.pointer,
                            "unevaluatedProperties",
                            "supported only where the in-place applicators beside it are no dynamic references",
                        )
                    }
                    Reach::Branching => {
                        // Made when the shape is whole, from the branches it took.
                        if let Some(own) = chain.last() {
                            shape.pending_unevaluated.push((sub.clone(), own.clone()));
                        }
                        return Ok(());
                    }
                    Reach::Always(_) => {}
                }
                if ["properties", "patternProperties"].iter().any(|k| obj.contains_key(*k)) {
                    return Ok(()); // read with them
                }
                self.object_clause(shape, sub, obj, Vec::new())
            }
        }
    }

    /// One object clause of `sub`: `props` with its patterns and additional properties.
    fn object_clause(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        mut props: Vec<(String, Sub<'a>)>,
    ) -> Result<()> {
        let mut patterns = Vec::new();
        // A pattern no automaton has (strict=False): which keys it exempts from
        // `additionalProperties` is unknown, so the clause puts no bound on other keys.
        let mut unknown_pattern = false;
        if let Some(pp) = obj.get("patternProperties").and_then(Value::as_object) {
            for (src, s) in pp {
                let pointer = format!("{}/patternProperties/{}", sub.pointer, escape_pointer(src));
                if !self.usable_key_pattern(src, &pointer)? {
                    unknown_pattern = true;
                    continue;
                }
                patterns.push((src.clone(), child(self, sub, s, &["patternProperties", src])));
            }
        }
        static TRUE: Value = Value::Bool(true);
        // `unevaluatedProperties` (without `additionalProperties` beside it): what the
        // applicators beside it evaluate joins the clause's names and patterns, with no
        // schema of their own here (their own clauses say it).
        let unevaluated = match obj.get("unevaluatedProperties") {
            Some(u) if !obj.contains_key("additionalProperties") => self.unevaluated_scope(sub)?.map(|e| (u, e)),
            _ => None,
        };
        let mut exempt_all = false;
        if let Some((_, evaluated)) = &unevaluated {
            let anything = child(self, sub, &TRUE, &["unevaluatedProperties"]);
            for k in &evaluated.names {
                if !props.iter().any(|(p, _)| p == k) {
                    props.push((k.clone(), anything.clone()));
                }
            }
            for (src, pointer) in &evaluated.patterns {
                if !self.usable_key_pattern(src, pointer)? {
                    unknown_pattern = true;
                    continue;
                }
                patterns.push((src.clone(), anything.clone()));
            }
            exempt_all = evaluated.all;
        }
        let additional = if unknown_pattern {
            Some(child(self, sub, &TRUE, &["patternProperties"]))
        } else if let Some(a) = obj.get("additionalProperties") {
            Some(child(self, sub, a, &["additionalProperties"]))
        } else if let (Some((u, _)), false) = (unevaluated, exempt_all) {
            Some(child(self, sub, u, &["unevaluatedProperties"]))
        } else {
            None
        };
        shape.obj_clauses.push(ObjClause::new(props, patterns, additional));
        Ok(())
    }

    /// The properties the in-place applicators beside `unevaluatedProperties` in `sub`
    /// evaluate whenever `sub` holds, so that it applies to the keys they and its own
    /// `properties` and `patternProperties` leave, as `additionalProperties` would. Those
    /// reached through `allOf` and `$ref` alone (at any depth) always hold when `sub` does:
    /// their `properties` names and `patternProperties` patterns are gathered, and an
    /// `additionalProperties` or `unevaluatedProperties` among them evaluates every key.
    /// Those reached through `anyOf`, `oneOf`, `if`/`then`/`else` or `dependentSchemas`
    /// evaluate keys only in some branch: None if one does. (`not` keeps no annotation:
    /// what it holds does not count.) Dynamic references answer None; more subschemas to
    /// look at than `Limits::max_unevaluated_subschemas` are an error.
    pub(crate) fn unevaluated_scope(&self, sub: &Subschema<'a>) -> Result<Option<Evaluated>> {
        Ok(match self.unevaluated_reach(sub)? {
            Reach::Always(e) => Some(e),
            Reach::Branching | Reach::Dynamic => None,
        })
    }

    /// How the in-place applicators beside the `unevaluatedProperties` of `sub` evaluate
    /// properties (see [`Translator::unevaluated_scope`]).
    pub(crate) fn unevaluated_reach(&self, sub: &Subschema<'a>) -> Result<Reach> {
        let mut branching = false;
        const EVALUATING: [&str; 4] = ["properties", "patternProperties", "additionalProperties", "unevaluatedProperties"];
        let mut out = Evaluated::default();
        // (subschema, is it `sub` itself, does it hold whenever `sub` does)
        let mut stack = vec![(sub.clone(), true, true)];
        let mut seen = HashSet::new();
        while let Some((s, own, always)) = stack.pop() {
            let Some(obj) = s.node.as_object() else { continue };
            if !seen.insert(s.node as *const Value as usize) {
                continue;
            }
            let most = self.limits.max_unevaluated_subschemas;
            if seen.len() > most {
                return Err(Self::limit_at(
                    &format!("{}/unevaluatedProperties", sub.pointer),
                    "unevaluatedProperties",
                    &format!("the subschemas read in place beside it, more than {most}"),
                    "max_unevaluated_subschemas",
                    most,
                ));
            }
            for kw in ["$dynamicRef", "$recursiveRef"] {
                if let Some(reference) = obj.get(kw) {
                    match self.res.resolve_dynamic(&s, kw, reference)? {
                        Some(target) => stack.push((target, false, always)),
                        None => return Ok(Reach::Dynamic),
                    }
                }
            }
            if !own && EVALUATING.iter().any(|k| obj.contains_key(*k)) {
                if !always {
                    branching = true;
                    continue; // (what it holds below is in its branch too)
                }
                out.gather(&s, obj);
            }
            // Children in document order, pushed in reverse: names are gathered in the
            // order the schema lists them (`$ref`, then `allOf`...).
            let mut children = Vec::new();
            if let Some(reference) = obj.get("$ref") {
                children.push((self.res.resolve(&s, reference)?, false, always));
            }
            let mut push = |node: &'a Value, tokens: &[&str], always: bool| {
                if let Some(c) = child(self, &s, node, tokens).subschema() {
                    children.push((c.clone(), false, always));
                }
            };
            for kw in ["allOf", "anyOf", "oneOf"] {
                if let Some(list) = obj.get(kw).and_then(Value::as_array) {
                    for (i, x) in list.iter().enumerate() {
                        push(x, &[kw, &i.to_string()], always && kw == "allOf");
                    }
                }
            }
            for kw in ["if", "then", "else"] {
                if let Some(x) = obj.get(kw) {
                    push(x, &[kw], false);
                }
            }
            if let Some(map) = obj.get("dependentSchemas").and_then(Value::as_object) {
                for (k, x) in map {
                    push(x, &["dependentSchemas", k], false);
                }
            }
            stack.extend(children.into_iter().rev());
        }
        Ok(if branching { Reach::Branching } else { Reach::Always(out) })
    }

    fn k_unevaluated_items(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        val: &'a Value,
    ) -> Result<()> {
        let applicators = ["allOf", "anyOf", "oneOf", "not", "if", "$ref", "contains", "$dynamicRef"];
        if applicators.iter().any(|k| obj.contains_key(*k)) {
            return self.unsupported(
                &sub.pointer,
                "unevaluatedItems",
                "supported only without in-place applicators or contains beside it",
            );
        }
        if !obj.contains_key("items") && !obj.contains_key("prefixItems") {
            shape.arr_clauses.push((Vec::new(), Some(child(self, sub, val, &["unevaluatedItems"]))));
        }
        Ok(())
    }

    /// `dependentRequired`, `dependentSchemas`, `dependencies`: per key, not an object, or
    /// the key absent, or the key present with what it needs.
    fn k_dependencies(
        &mut self,
        sub: &Subschema<'a>,
        kw: &str,
        val: &'a Value,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let Some(map) = val.as_object() else { return Err(Self::invalid(&sub.pointer, kw, "must be an object")) };
        // Keys whose dependencies are the same (a metaschema's "minimum, maximum, … need a
        // numeric type") make one disjunction: "none of them is present, or the
        // dependency holds" is what each of theirs says, so one alternative per group,
        // not a product over the keys.
        let mut groups: Vec<(&'a Value, Vec<String>)> = Vec::new();
        for (k, deps) in map {
            match deps {
                Value::Array(names) => {
                    if names.iter().any(|d| !d.is_string()) {
                        return Err(Self::invalid(
                            &sub.pointer,
                            kw,
                            &format!("the dependencies of {} must be strings", value::repr(k)),
                        ));
                    }
                    if names.is_empty() {
                        continue;
                    }
                }
                Value::Object(_) | Value::Bool(_) => {
                    if asserts_nothing(&child(self, sub, deps, &[kw, k])) {
                        continue;
                    }
                }
                _ => {
                    return Err(Self::invalid(
                        &sub.pointer,
                        kw,
                        &format!("the value for {} must be an array or a schema", value::repr(k)),
                    ))
                }
            }
            match groups.iter_mut().find(|(d, _)| *d == deps) {
                Some((_, keys)) => keys.push(k.clone()),
                None => groups.push((deps, vec![k.clone()])),
            }
        }
        for (deps, keys) in groups {
            // With one key, the dependency names it present (the same language, and the
            // alternative the shape reads most directly).
            let mut present_names = if keys.len() == 1 { keys.clone() } else { Vec::new() };
            let needs: Vec<Sub<'a>> = match deps {
                Value::Array(names) => {
                    present_names.extend(names.iter().filter_map(Value::as_str).map(str::to_string));
                    vec![self.synthetic(Synthetic::Present(present_names))]
                }
                _ => {
                    let mut needs = Vec::new();
                    if !present_names.is_empty() {
                        needs.push(self.synthetic(Synthetic::Present(present_names)));
                    }
                    needs.push(child(self, sub, deps, &[kw, &keys[0]]));
                    needs
                }
            };
            let not_object = self.synthetic(Synthetic::Kinds(Kinds::ALL.without(Kinds::OBJ)));
            let object = self.synthetic(Synthetic::Kinds(Kinds::OBJ));
            let mut absent = vec![object.clone()];
            absent.extend(keys.iter().map(|k| self.synthetic(Synthetic::Absent(k.clone()))));
            let mut present = vec![object];
            present.extend(needs);
            disj.push((vec![vec![not_object], absent, present], chain.to_vec()));
        }
        Ok(())
    }

    fn k_if(
        &mut self,
        sub: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        val: &'a Value,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
        alone: bool,
    ) {
        // A lone `if` changes no value, but what it evaluates when it holds counts for an
        // `unevaluatedProperties` above it (`alone`): then both ways are alternatives.
        if !obj.contains_key("then") && !obj.contains_key("else") && !alone {
            return;
        }
        static TRUE: Value = Value::Bool(true);
        let cond = child(self, sub, val, &["if"]);
        let then = child(self, sub, obj.get("then").unwrap_or(&TRUE), &["then"]);
        let other = child(self, sub, obj.get("else").unwrap_or(&TRUE), &["else"]);
        disj.push((vec![vec![cond.clone(), then], vec![cond.negate(), other]], chain.to_vec()));
    }
}

fn k_bound(shape: &mut Shape<'_>, sub: &Subschema<'_>, obj: &Map<String, Value>, kw: &str, val: &Value) -> Result<()> {
    if kw.starts_with("exclusive") && val.is_boolean() {
        if sub.draft == Draft::Draft4 {
            return Ok(()); // draft 4's boolean modifier, read by minimum/maximum
        }
        return Err(Translator::invalid(&sub.pointer, kw, "must be a number"));
    }
    let d = num(sub, kw, val)?;
    let draft4_exclusive = |k: &str| sub.draft == Draft::Draft4 && obj.get(k) == Some(&Value::Bool(true));
    match kw {
        "minimum" => shape.set_lo(d, draft4_exclusive("exclusiveMinimum")),
        "maximum" => shape.set_hi(d, draft4_exclusive("exclusiveMaximum")),
        "exclusiveMinimum" => shape.set_lo(d, true),
        _ => shape.set_hi(d, true),
    }
    Ok(())
}

fn count_field(kw: &str) -> CountField {
    match kw {
        "minLength" => CountField::MinLen,
        "maxLength" => CountField::MaxLen,
        "minItems" => CountField::MinItems,
        "maxItems" => CountField::MaxItems,
        "minProperties" => CountField::MinProps,
        _ => CountField::MaxProps,
    }
}

fn k_count_min(shape: &mut Shape<'_>, sub: &Subschema<'_>, kw: &str, val: &Value) -> Result<()> {
    let n = count(sub, kw, val)?;
    let field = count_field(kw);
    let cur = match field {
        CountField::MinLen => &mut shape.min_len,
        CountField::MinItems => &mut shape.min_items,
        _ => &mut shape.min_props,
    };
    if n > *cur {
        *cur = n;
        shape.count_ptrs.insert(field, format!("{}/{kw}", sub.pointer));
    }
    Ok(())
}

fn k_count_max(shape: &mut Shape<'_>, sub: &Subschema<'_>, kw: &str, val: &Value) -> Result<()> {
    let n = count(sub, kw, val)?;
    let field = count_field(kw);
    let cur = match field {
        CountField::MaxLen => &mut shape.max_len,
        CountField::MaxItems => &mut shape.max_items,
        _ => &mut shape.max_props,
    };
    if cur.is_none_or(|c| n < c) {
        *cur = Some(n);
        shape.count_ptrs.insert(field, format!("{}/{kw}", sub.pointer));
    }
    Ok(())
}

fn k_required(shape: &mut Shape<'_>, sub: &Subschema<'_>, val: &Value) -> Result<()> {
    let names: Option<Vec<String>> = val.as_array().and_then(|a| a.iter().map(|k| k.as_str().map(str::to_string)).collect());
    let Some(names) = names else {
        if sub.draft == Draft::Draft4 && val.is_boolean() {
            return Ok(());
        }
        return Err(Translator::invalid(&sub.pointer, "required", "must be an array of strings"));
    };
    shape.require(&names);
    Ok(())
}

/// Records in `shape` what `sub` (`obj`) evaluates, once (at the first of its evaluating
/// keywords, `kw` being read), with the chain it is read through (see
/// [`Shape::evaluations`]).
fn note_evaluation(shape: &mut Shape<'_>, sub: &Subschema<'_>, obj: &Map<String, Value>, kw: &str, chain: &[SubKey]) {
    const EVALUATING: [&str; 4] = ["properties", "patternProperties", "additionalProperties", "unevaluatedProperties"];
    let first = obj.keys().find(|k| EVALUATING.contains(&k.as_str()) && introduced(k) <= sub.draft);
    if first.map(String::as_str) != Some(kw) {
        return;
    }
    let mut e = Evaluated::default();
    e.gather(sub, obj);
    // Its own `unevaluatedProperties` evaluates every key for those above it only.
    let own_unevaluated = obj.contains_key("unevaluatedProperties") && !obj.contains_key("additionalProperties");
    if own_unevaluated {
        e.all = false;
    }
    shape.evaluations.push((chain.into(), std::rc::Rc::new(e), own_unevaluated));
}

/// How the in-place applicators beside an `unevaluatedProperties` evaluate properties.
pub(crate) enum Reach {
    /// Whenever the subschema holds: these.
    Always(Evaluated),
    /// Some only in a branch (`anyOf`, `oneOf`, `if`/`then`/`else`, `dependentSchemas`):
    /// which ones depends on the branches a value takes.
    Branching,
    /// Through a dynamic reference: not followed.
    Dynamic,
}
