//! `PodEvictor.EvictPod` (`pkg/descheduler/evictions/evictions.go`): the per-cycle limits
//! (total, then node, then namespace; a refused eviction does not count), then the eviction
//! subresource with its PodDisruptionBudget check. An evicted pod becomes terminating: later
//! plugins of the cycle see it so. It also keeps the evictor's rejections of the pods plugins
//! list, which the descheduler logs.

use super::choices::{Chooser, Pruned};
use super::disruption::Budgets;
use super::outcome::{Event, NotEvictable, Refusal, Rejection};
use super::Descheduler;
use std::collections::{BTreeMap, BTreeSet};

/// The cycle's evictor: what it has evicted, per node, namespace and in all, and the budgets.
pub struct PodEvictor<'d, 'a> {
    descheduler: &'d Descheduler<'a>,
    /// Each pod is terminating now.
    terminating: Vec<bool>,
    per_node: BTreeMap<String, u32>,
    per_namespace: BTreeMap<String, u32>,
    total: u32,
    budgets: Budgets<'a>,
    events: Vec<Event>,
    not_evictable: BTreeSet<Rejection>,
}

impl<'d, 'a> PodEvictor<'d, 'a> {
    /// The evictor at the start of a cycle.
    pub fn new(descheduler: &'d Descheduler<'a>) -> Self {
        let snapshot = descheduler.snapshot;
        Self {
            descheduler,
            terminating: snapshot.pods.iter().map(|p| p.terminating).collect(),
            per_node: BTreeMap::new(),
            per_namespace: BTreeMap::new(),
            total: 0,
            budgets: Budgets::new(&snapshot.pod_disruption_budgets),
            events: Vec::new(),
            not_evictable: BTreeSet::new(),
        }
    }

    /// Whether pod `pod` is terminating now.
    pub fn terminating(&self, pod: usize) -> bool {
        self.terminating[pod]
    }

    /// Records that the evictor rejected pod `pod` while `plugin` listed its candidates, when
    /// the descheduler keeps rejections.
    pub fn reject(&mut self, plugin: &'static str, pod: usize, why: NotEvictable) {
        if self.descheduler.records_rejections {
            self.not_evictable.insert(Rejection { plugin, pod, why });
        }
    }

    /// Records a refusal a plugin makes itself (not the evictor's).
    pub fn refuse(
        &mut self,
        plugin: &'static str,
        pod: usize,
        refusal: Refusal,
        chooser: &mut dyn Chooser,
    ) -> Result<(), Pruned> {
        let event = Event {
            plugin,
            pod,
            refusal: Some(refusal),
        };
        chooser.observe(&event)?;
        self.events.push(event);
        Ok(())
    }

    /// `EvictPod` for pod `pod` on behalf of `plugin`: `Ok(None)` when evicted, else the
    /// refusal.
    pub fn evict(
        &mut self,
        plugin: &'static str,
        pod: usize,
        chooser: &mut dyn Chooser,
    ) -> Result<Option<Refusal>, Pruned> {
        let refusal = self.try_evict(pod).err();
        let event = Event {
            plugin,
            pod,
            refusal,
        };
        chooser.observe(&event)?;
        self.events.push(event);
        Ok(refusal)
    }

    fn try_evict(&mut self, index: usize) -> Result<(), Refusal> {
        let policy = self.descheduler.policy;
        let pod = &self.descheduler.snapshot.pods[index];
        if pod.uid.is_empty() {
            return Err(Refusal::MissingUid);
        }
        if policy
            .max_pods_total
            .is_some_and(|max| self.total + 1 > max)
        {
            return Err(Refusal::TotalLimit);
        }
        let node = pod.node_name.clone().unwrap_or_default();
        if !node.is_empty() {
            let count = self.per_node.get(&node).copied().unwrap_or(0);
            if policy.max_pods_per_node.is_some_and(|max| count + 1 > max) {
                return Err(Refusal::NodeLimit);
            }
        }
        let in_namespace = self.per_namespace.get(&pod.namespace).copied().unwrap_or(0);
        if policy
            .max_pods_per_namespace
            .is_some_and(|max| in_namespace + 1 > max)
        {
            return Err(Refusal::NamespaceLimit);
        }
        self.budgets.evict(pod, self.terminating[index])?;
        if !node.is_empty() {
            *self.per_node.entry(node).or_default() += 1;
        }
        *self.per_namespace.entry(pod.namespace.clone()).or_default() += 1;
        self.total += 1;
        self.terminating[index] = true;
        Ok(())
    }

    /// The events of the cycle, in order, and the rejections of listed pods.
    pub fn finish(self) -> (Vec<Event>, BTreeSet<Rejection>) {
        (self.events, self.not_evictable)
    }
}
