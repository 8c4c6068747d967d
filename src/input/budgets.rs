//! PodDisruptionBudgets read from manifests or a List, each selector resolved to the
//! Deployments whose pod templates it matches: the model's pods carry their template's labels,
//! so a budget selects a Deployment's pods all together or not at all.
//!
//! The selector is read as `metav1.LabelSelectorAsSelector` reads it for the disruption
//! controller's `getPodsForPdb` (`pkg/controller/disruption/disruption.go`): absent selects
//! nothing, empty selects every pod, `matchLabels` and `matchExpressions` otherwise, among the
//! pods of the budget's own namespace only (`getPodsForPdb` lists `pdb.Namespace`'s pods, and
//! the eviction subresource looks for budgets in the evicted pod's namespace,
//! `pkg/registry/core/pod/storage/eviction.go`). Budgets of the system namespaces go with the
//! system workloads a running cluster's reader leaves out.

use super::cluster_list::SYSTEM_NAMESPACES;
use super::description::{Budget, ClusterDescription};
use super::diagnostics::Diagnostics;
use crate::cluster::kube::{IntOrPercent, PodDisruptionBudget, Selector};
use crate::cluster::spec::DEFAULT_NAMESPACE;
use serde_json::{json, Value};

/// Adds the budgets `read` (each with the file it came from) to `cluster`, each selecting the
/// Deployments and the standalone Pods its selector matches; one selecting none is warned
/// about and left out (the disruption controller finds no pods for it and it refuses nothing).
/// One that selects a standalone Pod and needs its pods' scale (`maxUnavailable`, a
/// `minAvailable` percentage) is warned about: `getExpectedScale` finds no controller for the
/// pod, and the disruption controller's `failSafe` allows no disruption.
pub fn resolve(
    read: Vec<(PodDisruptionBudget, String)>,
    cluster: &mut ClusterDescription,
    diagnostics: &mut Diagnostics,
) {
    for (budget, file) in read {
        let object = format!("PodDisruptionBudget/{}", budget.name);
        if SYSTEM_NAMESPACES.contains(&budget.namespace.as_str()) {
            diagnostics.ignore(format!("{file}: {object}"));
            continue;
        }
        let selector = Selector::from_label_selector(budget.selector.as_ref());
        let namespace = budget.namespace.as_str();
        let matching = cluster
            .deployments
            .iter()
            .filter(|d| selector.matches(&d.pod.labels));
        let (deployments, elsewhere): (Vec<_>, Vec<_>) =
            matching.partition(|d| d.pod.namespace() == namespace);
        let deployments: Vec<String> = deployments.iter().map(|d| d.name.clone()).collect();
        let pods: Vec<String> = cluster
            .standalone_pods
            .iter()
            .filter(|(_, template)| {
                template.namespace() == namespace && selector.matches(&template.labels)
            })
            .map(|(pod, _)| pod.clone())
            .collect();
        if deployments.is_empty() && pods.is_empty() && !elsewhere.is_empty() {
            let others: Vec<String> = elsewhere
                .iter()
                .map(|d| format!("Deployment/{} ({})", d.name, d.pod.namespace()))
                .collect();
            diagnostics.warn(format!(
                "{file}: {object} is in namespace `{namespace}` and selects pods only of \
                 Deployments of other namespaces, {}: a budget selects only pods of its own \
                 namespace, so it refuses nothing; left out (put it in their namespace)",
                others.join(", ")
            ));
            continue;
        }
        if deployments.is_empty() && pods.is_empty() {
            diagnostics.warn(format!(
                "{file}: {object} selects no pod in the input: the disruption controller finds \
                 no pods for it and it refuses nothing; left out"
            ));
            continue;
        }
        if let Some(pod) = pods.first().filter(|_| budget.needs_scale()) {
            diagnostics.warn(format!(
                "{file}: {object} selects Pod/{pod}, which no controller owns, and sets \
                 maxUnavailable or a minAvailable percentage: the disruption controller finds \
                 no scale for that pod and allows no disruption (failSafe), so every eviction \
                 of a pod it selects is refused; give it an integer minAvailable"
            ));
        }
        if budget.min_available.is_none() && budget.max_unavailable.is_none() {
            diagnostics.warn(format!(
                "{file}: {object} sets neither spec.minAvailable nor spec.maxUnavailable: the \
                 disruption controller expects no pods and allows no disruption, so every \
                 eviction of a ready pod it selects is refused; set one of them"
            ));
        }
        cluster.budgets.push(Budget {
            name: budget.name,
            namespace: budget.namespace,
            deployments,
            pods,
            min_available: budget.min_available,
            max_unavailable: budget.max_unavailable,
        });
    }
}

/// `document` (a uniform single topology or template of `cluster`) with the budgets under
/// `pdbs`, each naming its Deployments by number (their position in the input, as `setup.d`
/// and `dTypes` order them) and its standalone Pods by their pod ids in `document`,
/// `standalone_ids` (in `cluster.standalone_pods`' order; a template has no pods, and its
/// budgets list none); unchanged when there are none.
pub fn with_pdbs(
    cluster: &ClusterDescription,
    standalone_ids: &[usize],
    mut document: Value,
) -> Value {
    if cluster.budgets.is_empty() {
        return document;
    }
    let number = |name: &String| {
        cluster
            .deployments
            .iter()
            .position(|d| &d.name == name)
            .map(|index| index + 1)
    };
    let pod_id = |name: &String| {
        let index = cluster
            .standalone_pods
            .iter()
            .position(|(n, _)| n == name)?;
        standalone_ids.get(index).copied()
    };
    let pdbs: Vec<Value> = cluster
        .budgets
        .iter()
        .map(|budget| {
            let mut pdb = json!({
                "name": budget.name,
                "deployments": budget.deployments.iter().filter_map(number).collect::<Vec<_>>(),
            });
            let pods: Vec<usize> = budget.pods.iter().filter_map(pod_id).collect();
            if !pods.is_empty() {
                pdb["pods"] = pods.into();
            }
            if budget.namespace != DEFAULT_NAMESPACE {
                pdb["namespace"] = budget.namespace.clone().into();
            }
            if let Some(min) = budget.min_available {
                pdb["minAvailable"] = amount_json(min);
            }
            if let Some(max) = budget.max_unavailable {
                pdb["maxUnavailable"] = amount_json(max);
            }
            pdb
        })
        .collect();
    document["pdbs"] = Value::Array(pdbs);
    document
}

/// A budget's `minAvailable` or `maxUnavailable` as the uniform format writes it: a count, or
/// a percentage `"N%"`.
fn amount_json(amount: IntOrPercent) -> Value {
    match amount {
        IntOrPercent::Int(n) => n.into(),
        IntOrPercent::Percent(p) => format!("{p}%").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::LabelSelector;
    use crate::input::description::{Deployment, PodTemplate};

    /// Deployment `name` in namespace `namespace`, its pods labelled `app: web`.
    fn web(name: &str, namespace: Option<&str>) -> Deployment {
        let pod = PodTemplate {
            labels: [("app".to_string(), "web".to_string())].into(),
            namespace: namespace.map(str::to_string),
            ..PodTemplate::default()
        };
        Deployment::of_pod(name, pod)
    }

    /// A budget in `namespace` selecting `app: web`.
    fn budget(namespace: &str) -> (PodDisruptionBudget, String) {
        let mut selector = LabelSelector::default();
        selector.match_labels.insert("app".into(), "web".into());
        let budget = PodDisruptionBudget {
            namespace: namespace.into(),
            name: "web".into(),
            selector: Some(selector),
            min_available: Some(IntOrPercent::Int(1)),
            max_unavailable: None,
            status: None,
        };
        (budget, "pdb.yaml".into())
    }

    #[test]
    fn a_budget_selects_only_the_deployments_and_pods_of_its_namespace() {
        let mut cluster = ClusterDescription {
            deployments: vec![web("front", None), web("team-web", Some("team"))],
            standalone_pods: vec![("debug".into(), web("debug", None).pod)],
            ..ClusterDescription::default()
        };
        let mut diagnostics = Diagnostics::default();
        resolve(
            vec![budget("team"), budget("default"), budget("other")],
            &mut cluster,
            &mut diagnostics,
        );
        let resolved: Vec<(&str, Vec<&str>, Vec<&str>)> = cluster
            .budgets
            .iter()
            .map(|b| {
                let names = b.deployments.iter().map(String::as_str).collect();
                let pods = b.pods.iter().map(String::as_str).collect();
                (b.namespace.as_str(), names, pods)
            })
            .collect();
        // The bare Pod of `default` is counted by the `default` budget only.
        assert_eq!(
            resolved,
            [
                ("team", vec!["team-web"], vec![]),
                ("default", vec!["front"], vec!["debug"])
            ]
        );
        // The budget of `other` is left out, naming what its selector matched elsewhere.
        assert_eq!(diagnostics.warnings.len(), 1, "{:?}", diagnostics.warnings);
        assert!(diagnostics.warnings[0].contains(
            "is in namespace `other` and selects pods only of Deployments of other namespaces, \
             Deployment/front (default), Deployment/team-web (team)"
        ));
    }

    #[test]
    fn a_budget_needing_the_scale_of_a_bare_pod_is_warned_of_the_fail_safe() {
        let mut cluster = ClusterDescription {
            standalone_pods: vec![("debug".into(), web("debug", None).pod)],
            ..ClusterDescription::default()
        };
        let (mut by_percent, file) = budget("default");
        by_percent.min_available = Some(IntOrPercent::Percent(50));
        let (mut by_count, _) = budget("default");
        by_count.name = "by-count".into();
        let mut diagnostics = Diagnostics::default();
        resolve(
            vec![(by_percent, file.clone()), (by_count, file)],
            &mut cluster,
            &mut diagnostics,
        );
        assert_eq!(cluster.budgets.len(), 2);
        assert_eq!(diagnostics.warnings.len(), 1, "{:?}", diagnostics.warnings);
        assert!(diagnostics.warnings[0].starts_with(
            "pdb.yaml: PodDisruptionBudget/web selects Pod/debug, which no controller owns, and \
             sets maxUnavailable or a minAvailable percentage"
        ));
    }
}
