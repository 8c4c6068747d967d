//! NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods that tolerate the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint, whether or not the node carries it
//! (`NodeUnschedulable.Filter` in
//! `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`).

use super::plugin::{Code, Plugin, Rejection};
use crate::cluster::kube::{Node, Pod};
use crate::cluster::taints::{tolerated, Taint, TaintEffect};

/// The reason (`ErrReasonUnschedulable`).
pub const REASON: &str = "node(s) were unschedulable";

/// The filter.
pub fn filter(pod: &Pod, node: &Node) -> Option<Rejection> {
    if !node.unschedulable {
        return None;
    }
    let taint = Taint {
        key: "node.kubernetes.io/unschedulable".to_string(),
        value: String::new(),
        effect: TaintEffect::NoSchedule,
    };
    (!tolerated(&pod.tolerations, &taint)).then(|| {
        Rejection::new(
            Plugin::NodeUnschedulable,
            Code::UnschedulableAndUnresolvable,
            REASON,
        )
    })
}
