//! Which pods a preemption deletes, and where, when what the model does not know decides:
//! the pods' start times and the dry run's random offset, for `--tie-break any`.
//!
//! `SelectVictimsOnNode` takes a node's pods of lower priority most important first
//! (`MoreImportantPod` in `pkg/scheduler/util/utils.go`: the higher priority, then the earlier
//! start time) and puts them back in that order, so among pods of equal priority the start
//! times decide which stay; `pickOneNodeForPreemption` then compares the start times of the
//! candidates' highest-priority victims after its other criteria. The model keeps no start
//! times, so under `--tie-break any` every order of a node's pods of equal priority is a run
//! Kubernetes may take, and so is every pick among the nodes those orders allow.
//!
//! Orders are enumerated by *class*: pods alike in everything a filter or a budget reads (all
//! but their name and uid) are interchangeable in `SelectVictimsOnNode`, so only the distinct
//! sequences of classes are run; which pods of a class are the victims is then any choice of
//! as many of them (those that started last), and each choice is listed
//! ([`victim_sets_on_node`]). Where no pod can break a budget (the usual case) the reprieve is
//! one pass whose next step depends only on how many pods of each class it has taken and put
//! back, so a search over those counts replaces the orders ([`victims_per_class`]): a node
//! of ten pods of different workloads at one priority takes a few hundred steps, not 10!
//! orders. Start times on different nodes are independent, so a victim set
//! of one node may be picked exactly when every other node has an order whose candidate is no
//! better by the criteria in turn ([`possible_picks`]).
//!
//! The dry run (`DryRunPreemption` in `preemption.go`) checks the nodes where preemption might
//! help from a random offset, in parallel, and stops once it holds `calculateNumCandidates`
//! candidates (10 % of those nodes, at least 100: [`candidates_to_find`]) with one that breaks
//! no budget; `pickOneNodeForPreemption` sees only those. Past 100 nodes a node may be picked
//! because better ones were never checked: [`possible_picks`] allows it whenever enough other
//! nodes may do no better (any set of that many, a superset of the windows an offset and the
//! workers' timing give).

use super::{
    fits_without, potential_victims, split_by_budget_violation, victims_in_order, Candidate,
    Criterion, Victim,
};
use crate::cluster::kube::{Pod, PodDisruptionBudget, Snapshot};
use std::collections::{HashMap, HashSet};

/// The victim sets one node may give.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VictimSets {
    /// Each distinct set, the one of the snapshot's order first.
    pub candidates: Vec<Candidate>,
    /// Whether there were more orders or sets than the limit allowed: some were left out.
    pub cut: bool,
}

/// Every victim set `SelectVictimsOnNode` may choose on `node` for some start times of its
/// pods (none when preemption does not help there), at most `limit` sets listed and, where a
/// budget is in play, `limit` orders of classes run.
pub fn victim_sets_on_node(
    snapshot: &Snapshot,
    pod: &Pod,
    budgets: &[PodDisruptionBudget],
    node: &str,
    limit: usize,
) -> VictimSets {
    let mut sets = VictimSets::default();
    let Some(potential) = potential_victims(snapshot, pod, node) else {
        return sets;
    };
    let (class_of, members) = classes(&potential);
    let runs = equal_priority_runs(&potential);
    let mut seen: HashSet<Vec<String>> = HashSet::new();
    let first = victims_in_order(snapshot, pod, budgets, node, &potential);
    seen.insert(names(&first.victims));
    let start_times_may_decide = first.start_times_may_decide;
    sets.candidates.push(first);
    let classes = Classes {
        pods: &potential,
        of: &class_of,
        members: &members,
    };
    if split_by_budget_violation(&potential, budgets).0.is_empty() {
        // No budget selects more of these pods than it allows: none breaks one in any order.
        let (outcomes, cut) = victims_per_class(snapshot, pod, node, &classes, &runs, limit);
        for kept in outcomes {
            let found = Candidate {
                node: node.to_string(),
                victims: classes.first_victims(&kept),
                pdb_violations: 0,
                start_times_may_decide,
            };
            if !every_choice_of_victims(&classes, found, limit, &mut seen, &mut sets) {
                sets.cut = true;
                return sets;
            }
        }
        sets.cut |= cut;
        return sets;
    }
    let mut sequence = class_of.clone();
    for &(start, end) in &runs {
        sequence[start..end].sort_unstable();
    }
    let mut orders = 0;
    loop {
        if orders == limit {
            sets.cut = true;
            return sets;
        }
        orders += 1;
        let order = concrete_order(&potential, &members, &sequence);
        let found = victims_in_order(snapshot, pod, budgets, node, &order);
        if !every_choice_of_victims(&classes, found, limit, &mut seen, &mut sets) {
            sets.cut = true;
            return sets;
        }
        if !next_sequence(&mut sequence, &runs) {
            return sets;
        }
    }
}

/// A node's pods of lower priority in importance order, by class.
struct Classes<'a, 's> {
    pods: &'a [&'s Pod],
    /// Each pod's class.
    of: &'a [usize],
    /// Each class's pods, as positions in `pods`, ascending.
    members: &'a [Vec<usize>],
}

impl Classes<'_, '_> {
    /// The victims when `kept[c]` pods of each class `c` are put back: the first ones of each
    /// class are kept, the rest deleted, most important first.
    fn first_victims(&self, kept: &[usize]) -> Vec<Victim> {
        let mut deleted: Vec<usize> = self
            .members
            .iter()
            .enumerate()
            .flat_map(|(c, pods)| pods[kept[c]..].iter().copied())
            .collect();
        deleted.sort_unstable();
        deleted.iter().map(|&i| victim(self.pods[i])).collect()
    }
}

/// The reprieve without budgets, for every order of the pods of equal priority: one pass, and
/// what it does next depends only on how many pods of each class it has taken and put back
/// (alike pods fit alike), so a search over those counts, trying each class next within a run
/// of equal priority, reaches every outcome without running each order. Returns each
/// outcome's pods put back per class, and whether more than `limit` × 16 counts were met
/// (the rest left out).
fn victims_per_class(
    snapshot: &Snapshot,
    pod: &Pod,
    node: &str,
    classes: &Classes,
    runs: &[(usize, usize)],
    limit: usize,
) -> (Vec<Vec<usize>>, bool) {
    let count = classes.members.len();
    let run_of = |c: usize| {
        let first = classes.members[c][0];
        runs.iter()
            .position(|&(start, end)| (start..end).contains(&first))
    };
    let mut fits: HashMap<Vec<usize>, bool> = HashMap::new();
    let mut met: HashSet<(Vec<usize>, Vec<usize>)> = HashSet::new();
    let mut outcomes: Vec<Vec<usize>> = Vec::new();
    let mut todo = vec![(vec![0; count], vec![0; count])];
    while let Some((taken, kept)) = todo.pop() {
        let open = |c: &usize| taken[*c] < classes.members[*c].len();
        let Some(run) = (0..count).filter(open).filter_map(run_of).min() else {
            if !outcomes.contains(&kept) {
                outcomes.push(kept);
            }
            continue;
        };
        for c in (0..count).filter(open).filter(|&c| run_of(c) == Some(run)) {
            let mut back = kept.clone();
            back[c] += 1;
            let fit = *fits.entry(back.clone()).or_insert_with(|| {
                let removed: Vec<&Pod> = classes
                    .members
                    .iter()
                    .enumerate()
                    .flat_map(|(class, pods)| pods[back[class]..].iter())
                    .map(|&i| classes.pods[i])
                    .collect();
                fits_without(snapshot, pod, node, &removed)
            });
            let mut next_taken = taken.clone();
            next_taken[c] += 1;
            let next_kept = if fit { back } else { kept.clone() };
            if met.len() >= limit * 16 {
                return (outcomes, true);
            }
            if met.insert((next_taken.clone(), next_kept.clone())) {
                todo.push((next_taken, next_kept));
            }
        }
    }
    (outcomes, false)
}

fn victim(pod: &Pod) -> Victim {
    Victim {
        namespace: pod.namespace.clone(),
        name: pod.name.clone(),
        priority: pod.priority,
    }
}

/// The candidates `pickOneNodeForPreemption` may pick when each node's victims are any of
/// its sets (`per_node`, one list a node) and the dry run stops once it holds `enough`
/// candidates with one breaking no budget. A set is picked when, for every other node, that
/// node's worst set is no better by the modelled criteria in turn (the start times, compared
/// next, may then favour either, and a Go map's order after them); or when it breaks no
/// budget and at least `enough − 1` other nodes may do no better (the dry run held it with
/// them and not the better ones). With one set a node and `enough` past the number of nodes
/// these are the nodes [`super::pick_one_node`] leaves.
pub fn possible_picks(per_node: &[Vec<Candidate>], enough: usize) -> Vec<&Candidate> {
    let key = |c: &Candidate| Criterion::MODELLED.map(|criterion| criterion.score(c));
    let worst: Vec<Option<[i64; 4]>> = per_node
        .iter()
        .map(|sets| sets.iter().map(key).min())
        .collect();
    per_node
        .iter()
        .enumerate()
        .flat_map(|(i, sets)| sets.iter().map(move |c| (i, c)))
        .filter(|&(i, c)| {
            let k = key(c);
            let others = worst
                .iter()
                .enumerate()
                .filter(|&(j, w)| j != i && w.is_some());
            let no_better = others
                .clone()
                .filter(|(_, w)| w.is_some_and(|w| w <= k))
                .count();
            no_better == others.count() || (c.pdb_violations == 0 && no_better + 1 >= enough)
        })
        .map(|(_, c)| c)
        .collect()
}

/// `calculateNumCandidates` with DefaultPreemption's defaults: how many candidates the dry
/// run collects among `potential` nodes where preemption might help (10 %, at least 100, at
/// most all of them).
pub fn candidates_to_find(potential: usize) -> usize {
    (potential / 10).max(100).min(potential)
}

/// Each pod's class (pods alike for every filter and budget share one) and each class's pods,
/// as positions in `pods`, ascending.
fn classes(pods: &[&Pod]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut class_of: Vec<usize> = Vec::with_capacity(pods.len());
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, pod) in pods.iter().enumerate() {
        let class = match (0..i).find(|&j| alike(pods[j], pod)) {
            Some(j) => class_of[j],
            None => {
                members.push(Vec::new());
                members.len() - 1
            }
        };
        class_of.push(class);
        members[class].push(i);
    }
    (class_of, members)
}

/// Whether two pods differ only by name and uid.
fn alike(a: &Pod, b: &Pod) -> bool {
    let mut renamed = b.clone();
    renamed.name.clone_from(&a.name);
    renamed.uid.clone_from(&a.uid);
    *a == renamed
}

/// The runs of equal priority in `pods` (sorted by priority), as `[start, end)` positions.
fn equal_priority_runs(pods: &[&Pod]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for end in 1..=pods.len() {
        if end == pods.len() || pods[end].priority != pods[start].priority {
            runs.push((start, end));
            start = end;
        }
    }
    runs
}

/// The pods in the order `sequence` gives by class, each class's pods in their own order.
fn concrete_order<'s>(
    pods: &[&'s Pod],
    members: &[Vec<usize>],
    sequence: &[usize],
) -> Vec<&'s Pod> {
    let mut taken = vec![0; members.len()];
    sequence
        .iter()
        .map(|&class| {
            let pod = pods[members[class][taken[class]]];
            taken[class] += 1;
            pod
        })
        .collect()
}

/// Lists `found`'s victims with every other choice of as many pods of each class (the ones
/// that started last may be any of them), skipping sets already `seen`. Returns false when
/// `limit` sets are listed with some still to list.
fn every_choice_of_victims(
    classes: &Classes,
    found: Candidate,
    limit: usize,
    seen: &mut HashSet<Vec<String>>,
    sets: &mut VictimSets,
) -> bool {
    let position = |v: &Victim| {
        classes
            .pods
            .iter()
            .position(|p| p.name == v.name && p.namespace == v.namespace)
            .expect("a victim is one of the node's pods")
    };
    let mut wanted = vec![0; classes.members.len()];
    for victim in &found.victims {
        wanted[classes.of[position(victim)]] += 1;
    }
    let mut choice: Vec<Vec<usize>> = wanted.iter().map(|&k| (0..k).collect()).collect();
    loop {
        let mut chosen: Vec<usize> = choice
            .iter()
            .enumerate()
            .flat_map(|(class, picks)| picks.iter().map(move |&i| classes.members[class][i]))
            .collect();
        chosen.sort_unstable();
        let victims: Vec<Victim> = chosen.iter().map(|&i| victim(classes.pods[i])).collect();
        if seen.insert(names(&victims)) {
            if sets.candidates.len() == limit {
                return false;
            }
            sets.candidates.push(Candidate {
                victims,
                ..found.clone()
            });
        }
        if !next_choices(&mut choice, classes.members) {
            return true;
        }
    }
}

/// A victim set's identity: its pods' namespaced names, sorted.
fn names(victims: &[Victim]) -> Vec<String> {
    let mut names: Vec<String> = victims
        .iter()
        .map(|v| format!("{}/{}", v.namespace, v.name))
        .collect();
    names.sort_unstable();
    names
}

/// The next sequence of classes: the next distinct permutation of the last run that has one
/// (the runs after it back to their first), as an odometer; false after the last.
fn next_sequence(sequence: &mut [usize], runs: &[(usize, usize)]) -> bool {
    for &(start, end) in runs.iter().rev() {
        if next_permutation(&mut sequence[start..end]) {
            return true;
        }
    }
    false
}

/// The next permutation of `items` in lexicographic order, equal items not told apart; on the
/// last, sorts them back and returns false.
fn next_permutation(items: &mut [usize]) -> bool {
    let Some(i) = (1..items.len()).rev().find(|&i| items[i - 1] < items[i]) else {
        items.sort_unstable();
        return false;
    };
    let j = (i..items.len())
        .rev()
        .find(|&j| items[j] > items[i - 1])
        .expect("items[i] is larger");
    items.swap(i - 1, j);
    items[i..].reverse();
    true
}

/// The next choice of pods per class (each an ascending combination of positions in its
/// class, of fixed size), as an odometer over the classes; false after the last.
fn next_choices(choice: &mut [Vec<usize>], members: &[Vec<usize>]) -> bool {
    for (class, picks) in choice.iter_mut().enumerate().rev() {
        if next_combination(picks, members[class].len()) {
            return true;
        }
    }
    false
}

/// The next `picks.len()`-combination of `0..n` in lexicographic order; on the last, resets
/// to the first and returns false.
fn next_combination(picks: &mut [usize], n: usize) -> bool {
    let k = picks.len();
    let Some(i) = (0..k).rev().find(|&i| picks[i] < n - k + i) else {
        for (i, pick) in picks.iter_mut().enumerate() {
            *pick = i;
        }
        return false;
    };
    picks[i] += 1;
    for j in i + 1..k {
        picks[j] = picks[j - 1] + 1;
    }
    true
}
