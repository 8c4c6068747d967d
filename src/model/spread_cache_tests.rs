//! The scheduler's cached spread counts (`controllers::scheduler`'s `MatchingCache`) against
//! counts taken afresh, over the states a breadth-first search of the cases reaches: their
//! rollouts and reschedulings bind many pods in one scheduler step.

use crate::controllers::scheduler::schedule_and_compare;
use crate::model::test_cases::load;
use crate::model::ClusterModel;
use crate::scaler::{sweep::topology_model, template::Template, topology::Topology};

/// The node-failure benchmark model (a hard spread by hostname, rollouts and
/// reschedulings of many pods at a time) at `topology`.
pub(super) fn node_failures(topology: &str) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bench-configs/models/c3-four-node-failures.json");
    let json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let topology: Topology = topology.parse().unwrap();
    let template = Template::from_json(&json).unwrap();
    let template = template.admitting(&topology).unwrap();
    topology_model(&template, &topology, Default::default()).unwrap()
}

#[test]
fn cached_counts_follow_binds_as_fresh_counts_do() {
    let (mut compared, mut hard_compared) = (0, 0);
    let cases = [
        ("c3", "original"),
        ("c3", "original-non-violation"),
        ("c8", "original"),
    ];
    let models = cases
        .into_iter()
        .map(|(case, file)| load(case, file))
        .chain([node_failures("3,3:12")]);
    for model in models {
        // Breadth first: the early states hold the rollouts, whose steps bind many pods.
        let mut pending = std::collections::VecDeque::from([model.initial_state().clone()]);
        let mut actions = Vec::new();
        for _ in 0..20_000 {
            let Some(state) = pending.pop_front() else {
                break;
            };
            let (matching, hard) = schedule_and_compare(model.spec(), &state);
            compared += matching;
            hard_compared += hard;
            actions.clear();
            model.actions(&state, &mut actions);
            for action in &actions {
                if pending.len() < 10_000 {
                    pending.extend(model.next_state(&state, action));
                }
            }
        }
    }
    assert!(compared > 100, "only {compared} comparisons");
    assert!(hard_compared > 100, "only {hard_compared} of hard domains");
}
