//! The classes of an object's other keys (those it does not name): keys that match the
//! same `patternProperties` of every clause have values that obey the same subschemas.
//!
//! The classes are found by partition refinement over the encoded-key languages. It
//! starts from every key the object may have beside its named ones (less the forbidden
//! ones, within `propertyNames`); each pattern splits every class into the keys that
//! match it and those that do not, empty parts dropped; then classes whose keys obey the
//! same subschemas so far are merged (they split alike from there on). So the count of
//! classes is the count of different value constraints that keys can meet, not the 2ⁿ
//! subsets of n patterns: nine unanchored patterns that share one subschema (any key
//! may hold several of them) make two classes, not 512.

use std::sync::Arc;

use crate::util::hash::{HashSet, HashSetExt};

use super::keywords::is_annotation;
use super::lang::Lang;
use super::objects::{any_key, excluded_keys, is_false};
use super::shape::{ObjClause, Shape, Sub, SubKey, SubNode};
use super::Translator;
use crate::error::Result;
use crate::json_schema::resources;

/// One class of other keys before finite ones are named: its encoded keys, the
/// subschemas of its values, and whether it is any key but the named ones (then a
/// half-written key always has infinitely many endings).
pub(super) struct KeyClass<'a> {
    pub(super) keys: Lang,
    pub(super) subs: Vec<Sub<'a>>,
    pub(super) plain: bool,
}

/// A class while the patterns are applied: per clause, the subschemas of the patterns its
/// keys match so far (by key, for merging, and in the order first met).
struct Part<'a> {
    hits: Vec<HashSet<SubKey>>,
    subs: Vec<Vec<Sub<'a>>>,
    keys: Lang,
}

impl<'a> Translator<'a> {
    /// The classes of keys other than `names` (and forbidden ones) that some clause lets
    /// appear, each with the subschemas its values obey (see the module docs).
    pub(super) fn key_classes(
        &mut self,
        shape: &Shape<'a>,
        clauses: &[ObjClause<'a>],
        names: &[String],
    ) -> Result<Vec<KeyClass<'a>>> {
        let patterns: Vec<(&str, &Sub<'a>, usize)> =
            clauses.iter().enumerate().flat_map(|(ci, c)| c.patterns.iter().map(move |(src, s)| (src.as_str(), s, ci))).collect();
        let cap = self.limits.max_pattern_properties;
        if patterns.len() > cap {
            let at = patterns[0].1.pointer();
            return Err(resources::unsupported(
                at,
                "patternProperties",
                &format!("more than {cap} patterns on one object (Limits.max_pattern_properties); raise the limit to allow more"),
            ));
        }
        // A clause closed to keys it does not name, with no pattern, leaves no class (the
        // common closed object: no automaton is built for it).
        if clauses.iter().any(|c| c.patterns.is_empty() && c.additional.as_ref().is_some_and(is_false)) {
            return Ok(Vec::new());
        }
        let Some(all) = self.other_keys(shape, names)? else { return Ok(Vec::new()) };
        // Keys hold none of the options' `excludes`; the matcher then checks half-written
        // keys too (their endings may be few).
        let all = if self.opts.excludes.is_empty() {
            all
        } else {
            self.finite_key_endings = true;
            let negs = self.opts.excludes.iter().map(|x| Lang::hir(super::scalars::containing(x))).collect();
            let Some(keys) = self.langs.bool_terms(vec![all], negs, &self.limits)? else { return Ok(Vec::new()) };
            keys
        };
        let mut parts =
            vec![Part { hits: vec![HashSet::new(); clauses.len()], subs: vec![Vec::new(); clauses.len()], keys: all }];
        for (i, &(src, sub, ci)) in patterns.iter().enumerate() {
            crate::util::interrupt::check()?;
            let lang = self.pattern_lang(src, sub.pointer())?;
            parts = self.refine(parts, &lang, sub, ci, i > 0)?;
            let most = self.limits.max_key_classes;
            if parts.len() > most {
                return Err(resources::unsupported(
                    sub.pointer(),
                    "patternProperties",
                    &format!("the patterns of one object make more than {most} classes of keys whose values obey different subschemas (keys may match several patterns; Limits.max_key_classes); raise the limit to allow more"),
                ));
            }
        }
        let plain = patterns.is_empty() && shape.prop_names.is_empty();
        Ok(parts.into_iter().filter_map(|p| class_of(p, clauses, plain)).collect())
    }

    /// Every key the object may have beside `names`: `propertyNames` less the named and
    /// forbidden keys (None: no such key).
    fn other_keys(&mut self, shape: &Shape<'a>, names: &[String]) -> Result<Option<Lang>> {
        let mut terms = vec![any_key()];
        if !shape.prop_names.is_empty() {
            let Some(pn) = self.key_body(&shape.prop_names, true)? else { return Ok(None) };
            terms.push(pn);
        }
        let negs: Vec<Lang> = excluded_keys(shape, names).into_iter().collect();
        self.langs.bool_terms(terms, negs, &self.limits)
    }

    /// Splits each part by pattern `lang` (of clause `ci`, subschema `sub`) and merges
    /// the parts whose keys obey the same subschemas, in the order first made. `shrink`:
    /// the parts are products already, so the new ones are minimized (products of
    /// products grow with each pattern; one product of two minimal automata is left as
    /// it is, as the terminal of an object with one pattern).
    fn refine(&mut self, parts: Vec<Part<'a>>, lang: &Lang, sub: &Sub<'a>, ci: usize, shrink: bool) -> Result<Vec<Part<'a>>> {
        let mut out: Vec<Part<'a>> = Vec::with_capacity(parts.len() + 1);
        let shrunk = |l: Lang| if shrink { minimal(l) } else { l };
        for part in parts {
            let inside = self.langs.bool_terms(vec![part.keys.clone(), lang.clone()], Vec::new(), &self.limits)?;
            let inside = inside.map(|l| self.langs.short_name(shrunk(l)));
            let outside = self.langs.bool_terms(vec![part.keys.clone()], vec![lang.clone()], &self.limits)?;
            let outside = outside.map(|l| self.langs.short_name(shrunk(l)));
            if let Some(keys) = inside {
                let (mut hits, mut subs) = (part.hits.clone(), part.subs.clone());
                let sub = self.through_refs(sub);
                if hits[ci].insert(sub.key()) {
                    subs[ci].push(sub);
                }
                self.merge_part(&mut out, Part { hits, subs, keys })?;
            }
            if let Some(keys) = outside {
                self.merge_part(&mut out, Part { hits: part.hits, subs: part.subs, keys })?;
            }
        }
        Ok(out)
    }

    /// `sub`, or the target of its `$ref` where it is only that (annotations aside), so
    /// that patterns whose values refer to one definition count as one subschema.
    fn through_refs(&self, sub: &Sub<'a>) -> Sub<'a> {
        let mut sub = sub.clone();
        // A bounded number of hops: a chain of references may be a cycle.
        for _ in 0..16 {
            let SubNode::Schema { sub: s, negated: false } = &*sub else { break };
            let Some(obj) = s.node.as_object() else { break };
            let Some(reference) = obj.get("$ref") else { break };
            if obj.keys().any(|k| k != "$ref" && !is_annotation(k)) {
                break;
            }
            match self.res.resolve(s, reference) {
                Ok(target) => sub = SubNode::schema(target),
                Err(_) => break,
            }
        }
        sub
    }

    /// Adds `part` to `parts`, as a union with the part whose keys obey the same
    /// subschemas if there is one.
    fn merge_part(&mut self, parts: &mut Vec<Part<'a>>, part: Part<'a>) -> Result<()> {
        match parts.iter_mut().find(|p| p.hits == part.hits) {
            Some(same) => {
                let both = vec![same.keys.clone(), part.keys];
                // A union of two languages is always one (None only for no part).
                if let Some(union) = self.union(both)? {
                    same.keys = self.langs.short_name(union);
                }
            }
            None => parts.push(part),
        }
        Ok(())
    }
}

/// `lang` with its automaton minimized: a class is a product of products, which would
/// otherwise grow with each pattern.
fn minimal(lang: Lang) -> Lang {
    match lang {
        Lang::Dfa(d, key) => Lang::Dfa(Arc::new(d.minimized()), key),
        other => other,
    }
}

/// The class a finished part stands for: per clause, its patterns' subschemas, or the
/// clause's `additionalProperties` where it matched none (None if that is `false`).
fn class_of<'a>(part: Part<'a>, clauses: &[ObjClause<'a>], plain: bool) -> Option<KeyClass<'a>> {
    let mut subs = Vec::new();
    for (clause, hit) in clauses.iter().zip(part.subs) {
        if !hit.is_empty() {
            subs.extend(hit);
        } else if let Some(a) = &clause.additional {
            if is_false(a) {
                return None;
            }
            subs.push(a.clone());
        }
    }
    Some(KeyClass { keys: part.keys, subs, plain })
}
