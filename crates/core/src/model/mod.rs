//! Row types, one module per track. Every type here is a table row (see [`crate::Rows`]).
//!
//! Conventions: dates are ISO 8601 strings (`YYYY-MM-DD`, or RFC 3339 for instants); optional
//! fields are `Option`; nested values (metadata maps, vote records) are `Json` columns;
//! `provenance` says who made a row (`import`, `offline`, `openai:<model>`, `human`).

mod claims;
mod eval;
mod graph;
mod reports;
mod run;

pub use claims::*;
pub use eval::*;
pub use graph::*;
pub use reports::*;
pub use run::*;
