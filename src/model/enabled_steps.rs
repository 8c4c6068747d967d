//! Which steps the cluster may take in a state, listed in one fixed order: the events and
//! commands, the perturbations, then the controllers, as Kivi's `init` starts its processes
//! in reverse (the order SPIN's depth-first search tries them in). Where a controller's step
//! ties between equally ranked victims, the listing of those ties is here too.

use super::{kube_timers, restart, stale_view, victim_choices, ClusterModel, ClusterWorker};
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, Queue, Recorder, Semantics, TieBreak, WriteBudget,
};
use crate::controllers::ties::Ties;
use crate::engine::model::Model;
use crate::{controllers, events};
use std::cell::RefCell;

impl ClusterModel {
    /// Whether any step is enabled in `state`.
    pub fn any_enabled(&self, state: &ClusterState) -> bool {
        self.any_enabled_on(&mut ClusterWorker::unbounded(), state)
    }

    /// [`ClusterModel::any_enabled`] on worker context `w`.
    pub(super) fn any_enabled_on(&self, w: &mut ClusterWorker, state: &ClusterState) -> bool {
        let mut found = false;
        self.for_each_action(w, state, |_, _| {
            found = true;
            false
        });
        found
    }

    /// Calls `visit` on each enabled action until it returns false, in a fixed order: the
    /// reverse of the order in which Kivi's `init` starts the processes (events, then the
    /// controllers, then `init`'s own after-stable step), which is the order SPIN's depth-first
    /// search tries them in. An action comes with the state it leads to where listing it
    /// computed that (a scheduler step's outcome under `--tie-break any`).
    pub(super) fn for_each_action(
        &self,
        w: &mut ClusterWorker,
        s: &ClusterState,
        mut visit: impl FnMut(ClusterAction, Option<ClusterState>) -> bool,
    ) {
        let spec = &self.spec;
        let mut plain = |action| visit(action, None);
        if !events::for_each_enabled(spec, s, &mut plain) || s.first_pending(spec) {
            return;
        }
        let worker = RefCell::new(&mut *w);
        let victim_picks =
            |state: &ClusterState| self.victim_picks(&mut worker.borrow_mut(), state);
        if !restart::for_each(spec, s, &victim_picks, &mut plain)
            || !stale_view::for_each(spec, s, &mut plain)
        {
            return;
        }
        if controllers::descheduler::enabled(spec, s)
            && !self.for_each_descheduler_step(w, s, &mut |action| visit(action, None))
        {
            return;
        }
        let before_scheduler = [
            (!s.queue_is_empty(Queue::Kubelet), ClusterAction::Kubelet),
            (
                controllers::taint_manager::enabled(s),
                ClusterAction::TaintManager,
            ),
            (
                !s.queue_is_empty(Queue::Node),
                ClusterAction::NodeController,
            ),
            (controllers::hpa::enabled(spec, s), ClusterAction::Hpa),
        ];
        for (enabled, action) in before_scheduler {
            if enabled && !visit(action, None) {
                return;
            }
        }
        if spec.semantics == Semantics::Kubernetes
            && !(kube_timers::for_each(spec, s, &mut |action| visit(action, None))
                && controllers::cluster_autoscaler::for_each(spec, s, &mut |action| {
                    visit(action, None)
                }))
        {
            return;
        }
        if !s.queue_is_empty(Queue::Scheduler) && !self.for_each_scheduler_step(w, s, &mut visit) {
            return;
        }
        let mut plain = |action| visit(action, None);
        if controllers::deployment::enabled(s) && !self.for_each_deployment_step(w, s, &mut plain) {
            return;
        }
        let after_scheduler = [(
            s.is_quiet()
                && !(spec.semantics == Semantics::Kubernetes && s.workloads_pending(spec))
                && !s.events().after_stable_started
                && spec.events.iter().any(|e| e.after_stable),
            ClusterAction::StartAfterStable,
        )];
        for (enabled, action) in after_scheduler {
            if enabled && !visit(action, None) {
                return;
            }
        }
    }

    /// Calls `visit` on the deployment controller steps enabled in `s`: one step under
    /// `--tie-break lowest` or where the step's victims are never tied, else one per outcome of
    /// its ties ([`victim_choices`]).
    fn for_each_deployment_step(
        &self,
        w: &mut ClusterWorker,
        s: &ClusterState,
        visit: &mut impl FnMut(ClusterAction) -> bool,
    ) -> bool {
        let all_picks = self.victim_picks(w, s);
        if all_picks.len() <= 1 {
            return visit(ClusterAction::DeploymentController);
        }
        all_picks
            .into_iter()
            .all(|picks| visit(ClusterAction::DeploymentChoice { picks }))
    }

    /// Calls `visit` on the descheduler steps enabled in `s`: one step under `--tie-break
    /// lowest` or where its victims are never tied, else one per outcome of its ties.
    fn for_each_descheduler_step(
        &self,
        w: &mut ClusterWorker,
        s: &ClusterState,
        visit: &mut impl FnMut(ClusterAction) -> bool,
    ) -> bool {
        let all_picks = match self.spec.tie_break {
            TieBreak::Lowest => vec![0],
            TieBreak::Any => self.tie_listing(w, s, TiedStep::Descheduler).picks,
        };
        if all_picks.len() <= 1 {
            return visit(ClusterAction::Descheduler);
        }
        all_picks
            .into_iter()
            .all(|picks| visit(ClusterAction::DeschedulerChoice { picks }))
    }

    /// The picks of each outcome of the deployment controller's step in `state`: the lowest
    /// ids alone under `--tie-break lowest`.
    fn victim_picks(&self, w: &mut ClusterWorker, state: &ClusterState) -> Vec<u64> {
        match self.spec.tie_break {
            TieBreak::Lowest => vec![0],
            TieBreak::Any => self.tie_listing(w, state, TiedStep::Deployment).picks,
        }
    }

    /// The outcomes of `step` in `state` under `--tie-break any`, told apart by the model's
    /// fingerprints; a step with too many is noted in [`ClusterModel::left_out`].
    fn tie_listing(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        step: TiedStep,
    ) -> victim_choices::Listing {
        let mut scratch = std::mem::take(&mut w.encoding);
        let bounds = w.bounds.clone();
        let run = |next: &mut ClusterState, picker: &mut victim_choices::PathPicker| {
            let (rec, writes) = (&mut Recorder::off(), &mut WriteBudget::unlimited());
            let ties = &mut Ties::picked_by(picker);
            match step {
                TiedStep::Deployment => {
                    controllers::deployment::run_with(&self.spec, next, rec, writes, ties)
                }
                TiedStep::Descheduler => {
                    controllers::descheduler::run_with(&self.spec, next, rec, writes, ties)
                }
            }
        };
        let listing = victim_choices::list(
            state,
            &run,
            &mut |end| Model::fingerprint(self, w, end, &mut scratch),
            step == TiedStep::Deployment,
            &bounds,
        );
        w.encoding = scratch;
        let why = match listing.cut {
            None | Some(victim_choices::Cut::Stopped) => None,
            Some(victim_choices::Cut::Memory) => {
                bounds.note_memory_refused();
                Some("more than the memory budget holds; give it more --memory")
            }
            Some(victim_choices::Cut::Overflow) => Some("too many to number in 64 bits"),
        };
        if let Some(why) = why {
            self.left_out.get_or_init(|| {
                let what = match step {
                    TiedStep::Deployment => {
                        "deployment controller step under --tie-break any had more ways to pick \
                         its scale-down victims among equally ranked pods"
                    }
                    TiedStep::Descheduler => {
                        "descheduler step under --tie-break any had more ways to pick the pods \
                         it evicts among equally ranked ones"
                    }
                };
                format!(
                    "a {what} than were explored ({why}){}",
                    self.symmetry_clause()
                )
            });
        }
        listing
    }
}

/// A controller step whose ties between equally ranked victims the model lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TiedStep {
    /// The deployment controller's scale-down.
    Deployment,
    /// The descheduler's evictions.
    Descheduler,
}

/// Whether the controller that drains `queue` may take a step in `state`: its ordinary guard,
/// which the perturbations' steps share (false for queues no controller step drains alone).
pub(super) fn controller_enabled(spec: &ClusterSpec, state: &ClusterState, queue: Queue) -> bool {
    match queue {
        Queue::Scheduler => !state.queue_is_empty(Queue::Scheduler),
        Queue::Deployment => controllers::deployment::enabled(state),
        Queue::Hpa => controllers::hpa::enabled(spec, state),
        Queue::Descheduler => controllers::descheduler::enabled(spec, state),
        _ => false,
    }
}
