//! Which keys a negated object keyword speaks of. The negation of `additionalProperties`,
//! `patternProperties` or `propertyNames` is "some key of this kind is present, with a
//! value that breaks the subschema": a key outside the `properties` names and every
//! pattern beside them, a key a pattern matches, a key `propertyNames` refuses. A
//! [`KeyFilter`] says which keys those are, for a concrete key (checking a value) and as
//! a language of encoded keys (restricting an object's classes of other keys).

use regex_syntax::hir::Hir;

use super::lang::Lang;
use super::shape::KeyFilter;
use super::value::encoded;
use super::Translator;
use crate::error::Result;
use crate::util::hash::HashSet;

impl<'a> Translator<'a> {
    /// Is key `k` one that `filter` speaks of?
    pub(crate) fn key_allowed(&mut self, filter: &KeyFilter<'a>, k: &str) -> Result<bool> {
        if filter.names.iter().any(|n| n == k) {
            return Ok(false);
        }
        for (src, pointer) in &filter.inside {
            if !self.pattern_matches(src, pointer, k)? {
                return Ok(false);
            }
        }
        for (src, pointer) in &filter.outside {
            if self.pattern_matches(src, pointer, k)? {
                return Ok(false);
            }
        }
        for names in &filter.breaks_names {
            if self.valid(&serde_json::Value::String(k.to_string()), std::slice::from_ref(names))? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The encoded keys of `keys` that `filter` speaks of (None: none).
    pub(crate) fn filtered_keys(&mut self, filter: &KeyFilter<'a>, keys: &Lang) -> Result<Option<Lang>> {
        if filter.any_key() {
            return Ok(Some(keys.clone()));
        }
        let mut terms = vec![keys.clone()];
        let mut negs = Vec::new();
        for (src, pointer) in &filter.inside {
            terms.push(self.pattern_lang(src, pointer)?);
        }
        for (src, pointer) in &filter.outside {
            negs.push(self.pattern_lang(src, pointer)?);
        }
        if !filter.names.is_empty() {
            let mut seen = HashSet::default();
            let names = filter.names.iter().filter(|k| seen.insert(k.as_str()));
            negs.push(Lang::hir(Hir::alternation(names.map(|k| Hir::literal(encoded(k).into_bytes())).collect())));
        }
        for names in &filter.breaks_names {
            if let Some(allowed) = self.key_body(std::slice::from_ref(names), false)? {
                negs.push(allowed);
            }
        }
        self.langs.bool_terms(terms, negs, &self.limits)
    }
}
