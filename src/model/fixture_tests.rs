//! The cluster layer's fixtures (`cluster::fixture::cases`), which the unit tests of the
//! controllers, events and intents use instead of the case files, against those files as the
//! loader reads them: the same spec and the same initial state, so that those tests test what
//! the cases are.

use crate::cluster::fixture::{cases, Fixture};
use crate::cluster::{ClusterState, Queue};
use crate::model::test_cases::load;

/// A case file, and the fixture that mirrors it.
type Case = (&'static str, &'static str, fn() -> Fixture);

/// What a state holds, in a form whose difference an assertion shows.
fn described(state: &ClusterState) -> String {
    let queues: Vec<_> = [
        Queue::Scheduler,
        Queue::Kubelet,
        Queue::Deployment,
        Queue::Hpa,
        Queue::Node,
        Queue::Taint,
        Queue::Descheduler,
    ]
    .into_iter()
    .map(|queue| (queue, state.pending(queue).to_vec()))
    .collect();
    format!(
        "nodes {:?}\npods {:?}\ndeployments {:?}\nclock {:?}\nevents {:?}\nmonitors {:?}\n\
         queues {queues:?}",
        state.nodes(),
        state.pods(),
        state.deployments(),
        state.clock(),
        state.events(),
        state.monitors(),
    )
}

#[test]
fn each_fixture_is_its_case_file_as_loaded() {
    let fixtures: [Case; 9] = [
        ("c1", "original", cases::c1),
        ("c2", "original", cases::c2),
        ("c3", "original", cases::c3),
        ("c3", "original-non-violation", cases::c3_non_violation),
        ("c4", "original", cases::c4),
        ("c5", "original", cases::c5),
        ("c6", "original", cases::c6),
        ("c7", "original", cases::c7),
        ("c8", "original", cases::c8),
    ];
    for (case, file, fixture) in fixtures {
        let model = load(case, file);
        let fixture = fixture();
        assert_eq!(&fixture.spec, model.spec(), "{case}/{file}: the spec");
        assert_eq!(
            described(&fixture.state),
            described(model.initial_state()),
            "{case}/{file}: the initial state"
        );
        let (mut built, mut loaded) = (Vec::new(), Vec::new());
        fixture.state.encode(&mut built);
        model.initial_state().encode(&mut loaded);
        assert_eq!(built, loaded, "{case}/{file}: the encoded initial state");
    }
}
