//! PodDisruptionBudgets read from manifests or a List, each selector resolved to the
//! Deployments whose pod templates it matches: the model's pods carry their template's labels,
//! so a budget selects a Deployment's pods all together or not at all.
//!
//! The selector is read as `metav1.LabelSelectorAsSelector` reads it for the disruption
//! controller's `getPodsForPdb` (`pkg/controller/disruption/disruption.go`): absent selects
//! nothing, empty selects every pod, `matchLabels` and `matchExpressions` otherwise. The model
//! has one namespace, so a budget's namespace is not compared with the Deployments'; budgets of
//! the system namespaces go with the system workloads a running cluster's reader leaves out.

use super::cluster_list::SYSTEM_NAMESPACES;
use super::description::{Budget, ClusterDescription};
use super::diagnostics::Diagnostics;
use crate::cluster::kube::{IntOrPercent, PodDisruptionBudget, Selector};
use serde_json::{json, Value};

/// Adds the budgets `read` (each with the file it came from) to `cluster`, each selecting the
/// Deployments its selector matches; one selecting none is warned about and left out (the
/// disruption controller finds no pods for it and it refuses nothing).
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
        let deployments: Vec<String> = cluster
            .deployments
            .iter()
            .filter(|d| selector.matches(&d.pod.labels))
            .map(|d| d.name.clone())
            .collect();
        for (pod, _) in cluster
            .standalone_pods
            .iter()
            .filter(|(_, template)| selector.matches(&template.labels))
        {
            diagnostics.warn(format!(
                "{file}: {object} selects Pod/{pod}, which no controller owns; the model counts \
                 only Deployments' pods in a budget"
            ));
        }
        if deployments.is_empty() {
            diagnostics.warn(format!(
                "{file}: {object} selects no pod of a Deployment in the input: the disruption \
                 controller finds no pods for it and it refuses nothing; left out"
            ));
            continue;
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
            deployments,
            min_available: budget.min_available,
            max_unavailable: budget.max_unavailable,
        });
    }
}

/// `document` (a uniform single topology or template of `cluster`) with the budgets under
/// `pdbs`, each naming its Deployments by number (their position in the input, as `setup.d`
/// and `dTypes` order them); unchanged when there are none.
pub fn with_pdbs(cluster: &ClusterDescription, mut document: Value) -> Value {
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
    let pdbs: Vec<Value> = cluster
        .budgets
        .iter()
        .map(|budget| {
            let mut pdb = json!({
                "name": budget.name,
                "deployments": budget.deployments.iter().filter_map(number).collect::<Vec<_>>(),
            });
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
