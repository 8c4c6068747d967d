//! The scheduler (Kivi's `scheduler.pml`): for each queued pod, filter the nodes, score the
//! survivors, and bind the pod to the best one.
//!
//! Kivi keeps a per-node score that the filters set to -1 for rejected nodes (the nodeName and
//! node-affinity filters first mark passing nodes with 1 and then turn 1 into 0 and 0 into -1),
//! and a per-plugin score that each scoring plugin normalises and adds with its weight. The host
//! is the ready node with the highest score.
//!
//! # Ties
//!
//! kube-scheduler's `selectHost` picks **uniformly at random** among the nodes that share the
//! highest score (reservoir sampling over the scored list), so on a real cluster any of them
//! may get the pod. Kivi's `scheduler.pml` takes the first, the lowest node id. kivi does either,
//! as [`TieBreak`] says:
//! - [`TieBreak::Lowest`] (the default): the lowest node id, as Kivi; one scheduler step drains
//!   the whole queue (Kivi's `BACK_TO_BACK_OPT`).
//! - [`TieBreak::Any`]: every top-scored node is explored. A step drains the queue as one
//!   atomic block, as under `Lowest` (so `any` explores exactly `lowest`'s interleavings, with
//!   every choice at every tie), and has one outcome per way of placing its tied pods: the
//!   action ([`ClusterAction::SchedulerChoice`](crate::cluster::ClusterAction)) numbers them
//!   in the order [`for_each_choice`] lists them, and [`run`] lists the step again to replay
//!   one. A queue without ties is one step with one outcome, as under `Lowest`. The model may
//!   narrow a tie to one node per group of interchangeable nodes and follow one partly placed
//!   state per class ([`Reduce`]: by looking at the whole state, or by node labels it keeps
//!   up to date pod by pod, [`Labels`]); a step with more than [`MAX_LISTED`] outcomes is
//!   listed in part and the check reports itself incomplete.
//!
//! Queue order: kube-scheduler pops its active queue by priority, then by the time a pod was
//! queued (`PrioritySort`); kivi's queue is FIFO in the order pods were queued, under both
//! settings, which is that order for pods of equal priority (kivi models no priorities).

pub mod fit_error;
mod node_affinity;
mod node_name;
mod node_resources_fit;
mod pod_topology_spread;
mod taint_toleration;

use crate::cluster::timing::MAX_NODE_SCORE;
use crate::cluster::{
    ClusterSpec, ClusterState, NodeStatus, PodPhase, PodTemplate, Recorder, TieBreak,
};
use crate::cluster::{ItemClock, Queue};

/// The per-node buffers of a scheduling cycle, kept between the pods of one scheduler step (and
/// between steps on one thread) so that scheduling a pod allocates nothing.
#[derive(Default)]
struct Buffers {
    score: Vec<i32>,
    plugin_score: Vec<i32>,
    affinity: Vec<bool>,
    tainted: Vec<bool>,
    domains: Vec<i32>,
}

/// Per-node scratch values of one scheduling cycle (index = node id; index 0 unused).
pub struct Cycle<'a> {
    /// The cluster.
    pub spec: &'a ClusterSpec,
    /// The state being scheduled in.
    pub state: &'a ClusterState,
    /// The pod being scheduled.
    pub pod: usize,
    /// Its template.
    pub template: &'a PodTemplate,
    /// Total score, -1 once a filter rejects the node.
    pub score: Vec<i32>,
    /// The current scoring plugin's raw score.
    pub plugin_score: Vec<i32>,
    /// The node passed the node-affinity filter (Kivi's `curAffinity`).
    pub affinity: Vec<bool>,
    /// The node has a NoSchedule or NoExecute taint the pod does not tolerate (Kivi's
    /// `curTaint`, which marks NoSchedule taints only).
    pub tainted: Vec<bool>,
    /// Scratch for the topology spread plugin's per-domain counts.
    domains: Vec<i32>,
}

impl<'a> Cycle<'a> {
    /// A cycle for `pod` on the buffers of `buffers` (taken; [`Cycle::release`] gives them
    /// back).
    fn new(
        spec: &'a ClusterSpec,
        state: &'a ClusterState,
        pod: usize,
        buffers: &mut Buffers,
    ) -> Self {
        let slots = spec.nodes.len() + 1;
        // Buffers already the cluster's size are cleared in place (every pod after the first).
        fn reset<T: Copy>(mut v: Vec<T>, slots: usize, value: T) -> Vec<T> {
            if v.len() == slots {
                v.fill(value);
            } else {
                v.clear();
                v.resize(slots, value);
            }
            v
        }
        let fresh = |v: Vec<i32>| reset(v, slots, 0);
        let unmarked = |v: Vec<bool>| reset(v, slots, false);
        let mut cycle = Self {
            spec,
            state,
            pod,
            template: spec.template_or_none(state.pod(pod).template),
            score: fresh(std::mem::take(&mut buffers.score)),
            plugin_score: fresh(std::mem::take(&mut buffers.plugin_score)),
            affinity: unmarked(std::mem::take(&mut buffers.affinity)),
            tainted: unmarked(std::mem::take(&mut buffers.tainted)),
            domains: std::mem::take(&mut buffers.domains),
        };
        for n in cycle.node_ids() {
            if state.node(n).status != NodeStatus::Ready {
                cycle.score[n] = -1;
                cycle.plugin_score[n] = -1;
            }
        }
        cycle
    }

    /// Gives the cycle's buffers back for the next pod.
    fn release(self, buffers: &mut Buffers) {
        buffers.score = self.score;
        buffers.plugin_score = self.plugin_score;
        buffers.affinity = self.affinity;
        buffers.tainted = self.tainted;
        buffers.domains = self.domains;
    }

    /// Node ids 1..=N.
    pub fn node_ids(&self) -> std::ops::RangeInclusive<usize> {
        1..=self.spec.nodes.len()
    }

    /// Whether no filter has rejected node `n` yet.
    pub fn feasible(&self, n: usize) -> bool {
        self.score[n] != -1
    }

    /// Turns the "passing nodes marked 1" convention into "rejected nodes at -1" (Kivi's
    /// `helperFilter`).
    fn settle_marks(&mut self) {
        for n in 1..=self.spec.nodes.len() {
            self.score[n] = match self.score[n] {
                1 => 0,
                0 => -1,
                other => other,
            };
        }
    }

    /// Kivi's `defaultNormalizeScoreAndWeight`: scales the plugin scores of feasible nodes to
    /// 0..=100 (reversed when `reverse`) and adds them with `weight`.
    fn normalize_and_add(&mut self, reverse: bool, weight: i32) {
        let max = self
            .node_ids()
            .filter(|&n| self.feasible(n))
            .map(|n| self.plugin_score[n])
            .fold(0, i32::max);
        if max == 0 {
            if reverse {
                for n in self.node_ids() {
                    if self.feasible(n) {
                        self.score[n] += MAX_NODE_SCORE * weight;
                        self.plugin_score[n] = 0;
                    }
                }
            }
            return;
        }
        for n in self.node_ids() {
            if self.feasible(n) {
                let mut s = self.plugin_score[n] * MAX_NODE_SCORE / max;
                if reverse {
                    s = MAX_NODE_SCORE - s;
                }
                self.score[n] += s * weight;
                self.plugin_score[n] = 0;
            }
        }
    }

    /// Whether pod `other` carries every label in `labels`.
    pub fn pod_matches(&self, other: usize, labels: &[(usize, u16)]) -> bool {
        self.spec.pod_carries(self.state, other, labels)
    }
}

/// What one scheduler step keeps from pod to pod: the cycle's buffers and the topology spread
/// plugin's matching-pod counts.
#[derive(Default)]
struct Scratch {
    buffers: Buffers,
    matching: pod_topology_spread::MatchingCache,
    /// Under [`TieBreak::Any`], the top-scored nodes of the last pod [`select`] placed, in
    /// ascending id order.
    tied: Vec<u16>,
    /// The nodes of a tie worth exploring (the tie narrowed by the model).
    candidates: Vec<u16>,
    /// The labels a tie narrowed by labels kept ([`Reduce::Labels`]).
    labelled: Labelled,
}

thread_local! {
    /// Each thread's scheduler scratch, so that a step allocates nothing once the buffers have
    /// grown to the cluster.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Runs the filters and scoring plugins for `pod`; the chosen node id, or `None` when no node
/// is feasible.
pub fn schedule_one(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Option<usize> {
    select(spec, state, pod, &mut Scratch::default())
}

/// A step of the filtering phase, for telling which one rejected a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filter {
    /// Before any filter: the node is not ready.
    NotReady,
    NodeName,
    NodeAffinity,
    TaintToleration,
    NodeResourcesFit,
    PodTopologySpread,
}

/// Runs the filters in order (TaintToleration only when some node is `tainted`), calling
/// `after` before the first and after each with the step just taken; the matching-pod counts
/// the spread filter used, for the spread score.
fn run_filters<'m>(
    c: &mut Cycle,
    matching: &'m mut pod_topology_spread::MatchingCache,
    tainted: bool,
    mut after: impl FnMut(&Cycle, Filter),
) -> &'m pod_topology_spread::MatchingPods {
    after(c, Filter::NotReady);
    node_name::filter(c);
    after(c, Filter::NodeName);
    node_affinity::filter(c);
    after(c, Filter::NodeAffinity);
    if tainted {
        taint_toleration::filter(c);
        after(c, Filter::TaintToleration);
    }
    node_resources_fit::filter(c);
    after(c, Filter::NodeResourcesFit);
    let matching = matching.for_template(c);
    pod_topology_spread::filter(c, matching);
    after(c, Filter::PodTopologySpread);
    matching
}

/// [`schedule_one`] on `scratch`, whose matching-pod counts must describe `state`: the lowest
/// top-scored node; under [`TieBreak::Any`] every top-scored node is left in `scratch.tied`
/// (under `Lowest` it is left empty: the scheduling cycle's hot path collects nothing).
fn select(
    spec: &ClusterSpec,
    state: &ClusterState,
    pod: usize,
    scratch: &mut Scratch,
) -> Option<usize> {
    let mut c = Cycle::new(spec, state, pod, &mut scratch.buffers);
    let taints = spec.nodes.iter().any(|n| n.taint_type != 0);
    let matching = run_filters(&mut c, &mut scratch.matching, taints, |_, _| {});

    node_affinity::score(&mut c);
    if taints {
        taint_toleration::score(&mut c);
    }
    node_resources_fit::score(&mut c);
    pod_topology_spread::score(&mut c, matching);

    let mut best = None;
    let mut max = -1;
    for n in c.node_ids() {
        if state.node(n).status == NodeStatus::Ready && c.score[n] > max {
            max = c.score[n];
            best = Some(n);
        }
    }
    scratch.tied.clear();
    if spec.tie_break == TieBreak::Any && best.is_some() {
        let tied = c
            .node_ids()
            .filter(|&n| state.node(n).status == NodeStatus::Ready && c.score[n] == max);
        scratch.tied.extend(tied.map(|n| n as u16));
    }
    c.release(&mut scratch.buffers);
    best
}

/// Most partly placed states, and most outcomes, the listing of one scheduler step under
/// [`TieBreak::Any`] holds ([`for_each_choice`]). A step drains the whole queue, so its
/// outcomes are all the ways of placing its tied pods: without symmetry reduction the product
/// of its ties' sizes (24 pods on 8 empty nodes spread by hostname: (8!)³ ≈ 6.6 × 10¹³), with
/// it one per class of outcomes (one, there). A step with more is listed in part and the
/// listing says so ([`Listed::TooMany`]): the check is then incomplete, never silently cut.
pub const MAX_LISTED: usize = 4096;

/// Narrows the top-scored nodes of a tie (ascending ids) to those worth exploring, in place,
/// keeping their order: the model drops nodes interchangeable with one already listed when it
/// reduces by symmetry.
pub type Narrow<'a> = &'a dyn Fn(&ClusterState, &mut Vec<u16>);

/// A fingerprint of a state's class under the model's symmetry, equal for states that are
/// renamings of each other ([`for_each_choice`] lists one of each).
pub type Class<'a> = &'a dyn Fn(&ClusterState) -> u64;

/// How a listing or a replay of a scheduler step narrows ties and tells its partly placed
/// states apart (the model's symmetry reduction, if any). A listing and the replay of one of
/// its outcomes must be given the same, so that the replay meets the same candidates.
#[derive(Clone, Copy)]
pub enum Reduce<'a> {
    /// Every top-scored node is a candidate and partly placed states have no classes.
    Off,
    /// Ties are narrowed, and partly placed states classed (if given), by looking at the whole
    /// state each time.
    Whole(Narrow<'a>, Option<Class<'a>>),
    /// Nodes carry labels kept up to date pod by pod ([`Labels`]): a tie keeps the first
    /// candidate of each label, and a partly placed state's class is kept with its labels.
    Labels(&'a dyn Labels),
}

/// A reduction that labels nodes so that nodes with equal labels are interchangeable in the
/// state at hand, and keeps the labels (and a partly placed state's class) up to date as a
/// step binds pods, instead of comparing every tied node's pods at every tie: on a cluster of
/// a thousand alike nodes a tie has a thousand candidates, and a step binds thousands of pods.
pub trait Labels {
    /// The labels of the step's source, where the listing or replay starts.
    fn start(&self) -> Track;

    /// Updates `track` after the step bound pod `pod` to node `node`, giving `state`.
    fn bound(&self, track: &mut Track, state: &ClusterState, pod: usize, node: usize);

    /// The class of `state`, a partly placed state of the step whose labels `track` holds.
    fn class(&self, track: &Track, state: &ClusterState) -> u64;
}

/// A partly placed state's node labels and what its [`Labels`] keep beside them.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Per node id (index 0 unused): its label; nodes with equal labels are interchangeable.
    pub labels: Vec<u32>,
    /// Per node id: two sums the reduction keeps over the pods the step bound to the node.
    pub sums: Vec<[u64; 2]>,
    /// The reduction's running part of the state's class.
    pub class: u64,
}

/// Where a scheduler step stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drained {
    /// The queue is empty.
    Empty,
    /// Under [`TieBreak::Any`], while listing: the listing branches on the tie of the pod at the
    /// head of the queue (a choice, or one node when it follows more than one partly placed
    /// state pod by pod); the pod is still queued.
    AtTie,
    /// While listing: the pod chosen before the step went on ([`Choose::head`]) is bound and
    /// the step stopped before the next pod, without scheduling it, so that the listing can
    /// tell the partly placed state's class first.
    Paused,
    /// Pod `pod` fits no node: `pod_always_schedulable` is violated and the pod stays unbound.
    Unschedulable {
        /// The pod.
        pod: usize,
    },
}

/// How the listing of a scheduler step's outcomes ([`for_each_choice`]) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listed {
    /// Every outcome was visited.
    All,
    /// The visitor asked to stop.
    Stopped,
    /// The step has more than [`MAX_LISTED`] partly placed states or outcomes: those visited
    /// are only some of them.
    TooMany,
    /// The listing was told to stop ([`Stop`]) before it was done: those visited are only
    /// some of the outcomes.
    Cut,
}

/// Asked between the partly placed states of a listing: whether to stop it now (the search
/// it serves has reached its time limit or been cancelled). A listing of a step on a large
/// cluster can take longer than a search may run, so it is cut rather than finished.
pub type Stop<'a> = &'a dyn Fn() -> bool;

/// One scheduler step: schedules every queued pod that is not running or terminating. A pod
/// with no feasible node violates `pod_always_schedulable`; like Kivi's assertion, that ends
/// the step (and the run) with the pod unbound.
///
/// Under [`TieBreak::Any`], `choice` is the number of the outcome in the order
/// [`for_each_choice`] lists them with the same `reduce`; the step is listed again to find
/// where that outcome puts each tied pod. Under [`TieBreak::Lowest`] it is ignored.
///
/// # Panics
/// When `choice` is not a listed outcome's number: a step is only ever taken with a number its
/// listing gave (the engine reports the panic as an internal error).
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choice: u64,
    reduce: Reduce,
    rec: &mut Recorder,
) {
    let digits = outcome_digits(spec, state, reduce, choice);
    replay(spec, state, &digits, reduce, rec);
}

/// The scheduler step whose ties take the candidates `digits` names, in the order the step
/// meets its ties with a choice (as [`for_each_choice`] gives them with the same `reduce`):
/// [`run`] without listing the step to find them.
fn replay(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    digits: &[u16],
    reduce: Reduce,
    rec: &mut Recorder,
) {
    let mut track = start(reduce);
    with_scratch(|scratch| {
        let mut digits = Digits::new(digits);
        drain(spec, state, &mut digits, reduce, &mut track, rec, scratch)
    });
}

/// The labels a step starts from under `reduce`, if it labels nodes.
fn start(reduce: Reduce) -> Option<Track> {
    match reduce {
        Reduce::Labels(labels) => Some(labels.start()),
        _ => None,
    }
}

/// Where a listed outcome of a scheduler step put each pod it took off the queue, in queue
/// order: the pod's node, [`Placements::SKIPPED`] for a pod already running or terminating
/// (taken off and left as it is), or [`Placements::UNSCHEDULABLE`] for the pod that fit
/// nowhere and ended the step. Enough to take the step again without filtering, scoring or
/// narrowing anything ([`replay_placements`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placements(Box<[u16]>);

impl Placements {
    /// A pod taken off the queue without being scheduled (running or terminating).
    pub const SKIPPED: u16 = 0;
    /// The pod that fit no node, which ends the step.
    pub const UNSCHEDULABLE: u16 = u16::MAX;

    /// The placements of the step from `source` that ended in `end`: each pod the step took
    /// off `source`'s queue, at the node `end` binds it to. Only the last can have fit
    /// nowhere (that ends the step), and a bound pod joins the kubelet's queue, so the last
    /// fit nowhere when `end` does not have it there. `None` when that cannot be told: the
    /// last pod was in the kubelet's queue already.
    pub fn of(source: &ClusterState, end: &ClusterState) -> Option<Self> {
        let queue = source.pending(Queue::Scheduler);
        let left = end.pending(Queue::Scheduler).len();
        let taken = &queue[..queue.len() - left];
        let skipped = |pod: usize| {
            matches!(
                source.pod(pod).phase,
                PodPhase::Running | PodPhase::Terminating
            )
        };
        let mut placements: Vec<u16> = taken
            .iter()
            .map(|&pod| match skipped(pod as usize) {
                true => Self::SKIPPED,
                false => end.pod(pod as usize).loc,
            })
            .collect();
        if let Some(&last) = taken.last().filter(|&&pod| !skipped(pod as usize)) {
            let in_kubelet_queue = |state: &ClusterState| {
                state.pod(last as usize).queued & crate::cluster::pod_queue::KUBELET != 0
            };
            if in_kubelet_queue(source) {
                return None;
            }
            if !in_kubelet_queue(end) {
                *placements.last_mut().expect("a pod was taken") = Self::UNSCHEDULABLE;
            }
        }
        Some(Self(placements.into()))
    }

    /// How many pods the step took off the queue.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the step took no pod off the queue.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The scheduler step that puts the pods it takes off the queue where `placements` says
/// ([`Placements::of`] an outcome [`for_each_choice`] listed from this state): the outcome's
/// state, in one pass over the queue instead of scheduling each pod again.
pub fn replay_placements(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    placements: &Placements,
    rec: &mut Recorder,
) {
    let mut clock = ItemClock::default();
    for &node in placements.0.iter() {
        let pod = state.pending(Queue::Scheduler)[0] as usize;
        match node {
            Placements::SKIPPED => {
                state.dequeue(Queue::Scheduler);
            }
            Placements::UNSCHEDULABLE => {
                fits_nowhere(spec, state, rec);
                break;
            }
            n => bind(spec, state, pod, n as usize),
        }
        clock.tick(spec, state);
    }
    clock.settle(spec, state);
}

/// [`run`] with every tie resolved to its first candidate (the lowest id among them), as a
/// controller acting on a stale view does (see [`crate::model`]'s perturbations).
pub fn run_first_candidates(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    with_scratch(|scratch| {
        let mut first = Digits::new(&[]);
        drain(
            spec,
            state,
            &mut first,
            Reduce::Off,
            &mut None,
            rec,
            scratch,
        )
    });
}

/// Where outcome number `choice` of the step in `state` puts its tied pods: the index of the
/// candidate each tie with a choice takes, in the order the step meets them (none under
/// [`TieBreak::Lowest`], which has no choices).
fn outcome_digits(
    spec: &ClusterSpec,
    state: &ClusterState,
    reduce: Reduce,
    choice: u64,
) -> Vec<u16> {
    if spec.tie_break == TieBreak::Lowest {
        return Vec::new();
    }
    let mut found = None;
    for_each_choice(spec, state, reduce, &|| false, |index, digits, _| {
        if index != choice {
            return true;
        }
        found = Some(digits.to_vec());
        false
    });
    found.unwrap_or_else(|| panic!("scheduler outcome {choice} is not one the step lists"))
}

/// Calls `visit` with every outcome of a scheduler step in `state`, numbered from 0: the
/// outcome's number (for [`run`]), where it puts the tied pods (the candidate each tie with a
/// choice takes) and the state it leads to; a step without ties has one outcome. Stops when
/// `visit` returns false.
///
/// The step is followed pod by pod, breadth first: every partly placed state branches to each
/// candidate of its next pod's tie (narrowed as `reduce` says). Where `reduce` classes partly
/// placed states, one in the same class as one already met is not followed further: the rest of the step places the
/// same queue on renamed nodes from there, so its outcomes are renamings of outcomes already
/// listed (placing two alike pods on two alike nodes is one outcome, not two). A tie between
/// two groups of nodes over k alike pods then lists k + 1 outcomes instead of 2^k, and a
/// rollout onto empty alike nodes one.
///
/// While more than one partly placed state is followed, each is taken one pod further at a
/// time, so that all of them have placed the same pods (the queue is drained in order) and
/// two that meet in one class are merged at once, before either schedules the rest of the
/// queue: merging only at the next tie with a choice would schedule each pod between the two
/// ties once per partly placed state, which on a rollout over n nodes is O(n) pods per
/// state. A lone partly placed state without a choice goes on to its next choice in one go.
///
/// `stop` is asked before each partly placed state is followed; when it says so the listing
/// ends there ([`Listed::Cut`]). A step replayed by its number is listed without it, so that
/// the replay finds the outcome the search listed.
pub fn for_each_choice(
    spec: &ClusterSpec,
    state: &ClusterState,
    reduce: Reduce,
    stop: Stop,
    mut visit: impl FnMut(u64, &[u16], ClusterState) -> bool,
) -> Listed {
    let class = |track: &Option<Track>, state: &ClusterState| match (reduce, track) {
        (Reduce::Whole(_, class), _) => class.map(|class| class(state)),
        (Reduce::Labels(labels), Some(track)) => Some(labels.class(track, state)),
        _ => None,
    };
    let mut first = state.clone();
    let mut track = start(reduce);
    let mut probe = Probe::new(None, false);
    let matching = probe.drain(spec, &mut first, reduce, &mut track, None);
    let Some(tie) = probe.tie else {
        return match visit(0, &[], first) {
            true => Listed::All,
            false => Listed::Stopped,
        };
    };
    let mut seen = std::collections::HashSet::new();
    let mut listed = 0;
    let mut frontier = vec![Partial {
        state: first,
        matching,
        track,
        tie,
        digits: Vec::new(),
    }];
    while !frontier.is_empty() {
        let alone = frontier.len() == 1 && frontier[0].tie.candidates.len() == 1;
        let mut further = Vec::new();
        for partial in frontier {
            if stop() {
                return Listed::Cut;
            }
            let Partial {
                state,
                matching,
                track,
                tie,
                digits,
            } = partial;
            let mut kept = Some((state, matching, track));
            let last = tie.candidates.len() - 1;
            for (digit, &node) in tie.candidates.iter().enumerate() {
                let (mut next, matching, mut track) = match digit == last {
                    true => kept.take().expect("the last candidate takes the state"),
                    false => kept.clone().expect("kept for the last candidate"),
                };
                let head = (node as usize, tie.tied);
                let mut resume = Probe::new(Some(head), !alone);
                let mut matching = Some(matching);
                if !alone {
                    // Told apart right after the tied pod is bound: the next pod is scheduled
                    // only in the partly placed states of new classes.
                    let bound =
                        Probe::binding(head).drain(spec, &mut next, reduce, &mut track, matching);
                    matching = Some(bound);
                    resume = Probe::new(None, true);
                    if class(&track, &next).is_some_and(|class| !seen.insert(class)) {
                        continue;
                    }
                }
                let matching = resume.drain(spec, &mut next, reduce, &mut track, matching);
                if alone && class(&track, &next).is_some_and(|class| !seen.insert(class)) {
                    continue;
                }
                let mut digits = digits.clone();
                if tie.candidates.len() > 1 {
                    digits.push(digit as u16);
                }
                match resume.tie {
                    Some(_) if further.len() == MAX_LISTED => return Listed::TooMany,
                    Some(tie) => further.push(Partial {
                        state: next,
                        matching,
                        track,
                        tie,
                        digits,
                    }),
                    None if listed == MAX_LISTED as u64 => return Listed::TooMany,
                    None => {
                        if !visit(listed, &digits, next) {
                            return Listed::Stopped;
                        }
                        listed += 1;
                    }
                }
            }
        }
        frontier = further;
    }
    Listed::All
}

/// A partly placed step in a listing: the state so far with its matching-pod counts and node
/// labels (where the reduction labels nodes), the tie its next pod meets (its candidates may
/// be one node), and the candidates taken at the ties with a choice before it.
struct Partial {
    state: ClusterState,
    matching: pod_topology_spread::MatchingCache,
    track: Option<Track>,
    tie: Tie,
    digits: Vec<u16>,
}

/// A tie a listing branches on: its candidates after narrowing and its number of top-scored
/// nodes (one node, or none, where the pod's node is no choice).
#[derive(Clone, Debug)]
struct Tie {
    candidates: Vec<u16>,
    tied: usize,
}

/// How a step chooses among the candidates of a tie.
trait Choose {
    /// At a tie of `tied` top-scored nodes (at least two) narrowed to `candidates` (at least
    /// one): the index of the chosen candidate, or `None` to stop the step before the tied pod.
    fn choose(&mut self, tied: usize, candidates: usize) -> Option<usize>;

    /// The node for the first pod the step schedules, with the size of its tie, when it was
    /// chosen before the step began (none by default: the pod is scheduled as any other).
    fn head(&mut self) -> Option<(usize, usize)> {
        None
    }

    /// Whether to stop before the pod now at the head of the queue, without scheduling it
    /// (no by default).
    fn pause(&self) -> bool {
        false
    }

    /// Whether [`Choose::choose`] is also asked at pods whose node is no choice (one
    /// top-scored node: `tied` is 1 and the candidate is that node), so that the step can stop
    /// before any pod (no by default).
    fn asked_at_every_pod(&self) -> bool {
        false
    }
}

/// Replays a listed outcome's digits ([`for_each_choice`]): each tie with a choice takes the
/// candidate its digit names, in order, and the first candidate once the digits run out.
struct Digits<'a> {
    digits: &'a [u16],
    next: usize,
}

impl<'a> Digits<'a> {
    fn new(digits: &'a [u16]) -> Self {
        Self { digits, next: 0 }
    }
}

impl Choose for Digits<'_> {
    fn choose(&mut self, _tied: usize, candidates: usize) -> Option<usize> {
        if candidates == 1 {
            return Some(0);
        }
        let digit = self.digits.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        Some(digit as usize)
    }
}

/// Binds the first pod to `head`'s node (if given), goes on through pods whose node is no
/// choice (unless it stops at every pod), and stops before the next pod with a choice (noting
/// its tie in `tie`) or where the step ends; or, pausing, stops right after the first pod.
struct Probe {
    /// The node for the pod at the head of the queue and the size of its tie: a listing
    /// branching on that tie has scheduled the pod once in this very state, so its filters,
    /// scores and narrowing are not run again for every candidate.
    head: Option<(usize, usize)>,
    /// Whether to stop before the next pod the step schedules, choice or not.
    every_pod: bool,
    /// Whether to stop once `head` is bound, before scheduling the next pod at all.
    pause_after_head: bool,
    tie: Option<Tie>,
}

impl Choose for Probe {
    fn choose(&mut self, tied: usize, candidates: usize) -> Option<usize> {
        if candidates == 1 && !self.every_pod {
            return Some(0);
        }
        self.tie = Some(Tie {
            candidates: Vec::with_capacity(candidates),
            tied,
        });
        None
    }

    fn head(&mut self) -> Option<(usize, usize)> {
        self.head.take()
    }

    fn pause(&self) -> bool {
        self.pause_after_head && self.head.is_none()
    }

    fn asked_at_every_pod(&self) -> bool {
        self.every_pod
    }
}

impl Probe {
    /// A probe binding the first pod to `head`'s node, if given, and stopping before the next
    /// pod with a choice, or before the next pod at all when `every_pod`.
    fn new(head: Option<(usize, usize)>, every_pod: bool) -> Self {
        Self {
            head,
            every_pod,
            pause_after_head: false,
            tie: None,
        }
    }

    /// A probe binding the first pod to `head`'s node and stopping right after it
    /// ([`Drained::Paused`]).
    fn binding(head: (usize, usize)) -> Self {
        Self {
            pause_after_head: true,
            ..Self::new(Some(head), true)
        }
    }

    /// Drains `state`'s queue as [`drain`] does, choosing as the probe says; where it stops at
    /// a tie, the tie keeps its narrowed candidates. `matching` are the matching-pod counts
    /// of `state` as a listing kept them (none: counted afresh), and `track` its labels; the
    /// counts of the state the probe stops in are returned, for going on from there.
    fn drain(
        &mut self,
        spec: &ClusterSpec,
        state: &mut ClusterState,
        reduce: Reduce,
        track: &mut Option<Track>,
        matching: Option<pod_topology_spread::MatchingCache>,
    ) -> pod_topology_spread::MatchingCache {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            match matching {
                Some(matching) => scratch.matching = matching,
                None => scratch.matching.clear(),
            }
            drain(
                spec,
                state,
                self,
                reduce,
                track,
                &mut Recorder::off(),
                scratch,
            );
            if let Some(tie) = &mut self.tie {
                tie.candidates.extend_from_slice(&scratch.candidates);
            }
            std::mem::take(&mut scratch.matching)
        })
    }
}

/// Runs `f` on this thread's scratch, its matching-pod counts cleared for a new state.
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        scratch.matching.clear();
        f(scratch)
    })
}

/// [`run`] on `scratch`, choosing ties with `choose` among the candidates `reduce` leaves
/// (with the node labels `track`, kept up to date, where it labels nodes); where it stopped.
fn drain(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choose: &mut impl Choose,
    reduce: Reduce,
    track: &mut Option<Track>,
    rec: &mut Recorder,
    scratch: &mut Scratch,
) -> Drained {
    let mut clock = ItemClock::default();
    let step = Step { reduce, track };
    let drained = drain_items(spec, state, choose, step, rec, scratch, &mut clock);
    clock.settle(spec, state);
    drained
}

/// How [`drain_items`] narrows ties: the reduction and the node labels it keeps.
struct Step<'r, 'a> {
    reduce: Reduce<'a>,
    track: &'r mut Option<Track>,
}

impl Step<'_, '_> {
    /// Narrows the top-scored nodes `candidates` (ascending ids) of a tie in `state`;
    /// `seen` is scratch.
    fn narrow(&self, state: &ClusterState, candidates: &mut Vec<u16>, seen: &mut Labelled) {
        match (self.reduce, &*self.track) {
            (Reduce::Whole(narrow, _), _) => narrow(state, candidates),
            (Reduce::Labels(_), Some(track)) => seen.keep_first(&track.labels, candidates),
            _ => {}
        }
    }

    /// Keeps the labels up to date after pod `pod` was bound to node `node` in `state`.
    fn bound(&mut self, state: &ClusterState, pod: usize, node: usize) {
        if let (Reduce::Labels(labels), Some(track)) = (self.reduce, &mut *self.track) {
            labels.bound(track, state, pod, node);
        }
    }
}

/// Which labels a tie has kept a candidate of: the round in which each label was last kept,
/// so that a tie's narrowing costs one look-up per candidate and nothing to clear.
#[derive(Default)]
struct Labelled {
    round: u32,
    kept_in: Vec<u32>,
}

impl Labelled {
    /// Keeps, of `candidates`, the first node of each label.
    fn keep_first(&mut self, labels: &[u32], candidates: &mut Vec<u16>) {
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.kept_in.fill(0);
            self.round = 1;
        }
        let round = self.round;
        let kept_in = &mut self.kept_in;
        candidates.retain(|&n| {
            let label = labels[n as usize] as usize;
            if label >= kept_in.len() {
                kept_in.resize(label + 1, 0);
            }
            let first = kept_in[label] != round;
            kept_in[label] = round;
            first
        });
    }
}

/// [`drain`]'s loop over the queued pods, each one tick of `clock`.
fn drain_items(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choose: &mut impl Choose,
    mut step: Step,
    rec: &mut Recorder,
    scratch: &mut Scratch,
    clock: &mut ItemClock,
) -> Drained {
    while let Some(&head) = state.pending(Queue::Scheduler).first() {
        if choose.pause() {
            return Drained::Paused;
        }
        let pod = head as usize;
        let phase = state.pod(pod).phase;
        if phase != PodPhase::Running && phase != PodPhase::Terminating {
            let (n, tied) = match choose.head() {
                Some(head) => head,
                None => {
                    let Some(lowest) = select(spec, state, pod, scratch) else {
                        fits_nowhere(spec, state, rec);
                        return Drained::Unschedulable { pod };
                    };
                    let tied = scratch.tied.len();
                    if tied <= 1 && !choose.asked_at_every_pod() {
                        (lowest, tied)
                    } else {
                        let candidates = &mut scratch.candidates;
                        candidates.clear();
                        if tied <= 1 {
                            candidates.push(lowest as u16);
                        } else {
                            candidates.extend_from_slice(&scratch.tied);
                            step.narrow(state, candidates, &mut scratch.labelled);
                        }
                        let Some(index) = choose.choose(tied, candidates.len()) else {
                            return Drained::AtTie;
                        };
                        (candidates[index] as usize, tied)
                    }
                }
            };
            rec.log(Some("Scheduler"), || {
                if tied > 1 {
                    format!("Pod {pod} is scheduled on node {n} (one of {tied} top-scored nodes)")
                } else {
                    format!("Pod {pod} is scheduled on node {n}")
                }
            });
            scratch.matching.bind(spec, state, pod, n);
            bind(spec, state, pod, n);
            step.bound(state, pod, n);
        } else {
            state.dequeue(Queue::Scheduler);
        }
        clock.tick(spec, state);
    }
    Drained::Empty
}

/// Takes pod `pod`, at the head of the queue, off it and binds it to node `n`, waking the
/// kubelet and its deployment's HPA (also the binding of kube-scheduler's decisions under
/// `--semantics kubernetes`, which the model makes).
pub fn bind(spec: &ClusterSpec, state: &mut ClusterState, pod: usize, n: usize) {
    state.dequeue(Queue::Scheduler);
    state.bind(pod, n);
    state.enqueue(Queue::Kubelet, pod);
    if state.pod(pod).owned {
        let d = state.pod(pod).deployment as usize;
        state.enqueue_hpa(spec, d);
    }
}

/// Takes the pod at the head of the queue off it, unbound: it fits no node, which violates
/// `pod_always_schedulable` and ends the step.
fn fits_nowhere(spec: &ClusterSpec, state: &mut ClusterState, rec: &mut Recorder) {
    state.dequeue(Queue::Scheduler);
    rec.log(Some("Scheduler - no_feasible_node"), || {
        "No feasible node!".to_string()
    });
    state.violate_pod_always_schedulable(spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeAffinityTerm;
    use crate::model::test_cases::load;

    pub(super) use crate::model::test_cases::with_new_pod;

    #[test]
    fn c3_spread_constraints_leave_no_feasible_node() {
        let model = load("c3", "original");
        assert_eq!(schedule_one(model.spec(), &with_new_pod(&model), 6), None);
    }

    #[test]
    fn placements_replay_a_step_whose_last_pod_fits_nowhere() {
        let model = load("c3", "original");
        let mut s = with_new_pod(&model);
        s.enqueue(Queue::Scheduler, 6);
        let mut end = s.clone();
        run(model.spec(), &mut end, 0, Reduce::Off, &mut Recorder::off());
        assert!(end.queue_is_empty(Queue::Scheduler), "the queue ends empty");
        let placements = Placements::of(&s, &end).expect("told");
        assert_eq!(*placements.0, [Placements::UNSCHEDULABLE]);
        let mut replayed = s.clone();
        replay_placements(
            model.spec(),
            &mut replayed,
            &placements,
            &mut Recorder::off(),
        );
        assert_eq!(replayed, end);
    }

    #[test]
    fn hostname_spread_picks_the_least_loaded_node() {
        let model = load("c3", "original-non-violation");
        assert_eq!(
            schedule_one(model.spec(), &with_new_pod(&model), 6),
            Some(2)
        );
    }

    #[test]
    fn nodes_that_are_not_ready_are_neither_chosen_nor_counted() {
        let model = load("c3", "original-non-violation");
        let mut s = with_new_pod(&model);
        s.node_mut(2).status = NodeStatus::NotReady;
        assert_eq!(schedule_one(model.spec(), &s, 6), Some(1));
    }

    #[test]
    fn resource_fit_rejects_full_nodes() {
        let model = load("c3", "original-non-violation");
        let mut s = with_new_pod(&model);
        s.node_mut(2).cpu_left = 7;
        assert_eq!(schedule_one(model.spec(), &s, 6), None);
    }

    #[test]
    fn required_node_affinity_restricts_the_nodes() {
        let model = load("c1", "original");
        let mut spec = model.spec().clone();
        let s = with_new_pod(&model);
        assert_eq!(
            schedule_one(&spec, &s, 6),
            Some(1),
            "ties go to the lowest id"
        );
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: true,
            weight: 0,
            matched: vec![false, false, false, true],
            labels: Vec::new(),
        });
        assert_eq!(schedule_one(&spec, &s, 6), Some(3));
    }

    #[test]
    fn under_any_each_tied_node_is_one_outcome_of_the_step() {
        let model = load("c1", "original");
        let mut spec = model.spec().clone();
        spec.tie_break = TieBreak::Any;
        let mut s = with_new_pod(&model);
        s.enqueue(Queue::Scheduler, 6);
        let mut choices = Vec::new();
        let mut listed = Vec::new();
        let all = for_each_choice(&spec, &s, Reduce::Off, &|| false, |c, _, outcome| {
            choices.push(c);
            listed.push(outcome);
            true
        });
        assert_eq!(all, Listed::All);
        assert_eq!(choices, [0, 1, 2], "nodes 1, 2 and 3 tie");
        let taken: Vec<ClusterState> = choices
            .iter()
            .map(|&c| {
                let mut next = s.clone();
                run(&spec, &mut next, c, Reduce::Off, &mut Recorder::off());
                next
            })
            .collect();
        let placed: Vec<u16> = taken.iter().map(|next| next.pod(6).loc).collect();
        assert_eq!(placed, [1, 2, 3]);
        assert_eq!(listed, taken, "the listing's end states are the steps' own");
        let keep_first: Narrow = &|_, candidates| candidates.truncate(1);
        let mut narrowed = 0;
        let keep_first = Reduce::Whole(keep_first, None);
        for_each_choice(&spec, &s, keep_first, &|| false, |_, _, _| {
            narrowed += 1;
            true
        });
        assert_eq!(narrowed, 1, "a narrowed tie is no choice");
    }

    #[test]
    fn preferred_node_affinity_outweighs_equal_nodes() {
        let model = load("c1", "original");
        let mut spec = model.spec().clone();
        spec.pod_templates[0].affinity.push(NodeAffinityTerm {
            required: false,
            weight: 10,
            matched: vec![false, false, true, false],
            labels: Vec::new(),
        });
        assert_eq!(schedule_one(&spec, &with_new_pod(&model), 6), Some(2));
    }

    #[test]
    fn scheduling_binds_assumes_resources_and_wakes_kubelet_and_hpa() {
        let model = load("c3", "original-non-violation");
        let mut s = with_new_pod(&model);
        s.clear_queue(Queue::Hpa);
        s.enqueue(Queue::Scheduler, 6);
        let mut rec = Recorder::on();
        run(model.spec(), &mut s, 0, Reduce::Off, &mut rec);
        assert_eq!({ s.pod(6).loc }, 2);
        assert_eq!((s.node(2).cpu_left, s.node(2).num_pods), (48, 2));
        assert_eq!(s.pending(Queue::Kubelet), &[6]);
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert_eq!(rec.into_lines()[0].message, "Pod 6 is scheduled on node 2");
    }
}
