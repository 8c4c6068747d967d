//! How the model takes Kivi's scheduler steps and, under `--tie-break any`, lists their
//! outcomes ([`scheduler_steps`]): with the model's reduction narrowing ties and classing
//! partly placed states, the worker's remembered placements and the model's shared
//! listings in front of the listing.

use super::kube_preemption::LeftOut;
use super::scheduler_steps::{self, Listed, Placements, Reduce};
use super::symmetry::{self, SymmetryStatus};
use super::{kube_scheduling, ClusterModel, ClusterWorker, NO_SYMMETRY};
use crate::cluster::{ClusterAction, ClusterState, Recorder, Semantics, TieBreak};
use crate::engine::memory::allocation_size;
use std::cell::RefCell;

impl ClusterModel {
    /// What a note on a listing of ties cut short adds about symmetry: nothing when it is on
    /// (the listing was already one outcome per class), else why it is off.
    pub(super) fn symmetry_clause(&self) -> String {
        match &self.symmetry {
            SymmetryStatus::On(_) => String::new(),
            SymmetryStatus::Off(why) if why == NO_SYMMETRY => format!(
                "; symmetry reduction is off ({why}), with it a step lists one outcome per class"
            ),
            SymmetryStatus::Off(why) => format!("; symmetry reduction is off ({why})"),
        }
    }

    /// Where outcome number `choices` of the scheduler step in `state` puts its pods, if the
    /// worker remembers it: a large state's child computed again after its listing.
    pub(super) fn remembered_placements(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        choices: u64,
    ) -> Option<Placements> {
        if !w.bounds.computes_children_again(state_bytes(state)) {
            return None;
        }
        let source = w.placements.source_key(state);
        w.placements.get(source, choices).cloned()
    }

    /// Where outcome number `choices` of the scheduler step in `state` puts its pods, from the
    /// listing all workers share under `state`'s listing key, if one is kept: a worker taking
    /// a child whose parent another worker listed (a stolen task, a large state's child
    /// computed again) binds its pods there instead of listing the step again.
    pub(super) fn shared_placements(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        choices: u64,
    ) -> Option<Placements> {
        let SymmetryStatus::On(symmetry) = &self.symmetry else {
            return None;
        };
        let listing = self
            .listings
            .get(symmetry.listing_key(state, &mut w.symmetry)?)?;
        let (_, placements) = listing.iter().find(|(number, _)| *number == choices)?;
        Some(placements.clone())
    }

    /// Takes the scheduler step's outcome number `choices` in `next`, in place.
    pub(super) fn run_scheduler(
        &self,
        w: &mut ClusterWorker,
        next: &mut ClusterState,
        choices: u64,
        rec: &mut Recorder,
    ) {
        let classing = self.step_classing(next, &mut w.symmetry);
        let reduction = Reduction::new(self, &mut w.symmetry, &mut w.encoding);
        classing.with(&reduction, |reduce| {
            scheduler_steps::run(&self.spec, next, choices, reduce, &mut w.scheduler, rec)
        })
    }

    /// Whether some kube-scheduler cycle may be one the model cannot take
    /// ([`kube_scheduling::Cycle::Unmodelled`]): only a pod that may preempt a DaemonSet's pod
    /// meets one.
    fn may_withhold_steps(&self) -> bool {
        self.spec.semantics == Semantics::Kubernetes
            && self.spec.may_preempt()
            && !self.spec.daemon_pods.is_empty()
    }

    /// Whether the model takes no scheduler step in `s` because the cycle there is one it
    /// cannot take ([`kube_scheduling::Cycle::Unmodelled`]): a run that the model ends there
    /// goes on upstream, so a liveness check must not take it as stopped.
    pub fn withholds_step(&self, w: &mut ClusterWorker, s: &ClusterState) -> bool {
        self.may_withhold_steps() && kube_scheduling::choices(&self.spec, s, &mut w.kube) == 0
    }

    /// Calls `visit` on the scheduler steps enabled in `s` (a queued pod): one step under
    /// `--tie-break lowest`, one per outcome of the step's ties under `any` (one per class of
    /// outcomes with symmetry), each outcome with the state it leads to. A step with more
    /// outcomes than the memory budget holds is noted in [`ClusterModel::left_out`] and visited
    /// in part, and a kube-scheduler cycle the model cannot take (a preemption of a DaemonSet's
    /// pod, [`kube_scheduling::Cycle::Unmodelled`]) is noted there and is no step. With
    /// symmetry, a state whose listing key ([`symmetry::Symmetry::listing_key`]) was listed
    /// completely before takes that listing's outcomes by binding their placements instead of
    /// listing the step again ([`SharedListings`]).
    pub(super) fn for_each_scheduler_step(
        &self,
        w: &mut ClusterWorker,
        s: &ClusterState,
        visit: &mut impl FnMut(ClusterAction, Option<ClusterState>) -> bool,
    ) -> bool {
        if self.spec.tie_break == TieBreak::Lowest && !self.may_withhold_steps() {
            return visit(ClusterAction::Scheduler, None);
        }
        if self.spec.semantics == Semantics::Kubernetes {
            return match kube_scheduling::choices(&self.spec, s, &mut w.kube) {
                0 => {
                    self.left_out
                        .get_or_init(|| LeftOut::DaemonPodVictims.note());
                    true
                }
                1 => visit(ClusterAction::Scheduler, None),
                _ if self.spec.tie_break == TieBreak::Lowest => {
                    visit(ClusterAction::Scheduler, None)
                }
                top => (0..top as u64)
                    .all(|choices| visit(ClusterAction::SchedulerChoice { choices }, None)),
            };
        }
        let key = match &self.symmetry {
            SymmetryStatus::On(symmetry) => symmetry.listing_key(s, &mut w.symmetry),
            SymmetryStatus::Off(_) => None,
        };
        // Where the search computes this state's children again, the worker remembers where
        // each outcome put its pods, to take it again in one pass.
        let source = w.bounds.computes_children_again(state_bytes(s)).then(|| {
            w.placements.make_room();
            w.placements.source_key(s)
        });
        if let Some(outcomes) = key.and_then(|key| self.listings.get(key)) {
            for (choices, placements) in outcomes.iter() {
                let mut end = s.clone();
                scheduler_steps::replay_placements(
                    &self.spec,
                    &mut end,
                    placements,
                    &mut Recorder::off(),
                );
                if let Some(source) = source {
                    w.placements.remember(source, *choices, placements.clone());
                }
                if !visit(
                    ClusterAction::SchedulerChoice { choices: *choices },
                    Some(end),
                ) {
                    return false;
                }
            }
            return true;
        }
        // The outcomes' placements, for the shared listing; `None` once one cannot be told.
        let mut kept = key.map(|_| Vec::new());
        let classing = self.step_classing(s, &mut w.symmetry);
        let ClusterWorker {
            bounds,
            scheduler,
            symmetry,
            placements: remembered,
            encoding,
            ..
        } = w;
        let reduction = Reduction::new(self, symmetry, encoding);
        let listed = classing.with(&reduction, |reduce| {
            scheduler_steps::for_each_choice(
                &self.spec,
                s,
                reduce,
                bounds,
                scheduler,
                |choices, _, end| {
                    let placements = Placements::of(s, &end);
                    match (&placements, &mut kept) {
                        (Some(placements), Some(kept)) => kept.push((choices, placements.clone())),
                        (None, _) => kept = None,
                        (Some(_), None) => {}
                    }
                    if let (Some(source), Some(placements)) = (source, placements) {
                        remembered.remember(source, choices, placements);
                    }
                    visit(ClusterAction::SchedulerChoice { choices }, Some(end))
                },
            )
        });
        if let (Listed::All, Some(key), Some(kept)) = (listed, key, kept) {
            self.listings.keep(key, kept, bounds.memory());
        }
        match listed {
            Listed::All => true,
            Listed::Stopped | Listed::Cut => false,
            Listed::OutOfMemory { listed, held } => {
                bounds.note_memory_refused();
                self.left_out.get_or_init(|| {
                    format!(
                        "a scheduler step under --tie-break any had more outcomes than the \
                         memory budget holds (it ran out after listing {listed}, holding {} \
                         MiB); give it more --memory{}",
                        held >> 20,
                        self.symmetry_clause()
                    )
                });
                true
            }
        }
    }

    /// How the states a scheduler step from `source` reaches are told apart under the model's
    /// symmetry ([`StepClassing`]). Listing a step and replaying one of its outcomes must use
    /// the same classes, so both come here.
    pub(super) fn step_classing(
        &self,
        source: &ClusterState,
        scratch: &mut symmetry::Scratch,
    ) -> StepClassing<'_> {
        let SymmetryStatus::On(symmetry) = &self.symmetry else {
            return StepClassing::Off;
        };
        match symmetry.step_classes(source, scratch) {
            Some(step) => StepClassing::Placed(step),
            None => StepClassing::Forms,
        }
    }
}

/// The model's reduction with a worker's scratch, for a scheduler step to narrow its ties and
/// class its partly placed states by.
pub(super) struct Reduction<'a> {
    model: &'a ClusterModel,
    scratch: RefCell<&'a mut symmetry::Scratch>,
    encoding: RefCell<&'a mut Vec<u8>>,
}

impl<'a> Reduction<'a> {
    pub(super) fn new(
        model: &'a ClusterModel,
        scratch: &'a mut symmetry::Scratch,
        encoding: &'a mut Vec<u8>,
    ) -> Self {
        Self {
            model,
            scratch: RefCell::new(scratch),
            encoding: RefCell::new(encoding),
        }
    }

    /// Narrows a tie to one node of each group of interchangeable nodes when states are
    /// reduced by symmetry, keeps all of them otherwise.
    fn narrow(&self, state: &ClusterState, candidates: &mut Vec<u16>) {
        if let SymmetryStatus::On(symmetry) = &self.model.symmetry {
            symmetry.narrow(state, candidates, &mut self.scratch.borrow_mut());
        }
    }

    /// `state`'s class: its fingerprint under the model's reduction.
    fn form(&self, state: &ClusterState) -> u64 {
        let (scratch, encoding) = (
            &mut **self.scratch.borrow_mut(),
            &mut **self.encoding.borrow_mut(),
        );
        match &self.model.symmetry {
            SymmetryStatus::On(symmetry) => symmetry.fingerprint(state, scratch, encoding),
            SymmetryStatus::Off(_) => state.fingerprint(encoding),
        }
    }
}

/// How a scheduler listing tells apart the states a step from one state (its source) reaches,
/// when states are reduced (it follows one partly placed state per class). One lives on the
/// stack per scheduler listing, so the large variant stays inline: boxing it would allocate
/// on every step.
#[allow(clippy::large_enum_variant)]
pub(super) enum StepClassing<'m> {
    /// States are not reduced: no classes.
    Off,
    /// Told from what the step placed ([`symmetry::StepClasses`]), where the model allows.
    Placed(symmetry::StepClasses<'m>),
    /// By the states' canonical forms (the model's fingerprints).
    Forms,
}

impl StepClassing<'_> {
    /// Calls `f` with how the scheduler step narrows ties and classes its partly placed
    /// states: by node labels kept pod by pod where the step's classes can keep them, else by
    /// `reduction`'s narrowing and the classes (if states have any) of whole states.
    pub(super) fn with<T>(&self, reduction: &Reduction, f: impl FnOnce(Reduce) -> T) -> T {
        let narrow =
            |state: &ClusterState, candidates: &mut Vec<u16>| reduction.narrow(state, candidates);
        match self {
            Self::Off => f(Reduce::Off),
            Self::Placed(step) if step.labels_nodes() => f(Reduce::Labels(step)),
            Self::Placed(step) => f(Reduce::Whole(
                &narrow,
                Some(&|state: &ClusterState| step.of(state)),
            )),
            Self::Forms => f(Reduce::Whole(
                &narrow,
                Some(&|state: &ClusterState| reduction.form(state)),
            )),
        }
    }
}

/// The bytes `state` holds, inline and on the heap (as the allocator rounds its blocks): what
/// tells whether a search computes its children again, and what a successor is charged.
pub(super) fn state_bytes(state: &ClusterState) -> usize {
    std::mem::size_of::<ClusterState>() + state.heap_bytes(allocation_size)
}
