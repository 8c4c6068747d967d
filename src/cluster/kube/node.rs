//! A Node as the scheduler reads it.

use super::amount::ResourceList;
use super::labels::Labels;
use crate::cluster::taints::Taint;

/// One image a node reports (`status.images[]`): all its names and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerImage {
    /// The names the node knows it by (`docker.io/library/nginx:1.27`, `nginx:1.27`, …).
    pub names: Vec<String>,
    /// Its size in bytes.
    pub size_bytes: i64,
}

/// A Node: what the filters and scores read from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `spec.taints`, in order (the TaintToleration filter names the first untolerated one).
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// `status.allocatable`: `cpu`, `memory`, `pods`, `ephemeral-storage` and extended
    /// resources.
    pub allocatable: ResourceList,
    /// `status.images`.
    pub images: Vec<ContainerImage>,
    /// No `Ready` condition says `False` or `Unknown` (a node without a Ready condition
    /// counts as ready, as the descheduler's `ReadyNodes` counts it).
    pub ready: bool,
}

impl Node {
    /// A node without labels, taints, resources or images.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            labels: Labels::new(),
            taints: Vec::new(),
            unschedulable: false,
            allocatable: ResourceList::new(),
            images: Vec::new(),
            ready: true,
        }
    }
}
