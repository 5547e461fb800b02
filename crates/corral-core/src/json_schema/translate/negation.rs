//! `not` pushed down to the keywords: the negation of a subschema as alternatives, each a
//! conjunction of subschemas and synthetic constraints. A keyword whose negation is not
//! exact is reported (see [`Translator::unsupported`]).

use serde_json::{Map, Value};

use super::super::resources::{Draft, Subschema};
use super::keywords::{child, count, introduced, is_annotation, num, schema_list, type_kinds};
use super::shape::{Evaluated, Field, KeyFilter, Sub, SubNode, Synthetic};
use super::value::{self, show};
use super::{Kinds, Translator, REGEX_FORMAT};
use crate::error::Result;

/// Alternatives, each a conjunction.
type Alternatives<'a> = Vec<Vec<Sub<'a>>>;

impl<'a> Translator<'a> {
    /// `not s` as alternatives (none: `s` allows everything).
    pub(crate) fn negation(&mut self, s: &Subschema<'a>) -> Result<Alternatives<'a>> {
        let obj = match s.node {
            Value::Bool(true) => return Ok(Vec::new()),
            Value::Bool(false) => return Ok(vec![Vec::new()]),
            Value::Object(obj) if obj.is_empty() => return Ok(Vec::new()),
            Value::Object(obj) => obj,
            _ => return Err(Self::invalid(&s.pointer, "", "a schema must be an object or a boolean")),
        };
        let mut alts = Vec::new();
        if let Some(reference) = obj.get("$ref") {
            let target = SubNode::schema(self.res.resolve(s, reference)?);
            alts.push(vec![target.negate()]);
            if s.draft < Draft::Draft2019 {
                return Ok(alts);
            }
        }
        for (kw, val) in obj {
            if introduced(kw) > s.draft {
                continue;
            }
            alts.extend(self.negate_keyword(s, obj, kw, val)?);
        }
        Ok(absent_or_bad(alts))
    }

    /// The alternatives of a keyword whose negation is dropped (`strict=False`): one that
    /// allows any value. The negation of the whole subschema then allows anything, so the
    /// grammar is wider than the schema there, never narrower.
    fn anything() -> Alternatives<'a> {
        vec![Vec::new()]
    }

    fn field(&mut self, kinds: Kinds, field: Field<'a>) -> Sub<'a> {
        self.synthetic(Synthetic::Field(kinds, field))
    }

    fn kinds(&mut self, kinds: Kinds) -> Sub<'a> {
        self.synthetic(Synthetic::Kinds(kinds))
    }

    /// The alternatives of "keyword `kw` fails".
    fn negate_keyword(
        &mut self,
        s: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        kw: &str,
        val: &'a Value,
    ) -> Result<Alternatives<'a>> {
        let one = |x: Sub<'a>| vec![vec![x]];
        Ok(match kw {
            "type" => {
                let rest = Kinds::ALL.without(type_kinds(s, val, obj)?);
                if rest.is_empty() {
                    Vec::new()
                } else {
                    one(self.kinds(rest))
                }
            }
            "enum" | "const" => self.negate_enum(s, kw, val)?,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => self.negate_bound(s, obj, kw, val)?,
            "multipleOf" => {
                let d = num(s, kw, val)?;
                if d.is_negative() || d.is_zero() {
                    return Err(Self::invalid(&s.pointer, kw, &format!("must be greater than 0, got {}", show(val))));
                }
                one(self.field(Kinds::NUMBER, Field::NegMultiple(d, format!("{}/multipleOf", s.pointer))))
            }
            "minLength" | "minItems" | "minProperties" => {
                let n = count(s, kw, val)?;
                if n == 0 {
                    return Ok(Vec::new());
                }
                let (kinds, f) = match kw {
                    "minLength" => (Kinds::STR, Field::MaxLen(n - 1)),
                    "minItems" => (Kinds::ARR, Field::MaxItems(n - 1)),
                    _ => (Kinds::OBJ, Field::MaxProps(n - 1)),
                };
                one(self.field(kinds, f))
            }
            "maxLength" | "maxItems" | "maxProperties" => {
                let n = count(s, kw, val)?.saturating_add(1);
                let (kinds, f) = match kw {
                    "maxLength" => (Kinds::STR, Field::MinLen(n)),
                    "maxItems" => (Kinds::ARR, Field::MinItems(n)),
                    _ => (Kinds::OBJ, Field::MinProps(n)),
                };
                one(self.field(kinds, f))
            }
            "pattern" => {
                let Some(src) = val.as_str() else { return Err(Self::invalid(&s.pointer, kw, "must be a string")) };
                let pointer = format!("{}/pattern", s.pointer);
                if !self.usable_pattern(src, &pointer)? {
                    return Ok(Self::anything());
                }
                one(self.field(Kinds::STR, Field::NegPattern(src.to_string(), pointer)))
            }
            "format" => {
                let Some(name) = val.as_str() else { return Err(Self::invalid(&s.pointer, kw, "must be a string")) };
                if super::super::formats::format_source(name).is_some() {
                    one(self.field(Kinds::STR, Field::NegFormat(name.to_string(), format!("{}/format", s.pointer))))
                } else if name == REGEX_FORMAT {
                    // The check beside the parser says when a pattern can still be
                    // finished, not when a string can still fail to be one.
                    self.unsupported(
                        &s.pointer,
                        kw,
                        "the strings that are not regular expressions (format 'regex' inside not, oneOf or if) are \
                         not enforced",
                    )?;
                    Self::anything()
                } else {
                    // Unknown formats are annotations; known irregular ones are reported
                    // (strict=False: dropped, so the negation allows anything).
                    let mut shape = super::shape::Shape::default();
                    let before = self.warnings.len();
                    self.keyword(&mut shape, s, obj, kw, val, &mut Vec::new(), &[])?;
                    if self.warnings.len() > before {
                        Self::anything()
                    } else {
                        Vec::new()
                    }
                }
            }
            "required" => {
                let Some(names) = val.as_array() else { return Ok(Vec::new()) };
                let mut alts = Vec::new();
                for k in names.iter().filter_map(Value::as_str) {
                    alts.push(vec![self.kinds(Kinds::OBJ), self.synthetic(Synthetic::Absent(k.to_string()))]);
                }
                alts
            }
            "properties" => self.negate_properties(s, val)?,
            "items" => self.negate_items(s, obj, val)?,
            "additionalItems" => self.negate_additional_items(s, obj, val),
            "prefixItems" => self.negate_tuple(s, "prefixItems", val)?,
            "contains" => {
                if obj.contains_key("minContains") || obj.contains_key("maxContains") {
                    self.unsupported(&s.pointer, "contains", "cannot be negated with minContains/maxContains")?;
                    return Ok(Self::anything());
                }
                let good = child(self, s, val, &["contains"]).negate();
                vec![vec![self.kinds(Kinds::ARR), self.synthetic(Synthetic::EveryItem(good))]]
            }
            "allOf" => schema_list(self, s, kw, val)?.into_iter().map(|b| vec![b.negate()]).collect(),
            "anyOf" => vec![schema_list(self, s, kw, val)?.into_iter().map(|b| b.negate()).collect()],
            "oneOf" => {
                let branches = schema_list(self, s, kw, val)?;
                let mut alts = vec![branches.iter().map(|b| b.negate()).collect::<Vec<_>>()];
                for (i, a) in branches.iter().enumerate() {
                    for b in &branches[i + 1..] {
                        alts.push(vec![a.clone(), b.clone()]);
                    }
                }
                alts
            }
            "not" => vec![vec![child(self, s, val, &["not"])]],
            "if" => {
                let cond = child(self, s, val, &["if"]);
                let mut alts = Vec::new();
                if let Some(then) = obj.get("then") {
                    alts.push(vec![cond.clone(), child(self, s, then, &["then"]).negate()]);
                }
                if let Some(other) = obj.get("else") {
                    alts.push(vec![cond.negate(), child(self, s, other, &["else"]).negate()]);
                }
                alts
            }
            "dependentRequired" | "dependentSchemas" | "dependencies" => self.negate_dependencies(s, kw, val)?,
            "additionalProperties" if val == &Value::Bool(true) => Vec::new(),
            "additionalProperties" => self.other_key_breaks(s, obj, kw, val, Evaluated::default())?,
            "patternProperties" => self.negate_pattern_properties(s, val)?,
            "propertyNames" if val == &Value::Bool(true) => Vec::new(),
            "propertyNames" => {
                let filter = KeyFilter { breaks_names: vec![child(self, s, val, &[kw])], ..KeyFilter::default() };
                let pointer = format!("{}/{kw}", s.pointer);
                let anything = self.synthetic(Synthetic::Kinds(Kinds::ALL));
                vec![vec![self.kinds(Kinds::OBJ), self.synthetic(Synthetic::OtherKey(filter, anything, pointer))]]
            }
            // Beside `additionalProperties` it applies to no key; where the applicators
            // beside it evaluate keys unconditionally or not at all, it is
            // `additionalProperties` beside their names and patterns too.
            "unevaluatedProperties" if obj.contains_key("additionalProperties") || val == &Value::Bool(true) => Vec::new(),
            "unevaluatedProperties" => match self.unevaluated_scope(s)? {
                Some(evaluated) if evaluated.all => Vec::new(),
                Some(evaluated) => self.other_key_breaks(s, obj, kw, val, evaluated)?,
                None => {
                    self.unsupported(&s.pointer, kw, "cannot be negated exactly (inside `not`, `oneOf` or `if`)")?;
                    Self::anything()
                }
            },
            "uniqueItems" if val == &Value::Bool(false) => Vec::new(),
            "uniqueItems" => vec![vec![self.synthetic(Synthetic::Duplicate(s.pointer.clone()))]],
            "unevaluatedItems" => {
                self.unsupported(&s.pointer, kw, "cannot be negated exactly (inside `not`, `oneOf` or `if`)")?;
                Self::anything()
            }
            "$dynamicRef" | "$recursiveRef" => match self.res.resolve_dynamic(s, kw, val)? {
                Some(target) => vec![vec![SubNode::schema(target).negate()]],
                None => {
                    self.unsupported(&s.pointer, kw, "cannot be negated exactly (inside `not`, `oneOf` or `if`)")?;
                    Self::anything()
                }
            },
            _ => {
                let _ = is_annotation(kw); // annotations, `then`/`else`…, unknown keywords: nothing to negate
                Vec::new()
            }
        })
    }

    /// Not `additionalProperties` (or an `unevaluatedProperties` that reads as it): some
    /// key other than the `properties` names, matching none of the `patternProperties`
    /// beside them (nor, for `unevaluatedProperties`, what the applicators beside it
    /// evaluate: `more`), has a value that breaks `val`; the object's own keys say which
    /// keys that can be (see [`Translator::expand`]).
    fn other_key_breaks(
        &mut self,
        s: &Subschema<'a>,
        obj: &'a Map<String, Value>,
        kw: &str,
        val: &'a Value,
        more: Evaluated,
    ) -> Result<Alternatives<'a>> {
        let own = obj.get("properties").and_then(Value::as_object);
        let mut names: Vec<String> = own.map(|m| m.keys().cloned().collect()).unwrap_or_default();
        let Some(mut outside) = self.usable_patterns(s, obj.get("patternProperties"))? else { return Ok(Self::anything()) };
        names.extend(more.names.into_iter().filter(|k| !own.is_some_and(|m| m.contains_key(k))));
        for (src, pointer) in more.patterns {
            if !self.usable_pattern(&src, &format!("{pointer}/pattern"))? {
                return Ok(Self::anything());
            }
            outside.push((src, pointer));
        }
        let filter = KeyFilter { names, outside, ..KeyFilter::default() };
        let bad = child(self, s, val, &[kw]).negate();
        let pointer = format!("{}/{kw}", s.pointer);
        Ok(vec![vec![self.kinds(Kinds::OBJ), self.synthetic(Synthetic::OtherKey(filter, bad, pointer))]])
    }

    /// Not `patternProperties`: for some pattern, a key it matches has a value that
    /// breaks the pattern's schema.
    fn negate_pattern_properties(&mut self, s: &Subschema<'a>, val: &'a Value) -> Result<Alternatives<'a>> {
        let Some(map) = val.as_object() else { return Err(Self::invalid(&s.pointer, "patternProperties", "must be an object")) };
        let Some(patterns) = self.usable_patterns(s, Some(val))? else { return Ok(Self::anything()) };
        let mut alts = Vec::new();
        for ((src, sch), (_, pointer)) in map.iter().zip(patterns) {
            let bad = child(self, s, sch, &["patternProperties", src]).negate();
            let filter = KeyFilter { inside: vec![(src.clone(), pointer.clone())], ..KeyFilter::default() };
            alts.push(vec![self.kinds(Kinds::OBJ), self.synthetic(Synthetic::OtherKey(filter, bad, pointer))]);
        }
        Ok(alts)
    }

    /// The patterns of a `patternProperties` value with their pointers; None (after the
    /// report) if one has a construct no automaton has, so that the negation allows
    /// anything (`strict=False`).
    fn usable_patterns(&mut self, s: &Subschema<'a>, val: Option<&'a Value>) -> Result<Option<Vec<(String, String)>>> {
        let Some(map) = val.and_then(Value::as_object) else { return Ok(Some(Vec::new())) };
        let mut out = Vec::with_capacity(map.len());
        for (src, sch) in map {
            let pointer = child(self, s, sch, &["patternProperties", src]).pointer().to_string();
            if !self.usable_pattern(src, &format!("{pointer}/pattern"))? {
                return Ok(None);
            }
            out.push((src.clone(), pointer));
        }
        Ok(Some(out))
    }

    fn negate_enum(&mut self, s: &Subschema<'a>, kw: &str, val: &'a Value) -> Result<Alternatives<'a>> {
        let (values, keys) = if kw == "const" {
            (vec![val], vec![value::canon(val)])
        } else {
            if !val.is_array() {
                return Err(Self::invalid(&s.pointer, "enum", "must be an array"));
            }
            self.enum_members_of(val)
        };
        // Arrays and objects among them are excluded as values too (see `absorb`).
        Ok(vec![vec![self.synthetic(Synthetic::NotValues(values, keys))]])
    }

    fn negate_bound(&mut self, s: &Subschema<'a>, obj: &Map<String, Value>, kw: &str, val: &Value) -> Result<Alternatives<'a>> {
        if val.is_boolean() {
            return Ok(Vec::new()); // draft 4's modifier
        }
        let d = num(s, kw, val)?;
        let draft4_exclusive = |k: &str| s.draft == Draft::Draft4 && obj.get(k) == Some(&Value::Bool(true));
        let f = match kw {
            "minimum" => Field::Hi(d, !draft4_exclusive("exclusiveMinimum")),
            "maximum" => Field::Lo(d, !draft4_exclusive("exclusiveMaximum")),
            "exclusiveMinimum" => Field::Hi(d, false),
            _ => Field::Lo(d, false),
        };
        Ok(vec![vec![self.field(Kinds::NUMBER, f)]])
    }

    fn negate_properties(&mut self, s: &Subschema<'a>, val: &'a Value) -> Result<Alternatives<'a>> {
        let Some(map) = val.as_object() else { return Err(Self::invalid(&s.pointer, "properties", "must be an object")) };
        let mut alts = Vec::new();
        for (k, sch) in map {
            let bad = child(self, s, sch, &["properties", k]).negate();
            alts.push(vec![
                self.kinds(Kinds::OBJ),
                self.synthetic(Synthetic::Present(vec![k.clone()])),
                self.synthetic(Synthetic::BadProperty(k.clone(), bad)),
            ]);
        }
        Ok(alts)
    }

    /// Not `items`: an item that breaks it. After a tuple prefix of n (`prefixItems`), an
    /// item at position n or later; a draft-4 to 2019-09 tuple (`items` a list), an item
    /// at one of its positions that breaks that position's schema.
    fn negate_items(&mut self, s: &Subschema<'a>, obj: &Map<String, Value>, val: &'a Value) -> Result<Alternatives<'a>> {
        if val.is_array() {
            if s.draft >= Draft::Draft2020 {
                return Err(Self::invalid(&s.pointer, "items", "must be a schema (use prefixItems for tuples)"));
            }
            return self.negate_tuple(s, "items", val);
        }
        let bad = child(self, s, val, &["items"]).negate();
        let prefix = match obj.get("prefixItems").and_then(Value::as_array) {
            Some(p) if s.draft >= Draft::Draft2020 => p.len(),
            _ => 0,
        };
        if prefix > 0 {
            return Ok(vec![vec![self.synthetic(Synthetic::ItemAfter(prefix, bad))]]);
        }
        Ok(vec![vec![self.field(Kinds::ARR, Field::Contains(bad, 1))]])
    }

    /// Not `additionalItems`: an item past the tuple `items` lists that breaks it
    /// (beside `items` a schema, or no `items`, it applies to nothing).
    fn negate_additional_items(&mut self, s: &Subschema<'a>, obj: &Map<String, Value>, val: &'a Value) -> Alternatives<'a> {
        match obj.get("items").and_then(Value::as_array) {
            Some(tuple) if val != &Value::Bool(true) => {
                let bad = child(self, s, val, &["additionalItems"]).negate();
                vec![vec![self.synthetic(Synthetic::ItemAfter(tuple.len(), bad))]]
            }
            _ => Vec::new(),
        }
    }

    /// Not a tuple (`prefixItems`, or `items` as a list): an item at one of its positions
    /// that breaks that position's schema, whatever the items before it.
    fn negate_tuple(&mut self, s: &Subschema<'a>, kw: &str, val: &'a Value) -> Result<Alternatives<'a>> {
        if val.as_array().is_some_and(|a| a.is_empty()) {
            return Ok(Vec::new());
        }
        let items = schema_list(self, s, kw, val)?;
        static TRUE: Value = Value::Bool(true);
        let anything =
            SubNode::schema(Subschema { node: &TRUE, pointer: s.pointer.clone(), base: s.base.clone(), draft: s.draft });
        let mut alts = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let bad = item.negate();
            alts.push(vec![self.kinds(Kinds::ARR), self.synthetic(Synthetic::BadPrefixItem(i, bad, anything.clone()))]);
        }
        Ok(alts)
    }

    fn negate_dependencies(&mut self, s: &Subschema<'a>, kw: &str, val: &'a Value) -> Result<Alternatives<'a>> {
        let Some(map) = val.as_object() else { return Err(Self::invalid(&s.pointer, kw, "must be an object")) };
        let mut alts = Vec::new();
        for (k, deps) in map {
            match deps {
                Value::Array(names) => {
                    for d in names {
                        let Some(d) = d.as_str() else {
                            return Err(Self::invalid(
                                &s.pointer,
                                kw,
                                &format!("the dependencies of {} must be strings", value::repr(k)),
                            ));
                        };
                        alts.push(vec![
                            self.kinds(Kinds::OBJ),
                            self.synthetic(Synthetic::Present(vec![k.clone()])),
                            self.synthetic(Synthetic::Absent(d.to_string())),
                        ]);
                    }
                }
                Value::Object(_) | Value::Bool(_) => {
                    let bad = child(self, s, deps, &[kw, k]).negate();
                    alts.push(vec![self.kinds(Kinds::OBJ), self.synthetic(Synthetic::Present(vec![k.clone()])), bad]);
                }
                _ => {
                    return Err(Self::invalid(
                        &s.pointer,
                        kw,
                        &format!("the value for {} must be an array or a schema", value::repr(k)),
                    ))
                }
            }
        }
        Ok(alts)
    }
}

/// The alternatives "`k` is absent" (a `required` negated) and "`k` is present with a
/// value that breaks its subschema" (its `properties` entry negated) as one: "`k`, if
/// present, breaks its subschema". The same language in one alternative instead of two:
/// a `oneOf` whose branches each require a key of their own negates every other branch,
/// and would otherwise double its alternatives per branch.
fn absent_or_bad(mut alts: Alternatives<'_>) -> Alternatives<'_> {
    let object = |x: &Sub<'_>| matches!(&**x, SubNode::Synthetic(Synthetic::Kinds(k)) if *k == Kinds::OBJ);
    let absent = |alt: &[Sub<'_>]| match alt {
        [o, a] if object(o) => match &**a {
            SubNode::Synthetic(Synthetic::Absent(k)) => Some(k.clone()),
            _ => None,
        },
        _ => None,
    };
    let present_and_bad = |alt: &[Sub<'_>]| match alt {
        [o, p, b] if object(o) => match (&**p, &**b) {
            (SubNode::Synthetic(Synthetic::Present(names)), SubNode::Synthetic(Synthetic::BadProperty(k, _)))
                if names.len() == 1 && names[0] == *k =>
            {
                Some(k.clone())
            }
            _ => None,
        },
        _ => None,
    };
    let mut merged = vec![false; alts.len()];
    for i in 0..alts.len() {
        let Some(k) = absent(&alts[i]) else { continue };
        if let Some(j) = (0..alts.len()).find(|&j| !merged[j] && present_and_bad(&alts[j]).as_ref() == Some(&k)) {
            alts[j].remove(1);
            merged[j] = true;
            merged[i] = true;
            alts[i].clear();
        }
    }
    let mut i = 0;
    alts.retain(|alt| {
        i += 1;
        !(merged[i - 1] && alt.is_empty())
    });
    alts
}
