//! kivi: a parallel explicit-state verifier for Kubernetes cluster configurations.
//!
//! The crate is layered; each folder under `src/` is one layer:
//! - [`engine`]: the model-agnostic parallel model checker (knows nothing about Kubernetes).
//! - [`cluster`]: the cluster's types: stable spec, compact mutable state, actions, clock.
//! - [`controllers`]: scheduler, deployment controller, HPA, kubelet, node controller,
//!   descheduler, taint manager.
//! - [`events`]: CPU changes, kernel panics, maintenance, node failures, user commands.
//! - [`intents`]: the monitors behind Kivi's intents.
//! - [`model`]: the composition of the three above into the engine's `Model`.
//! - [`input`]: loaders from Kivi's uniform JSON.
//! - [`scaler`]: topology enumeration, instantiation and the topology job scheduler.
//! - [`report`]: counterexample text, JSON reports, progress.
//! - [`cases`]: the paper's cases C1–C8, embedded.
//! - [`bench`]: benchmark sweeps from `bench-configs/` into `results/`.
//! - [`cli`]: the `kivi` command line.

pub mod bench;
pub mod cases;
pub mod cli;
pub mod cluster;
pub mod controllers;
pub mod engine;
pub mod events;
pub mod input;
pub mod intents;
pub mod model;
pub mod report;
pub mod scaler;
