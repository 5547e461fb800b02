//! An intersection of compiled grammars (`g1 & g2`): one [`CompiledGrammar`] whose
//! matchers run one matcher per part and allow a token only where every part does (see
//! `matcher::intersection`). The parts keep their own caches; nothing is compiled again.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::index::compiled::{CompiledGrammar, Engine};
use crate::limits::Limits;

impl CompiledGrammar {
    /// The intersection of `parts`: the outputs that every part accepts. Parts that are
    /// intersections themselves are replaced by their parts. Every part must be compiled
    /// for the same vocabulary (same content, or derived from it by
    /// [`crate::Vocabulary::with_readings`]: a token a part names is then allowed only where
    /// every part allows it); `limits` bound what the intersection's
    /// matchers do on top of their parts (`max_forced_tokens`, `max_completion_bytes`),
    /// while each part keeps the limits it was compiled under.
    pub fn intersection(parts: Vec<Arc<CompiledGrammar>>, limits: &Limits) -> Result<CompiledGrammar> {
        let mut flat: Vec<Arc<CompiledGrammar>> = Vec::with_capacity(parts.len());
        for part in parts {
            match part.parts() {
                Some(inner) => flat.extend(inner.iter().cloned()),
                None => flat.push(part),
            }
        }
        let Some(first) = flat.first() else {
            return Err(Error::InvalidArgument("an intersection needs at least one grammar".into()));
        };
        let vocab = first.vocab().clone();
        for (i, part) in flat.iter().enumerate().skip(1) {
            let other = part.vocab();
            // Parts that name tokens are compiled for vocabularies derived from the given
            // one (same ids): compare what they were derived from.
            if !Arc::ptr_eq(&vocab, other) && vocab.origin_fingerprint() != other.origin_fingerprint() {
                return Err(Error::Vocabulary(format!(
                    "the grammars of an intersection must be compiled for the same vocabulary: grammar {} was \
                     compiled for one of size {} (fingerprint {:016x}), grammar 1 for one of size {} ({:016x})",
                    i + 1,
                    other.size(),
                    other.origin_fingerprint(),
                    vocab.size(),
                    vocab.origin_fingerprint()
                )));
            }
        }
        let grammar = first.grammar().clone();
        Ok(CompiledGrammar::with_engine(grammar, vocab, Engine::Intersection { parts: flat }, limits))
    }

    /// The parts of an intersection (never intersections themselves); None for any other
    /// grammar.
    pub fn parts(&self) -> Option<&[Arc<CompiledGrammar>]> {
        match &self.engine {
            Engine::Intersection { parts } => Some(parts),
            _ => None,
        }
    }
}
