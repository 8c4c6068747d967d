//! Readers that turn input documents into a [`ClusterModel`](crate::model::ClusterModel).
//!
//! - [`source`]: the front door: a built-in case or a path, read into uniform JSON.
//! - [`uniform`]: Kivi's uniform JSON (what Kivi writes with `-jf`).
//! - [`directory`]: the front-ends for what platform teams have: Kubernetes manifests with a
//!   cluster description ([`manifests`], [`kubernetes`], [`cluster_config`]) and live-cluster
//!   dumps ([`cluster_dump`]), translated into uniform JSON by [`emit`].

pub mod budgets;
pub mod cluster_autoscaler;
pub mod cluster_config;
pub mod cluster_dump;
pub mod cluster_list;
pub mod daemon_sets;
pub mod descheduler_policy;
pub mod descheduler_v1alpha1;
pub mod description;
pub mod diagnostics;
pub mod directory;
pub mod emit;
pub mod kube_list;
pub mod kubernetes;
pub mod manifests;
pub mod names;
pub mod node_names;
pub mod origins;
pub mod priorities;
pub mod quantity;
pub mod source;
pub mod translation_units;
pub mod uniform;
pub mod units;
pub mod yaml_documents;
pub mod yaml_places;

pub use diagnostics::{Diagnostics, InputError};
pub use directory::{needs_translation, translate, translate_stream, InputOptions, Translation};
pub use names::Names;
pub use origins::Origins;
pub use quantity::Quantity;
pub use source::{open, Opened, Source};
pub use uniform::validate::lists_liveness_intent;
pub use uniform::{load_uniform, load_uniform_file, LoadError};
