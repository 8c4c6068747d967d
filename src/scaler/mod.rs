//! Kivi's incremental scaling: which topologies to check, in which order, and
//! the single-topology cluster document for each.
//!
//! - [`template`]: the typed view of a template's `userDefined` section.
//! - [`topology`]: one topology (node and replica counts per type) and Kivi's words for it.
//! - [`enumeration`]: Kivi's ordered list of topologies up to the confident size.
//! - [`search`]: the state machine that hands out topologies and takes verdicts.
//! - [`instantiate`](mod@instantiate): the cluster document for one topology.
//! - [`error`]: the error for a malformed template.
//! - [`jobs`]: the job scheduler that checks topologies concurrently on a shared pool.
//! - [`journal`]: the resumable record of decided topologies (`--journal`).
//! - [`sweep`]: a whole sweep from start to answer: plan, journal, jobs, result.

pub mod enumeration;
pub mod error;
pub mod instantiate;
pub mod jobs;
pub mod journal;
pub mod search;
pub mod sweep;
pub mod template;
pub mod topology;

pub use enumeration::{enumerate, EnumerationOptions, FastFind, UnknownFastFind};
pub use error::TemplateError;
pub use instantiate::{instantiate, DeploymentSizing};
pub use search::{JobVerdict, Outcome, ReportError, Search};
pub use template::{DeploymentType, NodeType, ScaleType, Template};
pub use topology::{Topology, TopologySyntaxError};
