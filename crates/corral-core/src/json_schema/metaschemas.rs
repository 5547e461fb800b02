//! The JSON Schema metaschemas, shipped with corral: a `$ref` to a draft's metaschema (a
//! schema that holds schemas, as configuration formats with a `"schema"` field do) needs no
//! resolver and no network. The documents are json-schema.org's (see
//! `metaschemas/README.md`). They stand in for what the caller does not supply: a
//! resolver is still asked for these URIs, and a document it gives is the one read.

use std::sync::OnceLock;

use serde_json::Value;

/// (URI without fragment, text) of every shipped document. Drafts 4 to 7 are served at
/// `http` (their `$id`s) and `https`; drafts 2019-09 and 2020-12 at `https` (theirs) and
/// `http`.
const TEXTS: [(&str, &str); 19] = [
    ("json-schema.org/draft-04/schema", include_str!("metaschemas/draft-04.json")),
    ("json-schema.org/draft-06/schema", include_str!("metaschemas/draft-06.json")),
    ("json-schema.org/draft-07/schema", include_str!("metaschemas/draft-07.json")),
    ("json-schema.org/draft/2019-09/schema", include_str!("metaschemas/2019-09.json")),
    ("json-schema.org/draft/2019-09/meta/applicator", include_str!("metaschemas/2019-09-meta-applicator.json")),
    ("json-schema.org/draft/2019-09/meta/content", include_str!("metaschemas/2019-09-meta-content.json")),
    ("json-schema.org/draft/2019-09/meta/core", include_str!("metaschemas/2019-09-meta-core.json")),
    ("json-schema.org/draft/2019-09/meta/format", include_str!("metaschemas/2019-09-meta-format.json")),
    ("json-schema.org/draft/2019-09/meta/meta-data", include_str!("metaschemas/2019-09-meta-meta-data.json")),
    ("json-schema.org/draft/2019-09/meta/validation", include_str!("metaschemas/2019-09-meta-validation.json")),
    ("json-schema.org/draft/2020-12/schema", include_str!("metaschemas/2020-12.json")),
    ("json-schema.org/draft/2020-12/meta/applicator", include_str!("metaschemas/2020-12-meta-applicator.json")),
    ("json-schema.org/draft/2020-12/meta/content", include_str!("metaschemas/2020-12-meta-content.json")),
    ("json-schema.org/draft/2020-12/meta/core", include_str!("metaschemas/2020-12-meta-core.json")),
    ("json-schema.org/draft/2020-12/meta/format-annotation", include_str!("metaschemas/2020-12-meta-format-annotation.json")),
    ("json-schema.org/draft/2020-12/meta/format-assertion", include_str!("metaschemas/2020-12-meta-format-assertion.json")),
    ("json-schema.org/draft/2020-12/meta/meta-data", include_str!("metaschemas/2020-12-meta-meta-data.json")),
    ("json-schema.org/draft/2020-12/meta/unevaluated", include_str!("metaschemas/2020-12-meta-unevaluated.json")),
    ("json-schema.org/draft/2020-12/meta/validation", include_str!("metaschemas/2020-12-meta-validation.json")),
];

/// The shipped document served at `uri` (no fragment; `http` or `https`), parsed once
/// per process.
pub fn document(uri: &str) -> Option<&'static Value> {
    static PARSED: OnceLock<Vec<Value>> = OnceLock::new();
    let rest = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://"))?;
    let i = TEXTS.iter().position(|(at, _)| *at == rest)?;
    let parsed = PARSED.get_or_init(|| {
        TEXTS.iter().map(|(_, text)| serde_json::from_str(text).expect("a shipped metaschema is JSON")).collect()
    });
    Some(&parsed[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_document_is_served_at_its_own_id() {
        for (at, _) in TEXTS {
            let doc = document(&format!("https://{at}")).expect("served");
            let id = doc.get("$id").or_else(|| doc.get("id")).and_then(Value::as_str).expect("an id");
            let id = id.trim_end_matches('#');
            assert_eq!(id.split_once("://").map(|(_, r)| r), Some(at), "{id}");
            assert!(document(id).is_some(), "{id}");
        }
        assert!(document("https://json-schema.org/draft-05/schema").is_none());
        assert!(document("ftp://json-schema.org/draft-07/schema").is_none());
    }
}
