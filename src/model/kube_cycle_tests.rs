//! The kube-scheduler cycle a worker takes with its kept snapshot and last cycle
//! ([`CycleCache`]) against the snapshot and cycle taken afresh, over the states
//! breadth-first searches reach under `--semantics kubernetes`: one cache follows the states
//! in the search's order, so that consecutive states differ in many records (nodes failing
//! and tainted, pods created in freed slots, bound, deleted), and each outcome of a step is
//! taken with the cache its listing left; with an autoscaler adding and deleting nodes; and
//! with pods preempting, nominated to nodes and bound there.

use super::kube_scheduling::{cycle, CycleCache};
use super::spread_cache_tests::node_failures;
use super::test_cases::{load, load_edited};
use super::{ClusterModel, ModelOptions};
use crate::cluster::kube::incremental::IncrementalSnapshot;
use crate::cluster::kube::of_model::snapshot;
use crate::cluster::{Semantics, TieBreak};

/// `model` under kube-scheduler's rules, every tie an outcome.
fn kubernetes(model: ClusterModel) -> ClusterModel {
    model.with_options(ModelOptions {
        tie_break: TieBreak::Any,
        semantics: Semantics::Kubernetes,
        symmetry: false,
        ..Default::default()
    })
}

/// Adds to a case's `document` a DaemonSet of a small template of its own.
fn add_daemon_set(document: &mut serde_json::Value) {
    let templates = document["setup"]["podTemplates"].as_array_mut().unwrap();
    templates.push(serde_json::json!({
        "cpuRequested": 1,
        "memRequested": 1,
        "labels": {"app": "agent"},
    }));
    document["daemonSets"] =
        serde_json::json!([{"name": "agent", "podTemplateId": templates.len()}]);
}

/// `model`, checked to have placed a DaemonSet pod on every node.
fn with_daemon_set(model: ClusterModel) -> ClusterModel {
    assert_eq!(model.spec().daemon_pods.len(), model.spec().nodes.len());
    model
}

/// A cluster whose autoscaler adds and deletes nodes: a snapshot may then hold as many
/// nodes as the one before and not the same ones.
fn autoscaled() -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/autoscaler-model/group-per-zone.json");
    crate::input::load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// A model of `tests/data/preemption` whose pods preempt: its states nominate pods to nodes,
/// which the snapshot's Pods carry.
fn preempting(name: &str) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/data/preemption/{name}.json"));
    crate::input::load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn kept_snapshots_and_cycles_equal_fresh_ones() {
    let models = [
        kubernetes(node_failures("2,2:6")),
        kubernetes(load("c4", "original")),
        kubernetes(load("c5", "original")),
        kubernetes(load("c8", "original")),
        with_daemon_set(kubernetes(load_edited("c5", "original", add_daemon_set))),
        kubernetes(autoscaled()),
        kubernetes(preempting("equal-priority-takes-room")),
        kubernetes(preempting("nominated-node-or-equal")),
    ];
    let (mut compared, mut changed, mut cycles, mut nominated) = (0, 0, 0, 0);
    for model in models {
        let spec = model.spec();
        let mut kept = IncrementalSnapshot::new();
        let mut cache = CycleCache::default();
        let mut last_generation = 0;
        let mut pending = std::collections::VecDeque::from([model.initial_state().clone()]);
        let mut actions = Vec::new();
        for _ in 0..3_000 {
            let Some(state) = pending.pop_front() else {
                break;
            };
            let (incremental, generation) = kept.update(spec, &state);
            assert_eq!(*incremental, snapshot(spec, &state), "{state:?}");
            changed += usize::from(generation != last_generation);
            last_generation = generation;
            compared += 1;
            nominated += usize::from(state.nominations().any(|node| node != 0));
            let fresh = cycle(spec, &state, &mut CycleCache::default()).cloned();
            assert_eq!(cycle(spec, &state, &mut cache).cloned(), fresh, "{state:?}");
            cycles += usize::from(fresh.is_some());
            actions.clear();
            model.actions(&state, &mut actions);
            for action in &actions {
                if pending.len() < 10_000 {
                    pending.extend(model.next_state(&state, action));
                }
            }
        }
    }
    assert!(compared > 5_000, "only {compared} states");
    assert!(changed > 1_000, "only {changed} snapshots changed");
    assert!(cycles > 1_000, "only {cycles} cycles");
    assert!(nominated > 10, "only {nominated} states with a nomination");
}
