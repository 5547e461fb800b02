//! Shapes from subschemas: the conjunction of subschemas read in place, its disjunctions
//! distributed out into alternative shapes, and the proofs that `oneOf` branches are
//! disjoint (a branch is negated only against the branches it may share a value with).
//!
//! Distributing blindly multiplies alternatives, so three rules keep the product down,
//! none of them losing a value: a disjunction the shape already obeys one alternative of
//! is not distributed (`x ∧ (x ∨ y) = x`), a shape that requires a key its object cannot
//! hold or a property no value meets is dropped before it multiplies, and "some key
//! outside these names" is resolved as soon as the object is closed.

use serde_json::{Map, Value};

use super::super::resources::{Draft, Subschema};
use super::keywords::{child, schema_list, Disjunction, Reach};
use super::shape::{BadMember, Evaluated, Field, KeyFilter, ObjClause, Shape, Sub, SubKey, SubNode, Synthetic};

use super::value::{self, show};
use super::{Kinds, Translator};
use crate::error::{Error, Result, SchemaErrorKind};

/// A shape with the disjunctions still to distribute over it.
pub(crate) type ExpandItem<'a> = (Shape<'a>, Vec<Disjunction<'a>>);

/// Lists of subschemas whose rough reading `satisfiable` keeps for the lists one longer
/// (the map is cleared past it). A schema's `if`/`then` pairs on one property (a `type`
/// discriminator, each pair for one of its values) make a proof per pair and per branch
/// taken, over lists that grow by one: read from the start, each costs its length.
pub(crate) const ABSORBED_LISTS_KEPT: usize = 4096;

#[cfg(test)]
thread_local! {
    /// Subschemas read by `satisfiable` on this thread, and its lists (memo misses), for
    /// the test that lists are read from their prefixes.
    pub(crate) static SATISFIABLE_READS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

impl<'a> Translator<'a> {
    /// The conjunction of `subs` as alternative shapes (unsatisfiable ones dropped).
    pub(crate) fn shapes(&mut self, subs: &[Sub<'a>]) -> Result<Vec<Shape<'a>>> {
        let mut shape = Shape::default();
        let mut disj = Vec::new();
        for s in subs {
            self.absorb(&mut shape, s, &mut disj, &[])?;
        }
        let mut out = Vec::new();
        if let Err(e) = self.expand(shape, disj, usize::MAX, &mut out) {
            return Err(match e {
                Error::LimitExceeded { limit: "max_schema_alternatives", value, context } => {
                    let at = subs.iter().map(|s| s.pointer().to_string()).find(|p| !p.is_empty()).unwrap_or_default();
                    Self::limit_at(&at, "", &context, "max_schema_alternatives", value)
                }
                e => e,
            });
        }
        Ok(out)
    }

    /// Distributes the pending disjunctions of `shape` (a loop with its own stack, not a
    /// recursion per disjunction), until `out` holds `most` shapes (depth first: the
    /// first ones found with no bound).
    fn expand(&mut self, shape: Shape<'a>, disj: Vec<Disjunction<'a>>, most: usize, out: &mut Vec<Shape<'a>>) -> Result<()> {
        let mut stack = vec![(shape, disj)];
        while let Some((shape, mut disj)) = stack.pop() {
            if out.len() >= most {
                break;
            }
            // Pruned before it multiplies: a whole shape that cannot be met is found empty
            // where it is written anyway.
            if shape.unsat || (!disj.is_empty() && !self.requirements_possible(&shape)?) {
                continue;
            }
            if disj.is_empty() && !shape.other_keys.is_empty() {
                self.other_key_alternatives(shape, &mut stack)?;
                continue;
            }
            if disj.is_empty() {
                let mut shape = shape;
                self.resolve_unevaluated(&mut shape)?;
                out.push(shape);
                if out.len() > self.limits.max_schema_alternatives {
                    return Err(Error::LimitExceeded {
                        limit: "max_schema_alternatives",
                        value: self.limits.max_schema_alternatives,
                        context: "the schema expands to too many anyOf/oneOf/if combinations".into(),
                    });
                }
                continue;
            }
            crate::util::interrupt::check()?;
            let (alternatives, chain) = disj.remove(0);
            if self.some_entailed(&shape, &alternatives)? {
                // An alternative already read into the shape: the disjunction adds nothing
                // (absorption, `x ∧ (x ∨ y) = x`), where distributing it would multiply
                // the alternatives (as repeated `anyOf` lists under `if`/`then` do).
                stack.push((shape, disj));
                continue;
            }
            for alternative in alternatives.iter().rev() {
                let mut s2 = shape.clone();
                let mut new = Vec::new();
                for s in alternative {
                    self.absorb(&mut s2, s, &mut new, &chain)?;
                    if s2.unsat {
                        break;
                    }
                }
                new.extend(disj.iter().cloned());
                stack.push((s2, new));
            }
        }
        Ok(())
    }

    /// A whole shape with a key required outside some names ([`Synthetic::OtherKey`]) as
    /// alternatives on `stack`: where the shape names every key it allows (an
    /// `additionalProperties: false` beside its `properties`, or, outside `spec_exact`,
    /// named properties and nothing said of others), one per key it may have outside
    /// those names, present with a value that obeys the negated subschema too; where it
    /// allows other keys, the requirement stays on the shape for the object emitter
    /// ([`Shape::bad_members`], see [`Translator::open_object_member`]).
    fn other_key_alternatives(&mut self, mut shape: Shape<'a>, stack: &mut Vec<ExpandItem<'a>>) -> Result<()> {
        let Some((filter, bad, _)) = shape.other_keys.pop() else { return Ok(()) };
        if self.met_by_required(&shape, &filter, &bad)? {
            stack.push((shape, Vec::new()));
            return Ok(());
        }
        // The clauses the object is emitted with (by default, an object that names keys
        // and says nothing of others is closed to them).
        let Some(keys) = closing_names(&self.obj_clauses(&shape)) else {
            self.open_object_member(shape, BadMember { filter, bads: vec![bad] }, stack);
            return Ok(());
        };
        let mut spoken = Vec::new();
        for k in keys {
            if self.key_allowed(&filter, &k)? {
                spoken.push(k);
            }
        }
        for k in spoken.into_iter().rev() {
            let mut s2 = shape.clone();
            s2.apply(&Synthetic::Present(vec![k.clone()]));
            s2.apply(&Synthetic::BadProperty(k, bad.clone()));
            stack.push((s2, Vec::new()));
        }
        Ok(())
    }

    /// A member `member` an open object must have, beside those it must have already
    /// ([`Shape::bad_members`]), as alternatives on `stack`: a member of its own, or the
    /// same member as one of them (its key meeting both filters, its value both sets of
    /// subschemas). Together the alternatives are exact: either some key meets both, or
    /// two keys meet one each. They count towards `max_schema_alternatives` as every
    /// alternative does (n requirements make the Bell number of n: 15 for 4).
    fn open_object_member(&mut self, shape: Shape<'a>, member: BadMember<'a>, stack: &mut Vec<ExpandItem<'a>>) {
        for i in 0..shape.bad_members.len() {
            let mut joined = shape.clone();
            let m = &mut joined.bad_members[i];
            m.filter = m.filter.and(&member.filter);
            m.bads.extend(member.bads.iter().cloned());
            stack.push((joined, Vec::new()));
        }
        let mut own = shape;
        own.bad_members.push(member);
        stack.push((own, Vec::new()));
    }

    /// Adds the constraints of `sub` to `shape`; disjunctions go to `disj` (with `chain`,
    /// the subschemas being read in place around them).
    pub(crate) fn absorb(
        &mut self,
        shape: &mut Shape<'a>,
        sub: &Sub<'a>,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let (s, negated) = match &**sub {
            SubNode::Synthetic(Synthetic::NotValues(values, keys)) if values.iter().any(|v| v.is_array() || v.is_object()) => {
                return self.absorb_not_values(shape, values, keys, disj, chain);
            }
            SubNode::Synthetic(Synthetic::OtherKey(filter, bad, _)) if closed_names(shape).is_some() => {
                return self.absorb_other_key(shape, filter, bad, disj, chain);
            }
            SubNode::Synthetic(syn) => {
                shape.apply(syn);
                return Ok(());
            }
            SubNode::Schema { sub, negated } => (sub, *negated),
        };
        let key = sub.key();
        if chain.contains(&key) {
            // The subschema needs itself, in place, with no value in between (a `$ref`
            // cycle through allOf/anyOf…). Its language is the least solution, as for a
            // recursive grammar rule: the cycle itself adds no value.
            shape.unsat = true;
            return Ok(());
        }
        if chain.contains(&sub.negate().key()) {
            return Err(super::super::resources::unsupported(
                &s.pointer,
                "$ref",
                "refers to its own negation in place (through `not`, `oneOf` or `if`, with no value in between), which has no solution",
            ));
        }
        self.pass.depth += 1;
        let mut pending = usize::MAX;
        let result = if self.pass.depth > self.limits.max_schema_depth {
            Err(Self::limit_at(
                &s.pointer,
                "",
                "subschemas read in place (allOf, anyOf, not, $ref...) nest too deep",
                "max_schema_depth",
                self.limits.max_schema_depth,
            ))
        } else {
            let mut inner = chain.to_vec();
            inner.push(key.clone());
            pending = disj.len();
            if negated {
                self.absorb_negation(shape, s, disj, &inner)
            } else {
                self.absorb_schema(shape, s, disj, &inner)
            }
        };
        self.pass.depth -= 1;
        // Read whole, with no disjunction left pending (its own disjunctions are no
        // proof that the shape obeys it: they are still to be distributed).
        if result.is_ok() && !shape.unsat && disj.len() == pending {
            shape.absorbed.insert(key);
        }
        result
    }

    /// Does some alternative of `alternatives` hold for every value of `shape`?
    fn some_entailed(&mut self, shape: &Shape<'a>, alternatives: &[Vec<Sub<'a>>]) -> Result<bool> {
        for alt in alternatives {
            let mut all = true;
            for s in alt {
                if !self.entailed(shape, s)? {
                    all = false;
                    break;
                }
            }
            if all {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Is `sub` known to hold for every value of `shape`? Yes when it was read into the
    /// shape already (itself or, for a subschema that is only a `$ref`, annotations aside,
    /// its target); for the constraints negation makes, when the shape implies them: its
    /// kinds within theirs, the properties present required, a property's values unable
    /// to obey the subschema they must fail.
    fn entailed(&mut self, shape: &Shape<'a>, sub: &Sub<'a>) -> Result<bool> {
        let mut sub = sub.clone();
        // A bounded number of `$ref` hops: a chain of references may be a cycle.
        for _ in 0..16 {
            if shape.absorbed.contains(&sub.key()) {
                return Ok(true);
            }
            match &*sub {
                SubNode::Synthetic(Synthetic::Kinds(k)) => return Ok(shape.kinds.without(*k) == Kinds::NONE),
                SubNode::Synthetic(Synthetic::Present(names)) => return Ok(names.iter().all(|n| shape.required.contains(n))),
                SubNode::Synthetic(Synthetic::BadProperty(name, bad)) => return self.fails_at(shape, name, bad),
                _ => {}
            }
            let SubNode::Schema { sub: s, negated: false } = &*sub else { return Ok(false) };
            let Some(obj) = s.node.as_object() else { return Ok(false) };
            let Some(reference) = obj.get("$ref") else { return Ok(false) };
            if obj.keys().any(|k| k != "$ref" && !super::keywords::is_annotation(k)) {
                return Ok(false);
            }
            match self.res.resolve(s, reference) {
                Ok(target) => sub = SubNode::schema(target),
                Err(_) => return Ok(false),
            }
        }
        Ok(false)
    }

    /// Does every value property `name` may have in `shape` obey `bad`, the negation of a
    /// subschema: is the subschema unsatisfiable beside what the shape says of the
    /// property? (`bad` the negation of `false`: any value does.)
    fn fails_at(&mut self, shape: &Shape<'a>, name: &str, bad: &Sub<'a>) -> Result<bool> {
        let SubNode::Schema { sub, negated: true } = &**bad else { return Ok(false) };
        if sub.node == &Value::Bool(false) {
            return Ok(true);
        }
        if self.rough {
            return Ok(false); // one level of values only: recursive schemas end
        }
        let mut subs = self.value_subs(shape, name)?;
        if subs.is_empty() {
            return Ok(false);
        }
        subs.push(bad.negate());
        Ok(!self.satisfiable(&subs)?)
    }

    /// Values excluded by a negated `enum`/`const` with arrays or objects among them: the
    /// scalars go to the shape; a value unequal to array or object `v` is a disjunction
    /// (see [`Translator::unequal_object`], [`Translator::unequal_array`]).
    fn absorb_not_values(
        &mut self,
        shape: &mut Shape<'a>,
        values: &[&'a Value],
        keys: &[String],
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let (mut scalars, mut scalar_keys) = (Vec::new(), Vec::new());
        for (&v, k) in values.iter().zip(keys) {
            match v {
                Value::Object(m) => {
                    let alts = self.unequal_object(m);
                    disj.push((alts, chain.to_vec()));
                }
                Value::Array(a) => {
                    let alts = self.unequal_array(a);
                    disj.push((alts, chain.to_vec()));
                }
                _ => {
                    scalars.push(v);
                    scalar_keys.push(k.clone());
                }
            }
        }
        if !scalars.is_empty() {
            shape.apply(&Synthetic::NotValues(scalars, scalar_keys));
        }
        Ok(())
    }

    /// Is a key that `filter` speaks of, with any value (`bad` the negation of `false`),
    /// one the shape requires already? Then the requirement holds for every value of it
    /// (an open object, required to have `signal`, is "not a closed object of other
    /// names" as it stands).
    fn met_by_required(&mut self, shape: &Shape<'a>, filter: &KeyFilter<'a>, bad: &Sub<'a>) -> Result<bool> {
        let anything = match &**bad {
            SubNode::Schema { sub, negated: true } => sub.node == &Value::Bool(false),
            SubNode::Synthetic(Synthetic::Kinds(k)) => *k == Kinds::ALL,
            _ => false,
        };
        if !anything {
            return Ok(false);
        }
        for k in &shape.required {
            if self.key_allowed(filter, k)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A key outside `names` with a value obeying `bad` ([`Synthetic::OtherKey`]), in a
    /// shape that some clause closes already (`additionalProperties: false` and no
    /// patterns): the key is one the clause names, so the requirement is a disjunction
    /// over those keys, distributed as any other. (Read now rather than once the shape is
    /// whole, the alternatives meet the rest of the schema as they are made: under a
    /// `oneOf` of closed objects, most of them contradict it at once.)
    fn absorb_other_key(
        &mut self,
        shape: &mut Shape<'a>,
        filter: &KeyFilter<'a>,
        bad: &Sub<'a>,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        shape.restrict(Kinds::OBJ);
        if self.met_by_required(shape, filter, bad)? {
            return Ok(());
        }
        let keys = closed_names(shape).unwrap_or_default();
        let mut alts = Vec::new();
        for k in keys {
            if !self.key_allowed(filter, &k)? {
                continue;
            }
            let present = self.synthetic(Synthetic::Present(vec![k.clone()]));
            alts.push(vec![present, self.synthetic(Synthetic::BadProperty(k, bad.clone()))]);
        }
        if alts.is_empty() {
            shape.unsat = true;
        } else {
            disj.push((alts, chain.to_vec()));
        }
        Ok(())
    }

    /// Can an object of `shape` have every property it requires? False when a clause
    /// closes it to one of them, or a rule forbids one (see [`Translator::may_have`]).
    fn requirements_possible(&mut self, shape: &Shape<'a>) -> Result<bool> {
        if shape.required.is_empty() || !shape.kinds.has(Kinds::OBJ) || shape.kinds.without(Kinds::OBJ) != Kinds::NONE {
            return Ok(true);
        }
        for name in &shape.required {
            if !self.may_have(shape, name)? {
                return Ok(false);
            }
            if self.rough {
                continue; // one level of values only: recursive schemas end
            }
            let subs = self.value_subs(shape, name)?;
            if subs.len() > 1 && !self.satisfiable(&subs)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Does some value obey all of `subs`? (Read roughly, see [`Translator::rough_shapes`]:
    /// "no" is a proof, "yes" may be wrong; remembered per list.)
    fn satisfiable(&mut self, subs: &[Sub<'a>]) -> Result<bool> {
        // Constraints made by negation are new objects each time, which no memo would
        // find again: left out, the list allows more values, and "no" is still a proof.
        let subs: Vec<Sub<'a>> = subs.iter().filter(|s| matches!(&***s, SubNode::Schema { .. })).cloned().collect();
        if subs.len() < 2 {
            return Ok(true);
        }
        let key: Vec<SubKey> = subs.iter().map(|s| s.key()).collect();
        if let Some(&known) = self.satisfiable_memo.get(&key) {
            return Ok(known);
        }
        let rough = std::mem::replace(&mut self.rough, true);
        let first = self.absorbed_list(&subs, &key).and_then(|(shape, disj)| {
            // One alternative is an answer: the rest are not distributed (each `if`/`then`
            // pair doubles them).
            let mut out = Vec::new();
            self.expand(shape, disj, 1, &mut out).map(|()| out)
        });
        self.rough = rough;
        let known = match first {
            Ok(shapes) => !shapes.is_empty(),
            Err(e @ (Error::Interrupted | Error::Internal(_) | Error::LimitExceeded { limit: "max_compile_ms", .. })) => {
                return Err(e)
            }
            Err(_) => true,
        };
        self.satisfiable_memo.insert(key, known);
        Ok(known)
    }

    /// `subs` (with memo keys `key`) read roughly into one shape, their disjunctions
    /// pending: the reading of `subs` without its last one, when kept, and the last one
    /// read into it (the same shape as reading all in order: reading only adds).
    fn absorbed_list(&mut self, subs: &[Sub<'a>], key: &[SubKey]) -> Result<ExpandItem<'a>> {
        let n = subs.len();
        let (mut shape, mut disj, from) = match self.absorbed_lists.get(&key[..n - 1]) {
            Some((shape, disj)) => (shape.clone(), disj.clone(), n - 1),
            None => (Shape::default(), Vec::new(), 0),
        };
        #[cfg(test)]
        SATISFIABLE_READS.with(|c| c.set((c.get().0 + n - from, c.get().1 + 1)));
        for s in &subs[from..] {
            self.absorb(&mut shape, s, &mut disj, &[])?;
        }
        if self.absorbed_lists.len() >= ABSORBED_LISTS_KEPT {
            self.absorbed_lists.clear();
        }
        self.absorbed_lists.insert(key.to_vec(), (shape.clone(), disj.clone()));
        Ok((shape, disj))
    }

    /// "Not equal to `v`" for one value `v`, as a synthetic constraint.
    fn unequal(&mut self, v: &'a Value) -> Sub<'a> {
        self.synthetic(Synthetic::NotValues(vec![v], vec![value::canon(v)]))
    }

    /// The values unequal to object `m` (JSON equality, whatever the key order): not an
    /// object, or without one of its keys, or with another value at one, or with more keys.
    fn unequal_object(&mut self, m: &'a Map<String, Value>) -> Vec<Vec<Sub<'a>>> {
        let mut alts = vec![vec![self.synthetic(Synthetic::Kinds(Kinds::ALL.without(Kinds::OBJ)))]];
        for (k, x) in m {
            let object = self.synthetic(Synthetic::Kinds(Kinds::OBJ));
            alts.push(vec![object.clone(), self.synthetic(Synthetic::Absent(k.clone()))]);
            let other = self.unequal(x);
            alts.push(vec![
                object,
                self.synthetic(Synthetic::Present(vec![k.clone()])),
                self.synthetic(Synthetic::BadProperty(k.clone(), other)),
            ]);
        }
        let more = m.len() as u64 + 1;
        alts.push(vec![self.synthetic(Synthetic::Field(Kinds::OBJ, Field::MinProps(more)))]);
        alts
    }

    /// The values unequal to array `a`: not an array, or of another length, or with
    /// another value at some position.
    fn unequal_array(&mut self, a: &'a [Value]) -> Vec<Vec<Sub<'a>>> {
        static TRUE: Value = Value::Bool(true);
        let anything =
            SubNode::schema(Subschema { node: &TRUE, pointer: String::new(), base: "".into(), draft: Draft::Draft2020 });
        let n = a.len() as u64;
        let mut alts = vec![vec![self.synthetic(Synthetic::Kinds(Kinds::ALL.without(Kinds::ARR)))]];
        if n > 0 {
            alts.push(vec![self.synthetic(Synthetic::Field(Kinds::ARR, Field::MaxItems(n - 1)))]);
        }
        alts.push(vec![self.synthetic(Synthetic::Field(Kinds::ARR, Field::MinItems(n + 1)))]);
        for (i, x) in a.iter().enumerate() {
            let other = self.unequal(x);
            let array = self.synthetic(Synthetic::Kinds(Kinds::ARR));
            alts.push(vec![array, self.synthetic(Synthetic::BadPrefixItem(i, other, anything.clone()))]);
        }
        alts
    }

    fn absorb_negation(
        &mut self,
        shape: &mut Shape<'a>,
        s: &Subschema<'a>,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let mut alts = self.negation(s)?;
        match alts.len() {
            0 => shape.unsat = true,
            1 => {
                for x in alts.pop().unwrap_or_default() {
                    self.absorb(shape, &x, disj, chain)?;
                }
            }
            _ => disj.push((alts, chain.to_vec())),
        }
        Ok(())
    }

    fn absorb_schema(
        &mut self,
        shape: &mut Shape<'a>,
        s: &Subschema<'a>,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let obj = match s.node {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => {
                shape.unsat = true;
                return Ok(());
            }
            Value::Object(obj) => obj,
            other => {
                return Err(Self::invalid(
                    &s.pointer,
                    "",
                    &format!("a schema must be an object or a boolean, got {}", show(other)),
                ));
            }
        };
        crate::util::interrupt::check()?;
        // Known before anything under it is read (its `$ref` too): only there are
        // evaluations recorded (see `note_evaluation`).
        let unevaluated_here = s.draft >= super::super::resources::Draft::Draft2019
            && obj.contains_key("unevaluatedProperties")
            && !obj.contains_key("additionalProperties");
        if unevaluated_here {
            if let (Some(own), Reach::Branching) = (chain.last(), self.unevaluated_reach(s)?) {
                self.branching_unevaluated.insert(own.clone());
            }
        }
        if let Some(reference) = obj.get("$ref") {
            let target = SubNode::schema(self.res.resolve(s, reference)?);
            self.absorb(shape, &target, disj, chain)?;
            if s.draft < super::super::resources::Draft::Draft2019 {
                return Ok(()); // siblings of $ref are ignored before 2019-09
            }
        }
        self.absorb_keywords(shape, s, disj, chain)?;
        if shape.kinds.is_empty() {
            shape.unsat = true;
        }
        Ok(())
    }

    /// Is a subschema read through `chain` inside one whose `unevaluatedProperties`
    /// depends on the branches taken?
    pub(crate) fn in_branching_unevaluated(&self, chain: &[SubKey]) -> bool {
        !self.branching_unevaluated.is_empty() && chain.iter().any(|k| self.branching_unevaluated.contains(k))
    }

    /// Does some subschema of `subs`, or one read in place under it, evaluate properties
    /// (`properties`, `patternProperties`, `additionalProperties`,
    /// `unevaluatedProperties`)? An `anyOf` whose branches evaluate none needs no sets.
    pub(crate) fn some_evaluate(&self, subs: &[Sub<'a>]) -> Result<bool> {
        for s in subs.iter().filter_map(|s| s.subschema()) {
            match self.unevaluated_reach(s)? {
                Reach::Always(e) if e.names.is_empty() && e.patterns.is_empty() && !e.all => {}
                _ => return Ok(true),
            }
            let own = s.node.as_object().is_some_and(|o| {
                ["properties", "patternProperties", "additionalProperties", "unevaluatedProperties"]
                    .iter()
                    .any(|k| o.contains_key(*k))
            });
            if own {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `anyOf` inside such a subschema: one alternative per set of branches that hold
    /// (the others negated), since every branch that holds evaluates its properties:
    /// 2ⁿ - 1 alternatives for n branches, within `max_schema_alternatives`.
    pub(crate) fn any_of_subsets(&mut self, sub: &Subschema<'a>, branches: Vec<Sub<'a>>) -> Result<Vec<Vec<Sub<'a>>>> {
        let n = branches.len();
        let most = self.limits.max_schema_alternatives;
        if n >= 32 || (1usize << n) - 1 > most {
            return Err(Self::limit_at(
                &format!("{}/anyOf", sub.pointer),
                "anyOf",
                &format!(
                    "{n} branches inside a subschema whose unevaluatedProperties depends on which of them hold make \
                     2^{n} - 1 alternatives"
                ),
                "max_schema_alternatives",
                most,
            ));
        }
        Ok((1u32..1 << n)
            .map(|set| (0..n).map(|i| if set & 1 << i != 0 { branches[i].clone() } else { branches[i].negate() }).collect())
            .collect())
    }

    /// Makes the clauses of the `unevaluatedProperties` left pending on a whole shape
    /// ([`Shape::pending_unevaluated`]): the keys evaluated are those the subschemas read
    /// in place under it evaluate in this shape's branches, none negated in between.
    fn resolve_unevaluated(&mut self, shape: &mut Shape<'a>) -> Result<()> {
        for (s, key) in std::mem::take(&mut shape.pending_unevaluated) {
            let mut seen = Evaluated::default();
            for (chain, e, own_unevaluated) in &shape.evaluations {
                let Some(i) = chain.iter().position(|k| *k == key) else { continue };
                if chain[i + 1..].iter().any(|k| matches!(k, SubKey::Schema { negated: true, .. })) {
                    continue; // what a negated subschema holds keeps no annotation
                }
                seen.extend(e);
                seen.all |= *own_unevaluated && i + 1 < chain.len();
            }
            let Some(u) = s.node.get("unevaluatedProperties") else { continue };
            static TRUE: Value = Value::Bool(true);
            let anything = child(self, &s, &TRUE, &["unevaluatedProperties"]);
            let props = seen.names.iter().map(|k| (k.clone(), anything.clone())).collect();
            let mut patterns = Vec::new();
            let mut unknown_pattern = false;
            for (src, pointer) in &seen.patterns {
                if self.usable_key_pattern(src, pointer)? {
                    patterns.push((src.clone(), anything.clone()));
                } else {
                    unknown_pattern = true;
                }
            }
            let additional = if unknown_pattern {
                Some(child(self, &s, &TRUE, &["patternProperties"]))
            } else if seen.all {
                None
            } else {
                Some(child(self, &s, u, &["unevaluatedProperties"]))
            };
            shape.obj_clauses.push(ObjClause::new(props, patterns, additional));
        }
        Ok(())
    }

    /// `oneOf`: each branch with the negation of every other branch it may share a value
    /// with. Two branches proven disjoint need no negation of each other, so branches that
    /// are all pairwise disjoint make "at least one" (no negation at all).
    pub(crate) fn k_one_of(
        &mut self,
        shape: &Shape<'a>,
        sub: &Subschema<'a>,
        val: &'a Value,
        disj: &mut Vec<Disjunction<'a>>,
        chain: &[SubKey],
    ) -> Result<()> {
        let branches = schema_list(self, sub, "oneOf", val)?;
        if self.rough {
            disj.push((branches.into_iter().map(|b| vec![b]).collect(), chain.to_vec()));
            return Ok(());
        }
        let apart = self.disjoint_pairs(shape, sub, &branches)?;
        let meets = |i: usize, j: usize| i != j && !apart[i.min(j)][i.max(j)];
        let n = branches.len();
        // Negation may be unsupported for some branch: find out now, and fall back.
        let strict = std::mem::replace(&mut self.opts.strict, true);
        let mut refusal = None;
        for (j, b) in branches.iter().enumerate() {
            if !(0..n).any(|i| meets(i, j)) {
                continue;
            }
            if let Some(s) = b.subschema() {
                match self.negation(s) {
                    Ok(_) => {}
                    Err(Error::Schema { kind: SchemaErrorKind::Unsupported, message, .. }) => {
                        refusal = Some(message);
                        break;
                    }
                    Err(e) => {
                        self.opts.strict = strict;
                        return Err(e);
                    }
                }
            }
        }
        self.opts.strict = strict;
        let alts = match refusal {
            None => (0..n)
                .map(|i| {
                    let mut alt = vec![branches[i].clone()];
                    alt.extend((0..n).filter(|&j| meets(i, j)).map(|j| branches[j].negate()));
                    alt
                })
                .collect(),
            Some(why) => {
                let at = format!("{}/oneOf", sub.pointer);
                if self.opts.strict {
                    return Err(super::super::resources::unsupported(
                        &at,
                        "oneOf",
                        &format!("exclusivity cannot be enforced ({why}); strict=False treats it as anyOf"),
                    ));
                }
                self.warnings.push(format!("oneOf at {at} is treated as anyOf: {why}"));
                branches.into_iter().map(|b| vec![b]).collect()
            }
        };
        disj.push((alts, chain.to_vec()));
        Ok(())
    }

    /// Which pairs of `branches`, the `oneOf` of `sub`, can share no value? `apart[i][j]`
    /// for `i < j`. Conservative: false whenever no proof is found. Each branch is read
    /// as shapes in the context of `shape` (what is known of the value already) and of
    /// the keywords beside the oneOf.
    fn disjoint_pairs(&mut self, shape: &Shape<'a>, sub: &Subschema<'a>, branches: &[Sub<'a>]) -> Result<Vec<Vec<bool>>> {
        let n = branches.len();
        let none = vec![vec![false; n]; n];
        let key = SubNode::schema(sub.clone()).key();
        if self.proving.contains(&key) {
            return Ok(none); // the oneOf is inside its own branch (through $ref)
        }
        self.proving.insert(key.clone());
        // Strict while proving: a dropped keyword could make a negation narrower than the
        // schema, and a proof on it wrong.
        let strict = std::mem::replace(&mut self.opts.strict, true);
        let n_warnings = self.warnings.len();
        let proof = self.prove_disjoint(shape, sub, branches);
        self.opts.strict = strict;
        self.warnings.truncate(n_warnings);
        self.proving.remove(&key);
        match proof {
            Ok(apart) => Ok(apart),
            // Unsupported, too many alternatives…: no proof. Time and interrupts stop all.
            Err(e @ (Error::Interrupted | Error::Internal(_) | Error::LimitExceeded { limit: "max_compile_ms", .. })) => Err(e),
            Err(_) => Ok(none),
        }
    }

    fn prove_disjoint(&mut self, shape: &Shape<'a>, sub: &Subschema<'a>, branches: &[Sub<'a>]) -> Result<Vec<Vec<bool>>> {
        // The keywords beside oneOf constrain every branch (often "type": "object"): the
        // subschema is read without its oneOf (and unevaluated*, which depend on it).
        let n = branches.len();
        let mut per_branch = Vec::with_capacity(n);
        for b in branches {
            let mut s = shape.clone();
            let mut disj = Vec::new();
            self.absorb_context(&mut s, sub, &mut disj)?;
            self.absorb(&mut s, b, &mut disj, &[])?;
            let mut out = Vec::new();
            self.expand(s, disj, usize::MAX, &mut out)?;
            per_branch.push(out);
        }
        let mut apart = vec![vec![false; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                apart[i][j] = self.all_disjoint(&per_branch[i], &per_branch[j])?;
            }
        }
        Ok(apart)
    }

    /// Is every shape of `xs` disjoint from every shape of `ys`?
    fn all_disjoint(&mut self, xs: &[Shape<'a>], ys: &[Shape<'a>]) -> Result<bool> {
        for x in xs {
            for y in ys {
                if !self.shapes_disjoint(x, y)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The keywords of the oneOf's subschema other than `oneOf` itself, unevaluated* and
    /// `$id`, read into `shape`.
    fn absorb_context(&mut self, shape: &mut Shape<'a>, sub: &Subschema<'a>, disj: &mut Vec<Disjunction<'a>>) -> Result<()> {
        let Some(obj) = sub.node.as_object() else { return Ok(()) };
        if let Some(reference) = obj.get("$ref") {
            let target = SubNode::schema(self.res.resolve(sub, reference)?);
            self.absorb(shape, &target, disj, &[])?;
            if sub.draft < super::super::resources::Draft::Draft2019 {
                return Ok(());
            }
        }
        for (kw, val) in obj {
            if matches!(kw.as_str(), "oneOf" | "$id" | "id" | "unevaluatedProperties" | "unevaluatedItems" | "$ref") {
                continue;
            }
            if super::keywords::introduced(kw) > sub.draft {
                continue;
            }
            self.keyword(shape, sub, obj, kw, val, disj, &[])?;
        }
        if shape.kinds.is_empty() {
            shape.unsat = true;
        }
        Ok(())
    }

    /// Do two shapes share no value? (False when unsure.) Sound rules only: members of an
    /// enum that the other shape rejects (the checker is exact), then kind by kind:
    /// number ranges that do not meet, string languages whose intersection is empty, a
    /// property one requires that the other cannot have or whose values cannot meet, and
    /// item counts that do not meet.
    fn shapes_disjoint(&mut self, a: &Shape<'a>, b: &Shape<'a>) -> Result<bool> {
        if self.kinds_or_members_apart(a, b)? {
            return Ok(true);
        }
        if a.enumeration.is_some() || b.enumeration.is_some() {
            return Ok(false);
        }
        let common = possible_kinds(a).and(possible_kinds(b));
        for kind in [Kinds::NULL, Kinds::BOOL, Kinds::INT, Kinds::FRAC, Kinds::STR, Kinds::ARR, Kinds::OBJ] {
            if common.has(kind) && !self.disjoint_in(kind, a, b)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The first rules of [`Translator::shapes_disjoint`], which look at no subschema
    /// inside the shapes: kinds that cannot meet, enums with no common member, or one's
    /// members all rejected by the other.
    fn kinds_or_members_apart(&mut self, a: &Shape<'a>, b: &Shape<'a>) -> Result<bool> {
        if a.enumeration.is_some() && b.enumeration.is_some() && a.enum_keys.is_disjoint(&b.enum_keys) {
            return Ok(true);
        }
        if possible_kinds(a).and(possible_kinds(b)).is_empty() {
            return Ok(true);
        }
        for (x, y) in [(a, b), (b, a)] {
            if let Some(members) = &x.enumeration {
                let mut any = false;
                for m in members {
                    if self.check(m, x, true)? && self.check(m, y, false)? {
                        any = true;
                        break;
                    }
                }
                if !any {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Do `a` and `b` share no value of kind `kind` (one bit)?
    fn disjoint_in(&mut self, kind: Kinds, a: &Shape<'a>, b: &Shape<'a>) -> Result<bool> {
        if kind == Kinds::INT || kind == Kinds::FRAC {
            return Ok(ranges_apart(a, b) || ranges_apart(b, a));
        }
        if kind == Kinds::STR {
            return self.strings_disjoint(a, b);
        }
        if kind == Kinds::ARR {
            let apart = |x: &Shape<'_>, y: &Shape<'_>| x.max_items.is_some_and(|m| m < y.min_items);
            if apart(a, b) || apart(b, a) {
                return Ok(true);
            }
            return self.first_items_apart(a, b);
        }
        if kind == Kinds::OBJ {
            for (x, y) in [(a, b), (b, a)] {
                for name in &x.required {
                    if !self.may_have(y, name)? {
                        return Ok(true);
                    }
                }
            }
            return self.discriminated(a, b);
        }
        Ok(false) // null and booleans: only an enum tells them apart (above)
    }

    /// Is the intersection of two shapes' string languages empty? (Errors other than time
    /// and interrupts mean "unsure".)
    fn strings_disjoint(&mut self, a: &Shape<'a>, b: &Shape<'a>) -> Result<bool> {
        let (Some(x), Some(y)) = (self.string_body(a)?, self.string_body(b)?) else { return Ok(true) };
        match self.langs.bool_terms(vec![x, y], Vec::new(), &self.limits) {
            Ok(both) => Ok(both.is_none()),
            Err(e @ (Error::Interrupted | Error::LimitExceeded { limit: "max_compile_ms", .. })) => Err(e),
            Err(_) => Ok(false),
        }
    }

    /// Do two array shapes, one of which needs an item (so `[]` is not in both), disagree
    /// on the first item, by its kinds or members ([`Translator::kinds_or_members_apart`]:
    /// no deeper, so that recursive schemas end)? Lists of strings and lists of numbers are
    /// told apart so.
    fn first_items_apart(&mut self, a: &Shape<'a>, b: &Shape<'a>) -> Result<bool> {
        if a.min_items == 0 && b.min_items == 0 {
            return Ok(false);
        }
        let (x, y) = (self.item_subs(a, 0), self.item_subs(b, 0));
        let (x, y) = (self.rough_shapes(&x)?, self.rough_shapes(&y)?);
        for p in &x {
            for q in &y {
                if !self.kinds_or_members_apart(p, q)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// [`Translator::shapes`] with every `oneOf` read as `anyOf`: a superset of the
    /// values, for the proofs about the values inside two shapes.
    fn rough_shapes(&mut self, subs: &[Sub<'a>]) -> Result<Vec<Shape<'a>>> {
        let rough = std::mem::replace(&mut self.rough, true);
        let shapes = self.shapes(subs);
        self.rough = rough;
        shapes
    }

    /// May an object of `shape` have property `name`? False when it is forbidden, or some
    /// clause closes the object to it (no `properties` entry, no pattern matching it, and
    /// `additionalProperties: false`).
    fn may_have(&mut self, shape: &Shape<'a>, name: &str) -> Result<bool> {
        if shape.forbidden.iter().any(|f| f == name) {
            return Ok(false);
        }
        for clause in &shape.obj_clauses {
            if clause.prop(name).is_some() {
                continue;
            }
            let mut matched = false;
            for (src, sub) in &clause.patterns {
                if self.pattern_matches(src, sub.pointer(), name)? {
                    matched = true;
                    break;
                }
            }
            let closed = clause
                .additional
                .as_ref()
                .is_some_and(|s| matches!(&**s, SubNode::Schema { sub, negated: false } if sub.node == &Value::Bool(false)));
            if !matched && closed {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A property one of the shapes requires, whose values there and the values the other
    /// shape allows there (its named entry, the patterns matching the name, or
    /// `additionalProperties`) cannot meet: told apart by kinds or members only, no
    /// deeper, so that recursive schemas end. (Both requiring a property with an enum of
    /// each, the common discriminator, is the case this rule was first written for.)
    fn discriminated(&mut self, a: &Shape<'a>, b: &Shape<'a>) -> Result<bool> {
        let apart = |x: &Shape<'_>, y: &Shape<'_>| x.max_props.is_some_and(|m| m < y.min_props);
        if apart(a, b) || apart(b, a) {
            return Ok(true);
        }
        for (x, y) in [(a, b), (b, a)] {
            for name in &x.required {
                let (vx, vy) = (self.value_subs(x, name)?, self.value_subs(y, name)?);
                if vx.is_empty() && vy.is_empty() {
                    continue;
                }
                let (vx, vy) = (self.rough_shapes(&vx)?, self.rough_shapes(&vy)?);
                let mut met = false;
                'pairs: for p in &vx {
                    for q in &vy {
                        if !self.kinds_or_members_apart(p, q)? {
                            met = true;
                            break 'pairs;
                        }
                    }
                }
                if !met {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The subschemas every value of property `name` obeys in an object of `shape`: per
    /// clause, its `properties` entry, else every pattern matching the name, else its
    /// `additionalProperties`.
    fn value_subs(&mut self, shape: &Shape<'a>, name: &str) -> Result<Vec<Sub<'a>>> {
        let mut subs = Vec::new();
        for clause in &shape.obj_clauses {
            if let Some(sub) = clause.prop(name) {
                subs.push(sub.clone());
                continue;
            }
            let mut matched = false;
            for (src, sub) in &clause.patterns {
                if self.pattern_matches(src, sub.pointer(), name)? {
                    subs.push(sub.clone());
                    matched = true;
                }
            }
            if let (false, Some(sub)) = (matched, &clause.additional) {
                subs.push(sub.clone());
            }
        }
        Ok(subs)
    }
}

/// The kinds of the values `shape` may allow (from its enum when it has one; a number
/// member counts as both integer and not).
pub(crate) fn possible_kinds(shape: &Shape<'_>) -> Kinds {
    let Some(e) = &shape.enumeration else { return shape.kinds };
    let mut kinds = Kinds::NONE;
    for v in e {
        let k = value::kind_of(v);
        kinds = kinds.or(if k.has(Kinds::NUMBER) { Kinds::NUMBER } else { k });
    }
    kinds.and(shape.kinds)
}

/// Is every number `x` allows below every number `y` allows (`x`'s upper bound under
/// `y`'s lower one)?
fn ranges_apart(x: &Shape<'_>, y: &Shape<'_>) -> bool {
    match (&x.hi, &y.lo) {
        (Some((hi, hi_excl)), Some((lo, lo_excl))) => hi < lo || (hi == lo && (*hi_excl || *lo_excl)),
        _ => false,
    }
}

/// The keys of the first clause of `shape` that closes the object to every other key
/// (`additionalProperties: false`, no patterns), if one does.
fn closed_names(shape: &Shape<'_>) -> Option<Vec<String>> {
    closing_names(&shape.obj_clauses)
}

/// The keys of the first of `clauses` that closes the object to every other key.
fn closing_names(clauses: &[ObjClause<'_>]) -> Option<Vec<String>> {
    clauses
        .iter()
        .find(|c| c.patterns.is_empty() && c.additional.as_ref().is_some_and(super::objects::is_false))
        .map(|c| c.props.iter().map(|(k, _)| k.clone()).collect())
}
