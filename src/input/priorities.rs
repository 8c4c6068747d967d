//! PriorityClasses read from manifests or a List, and each pod template's priority resolved
//! from them as the Priority admission plugin resolves a pod's when it is created
//! (`plugin/pkg/admission/priority/admission.go`, `admitPod`):
//! - a pod naming a class gets its `value` and `preemptionPolicy`; a name no class has is
//!   refused ("no PriorityClass with name … was found"), except the two system classes, which
//!   the API server always has (`system-cluster-critical` 2000000000, `system-node-critical`
//!   2000001000: `SystemPriorityClasses` in `pkg/apis/scheduling`);
//! - a pod naming none gets the `globalDefault` class's (the lowest value if several are, as
//!   `getDefaultPriorityClass` picks), or priority 0 and its own `preemptionPolicy` without one;
//! - a `preemptionPolicy` written in the pod that differs from the class's is refused.
//!
//! - a `spec.priority` written in the pod that differs from the computed one is refused.

use super::description::{ClusterDescription, PodTemplate};
use super::diagnostics::{Diagnostics, InputError};
use crate::cluster::kube::{PreemptionPolicy, PriorityClass};

/// The system's own PriorityClasses, which every cluster has.
fn system_classes() -> [PriorityClass; 2] {
    let class = |name: &str, value| PriorityClass {
        name: name.into(),
        value,
        global_default: false,
        preemption_policy: PreemptionPolicy::PreemptLowerPriority,
    };
    [
        class("system-cluster-critical", 2_000_000_000),
        class("system-node-critical", 2_000_001_000),
    ]
}

/// Sets the priority and preemption policy of every pod template of `cluster` (its
/// Deployments', the versions applied later, and standalone Pods') from `read`, the classes
/// of the input with the files they came from; a second class of one name is an error.
pub fn resolve(
    read: Vec<(PriorityClass, String)>,
    cluster: &mut ClusterDescription,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    let mut classes: Vec<PriorityClass> = Vec::new();
    for (class, file) in read {
        if classes.iter().any(|c| c.name == class.name) {
            return Err(InputError::new(
                &file,
                None,
                format!(
                    "a second PriorityClass named `{}`; class names are cluster-wide",
                    class.name
                ),
            ));
        }
        classes.push(class);
    }
    let defaults: Vec<&PriorityClass> = classes.iter().filter(|c| c.global_default).collect();
    if defaults.len() > 1 {
        diagnostics.warn(format!(
            "{} PriorityClasses are globalDefault; pods without a class get the lowest value \
             of them, as the Priority admission plugin picks",
            defaults.len()
        ));
    }
    let default = defaults.into_iter().min_by_key(|c| c.value).cloned();
    let system = system_classes();
    let templates = cluster
        .deployments
        .iter_mut()
        .chain(cluster.applied.iter_mut())
        .map(|d| &mut d.pod)
        .chain(cluster.standalone_pods.iter_mut().map(|(_, pod)| pod));
    for pod in templates {
        admit(pod, &classes, &system, default.as_ref())?;
    }
    Ok(())
}

/// The Priority admission plugin on one pod template.
fn admit(
    pod: &mut PodTemplate,
    classes: &[PriorityClass],
    system: &[PriorityClass],
    default: Option<&PriorityClass>,
) -> Result<(), InputError> {
    let class = match &pod.priority_class_name {
        Some((name, missing)) => Some(
            classes
                .iter()
                .chain(system)
                .find(|c| &c.name == name)
                .ok_or_else(|| missing.clone())?,
        ),
        None => default,
    };
    let written = pod.written_preemption_policy.as_ref();
    let priority = class.map_or(0, |c| c.value);
    if let Some((value, differs)) = &pod.written_priority {
        if *value != priority {
            return Err(differs.clone());
        }
    }
    let Some(class) = class else {
        pod.priority = 0;
        pod.preemption_policy = written.map(|(policy, _)| *policy);
        return Ok(());
    };
    if let Some((policy, differs)) = written {
        if *policy != class.preemption_policy {
            return Err(differs.clone());
        }
    }
    pod.priority = class.value;
    pod.preemption_policy = Some(class.preemption_policy);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i32, global_default: bool, never: bool) -> PriorityClass {
        PriorityClass {
            name: name.into(),
            value,
            global_default,
            preemption_policy: if never {
                PreemptionPolicy::Never
            } else {
                PreemptionPolicy::PreemptLowerPriority
            },
        }
    }

    fn naming(name: &str) -> PodTemplate {
        PodTemplate {
            priority_class_name: Some((
                name.into(),
                InputError::new("app.yaml", None, format!("no class {name}")),
            )),
            ..PodTemplate::default()
        }
    }

    #[test]
    fn a_named_class_gives_its_value_and_policy_and_an_unknown_one_is_refused() {
        let classes = [class("batch", 100, false, true)];
        let mut pod = naming("batch");
        admit(&mut pod, &classes, &system_classes(), None).unwrap();
        assert_eq!(
            (pod.priority, pod.preemption_policy),
            (100, Some(PreemptionPolicy::Never))
        );
        let mut unknown = naming("high");
        let error = admit(&mut unknown, &classes, &system_classes(), None).unwrap_err();
        assert_eq!(error.message, "no class high");
        let mut system = naming("system-node-critical");
        admit(&mut system, &classes, &system_classes(), None).unwrap();
        assert_eq!(system.priority, 2_000_001_000);
    }

    #[test]
    fn without_a_name_the_lowest_global_default_applies_else_zero() {
        let mut cluster = ClusterDescription::default();
        cluster
            .standalone_pods
            .push(("p".into(), PodTemplate::default()));
        let read = vec![
            (class("a", 50, true, false), "a.yaml".to_string()),
            (class("b", 10, true, false), "b.yaml".to_string()),
            (class("c", 5, false, false), "c.yaml".to_string()),
        ];
        let mut diagnostics = Diagnostics::default();
        resolve(read, &mut cluster, &mut diagnostics).unwrap();
        assert_eq!(cluster.standalone_pods[0].1.priority, 10);
        let mut pod = PodTemplate::default();
        admit(&mut pod, &[], &system_classes(), None).unwrap();
        assert_eq!((pod.priority, pod.preemption_policy), (0, None));
    }

    #[test]
    fn a_written_policy_must_match_the_class() {
        let mut pod = naming("batch");
        pod.written_preemption_policy = Some((
            PreemptionPolicy::PreemptLowerPriority,
            InputError::new("app.yaml", None, "differs"),
        ));
        let classes = [class("batch", 100, false, true)];
        let error = admit(&mut pod, &classes, &system_classes(), None).unwrap_err();
        assert_eq!(error.message, "differs");
    }
}
