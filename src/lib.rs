//! kivi: a parallel explicit-state verifier for Kubernetes cluster configurations.
//!
//! The crate is layered; each folder under `src/` is one layer:
//! - [`engine`]: the model-agnostic parallel model checker (knows nothing about Kubernetes).
//! - [`cli`]: the `kivi` command line.

pub mod cli;
pub mod cluster;
pub mod controllers;
pub mod engine;
pub mod events;
pub mod input;
pub mod intents;
pub mod scaler;
