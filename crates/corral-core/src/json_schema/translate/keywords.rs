//! Reading a subschema's keywords into a shape (disjunctions are set aside for
//! [`super::expand`]).

/// Keywords that only annotate.
const ANNOTATIONS: [&str; 24] = [
    "title",
    "description",
    "examples",
    "default",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$defs",
    "definitions",
    "$vocabulary",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "discriminator",
    "example",
    "externalDocs",
    "xml",
    "$recursiveAnchor",
];

/// Does keyword `k` only annotate?
pub(crate) fn is_annotation(k: &str) -> bool {
    ANNOTATIONS.contains(&k)
}
