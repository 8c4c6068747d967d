//! The cluster model on Kivi's cases C1–C4 at scale 3, explored with a small sequential search.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use kivi::cluster::{ClusterAction, ClusterModel, ClusterState};
use kivi::engine::model::Model;
use kivi::input::load_uniform_file;

fn load(name: &str) -> ClusterModel {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/cluster/{name}.json"));
    load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Breadth-first search that, like SPIN, does not continue past a violation: the number of
/// distinct states, and per violated property (in property order) its name and the shortest
/// path to it.
struct Search {
    states: usize,
    violations: Vec<(String, Vec<(ClusterAction, ClusterState)>)>,
}

fn search(model: &ClusterModel) -> Search {
    let props = model.properties();
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut parents: Vec<(usize, Option<ClusterAction>, ClusterState)> = Vec::new();
    let mut queue = VecDeque::new();
    let mut buf = Vec::new();
    let mut found: Vec<Option<Vec<(ClusterAction, ClusterState)>>> = vec![None; props.len()];
    for s in model.init_states() {
        buf.clear();
        model.encode(&s, &mut buf);
        seen.insert(buf.clone(), 0);
        parents.push((usize::MAX, None, s));
        queue.push_back(0);
    }
    let mut actions = Vec::new();
    while let Some(i) = queue.pop_front() {
        let state = parents[i].2;
        let mut violated = false;
        for p in 0..props.len() {
            if !model.holds(p, &state) {
                violated = true;
                if found[p].is_none() {
                    let mut path = Vec::new();
                    let mut j = i;
                    while let (parent, Some(a), s) = &parents[j] {
                        path.push((*a, *s));
                        j = *parent;
                    }
                    path.reverse();
                    found[p] = Some(path);
                }
            }
        }
        if violated {
            continue;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for a in &actions {
            let Some(next) = model.next_state(&state, a) else {
                continue;
            };
            buf.clear();
            model.encode(&next, &mut buf);
            if !seen.contains_key(&buf) {
                seen.insert(buf.clone(), parents.len());
                parents.push((i, Some(*a), next));
                queue.push_back(parents.len() - 1);
            }
        }
        assert!(seen.len() < 1_000_000, "state space too large");
    }
    Search {
        states: seen.len(),
        violations: props
            .iter()
            .zip(found)
            .filter_map(|(p, f)| f.map(|path| (p.name.clone(), path)))
            .collect(),
    }
}

fn replay_lines(model: &ClusterModel, path: &[(ClusterAction, ClusterState)]) -> Vec<String> {
    let init = *model.initial_state();
    let mut state = init;
    for (a, s) in path {
        let next = model.next_state(&state, a).expect("step replays");
        assert_eq!(next, *s, "replayed step {a:?} reaches the recorded state");
        state = next;
    }
    model.kivi_trace(&init, path)
}

#[test]
fn cases_give_kivi_verdicts() {
    for (case, intent) in [
        ("c1", "no_oscillation_replica_num"),
        ("c2", "replica_num_always_meet_min"),
        ("c3", "pod_always_schedulable"),
        ("c4", "no_kernel_panic"),
    ] {
        let model = load(case);
        let result = search(&model);
        for (name, path) in &result.violations {
            let lines = replay_lines(&model, path);
            eprintln!(
                "{case}: {name} after {} steps\n{}",
                path.len(),
                lines.join("\n")
            );
        }
        assert!(
            result.violations.iter().any(|(name, _)| name == intent),
            "{case} violates {intent}"
        );
    }
}

#[test]
fn non_violation_variants_are_clean() {
    for case in ["c1", "c2", "c3", "c4"] {
        let model = load(&format!("{case}-non-violation"));
        let result = search(&model);
        eprintln!("{case}-non-violation: {} states", result.states);
        if let Some((name, path)) = result.violations.first() {
            panic!(
                "{case}-non-violation violates {name}:\n{}",
                replay_lines(&model, path).join("\n")
            );
        }
    }
}
