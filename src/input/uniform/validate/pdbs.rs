//! PodDisruptionBudgets: the checks the API server makes of a `policy/v1` budget
//! (`ValidatePodDisruptionBudgetSpec`, `pkg/apis/policy/validation/validation.go`: not both
//! `minAvailable` and `maxUnavailable`; each a non-negative count or a percentage of at most
//! 100 %), its namespace, and the deployments they select, which must be in it. One with
//! neither field is valid, as the API server takes it.

use super::problems::Problems;
use crate::cluster::kube::IntOrPercent;
use crate::cluster::spec::DEFAULT_NAMESPACE;
use crate::input::kubernetes::namespace_problem;
use crate::input::uniform::schema::Pdb;
use serde_json::Value;

/// `minAvailable` or `maxUnavailable` as the API server accepts it: a whole number from 0, or
/// a string `"N%"` with `N` from 0 to 100; `None` otherwise.
pub fn int_or_percent(value: &Value) -> Option<IntOrPercent> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .filter(|&n| n >= 0)
            .map(IntOrPercent::Int),
        Value::String(text) => text
            .strip_suffix('%')
            .and_then(|n| n.parse::<i32>().ok())
            .filter(|n| (0..=100).contains(n))
            .map(IntOrPercent::Percent),
        _ => None,
    }
}

/// Checks budget `pdb` at `path` in a document whose deployments (by id, from 1) are in the
/// namespaces `deployments` (index = id - 1) and whose pods (by id, from 1) are, when no
/// deployment owns them, in the namespaces `bare_pods` (`None` for a deployment's pod). A
/// budget selects only pods of its own namespace (`getPodsForPdb`,
/// `pkg/controller/disruption/disruption.go`), so a deployment or pod it lists must be in it;
/// a deployment's pod is listed through its deployment.
pub(super) fn check_pdb(
    problems: &mut Problems,
    path: &str,
    pdb: &Pdb,
    deployments: &[&str],
    bare_pods: &[Option<&str>],
) {
    if pdb.name.as_deref().is_none_or(str::is_empty) {
        problems.add(format!("{path}.name"), "missing", "name the budget");
    }
    let namespace = pdb.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    if let Some(problem) = namespace_problem(namespace) {
        problems.add(
            format!("{path}.namespace"),
            format!(
                "`{namespace}` {problem}: Kubernetes refuses it (namespaces are DNS-1123 labels)"
            ),
            "write the name of the budget's namespace, such as team-a, or leave namespace out \
             for `default`",
        );
    }
    // Neither set is valid: the disruption controller then expects no pods and allows no
    // disruption (`getExpectedPodCount`, `updatePdbStatus`), so every eviction is refused.
    if pdb.min_available.is_some() && pdb.max_unavailable.is_some() {
        problems.add(
            path,
            "minAvailable and maxUnavailable are both set, which the API server refuses \
             (ValidatePodDisruptionBudgetSpec)",
            "keep one of them",
        );
    }
    for (key, value) in [
        ("minAvailable", &pdb.min_available),
        ("maxUnavailable", &pdb.max_unavailable),
    ] {
        if let Some(value) = value {
            if int_or_percent(value).is_none() {
                problems.add(
                    format!("{path}.{key}"),
                    format!("`{value}` is neither a count from 0 nor a percentage from 0% to 100%"),
                    "write a whole number such as 2, or a percentage such as \"50%\"",
                );
            }
        }
    }
    if pdb.deployments.is_none() && pdb.pods.is_none() {
        problems.add(
            format!("{path}.deployments"),
            "missing",
            "list the ids of the deployments whose pods it selects (positions in setup.d), or \
             its bare pods under pods (positions in setup.pods)",
        );
    }
    for (i, &id) in pdb.deployments.iter().flatten().enumerate() {
        let count = deployments.len();
        let Some(&theirs) = at_position(deployments, id) else {
            problems.add(
                format!("{path}.deployments[{i}]"),
                format!("{id} is not a deployment id"),
                format!("use a position in setup.d, from 1 to {count}"),
            );
            continue;
        };
        if theirs != namespace {
            problems.add(
                format!("{path}.deployments[{i}]"),
                format!(
                    "deployment {id} is in namespace `{theirs}` and the budget in \
                     `{namespace}`: a budget selects only pods of its own namespace"
                ),
                "list only deployments of the budget's namespace, or set the budget's \
                 namespace to theirs",
            );
        }
    }
    for (i, &id) in pdb.pods.iter().flatten().enumerate() {
        let count = bare_pods.len();
        let Some(slot) = at_position(bare_pods, id) else {
            problems.add(
                format!("{path}.pods[{i}]"),
                format!("{id} is not a pod id"),
                format!("use a position in setup.pods, from 1 to {count}"),
            );
            continue;
        };
        match slot {
            None => problems.add(
                format!("{path}.pods[{i}]"),
                format!("pod {id} belongs to a deployment (workloadType 1)"),
                "list its deployment under deployments: a budget selects a deployment's pods \
                 all together; pods holds only pods no controller owns",
            ),
            Some(theirs) if *theirs != namespace => problems.add(
                format!("{path}.pods[{i}]"),
                format!(
                    "pod {id} is in namespace `{theirs}` and the budget in `{namespace}`: a \
                     budget selects only pods of its own namespace"
                ),
                "list only pods of the budget's namespace, or set the budget's namespace to \
                 theirs",
            ),
            Some(_) => {}
        }
    }
}

/// The item at 1-based position `id` of `list`, `None` out of range.
fn at_position<T>(list: &[T], id: i64) -> Option<&T> {
    list.get(usize::try_from(id.checked_sub(1)?).ok()?)
}
