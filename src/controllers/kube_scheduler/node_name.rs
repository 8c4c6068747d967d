//! NodeName: a pod that names a node (`spec.nodeName`) fits only there (`NodeName.Filter` in
//! `pkg/scheduler/framework/plugins/nodename/node_name.go`). A pending pod has no node name,
//! so in a decision for one this filter passes every node; it is kept for completeness.

use super::plugin::{Code, Plugin, Rejection};
use crate::cluster::kube::{Node, Pod};

/// The reason (`ErrReason`).
pub const REASON: &str = "node(s) didn't match the requested node name";

/// The filter.
pub fn filter(pod: &Pod, node: &Node) -> Option<Rejection> {
    match &pod.node_name {
        Some(name) if *name != node.name => Some(Rejection::new(
            Plugin::NodeName,
            Code::UnschedulableAndUnresolvable,
            REASON,
        )),
        _ => None,
    }
}
