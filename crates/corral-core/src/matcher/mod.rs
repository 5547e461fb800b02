//! The per-sequence matcher: current state, history for rollback, masks.
//!
//! * `draft`: speculative decoding, a draft checked or masked at every position in one call;
//! * `intersection`: the matcher of an intersection (`g1 & g2`), one matcher per part;
//! * `patterns`: the strings that must be regular expressions, checked beside the engine
//!   (see [`crate::grammar::regex_text`]).

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::grammar::distinct_keys::fresh_item;
use crate::grammar::distinct_keys::{EntryQuery, KeyTracker, NoDistinctLists, Outcome, Seen};
use crate::grammar::regex_text::RegexTexts;
use crate::index::compiled::{At, CompiledGrammar, Engine, Probe};
use crate::parser::{advance_chart, AheadEntries, Chart, Overlay, ReadEntries};
use crate::vocab::{ByteRecognizer, TokenKind};

mod budgets;
mod draft;
mod intersection;
mod patterns;

pub use draft::DraftMasks;

use intersection::Parts;

/// History entry meaning "EOS was accepted; the sequence is finished".
const FINISHED: u32 = u32::MAX;

/// Where a sequence is in its grammar.
#[derive(Debug, Clone)]
enum State {
    /// `history[0]` is the start state; the last entry is the current state.
    Dfa { history: Vec<u32> },
    /// The parse so far, and the number of chart rows after each accepted token
    /// (`FINISHED` for EOS), so that rollback truncates exactly.
    Cfg { chart: Chart, bounds: Vec<u32> },
    /// An intersection: each part's matcher.
    All(Parts),
}

/// Tracks one generated sequence against a compiled grammar.
///
/// The state after each accepted token is kept, so `rollback(n)` is exact and O(n).
#[derive(Debug, Clone)]
pub struct Matcher {
    grammar: Arc<CompiledGrammar>,
    state: State,
    /// The keys of the open JSON objects, for a grammar with distinct keys.
    keys: Option<KeyTracker>,
    /// Does the grammar keep the items of some arrays distinct as values?
    value_lists: bool,
    /// The strings that must be regular expressions, for a grammar with such strings.
    texts: Option<RegexTexts>,
    /// The counts of budgets in tokens, for a grammar with such budgets.
    budgets: Option<budgets::Budgets>,
}

/// What `fill_mask` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskInfo {
    /// Number of allowed ids (EOS included).
    pub allowed: u32,
}

impl Matcher {
    /// A matcher at the start of the grammar.
    pub fn new(grammar: Arc<CompiledGrammar>) -> Matcher {
        let state = match &grammar.engine {
            Engine::Dfa { dfa, .. } => State::Dfa { history: vec![dfa.start()] },
            Engine::Cfg { start, .. } => State::Cfg { chart: start.clone(), bounds: Vec::new() },
            Engine::Intersection { parts } => State::All(Parts::new(parts)),
        };
        // An intersection's parts keep their own keys.
        let arrays = matches!(&grammar.engine, Engine::Cfg { earley, .. } if earley.has_distinct_lists());
        let value_lists = matches!(&grammar.engine, Engine::Cfg { earley, .. } if earley.has_value_lists());
        let regions = grammar.grammar().json_regions();
        let keys = (grammar.grammar().distinct_keys() && grammar.parts().is_none())
            .then(|| KeyTracker::new(arrays).in_json_regions(regions));
        let texts = matches!(&grammar.engine, Engine::Cfg { earley, .. } if earley.has_regex_texts()).then(RegexTexts::new);
        let budgets =
            matches!(&grammar.engine, Engine::Cfg { earley, .. } if earley.has_token_budgets()).then(budgets::Budgets::default);
        Matcher { grammar, state, keys, value_lists, texts, budgets }
    }

    /// The compiled grammar.
    pub fn grammar(&self) -> &Arc<CompiledGrammar> {
        &self.grammar
    }

    /// For an intersection, its parts' matchers (at this matcher's position); None for any
    /// other grammar.
    pub fn parts(&self) -> Option<&[Matcher]> {
        match &self.state {
            State::All(parts) => Some(parts.matchers()),
            _ => None,
        }
    }

    fn check_row(&self, out: &[u32]) -> Result<()> {
        let words = self.grammar.vocab().mask_words();
        if out.len() != words {
            return Err(Error::InvalidArgument(format!(
                "bitmask row has {} int32 words, the vocabulary needs {words} (ceil({} / 32))",
                out.len(),
                self.grammar.vocab().size()
            )));
        }
        Ok(())
    }

    /// Writes the allowed-token bitmask (bit t of word t/32) into `out`, which must be
    /// exactly `vocab.mask_words()` long. Once finished, only EOS is allowed, so that
    /// batched generation can keep padding a finished row.
    ///
    /// For an intersection, the mask is the AND of its parts'; where each part allows some
    /// token but none is allowed by all, this is [`Error::NoCommonToken`].
    pub fn fill_mask(&self, out: &mut [u32]) -> Result<MaskInfo> {
        self.check_row(out)?;
        if self.is_finished() {
            out.fill(0);
            let eos = self.grammar.vocab().eos_ids();
            for &e in eos {
                out[(e >> 5) as usize] |= 1 << (e & 31);
            }
            return Ok(MaskInfo { allowed: eos.len() as u32 });
        }
        let allowed = match &self.state {
            State::Dfa { history } => {
                let mask = self.grammar.state_mask(*history.last().unwrap_or(&FINISHED));
                mask.write(out);
                mask.count
            }
            State::Cfg { chart, .. } => self.grammar.chart_mask(chart, out)?,
            State::All(parts) => parts.fill_mask(out, false)?.allowed,
        };
        let allowed = allowed - self.drop_repeated_keys(out)?;
        Ok(MaskInfo { allowed: allowed - self.drop_broken_patterns(out)? })
    }

    /// Where the matcher stands, for its engine.
    fn at(&self) -> At<'_> {
        match &self.state {
            State::Dfa { history } => At::Dfa(*history.last().unwrap_or(&FINISHED)),
            State::Cfg { chart, .. } => At::Cfg(chart),
            // An intersection keeps no keys of its own (its parts do), so it is never
            // probed; were it, the dead state would make the probe an error, not a guess.
            State::All(_) => At::Dfa(crate::automata::DEAD),
        }
    }

    /// With distinct keys: clears from a mask the tokens that would repeat a key (see
    /// [`crate::grammar::distinct_keys`]). Returns how many it cleared.
    ///
    /// Only two kinds of token can: those with a `"` (they may close a key), and, inside a
    /// key that starts one already written, those that spell the next bytes of such a key
    /// (found by walking the token trie along the written keys, not the vocabulary).
    fn drop_repeated_keys(&self, out: &mut [u32]) -> Result<u32> {
        let Some(keys) = &self.keys else { return Ok(0) };
        let mut cleared = 0;
        // One recognizer at this position serves every probe (each pops what it pushed),
        // and one copy of the tracker every token read into one (each rolled back).
        let mut probe = None;
        let mut scratch = None;
        // `items`: check items of distinct arrays too (else keys only).
        let mut check = |t: u32, items: bool, out: &mut [u32]| -> Result<()> {
            let (word, bit) = ((t >> 5) as usize, 1u32 << (t & 31));
            if out[word] & bit != 0 && !self.keeps_keys_distinct(keys, t, items, &mut probe, &mut scratch)? {
                out[word] &= !bit;
                cleared += 1;
            }
            Ok(())
        };
        let vocab = self.grammar.vocab();
        if self.value_lists {
            // A token can repeat an item, or leave one that can only repeat, by starting a
            // new item (it has a comma) or by spelling on an item that may still become an
            // earlier one (found by walking the trie along such items).
            if keys.items_may_repeat() {
                let mut walk = crate::grammar::distinct_keys::MayRepeat::new(keys.clone());
                let mut spelled: Vec<u32> = Vec::new();
                vocab.trie().walk(&mut walk, |t| spelled.push(t));
                for t in spelled {
                    check(t, true, out)?;
                }
            }
            for &t in &vocab.quote_tokens().commas {
                check(t, true, out)?;
            }
        }
        let half_written = !self.grammar.grammar().key_endings_infinite();
        let in_key = keys.in_key();
        // A token with one quote, read outside a key, cannot close a key: it only matters
        // where a half-written key it leaves must be checked. Read inside a key, its
        // quote closes the key; that repeats one only if what comes before the quote
        // ends a key already written (looked up below). With no key written yet, a token
        // matters only through keys of its own: it needs three quotes to repeat one
        // (`a":1,"a"` in a key), two to leave a half-written key after closing one.
        let min_quotes = match (keys.has_keys(), half_written) {
            (true, _) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        for q in &vocab.quote_tokens().all {
            let needed = q.quotes >= 2 || (q.quotes == 1 && !in_key && half_written && !keys.passes_untouched(q));
            if q.quotes >= min_quotes && needed {
                check(q.id, false, out)?;
            }
        }
        if in_key {
            let rests = keys.key_extensions();
            for rest in &rests {
                for &t in vocab.single_quote_tokens_after(rest) {
                    check(t, false, out)?;
                }
            }
            if half_written && !rests.is_empty() {
                // Tokens that leave the key half written as the start of a written key.
                let mut spelled: Vec<u32> = Vec::new();
                let mut prefixes = crate::grammar::distinct_keys::PrefixesOf::new(rests);
                vocab.trie().walk(&mut prefixes, |t| spelled.push(t));
                for t in spelled {
                    check(t, false, out)?;
                }
            }
        }
        Ok(cleared)
    }

    /// Does normal token `t` keep the output's object keys and distinct items distinct
    /// (and leave a key or item half written only where a new one can still be
    /// finished)? `items`: check the items of arrays of distinct values too (the mask
    /// knows which tokens cannot touch them). `probe`: a recognizer at this position,
    /// `scratch`: a copy of the tracker, each made on first need and kept for the next
    /// call.
    fn keeps_keys_distinct<'a>(
        &'a self,
        keys: &KeyTracker,
        t: u32,
        items: bool,
        probe: &mut Option<Probe<'a>>,
        scratch: &mut Option<KeyTracker>,
    ) -> Result<bool> {
        let bytes = self.grammar.vocab().token_bytes(t);
        if items && keys.tracks_values() {
            return self.keeps_items_distinct(keys, bytes, probe, scratch);
        }
        match keys.simulate(bytes, &mut *self.entries_ahead(bytes))? {
            Outcome::Fine => Ok(true),
            Outcome::Repeat => Ok(false),
            Outcome::Values => self.keeps_items_distinct(keys, bytes, probe, scratch),
            Outcome::OpenKey { .. } if self.grammar.grammar().key_endings_infinite() => Ok(true),
            Outcome::OpenKey { written, escape, set, extra } => {
                let seen = Seen { set, extra: &extra };
                let rec = match probe {
                    Some(p) => p,
                    None => probe.insert(self.grammar.probe(self.at())?),
                };
                let found = crate::grammar::distinct_keys::fresh_key_after(rec, bytes, &written, escape, &seen)?;
                match rec.take_error() {
                    Some(e) => Err(e),
                    None => Ok(found.is_some()),
                }
            }
        }
    }

    /// [`Matcher::keeps_keys_distinct`] where an array of distinct values is open or
    /// starts: `bytes` are read into a copy of the tracker; if an item they leave open
    /// may still become an earlier one, [`fresh_item`] looks for a way on to a new one.
    fn keeps_items_distinct<'a>(
        &'a self,
        keys: &KeyTracker,
        bytes: &[u8],
        probe: &mut Option<Probe<'a>>,
        scratch: &mut Option<KeyTracker>,
    ) -> Result<bool> {
        let tracker = scratch.get_or_insert_with(|| keys.clone());
        if !tracker.push_token(bytes, &mut *self.entries_ahead(bytes))? {
            return Ok(false);
        }
        let open_keys = self.grammar.grammar().key_endings_infinite();
        let found = if tracker.items_may_repeat() || (!open_keys && tracker.key_cornered()) {
            let rec = match probe {
                Some(p) => p,
                None => probe.insert(self.grammar.probe(self.at())?),
            };
            let read = bytes.iter().take_while(|&&b| rec.push_byte(b)).count();
            let found = if read == bytes.len() {
                fresh_item(tracker, rec, open_keys, self.grammar.limits().max_fresh_item_steps).map(|p| p.is_some())
            } else {
                Ok(false)
            };
            rec.pop_bytes(read);
            match rec.take_error() {
                Some(e) => Err(e),
                None => found,
            }
        } else {
            Ok(true)
        };
        tracker.rollback(1);
        found
    }

    /// Like [`Matcher::fill_mask`], but the slow way, a reference for tests: for a
    /// context-free grammar a plain trie walk with the parser (no lexer cache, no slices),
    /// for a regular one a walk of the whole trie (no mask cache, no slices).
    pub fn fill_mask_reference(&self, out: &mut [u32]) -> Result<MaskInfo> {
        match &self.state {
            State::Cfg { chart, .. } if !self.is_finished() => {
                self.check_row(out)?;
                let allowed = self.grammar.chart_mask_reference(chart, out)?;
                let allowed = allowed - self.drop_repeated_keys(out)?;
                Ok(MaskInfo { allowed: allowed - self.drop_broken_patterns(out)? })
            }
            State::Dfa { history } if !self.is_finished() => {
                self.check_row(out)?;
                let mask = self.grammar.compute_mask_full(*history.last().unwrap_or(&FINISHED));
                mask.write(out);
                Ok(MaskInfo { allowed: mask.count - self.drop_repeated_keys(out)? })
            }
            State::All(parts) if !self.is_finished() => {
                self.check_row(out)?;
                parts.fill_mask(out, true)
            }
            _ => self.fill_mask(out),
        }
    }

    /// Bytes that, appended to the output, make it complete (short, not always the
    /// shortest). Empty if it may end now; None once finished. Fails if the completion
    /// would be longer than `Limits::max_completion_bytes`, or when interrupted.
    ///
    /// For an intersection, the shortest of its parts' completions that every part
    /// accepts, and None if there is none such (though a longer common one may exist).
    pub fn completion(&self) -> Result<Option<Vec<u8>>> {
        if self.is_finished() {
            return Ok(None);
        }
        let max_bytes = self.grammar.limits().max_completion_bytes;
        if let State::All(parts) = &self.state {
            return parts.completion(max_bytes);
        }
        if self.keys.is_some() {
            return self.completion_with_distinct_keys(max_bytes);
        }
        self.checked_completion(max_bytes)
    }

    /// [`Matcher::completion`] with the tokens the grammar names (`<think>`, `<[id]>`)
    /// written as their text rather than their readings (see [`crate::vocab::readings`]):
    /// what a user reads. The same bytes for a grammar that names no token.
    pub fn completion_text(&self) -> Result<Option<Vec<u8>>> {
        Ok(self.completion()?.map(|b| self.grammar.vocab().spell_readings(b)))
    }

    /// A completion as the grammar alone sees it (keys may repeat).
    fn engine_completion(&self, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        match (&self.state, &self.grammar.engine) {
            (State::Dfa { history }, Engine::Dfa { dfa, .. }) => {
                let suffix = crate::grammar::shortest::dfa_suffix(dfa, *history.last().unwrap_or(&FINISHED));
                match suffix {
                    Some(s) if s.len() > max_bytes => Err(Error::LimitExceeded {
                        limit: "max_completion_bytes",
                        value: max_bytes,
                        context: format!("the shortest completion ({} bytes)", s.len()),
                    }),
                    other => Ok(other),
                }
            }
            (State::Cfg { chart, .. }, Engine::Cfg { earley, shortest, .. }) => {
                let shortest = shortest.get_or_init(|| crate::grammar::shortest::Shortest::new(earley.cfg()));
                chart.completion(earley, shortest, max_bytes)
            }
            _ => Ok(None),
        }
    }

    /// A completion whose objects repeat no key and whose distinct arrays no item: the
    /// grammar's completion, where each repeated key is replaced, from its opening quote
    /// on, by a new key ([`crate::grammar::distinct_keys::fresh_key`]), and each repeated
    /// item, from its start, by the start of a new one ([`fresh_item`]), after which the
    /// grammar completes again. Each round fixes the first repeat, so the loop ends within
    /// `max_bytes`.
    fn completion_with_distinct_keys(&self, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        let mut cur = self.clone();
        let mut out: Vec<u8> = Vec::new();
        loop {
            crate::util::interrupt::check()?;
            let Some(rest) = cur.checked_completion(max_bytes.saturating_sub(out.len()))? else { return Ok(None) };
            let Some(keys) = &cur.keys else { return Ok(None) };
            let Some(start) = keys.first_repeat(&rest, &mut *cur.entries_ahead(&rest))? else {
                out.extend_from_slice(&rest);
                return Ok(Some(out));
            };
            cur.push_bytes(&rest[..start])?;
            out.extend_from_slice(&rest[..start]);
            let Some(keys) = &cur.keys else { return Ok(None) };
            let found = {
                let mut probe = cur.grammar.probe(cur.at())?;
                let found = match keys.open_key() {
                    Some((written, escape, seen)) if !keys.tracks_values() => {
                        crate::grammar::distinct_keys::fresh_key(&mut probe, written, escape, &seen)?
                    }
                    // An item that may only become an earlier one (or a key inside it).
                    _ => {
                        let open_keys = cur.grammar.grammar().key_endings_infinite();
                        let steps = cur.grammar.limits().max_fresh_item_steps;
                        fresh_item(&mut keys.clone(), &mut probe, open_keys, steps)?
                    }
                };
                if let Some(e) = probe.take_error() {
                    return Err(e);
                }
                found
            };
            let Some(proof) = found else { return Ok(None) };
            cur.push_bytes(&proof)?;
            out.extend_from_slice(&proof);
            if out.len() > max_bytes {
                return Err(Error::LimitExceeded {
                    limit: "max_completion_bytes",
                    value: max_bytes,
                    context: "a completion with distinct object keys".into(),
                });
            }
        }
    }

    /// Reads `bytes` (known to be accepted) as one more step, without a token id: for
    /// building completions on a copy.
    fn push_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if self.try_push_bytes(bytes)? {
            Ok(())
        } else {
            Err(Error::Internal("a completion step was refused".into()))
        }
    }

    /// Reads `bytes` as one more step, without a token id; false if they are refused,
    /// which leaves the matcher unusable: for checking completions on a copy.
    fn try_push_bytes(&mut self, bytes: &[u8]) -> Result<bool> {
        let at = self.position();
        let accepted = match (&mut self.state, &self.grammar.engine) {
            (State::Dfa { history }, Engine::Dfa { dfa, .. }) => {
                let next = dfa.walk(*history.last().unwrap_or(&FINISHED), bytes);
                history.push(next);
                next != crate::automata::DEAD
            }
            (State::Cfg { chart, bounds }, Engine::Cfg { earley, .. }) => {
                let ok = advance_chart(earley, chart, bytes)?;
                self.grammar.number_sets(chart);
                bounds.push(chart.num_rows() as u32);
                ok && {
                    self.count_budgets(Some(bytes))?;
                    true
                }
            }
            (State::All(parts), _) => parts.try_push_bytes(bytes)?,
            _ => false,
        };
        Ok(accepted && self.keys_read(bytes, at)? && self.texts_read(bytes, at)?)
    }

    /// Bytes read so far (for a context-free grammar; 0 for the others).
    fn position(&self) -> usize {
        self.chart().map_or(0, |c| c.num_rows().saturating_sub(1))
    }

    /// The parser's answer to where a distinct list's entry may start in `bytes`, not read
    /// yet (see [`crate::parser::AheadEntries`]).
    fn entries_ahead<'a>(&'a self, bytes: &'a [u8]) -> Box<dyn EntryQuery + 'a> {
        match (&self.state, &self.grammar.engine) {
            (State::Cfg { chart, .. }, Engine::Cfg { earley, .. }) => Box::new(AheadEntries { grammar: earley, chart, bytes }),
            _ => Box::new(NoDistinctLists),
        }
    }

    /// Gives the distinct-keys check `bytes`, just read by the engine from byte position
    /// `at` on. True without the check.
    fn keys_read(&mut self, bytes: &[u8], at: usize) -> Result<bool> {
        let Some(keys) = &mut self.keys else { return Ok(true) };
        match (&self.state, &self.grammar.engine) {
            (State::Cfg { chart, .. }, Engine::Cfg { earley, .. }) => {
                keys.push_token(bytes, &mut ReadEntries { grammar: earley, chart, at })
            }
            _ => keys.push_token(bytes, &mut NoDistinctLists),
        }
    }

    /// The parse so far, for a context-free grammar.
    pub fn chart(&self) -> Option<&Chart> {
        match &self.state {
            State::Cfg { chart, .. } => Some(chart),
            _ => None,
        }
    }

    /// Would `token` be accepted now?
    pub fn is_allowed(&self, token: u32) -> bool {
        if self.is_finished() {
            return false;
        }
        let kind = self.grammar.vocab().kind(token);
        match (&self.state, kind) {
            (State::All(parts), _) => parts.is_allowed(token),
            (_, TokenKind::Eos) => self.is_accepting(),
            (State::Dfa { history }, TokenKind::Normal) => {
                self.grammar.next_state(*history.last().unwrap_or(&FINISHED), token).is_some() && self.keys_allow(token)
            }
            (State::Cfg { chart, .. }, TokenKind::Normal) => {
                let Engine::Cfg { earley, .. } = &self.grammar.engine else { return false };
                let mut ov = Overlay::new(earley, chart);
                self.grammar.vocab().token_bytes(token).iter().all(|&b| ov.push(b))
                    && self.keys_allow(token)
                    && self.texts_allow(token)
            }
            _ => false,
        }
    }

    /// With distinct keys, does `token` keep them distinct? (A limit hit while checking
    /// counts as no.)
    fn keys_allow(&self, token: u32) -> bool {
        match &self.keys {
            None => true,
            Some(keys) => self.keeps_keys_distinct(keys, token, true, &mut None, &mut None).unwrap_or(false),
        }
    }

    /// Consumes `token`. Returns false, leaving the state unchanged, if it is not allowed.
    /// A token id outside the vocabulary's size is an error.
    pub fn advance(&mut self, token: u32) -> Result<bool> {
        let vocab = self.grammar.vocab().clone();
        let size = vocab.size();
        if token as usize >= size {
            return Err(Error::InvalidArgument(format!("token id {token} is out of range (vocabulary size {size})")));
        }
        if self.is_finished() {
            return Ok(false);
        }
        let kind = vocab.kind(token);
        if kind == TokenKind::Normal {
            if let Some(keys) = &self.keys {
                if !self.keeps_keys_distinct(keys, token, true, &mut None, &mut None)? {
                    return Ok(false);
                }
            }
            if let Some(texts) = &self.texts {
                let bytes = vocab.token_bytes(token);
                if texts.first_refusal(bytes, &mut *self.entries_ahead(bytes))?.is_some() {
                    return Ok(false);
                }
            }
        }
        let at = self.position();
        let accepted = self.advance_engine(token, kind)?;
        if accepted {
            let bytes = if kind == TokenKind::Normal { vocab.token_bytes(token) } else { &[] };
            if !self.keys_read(bytes, at)? {
                return Err(Error::Internal("distinct-keys check disagreed with itself".into()));
            }
            if !self.texts_read(bytes, at)? {
                return Err(Error::Internal("regular-expression check disagreed with itself".into()));
            }
        }
        Ok(accepted)
    }

    /// [`Matcher::advance`] for the engine alone.
    fn advance_engine(&mut self, token: u32, kind: TokenKind) -> Result<bool> {
        let vocab = self.grammar.vocab().clone();
        match &mut self.state {
            State::All(parts) => parts.advance(token),
            State::Dfa { history } => {
                let state = *history.last().unwrap_or(&FINISHED);
                let dfa = self.grammar.dfa().ok_or_else(|| Error::InvalidArgument("no DFA".into()))?;
                let next = match kind {
                    TokenKind::Eos if dfa.is_accepting(state) => FINISHED,
                    TokenKind::Normal => match self.grammar.next_state(state, token) {
                        Some(s) => s,
                        None => return Ok(false),
                    },
                    _ => return Ok(false),
                };
                history.push(next);
                Ok(true)
            }
            State::Cfg { chart, bounds } => {
                let Engine::Cfg { earley, .. } = &self.grammar.engine else {
                    return Err(Error::InvalidArgument("no parser".into()));
                };
                let read = match kind {
                    TokenKind::Eos if chart.is_accepting() => {
                        bounds.push(FINISHED);
                        None
                    }
                    TokenKind::Normal if advance_chart(earley, chart, vocab.token_bytes(token))? => {
                        self.grammar.number_sets(chart);
                        bounds.push(chart.num_rows() as u32);
                        Some(vocab.token_bytes(token))
                    }
                    _ => return Ok(false),
                };
                self.count_budgets(read)?;
                Ok(true)
            }
        }
    }

    /// Undoes the last `n` accepted tokens (EOS included).
    pub fn rollback(&mut self, n: usize) -> Result<()> {
        let have = self.num_tokens();
        if n > have {
            return Err(Error::InvalidArgument(format!("cannot roll back {n} tokens: only {have} have been accepted")));
        }
        if let Some(keys) = &mut self.keys {
            keys.rollback(n);
        }
        if let Some(texts) = &mut self.texts {
            texts.rollback(n);
        }
        if let Some(budgets) = &mut self.budgets {
            budgets.rollback(n);
        }
        match &mut self.state {
            State::Dfa { history } => history.truncate(history.len() - n),
            State::Cfg { chart, bounds } => {
                bounds.truncate(bounds.len() - n);
                let rows = bounds.iter().rev().find(|&&b| b != FINISHED).copied().unwrap_or(1);
                chart.truncate_rows(rows as usize);
            }
            State::All(parts) => parts.rollback(n)?,
        }
        Ok(())
    }

    /// Returns to the start, forgetting all tokens.
    pub fn reset(&mut self) {
        let n = self.num_tokens();
        // Cannot fail: n tokens were accepted.
        let _ = self.rollback(n);
    }

    /// Number of tokens accepted so far (EOS included).
    pub fn num_tokens(&self) -> usize {
        match &self.state {
            State::Dfa { history } => history.len() - 1,
            State::Cfg { bounds, .. } => bounds.len(),
            State::All(parts) => parts.num_tokens(),
        }
    }

    /// May the output end here (would EOS be accepted)?
    pub fn is_accepting(&self) -> bool {
        if self.is_finished() {
            return false;
        }
        match &self.state {
            State::Dfa { history } => self.grammar.dfa().is_some_and(|d| d.is_accepting(*history.last().unwrap_or(&FINISHED))),
            State::Cfg { chart, .. } => chart.is_accepting(),
            State::All(parts) => parts.is_accepting(),
        }
    }

    /// Has EOS been accepted?
    pub fn is_finished(&self) -> bool {
        match &self.state {
            State::Dfa { history } => history.last() == Some(&FINISHED),
            State::Cfg { bounds, .. } => bounds.last() == Some(&FINISHED),
            State::All(parts) => parts.is_finished(),
        }
    }

    /// The tokens that are the only way forward from here: while exactly one token id is
    /// allowed, it is forced. Ends with an EOS id if ending is the only way forward.
    /// Does not change the matcher. At most `Limits::max_forced_tokens` are returned (for
    /// an intersection, the limits it was made with); a dead end ends the run.
    pub fn forced_tokens(&self) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        let limit = self.grammar.limits().max_forced_tokens;
        if let State::All(parts) = &self.state {
            return parts.forced_tokens(limit, self.grammar.vocab().mask_words());
        }
        if let (State::Dfa { history }, None) = (&self.state, &self.keys) {
            let mut state = *history.last().unwrap_or(&FINISHED);
            while state != FINISHED && out.len() < limit {
                let mask = self.grammar.state_mask(state);
                let Some(only) = mask.only else { break };
                out.push(only);
                state = match self.grammar.vocab().kind(only) {
                    TokenKind::Normal => match self.grammar.next_state(state, only) {
                        Some(s) => s,
                        None => break,
                    },
                    _ => FINISHED,
                };
            }
            return Ok(out);
        }
        let mut bits = vec![0u32; self.grammar.vocab().mask_words()];
        // Most positions force nothing: say so before copying the parse.
        if self.is_finished() || self.fill_mask(&mut bits)?.allowed != 1 {
            return Ok(out);
        }
        let mut probe = self.clone();
        while !probe.is_finished() && out.len() < limit {
            if probe.fill_mask(&mut bits)?.allowed != 1 {
                break;
            }
            let only = bits.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, &w)| (i * 32) as u32 + w.trailing_zeros());
            let Some(only) = only else { break };
            if !probe.advance(only)? {
                break;
            }
            out.push(only);
        }
        Ok(out)
    }
}
