//! What one descheduling cycle did: each eviction and each refusal, in the order they
//! happened, as the recorded decisions name them (`by_plugin`, `refused` with `stage`,
//! `reason` and `message`).

use super::evictor::FilterReason;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Why an eviction a plugin decided on was not carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    /// `maxNoOfPodsToEvictPerNode` reached (`EvictionNodeLimitError`).
    NodeLimit,
    /// `maxNoOfPodsToEvictPerNamespace` reached.
    NamespaceLimit,
    /// `maxNoOfPodsToEvictTotal` reached.
    TotalLimit,
    /// The eviction subresource answered 429: the pod's PodDisruptionBudget allows no
    /// disruption now.
    Pdb,
    /// The eviction subresource answered 500: more than one PodDisruptionBudget selects the pod.
    PdbMultiple,
    /// The pod has no UID (`PodEvictor.EvictPod` refuses it).
    MissingUid,
    /// `DefaultEvictor.PreEvictionFilter` (`nodeFit`) rejected the pod right before eviction.
    NodeFit,
    /// The topology plugin chose the pod but it fits no node of a domain below the average.
    TopologyBalanceNodeFit,
    /// LowNodeUtilization skipped the pod: it does not tolerate the taints of every
    /// underutilized node.
    Taint,
}

impl Refusal {
    /// The recorded `reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NodeLimit => "node_limit",
            Self::NamespaceLimit => "namespace_limit",
            Self::TotalLimit => "total_limit",
            Self::Pdb => "pdb",
            Self::PdbMultiple => "pdb_multiple",
            Self::MissingUid => "missing_uid",
            Self::NodeFit => "nodeFit",
            Self::TopologyBalanceNodeFit => "topologyBalanceNodeFit",
            Self::Taint => "taint",
        }
    }

    /// The recorded `stage`: where in the descheduler the eviction stopped.
    pub fn stage(self) -> &'static str {
        match self {
            Self::NodeFit => "nodeFit",
            Self::TopologyBalanceNodeFit => "topologyBalanceNodeFit",
            Self::Taint => "taint",
            _ => "evict",
        }
    }

    /// The descheduler's words for it (`pkg/descheduler/evictions/errors.go`, the eviction
    /// subresource's message for 429).
    pub fn message(self, pod: &str) -> String {
        match self {
            Self::NodeLimit => "maximum number of evicted pods per node reached".into(),
            Self::NamespaceLimit => "maximum number of evicted pods per namespace reached".into(),
            Self::TotalLimit => {
                "maximum number of evicted pods per a descheduling cycle reached".into()
            }
            Self::Pdb => format!(
                "error when evicting pod (ignoring) \"{pod}\": Cannot evict pod as it would \
                 violate the pod's disruption budget."
            ),
            Self::PdbMultiple => format!(
                "error when evicting pod (ignoring) \"{pod}\": This pod has more than one \
                 PodDisruptionBudget, which the eviction subresource does not support."
            ),
            Self::MissingUid => format!("Pod default/{pod} is missing UID"),
            Self::NodeFit => "pod does not fit on any other node".into(),
            Self::TopologyBalanceNodeFit => {
                "pod does not fit on any node of a domain below the ideal average".into()
            }
            Self::Taint => "pod does not tolerate the taints of every underutilized node".into(),
        }
    }
}

/// One eviction, or one refused eviction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// The plugin that decided on it.
    pub plugin: &'static str,
    /// The pod, as an index into the snapshot's pods.
    pub pod: usize,
    /// `None` when the pod was evicted.
    pub refusal: Option<Refusal>,
}

/// Why the evictor kept a plugin from taking a pod it listed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NotEvictable {
    /// `DefaultEvictor.Filter` rejected the pod, for these reasons (in its order).
    Filter(Vec<FilterReason>),
    /// `DefaultEvictor.PreEvictionFilter` (`nodeFit`) rejected it: it fits no other ready node.
    NodeFit,
}

/// A pod the evictor rejected while a plugin listed its candidates.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rejection {
    /// The plugin that listed the pod.
    pub plugin: &'static str,
    /// The pod, as an index into the snapshot's pods.
    pub pod: usize,
    /// Why the evictor rejected it.
    pub why: NotEvictable,
}

/// One cycle: the plugins that ran, the nodes they ran on, and every event in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    /// The plugins in the order they ran.
    pub plugins_run: Vec<&'static str>,
    /// The ready nodes (`ReadyNodes`), by name.
    pub ready_nodes: Vec<String>,
    /// Why the cycle did not run, when it did not.
    pub aborted: Option<String>,
    /// Every eviction and refusal, in order.
    pub events: Vec<Event>,
    /// The evictor's rejections of pods the plugins listed, as a set.
    pub not_evictable: BTreeSet<Rejection>,
}

/// A refusal as the recorded files write it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RefusalRecord {
    /// The pod's name.
    pub pod: String,
    /// The plugin that decided on the eviction.
    pub plugin: String,
    /// Where it stopped.
    pub stage: String,
    /// Its code.
    pub reason: String,
    /// The descheduler's words.
    pub message: String,
}

/// A rejection as the recorded files write it (`not_evictable`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RejectionRecord {
    /// The pod's name.
    pub pod: String,
    /// The plugin that listed it.
    pub plugin: String,
    /// `filter` or `nodeFit`.
    pub stage: String,
    /// The codes of the checks it failed.
    pub reason: Vec<String>,
    /// The descheduler's words: one check's message, or several as `[a, b]` (the aggregate
    /// error of `DefaultEvictor.Filter`).
    pub message: String,
}

impl NotEvictable {
    /// The recorded `stage`, `reason` codes and `message`.
    fn record(&self) -> (&'static str, Vec<String>, String) {
        match self {
            Self::Filter(reasons) => {
                let messages: Vec<&str> = reasons.iter().map(|r| r.message()).collect();
                let message = match messages.as_slice() {
                    [one] => one.to_string(),
                    many => format!("[{}]", many.join(", ")),
                };
                let codes = reasons.iter().map(|r| r.code().to_string()).collect();
                ("filter", codes, message)
            }
            Self::NodeFit => (
                "nodeFit",
                vec!["nodeFit".to_string()],
                Refusal::NodeFit.message(""),
            ),
        }
    }
}

/// A cycle in the recorded files' terms: pod names, per plugin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The pods evicted, in order.
    pub evicted: Vec<String>,
    /// Each plugin that ran, with the pods it evicted in order.
    pub by_plugin: BTreeMap<String, Vec<String>>,
    /// Every refused eviction, in order.
    pub refused: Vec<RefusalRecord>,
    /// The evictor's rejections of listed pods, by plugin and pod.
    pub not_evictable: Vec<RejectionRecord>,
    /// The plugins in the order they ran.
    pub plugins_run: Vec<String>,
    /// The ready nodes.
    pub ready_nodes: Vec<String>,
    /// Why the cycle did not run, or null.
    pub aborted: Option<String>,
}

impl Cycle {
    /// The cycle with pods named by `name`.
    pub fn report(&self, name: impl Fn(usize) -> String) -> Report {
        let mut by_plugin: BTreeMap<String, Vec<String>> = self
            .plugins_run
            .iter()
            .map(|p| (p.to_string(), Vec::new()))
            .collect();
        let mut evicted = Vec::new();
        let mut refused = Vec::new();
        for event in &self.events {
            let pod = name(event.pod);
            match event.refusal {
                None => {
                    by_plugin
                        .entry(event.plugin.to_string())
                        .or_default()
                        .push(pod.clone());
                    evicted.push(pod);
                }
                Some(refusal) => refused.push(RefusalRecord {
                    message: refusal.message(&pod),
                    pod,
                    plugin: event.plugin.to_string(),
                    stage: refusal.stage().to_string(),
                    reason: refusal.reason().to_string(),
                }),
            }
        }
        let not_evictable = self
            .not_evictable
            .iter()
            .map(|rejection| {
                let (stage, reason, message) = rejection.why.record();
                RejectionRecord {
                    pod: name(rejection.pod),
                    plugin: rejection.plugin.to_string(),
                    stage: stage.to_string(),
                    reason,
                    message,
                }
            })
            .collect();
        Report {
            evicted,
            by_plugin,
            refused,
            not_evictable,
            plugins_run: self.plugins_run.iter().map(|p| p.to_string()).collect(),
            ready_nodes: self.ready_nodes.clone(),
            aborted: self.aborted.clone(),
        }
    }
}
