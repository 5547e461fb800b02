//! Grammars: the AST → a normalized grammar, and the [`Grammar`] a constraint is, validated
//! but not yet tied to a vocabulary.
//!
//! * [`lower`](mod@lower): validation and normalization of a grammar AST into a BNF over byte-DFA
//!   terminals (no ε-rules, few unit rules), with regular rules folded into terminals;
//! * [`sym`]: the symbols of a normalized grammar; [`perm`]: `perm!` lists (entries in
//!   any order) as one construct with its own states;
//! * `shortest`: every symbol's shortest string; [`sample`]: random sentences;
//! * [`distinct_keys`]: the condition, checked on the output's bytes, that JSON objects
//!   never repeat a key;
//! * [`regex_text`]: the condition, checked on the output's bytes, that the strings of
//!   `format: "regex"` are ECMAScript regular expressions.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::frontend::regex::{self, ParsedRegex, PerlClasses};
use crate::frontend::{self, Dialect};
use crate::limits::Limits;
use crate::util::interrupt::{self, Scope};

pub mod distinct_keys;
pub(crate) mod item_values;
pub mod lower;
pub mod perm;
mod pieces;
pub mod regex_text;
pub mod sample;
pub(crate) mod shortest;
pub mod sym;

pub use lower::{lower, lower_with, Cfg, Join, LowerOptions};
pub use sym::Sym;

/// Does the terminal expression `expr` (corral EBNF: strings, classes, regexes, `and!`,
/// `not!`, `except!`, no rule references) match no string at all? See
/// [`lower::expression_is_empty`]; this runs it within `limits.max_compile_ms`.
pub fn expression_is_empty(expr: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<bool> {
    let budget = Scope::with_budget("max_compile_ms", limits.max_compile_ms);
    interrupt::run(&budget, || lower::expression_is_empty(expr, limits, classes))
}

/// A context-free grammar, validated and normalized.
#[derive(Debug, Clone)]
pub struct CfgGrammar {
    /// The normalized grammar (shared with the parsers of its compiled grammars).
    pub cfg: Arc<Cfg>,
    /// What it is, for messages.
    pub description: String,
    /// The output is JSON whose objects must not repeat a key (see [`distinct_keys`]).
    pub distinct_keys: bool,
    /// Known: every half-written key has infinitely many endings, so only closed keys
    /// need checking (see [`Grammar::with_distinct_keys`]).
    pub key_endings_infinite: bool,
    /// With `distinct_keys`: may some object take keys from a class the grammar cannot keep
    /// distinct (`additionalProperties`, patterns)? False when every key is named, so the
    /// grammar alone writes each at most once (see [`Grammar::with_named_keys_only`]).
    pub open_keys: bool,
    /// With `distinct_keys`: is the output other text with JSON values inside, marked by
    /// [`Distinct::Json`](crate::frontend::ast::Distinct::Json) entries (a structural
    /// tag, `%json` in a grammar)? The check then reads only those values as JSON.
    pub json_regions: bool,
}

/// A constraint on the output's bytes. Built by the front-ends; compiled against a
/// vocabulary by [`crate::CompiledGrammar::new`].
///
/// Today a grammar is a regular expression; context-free grammars (EBNF/GBNF/Lark, JSON
/// Schema) join as further variants that share the same matcher and mask machinery.
#[derive(Debug, Clone)]
pub enum Grammar {
    /// A Python `re` pattern with `re.fullmatch` meaning.
    Regex(ParsedRegex),
    /// A context-free grammar (from EBNF, GBNF or Lark text).
    Cfg(Arc<CfgGrammar>),
}

impl Grammar {
    /// Parses and validates a Python `re` pattern (syntax and supported constructs only;
    /// the DFA is built, under `limits`, when the grammar is compiled). `classes` are the
    /// interpreter's `\d \w \s` sets, if known (see [`PerlClasses`]).
    pub fn regex(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<Grammar> {
        let budget = Scope::with_budget("max_compile_ms", limits.max_compile_ms);
        interrupt::run(&budget, || Ok(Grammar::Regex(regex::parse_whole(pattern, limits, classes)?)))
    }

    /// Parses, validates and normalizes a grammar text (corral EBNF or GBNF). `start`
    /// names the start rule (default: `start`, else `root`, else the first rule).
    pub fn cfg_text(
        text: &str,
        dialect: Dialect,
        start: Option<&str>,
        limits: &Limits,
        classes: Option<&PerlClasses>,
    ) -> Result<Grammar> {
        Self::cfg_text_with(text, dialect, start, limits, &LowerOptions::default(), classes)
    }

    /// [`Grammar::cfg_text`] with a choice of how regular parts become terminals (see
    /// [`LowerOptions`]).
    pub fn cfg_text_with(
        text: &str,
        dialect: Dialect,
        start: Option<&str>,
        limits: &Limits,
        options: &LowerOptions,
        classes: Option<&PerlClasses>,
    ) -> Result<Grammar> {
        let ast = Self::parse_text(text, dialect, limits)?;
        Self::cfg_ast(&ast, &Self::text_description(dialect), start, limits, options, classes)
    }

    /// The syntax tree of a grammar text, parsed within `limits.max_compile_ms`: the first
    /// step of [`Grammar::cfg_text_with`], for callers that add to the tree before lowering
    /// it (the `%json` schemas of a text).
    pub fn parse_text(text: &str, dialect: Dialect, limits: &Limits) -> Result<frontend::ast::GrammarAst> {
        let budget = Scope::with_budget("max_compile_ms", limits.max_compile_ms);
        interrupt::run(&budget, || frontend::parse(text, dialect, limits))
    }

    /// How messages name a grammar written in `dialect`: "ebnf grammar", "lark grammar".
    pub fn text_description(dialect: Dialect) -> String {
        format!("{dialect:?} grammar").to_lowercase()
    }

    /// A normalized grammar with no condition beside it (no repeated-key check).
    fn plain_cfg(cfg: Cfg, description: String) -> Grammar {
        let (distinct_keys, key_endings_infinite, open_keys, json_regions) = (false, false, false, false);
        Grammar::Cfg(Arc::new(CfgGrammar {
            cfg: Arc::new(cfg),
            description,
            distinct_keys,
            key_endings_infinite,
            open_keys,
            json_regions,
        }))
    }

    /// Validates and normalizes a grammar built directly as an AST (by a front-end that
    /// computes its grammar rather than parsing text, such as the JSON Schema translator).
    /// `description` names it in messages; `start` as in [`Grammar::cfg_text`]. Runs
    /// within `limits.max_compile_ms`.
    pub fn cfg_ast(
        ast: &frontend::ast::GrammarAst,
        description: &str,
        start: Option<&str>,
        limits: &Limits,
        options: &LowerOptions,
        classes: Option<&PerlClasses>,
    ) -> Result<Grammar> {
        let budget = Scope::with_budget("max_compile_ms", limits.max_compile_ms);
        let cfg = interrupt::run(&budget, || lower_with(ast, start, limits, options, classes))?;
        Ok(Grammar::plain_cfg(cfg, description.to_string()))
    }

    /// The union (any one of the parts) or the concatenation (all of them in order) of
    /// `parts`, as one grammar; see [`lower::compose`].
    ///
    /// The repeated-key check of JSON grammars (see [`distinct_keys`]) reads the output as
    /// JSON: the whole output when every part is JSON (a union of JSON grammars, JSON
    /// values one after another), else only the JSON values marked as regions (see
    /// [`Grammar::with_json_regions`]: a schema inside a structural tag or a `%json`).
    /// A part that is JSON throughout joined with one that is not (JSON after free text)
    /// becomes such a region where its objects are open to other keys (else its grammar
    /// alone keeps keys distinct); a part that keeps array items distinct cannot be
    /// joined so.
    pub fn join(parts: &[Grammar], join: Join, limits: &Limits) -> Result<Grammar> {
        let budget = Scope::with_budget("max_compile_ms", limits.max_compile_ms);
        interrupt::run(&budget, || Self::join_within(parts, join, limits))
    }

    fn join_within(parts: &[Grammar], join: Join, limits: &Limits) -> Result<Grammar> {
        let (mut parts, mut owned, void) = Self::lowered_parts(parts, join, limits)?;
        let word = match join {
            Join::Union => "union",
            Join::Concat => "concatenation",
        };
        let all_keyed = !parts.iter().any(Grammar::json_regions) && parts.iter().all(Grammar::distinct_keys);
        // The parts whose check would read text: those JSON throughout, beside text or regions.
        let unchecked = |p: &Grammar| !all_keyed && p.distinct_keys() && !p.json_regions();
        let distinct_lists =
            parts.iter().position(|p| matches!(p, Grammar::Cfg(c) if c.cfg.has_distinct_lists() && unchecked(p)));
        if let Some(i) = distinct_lists {
            return Err(Error::InvalidArgument(format!(
                "part {i} of this {word} keeps the strings of a uniqueItems array distinct, which reads the whole output \
                 as JSON, and another part is not JSON: such a join is not supported"
            )));
        }
        // Such a part whose objects may repeat a key (open to other keys) keeps its check
        // as a JSON region, which the check reads alone (as a `%json` in a grammar).
        for (part, cfg) in parts.iter_mut().zip(owned.iter_mut()) {
            if matches!(part, Grammar::Cfg(c) if c.open_keys) && unchecked(part) {
                *cfg = std::borrow::Cow::Owned(lower::json_region(cfg, limits)?);
                *part = part.clone().with_json_regions();
            }
        }
        let cfgs: Vec<&Cfg> = owned.iter().map(|c| &**c).collect();
        let mut cfg = lower::compose(&cfgs, join, limits)?;
        cfg.warnings.extend(void);
        let regions = parts.iter().any(Grammar::json_regions);
        let distinct_keys = all_keyed || regions;
        let checked: Vec<&Grammar> = parts.iter().filter(|p| all_keyed || p.json_regions()).collect();
        let key_endings_infinite = distinct_keys && checked.iter().all(|p| p.key_endings_infinite());
        let open_keys = checked.iter().any(|p| matches!(p, Grammar::Cfg(c) if c.open_keys));
        let description = format!("{word} of {} grammars", parts.len());
        let json_regions = regions;
        Ok(Grammar::Cfg(Arc::new(CfgGrammar {
            cfg: Arc::new(cfg),
            description,
            distinct_keys,
            key_endings_infinite,
            open_keys,
            json_regions,
        })))
    }

    /// The parts of a join, lowered, without those that match no string (a regex such as
    /// `[^\s\S]`; every other kind refuses an empty language when it is built). A union
    /// leaves such a part out, with a warning (as a grammar drops an alternative that
    /// matches nothing); a concatenation with one, or a union of nothing else, matches no
    /// string at all: [`Error::EmptyLanguage`].
    #[allow(clippy::type_complexity)] // the kept parts, their lowered forms, the warnings
    fn lowered_parts<'a>(
        parts: &'a [Grammar],
        join: Join,
        limits: &Limits,
    ) -> Result<(Vec<Grammar>, Vec<std::borrow::Cow<'a, Cfg>>, Vec<String>)> {
        let word = match join {
            Join::Union => "union",
            Join::Concat => "concatenation",
        };
        let (mut kept, mut owned, mut void) = (Vec::new(), Vec::new(), Vec::new());
        for (i, p) in parts.iter().enumerate() {
            match p.lowered(i, limits) {
                Ok(c) => {
                    kept.push(p.clone());
                    owned.push(c);
                }
                Err(Error::EmptyLanguage { .. }) => {
                    void.push(format!("part {i} of the {word} ({}) matches no string", p.describe()))
                }
                Err(e) => return Err(e),
            }
        }
        if owned.is_empty() || (join == Join::Concat && !void.is_empty()) {
            return Err(Error::EmptyLanguage { what: void.join("; ") });
        }
        let warnings = void.into_iter().map(|v| format!("{v}: left out")).collect();
        Ok((kept, owned, warnings))
    }

    /// The grammar as a normalized grammar (a regex: one terminal); `i` names a regex part.
    fn lowered(&self, i: usize, limits: &Limits) -> Result<std::borrow::Cow<'_, Cfg>> {
        match self {
            Grammar::Cfg(c) => Ok(std::borrow::Cow::Borrowed(&c.cfg)),
            Grammar::Regex(r) => {
                let name = format!("part{i}: regex");
                Ok(std::borrow::Cow::Owned(lower::regular_cfg(regex::build_dfa(r, limits)?, &name, limits)?))
            }
        }
    }

    /// `part` repeated `min` to `max` times (`max` None: any number), as one grammar; see
    /// [`lower::repeat`]. The repeated-key check is kept (repeated JSON values are JSON
    /// values one after another).
    pub fn repeat(part: &Grammar, min: u32, max: Option<u32>, limits: &Limits) -> Result<Grammar> {
        let budget = Scope::with_budget("max_compile_ms", limits.max_compile_ms);
        interrupt::run(&budget, || {
            let cfg = lower::repeat(&*part.lowered(0, limits)?, min, max, limits)?;
            let description = format!("repetition of {}", part.describe());
            Ok(match part {
                Grammar::Cfg(c) => {
                    let (distinct_keys, key_endings_infinite, open_keys) = (c.distinct_keys, c.key_endings_infinite, c.open_keys);
                    let json_regions = c.json_regions;
                    Grammar::Cfg(Arc::new(CfgGrammar {
                        cfg: Arc::new(cfg),
                        description,
                        distinct_keys,
                        key_endings_infinite,
                        open_keys,
                        json_regions,
                    }))
                }
                Grammar::Regex(_) => Grammar::plain_cfg(cfg, description),
            })
        })
    }

    /// The same grammar, for JSON output whose objects never repeat a key: its matchers
    /// refuse a token that would repeat one (see [`distinct_keys`]). The text must be
    /// JSON that spells each character one way (as the JSON Schema translator writes it).
    /// A regex is returned unchanged.
    ///
    /// `key_endings_infinite`: the caller knows that every prefix of a key the grammar
    /// allows has infinitely many endings (keys are "anything but these names", or
    /// patterns without an end anchor), so a half-written key can always become a new
    /// one and only closed keys are checked. False is always safe.
    pub fn with_distinct_keys(self, key_endings_infinite: bool) -> Grammar {
        self.keys_condition(true, key_endings_infinite)
    }

    /// The same grammar without the distinct-keys condition (what the grammar alone
    /// allows; for tests that compare the two).
    pub fn without_distinct_keys(self) -> Grammar {
        self.keys_condition(false, false)
    }

    /// The same grammar, known to name every key its objects may have (no class of other
    /// keys): the grammar alone then writes each key at most once. The check stays on; a
    /// join with text may drop it without a warning (see [`Grammar::join`]).
    pub fn with_named_keys_only(self) -> Grammar {
        self.with_cfg_changed(|c| c.open_keys = false)
    }

    /// The same grammar with the distinct-keys condition set as given (a regex unchanged).
    fn keys_condition(self, distinct_keys: bool, key_endings_infinite: bool) -> Grammar {
        self.with_cfg_changed(|c| {
            (c.distinct_keys, c.key_endings_infinite) = (distinct_keys, key_endings_infinite);
            (c.open_keys, c.json_regions) = (distinct_keys, false);
        })
    }

    /// The same grammar with its context-free form changed by `change` (a regex unchanged).
    fn with_cfg_changed(self, change: impl FnOnce(&mut CfgGrammar)) -> Grammar {
        match self {
            Grammar::Cfg(c) => {
                let mut c = Arc::try_unwrap(c).unwrap_or_else(|shared| (*shared).clone());
                change(&mut c);
                Grammar::Cfg(Arc::new(c))
            }
            regex => regex,
        }
    }

    /// The same grammar, with distinct keys (see [`Grammar::with_distinct_keys`]), for
    /// output that is other text with JSON values inside: the values the grammar marks as
    /// [`Distinct::Json`](crate::frontend::ast::Distinct::Json) entries (the JSON Schema
    /// translator's with `json_region`). The check reads only them as JSON. A grammar
    /// without the distinct-keys condition, and a regex, are returned unchanged.
    pub fn with_json_regions(self) -> Grammar {
        if !self.distinct_keys() {
            return self;
        }
        self.with_cfg_changed(|c| c.json_regions = true)
    }

    /// With distinct keys: does the check read only marked JSON values (see
    /// [`Grammar::with_json_regions`])?
    pub fn json_regions(&self) -> bool {
        matches!(self, Grammar::Cfg(c) if c.distinct_keys && c.json_regions)
    }

    /// With distinct keys: are half-written keys known to have infinitely many endings?
    pub fn key_endings_infinite(&self) -> bool {
        matches!(self, Grammar::Cfg(c) if c.key_endings_infinite)
    }

    /// Must the output's JSON objects keep their keys distinct?
    pub fn distinct_keys(&self) -> bool {
        matches!(self, Grammar::Cfg(c) if c.distinct_keys)
    }

    /// A random sentence of the grammar (about `budget` bytes), for tests and examples.
    /// None for a regular grammar, and for a grammar with distinct keys or items when 16
    /// tries all repeated a key or an item (the check of distinct keys and items reads each
    /// try where the sampler wrote its checked entries: `uniqueItems` arrays, JSON values
    /// inside other text). A string that must be a regular expression is drawn again, up
    /// to 16 times, until it is one. None too when a draw runs past `max_bytes`: it stops
    /// there (the shortest string of a counted region can be millions of bytes long).
    pub fn sample(&self, seed: u64, budget: usize, max_bytes: usize) -> Option<Vec<u8>> {
        let Grammar::Cfg(c) = self else { return None };
        // (The matcher keeps keys and items distinct only with `distinct_keys`.)
        if !c.distinct_keys {
            return sample::sample(&c.cfg, seed, budget, max_bytes);
        }
        let lists = c.cfg.perms.iter().any(|p| p.distinct.iter().any(|d| d.keeps_distinct()));
        // Redrawn while the check of distinct keys and items refuses the sample, reading it
        // where the sampler wrote its checked entries.
        (0..16u64)
            .map_while(|i| {
                sample::sample_with_entries(&c.cfg, seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)), budget, max_bytes)
            })
            .find(|(s, entries)| {
                let mut keys = distinct_keys::KeyTracker::new(lists).in_json_regions(c.json_regions);
                keys.push_token(s, &mut sample::SampledEntries(entries)).unwrap_or(false)
            })
            .map(|(s, _)| s)
    }

    /// The tokens the grammar names by id or by text (`<[151667]>`, `<think>`): compiling
    /// it reads the vocabulary with their readings (see [`crate::vocab::readings`]).
    pub fn token_refs(&self) -> Option<&crate::vocab::TokenRefs> {
        match self {
            Grammar::Cfg(c) if !c.cfg.tokens.is_empty() => Some(&c.cfg.tokens),
            _ => None,
        }
    }

    /// Non-fatal findings (e.g. unused rules).
    pub fn warnings(&self) -> &[String] {
        match self {
            Grammar::Regex(_) => &[],
            Grammar::Cfg(c) => &c.cfg.warnings,
        }
    }

    /// A short human description, for errors and reprs.
    pub fn describe(&self) -> String {
        match self {
            Grammar::Regex(r) => format!("regex /{}/", r.pattern()),
            Grammar::Cfg(c) => {
                format!("{} ({} rules, {} terminals)", c.description, c.cfg.productions.len(), c.cfg.terminals.len())
            }
        }
    }
}
