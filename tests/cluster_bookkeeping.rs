//! The cluster state's incremental bookkeeping agrees, at every step of random runs of random
//! clusters, with the same values recomputed from the pods: what the controllers keep up to
//! date as they go (each node's pod count, free CPU and free memory; each replica set's size;
//! the queue flags in pod and node records) never drifts from what the records say.
//!
//! Random clusters are the eight cases' scaling templates, both variants, at random topologies;
//! random runs take a random enabled step at a time, up to a bound or a dead end.

use kivi::cases::CASES;
use kivi::cluster::{ClusterAction, ClusterSpec, ClusterState, PodPhase, Queue};
use kivi::model::ClusterModel;
use kivi::scaler::template::Template;
use proptest::prelude::*;

use crate::support;

/// Per node: placed pods, their CPU and their memory (pods that hold a node: not idle, bound).
fn placed(state: &ClusterState, nodes: usize) -> Vec<(i32, i32, i32)> {
    let mut per_node = vec![(0, 0, 0); nodes + 1];
    for pod in state.pods() {
        let node = pod.loc as usize;
        if pod.phase != PodPhase::Idle && (1..=nodes).contains(&node) {
            let slot = &mut per_node[node];
            *slot = (
                slot.0 + 1,
                slot.1 + pod.cpu as i32,
                slot.2 + pod.memory as i32,
            );
        }
    }
    per_node
}

/// What is conserved per node as pods come and go: the kept count plus the placed pods, and
/// the free CPU and memory plus what the placed pods use. Inputs may start inconsistent (as
/// Kivi's dumps can), so these are compared with their initial values, not with zero.
fn node_balances(spec: &ClusterSpec, state: &ClusterState) -> Vec<(i32, i32, i32)> {
    let per_node = placed(state, spec.nodes.len());
    (1..=spec.nodes.len())
        .map(|n| {
            let node = state.node(n);
            let (pods, cpu, memory) = per_node[n];
            (
                node.num_pods as i32 - pods,
                node.cpu_left as i32 + cpu,
                node.mem_left as i32 + memory,
            )
        })
        .collect()
}

/// Checks the bookkeeping that must agree exactly with the records; a description of the
/// first disagreement.
fn exact_bookkeeping(state: &ClusterState) -> Result<(), String> {
    for (i, dep) in state.deployments().iter().enumerate() {
        let d = i + 1;
        for version in 0..2 {
            let members = state.replica_set_members(d, version).count() as i32;
            let kept = { dep.replica_sets[version].replicas };
            if kept != members {
                return Err(format!(
                    "deployment {d} replica set {version}: {kept} kept, {members} members"
                ));
            }
        }
    }
    for (queue, bit) in [
        (Queue::Scheduler, 1u8),
        (Queue::Kubelet, 2),
        (Queue::Taint, 4),
    ] {
        let pending = state.pending(queue);
        for (i, pod) in state.pods().iter().enumerate() {
            let id = (i + 1) as u32;
            let flagged = pod.queued & bit != 0;
            let queued = pending.contains(&id);
            if flagged != queued {
                return Err(format!(
                    "pod {id}: {queue:?} flag {flagged}, in the queue {queued}"
                ));
            }
        }
        let mut sorted = pending.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != pending.len() {
            return Err(format!("{queue:?} holds a pod twice: {pending:?}"));
        }
    }
    let nodes_pending = state.pending(Queue::Node);
    for (i, node) in state.nodes().iter().enumerate() {
        let id = (i + 1) as u32;
        if node.queued != nodes_pending.contains(&id) {
            return Err(format!("node {id}: queue flag {}", node.queued));
        }
    }
    Ok(())
}

/// The model of case `case` (variant `non_violation`) at `nodes` per node type and
/// `replicas` per deployment type.
fn random_cluster(case: usize, non_violation: bool, nodes: u64, replicas: u64) -> ClusterModel {
    let document = CASES[case].document(false, non_violation);
    let template = Template::from_json(&serde_json::from_str(document).unwrap()).unwrap();
    support::cluster_at(&template, nodes, replicas, Default::default())
}

/// Walks `choices.len()` random steps from the initial state, checking the bookkeeping after
/// each; the number of steps taken (a walk ends early at a state without steps).
fn walk(model: &ClusterModel, choices: &[usize]) -> Result<usize, TestCaseError> {
    let spec = model.spec();
    let mut state = model.initial_state().clone();
    exact_bookkeeping(&state).map_err(|e| TestCaseError::fail(format!("initially: {e}")))?;
    let balances = node_balances(spec, &state);
    let mut actions: Vec<ClusterAction> = Vec::new();
    for (step, &choice) in choices.iter().enumerate() {
        actions.clear();
        model.actions(&state, &mut actions);
        if actions.is_empty() {
            return Ok(step);
        }
        let action = &actions[choice % actions.len()];
        state = model
            .next_state(&state, action)
            .expect("every action steps");
        exact_bookkeeping(&state)
            .map_err(|e| TestCaseError::fail(format!("after step {step} ({action:?}): {e}")))?;
        prop_assert_eq!(
            &node_balances(spec, &state),
            &balances,
            "node balances after step {} ({:?})",
            step,
            action
        );
    }
    Ok(choices.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn incremental_bookkeeping_matches_the_records_at_every_step(
        case in 0..CASES.len(),
        non_violation in any::<bool>(),
        nodes in 1u64..4,
        replicas in 1u64..7,
        choices in prop::collection::vec(any::<usize>(), 1..120),
    ) {
        let model = random_cluster(case, non_violation, nodes, replicas);
        walk(&model, &choices)?;
    }
}

/// The walks reach the steps that change the bookkeeping: on C3 (spread, HPA, CPU change) a
/// walk that always takes the first enabled step schedules, starts and scales pods.
#[test]
fn walks_reach_scheduling_and_scaling() {
    let model = random_cluster(2, false, 2, 3);
    let mut state = model.initial_state().clone();
    let mut actions = Vec::new();
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..60 {
        actions.clear();
        model.actions(&state, &mut actions);
        let Some(action) = actions.first() else {
            break;
        };
        kinds.insert(format!("{action:?}"));
        state = model.next_state(&state, action).unwrap();
    }
    for kind in ["Scheduler", "Kubelet", "DeploymentController"] {
        assert!(kinds.contains(kind), "{kind} not taken: {kinds:?}");
    }
}
