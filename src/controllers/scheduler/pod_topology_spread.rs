//! PodTopologySpread: hard constraints filter nodes whose domain would exceed `maxSkew`; soft
//! constraints score nodes by how many matching pods their domains already hold.
//!
//! As in Kivi, a node without the topology label belongs to domain 0, which takes part in the
//! counts but never in the minimum or the number of domains; pods count when running or pending
//! on the node.

use super::Cycle;
use crate::cluster::spec::{MAX_LABEL_KEYS, MAX_SPREAD_CONSTRAINTS};
use crate::cluster::timing::MAX_NODE_SCORE;
use crate::cluster::{
    label_value, ClusterSpec, ClusterState, PodPhase, TopologySpreadConstraint, WhenUnsatisfiable,
};

const UNDEFINED: i32 = -1;

/// Matching pods per (topology key, domain value); domain 0 starts at 0, others undefined.
/// Only the keys up to the highest topology key of the template's constraints are kept, each
/// with as many domains as its label has values in the input.
#[derive(Clone)]
struct DomainCounts {
    counts: Vec<i32>,
    stride: usize,
}

impl DomainCounts {
    /// Counts for `spread` in `counts` (a buffer to reuse; [`DomainCounts::into_buffer`] gives
    /// it back).
    fn new(
        spread: &[TopologySpreadConstraint],
        label_value_counts: &[u16],
        mut counts: Vec<i32>,
    ) -> Self {
        let keys = spread.iter().map(|c| c.topology_key + 1).max().unwrap_or(0);
        let values = label_value_counts
            .iter()
            .take(keys)
            .map(|&v| v as usize)
            .max()
            .unwrap_or(0);
        let stride = values + 1;
        counts.clear();
        counts.resize(keys * stride, UNDEFINED);
        for key in 0..keys {
            counts[key * stride] = 0;
        }
        Self { counts, stride }
    }

    /// The buffer the counts were kept in.
    fn into_buffer(self) -> Vec<i32> {
        self.counts
    }

    fn get(&self, key: usize, value: u16) -> i32 {
        self.counts[key * self.stride + value as usize]
    }

    fn add(&mut self, key: usize, value: u16, count: i32) {
        let slot = &mut self.counts[key * self.stride + value as usize];
        *slot = if *slot == UNDEFINED {
            count
        } else {
            *slot + count
        };
    }

    fn set(&mut self, key: usize, value: u16, count: i32) {
        self.counts[key * self.stride + value as usize] = count;
    }

    /// How many of key `key`'s domains 1..=values are defined, and the fewest matching pods
    /// in one of them (`at_most` when none is fewer). Without a branch per domain, so that a
    /// key with a domain per node (a hostname) is settled in a few passes of vector
    /// instructions on every binding.
    fn defined_and_fewest(&self, key: usize, values: u16, at_most: i32) -> (i32, i32) {
        let row = key * self.stride;
        let counts = &self.counts[row + 1..=row + values as usize];
        let defined = counts.iter().map(|&c| i32::from(c != UNDEFINED)).sum();
        let fewest = counts
            .iter()
            .map(|&c| if c == UNDEFINED { i32::MAX } else { c })
            .fold(at_most, i32::min);
        (defined, fewest)
    }
}

fn domain(spec: &ClusterSpec, node: usize, con: &TopologySpreadConstraint) -> u16 {
    label_value(&spec.node(node).labels, con.topology_key)
}

/// The node pod `pod` is counted on by the spread constraints: running or pending on a node of
/// the cluster.
fn counted_on(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<usize> {
    let record = state.pod(pod);
    let node = record.loc as usize;
    let counted = (record.phase == PodPhase::Running || record.phase == PodPhase::Pending)
        && (1..=spec.nodes.len()).contains(&node);
    counted.then_some(node)
}

/// Per constraint of a template, per node id: the pods running or pending there that carry the
/// constraint's labels. Shared by [`filter`] and [`score`].
#[derive(Clone)]
pub struct MatchingPods {
    template: u8,
    counts: Vec<i32>,
    stride: usize,
    /// The hard constraints' counts per domain, once a cycle of this step has asked for them
    /// ([`MatchingPods::hard_domains`]); kept up to date by [`MatchingCache::bind`].
    hard: Option<HardDomains>,
}

impl MatchingPods {
    /// Counts the matching pods of each of the cycle's template's constraints on each node, in
    /// `counts` (a buffer to reuse).
    fn count_into(c: &Cycle, mut counts: Vec<i32>) -> Self {
        let spread = &c.template.spread;
        let stride = c.spec.nodes.len() + 1;
        counts.clear();
        counts.resize(spread.len() * stride, 0);
        if !spread.is_empty() {
            for p in 1..=c.spec.pods.len() {
                let Some(node) = counted_on(c.spec, c.state, p) else {
                    continue;
                };
                for (j, con) in spread.iter().enumerate() {
                    if c.pod_matches(p, &con.match_labels) {
                        counts[j * stride + node] += 1;
                    }
                }
            }
        }
        Self {
            template: c.state.pod(c.pod).template,
            counts,
            stride,
            hard: None,
        }
    }

    /// The hard constraints' counts per domain for the cycle's template, counted now if no
    /// cycle of this step has asked yet. What they count besides the matching pods (which
    /// nodes each constraint's node-affinity and taint policies admit) depends on the
    /// template, the nodes' specs and readiness alone, none of which a scheduler step changes,
    /// so one count serves every pod of the template in the step.
    fn hard_domains(&mut self, c: &Cycle) -> &HardDomains {
        if self.hard.is_none() {
            self.hard = Some(HardDomains::count(c, self));
        }
        self.hard.as_ref().expect("counted above")
    }

    /// Matching pods of constraint `j` on node `n`.
    fn get(&self, j: usize, n: usize) -> i32 {
        self.counts[j * self.stride + n]
    }
}

/// The [`MatchingPods`] of each template a scheduler step has scheduled a pod of. A step's
/// only change to what they count is binding a pod to a node, which [`MatchingCache::bind`]
/// applies to every entry, so each template's pods are counted once per step, not once per
/// pod (kube-scheduler likewise keeps its snapshot's per-node pod lists up to date as it
/// assumes pods onto nodes, rather than listing the cluster per pod).
///
/// A listing of a step's outcomes keeps a copy with each partly placed state, so that going on
/// from one does not count the cluster again ([`super::for_each_choice`]).
#[derive(Clone, Default)]
pub struct MatchingCache {
    entries: Vec<MatchingPods>,
    /// The count buffers of forgotten entries, for the next step's counts.
    buffers: Vec<Vec<i32>>,
}

impl MatchingCache {
    /// Bytes the cache holds on the heap, each block as `allocated` rounds it: what a copy kept
    /// beside a partly placed state costs.
    pub fn heap_bytes(&self, allocated: fn(usize) -> usize) -> usize {
        let i32s = |v: &Vec<i32>| allocated(v.capacity() * std::mem::size_of::<i32>());
        let entry = |e: &MatchingPods| {
            i32s(&e.counts)
                + e.hard.as_ref().map_or(0, |h| {
                    i32s(&h.counts.counts) + allocated(h.reach.capacity())
                })
        };
        allocated(self.entries.capacity() * std::mem::size_of::<MatchingPods>())
            + self.entries.iter().map(entry).sum::<usize>()
            + allocated(self.buffers.capacity() * std::mem::size_of::<Vec<i32>>())
            + self.buffers.iter().map(i32s).sum::<usize>()
    }

    /// Forgets every count (a new step, in a new state), keeping the buffers.
    pub fn clear(&mut self) {
        self.buffers
            .extend(self.entries.drain(..).map(|entry| entry.counts));
    }

    /// The counts for the cycle's template, counted now if this step has not yet.
    pub fn for_template(&mut self, c: &Cycle) -> &mut MatchingPods {
        let template = c.state.pod(c.pod).template;
        let at = match self.entries.iter().position(|m| m.template == template) {
            Some(at) => at,
            None => {
                let buffer = self.buffers.pop().unwrap_or_default();
                self.entries.push(MatchingPods::count_into(c, buffer));
                self.entries.len() - 1
            }
        };
        &mut self.entries[at]
    }

    /// Moves pod `pod` of `state` (not yet bound) to node `node` in every entry's counts.
    pub fn bind(&mut self, spec: &ClusterSpec, state: &ClusterState, pod: usize, node: usize) {
        if !matches!(state.pod(pod).phase, PodPhase::Running | PodPhase::Pending) {
            return;
        }
        let old = counted_on(spec, state, pod);
        for entry in &mut self.entries {
            let spread = &spec.template_or_none(entry.template).spread;
            let mut carries = [false; MAX_SPREAD_CONSTRAINTS];
            for (j, con) in spread.iter().enumerate() {
                carries[j] = spec.pod_carries(state, pod, &con.match_labels);
                if carries[j] {
                    if let Some(old) = old {
                        entry.counts[j * entry.stride + old] -= 1;
                    }
                    entry.counts[j * entry.stride + node] += 1;
                }
            }
            if let Some(hard) = &mut entry.hard {
                if let Some(old) = old {
                    hard.add(spec, spread, old, -1, &carries);
                }
                hard.add(spec, spread, node, 1, &carries);
            }
        }
    }
}

fn hard(con: &TopologySpreadConstraint) -> bool {
    con.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule
}

/// Whether the plugin's score for `template` reads every feasible node, not only the domains'
/// counts: a ScheduleAnyway constraint's weight is the number of feasible domains.
pub fn scores_every_node(template: &crate::cluster::PodTemplate) -> bool {
    template.spread.iter().any(|con| !hard(con))
}

/// The DoNotSchedule constraints' matching pods per domain over the nodes they count (those
/// the constraint's node-affinity and taint policies admit), with each topology key's number
/// of domains and fewest matching pods in one.
#[derive(Clone)]
struct HardDomains {
    counts: DomainCounts,
    domains: [i32; MAX_LABEL_KEYS],
    min_match: [i32; MAX_LABEL_KEYS],
    /// Per node id: how many of the template's hard constraints, in order, count it (the
    /// first whose policy leaves the node out ends its counting, as in Kivi).
    reach: Vec<u8>,
}

impl HardDomains {
    /// Counts the cycle's hard constraints from `matching`.
    fn count(c: &Cycle, matching: &MatchingPods) -> Self {
        let spread = &c.template.spread;
        let mut counted = Self {
            counts: DomainCounts::new(spread, &c.spec.label_value_counts, Vec::new()),
            domains: [0; MAX_LABEL_KEYS],
            min_match: [0; MAX_LABEL_KEYS],
            reach: vec![0; c.spec.nodes.len() + 1],
        };
        // Every node, also where the cycle filters one node per kind.
        for n in 1..=c.spec.nodes.len() {
            let mut reach = 0;
            for (j, con) in spread.iter().enumerate().filter(|(_, con)| hard(con)) {
                if (con.honor_node_affinity && !c.affinity_of(n))
                    || (con.honor_node_taints && c.tainted_of(n))
                {
                    break;
                }
                reach += 1;
                counted
                    .counts
                    .add(con.topology_key, domain(c.spec, n, con), matching.get(j, n));
            }
            counted.reach[n] = reach;
        }
        counted.settle(c.spec, spread);
        counted
    }

    /// Adds `by` to the domains of node `n` for each hard constraint `j` that counts the node
    /// and that a moved pod matches (`carries[j]`), and settles the keys it changed.
    fn add(
        &mut self,
        spec: &ClusterSpec,
        spread: &[TopologySpreadConstraint],
        n: usize,
        by: i32,
        carries: &[bool; MAX_SPREAD_CONSTRAINTS],
    ) {
        let reach = self.reach[n] as usize;
        let mut changed = 0u32;
        for (j, con) in spread
            .iter()
            .enumerate()
            .filter(|(_, con)| hard(con))
            .take(reach)
        {
            if carries[j] {
                self.counts.add(con.topology_key, domain(spec, n, con), by);
                changed |= 1 << con.topology_key;
            }
        }
        self.settle_keys(spec, changed);
    }

    /// Recomputes each hard topology key's number of domains and fewest matching pods from
    /// the counts.
    fn settle(&mut self, spec: &ClusterSpec, spread: &[TopologySpreadConstraint]) {
        // Only the keys of hard constraints are read by `skew`.
        let keys = spread
            .iter()
            .filter(|con| hard(con))
            .fold(0u32, |keys, con| keys | 1 << con.topology_key);
        self.settle_keys(spec, keys);
    }

    /// [`HardDomains::settle`] for the topology keys in the bit set `keys`.
    fn settle_keys(&mut self, spec: &ClusterSpec, mut keys: u32) {
        while keys != 0 {
            let key = keys.trailing_zeros() as usize;
            keys &= keys - 1;
            let values = spec.label_value_counts[key];
            let (domains, min_match) =
                self.counts
                    .defined_and_fewest(key, values, spec.pods.len() as i32);
            self.domains[key] = domains;
            self.min_match[key] = min_match;
        }
    }

    /// The skew placing the cycle's pod on node `n` would give the template's `j`th constraint:
    /// the matching pods in the node's domain, the pod itself if it matches (`own`), and the
    /// global minimum (0 while there are fewer domains than `minDomains`), as kube-scheduler's
    /// filter computes them.
    fn skew(&self, c: &Cycle, j: usize, n: usize, own: bool) -> Skew {
        let con = &c.template.spread[j];
        let key = con.topology_key;
        let min = if self.domains[key] < con.min_domains {
            0
        } else {
            self.min_match[key]
        };
        Skew {
            in_domain: self.counts.get(key, domain(c.spec, n, con)),
            own: own as i32,
            min,
        }
    }
}

/// Whether the cycle's pod matches each of its template's hard constraints itself (the same
/// on every node, so asked once per cycle).
fn own_matches(c: &Cycle) -> [bool; MAX_SPREAD_CONSTRAINTS] {
    let mut own = [false; MAX_SPREAD_CONSTRAINTS];
    for (j, con) in c
        .template
        .spread
        .iter()
        .enumerate()
        .filter(|(_, con)| hard(con))
    {
        own[j] = c.pod_matches(c.pod, &con.match_labels);
    }
    own
}

/// The terms of one constraint's skew on one node.
struct Skew {
    in_domain: i32,
    own: i32,
    min: i32,
}

impl Skew {
    fn value(&self) -> i32 {
        self.in_domain + self.own - self.min
    }
}

/// Rejects nodes where a DoNotSchedule constraint's skew would exceed `maxSkew`.
pub fn filter(c: &mut Cycle, matching: &mut MatchingPods) {
    let spread = &c.template.spread;
    if !spread.iter().any(hard) {
        return;
    }
    let own = own_matches(c);
    let counts = matching.hard_domains(c);
    for n in c.node_ids() {
        if !c.feasible(n) {
            continue;
        }
        if spread
            .iter()
            .enumerate()
            .filter(|(_, con)| hard(con))
            .any(|(j, con)| counts.skew(c, j, n, own[j]).value() > con.max_skew)
        {
            c.score[n] = -1;
        }
    }
}

/// Why [`filter`] rejects node `n`, with the numbers of the first constraint it breaks, as
/// kube-scheduler's PodTopologySpread plugin reasons (`skew = matching pods in the node's
/// domain + 1 − global minimum > maxSkew`); `None` when it passes every constraint.
pub fn rejection(c: &Cycle, matching: &MatchingPods, n: usize) -> Option<String> {
    let spread = &c.template.spread;
    let own = own_matches(c);
    let counts = HardDomains::count(c, matching);
    let broken = spread
        .iter()
        .enumerate()
        .filter(|(_, con)| hard(con))
        .map(|(j, con)| (con, counts.skew(c, j, n, own[j])))
        .find(|(con, skew)| skew.value() > con.max_skew);
    broken.map(|(con, skew)| {
        let key = c
            .spec
            .label_keys
            .get(con.topology_key)
            .map_or("?", String::as_str);
        let value = domain(c.spec, n, con);
        format!(
            "topologyKey {key}: domain {key}={value} holds {} matching pods, +{} with this pod, \
             the fewest in a domain is {}: skew {} > maxSkew {}",
            skew.in_domain,
            skew.own,
            skew.min,
            skew.value(),
            con.max_skew
        )
    })
}

/// Kivi's rounded `log(size + 2)` topology weight.
fn log_weight(size: i32) -> i32 {
    match size {
        ..=1 => 0,
        2..=4 => 1,
        5..=12 => 2,
        13..=33 => 3,
        34..=90 => 4,
        91..=244 => 5,
        245..=665 => 6,
        666..=1808 => 7,
        1809..=4914 => 8,
        _ => 9,
    }
}

/// The ScheduleAnyway constraints' part of [`score`]: each feasible node's raw score, the
/// matching pods in its domains weighted by the number of domains.
fn add_soft_counts(c: &mut Cycle, matching: &MatchingPods) {
    let spread = &c.template.spread;
    let buffer = std::mem::take(&mut c.domains);
    let mut counts = DomainCounts::new(spread, &c.spec.label_value_counts, buffer);
    let mut sizes = [0i32; MAX_LABEL_KEYS];
    for n in c.node_ids() {
        if !c.feasible(n) {
            continue;
        }
        for con in spread.iter().filter(|con| !hard(con)) {
            let value = domain(c.spec, n, con);
            if counts.get(con.topology_key, value) == UNDEFINED {
                counts.set(con.topology_key, value, 0);
                sizes[con.topology_key] += 1;
            }
        }
    }
    for n in c.node_ids() {
        for (j, con) in spread.iter().enumerate().filter(|(_, con)| !hard(con)) {
            let value = domain(c.spec, n, con);
            if !c.affinity[n] || counts.get(con.topology_key, value) == UNDEFINED {
                continue;
            }
            counts.add(con.topology_key, value, matching.get(j, n));
        }
    }
    for n in c.node_ids() {
        if !c.feasible(n) {
            continue;
        }
        for con in spread.iter().filter(|con| !hard(con)) {
            let weight = log_weight(sizes[con.topology_key] + 2);
            c.plugin_score[n] +=
                counts.get(con.topology_key, domain(c.spec, n, con)) * weight + con.max_skew - 1;
        }
    }
    c.domains = counts.into_buffer();
}

/// Scores feasible nodes by the matching pods in their ScheduleAnyway domains (fewer is
/// better), normalised and added with weight 2.
pub fn score(c: &mut Cycle, matching: &MatchingPods) {
    let spread = &c.template.spread;
    if spread.iter().any(|con| !hard(con)) {
        add_soft_counts(c, matching);
    }
    let mut min = MAX_NODE_SCORE;
    let mut max = -1;
    for n in c.node_ids() {
        if !c.feasible(n) {
            c.plugin_score[n] = -1;
            continue;
        }
        min = min.min(c.plugin_score[n]);
        max = max.max(c.plugin_score[n]);
    }
    for n in c.node_ids() {
        if c.feasible(n) && c.plugin_score[n] != -1 {
            c.score[n] += 2 * if max == 0 {
                MAX_NODE_SCORE
            } else {
                MAX_NODE_SCORE * (max + min - c.plugin_score[n]) / max
            };
        }
        c.plugin_score[n] = 0;
    }
}

/// The cached counts checked against fresh ones, for the model's test that schedules the pods
/// queued in the states a search reaches (`src/model/spread_cache_tests.rs`).
#[cfg(test)]
pub(crate) mod count_check {
    use super::super::{
        node_affinity, node_name, select, taint_toleration, Buffers, Cycle, CycleNodes, Scratch,
    };
    use super::*;
    use crate::cluster::Queue;

    /// Schedules the pods queued in `state` as a scheduler step does, and after every bind
    /// compares the cached counts of each template scheduled so far with a fresh count (the
    /// matching pods per node and, where a cycle asked for them, the hard constraints' counts
    /// per domain); how many of each were compared.
    pub(crate) fn schedule_and_compare(spec: &ClusterSpec, state: &ClusterState) -> (usize, usize) {
        let mut s = state.clone();
        let mut scratch = Scratch::default();
        let mut scheduled = Vec::new();
        let (mut compared, mut hard_compared) = (0, 0);
        for pod in s.pending(Queue::Scheduler).to_vec() {
            let pod = pod as usize;
            let phase = s.pod(pod).phase;
            if phase == PodPhase::Running || phase == PodPhase::Terminating {
                continue;
            }
            let Some(node) = select(spec, &s, pod, &mut scratch, None) else {
                break;
            };
            scratch.matching.bind(spec, &s, pod, node);
            s.pod_mut(pod).loc = node as u16;
            scheduled.push(pod);
            for &earlier in &scheduled {
                let nodes = CycleNodes::every_of(spec);
                let mut cycle =
                    Cycle::new(spec, &s, earlier, &mut Buffers::default(), &nodes, None);
                let fresh = MatchingPods::count_into(&cycle, Vec::new());
                let cached = scratch.matching.for_template(&cycle);
                assert_eq!(
                    cached.counts, fresh.counts,
                    "pod {earlier} after binding {pod}"
                );
                if let Some(hard) = &cached.hard {
                    node_name::filter(&mut cycle);
                    node_affinity::filter(&mut cycle);
                    if spec.has_taints() {
                        taint_toleration::filter(&mut cycle);
                    }
                    let recounted = HardDomains::count(&cycle, &fresh);
                    assert_eq!(
                        (&hard.counts.counts, hard.domains, hard.min_match),
                        (
                            &recounted.counts.counts,
                            recounted.domains,
                            recounted.min_match
                        ),
                        "hard domains of pod {earlier} after binding {pod}"
                    );
                    hard_compared += 1;
                }
                compared += 1;
            }
        }
        (compared, hard_compared)
    }
}
