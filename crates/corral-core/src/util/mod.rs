//! Small building blocks every layer uses: hash maps for integer keys, byte classes.

pub(crate) mod bytes;
pub(crate) mod hash;
