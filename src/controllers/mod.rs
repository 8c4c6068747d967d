//! Kubernetes controllers as transition functions over a [`ClusterState`](crate::cluster::ClusterState).
//!
//! Each controller's `run` is one atomic step: it drains its work queue for as long as its
//! guard holds, as Kivi's controller loops do.

pub mod cluster_autoscaler;
pub mod daemon_set;
pub mod deployment;
pub mod descheduler;
pub mod hpa;
pub mod hpa_window;
pub mod kube_descheduler;
pub mod kube_hpa;
pub mod kube_hpa_behavior;
pub mod kube_replica_set;
pub mod kube_rollout;
pub mod kube_scale;
pub mod kube_scheduler;
pub mod kubelet;
pub mod node_controller;
pub mod node_lifecycle;
pub mod scheduler;
pub mod taint_eviction;
pub mod taint_manager;
pub mod ties;
