//! What a check says about the DaemonSets' pods the model placed when it started under
//! `--semantics kubernetes` ([`crate::controllers::daemon_set::place`]): where they run, and
//! which found no room.

use super::ClusterModel;
use crate::cluster::kube::daemon_pod::template;

impl ClusterModel {
    /// One line per DaemonSet: the nodes its pods run on (`DaemonSet/agent: a pod on nodes
    /// 1, 3 of 4`); none without `--semantics kubernetes`.
    pub fn daemon_set_placement(&self) -> Vec<String> {
        if self.spec.daemon_pods.is_empty() && self.daemon_pods_pending.is_empty() {
            return Vec::new();
        }
        (0..self.spec.daemon_sets.len())
            .map(|daemon_set| {
                let nodes: Vec<String> = self
                    .spec
                    .daemon_pods
                    .iter()
                    .filter(|pod| pod.daemon_set == daemon_set)
                    .map(|pod| pod.node.to_string())
                    .collect();
                format!(
                    "DaemonSet/{}: a pod on nodes [{}] of {}",
                    self.spec.daemon_sets[daemon_set].name,
                    nodes.join(", "),
                    self.spec.nodes.len()
                )
            })
            .collect()
    }

    /// One warning per DaemonSet pod whose node had no room left for it: it stays Pending
    /// and takes nothing.
    pub fn daemon_set_warnings(&self) -> Vec<String> {
        self.daemon_pods_pending
            .iter()
            .map(|pod| {
                let template = template(&self.spec, pod.daemon_set);
                format!(
                    "DaemonSet/{}: its pod for node {} does not fit there (it requests {} cpu \
                     and {} memory units, more than the node has left beside the DaemonSets \
                     before it); it stays Pending and takes no room",
                    self.spec.daemon_sets[pod.daemon_set].name,
                    pod.node,
                    template.cpu_requested,
                    template.mem_requested
                )
            })
            .collect()
    }
}
