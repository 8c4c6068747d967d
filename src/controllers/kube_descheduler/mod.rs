//! One descheduling cycle of kubernetes-sigs/descheduler v0.33 on a `cluster::kube` snapshot,
//! as the real descheduler runs it (`runDeschedulerLoop` in `pkg/descheduler/descheduler.go`):
//! the ready nodes, then every profile's deschedule plugins, then every profile's balance
//! plugins, each in configuration order, all evicting through one [`PodEvictor`] whose limits
//! count per cycle, with PodDisruptionBudgets checked by the eviction subresource. A pod
//! evicted earlier in the cycle stays on its node, terminating.
//!
//! Where the real descheduler's choice depends on Go's randomised map order or an unstable
//! sort, the model asks a [`Chooser`]: [`FirstOption`] gives one canonical cycle,
//! [`RandomOptions`] samples cycles, and [`possible::is_possible`] decides whether a recorded
//! outcome is one the descheduler can reach. The conformance test
//! (`tests/kube_descheduler_conformance.rs`) checks it against the decisions recorded from the
//! real descheduler.
//!
//! This is the Kubernetes semantics; Kivi's own descheduler is [`super::descheduler`].

pub mod carried;
pub mod choices;
pub mod disruption;
pub mod evictor;
pub mod high_node_utilization;
mod listing_order;
pub mod low_node_utilization;
pub mod model_step;
pub mod node_affinity;
pub mod node_fit;
pub mod node_taints;
pub mod node_utilization;
pub mod outcome;
pub mod pod_evictor;
pub mod possible;
pub mod remove_duplicates;
pub mod topology_spread;

pub use choices::{Chooser, FirstOption, Pruned, RandomOptions};
pub use outcome::{Cycle, Event, NotEvictable, Refusal, Rejection, Report};
pub use pod_evictor::PodEvictor;

use crate::cluster::kube::descheduler_policy::{DeschedulerPolicy, Namespaces, PluginArgs};
use crate::cluster::kube::{LabelSelector, Selector, Snapshot};
use evictor::Evictor;
use node_fit::FitTable;
use std::collections::HashMap;

/// What the cycle's error says with fewer than two ready nodes (`runDeschedulerLoop`).
pub const TOO_FEW_NODES: &str = "the cluster size is 0 or 1";

/// A snapshot and a policy, with everything that does not change during a cycle worked out.
#[derive(Debug)]
pub struct Descheduler<'a> {
    /// The cluster.
    pub snapshot: &'a Snapshot,
    /// The policy.
    pub policy: &'a DeschedulerPolicy,
    /// The ready nodes (indices into the snapshot's nodes), in the snapshot's order.
    pub ready: Vec<usize>,
    /// For each node, its pods (indices into the snapshot's pods), in the snapshot's order.
    pub pods_on: Vec<Vec<usize>>,
    /// For each pod, the index of its node, when it is bound to one of the snapshot.
    pub node_of: Vec<Option<usize>>,
    /// `NodeFit` of any pod on any ready node.
    pub fit: FitTable<'a>,
    /// Each profile's DefaultEvictor.
    evictors: Vec<Evictor>,
    /// Whether a cycle keeps the evictor's rejections of listed pods ([`Cycle::not_evictable`]):
    /// `kivi deschedule` and the conformance test report them; a model step does not.
    records_rejections: bool,
}

impl<'a> Descheduler<'a> {
    /// The descheduler over `snapshot` with `policy`; fails where the real descheduler fails
    /// to build a profile (a priority threshold it cannot resolve).
    pub fn new(snapshot: &'a Snapshot, policy: &'a DeschedulerPolicy) -> Result<Self, String> {
        let ready: Vec<usize> = (0..snapshot.nodes.len())
            .filter(|&n| snapshot.nodes[n].ready)
            .collect();
        // Each node's index by name (the first node of a name).
        let index: HashMap<&str, usize> = snapshot
            .nodes
            .iter()
            .enumerate()
            .rev()
            .map(|(n, node)| (node.name.as_str(), n))
            .collect();
        let node_of: Vec<Option<usize>> = snapshot
            .pods
            .iter()
            .map(|pod| index.get(pod.node_name.as_deref()?).copied())
            .collect();
        let mut pods_on = vec![Vec::new(); snapshot.nodes.len()];
        for (pod, node) in node_of.iter().enumerate() {
            if let Some(node) = node {
                pods_on[*node].push(pod);
            }
        }
        let fit = FitTable::new(snapshot, &ready, &pods_on);
        let evictors = policy
            .profiles
            .iter()
            .map(|profile| {
                Evictor::new(&profile.evictor, snapshot, &ready, &fit)
                    .map_err(|why| format!("profile `{}`: {why}", profile.name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            snapshot,
            policy,
            ready,
            pods_on,
            node_of,
            fit,
            evictors,
            records_rejections: true,
        })
    }

    /// The same descheduler, its cycles keeping no rejections (a model step reads only the
    /// evictions and refusals).
    pub fn without_rejections(mut self) -> Self {
        self.records_rejections = false;
        self
    }

    /// The name of pod `pod`.
    pub fn pod_name(&self, pod: usize) -> String {
        self.snapshot.pods[pod].name.clone()
    }

    /// Runs one cycle, choices made by `chooser`; `Err` when the chooser pruned it.
    pub fn run(&self, chooser: &mut dyn Chooser) -> Result<Cycle, Pruned> {
        let mut cycle = Cycle {
            ready_nodes: self
                .ready
                .iter()
                .map(|&n| self.snapshot.nodes[n].name.clone())
                .collect(),
            ..Cycle::default()
        };
        if self.ready.len() <= 1 {
            cycle.aborted = Some(TOO_FEW_NODES.to_string());
            return Ok(cycle);
        }
        let mut evictor = PodEvictor::new(self);
        let profiles = self.policy.profiles.iter().zip(&self.evictors);
        let deschedule = profiles
            .clone()
            .flat_map(|(profile, e)| profile.deschedule.iter().map(move |p| (p, e)));
        let balance = profiles.flat_map(|(profile, e)| profile.balance.iter().map(move |p| (p, e)));
        let plugins: Vec<_> = deschedule.chain(balance).collect();
        for (at, &(plugin, filter)) in plugins.iter().enumerate() {
            cycle.plugins_run.push(plugin.name());
            let step = Step {
                descheduler: self,
                filter,
                plugin: plugin.name(),
            };
            match plugin {
                PluginArgs::RemoveDuplicates(args) => {
                    remove_duplicates::balance(&step, args, &mut evictor, chooser)?
                }
                PluginArgs::TopologySpread(args) => {
                    topology_spread::balance(&step, args, &mut evictor, chooser)?
                }
                PluginArgs::NodeTaints(args) => {
                    node_taints::deschedule(&step, args, &mut evictor, chooser)?
                }
                PluginArgs::NodeAffinity(args) => {
                    node_affinity::deschedule(&step, args, &mut evictor, chooser)?
                }
                PluginArgs::LowNodeUtilization(args) => {
                    low_node_utilization::balance(&step, args, &mut evictor, chooser)?
                }
                PluginArgs::HighNodeUtilization(args) => {
                    high_node_utilization::balance(&step, args, &mut evictor, chooser)?
                }
            }
            if plugins[at + 1..]
                .iter()
                .all(|(p, _)| p.name() != plugin.name())
            {
                chooser.finished(plugin.name())?;
            }
        }
        (cycle.events, cycle.not_evictable) = evictor.finish();
        Ok(cycle)
    }
}

/// What a plugin works with: the descheduler, its profile's evictor and its own name.
pub struct Step<'d, 'a> {
    /// The descheduler.
    pub descheduler: &'d Descheduler<'a>,
    /// The profile's DefaultEvictor.
    pub filter: &'d Evictor,
    /// The plugin's name.
    pub plugin: &'static str,
}

impl Step<'_, '_> {
    /// Whether the plugin takes pod `index` from its node's list, checked in the order of
    /// `podutil.Options.BuildFilterFunc` with `WrapFilterFuncs`: its namespace passes the
    /// plugin's `namespaces`, its labels the plugin's `labelSelector` (`selector`, when the
    /// plugin has one), then the evictor's `Filter` (the pod as the cycle has left it) and
    /// `PreEvictionFilter`; the evictor's rejection is recorded.
    pub fn lists(
        &self,
        index: usize,
        evictor: &mut PodEvictor,
        namespaces: &Namespaces,
        selector: Option<&Selector>,
    ) -> bool {
        let pod = &self.descheduler.snapshot.pods[index];
        namespace_included(namespaces, &pod.namespace)
            && selector.is_none_or(|s| s.matches(&pod.labels))
            && self.evictor_filter(index, evictor)
            && if self.filter.pre_eviction_filter(index) {
                true
            } else {
                evictor.reject(self.plugin, index, NotEvictable::NodeFit);
                false
            }
    }

    /// The evictor's `Filter` on pod `index` as the cycle has left it, its rejection recorded.
    pub fn evictor_filter(&self, index: usize, evictor: &mut PodEvictor) -> bool {
        let reasons = self
            .filter
            .filter_reasons(index, evictor.terminating(index));
        if reasons.is_empty() {
            true
        } else {
            evictor.reject(self.plugin, index, NotEvictable::Filter(reasons));
            false
        }
    }

    /// Evicts `nodes`' pods (each node's list of the pods the plugin would evict), node by
    /// node and pod by pod in an order the `chooser` takes (the node lister's and the pod
    /// index's): a node limit ends the node, a total limit the plugin (`true`).
    pub fn evict_node_by_node(
        &self,
        mut nodes: Vec<Vec<usize>>,
        evictor: &mut PodEvictor,
        chooser: &mut dyn Chooser,
    ) -> Result<bool, Pruned> {
        while !nodes.is_empty() {
            let mut pods = choices::take(chooser, &mut nodes);
            while !pods.is_empty() {
                let pod = choices::take(chooser, &mut pods);
                match evictor.evict(self.plugin, pod, chooser)? {
                    Some(Refusal::NodeLimit) => break,
                    Some(Refusal::TotalLimit) => return Ok(true),
                    _ => {}
                }
            }
        }
        Ok(false)
    }
}

/// A plugin's `labelSelector` argument as a selector; `None` where the plugin has none (it
/// then takes pods whatever their labels).
pub fn plugin_selector(label_selector: Option<&LabelSelector>) -> Option<Selector> {
    label_selector.map(|s| Selector::from_label_selector(Some(s)))
}

/// Whether `namespace` passes a plugin's `namespaces` argument.
pub fn namespace_included(namespaces: &Namespaces, namespace: &str) -> bool {
    (namespaces.include.is_empty() || namespaces.include.iter().any(|n| n == namespace))
        && !namespaces.exclude.iter().any(|n| n == namespace)
}
