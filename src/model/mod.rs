//! The cluster as a transition system: [`ClusterModel`] composes the controllers, events and
//! intents over the cluster's types ([`crate::cluster`]) and implements the engine's
//! [`Model`].
//!
//! # Steps
//!
//! One [`ClusterAction`] is one atomic block of Kivi: a controller loop draining its queue (Kivi's
//! `BACK_TO_BACK_OPT`), or one event or user command. Intent monitors are evaluated after every
//! step; their variables live in the state, and a violated intent stays violated.
//!
//! # Where this model departs from Kivi
//!
//! Kivi's own quirks are kept (they decide verdicts); these are the exceptions, all outside what
//! the reference cases exercise:
//! - `init` is atomic here; in Kivi its statements interleave with the processes it starts.
//!   Together with the saturated clock this is why SPIN stores many more states than we do.
//! - Intent monitors observe every step (see [`crate::intents`]); Kivi's are asynchronous, so
//!   its traces may print a monitor's line a few steps after the violating step.
//! - The scheduler's per-node `curAffinity`/`curTaint` scratch flags are recomputed for each
//!   pod; Kivi keeps stale values in hidden variables across scheduling cycles.
//! - A rolling update does one surge-or-shrink pass per reconcile; Kivi's loop never ends when
//!   it has to surge.
//! - An HPA metric Kivi cannot compute (no requests, no target) proposes nothing; Kivi stops
//!   with an internal assertion.
//! - `scaleDeployment` picks deployment ids from 1 (Kivi also picks 0, which makes it assert),
//!   and `createDeployment` of an existing deployment does nothing (Kivi asserts).
//! - A node's kernel panic count saturates at `LOOP_TIMES`.
//! - A pod removed from the replica set that is no longer current still counts against the
//!   deployment's replicas, as Kubernetes counts them (see [`crate::controllers::kubelet`]);
//!   Kivi prints a warning there and keeps the count.
//! - An idle pod slot's `loc` is read as 0: Kivi's dumps leave stale node ids there.
//! - A pod the deployment controller binds straight to its template's `nodeName` takes its
//!   node's pod slot, CPU and memory, as it does in Kubernetes (the kubelet admits it against
//!   the node's allocatable resources, and the scheduler's cache counts every pod bound to the
//!   node). Kivi binds it without counting it, yet gives the node back the pod's resources when
//!   the pod is deleted, so the node's counts drift (its pod count wraps below zero); no
//!   verdict, state count or minimal topology of the cases changes.
//!
//! # Descheduler, taint manager, maintenance and node failure
//!
//! - The descheduler ([`crate::controllers::descheduler`]) runs its profiles' balance plugins
//!   once per deployment on [`ClusterState::descheduler_queue`], after its period
//!   ([`Clock::descheduler_idle`]) or while the other controllers are idle; its evictions are
//!   [`ClusterState::mark_for_deletion`], counted in [`ClusterState::evictions`] when a limit is
//!   set.
//! - The taint manager ([`crate::controllers::taint_manager`]) handles one pod of
//!   [`ClusterState::taint_queue`] per step and evicts it from a node whose NoExecute taint its
//!   template does not tolerate ([`PodTemplate::no_execute`]).
//! - Under `--semantics kubernetes`, a node that fails or kernel-panics keeps its pods: the
//!   node lifecycle controller ([`crate::controllers::node_lifecycle`]) taints it NoExecute,
//!   one node per step as its zones' states allow, and the taint eviction controller
//!   ([`crate::controllers::taint_eviction`]) deletes its pods when their 300 s toleration
//!   runs out, a step that may come at any time while the taint is on; the node controller
//!   deletes no pod, and a node taken for maintenance is drained through the Eviction API
//!   before it stops.
//! - Maintenance ([`crate::events::maintenance`]) keeps its walk over the nodes in
//!   [`EventsState::progress`](state::EventsState::progress) and each node's part in
//!   [`NodeState::maintenance`] and [`NodeState::maintenance_elapsed`]; node failure
//!   ([`crate::events::node_failure`]) is three separate steps.
//! - `no_oscillation_eviction` reads the kubelet's [`DeploymentState::evicted`] and
//!   [`DeploymentState::added`], `pod_balance_across_node` its
//!   [`DeploymentState::added_for_balance`].
//! - [`liveness`] finds pods evicted and re-created forever as a lasso (`--loop`), and runs
//!   that, after the last event and command, never stay converged (`--intent esr`).
//!
//! Kept Kivi quirks: descheduler `args` configure only the last profile; eviction limits count
//! over the whole run; pending pods with a node are counted and evicted by both plugins; the
//! descheduler's period is measured from the start and never restarted. Departures:
//! - The topology plugin counts nodes without the topology key as one more domain, as Kivi
//!   does, but where Kivi then reads a stale slot of its sorted-domains array, kivi reads an
//!   empty domain and never evicts from it.
//! - RemoveDuplicates' feasible nodes leave out nodes with a NoSchedule taint the template does
//!   not tolerate; Kivi's check indexes the taint list with the wrong loop variable.
//! - `nodeFailure` prints when the node fails and comes back (Kivi prints nothing).
//! - A maintenance event waiting at a node that never becomes ready simply stays disabled; SPIN
//!   reports that as an invalid end state. `p = 0` is refused by the loader for that reason.
//! - `expReplicas: "d[did].specReplicas - n"` is evaluated once, with the initial desired
//!   replicas; Kivi evaluates it whenever the monitor looks (the same unless the HPA or a
//!   command changes `specReplicas`).

mod daemon_sets;
mod descheduler_policy;
mod enabled_steps;
#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod kube_cycle_tests;
mod kube_preemption;
#[cfg(test)]
mod kube_preemption_tests;
mod kube_scheduling;
mod kube_timers;
pub mod liveness;
pub mod restart;
pub mod scheduler_steps;
mod scheduling;
#[cfg(test)]
mod spread_cache_tests;
pub mod stale_view;
mod successors;
pub mod symmetry;
#[cfg(test)]
pub(crate) mod test_cases;
mod victim_choices;
mod worker;

use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, DaemonPod, Perturbations, Recorder, Semantics,
    TieBreak, TraceLine, WriteBudget,
};
use crate::controllers::ties::Ties;
use crate::engine::model::{Model, Property, StepBuffers, WorkerBounds};
use crate::{controllers, events, intents};
use scheduler_steps::SharedListings;
use scheduling::Reduction;
use std::sync::Arc;
use symmetry::SymmetryStatus;
pub use worker::ClusterWorker;

/// kube-scheduler v1.33's decisions on a Kubernetes snapshot, for the layers above that
/// explain them (`kivi schedule`).
pub use crate::controllers::kube_descheduler::{
    Descheduler, FirstOption, Report as DeschedulingReport,
};
pub use crate::controllers::kube_scheduler::{decide_pending, Decision, Plugin};
pub use crate::controllers::scheduler::fit_error::{FitError, NodeRejection};

/// Why symmetry is off when the user turned it off.
const NO_SYMMETRY: &str = "--no-symmetry";

/// A cluster ready to be checked: its stable spec and its initial state.
#[derive(Clone, Debug)]
pub struct ClusterModel {
    spec: ClusterSpec,
    init: ClusterState,
    symmetry: SymmetryStatus,
    /// The scheduler steps' listings every worker on this model shares (a new model, or the
    /// model with new options, starts with none).
    listings: Arc<SharedListings>,
    /// Set when a scheduler or deployment controller step had more outcomes than the memory
    /// budget holds while they were listed: the search then missed some successors and
    /// cannot be complete ([`Model::left_out`]).
    left_out: std::sync::OnceLock<String>,
    /// The index of `pdb_never_violated` among the spec's intents when it is checked: each
    /// step then compares the budgets' status before and after it ([`intents::pdb`]).
    pdb_intent: Option<usize>,
    /// The DaemonSets' pods whose node had no room when the model started under
    /// `--semantics kubernetes` ([`controllers::daemon_set::place`]).
    daemon_pods_pending: Vec<DaemonPod>,
}

/// The user's choices about the model's semantics and its reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOptions {
    /// How ties between equally ranked candidates are broken.
    pub tie_break: TieBreak,
    /// Whose scheduling rules the model follows (Kivi's in journals written before kivi
    /// recorded it).
    #[serde(default)]
    pub semantics: Semantics,
    /// Whether to reduce by symmetry where that is sound ([`symmetry`]).
    pub symmetry: bool,
    /// The controller faults a run may suffer (`--perturb`).
    #[serde(default)]
    pub perturbations: Perturbations,
}

impl Default for ModelOptions {
    /// Kivi's semantics (Kivi's scheduler, lowest-id ties), with symmetry wherever it is sound (nowhere under
    /// lowest-id ties).
    fn default() -> Self {
        Self {
            tie_break: TieBreak::Lowest,
            semantics: Semantics::Kivi,
            symmetry: true,
            perturbations: Perturbations::default(),
        }
    }
}

impl ClusterModel {
    /// Builds the model from a loaded spec and the input's state: Kivi's `init` seeds the HPA
    /// and descheduler queues with every deployment.
    pub fn new(spec: ClusterSpec, mut init: ClusterState) -> Self {
        for d in 1..=spec.deployments.len() {
            init.enqueue_hpa(&spec, d);
            init.enqueue_descheduler(&spec, d);
        }
        intents::observe(&spec, &mut init, &mut Recorder::off());
        let symmetry = SymmetryStatus::of(&spec);
        let pdb_intent = intents::pdb::watched(&spec);
        Self {
            pdb_intent,
            daemon_pods_pending: Vec::new(),
            spec,
            init,
            symmetry,
            listings: Arc::default(),
            left_out: std::sync::OnceLock::new(),
        }
    }

    /// The model with `options`' tie-break semantics and reduction.
    pub fn with_options(mut self, options: ModelOptions) -> Self {
        self.spec.tie_break = options.tie_break;
        self.spec.semantics = options.semantics;
        self.spec.perturbations = options.perturbations;
        self.init.perturbations_mut().left = if options.perturbations.kinds() {
            options.perturbations.budget
        } else {
            0
        };
        if options.semantics == Semantics::Kubernetes {
            let placement = controllers::daemon_set::place(&self.spec, &mut self.init);
            self.spec.daemon_pods = placement.placed;
            self.daemon_pods_pending = placement.pending;
            kube_scheduling::start(&mut self.init);
            crate::controllers::kube_scale::annotate_initial(&mut self.init);
            if self.spec.may_preempt() && !self.init.keeps_nominations() {
                self.init.keep_nominations();
            }
        }
        if self.init.perturbations().left > 0 {
            self.init.keep_views(stale_view::views(&self.spec));
        }
        self.listings = Arc::default();
        self.symmetry = if !options.symmetry {
            SymmetryStatus::Off(NO_SYMMETRY.into())
        } else if options.perturbations.stale_view {
            SymmetryStatus::Off("--perturb stale-view".into())
        } else {
            SymmetryStatus::of(&self.spec)
        };
        self
    }

    /// The model with states fingerprinted as they are, for the reason `why` (what reports
    /// say instead of `--no-symmetry`).
    pub(crate) fn without_symmetry(mut self, why: &str) -> Self {
        self.symmetry = SymmetryStatus::Off(why.into());
        self
    }

    /// Whether states are reduced by symmetry, and if not, why not.
    pub fn symmetry(&self) -> &SymmetryStatus {
        &self.symmetry
    }

    /// The stable part of the cluster.
    pub fn spec(&self) -> &ClusterSpec {
        &self.spec
    }

    /// The state the search starts from.
    pub fn initial_state(&self) -> &ClusterState {
        &self.init
    }

    /// The intents checked, in property order: Kivi's user-facing names, each made distinct
    /// by its deployment where two share a name ([`intents::distinct_names`]).
    pub fn intent_names(&self) -> Vec<String> {
        intents::distinct_names(&self.spec.intents)
    }

    /// Takes `action` in `state`, recording Kivi's trace messages into `rec` (off the hot
    /// path: with a context of its own).
    pub fn step(
        &self,
        state: &ClusterState,
        action: &ClusterAction,
        rec: &mut Recorder,
    ) -> ClusterState {
        let mut next = state.clone();
        self.apply(&mut ClusterWorker::unbounded(), &mut next, action, rec);
        next
    }

    /// The actions enabled in `state`, appended to `actions` ([`Model::actions`] with a
    /// context of its own: for tools and tests, off the hot path).
    pub fn actions(&self, state: &ClusterState, actions: &mut Vec<ClusterAction>) {
        Model::actions(self, &mut ClusterWorker::unbounded(), state, actions);
    }

    /// The state `action` leads to from `state` ([`Model::next_state`] with a context of its
    /// own: for tools and tests, off the hot path).
    pub fn next_state(&self, state: &ClusterState, action: &ClusterAction) -> Option<ClusterState> {
        Model::next_state(self, &mut ClusterWorker::unbounded(), state, action)
    }

    /// Appends `state`'s canonical encoding to `out` ([`Model::encode`] with a context of its
    /// own: for tools and tests, off the hot path).
    pub fn encode(&self, state: &ClusterState, out: &mut Vec<u8>) {
        Model::encode(self, &mut ClusterWorker::unbounded(), state, out);
    }

    /// Whether intent number `property` holds in `state` ([`Model::holds`] with a context of
    /// its own: for tools and tests, off the hot path).
    pub fn holds(&self, property: usize, state: &ClusterState) -> bool {
        Model::holds(self, &mut ClusterWorker::unbounded(), property, state)
    }

    /// `state`'s fingerprint ([`Model::fingerprint`] with a context of its own: for tools and
    /// tests, off the hot path).
    pub fn fingerprint(&self, state: &ClusterState, scratch: &mut Vec<u8>) -> u64 {
        Model::fingerprint(self, &mut ClusterWorker::unbounded(), state, scratch)
    }

    /// Takes `action` in `next` (a copy of the state it is taken in), in place, on worker
    /// context `w`. It, [`ClusterModel::apply_semantics`] and
    /// [`ClusterModel::apply_controllers_and_events`] are inlined into their callers: they run
    /// once per transition, and their three frames cost about 5 % of a check's instructions.
    #[inline(always)]
    fn apply(
        &self,
        w: &mut ClusterWorker,
        next: &mut ClusterState,
        action: &ClusterAction,
        rec: &mut Recorder,
    ) {
        let spec = &self.spec;
        if let Some(intent) = self.pdb_intent {
            let before = intents::pdb::statuses(spec, next);
            self.apply_semantics(w, next, action, rec);
            intents::pdb::observe_step(spec, intent, &before, next, action, rec);
            return;
        }
        self.apply_semantics(w, next, action, rec);
    }

    /// [`ClusterModel::apply`] under the spec's semantics.
    #[inline(always)]
    fn apply_semantics(
        &self,
        w: &mut ClusterWorker,
        next: &mut ClusterState,
        action: &ClusterAction,
        rec: &mut Recorder,
    ) {
        let spec = &self.spec;
        if spec.semantics == Semantics::Kubernetes {
            let before = next.clone();
            if action.is_scheduler() {
                let choice = action.scheduler_choices() as usize;
                if let Some(left_out) = kube_scheduling::run(spec, next, choice, rec, &mut w.kube) {
                    self.left_out.get_or_init(|| left_out.note());
                }
                intents::observe(spec, next, rec);
                stale_view::after_step(spec, next, action);
            } else {
                if let ClusterAction::UserCommand { event } = *action {
                    let kind = &spec.events[event as usize].kind;
                    if events::user_command::merges_replica_sets(spec, next, kind) {
                        self.left_out
                            .get_or_init(events::user_command::merged_replica_sets_note);
                    }
                }
                self.apply_controllers_and_events(w, next, action, rec);
            }
            if *action == ClusterAction::Hpa
                && controllers::kube_hpa_behavior::forgot_event(&before, next)
            {
                self.left_out.get_or_init(kube_timers::forgotten_event_note);
            }
            if *action == ClusterAction::Hpa && controllers::kube_hpa::window_saturated(spec, next)
            {
                self.left_out
                    .get_or_init(kube_timers::saturated_window_note);
            }
            kube_scheduling::requeue_unschedulable(&before, next);
            return;
        }
        self.apply_controllers_and_events(w, next, action, rec);
    }

    /// [`ClusterModel::apply`] with Kivi's scheduler.
    #[inline(always)]
    fn apply_controllers_and_events(
        &self,
        w: &mut ClusterWorker,
        next: &mut ClusterState,
        action: &ClusterAction,
        rec: &mut Recorder,
    ) {
        let spec = &self.spec;
        match *action {
            ClusterAction::SchedulerChoice { choices } if !rec.is_recording() => {
                let known = self
                    .remembered_placements(w, next, choices)
                    .or_else(|| self.shared_placements(w, next, choices));
                match known {
                    Some(placements) => {
                        scheduler_steps::replay_placements(&self.spec, next, &placements, rec)
                    }
                    None => self.run_scheduler(w, next, choices, rec),
                }
            }
            ClusterAction::Scheduler | ClusterAction::SchedulerChoice { .. } => {
                self.run_scheduler(w, next, action.scheduler_choices(), rec)
            }
            ClusterAction::DeploymentController => controllers::deployment::run(spec, next, rec),
            ClusterAction::DeploymentChoice { picks } => {
                let mut picker = victim_choices::PathPicker::replaying(picks);
                controllers::deployment::run_with(
                    spec,
                    next,
                    rec,
                    &mut WriteBudget::unlimited(),
                    &mut Ties::picked_by(&mut picker),
                )
            }
            ClusterAction::Hpa => controllers::hpa::run(spec, next, rec),
            ClusterAction::HpaWindowExpires { deployment } => {
                controllers::kube_hpa::expire(spec, next, deployment as usize, rec)
            }
            ClusterAction::HpaUpWindowExpires { deployment } => {
                controllers::kube_hpa_behavior::expire_up_window(
                    spec,
                    next,
                    deployment as usize,
                    rec,
                )
            }
            ClusterAction::HpaScaleEventLeaves { deployment, period } => {
                controllers::kube_hpa_behavior::scale_event_leaves(
                    spec,
                    next,
                    deployment as usize,
                    period as usize,
                    rec,
                )
            }
            ClusterAction::NodeController => controllers::node_controller::run(spec, next),
            ClusterAction::NodeLifecycle { node } => {
                controllers::node_lifecycle::run(spec, next, node as usize, rec)
            }
            ClusterAction::TolerationTimeout { node } => {
                controllers::taint_eviction::run(spec, next, node as usize, rec)
            }
            ClusterAction::AutoscalerScaleUp { .. }
            | ClusterAction::AutoscalerNoScaleUp
            | ClusterAction::AutoscalerSoftTaints
            | ClusterAction::AutoscalerScaleDown { .. }
            | ClusterAction::AutoscalerEviction { .. }
            | ClusterAction::AutoscalerScaleDownFails { .. }
            | ClusterAction::AutoscalerDeletesNode { .. }
            | ClusterAction::NodeRegisters { .. }
            | ClusterAction::NodeProvisioningFails { .. }
            | ClusterAction::AutoscalerBackoffEnds { .. } => {
                controllers::cluster_autoscaler::run(spec, next, action, rec)
            }
            ClusterAction::Kubelet => controllers::kubelet::run(spec, next, &mut w.kubelet, rec),
            ClusterAction::Descheduler => controllers::descheduler::run(spec, next, rec),
            ClusterAction::DeschedulerChoice { picks } => {
                let mut picker = victim_choices::PathPicker::replaying(picks);
                controllers::descheduler::run_with(
                    spec,
                    next,
                    rec,
                    &mut WriteBudget::unlimited(),
                    &mut Ties::picked_by(&mut picker),
                )
            }
            ClusterAction::TaintManager => controllers::taint_manager::run(spec, next, rec),
            ClusterAction::StartAfterStable => next.events_mut().after_stable_started = true,
            ClusterAction::Restart {
                queue,
                writes,
                picks,
            } => restart::run(spec, next, queue, writes, picks, rec),
            ClusterAction::StaleView { queue, depth } => {
                stale_view::run(spec, next, queue, depth, rec)
            }
            _ => events::run(spec, next, action, rec),
        }
        intents::observe(spec, next, rec);
        stale_view::after_step(spec, next, action);
    }

    /// The pod a scheduler step `action` taken in `before` finds no node for, with kube-scheduler's
    /// `FitError` saying which filters rejected which nodes (`0/3 nodes are available:
    /// 3 node(s) didn't match pod topology spread constraints.`) and each plugin's numbers per
    /// node; `None` when every queued pod fits.
    pub fn unschedulable(&self, before: &ClusterState, action: &ClusterAction) -> Option<FitError> {
        if !action.is_scheduler() {
            return None;
        }
        if self.spec.semantics == Semantics::Kubernetes {
            let mut cache = kube_scheduling::CycleCache::default();
            return match kube_scheduling::cycle(&self.spec, before, &mut cache) {
                Some(kube_scheduling::Cycle::Unschedulable(error)) => Some(error.clone()),
                _ => None,
            };
        }
        let mut w = ClusterWorker::unbounded();
        let classing = self.step_classing(before, &mut w.symmetry);
        let reduction = Reduction::new(self, &mut w.symmetry, &mut w.encoding);
        classing.with(&reduction, |reduce| {
            scheduler_steps::first_unschedulable(
                &self.spec,
                before,
                action.scheduler_choices(),
                reduce,
            )
        })
    }

    /// Kivi's trace lines for taking `action` in `before` (none for silent steps; several when
    /// one atomic step prints several).
    pub fn describe_step(&self, before: &ClusterState, action: &ClusterAction) -> Vec<TraceLine> {
        let mut rec = Recorder::on();
        self.step(before, action, &mut rec);
        rec.into_lines()
    }

    /// The counterexample `steps` taken from `init`, as Kivi prints it: one numbered line per
    /// message, silent steps left out.
    pub fn kivi_trace(
        &self,
        init: &ClusterState,
        steps: &[(ClusterAction, ClusterState)],
    ) -> Vec<String> {
        let mut lines = Vec::new();
        let mut state = init;
        for (action, next) in steps {
            for line in self.describe_step(state, action) {
                lines.push(line.render(lines.len()));
            }
            state = next;
        }
        lines
    }

    /// Kivi's counterexample lines for an engine trace.
    pub fn counterexample(&self, trace: &crate::engine::Trace<ClusterModel>) -> Vec<String> {
        let steps: Vec<_> = trace
            .steps
            .iter()
            .map(|s| (s.action, s.state.clone()))
            .collect();
        self.kivi_trace(&trace.init, &steps)
    }
}

impl Model for ClusterModel {
    type State = ClusterState;
    type Action = ClusterAction;
    type Worker = ClusterWorker;

    fn worker(&self, bounds: WorkerBounds) -> ClusterWorker {
        ClusterWorker::new(bounds)
    }

    fn init_states(&self) -> Vec<ClusterState> {
        vec![self.init.clone()]
    }

    fn actions(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        actions: &mut Vec<ClusterAction>,
    ) {
        self.for_each_action(w, state, |a, _| {
            actions.push(a);
            true
        });
    }

    fn next_state(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        action: &ClusterAction,
    ) -> Option<ClusterState> {
        let mut next = state.clone();
        self.apply(w, &mut next, action, &mut Recorder::off());
        Some(next)
    }

    fn next_state_into(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        action: &ClusterAction,
        out: &mut ClusterState,
    ) -> bool {
        out.clone_from(state);
        self.apply(w, out, action, &mut Recorder::off());
        true
    }

    /// Hands a scheduler step's outcomes over as its listing computed them, and computes the
    /// other actions' states ([`Model::next_state_into`]), within the search's memory budget
    /// and time limit ([`successors::hand_over`]).
    fn successors(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        buffers: &mut StepBuffers<ClusterAction, ClusterState>,
        visit: impl FnMut(ClusterAction, ClusterState),
    ) {
        successors::hand_over(self, w, state, buffers, visit);
    }

    /// Gives back what the successors handed over were charged, now that the engine holds
    /// them in its visited set and frontier, which it charges itself.
    #[inline]
    fn successors_taken(&self, w: &mut ClusterWorker) {
        if w.handed_over.is_some() {
            w.handed_over = None;
        }
    }

    fn encode(&self, w: &mut ClusterWorker, state: &ClusterState, out: &mut Vec<u8>) {
        match &self.symmetry {
            SymmetryStatus::On(symmetry) => symmetry.encode(state, &mut w.symmetry, out),
            SymmetryStatus::Off(_) => state.encode(out),
        }
    }

    fn fingerprint(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        scratch: &mut Vec<u8>,
    ) -> u64 {
        match &self.symmetry {
            SymmetryStatus::On(symmetry) => symmetry.fingerprint(state, &mut w.symmetry, scratch),
            SymmetryStatus::Off(_) => state.fingerprint(scratch),
        }
    }

    fn left_out(&self) -> Option<String> {
        self.left_out.get().cloned()
    }

    fn properties(&self) -> Vec<Property> {
        self.intent_names()
            .into_iter()
            .map(Property::always)
            .collect()
    }

    fn holds(&self, w: &mut ClusterWorker, property: usize, state: &ClusterState) -> bool {
        intents::holds(&self.spec, state, property, || {
            self.any_enabled_on(w, state)
        })
    }

    fn state_heap_bytes(&self, state: &ClusterState) -> usize {
        state.heap_bytes(crate::engine::memory::allocation_size)
    }

    fn describe_action(&self, state: &ClusterState, action: &ClusterAction) -> String {
        let lines = self.describe_step(state, action);
        if lines.is_empty() {
            format!("{action:?}")
        } else {
            lines
                .iter()
                .map(|l| match l.controller {
                    Some(c) => format!("[{c}] {}", l.message),
                    None => l.message.clone(),
                })
                .collect::<Vec<_>>()
                .join("; ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_cases::load;
    use crate::cluster::ClusterAction;

    #[test]
    fn first_commands_run_before_anything_else() {
        let model = load("c1", "minimal");
        let mut offered = Vec::new();
        model.actions(model.initial_state(), &mut offered);
        assert_eq!(offered, [ClusterAction::UserCommand { event: 1 }]);
    }
}
