//! Kivi's incremental scaling: which topologies to check, in which order, and
//! the single-topology cluster document for each.
//!
//! - [`template`]: the typed view of a template's `userDefined` section.
//! - [`topology`]: one topology (node and replica counts per type) and Kivi's words for it.
//! - [`enumeration`]: Kivi's ordered list of topologies up to the confident size.
//! - [`named_node`]: the node an event names, which smaller topologies do not hold.
//! - [`pinned_nodes`]: the nodes pod templates pin their pods to, per topology.
//! - [`search`]: the state machine that hands out topologies and takes verdicts.
//! - [`instantiate`](mod@instantiate): the cluster document for one topology.
//! - [`typed_instance`]: the same document as typed records, which the sweep checks.
//! - [`error`]: the error for a malformed template.
//! - [`jobs`]: the job scheduler that checks topologies concurrently on a shared pool.
//! - [`journal`]: the resumable record of decided topologies (`--journal`).
//! - [`sweep`]: a whole sweep from start to answer: plan, journal, jobs, result.
//! - [`shard`]: which topologies each shard of a sweep decides (`--shard I/N`).
//! - [`merge`]: the answer of a sharded sweep, from its shards' journals (`kivi merge`).
//! - [`indexed_job`]: the Kubernetes Indexed Job that runs a sharded sweep (`kivi job`).

mod deadline;
pub mod enumeration;
pub mod error;
pub mod indexed_job;
pub mod instantiate;
pub mod jobs;
pub mod journal;
pub mod merge;
pub mod named_node;
pub mod node_groups;
pub mod pinned_nodes;
pub mod search;
pub mod shard;
pub mod sweep;
pub mod template;
pub mod topology;
pub mod typed_instance;

pub use enumeration::{enumerate, why_no_topology, EnumerationOptions, FastFind, UnknownFastFind};
pub use error::TemplateError;
pub use instantiate::{instantiate, DeploymentSizing};
pub use search::{JobVerdict, Outcome, ReportError, Search};
pub use shard::Shard;
pub use template::{DeploymentType, NodeType, ScaleType, Template};
pub use topology::{Topology, TopologySyntaxError};
