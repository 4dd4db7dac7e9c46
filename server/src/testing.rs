//! What the crate's own tests share with the integration tests: the fault layer between an index
//! and its store (`tests/common/fault.rs`, the very same file), put in with `Index::through`.

#[allow(unreachable_pub, dead_code)]
#[path = "../tests/common/fault.rs"]
pub(crate) mod fault;
