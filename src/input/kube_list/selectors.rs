//! Label selectors, node selectors, affinities and spread constraints from the API's structs,
//! checked as the API server checks them (an invalid selector is an input error, not a
//! selector that silently matches nothing).

use super::super::diagnostics::InputError;
use super::super::yaml_documents::Document;
use crate::cluster::kube::{
    LabelSelector, NodeAffinity, NodeInclusionPolicy, NodeSelectorTerm, Operator, PodAffinity,
    PodAffinityTerm, PreferredSchedulingTerm, Requirement, TopologySpreadConstraint,
    WeightedPodAffinityTerm, WhenUnsatisfiable,
};
use k8s_openapi::api::core::v1 as api;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;

/// An input error at `at` (the object and field path), placed at the line holding `needle`.
fn error(document: &Document, needle: &str, at: &str, why: impl std::fmt::Display) -> InputError {
    document.error_at(needle, format!("{at}: {why}"))
}

/// A `metav1.LabelSelector` (operators In, NotIn, Exists, DoesNotExist).
pub fn label_selector(
    selector: &meta::LabelSelector,
    document: &Document,
    at: &str,
) -> Result<LabelSelector, InputError> {
    let mut match_expressions = Vec::new();
    for (index, expression) in selector.match_expressions.iter().flatten().enumerate() {
        let at = format!("{at}.matchExpressions[{index}]");
        let operator = match Operator::parse(&expression.operator) {
            Some(
                op @ (Operator::In | Operator::NotIn | Operator::Exists | Operator::DoesNotExist),
            ) => op,
            _ => {
                return Err(error(
                    document,
                    "operator",
                    &at,
                    format!(
                        "operator `{}` is not a label selector operator (In, NotIn, Exists, \
                         DoesNotExist)",
                        expression.operator
                    ),
                ))
            }
        };
        let values = expression.values.clone().unwrap_or_default();
        match_expressions.push(
            Requirement::new(&expression.key, operator, values)
                .map_err(|why| error(document, "matchExpressions", &at, why))?,
        );
    }
    Ok(LabelSelector {
        match_labels: selector.match_labels.clone().unwrap_or_default(),
        match_expressions,
    })
}

/// An optional label selector.
fn optional_selector(
    selector: Option<&meta::LabelSelector>,
    document: &Document,
    at: &str,
) -> Result<Option<LabelSelector>, InputError> {
    selector
        .map(|s| label_selector(s, document, at))
        .transpose()
}

/// A node selector term (`matchExpressions` on labels, `matchFields` on `metadata.name`).
fn node_selector_term(
    term: &api::NodeSelectorTerm,
    document: &Document,
    at: &str,
) -> Result<NodeSelectorTerm, InputError> {
    let mut match_expressions = Vec::new();
    for (index, expression) in term.match_expressions.iter().flatten().enumerate() {
        let at = format!("{at}.matchExpressions[{index}]");
        let operator = Operator::parse(&expression.operator).ok_or_else(|| {
            error(
                document,
                "operator",
                &at,
                format!(
                    "operator `{}` is not a node selector operator (In, NotIn, Exists, \
                     DoesNotExist, Gt, Lt)",
                    expression.operator
                ),
            )
        })?;
        let values = expression.values.clone().unwrap_or_default();
        match_expressions.push(
            Requirement::new(&expression.key, operator, values)
                .map_err(|why| error(document, "matchExpressions", &at, why))?,
        );
    }
    let mut match_fields = Vec::new();
    for (index, field) in term.match_fields.iter().flatten().enumerate() {
        let at = format!("{at}.matchFields[{index}]");
        let values = field.values.clone().unwrap_or_default();
        let operator = match field.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            other => {
                return Err(error(
                    document,
                    "matchFields",
                    &at,
                    format!("operator `{other}` is not allowed on fields (In or NotIn)"),
                ))
            }
        };
        if field.key != "metadata.name" || values.len() != 1 {
            return Err(error(
                document,
                "matchFields",
                &at,
                "a field requirement names `metadata.name` with exactly one value",
            ));
        }
        match_fields.push(Requirement {
            key: field.key.clone(),
            operator,
            values,
        });
    }
    Ok(NodeSelectorTerm {
        match_expressions,
        match_fields,
    })
}

/// `spec.affinity.nodeAffinity`.
pub fn node_affinity(
    affinity: &api::NodeAffinity,
    document: &Document,
    at: &str,
) -> Result<NodeAffinity, InputError> {
    let required = affinity
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .map(|selector| {
            selector
                .node_selector_terms
                .iter()
                .enumerate()
                .map(|(index, term)| {
                    node_selector_term(
                        term,
                        document,
                        &format!(
                            "{at}.requiredDuringSchedulingIgnoredDuringExecution.\
                             nodeSelectorTerms[{index}]"
                        ),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let preferred = affinity
        .preferred_during_scheduling_ignored_during_execution
        .as_ref()
        .map(|terms| {
            terms
                .iter()
                .enumerate()
                .map(|(index, term)| {
                    Ok(PreferredSchedulingTerm {
                        weight: term.weight,
                        preference: node_selector_term(
                            &term.preference,
                            document,
                            &format!(
                                "{at}.preferredDuringSchedulingIgnoredDuringExecution[{index}].\
                                 preference"
                            ),
                        )?,
                    })
                })
                .collect::<Result<Vec<_>, InputError>>()
        })
        .transpose()?;
    Ok(NodeAffinity {
        required,
        preferred,
    })
}

/// One pod affinity term.
fn pod_affinity_term(
    term: &api::PodAffinityTerm,
    document: &Document,
    at: &str,
) -> Result<PodAffinityTerm, InputError> {
    if term.topology_key.is_empty() {
        return Err(error(
            document,
            "topologyKey",
            at,
            "a pod affinity term needs a topologyKey (a node label such as \
             kubernetes.io/hostname)",
        ));
    }
    Ok(PodAffinityTerm {
        label_selector: optional_selector(
            term.label_selector.as_ref(),
            document,
            &format!("{at}.labelSelector"),
        )?,
        namespaces: term.namespaces.clone().unwrap_or_default(),
        namespace_selector: optional_selector(
            term.namespace_selector.as_ref(),
            document,
            &format!("{at}.namespaceSelector"),
        )?,
        topology_key: term.topology_key.clone(),
    })
}

/// `spec.affinity.podAffinity` or `podAntiAffinity`, from its two lists.
pub fn pod_affinity(
    required: Option<&[api::PodAffinityTerm]>,
    preferred: Option<&[api::WeightedPodAffinityTerm]>,
    document: &Document,
    at: &str,
) -> Result<PodAffinity, InputError> {
    let required = required
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(index, term)| {
            pod_affinity_term(
                term,
                document,
                &format!("{at}.requiredDuringSchedulingIgnoredDuringExecution[{index}]"),
            )
        })
        .collect::<Result<_, _>>()?;
    let preferred = preferred
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(index, term)| {
            Ok(WeightedPodAffinityTerm {
                weight: term.weight,
                term: pod_affinity_term(
                    &term.pod_affinity_term,
                    document,
                    &format!(
                        "{at}.preferredDuringSchedulingIgnoredDuringExecution[{index}].\
                         podAffinityTerm"
                    ),
                )?,
            })
        })
        .collect::<Result<_, InputError>>()?;
    Ok(PodAffinity {
        required,
        preferred,
    })
}

/// One topology spread constraint.
pub fn spread_constraint(
    constraint: &api::TopologySpreadConstraint,
    document: &Document,
    at: &str,
) -> Result<TopologySpreadConstraint, InputError> {
    let when_unsatisfiable = match constraint.when_unsatisfiable.as_str() {
        "DoNotSchedule" => WhenUnsatisfiable::DoNotSchedule,
        "ScheduleAnyway" => WhenUnsatisfiable::ScheduleAnyway,
        other => {
            return Err(error(
                document,
                "whenUnsatisfiable",
                at,
                format!("whenUnsatisfiable `{other}` is not DoNotSchedule or ScheduleAnyway"),
            ))
        }
    };
    let policy = |value: Option<&String>, field: &str| match value.map(String::as_str) {
        None => Ok(None),
        Some("Honor") => Ok(Some(NodeInclusionPolicy::Honor)),
        Some("Ignore") => Ok(Some(NodeInclusionPolicy::Ignore)),
        Some(other) => Err(error(
            document,
            field,
            at,
            format!("{field} `{other}` is not Honor or Ignore"),
        )),
    };
    if constraint.max_skew < 1 {
        return Err(error(
            document,
            "maxSkew",
            at,
            format!("maxSkew {} must be at least 1", constraint.max_skew),
        ));
    }
    if constraint.topology_key.is_empty() {
        return Err(error(
            document,
            "topologyKey",
            at,
            "a spread constraint needs a topologyKey (a node label such as \
             topology.kubernetes.io/zone)",
        ));
    }
    if constraint.min_domains.is_some_and(|m| m < 1) {
        return Err(error(
            document,
            "minDomains",
            at,
            "minDomains must be at least 1",
        ));
    }
    Ok(TopologySpreadConstraint {
        max_skew: constraint.max_skew,
        topology_key: constraint.topology_key.clone(),
        when_unsatisfiable,
        label_selector: optional_selector(
            constraint.label_selector.as_ref(),
            document,
            &format!("{at}.labelSelector"),
        )?,
        min_domains: constraint.min_domains,
        node_affinity_policy: policy(
            constraint.node_affinity_policy.as_ref(),
            "nodeAffinityPolicy",
        )?,
        node_taints_policy: policy(constraint.node_taints_policy.as_ref(), "nodeTaintsPolicy")?,
        match_label_keys: constraint.match_label_keys.clone().unwrap_or_default(),
    })
}
