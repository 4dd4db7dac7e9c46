//! The service: one implementation of every operation of Pickup, called by the three doors
//! alike (the REST routes, the live route, the widget's server functions). Each operation
//! takes an [`Authorized`](crate::auth::Authorized) caller (the token verified once, by the
//! door) and typed ids, and only then touches the index.
//!
//! - `pickup`: [`Pickup`], what it holds, and how shutdown drains what it started;
//! - `writes`: register, update, remove, dismiss: each run to its end, then announced to the
//!   live watchers (and, through them, the bus);
//! - `reads`: a page, a record, a live subscription, an id checked against the clock;
//! - `ready`: how the server stands, for `/readyz` ([`Readiness`]);
//! - `tests`: writes that outlive their caller, and shutdown's drain of them.

mod pickup;
mod reads;
mod ready;
mod writes;

pub(crate) use pickup::Pickup;
pub(crate) use ready::Readiness;

#[cfg(test)]
mod tests;
