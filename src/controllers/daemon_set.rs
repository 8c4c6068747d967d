//! The DaemonSet controller of kube-controller-manager (`--semantics kubernetes` only): which
//! nodes a DaemonSet runs a pod on, and those pods placed on their nodes before any workload.
//!
//! Upstream (`pkg/controller/daemon/daemon_controller.go`), `syncNodes` creates a pod for
//! every node that `NodeShouldRunDaemonPod` says should run one and has none. The pod is the
//! DaemonSet's template with the tolerations `AddOrUpdateDaemonPodTolerations` adds
//! ([`crate::cluster::kube::daemon_pod`]) and a required node affinity to its node's
//! `metadata.name` (`ReplaceDaemonSetPodNodeNameNodeAffinity`): kube-scheduler places it, on
//! that node or nowhere, and only if the node has room for its requests.
//!
//! The model places every DaemonSet's pods once, when it starts, in DaemonSet order and node
//! order, before any Deployment's pod exists: DaemonSets are installed with the cluster
//! (logging, monitoring and network agents). A pod whose node has no room left stays Pending
//! and takes nothing ([`Placement::pending`]). Nodes never leave the model (a failed or
//! drained node keeps its daemon pod: it tolerates the `unreachable` and `not-ready` NoExecute
//! taints without `tolerationSeconds`, `kubectl drain --ignore-daemonsets` skips it and the
//! descheduler's DefaultEvictor refuses it), so the pods stay where they were placed. What is
//! left out: a node added later (and the race of its daemon pod against pending workload
//! pods), pods created together with the workloads, priorities and preemption.

use crate::cluster::kube::daemon_pod::{template, tolerations};
use crate::cluster::kube::of_model::DEFAULT_MAX_PODS;
use crate::cluster::taints::first_untolerated;
use crate::cluster::{ClusterSpec, ClusterState, DaemonPod, Taint, TaintEffect};

/// Whether DaemonSet `daemon_set` should run a pod on node `n` (the `shouldRun` of
/// `NodeShouldRunDaemonPod` and its `predicates`): the template's `nodeName`, if set, names
/// the node; some required node affinity term (with `nodeSelector`, as the input writes it)
/// matches the node's labels; and the daemon pod's tolerations ([`tolerations`])
/// tolerate every NoSchedule and NoExecute taint the node was given.
pub fn should_run(spec: &ClusterSpec, daemon_set: usize, n: usize) -> bool {
    let template = template(spec, daemon_set);
    let node = spec.node(n);
    let fits_node_name = template.node_name == 0 || template.node_name == node.name;
    let required: Vec<_> = template.affinity.iter().filter(|t| t.required).collect();
    let fits_node_affinity = required.is_empty() || required.iter().any(|t| t.matches(n));
    let taints: &[Taint] = (node.taint_type as usize)
        .checked_sub(1)
        .and_then(|t| spec.taint_types.get(t))
        .map_or(&[], Vec::as_slice);
    let fits_taints = first_untolerated(
        taints,
        &tolerations(template),
        &[TaintEffect::NoSchedule, TaintEffect::NoExecute],
    )
    .is_none();
    fits_node_name && fits_node_affinity && fits_taints
}

/// Where the DaemonSets' pods went when the model started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The pods bound to their nodes.
    pub placed: Vec<DaemonPod>,
    /// The pods whose node had no room left for their requests: Pending for ever.
    pub pending: Vec<DaemonPod>,
}

/// Places every DaemonSet's pods in `state`, DaemonSet by DaemonSet, node by node: a pod goes
/// to its node when the node should run it ([`should_run`]) and has its requests and a pod
/// slot left (kube-scheduler's NodeResourcesFit on a node holding only what is already placed
/// there), taking them from the node's record as a bound pod does.
pub fn place(spec: &ClusterSpec, state: &mut ClusterState) -> Placement {
    let mut placement = Placement::default();
    for daemon_set in 0..spec.daemon_sets.len() {
        let template = template(spec, daemon_set);
        let (cpu, memory) = (template.cpu_requested, template.mem_requested);
        for n in 1..=spec.nodes.len() {
            if !should_run(spec, daemon_set, n) {
                continue;
            }
            let pod = DaemonPod {
                daemon_set,
                node: n,
            };
            let node = state.node_mut(n);
            let fits = cpu <= i32::from(node.cpu_left)
                && memory <= i32::from(node.mem_left)
                && u64::from(node.num_pods) < DEFAULT_MAX_PODS;
            if fits {
                node.cpu_left -= cpu as i16;
                node.mem_left -= memory as i16;
                node.num_pods += 1;
                placement.placed.push(pod);
            } else {
                placement.pending.push(pod);
            }
        }
    }
    placement
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::{Builder, Node, Template};
    use crate::cluster::{DaemonSetSpec, NodeAffinityTerm, Toleration};

    /// Three nodes of 4 cpu: node 2 tainted `dedicated=gpu:NoSchedule`, node 3 cordoned
    /// (`node.kubernetes.io/unschedulable:NoSchedule`); template 1 requests `cpu`, one
    /// DaemonSet of it.
    fn cluster(cpu: i32) -> (ClusterSpec, ClusterState) {
        let fixture = Builder::default()
            .node(Node::new(1, 4, 4).label("disk", "ssd"))
            .node(Node::new(2, 4, 4).taint("dedicated=gpu:NoSchedule"))
            .node(Node::new(3, 4, 4).taint("node.kubernetes.io/unschedulable:NoSchedule"))
            .template(Template::new(cpu, 1, "name", "agent"))
            .build();
        let mut spec = fixture.spec;
        spec.daemon_sets.push(DaemonSetSpec {
            name: "agent".into(),
            template: 1,
        });
        (spec, fixture.state)
    }

    #[test]
    fn an_untolerated_no_schedule_taint_keeps_the_daemon_pod_off_a_cordoned_one_does_not() {
        // `predicates`: the gpu taint is NoSchedule and untolerated; `unschedulable` is one of
        // the tolerations the controller adds.
        let (spec, _) = cluster(1);
        let nodes: Vec<usize> = (1..=3).filter(|&n| should_run(&spec, 0, n)).collect();
        assert_eq!(nodes, [1, 3]);
    }

    #[test]
    fn the_templates_toleration_lets_it_onto_a_tainted_node() {
        let (mut spec, _) = cluster(1);
        spec.pod_templates[0]
            .tolerations
            .push(Toleration::parse("dedicated=gpu:NoSchedule").unwrap());
        assert!(should_run(&spec, 0, 2));
    }

    #[test]
    fn a_required_affinity_term_selects_the_nodes() {
        // `fitsNodeAffinity`: `nodeSelector: {disk: ssd}` matches node 1 only.
        let (mut spec, _) = cluster(1);
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: true,
            weight: 0,
            matched: vec![false, true, false, false],
            labels: Vec::new(),
        });
        let nodes: Vec<usize> = (1..=3).filter(|&n| should_run(&spec, 0, n)).collect();
        assert_eq!(nodes, [1]);
    }

    #[test]
    fn a_node_name_in_the_template_names_the_one_node() {
        let (mut spec, _) = cluster(1);
        spec.pod_templates[0].node_name = 3;
        let nodes: Vec<usize> = (1..=3).filter(|&n| should_run(&spec, 0, n)).collect();
        assert_eq!(nodes, [3]);
    }

    #[test]
    fn placed_pods_take_their_requests_and_a_pod_that_does_not_fit_stays_pending() {
        let (spec, mut state) = cluster(3);
        let mut second = spec.clone();
        second.daemon_sets.push(DaemonSetSpec {
            name: "second".into(),
            template: 1,
        });
        let placement = place(&second, &mut state);
        let at = |pods: &[DaemonPod]| -> Vec<(usize, usize)> {
            pods.iter().map(|p| (p.daemon_set, p.node)).collect()
        };
        assert_eq!(at(&placement.placed), [(0, 1), (0, 3)]);
        assert_eq!(at(&placement.pending), [(1, 1), (1, 3)]);
        assert_eq!({ state.node(1).cpu_left }, 1);
        assert_eq!({ state.node(1).num_pods }, 1);
        assert_eq!({ state.node(2).cpu_left }, 4);
    }
}
