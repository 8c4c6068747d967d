//! Two-phase commit, as specified by Gray and Lamport ("Consensus on Transaction Commit") and
//! checked by TLC and Stateright: a transaction manager and N resource managers exchanging
//! messages through a set that only grows.

use crate::engine::model::{Model, Property, WorkerBounds};

/// The most resource managers the model supports.
const MAX_RMS: usize = 8;

/// A resource manager's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ResourceManager {
    /// Has not decided.
    Working,
    /// Voted to commit.
    Prepared,
    /// Committed the transaction.
    Committed,
    /// Aborted the transaction.
    Aborted,
}

/// The transaction manager's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TransactionManager {
    /// Collecting votes.
    Init,
    /// Decided to commit.
    Committed,
    /// Decided to abort.
    Aborted,
}

/// A global state of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoPhaseState {
    rms: [ResourceManager; MAX_RMS],
    tm: TransactionManager,
    /// Bit i: the manager has received resource manager i's vote.
    tm_prepared: u8,
    /// Bit i: a `Prepared` message from resource manager i has been sent.
    prepared_msgs: u8,
    commit_sent: bool,
    abort_sent: bool,
}

/// One step of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwoPhaseAction {
    /// The manager receives resource manager i's `Prepared` message.
    TmRcvPrepared(u8),
    /// The manager commits (all prepared) and sends `Commit`.
    TmCommit,
    /// The manager aborts and sends `Abort`.
    TmAbort,
    /// Resource manager i prepares and sends `Prepared`.
    RmPrepare(u8),
    /// Resource manager i aborts on its own.
    RmChooseToAbort(u8),
    /// Resource manager i receives `Commit`.
    RmRcvCommitMsg(u8),
    /// Resource manager i receives `Abort`.
    RmRcvAbortMsg(u8),
}

/// Two-phase commit with a fixed number of resource managers.
#[derive(Clone, Debug)]
pub struct TwoPhaseCommit {
    rm_count: usize,
}

impl TwoPhaseCommit {
    /// The protocol with `rm_count` (1..=8) resource managers.
    pub fn new(rm_count: usize) -> Self {
        assert!((1..=MAX_RMS).contains(&rm_count), "1 to {MAX_RMS} managers");
        Self { rm_count }
    }

    fn all_prepared(&self) -> u8 {
        ((1u16 << self.rm_count) - 1) as u8
    }
}

impl Model for TwoPhaseCommit {
    type State = TwoPhaseState;
    type Action = TwoPhaseAction;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}

    fn init_states(&self) -> Vec<TwoPhaseState> {
        vec![TwoPhaseState {
            rms: [ResourceManager::Working; MAX_RMS],
            tm: TransactionManager::Init,
            tm_prepared: 0,
            prepared_msgs: 0,
            commit_sent: false,
            abort_sent: false,
        }]
    }

    fn actions(&self, _: &mut (), state: &TwoPhaseState, actions: &mut Vec<TwoPhaseAction>) {
        use TwoPhaseAction::*;
        if state.tm == TransactionManager::Init {
            if state.tm_prepared == self.all_prepared() {
                actions.push(TmCommit);
            }
            actions.push(TmAbort);
        }
        for rm in 0..self.rm_count as u8 {
            let bit = 1 << rm;
            if state.tm == TransactionManager::Init && state.prepared_msgs & bit != 0 {
                actions.push(TmRcvPrepared(rm));
            }
            if state.rms[rm as usize] == ResourceManager::Working {
                actions.push(RmPrepare(rm));
                actions.push(RmChooseToAbort(rm));
            }
            if state.commit_sent {
                actions.push(RmRcvCommitMsg(rm));
            }
            if state.abort_sent {
                actions.push(RmRcvAbortMsg(rm));
            }
        }
    }

    fn next_state(
        &self,
        _: &mut (),
        state: &TwoPhaseState,
        action: &TwoPhaseAction,
    ) -> Option<TwoPhaseState> {
        use TwoPhaseAction::*;
        let mut next = *state;
        match *action {
            TmRcvPrepared(rm) => next.tm_prepared |= 1 << rm,
            TmCommit => {
                next.tm = TransactionManager::Committed;
                next.commit_sent = true;
            }
            TmAbort => {
                next.tm = TransactionManager::Aborted;
                next.abort_sent = true;
            }
            RmPrepare(rm) => {
                next.rms[rm as usize] = ResourceManager::Prepared;
                next.prepared_msgs |= 1 << rm;
            }
            RmChooseToAbort(rm) => next.rms[rm as usize] = ResourceManager::Aborted,
            RmRcvCommitMsg(rm) => next.rms[rm as usize] = ResourceManager::Committed,
            RmRcvAbortMsg(rm) => next.rms[rm as usize] = ResourceManager::Aborted,
        }
        Some(next)
    }

    fn encode(&self, _: &mut (), state: &TwoPhaseState, out: &mut Vec<u8>) {
        out.extend(state.rms[..self.rm_count].iter().map(|&rm| rm as u8));
        out.extend_from_slice(&[
            state.tm as u8,
            state.tm_prepared,
            state.prepared_msgs,
            u8::from(state.commit_sent) | u8::from(state.abort_sent) << 1,
        ]);
    }

    fn properties(&self) -> Vec<Property> {
        vec![
            Property::always("consistent"),
            Property::sometimes("all committed"),
        ]
    }

    fn holds(&self, _: &mut (), property: usize, state: &TwoPhaseState) -> bool {
        let rms = &state.rms[..self.rm_count];
        match property {
            0 => {
                !(rms.contains(&ResourceManager::Committed)
                    && rms.contains(&ResourceManager::Aborted))
            }
            _ => rms.iter().all(|&rm| rm == ResourceManager::Committed),
        }
    }
}
