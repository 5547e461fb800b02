//! A schema's text to a [`Grammar`]: the documents read, translated, lowered, with the
//! JSON-object condition (distinct keys) attached, all on a thread whose stack holds the
//! deepest recursion the limits allow, within `Limits::max_compile_ms`, interruptible.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::document;
use super::translate::{self, SchemaOptions};
use crate::error::{Error, Result};
use crate::grammar::{Grammar, LowerOptions};
use crate::limits::Limits;
use crate::util::interrupt::{self, Scope, StopFlag};

/// Stack bytes reserved per level of schema nesting the limits allow (a level of value
/// nesting takes a handful of frames of the translation and of the reader; the memory is
/// reserved, and used only by a schema that nests that deep).
pub const STACK_PER_LEVEL: usize = 16 << 10;

/// A translated schema's grammar and the translation's warnings (keywords dropped with
/// `strict` off).
#[derive(Debug)]
pub struct SchemaGrammar {
    /// The grammar (JSON whose objects keep their keys distinct).
    pub grammar: Grammar,
    /// What was dropped, and other findings of the translation.
    pub warnings: Vec<String>,
}

/// The grammar of the schema in JSON `text`; `documents` are other schema documents (URI,
/// JSON text) that its `$ref`s may point into.
pub fn schema_grammar(
    text: &str,
    documents: &[(String, String)],
    options: &SchemaOptions,
    limits: &Limits,
) -> Result<SchemaGrammar> {
    let built = on_deep_stack(limits, || {
        let (schema, docs) = read_schema(text, documents, limits)?;
        let t = translate::translate(&schema, &docs, options, limits)?;
        // No property is determinized with its value: keys join their (shared) value
        // terminals by concatenation.
        let lower = LowerOptions { max_terminal_source: 0 };
        let grammar = Grammar::cfg_ast(&t.ast, "JSON Schema", Some("start"), limits, &lower, None)?;
        // Where every class of keys leaves half-written keys infinitely many endings,
        // closed keys suffice (see `distinct_keys`).
        // The lowering's findings name the translator's own rules (one left unused, say):
        // nothing a schema's author wrote, so they are not passed on.
        let grammar = match grammar {
            Grammar::Cfg(c) if !c.cfg.warnings.is_empty() => {
                let mut c = Arc::try_unwrap(c).unwrap_or_else(|shared| (*shared).clone());
                Arc::make_mut(&mut c.cfg).warnings.clear();
                Grammar::Cfg(Arc::new(c))
            }
            g => g,
        };
        let grammar = grammar.with_distinct_keys(!t.finite_key_endings);
        let grammar = match (t.open_keys, options.json_region) {
            (false, _) => grammar.with_named_keys_only(),
            // The value is marked as a JSON region (see `SchemaOptions::json_region`).
            (true, true) => grammar.with_json_regions(),
            (true, false) => grammar,
        };
        Ok(SchemaGrammar { grammar, warnings: t.warnings })
    });
    built.map_err(|e| match e {
        Error::LimitExceeded { limit: "max_compile_ms", value, .. } => Error::LimitExceeded {
            limit: "max_compile_ms",
            value,
            context: "translating and compiling the JSON Schema (it ran out of time)".into(),
        },
        other => other,
    })
}

/// The documents the schema's `$ref`s point into that are not among `documents`: what a
/// resolver is asked for (then ask again: new documents may point further). The drafts'
/// metaschemas among them need no answer: corral has its own copies.
pub fn missing_documents(
    text: &str,
    documents: &[(String, String)],
    options: &SchemaOptions,
    limits: &Limits,
) -> Result<Vec<String>> {
    on_deep_stack(limits, || {
        let (schema, docs) = read_schema(text, documents, limits)?;
        translate::missing_documents(&schema, &docs, options, limits)
    })
}

/// The JSON `value` with its object keys in the order the schema's grammar writes them
/// (for tests and tools that force a known valid value through the grammar).
pub fn order_value(
    text: &str,
    documents: &[(String, String)],
    options: &SchemaOptions,
    limits: &Limits,
    value: &str,
) -> Result<String> {
    on_deep_stack(limits, || {
        let (schema, docs) = read_schema(text, documents, limits)?;
        let value = document::parse(value, "the value", stack_levels(limits), limits.max_schema_document_depth)?;
        let ordered = translate::order(&schema, &docs, options, limits, &value)?;
        serde_json::to_string(&ordered).map_err(|e| Error::Internal(format!("writing a value: {e}")))
    })
}

pub(crate) type Documents = Vec<(String, Value)>;

/// The schema in `text` and the other `documents`, read with their nesting bounded.
pub(crate) fn read_schema(text: &str, documents: &[(String, String)], limits: &Limits) -> Result<(Value, Documents)> {
    // Deeper than the limit is refused with a pointer once read (see `Resources`); far
    // deeper, before (the reader needs stack for every level).
    let (depth, limit) = (stack_levels(limits), limits.max_schema_document_depth);
    let schema = document::parse(text, "the schema", depth, limit)?;
    let docs = documents
        .iter()
        .map(|(uri, t)| Ok((uri.clone(), document::parse(t, &format!("the document for {uri}"), depth, limit)?)))
        .collect::<Result<Documents>>()?;
    Ok((schema, docs))
}

/// The levels of recursion the translation's stack is sized for.
fn stack_levels(limits: &Limits) -> usize {
    limits.max_schema_value_depth.saturating_add(limits.max_schema_depth).saturating_add(limits.max_schema_document_depth)
}

thread_local! {
    /// The stack size of this thread if [`on_deep_stack`] started it (0 otherwise).
    static DEEP_STACK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `work` on a thread with a stack for the nesting `limits` allow, within
/// `max_compile_ms`; this thread waits, and stops it when its own scope says stop
/// (Ctrl-C in the Python binding). On such a thread already (a structural tag's build
/// translating its schemas), `work` runs right there, in a scope of its own: a thread per
/// schema would cost more than many schemas' translation.
pub(crate) fn on_deep_stack<T: Send>(limits: &Limits, work: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let stack = stack_levels(limits).saturating_mul(STACK_PER_LEVEL).clamp(8 << 20, 1 << 30);
    if DEEP_STACK.with(|d| d.get()) >= stack {
        return interrupt::run(&Scope::with_budget("max_compile_ms", limits.max_compile_ms), work);
    }
    let stop = StopFlag::new();
    let budget = Scope { stop: stop.clone(), ..Scope::with_budget("max_compile_ms", limits.max_compile_ms) };
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned =
            std::thread::Builder::new().name("corral-json-schema".into()).stack_size(stack).spawn_scoped(s, move || {
                DEEP_STACK.with(|d| d.set(stack));
                // A panic is reported as a bug, not re-raised by the scope's join.
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| interrupt::run(&budget, work)));
                let _ = tx.send(result.unwrap_or_else(|p| Err(Error::Internal(panic_message(&p)))));
            });
        if let Err(e) = spawned {
            return Err(Error::Internal(format!("cannot start the translation's thread: {e}")));
        }
        loop {
            match rx.recv_timeout(Duration::from_millis(5)) {
                Ok(result) => return result,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = interrupt::check_now() {
                        stop.stop(); // the thread stops at its next check; the scope joins it
                        return Err(e);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Internal("the translation's thread panicked".into()))
                }
            }
        }
    })
}

/// The message of a caught panic.
fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
    format!("the translation panicked: {}", what.unwrap_or_else(|| "unknown panic".into()))
}
