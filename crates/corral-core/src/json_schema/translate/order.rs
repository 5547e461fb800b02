//! A valid value with its object keys in the order the grammar writes them (the schema's
//! `properties` order, then other keys as given), for tests and tools that force a known
//! value through a schema's grammar.

use serde_json::{Map, Value};

use super::shape::{Shape, Sub, SubNode};
use super::Translator;
use crate::error::Result;

impl<'a> Translator<'a> {
    /// `value` reordered for the first alternative shape of `subs` it satisfies (unchanged
    /// where none does).
    pub(crate) fn order(&mut self, value: &Value, subs: &[Sub<'a>]) -> Result<Value> {
        for shape in self.shapes(subs)? {
            if !self.check(value, &shape, false)? {
                continue;
            }
            if let Some(members) = &shape.enumeration {
                // The member as the grammar writes it (its own key order).
                let same = members.iter().find(|m| super::value::json_equal(m, value));
                return Ok(same.map_or_else(|| value.clone(), |m| (*m).clone()));
            }
            return match value {
                Value::Object(map) => self.order_object(map, &shape),
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (i, v) in items.iter().enumerate() {
                        let subs = self.item_subs(&shape, i);
                        out.push(self.order(v, &subs)?);
                    }
                    Ok(Value::Array(out))
                }
                other => Ok(other.clone()),
            };
        }
        Ok(value.clone())
    }

    fn order_object(&mut self, map: &Map<String, Value>, shape: &Shape<'a>) -> Result<Value> {
        let layout = self.object_layout(shape)?;
        let mut out = Map::new();
        for k in &layout.names {
            if let Some(v) = map.get(k) {
                let subs = layout.values.get(k).cloned().flatten().unwrap_or_default();
                out.insert(k.clone(), self.order(v, &subs)?);
            }
        }
        for (k, v) in map {
            if !out.contains_key(k) {
                let subs = self.extra_subs(k, shape)?;
                out.insert(k.clone(), self.order(v, &subs)?);
            }
        }
        Ok(Value::Object(out))
    }

    /// The subschemas the value of other key `k` obeys: per clause, the patterns it
    /// matches, else the additional properties' schema.
    fn extra_subs(&mut self, k: &str, shape: &Shape<'a>) -> Result<Vec<Sub<'a>>> {
        let mut subs = Vec::new();
        for clause in self.obj_clauses(shape) {
            let mut matched = Vec::new();
            for (src, sub) in &clause.patterns {
                if self.pattern_matches(src, sub.pointer(), k)? {
                    matched.push(sub.clone());
                }
            }
            if matched.is_empty() {
                subs.extend(clause.additional.clone());
            } else {
                subs.extend(matched);
            }
        }
        Ok(subs)
    }
}

/// `value` (JSON) with its keys in the order the grammar of `schema` writes them.
pub fn order(
    schema: &Value,
    documents: &[(String, Value)],
    options: &super::SchemaOptions,
    limits: &crate::limits::Limits,
    value: &Value,
) -> Result<Value> {
    let mut t = Translator::new(schema, documents, options, limits)?;
    let root = SubNode::schema(t.root.clone());
    t.order(value, &[root])
}
