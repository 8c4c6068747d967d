//! The DefaultEvictor (`pkg/framework/plugins/defaultevictor/defaultevictor.go`): which pods
//! a plugin may evict at all (`Filter`) and, with `nodeFit`, which of those fit another
//! ready node (`PreEvictionFilter`).

use super::node_fit::FitTable;
use crate::cluster::kube::descheduler_policy::{EvictorArgs, PriorityThreshold};
use crate::cluster::kube::{Pod, Selector, Snapshot};

/// `SystemCriticalPriority` (`pkg/utils/priority.go`): the priority of system-critical pods
/// and the default threshold.
pub const SYSTEM_CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// The annotation that makes any pod evictable (`descheduler.alpha.kubernetes.io/evict`).
const EVICT_ANNOTATION: &str = "descheduler.alpha.kubernetes.io/evict";

/// Why `Filter` rejects a pod, in the order the descheduler checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FilterReason {
    /// A mirror pod (`kubernetes.io/config.mirror`).
    Mirror,
    /// A static pod (`kubernetes.io/config.source` other than `api`).
    Static,
    /// `deletionTimestamp` is set.
    Terminating,
    /// No owner references (or, with `evictFailedBarePods`, none and not Failed).
    BarePod,
    /// Priority at or above the system-critical value.
    SystemCritical,
    /// Priority at or above the threshold.
    PriorityThreshold,
    /// An `emptyDir` or `hostPath` volume.
    LocalStorage,
    /// Owned by a DaemonSet.
    DaemonSet,
    /// Not selected by the evictor's `labelSelector`.
    LabelSelector,
}

impl FilterReason {
    /// The recorded code.
    pub fn code(self) -> &'static str {
        match self {
            Self::Mirror => "mirror",
            Self::Static => "static",
            Self::Terminating => "terminating",
            Self::BarePod => "bare_pod",
            Self::SystemCritical => "system_critical",
            Self::PriorityThreshold => "priority_threshold",
            Self::LocalStorage => "local_storage",
            Self::DaemonSet => "daemonset",
            Self::LabelSelector => "label_selector",
        }
    }

    /// The descheduler's words.
    pub fn message(self) -> &'static str {
        match self {
            Self::Mirror => "pod is a mirror pod",
            Self::Static => "pod is a static pod",
            Self::Terminating => "pod is terminating",
            Self::BarePod => "pod does not have any ownerRefs",
            Self::SystemCritical => "pod has system critical priority",
            Self::PriorityThreshold => {
                "pod has higher priority than specified priority class threshold"
            }
            Self::LocalStorage => {
                "pod has local storage and descheduler is not configured with evictLocalStoragePods"
            }
            Self::DaemonSet => {
                "pod is related to daemonset and descheduler is not configured with evictDaemonSetPods"
            }
            Self::LabelSelector => {
                "pod labels do not match the labelSelector filter in the policy parameter"
            }
        }
    }
}

/// A profile's DefaultEvictor over one snapshot.
#[derive(Clone, Debug)]
pub struct Evictor {
    /// The reasons `Filter` rejects each pod for, terminating aside (that changes during the
    /// cycle); empty when the pod carries the evict annotation.
    fixed_reasons: Vec<Vec<FilterReason>>,
    /// Each pod carries the evict annotation (then `Filter` passes it even when terminating).
    annotated: Vec<bool>,
    /// `PreEvictionFilter`'s verdict for each pod (all true without `nodeFit`).
    fits_elsewhere: Vec<bool>,
}

impl Evictor {
    /// The evictor `args` configure over `snapshot`, whose ready nodes are `ready` with their
    /// fit table. Fails when the priority threshold names a PriorityClass the snapshot lacks
    /// or exceeds the system-critical value (`GetPriorityValueFromPriorityThreshold`).
    pub fn new(
        args: &EvictorArgs,
        snapshot: &Snapshot,
        ready: &[usize],
        fit: &FitTable,
    ) -> Result<Self, String> {
        let threshold = if args.evict_system_critical_pods {
            None
        } else {
            let value = match &args.priority_threshold {
                None => SYSTEM_CRITICAL_PRIORITY,
                Some(PriorityThreshold::Value(value)) => *value,
                Some(PriorityThreshold::ClassName(name)) => snapshot
                    .priority_classes
                    .iter()
                    .find(|c| &c.name == name)
                    .map(|c| c.value)
                    .ok_or_else(|| {
                        format!(
                            "failed to get priority threshold: unable to get priority value \
                             from the priority class: PriorityClass `{name}` is not in the input"
                        )
                    })?,
            };
            if value > SYSTEM_CRITICAL_PRIORITY {
                return Err(format!(
                    "priority threshold can't be greater than {SYSTEM_CRITICAL_PRIORITY}"
                ));
            }
            Some(value)
        };
        let selector = args
            .label_selector
            .as_ref()
            .map(|s| Selector::from_label_selector(Some(s)))
            .filter(|s| !s.is_empty());
        let annotated: Vec<bool> = snapshot
            .pods
            .iter()
            .map(|p| p.annotations.contains_key(EVICT_ANNOTATION))
            .collect();
        let fixed_reasons = snapshot
            .pods
            .iter()
            .map(|pod| fixed_reasons(pod, args, threshold, selector.as_ref()))
            .collect();
        let fits_elsewhere = snapshot
            .pods
            .iter()
            .enumerate()
            .map(|(index, pod)| {
                !args.node_fit
                    || ready.iter().enumerate().any(|(k, &n)| {
                        pod.node_name.as_deref() != Some(snapshot.nodes[n].name.as_str())
                            && fit.fits(index, k)
                    })
            })
            .collect();
        Ok(Self {
            fixed_reasons,
            annotated,
            fits_elsewhere,
        })
    }

    /// `Filter`'s reasons for rejecting pod `pod`, `terminating` now or not; empty when it
    /// passes.
    pub fn filter_reasons(&self, pod: usize, terminating: bool) -> Vec<FilterReason> {
        if self.annotated[pod] {
            return Vec::new();
        }
        let mut reasons = self.fixed_reasons[pod].clone();
        if terminating {
            let at = reasons
                .iter()
                .position(|r| *r > FilterReason::Terminating)
                .unwrap_or(reasons.len());
            reasons.insert(at, FilterReason::Terminating);
        }
        reasons
    }

    /// `PreEvictionFilter`: without `nodeFit` always true; with it, whether the pod fits a
    /// ready node other than its own.
    pub fn pre_eviction_filter(&self, pod: usize) -> bool {
        self.fits_elsewhere[pod]
    }
}

/// The `Filter` reasons of `pod` that do not change during a cycle.
fn fixed_reasons(
    pod: &Pod,
    args: &EvictorArgs,
    threshold: Option<i32>,
    selector: Option<&Selector>,
) -> Vec<FilterReason> {
    let mut reasons = Vec::new();
    if pod.annotations.contains_key("kubernetes.io/config.mirror") {
        reasons.push(FilterReason::Mirror);
    }
    if pod
        .annotations
        .get("kubernetes.io/config.source")
        .is_some_and(|source| source != "api")
    {
        reasons.push(FilterReason::Static);
    }
    let bare = pod.owner_references.is_empty();
    let failed = pod.phase == crate::cluster::kube::PodPhase::Failed;
    if bare && !(args.evict_failed_bare_pods && failed) {
        reasons.push(FilterReason::BarePod);
    }
    if let Some(threshold) = threshold {
        if pod.priority >= SYSTEM_CRITICAL_PRIORITY {
            reasons.push(FilterReason::SystemCritical);
        }
        if pod.priority >= threshold {
            reasons.push(FilterReason::PriorityThreshold);
        }
    }
    if !args.evict_local_storage_pods && pod.local_storage {
        reasons.push(FilterReason::LocalStorage);
    }
    if !args.evict_daemon_set_pods && pod.owner_references.iter().any(|o| o.kind == "DaemonSet") {
        reasons.push(FilterReason::DaemonSet);
    }
    if selector.is_some_and(|s| !s.matches(&pod.labels)) {
        reasons.push(FilterReason::LabelSelector);
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::OwnerReference;

    fn evictor(args: &EvictorArgs, pods: Vec<Pod>) -> Evictor {
        let snapshot = Snapshot {
            pods,
            ..Snapshot::default()
        };
        Evictor::new(args, &snapshot, &[], &FitTable::new(&snapshot, &[], &[])).unwrap()
    }

    fn owned(name: &str, kind: &str) -> Pod {
        let mut pod = Pod::new("default", name);
        pod.owner_references.push(OwnerReference {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: "owner".into(),
        });
        pod
    }

    #[test]
    fn reasons_come_in_the_descheduler_order_with_terminating_first() {
        let mut critical = Pod::new("default", "bare");
        critical.priority = SYSTEM_CRITICAL_PRIORITY;
        critical.local_storage = true;
        let e = evictor(
            &EvictorArgs::default(),
            vec![critical, owned("ds", "DaemonSet")],
        );
        assert_eq!(
            e.filter_reasons(0, true),
            vec![
                FilterReason::Terminating,
                FilterReason::BarePod,
                FilterReason::SystemCritical,
                FilterReason::PriorityThreshold,
                FilterReason::LocalStorage,
            ]
        );
        assert_eq!(e.filter_reasons(1, false), vec![FilterReason::DaemonSet]);
        assert!(!e.filter_reasons(1, false).is_empty());
    }

    #[test]
    fn evicting_critical_pods_drops_the_priority_threshold_too() {
        let mut high = owned("high", "ReplicaSet");
        high.priority = 1000;
        let args = EvictorArgs {
            priority_threshold: Some(PriorityThreshold::Value(100)),
            ..EvictorArgs::default()
        };
        assert!(!evictor(&args, vec![high.clone()])
            .filter_reasons(0, false)
            .is_empty());
        let args = EvictorArgs {
            evict_system_critical_pods: true,
            ..args
        };
        assert!(evictor(&args, vec![high])
            .filter_reasons(0, false)
            .is_empty());
    }

    #[test]
    fn a_threshold_naming_a_missing_class_is_an_error() {
        let args = EvictorArgs {
            priority_threshold: Some(PriorityThreshold::ClassName("gold".into())),
            ..EvictorArgs::default()
        };
        let snapshot = Snapshot::default();
        let error =
            Evictor::new(&args, &snapshot, &[], &FitTable::new(&snapshot, &[], &[])).unwrap_err();
        assert!(error.contains("PriorityClass `gold`"), "{error}");
    }
}
