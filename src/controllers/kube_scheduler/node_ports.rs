//! NodePorts (`pkg/scheduler/framework/plugins/nodeports/node_ports.go`): a node is rejected
//! when a host port the pod's containers ask for is already in use there, with the same
//! protocol, on the same IP or on `0.0.0.0` (`HostPortInfo.CheckConflict` in
//! `pkg/scheduler/framework/types.go`). Pods without host ports skip the plugin.

use super::node_info::{NodeInfo, UsedPort};
use super::plugin::{Code, Plugin, Rejection};
use crate::cluster::kube::Pod;

/// The reason (`ErrReason`).
pub const REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// `NodePorts.PreFilter`: the host ports of the pod's containers (init containers do not
/// count), or `None` (skip) when there are none.
pub fn pre_filter(pod: &Pod) -> Option<Vec<UsedPort>> {
    let wanted: Vec<UsedPort> = pod
        .containers
        .iter()
        .flat_map(|c| &c.host_ports)
        .filter(|p| p.port > 0)
        .map(|p| UsedPort::new(&p.host_ip, &p.protocol, p.port))
        .collect();
    (!wanted.is_empty()).then_some(wanted)
}

/// Whether `wanted` clashes with `used` (`HostPortInfo.CheckConflict`).
fn conflicts(wanted: &UsedPort, used: &UsedPort) -> bool {
    wanted.protocol == used.protocol
        && wanted.port == used.port
        && (wanted.ip == "0.0.0.0" || used.ip == "0.0.0.0" || wanted.ip == used.ip)
}

/// `NodePorts.Filter`.
pub fn filter(wanted: &[UsedPort], node: &NodeInfo) -> Option<Rejection> {
    let clash = wanted
        .iter()
        .any(|w| node.used_ports.iter().any(|u| conflicts(w, u)));
    clash.then(|| Rejection::new(Plugin::NodePorts, Code::Unschedulable, REASON))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_on_every_address_clashes_with_any_address_and_protocols_are_apart() {
        let any = UsedPort::new("", "", 8080);
        let local = UsedPort::new("10.0.0.1", "TCP", 8080);
        let other = UsedPort::new("10.0.0.2", "TCP", 8080);
        let udp = UsedPort::new("", "UDP", 8080);
        assert!(conflicts(&any, &local));
        assert!(conflicts(&local, &any));
        assert!(!conflicts(&local, &other));
        assert!(!conflicts(&any, &udp));
        assert_eq!(any.ip, "0.0.0.0");
        assert_eq!(any.protocol, "TCP");
    }
}
