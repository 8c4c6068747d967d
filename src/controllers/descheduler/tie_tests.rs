//! Under `--tie-break any` the descheduler's step offers every choice the real descheduler
//! leaves open, and Kivi's choice is one of them.

use super::run_with;
use crate::cluster::fixture::cases;
use crate::cluster::{ClusterSpec, ClusterState, PodPhase, Queue, Recorder, WriteBudget};
use crate::controllers::ties::{PickVictim, Ties};
use std::collections::BTreeSet;

/// Takes the picks of its script, then ends the step, noting how many candidates the next
/// tie offered.
struct Script {
    picks: Vec<usize>,
    taken: usize,
    offered: Option<usize>,
}

impl PickVictim for Script {
    fn pick(&mut self, candidates: &[usize]) -> Option<usize> {
        let pick = self.picks.get(self.taken).copied();
        self.taken += 1;
        if pick.is_none() {
            self.offered = Some(candidates.len());
        }
        pick
    }
}

/// The pods the step evicts from `state`, by every script of picks.
fn every_outcome(spec: &ClusterSpec, state: &ClusterState) -> BTreeSet<Vec<usize>> {
    let mut outcomes = BTreeSet::new();
    let mut todo = vec![Vec::new()];
    while let Some(picks) = todo.pop() {
        let mut script = Script {
            picks: picks.clone(),
            taken: 0,
            offered: None,
        };
        let mut next = state.clone();
        let (rec, writes) = (&mut Recorder::off(), &mut WriteBudget::unlimited());
        run_with(
            spec,
            &mut next,
            rec,
            writes,
            &mut Ties::picked_by(&mut script),
        );
        match script.offered {
            Some(offered) => todo.extend((0..offered).map(|i| [picks.as_slice(), &[i]].concat())),
            None => {
                outcomes.insert(evicted(&next));
            }
        }
    }
    outcomes
}

/// What Kivi's rule evicts from `state`.
fn kivis(spec: &ClusterSpec, state: &ClusterState) -> Vec<usize> {
    let mut next = state.clone();
    super::run(spec, &mut next, &mut Recorder::off());
    evicted(&next)
}

fn evicted(state: &ClusterState) -> Vec<usize> {
    (1..=state.pods().len())
        .filter(|&p| state.pod(p).phase == PodPhase::Terminating)
        .collect()
}

/// RemoveDuplicates: node 3 holds pods 3, 4 and 5 of 5 over 3 nodes; Kivi keeps the first and
/// evicts pod 4, the real plugin any one of them.
#[test]
fn remove_duplicates_may_evict_any_of_a_nodes_pods() {
    let cluster = cases::c5();
    let (spec, state) = (&cluster.spec, &cluster.state);
    assert_eq!(kivis(spec, state), [4]);
    assert_eq!(
        every_outcome(spec, state),
        BTreeSet::from([vec![3], vec![4], vec![5]])
    );
}

/// Topology spread by hostname: nodes 1 and 2 hold two pods each, node 3 none; one pod moves
/// from one of the two equally full domains (Kivi: the first by value, node 1, and its first
/// pod), any pod of either under `any`.
#[test]
fn topology_spread_may_evict_from_any_equally_full_domain() {
    let cluster = cases::c8();
    let spec = &cluster.spec;
    let mut state = cluster.state.clone();
    for (pod, node) in [(1, 1), (2, 2), (3, 1), (4, 2)] {
        let p = state.pod_mut(pod);
        p.phase = PodPhase::Running;
        p.loc = node;
        p.template = 1;
        p.template_labels = true;
    }
    state.enqueue(Queue::Descheduler, 1);
    assert_eq!(kivis(spec, &state), [1]);
    assert_eq!(
        every_outcome(spec, &state),
        BTreeSet::from([vec![1], vec![2], vec![3], vec![4]])
    );
}
