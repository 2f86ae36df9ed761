//! Robustness material for the report track's questions (RARE 5.1, 5.2, Appendix B, C.1, C.2).
//!
//! Three stages: [`query`] (`query-perturbations`), [`document`] (`document-perturbations`) and
//! [`retrieval`] (`retrieval`).

pub mod document;
pub mod query;
pub mod retrieval;
