//! The victim rules and the node choice against what `SelectVictimsOnNode` and
//! `pickOneNodeForPreemption` do on small clusters (the cases of
//! `default_preemption_test.go` and `preemption_test.go`, rebuilt on this snapshot).

use super::*;
use crate::cluster::kube::{
    Amount, Container, DisruptionStatus, LabelSelector, Node, PodPhase, ResourceList,
};

/// A ready node with `cpu` cores and room for 110 pods.
fn node(name: &str, cpu: u64) -> Node {
    let mut node = Node::new(name);
    node.allocatable
        .insert("cpu".into(), Amount::from_units(cpu));
    node.allocatable
        .insert("pods".into(), Amount::from_units(110));
    node
}

/// A pod requesting `cpu` cores with priority `priority`, running on `on` (pending if `None`),
/// labelled `app` = its name.
fn pod(name: &str, cpu: u64, priority: i32, on: Option<&str>) -> Pod {
    let mut pod = Pod::new("default", name);
    let mut requests = ResourceList::new();
    requests.insert("cpu".into(), Amount::from_units(cpu));
    pod.containers.push(Container {
        name: "main".into(),
        image: String::new(),
        requests,
        limits: ResourceList::new(),
        host_ports: Vec::new(),
        sidecar: false,
    });
    pod.labels.insert("app".into(), name.into());
    pod.priority = priority;
    pod.node_name = on.map(str::to_string);
    if on.is_some() {
        pod.phase = PodPhase::Running;
        pod.ready = true;
    }
    pod
}

/// A budget selecting pod `name` with `allowed` disruptions allowed.
fn budget(name: &str, allowed: i32) -> PodDisruptionBudget {
    let mut selector = LabelSelector::default();
    selector.match_labels.insert("app".into(), name.into());
    PodDisruptionBudget {
        namespace: "default".into(),
        name: name.into(),
        selector: Some(selector),
        min_available: None,
        max_unavailable: None,
        status: Some(DisruptionStatus {
            disruptions_allowed: allowed,
            current_healthy: 1,
            desired_healthy: 1,
            expected_pods: 1,
        }),
    }
}

/// The victims' names, in order.
fn names(candidate: &Candidate) -> Vec<&str> {
    candidate.victims.iter().map(|v| v.name.as_str()).collect()
}

fn snapshot(nodes: Vec<Node>, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        nodes,
        pods,
        ..Snapshot::default()
    }
}

#[test]
fn victims_are_reprieved_from_the_highest_priority_down() {
    // A full 4-core node: a (priority 1, 1 core), b (5, 2 cores), c (3, 1 core). Without them
    // all the 2-core preemptor fits; b goes back first and still leaves 2 cores, then c and a
    // each leave too little: they are the victims, most important first.
    let s = snapshot(
        vec![node("n1", 4)],
        vec![
            pod("a", 1, 1, Some("n1")),
            pod("b", 2, 5, Some("n1")),
            pod("c", 1, 3, Some("n1")),
        ],
    );
    let preemptor = pod("p", 2, 10, None);
    let candidate = select_victims_on_node(&s, &preemptor, &[], "n1").expect("victims");
    assert_eq!(names(&candidate), ["c", "a"]);
    let priorities: Vec<i32> = candidate.victims.iter().map(|v| v.priority).collect();
    assert_eq!(priorities, [3, 1]);
    assert_eq!(candidate.pdb_violations, 0);
    assert!(!candidate.start_times_may_decide, "no two share a priority");
}

#[test]
fn pods_whose_budget_would_break_are_reprieved_first() {
    // Two 2-core pods of equal priority fill the node; the preemptor needs one's room. In
    // order, a is reprieved and b is the victim; with b's budget allowing no disruption, b is
    // tried first and kept, and a is the victim, without a violation.
    let s = snapshot(
        vec![node("n1", 4)],
        vec![pod("a", 2, 1, Some("n1")), pod("b", 2, 1, Some("n1"))],
    );
    let preemptor = pod("p", 2, 10, None);
    let plain = select_victims_on_node(&s, &preemptor, &[], "n1").unwrap();
    assert_eq!(names(&plain), ["b"]);
    assert!(plain.start_times_may_decide, "a and b share priority 1");
    let kept = select_victims_on_node(&s, &preemptor, &[budget("b", 0)], "n1").unwrap();
    assert_eq!(names(&kept), ["a"]);
    assert_eq!(kept.pdb_violations, 0);
    // When both budgets allow nothing, one of them must break: counted as a violation.
    let both = [budget("a", 0), budget("b", 0)];
    let broken = select_victims_on_node(&s, &preemptor, &both, "n1").unwrap();
    assert_eq!(names(&broken), ["b"]);
    assert_eq!(broken.pdb_violations, 1);
}

#[test]
fn no_victims_where_no_pod_has_lower_priority_or_removing_them_does_not_help() {
    let s = snapshot(
        vec![node("n1", 4)],
        vec![pod("a", 2, 10, Some("n1")), pod("b", 1, 1, Some("n1"))],
    );
    // Equal priority is not lower: nothing to preempt for a priority-10 pod but b, and b's
    // core leaves 2 free, too few for 3.
    assert_eq!(
        select_victims_on_node(&s, &pod("p", 3, 10, None), &[], "n1"),
        None
    );
    assert_eq!(
        select_victims_on_node(&s, &pod("q", 1, 1, None), &[], "n1"),
        None,
        "a pod of priority 1 has no lower-priority pod to preempt"
    );
    let c = select_victims_on_node(&s, &pod("r", 2, 10, None), &[], "n1").unwrap();
    assert_eq!(names(&c), ["b"]);
}

#[test]
fn pods_are_told_apart_by_namespace_not_by_name() {
    // default/a and default/b (priority 1, 1 core each) and other/a (priority 20, 2 cores)
    // fill a 4-core node. A priority-10 pod of 2 cores needs both priority-1 pods gone:
    // putting default/a back must not also bring back or keep away other/a, whose name it
    // shares.
    let mut other = pod("a", 2, 20, Some("n1"));
    other.namespace = "other".into();
    let s = snapshot(
        vec![node("n1", 4)],
        vec![
            pod("a", 1, 1, Some("n1")),
            other,
            pod("b", 1, 1, Some("n1")),
        ],
    );
    let candidate = select_victims_on_node(&s, &pod("p", 2, 10, None), &[], "n1").unwrap();
    assert_eq!(names(&candidate), ["a", "b"]);
    assert!(candidate.victims.iter().all(|v| v.namespace == "default"));
}

#[test]
fn preemption_policy_never_is_not_eligible() {
    let mut p = pod("p", 1, 10, None);
    let s = snapshot(vec![node("n1", 4)], Vec::new());
    let unschedulable = |_: &str| Code::Unschedulable;
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::Eligible
    );
    p.preemption_policy = PreemptionPolicy::Never;
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::Never
    );
}

#[test]
fn only_the_nominated_nodes_terminating_pods_of_lower_priority_make_a_pod_wait() {
    // n1 holds a terminating pod of priority 1, n2 one of priority 20 and a running one of
    // priority 1. p (priority 10) nominated to n2 may preempt again: n2's terminating pod is
    // not of lower priority, n1's is not on its nominated node. Nominated to n1 it waits,
    // unless the filters found n1 UnschedulableAndUnresolvable; nominated nowhere it may
    // preempt.
    let mut low = pod("low", 1, 1, Some("n1"));
    low.terminating = true;
    low.terminating_by_preemption = true;
    let mut high = pod("high", 1, 20, Some("n2"));
    high.terminating = true;
    high.terminating_by_preemption = true;
    let s = snapshot(
        vec![node("n1", 4), node("n2", 4)],
        vec![low, high, pod("other", 1, 1, Some("n2"))],
    );
    let unschedulable = |_: &str| Code::Unschedulable;
    let mut p = pod("p", 1, 10, None);
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::Eligible
    );
    p.nominated_node_name = Some("n2".into());
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::Eligible
    );
    p.nominated_node_name = Some("n1".into());
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::AwaitsNominatedNode("n1".into())
    );
    assert_eq!(
        eligible_to_preempt(&s, &p, |_| Code::UnschedulableAndUnresolvable),
        Eligibility::Eligible
    );
    p.nominated_node_name = Some("gone".into());
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::Eligible
    );
}

/// `podTerminatingByPreemption`: a pod of lower priority terminating on the nominated node
/// for another reason (scaled down, evicted) does not make the pod wait; one a preemption
/// deleted does.
#[test]
fn only_pods_a_preemption_deleted_make_a_nominated_pod_wait() {
    let mut leaving = pod("leaving", 1, 1, Some("n1"));
    leaving.terminating = true;
    let mut p = pod("p", 1, 10, None);
    p.nominated_node_name = Some("n1".into());
    let unschedulable = |_: &str| Code::Unschedulable;
    let s = snapshot(vec![node("n1", 4)], vec![leaving.clone()]);
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::Eligible
    );
    leaving.terminating_by_preemption = true;
    let s = snapshot(vec![node("n1", 4)], vec![leaving]);
    assert_eq!(
        eligible_to_preempt(&s, &p, unschedulable),
        Eligibility::AwaitsNominatedNode("n1".into())
    );
}

fn candidate(node: &str, priorities: &[i32], pdb_violations: usize) -> Candidate {
    Candidate {
        node: node.into(),
        victims: priorities
            .iter()
            .map(|&priority| Victim {
                namespace: "default".into(),
                name: format!("{node}-{priority}"),
                priority,
            })
            .collect(),
        pdb_violations,
        start_times_may_decide: false,
    }
}

fn picked(candidates: &[Candidate]) -> (Vec<&str>, Option<Criterion>) {
    let nomination = pick_one_node(candidates);
    let nodes = nomination.nodes.iter().map(|c| c.node.as_str()).collect();
    (nodes, nomination.decided_by)
}

#[test]
fn pick_one_node_follows_the_criteria_in_order() {
    use Criterion::*;
    // 1. Fewest budget violations, whatever the priorities.
    assert_eq!(
        picked(&[candidate("n1", &[1], 1), candidate("n2", &[100], 0)]),
        (vec!["n2"], Some(PdbViolations))
    );
    // 2. The lowest highest-victim priority, even with more victims.
    assert_eq!(
        picked(&[candidate("n1", &[5], 0), candidate("n2", &[3, 3, 3], 0)]),
        (vec!["n2"], Some(HighestPriority))
    );
    // 3. The smallest sum, shifted to be non-negative: two victims at -10 sum higher than
    // one at -10.
    assert_eq!(
        picked(&[candidate("n1", &[-10, -10], 0), candidate("n2", &[-10], 0)]),
        (vec!["n2"], Some(PrioritySum))
    );
    assert_eq!(
        picked(&[candidate("n1", &[5, 4], 0), candidate("n2", &[5, 1], 0)]),
        (vec!["n2"], Some(PrioritySum))
    );
    // 4. The fewest victims: a victim at the lowest priority adds 0 to the shifted sum.
    assert_eq!(
        picked(&[candidate("n1", &[5, i32::MIN], 0), candidate("n2", &[5], 0)]),
        (vec!["n2"], Some(VictimCount))
    );
    // Equal on every criterion (the start-time one is not modelled): all are returned, in
    // order, for the caller to choose from; one candidate alone is decided by none.
    assert_eq!(
        picked(&[candidate("n1", &[2], 0), candidate("n2", &[2], 0)]),
        (vec!["n1", "n2"], None)
    );
    assert_eq!(picked(&[candidate("n1", &[2], 0)]), (vec!["n1"], None));
}

/// The top-scored nodes for `pod` in `s`, or the FitError when none fits.
fn placed(s: &Snapshot, pod: &Pod) -> Result<Vec<String>, String> {
    let decision = Scheduler::new(s).decide(pod);
    if decision.top.is_empty() {
        Err(decision.fit_error.unwrap_or_default())
    } else {
        Ok(decision.top)
    }
}

#[test]
fn a_pod_nominated_to_a_node_keeps_its_room_from_pods_of_lower_or_equal_priority() {
    // n1 has 1 core free, n2 2 (a preemption freed them for p, nominated there). q (1 core,
    // priority 10) would score n2 higher; with p (2 cores, priority 10) added n2 is full, so q
    // goes to n1. A p of lower priority reserves nothing for q, and p itself is not added when
    // it is the pod filtered: it goes to its nominated node.
    let mut p = pod("p", 2, 10, None);
    p.nominated_node_name = Some("n2".into());
    let q = pod("q", 1, 10, None);
    let running = vec![pod("x", 3, 20, Some("n1")), pod("y", 2, 20, Some("n2"))];
    let nodes = || vec![node("n1", 4), node("n2", 4)];
    let alone = snapshot(nodes(), [running.clone(), vec![q.clone()]].concat());
    assert_eq!(placed(&alone, &q), Ok(vec!["n2".to_string()]));
    let reserved = snapshot(
        nodes(),
        [running.clone(), vec![p.clone(), q.clone()]].concat(),
    );
    assert_eq!(placed(&reserved, &q), Ok(vec!["n1".to_string()]));
    assert_eq!(placed(&reserved, &p), Ok(vec!["n2".to_string()]));
    let decision = Scheduler::new(&reserved).decide(&q);
    assert_eq!(
        decision.rejected["n2"][0].reason, "Insufficient cpu",
        "the pass with p added rejects n2"
    );
    let mut lower = p.clone();
    lower.priority = 5;
    let unreserved = snapshot(nodes(), [running.clone(), vec![lower, q.clone()]].concat());
    assert_eq!(placed(&unreserved, &q), Ok(vec!["n2".to_string()]));
    // With n1 full too, q fits nowhere, and may not preempt on n2 for room p holds.
    let mut full = running;
    full[0] = pod("x", 4, 20, Some("n1"));
    let held = snapshot(nodes(), [full, vec![p, q.clone()]].concat());
    let error = placed(&held, &q).unwrap_err();
    assert!(error.contains("2 Insufficient cpu"), "{error}");
}

#[test]
fn the_nominated_node_is_taken_when_it_fits_though_another_scores_higher() {
    // n1 is empty, n2 half used: p would score n1 higher, but its nominated n2 fits and no
    // other node is scored.
    let mut p = pod("p", 1, 10, None);
    let s = || {
        snapshot(
            vec![node("n1", 4), node("n2", 4)],
            vec![pod("y", 2, 20, Some("n2"))],
        )
    };
    assert_eq!(placed(&s(), &p), Ok(vec!["n1".to_string()]));
    p.nominated_node_name = Some("n2".into());
    let decision = Scheduler::new(&s()).decide(&p);
    assert_eq!(decision.top, ["n2"]);
    assert!(!decision.scoring_run_by_scheduler);
}

/// The victims' names of each set, in order.
fn victim_names(sets: &[Candidate]) -> Vec<Vec<&str>> {
    sets.iter()
        .map(|c| c.victims.iter().map(|v| v.name.as_str()).collect())
        .collect()
}

/// `MoreImportantPod` orders pods of equal priority by start time, which the model does not
/// know: on a full 5-core node holding two 2-core pods of priority 1 and a 1-core pod of
/// priority 5, a 2-core preemptor deletes whichever of the two started last, so both are
/// victim sets; the priority-5 pod is reprieved first in every order.
#[test]
fn start_times_make_each_pod_of_equal_priority_a_possible_victim() {
    let s = snapshot(
        vec![node("n1", 5)],
        vec![
            pod("a", 2, 1, Some("n1")),
            pod("b", 2, 1, Some("n1")),
            pod("c", 1, 5, Some("n1")),
        ],
    );
    let p = pod("p", 2, 10, None);
    let sets = victim_sets_on_node(&s, &p, &[], "n1", 100);
    assert_eq!(victim_names(&sets.candidates), [vec!["b"], vec!["a"]]);
    assert!(!sets.cut);
    assert_eq!(
        select_victims_on_node(&s, &p, &[], "n1").map(|c| c.victims[0].name.clone()),
        Some("b".to_string()),
        "the snapshot's order: b listed last, so b is the victim"
    );
    // Alike pods (one class): one order, and each choice of the pod that started last.
    let mut alike = s.clone();
    for pod in &mut alike.pods {
        pod.labels.insert("app".into(), "same".into());
    }
    let sets = victim_sets_on_node(&alike, &p, &[], "n1", 100);
    assert_eq!(victim_names(&sets.candidates), [vec!["b"], vec!["a"]]);
    // Too many to list: the first set, and the cut said.
    let sets = victim_sets_on_node(&s, &p, &[], "n1", 1);
    assert_eq!(victim_names(&sets.candidates), [vec!["b"]]);
    assert!(sets.cut);
}

/// Orders that reach the same victims are one set: two 2-core pods under a budget allowing
/// one disruption, a 4-core preemptor: whichever started first, both go, and the one past
/// the budget's allowance breaks it.
#[test]
fn orders_that_reach_the_same_victims_are_one_set() {
    let mut s = snapshot(
        vec![node("n1", 4)],
        vec![pod("a", 2, 1, Some("n1")), pod("b", 2, 1, Some("n1"))],
    );
    for pod in &mut s.pods {
        pod.labels.insert("team".into(), "x".into());
    }
    let mut shared = budget("x", 1);
    shared.selector.as_mut().unwrap().match_labels = [("team".to_string(), "x".to_string())]
        .into_iter()
        .collect();
    let p = pod("p", 4, 10, None);
    let sets = victim_sets_on_node(&s, &p, &[shared], "n1", 100);
    let mut names = victim_names(&sets.candidates);
    names[0].sort_unstable();
    assert_eq!(names, [vec!["a", "b"]]);
    assert_eq!(sets.candidates[0].pdb_violations, 1);
}

/// `pickOneNodeForPreemption` over nodes whose victim sets depend on start times: a set is
/// picked when every other node has some set no better. n1 deletes one pod of priority 1 or
/// one of priority 3 (by start times); n2 one of priority 2. n1's priority-1 set beats n2; n2
/// beats n1's priority-3 set; both may be picked, but not n1's worse set.
#[test]
fn a_node_is_picked_when_every_other_node_may_do_no_better() {
    let set = |node: &str, priorities: &[i32]| Candidate {
        node: node.into(),
        victims: priorities
            .iter()
            .map(|&priority| Victim {
                namespace: "default".into(),
                name: format!("{node}-{priority}"),
                priority,
            })
            .collect(),
        pdb_violations: 0,
        start_times_may_decide: true,
    };
    let per_node = vec![
        vec![set("n1", &[1]), set("n1", &[3])],
        vec![set("n2", &[2])],
    ];
    let picked: Vec<&str> = possible_picks(&per_node, usize::MAX)
        .iter()
        .map(|c| c.victims[0].name.as_str())
        .collect();
    assert_eq!(picked, ["n1-1", "n2-2"]);
    // The dry run stops at `enough` candidates: with 2, n2 may be picked (checked with n3,
    // not n1), n3 may not (each other node does better); a set breaking a budget only where
    // it is the best of all.
    let three = vec![
        vec![set("n1", &[1])],
        vec![set("n2", &[2])],
        vec![set("n3", &[3])],
    ];
    let picked = |per_node: &[Vec<Candidate>], enough| -> Vec<String> {
        possible_picks(per_node, enough)
            .iter()
            .map(|c| c.victims[0].name.clone())
            .collect()
    };
    assert_eq!(picked(&three, usize::MAX), ["n1-1"]);
    assert_eq!(picked(&three, 3), ["n1-1"]);
    assert_eq!(picked(&three, 2), ["n1-1", "n2-2"]);
    let mut breaking = three.clone();
    breaking[1][0].pdb_violations = 1;
    breaking[0][0].pdb_violations = 1;
    assert_eq!(picked(&breaking, 2), ["n3-3"], "n3 alone breaks no budget");
    let single = vec![vec![set("n1", &[1])], vec![set("n2", &[2])]];
    let candidates: Vec<Candidate> = single.iter().flatten().cloned().collect();
    assert_eq!(
        possible_picks(&single, usize::MAX).len(),
        pick_one_node(&candidates).nodes.len(),
        "one set a node: the nodes pick_one_node leaves"
    );
}

/// `calculateNumCandidates` with `minCandidateNodesPercentage` 10 and
/// `minCandidateNodesAbsolute` 100: every node up to 100, then 100 up to 1,000, then 10 %.
#[test]
fn the_dry_run_collects_ten_percent_of_the_nodes_and_at_least_100() {
    let found: Vec<usize> = [50, 100, 500, 1_000, 5_000]
        .into_iter()
        .map(candidates_to_find)
        .collect();
    assert_eq!(found, [50, 100, 100, 100, 500]);
}

/// Ten 1-core pods of ten workloads at one priority fill a node; a 3-core preemptor deletes
/// the three that started last, any three: C(10, 3) = 120 sets, found by the search over
/// counts (10! orders would be cut).
#[test]
fn every_choice_of_the_pods_that_started_last_is_a_victim_set() {
    let pods: Vec<Pod> = (0..10)
        .map(|i| pod(&format!("w{i}"), 1, 0, Some("n1")))
        .collect();
    let s = snapshot(vec![node("n1", 10)], pods);
    let sets = victim_sets_on_node(&s, &pod("p", 3, 10, None), &[], "n1", 4096);
    assert!(!sets.cut);
    assert_eq!(sets.candidates.len(), 120);
    assert!(sets.candidates.iter().all(|c| c.victims.len() == 3));
}

/// Every permutation of `items`, in any order.
fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first.clone());
            all.push(tail);
        }
    }
    all
}

/// The victim sets on random small nodes against every start-time order run one by one: each
/// permutation of the pods within their runs of equal priority, through `SelectVictimsOnNode`.
/// Pods draw their size, priority and workload (their labels, so some are alike) from small
/// ranges; half the nodes have a budget over one workload.
#[test]
fn victim_sets_are_those_of_every_start_time_order() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut draw = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let (mut several, mut budgeted) = (0, 0);
    for case in 0..200 {
        let count = 2 + draw(5) as usize;
        let pods: Vec<Pod> = (0..count)
            .map(|i| {
                let mut p = pod(&format!("p{i}"), 1 + draw(2), draw(2) as i32, Some("n1"));
                p.labels.insert("app".into(), format!("w{}", draw(3)));
                p
            })
            .collect();
        let used: u64 = pods
            .iter()
            .map(|p| p.containers[0].requests["cpu"].value() as u64)
            .sum();
        let s = snapshot(vec![node("n1", used)], pods);
        let preemptor = pod("new", 1 + draw(3), 10, None);
        let budgets: Vec<PodDisruptionBudget> = if draw(2) == 0 {
            vec![budget("w0", draw(2) as i32)]
        } else {
            Vec::new()
        };
        let name_set = |c: &Candidate| {
            let mut names: Vec<String> = c.victims.iter().map(|v| v.name.clone()).collect();
            names.sort();
            names
        };
        let mut expected: Vec<Vec<String>> = Vec::new();
        if let Some(potential) = potential_victims(&s, &preemptor, "n1") {
            let runs: Vec<Vec<&Pod>> = potential
                .chunk_by(|a, b| a.priority == b.priority)
                .map(<[&Pod]>::to_vec)
                .collect();
            let mut orders: Vec<Vec<&Pod>> = vec![Vec::new()];
            for run in &runs {
                orders = orders
                    .iter()
                    .flat_map(|prefix| {
                        permutations(run).into_iter().map(move |tail| {
                            let mut order = prefix.clone();
                            order.extend(tail);
                            order
                        })
                    })
                    .collect();
            }
            for order in orders {
                let names = name_set(&victims_in_order(&s, &preemptor, &budgets, "n1", &order));
                if !expected.contains(&names) {
                    expected.push(names);
                }
            }
        }
        let sets = victim_sets_on_node(&s, &preemptor, &budgets, "n1", 4096);
        assert!(!sets.cut);
        let mut got: Vec<Vec<String>> = sets.candidates.iter().map(name_set).collect();
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "case {case}: {:?}", s.pods);
        several += usize::from(expected.len() > 1);
        budgeted += usize::from(expected.len() > 1 && !budgets.is_empty());
    }
    assert!(
        several >= 80 && budgeted >= 30,
        "{several} nodes with several sets, {budgeted} with a budget"
    );
}
