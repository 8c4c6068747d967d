//! The status of a PodDisruptionBudget the input gives without one (a hand-written List, or a
//! budget created just before the dump), computed from the List's own objects as the
//! disruption controller computes it (`trySync` in `pkg/controller/disruption/disruption.go`).
//! A budget read with a status keeps it: it is what the eviction subresource reads.
//!
//! - Its pods (`getPodsForPdb`): the pods of its namespace its selector selects (an absent
//!   selector none, an empty one every pod), Succeeded and Failed pods left out as the reader
//!   leaves them out.
//! - Healthy (`countHealthyPods`): not terminating and Ready.
//! - Expected (`getExpectedPodCount`): with an integer `minAvailable`, the pods; otherwise the
//!   summed scale of their controllers (`getExpectedScale`), each controller once: a ReplicaSet
//!   controlled by a Deployment counts the Deployment's `spec.replicas` (`getPodDeployment`),
//!   any other ReplicaSet, a StatefulSet or a ReplicationController its own (`getPodReplicaSet`,
//!   `getPodStatefulSet`, `getPodReplicationController`); `spec.replicas` absent is 1, the API
//!   server's default. A pod without a controller, or whose controller is not in the input (or
//!   is of a kind only the scale subresource answers for), fails the sync: the controller then
//!   writes `disruptionsAllowed: 0` (`failSafe`), and so does this, with a warning.
//!
//! The numbers then follow [`DisruptionStatus::compute`].

use super::super::diagnostics::Diagnostics;
use crate::cluster::kube::{DisruptionStatus, Pod, PodDisruptionBudget, Selector};
use serde_json::Value;
use std::collections::BTreeSet;

/// A Deployment, ReplicaSet, StatefulSet or ReplicationController of the input: what
/// `getExpectedScale`'s finders read of it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ScaleOwner {
    kind: String,
    namespace: String,
    name: String,
    /// `spec.replicas` (1 when absent).
    replicas: i32,
    /// Its controller's kind and name (`metadata.ownerReferences[controller=true]`).
    controller: Option<(String, String)>,
}

/// The input's controllers with a scale, collected while the List is read.
#[derive(Clone, Debug, Default)]
pub struct Scales {
    owners: Vec<ScaleOwner>,
}

/// The kinds whose scale the disruption controller reads without the scale subresource.
const SCALE_KINDS: [&str; 4] = [
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
];

impl Scales {
    /// Notes object `value` of kind `kind` when it is one of the kinds with a scale.
    pub fn note(&mut self, kind: &str, value: &Value) {
        if !SCALE_KINDS.contains(&kind) {
            return;
        }
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let controller = value
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|owner| owner.get("controller").and_then(Value::as_bool) == Some(true))
            .map(|owner| {
                let field = |key: &str| owner.get(key).and_then(Value::as_str).unwrap_or("");
                (field("kind").to_string(), field("name").to_string())
            });
        let namespace = match text("/metadata/namespace") {
            empty if empty.is_empty() => "default".to_string(),
            namespace => namespace,
        };
        self.owners.push(ScaleOwner {
            kind: kind.to_string(),
            namespace,
            name: text("/metadata/name"),
            replicas: value
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok())
                .unwrap_or(1),
            controller,
        });
    }

    fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<&ScaleOwner> {
        self.owners
            .iter()
            .find(|o| o.kind == kind && o.namespace == namespace && o.name == name)
    }

    /// The controller `pod` counts toward (its kind and name, so each is summed once) and
    /// that controller's scale; `None` when `getExpectedScale` finds none.
    fn controller_scale(&self, pod: &Pod) -> Option<((String, String), i32)> {
        let reference = pod.controller.as_ref()?;
        let owner = self.find(&reference.kind, &pod.namespace, &reference.name)?;
        match (&owner.kind[..], &owner.controller) {
            ("ReplicaSet", Some((kind, name))) if kind == "Deployment" => {
                let deployment = self.find("Deployment", &pod.namespace, name)?;
                Some((
                    ("Deployment".to_string(), name.clone()),
                    deployment.replicas,
                ))
            }
            ("ReplicaSet" | "StatefulSet" | "ReplicationController", _) => {
                Some(((owner.kind.clone(), owner.name.clone()), owner.replicas))
            }
            _ => None,
        }
    }

    /// Gives every budget of `budgets` without a status the one the disruption controller
    /// would write over `pods`, warning (in `file`'s name) that it was computed.
    pub fn fill_missing(
        &self,
        budgets: &mut [PodDisruptionBudget],
        pods: &[Pod],
        file: &str,
        diagnostics: &mut Diagnostics,
    ) {
        for budget in budgets.iter_mut().filter(|b| b.status.is_none()) {
            let (status, unfound) = self.status(budget, pods);
            let object = format!("PodDisruptionBudget/{}/{}", budget.namespace, budget.name);
            match unfound {
                Some(pod) => diagnostics.warn(format!(
                    "{file}: {object} has no status, and its pod {pod} has no controller in \
                     the input whose scale the disruption controller reads: it fails the sync \
                     and allows no disruption (add the pod's ReplicaSet and Deployment, \
                     StatefulSet or ReplicationController, or the budget's status)"
                )),
                None => diagnostics.warn(format!(
                    "{file}: {object} has no status; computed as the disruption controller \
                     would: {} healthy of {} expected, {} desired, {} disruption(s) allowed",
                    status.current_healthy,
                    status.expected_pods,
                    status.desired_healthy,
                    status.disruptions_allowed
                )),
            }
            budget.status = Some(status);
        }
    }

    /// The status of `budget` over `pods`, and the first pod whose controller's scale was
    /// needed and not found (the status is then the fail-safe one).
    fn status(
        &self,
        budget: &PodDisruptionBudget,
        pods: &[Pod],
    ) -> (DisruptionStatus, Option<String>) {
        let selector = Selector::from_label_selector(budget.selector.as_ref());
        let selected: Vec<&Pod> = pods
            .iter()
            .filter(|p| p.namespace == budget.namespace && selector.matches(&p.labels))
            .collect();
        let healthy = selected
            .iter()
            .filter(|p| !p.terminating && p.ready)
            .count() as i32;
        let mut scale = 0;
        if budget.needs_scale() {
            let mut counted = BTreeSet::new();
            for pod in &selected {
                let Some((controller, replicas)) = self.controller_scale(pod) else {
                    return (DisruptionStatus::fail_safe(healthy), Some(pod.key()));
                };
                if counted.insert(controller) {
                    scale += replicas;
                }
            }
        }
        let status = DisruptionStatus::compute(
            budget.min_available,
            budget.max_unavailable,
            selected.len() as i32,
            scale,
            healthy,
        );
        (status, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::{IntOrPercent, LabelSelector, OwnerReference};
    use serde_json::json;

    fn pod(name: &str, owner: Option<(&str, &str)>, ready: bool) -> Pod {
        let mut pod = Pod::new("default", name);
        pod.labels.insert("app".into(), "web".into());
        pod.ready = ready;
        pod.controller = owner.map(|(kind, name)| OwnerReference {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: name.into(),
        });
        pod
    }

    fn budget(min: Option<IntOrPercent>, max: Option<IntOrPercent>) -> PodDisruptionBudget {
        let mut selector = LabelSelector::default();
        selector.match_labels.insert("app".into(), "web".into());
        PodDisruptionBudget {
            namespace: "default".into(),
            name: "web".into(),
            selector: Some(selector),
            min_available: min,
            max_unavailable: max,
            status: None,
        }
    }

    /// A Deployment `web` of `replicas` controlling ReplicaSet `web-1`.
    fn scales(replicas: i64) -> Scales {
        let mut scales = Scales::default();
        scales.note(
            "Deployment",
            &json!({"metadata": {"name": "web"}, "spec": {"replicas": replicas}}),
        );
        scales.note(
            "ReplicaSet",
            &json!({"metadata": {"name": "web-1", "ownerReferences": [
                {"kind": "Deployment", "name": "web", "controller": true}]},
                "spec": {"replicas": 2}}),
        );
        scales
    }

    fn numbers(s: DisruptionStatus) -> (i32, i32, i32, i32) {
        (
            s.current_healthy,
            s.expected_pods,
            s.desired_healthy,
            s.disruptions_allowed,
        )
    }

    #[test]
    fn max_unavailable_counts_the_deployments_scale_once() {
        // Two ready pods and one not ready, of a Deployment of 4: expected 4, desired 3, and
        // 2 healthy allow nothing.
        let pods = [
            pod("a", Some(("ReplicaSet", "web-1")), true),
            pod("b", Some(("ReplicaSet", "web-1")), true),
            pod("c", Some(("ReplicaSet", "web-1")), false),
        ];
        let (status, unfound) = scales(4).status(&budget(None, Some(IntOrPercent::Int(1))), &pods);
        assert_eq!(unfound, None);
        assert_eq!(numbers(status), (2, 4, 3, 0));
        // All three ready, of a Deployment of 3: desired 2, one disruption allowed.
        let mut pods = pods;
        pods[2].ready = true;
        let (status, _) = scales(3).status(&budget(None, Some(IntOrPercent::Int(1))), &pods);
        assert_eq!(numbers(status), (3, 3, 2, 1));
    }

    #[test]
    fn an_integer_min_available_counts_the_pods_and_needs_no_controller() {
        let pods = [
            pod("a", None, true),
            pod("b", None, true),
            pod("c", None, true),
        ];
        let (status, unfound) =
            Scales::default().status(&budget(Some(IntOrPercent::Int(2)), None), &pods);
        assert_eq!(unfound, None);
        assert_eq!(numbers(status), (3, 3, 2, 1));
    }

    #[test]
    fn a_pod_without_a_found_controller_fails_safe() {
        let pods = [
            pod("a", Some(("ReplicaSet", "web-1")), true),
            pod("b", None, true),
        ];
        let (status, unfound) =
            scales(2).status(&budget(Some(IntOrPercent::Percent(50)), None), &pods);
        assert_eq!(unfound.as_deref(), Some("default/b"));
        assert_eq!(status.disruptions_allowed, 0);
        let mut budgets = [budget(None, Some(IntOrPercent::Int(1)))];
        let mut diagnostics = Diagnostics::default();
        Scales::default().fill_missing(&mut budgets, &pods, "list.json", &mut diagnostics);
        assert_eq!(budgets[0].status.unwrap().disruptions_allowed, 0);
        assert!(diagnostics.warnings[0].contains("fails the sync"));
    }

    #[test]
    fn a_budget_with_a_status_keeps_it() {
        let pods = [pod("a", None, true)];
        let kept = DisruptionStatus {
            disruptions_allowed: 7,
            ..DisruptionStatus::default()
        };
        let mut budgets = [PodDisruptionBudget {
            status: Some(kept),
            ..budget(Some(IntOrPercent::Int(0)), None)
        }];
        let mut diagnostics = Diagnostics::default();
        Scales::default().fill_missing(&mut budgets, &pods, "list.json", &mut diagnostics);
        assert_eq!(budgets[0].status, Some(kept));
        assert!(diagnostics.warnings.is_empty());
    }
}
