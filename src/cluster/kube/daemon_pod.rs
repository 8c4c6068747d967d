//! A DaemonSet's pod as the DaemonSet controller writes it for a node (`NewPod` in
//! `pkg/controller/daemon/daemon_controller.go`): the template, with the tolerations every
//! daemon pod gets ([`tolerations`]), owned by its DaemonSet, and bound to its node.

use super::of_model::node_name;
use crate::cluster::spec::{ClusterSpec, DaemonPod, PodTemplate};
use crate::cluster::taints::{TaintEffect, Toleration, TolerationOperator};

/// The taints the DaemonSet controller makes every daemon pod tolerate, with their effects
/// (`AddOrUpdateDaemonPodTolerations`, `pkg/controller/daemon/util/daemonset_util.go`):
/// NoExecute `not-ready` and `unreachable` without `tolerationSeconds`, so node problems never
/// evict a daemon pod, and NoSchedule for the node-condition taints and `unschedulable`, so a
/// cordoned node or one under pressure still gets its pod; a `hostNetwork` pod also
/// [`HOST_NETWORK_TOLERATION`].
pub const ADDED_TOLERATIONS: &[(&str, TaintEffect)] = &[
    ("node.kubernetes.io/not-ready", TaintEffect::NoExecute),
    ("node.kubernetes.io/unreachable", TaintEffect::NoExecute),
    ("node.kubernetes.io/disk-pressure", TaintEffect::NoSchedule),
    (
        "node.kubernetes.io/memory-pressure",
        TaintEffect::NoSchedule,
    ),
    ("node.kubernetes.io/pid-pressure", TaintEffect::NoSchedule),
    ("node.kubernetes.io/unschedulable", TaintEffect::NoSchedule),
];

/// The taint the DaemonSet controller makes a daemon pod with `spec.hostNetwork` tolerate as
/// well (`AddOrUpdateDaemonPodTolerations`): a node whose network plugin is not ready yet
/// still gets the pods that do not need it, such as the network plugin's own.
pub const HOST_NETWORK_TOLERATION: (&str, TaintEffect) = (
    "node.kubernetes.io/network-unavailable",
    TaintEffect::NoSchedule,
);

/// A daemon pod's tolerations: the template's, and [`ADDED_TOLERATIONS`] (with
/// [`HOST_NETWORK_TOLERATION`] for a `hostNetwork` template) in place of any of the
/// template's with the same key and effect (`AddOrUpdateTolerationInPodSpec` replaces those).
pub fn tolerations(template: &PodTemplate) -> Vec<Toleration> {
    let host_network = template.host_network.then_some(&HOST_NETWORK_TOLERATION);
    let added: Vec<_> = ADDED_TOLERATIONS.iter().chain(host_network).collect();
    let mut tolerations: Vec<Toleration> = template
        .tolerations
        .iter()
        .filter(|t| {
            !added
                .iter()
                .any(|(key, effect)| t.key == *key && t.effect == Some(*effect))
        })
        .cloned()
        .collect();
    tolerations.extend(added.iter().map(|&&(key, effect)| Toleration {
        key: key.to_string(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: Some(effect),
        seconds: None,
    }));
    tolerations
}

/// The pod template of DaemonSet `daemon_set`.
pub fn template(spec: &ClusterSpec, daemon_set: usize) -> &PodTemplate {
    &spec.pod_templates[spec.daemon_sets[daemon_set].template as usize - 1]
}

/// The name of `pod`: its DaemonSet's and its node's, as no model pod is named
/// ([`super::of_model::pod_id`] reads none back).
pub fn name(spec: &ClusterSpec, pod: &DaemonPod) -> String {
    format!(
        "{}-{}",
        spec.daemon_sets[pod.daemon_set].name,
        node_name(pod.node)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::{Builder, Node, Template};
    use crate::cluster::taints::{first_untolerated, no_execute_stay, NoExecuteStay, Taint};

    #[test]
    fn the_added_tolerations_never_evict_and_keep_the_templates_own() {
        let fixture = Builder::default()
            .node(Node::new(1, 4, 4))
            .template(Template::new(1, 1, "name", "agent"))
            .build();
        let template = PodTemplate {
            tolerations: vec![
                Toleration::parse("dedicated=gpu:NoSchedule").unwrap(),
                Toleration {
                    key: "node.kubernetes.io/unreachable".into(),
                    operator: TolerationOperator::Exists,
                    value: String::new(),
                    effect: Some(TaintEffect::NoExecute),
                    seconds: Some(30),
                },
            ],
            ..fixture.spec.pod_templates[0].clone()
        };
        let tolerations = tolerations(&template);
        assert_eq!(tolerations.len(), 1 + ADDED_TOLERATIONS.len());
        assert_eq!(tolerations[0], template.tolerations[0]);
        let unreachable = Taint::parse("node.kubernetes.io/unreachable:NoExecute").unwrap();
        assert_eq!(
            no_execute_stay(&tolerations, &unreachable),
            NoExecuteStay::Forever,
            "the template's 30 s toleration is replaced"
        );
    }

    #[test]
    fn only_a_host_network_pod_tolerates_an_unavailable_network() {
        let fixture = Builder::default()
            .node(Node::new(1, 4, 4))
            .template(Template::new(1, 1, "name", "agent"))
            .build();
        let pod_network = fixture.spec.pod_templates[0].clone();
        let host_network = PodTemplate {
            host_network: true,
            ..pod_network.clone()
        };
        let unavailable =
            [Taint::parse("node.kubernetes.io/network-unavailable:NoSchedule").unwrap()];
        let untolerated = |template: &PodTemplate| {
            first_untolerated(
                &unavailable,
                &tolerations(template),
                &[TaintEffect::NoSchedule],
            )
            .is_some()
        };
        assert!(untolerated(&pod_network));
        assert!(!untolerated(&host_network));
        assert_eq!(
            tolerations(&host_network).len(),
            ADDED_TOLERATIONS.len() + 1
        );
    }
}
