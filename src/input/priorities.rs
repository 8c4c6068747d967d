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

/// What a running cluster's pods of one Deployment show the Priority admission plugin gave
/// them: `spec.priority` and `spec.preemptionPolicy` of the first one read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// `spec.priority`.
    pub priority: i32,
    /// `spec.preemptionPolicy`.
    pub policy: PreemptionPolicy,
}

/// Sets the priority of every Deployment of a live-cluster dump (`input/cluster_dump.rs`)
/// whose PriorityClasses may be missing. With `classes` (a `kubectl get priorityclasses`
/// file) the templates are resolved as manifests' are ([`resolve`]), and a Deployment whose
/// running pods were admitted at another priority is warned about (a class changed after
/// they started: new pods get the class's). Without them, what admission wrote into the
/// pods is the answer: `admitted[d]` for Deployment `d` where a pod of it was read. A
/// Deployment without pods takes its system class's value, or, naming no class, the
/// priority admitted to the pods of Deployments that name none (the globalDefault's, 0
/// without one); where the dump cannot tell (a class of its own, or no pod naming none), an
/// error asks for the classes when it names one, and 0 is taken with a warning otherwise,
/// as long as the Deployments' priorities differ (equal priorities decide nothing).
pub fn resolve_live(
    classes: Option<Vec<(PriorityClass, String)>>,
    admitted: &[Option<Admitted>],
    dump: &str,
    cluster: &mut ClusterDescription,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    if let Some(classes) = classes {
        resolve(classes, cluster, diagnostics)?;
        for (deployment, admitted) in cluster.deployments.iter().zip(admitted) {
            if let Some(admitted) = admitted.filter(|a| a.priority != deployment.pod.priority) {
                diagnostics.warn(format!(
                    "{dump}: Deployment/{}: its running pods have priority {}, its \
                     PriorityClass gives new pods {}; modelled as {}",
                    deployment.name,
                    admitted.priority,
                    deployment.pod.priority,
                    deployment.pod.priority
                ));
            }
        }
        return Ok(());
    }
    let unnamed = cluster
        .deployments
        .iter()
        .zip(admitted)
        .find_map(|(d, a)| a.filter(|_| d.pod.priority_class_name.is_none()));
    let system = system_classes();
    let mut guessed = Vec::new();
    for (deployment, admitted) in cluster.deployments.iter_mut().zip(admitted) {
        let pod = &mut deployment.pod;
        let admitted = match (admitted, &pod.priority_class_name) {
            (Some(admitted), _) => *admitted,
            (None, Some((name, _))) => {
                let class = system.iter().find(|c| &c.name == name).ok_or_else(|| {
                    InputError::new(
                        dump,
                        None,
                        format!(
                            "Deployment/{}: spec.template names PriorityClass `{name}`, and \
                             neither a pod of it nor a PriorityClass is in the dump; add \
                             `kubectl get priorityclasses -o json` as a file named \
                             getpriorityclass.json",
                            deployment.name
                        ),
                    )
                })?;
                Admitted {
                    priority: class.value,
                    policy: class.preemption_policy,
                }
            }
            (None, None) => unnamed.unwrap_or_else(|| {
                guessed.push(deployment.name.clone());
                Admitted {
                    priority: 0,
                    policy: PreemptionPolicy::PreemptLowerPriority,
                }
            }),
        };
        pod.priority = admitted.priority;
        pod.preemption_policy = Some(admitted.policy);
    }
    let first = cluster.deployments.first().map(|d| d.pod.priority);
    if !guessed.is_empty()
        && cluster
            .deployments
            .iter()
            .any(|d| Some(d.pod.priority) != first)
    {
        diagnostics.warn(format!(
            "{dump}: {}: no pod in the dump shows the priority, and the dump has no \
             PriorityClasses: priority 0 assumed (no globalDefault class); add `kubectl get \
             priorityclasses -o json` as a file named getpriorityclass.json",
            guessed
                .iter()
                .map(|name| format!("Deployment/{name}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
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
    use crate::input::description::Deployment;

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

    /// Without PriorityClasses: `web`'s pods were admitted at 7 and it names no class, so
    /// `idle`, which names none and has no pod, takes 7 too (the globalDefault's); `node`
    /// names a system class. With no such pod, `idle` takes 0 and is warned about, as its
    /// priority differs from another's.
    #[test]
    fn a_live_dump_without_classes_reads_what_admission_wrote() {
        let admitted = Admitted {
            priority: 7,
            policy: PreemptionPolicy::PreemptLowerPriority,
        };
        let cluster = |web_admitted: bool| {
            let mut cluster = ClusterDescription {
                deployments: vec![
                    Deployment::of_pod("web", PodTemplate::default()),
                    Deployment::of_pod("idle", PodTemplate::default()),
                    Deployment::of_pod("node", naming("system-node-critical")),
                ],
                ..ClusterDescription::default()
            };
            let admitted = [web_admitted.then_some(admitted), None, None];
            let mut diagnostics = Diagnostics::default();
            resolve_live(
                None,
                &admitted,
                "getpod.json",
                &mut cluster,
                &mut diagnostics,
            )
            .unwrap();
            let priorities: Vec<i32> = cluster.deployments.iter().map(|d| d.pod.priority).collect();
            (priorities, diagnostics.warnings)
        };
        let (priorities, warnings) = cluster(true);
        assert_eq!(priorities, [7, 7, 2_000_001_000]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let (priorities, warnings) = cluster(false);
        assert_eq!(priorities, [0, 0, 2_000_001_000]);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("getpod.json: Deployment/web, Deployment/idle: no pod"),
            "{warnings:?}"
        );
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
