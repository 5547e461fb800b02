//! `not` pushed down to the keywords: the negation of a subschema as alternatives, each a
//! conjunction of subschemas and synthetic constraints.
