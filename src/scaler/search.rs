//! The search for the first violating topology, as a state machine the caller drives.
//!
//! The caller asks for a batch of topologies with [`Search::next_batch`],
//! checks them (in any order, concurrently if it likes), and reports each
//! verdict with [`Search::report`]. When [`Search::is_finished`] holds,
//! [`Search::outcome`] gives the answer.
//!
//! Kivi's answer is the *first* violating topology in its level-0 order
//! ([`FastFind::Exhaustive`]); that is what "minimal" means here.
//!
//! - Levels 0, 1 and 2 check their own enumeration in order and stop at the
//!   first violation, as Kivi does. A batch holds the next topologies in
//!   order, up to the window of outstanding checks.
//! - Level 3 ([`FastFind::Gallop`]) *ramps*: it probes the level-0
//!   topologies at positions 1, 2, 4, 8, … (1-based) and the last one, one
//!   probe at a time, until a probe violates or the probes run out. Spare
//!   room in the window *backfills*: it checks, in order, the unchecked
//!   topologies below the latest probe, or, once a violation is known, below
//!   the lowest violating position. The search finishes once everything
//!   before that position passed. Its answer is therefore always the level-0
//!   minimum, whatever the model does; the ramp finds an upper bound after
//!   logarithmically many sequential rounds, and with a window of 1 the
//!   backfill then hands out the whole remaining prefix, one at a time.
//!
//! A check that a bound cut short (`--timeout`, `--memory`, `--depth`) decides
//! its topology as far as the search goes on, but proves nothing about it: the
//! search moves past it, and [`Outcome::cut_short`] counts such topologies
//! before the answer.
//!
//! [`Outcome::guaranteed_minimal`] says whether every level-0 topology before
//! the answer (or every level-0 topology, when no violation was found) was
//! checked and passed, i.e. whether the answer is the one Kivi's exhaustive
//! search would give.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::enumeration::{enumerate, EnumerationOptions, FastFind};
use super::template::Template;
use super::topology::Topology;

/// How the check of one topology ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobVerdict {
    /// The check was complete and found nothing.
    NoViolation,
    /// The check found a violation.
    Violation,
    /// A bound cut the check short without a violation.
    Incomplete,
}

/// Where one candidate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Unissued,
    Pending,
    Passed,
    Violated,
    CutShort,
}

/// The result of a finished search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The first violating topology found, or `None` if every checked one passed.
    pub violation: Option<Topology>,
    /// Its 1-based position in the order this search's mode enumerates.
    pub position: Option<usize>,
    /// Whether the answer equals that of Kivi's exhaustive (level-0) search.
    pub guaranteed_minimal: bool,
    /// Topologies before the answer (all of them, when there is no violation) whose check a
    /// bound cut short: each may hide a smaller violation.
    pub cut_short: usize,
    /// How many topologies got a verdict.
    pub checked: usize,
}

/// A verdict the search cannot accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// The topology was never handed out by [`Search::next_batch`].
    NotIssued(Topology),
    /// The topology already has a verdict.
    AlreadyReported(Topology),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::NotIssued(t) => write!(f, "topology {t} was not handed out by next_batch"),
            ReportError::AlreadyReported(t) => write!(f, "topology {t} already has a verdict"),
        }
    }
}

impl std::error::Error for ReportError {}

/// The search state machine; see the module documentation.
#[derive(Debug, Clone)]
pub struct Search {
    mode: FastFind,
    candidates: Vec<Topology>,
    /// The index in `candidates` of each topology handed out so far (the others have no
    /// verdict to report, so a look-up that misses is one that is not issued).
    positions: HashMap<Topology, usize>,
    verdicts: Vec<Verdict>,
    /// Kivi's level-0 order, which decides whether the answer is the minimal one.
    reference: Arc<[Topology]>,
    probes: Vec<usize>,
    next_probe: usize,
    next_in_order: usize,
    first_violation: Option<usize>,
    window: usize,
    /// How many verdicts are [`Verdict::Pending`].
    pending: usize,
    /// No candidate before this index is undecided (unissued or pending): a decided verdict
    /// never goes back, so [`Search::is_finished`] moves it on instead of looking at every
    /// verdict again.
    settled: Cell<usize>,
}

impl Search {
    /// A search over `template` in the mode of `options.fast_find`, keeping at
    /// most `window` checks outstanding (at least 1; Kivi's own behaviour is 1).
    pub fn new(template: &Template, options: &EnumerationOptions, window: usize) -> Search {
        let exhaustive = EnumerationOptions {
            fast_find: FastFind::Exhaustive,
            ..*options
        };
        Search::among(
            enumerate(template, &exhaustive).into(),
            options,
            window,
            mode_candidates(template, options),
        )
    }

    /// A search like [`Search::new`] over `candidates` only: a sub-list, in order, of the
    /// topologies the mode hands out (a shard's share, `--shard`), with `reference`, the
    /// template's topologies in Kivi's level-0 order ([`enumerate`] at level 0). Its answer
    /// is the first violation among them.
    pub fn among(
        reference: Arc<[Topology]>,
        options: &EnumerationOptions,
        window: usize,
        candidates: Vec<Topology>,
    ) -> Search {
        let probes = if options.fast_find == FastFind::Gallop {
            gallop_probes(candidates.len())
        } else {
            Vec::new()
        };
        let positions = HashMap::new();
        Search {
            mode: options.fast_find,
            verdicts: vec![Verdict::Unissued; candidates.len()],
            candidates,
            positions,
            reference,
            probes,
            next_probe: 0,
            next_in_order: 0,
            first_violation: None,
            window: window.max(1),
            pending: 0,
            settled: Cell::new(0),
        }
    }

    /// The mode this search runs in.
    pub fn mode(&self) -> FastFind {
        self.mode
    }

    /// Every topology this search may hand out, in its mode's order.
    pub fn candidates(&self) -> &[Topology] {
        &self.candidates
    }

    /// The candidates ([`Search::candidates`]), once the search is done with them.
    pub fn into_candidates(self) -> Vec<Topology> {
        self.candidates
    }

    /// The next topologies to check; empty when the search is finished or
    /// waiting for verdicts on the outstanding ones.
    pub fn next_batch(&mut self) -> Vec<Topology> {
        let mut batch = Vec::new();
        while self.pending < self.window && !self.is_finished() {
            let Some(index) = self.next_index() else {
                break;
            };
            self.verdicts[index] = Verdict::Pending;
            self.pending += 1;
            self.positions.insert(self.candidates[index].clone(), index);
            batch.push(self.candidates[index].clone());
        }
        batch
    }

    /// Records the verdict for a topology handed out by [`Search::next_batch`].
    pub fn report(&mut self, topology: &Topology, verdict: JobVerdict) -> Result<(), ReportError> {
        let Some(&index) = self.positions.get(topology) else {
            return Err(ReportError::NotIssued(topology.clone()));
        };
        match self.verdicts[index] {
            Verdict::Unissued => return Err(ReportError::NotIssued(topology.clone())),
            Verdict::Passed | Verdict::Violated | Verdict::CutShort => {
                return Err(ReportError::AlreadyReported(topology.clone()))
            }
            Verdict::Pending => {}
        }
        self.pending -= 1;
        self.verdicts[index] = match verdict {
            JobVerdict::Violation => {
                if self.first_violation.is_none_or(|first| index < first) {
                    self.first_violation = Some(index);
                }
                Verdict::Violated
            }
            JobVerdict::NoViolation => Verdict::Passed,
            JobVerdict::Incomplete => Verdict::CutShort,
        };
        Ok(())
    }

    /// Takes back a topology handed out by [`Search::next_batch`] whose check was abandoned
    /// because its verdict no longer matters ([`Search::still_needed`] is false), so that it
    /// stops counting against the window of outstanding checks.
    pub fn withdraw(&mut self, topology: &Topology) {
        if let Some(&index) = self.positions.get(topology) {
            if self.verdicts[index] == Verdict::Pending && !self.still_needed(topology) {
                self.verdicts[index] = Verdict::Unissued;
                self.pending -= 1;
            }
        }
    }

    /// Whether the verdict on `topology` can still change the answer; a
    /// scheduler may cancel outstanding checks for which this is false.
    pub fn still_needed(&self, topology: &Topology) -> bool {
        self.positions.get(topology).is_some_and(|&index| {
            self.verdicts[index] == Verdict::Pending
                && self.first_violation.is_none_or(|first| index < first)
        })
    }

    /// Whether the answer is known: everything before the first violation
    /// was decided without one (passed, or cut short), or every candidate was.
    pub fn is_finished(&self) -> bool {
        let bound = self.first_violation.unwrap_or(self.candidates.len());
        let mut settled = self.settled.get();
        while settled < bound
            && matches!(self.verdicts[settled], Verdict::Passed | Verdict::CutShort)
        {
            settled += 1;
        }
        self.settled.set(settled);
        settled >= bound
    }

    /// The answer, once the search is finished.
    pub fn outcome(&self) -> Option<Outcome> {
        if !self.is_finished() {
            return None;
        }
        let violation = self.first_violation.map(|i| self.candidates[i].clone());
        let guaranteed_minimal = passed_before(&self.reference, violation.as_ref(), |t| {
            self.positions
                .get(t)
                .is_some_and(|&i| self.verdicts[i] == Verdict::Passed)
        });
        let bound = self.first_violation.unwrap_or(self.candidates.len());
        Some(Outcome {
            violation,
            position: self.first_violation.map(|i| i + 1),
            guaranteed_minimal,
            cut_short: self.verdicts[..bound]
                .iter()
                .filter(|&&v| v == Verdict::CutShort)
                .count(),
            checked: self.count(Verdict::Passed)
                + self.count(Verdict::Violated)
                + self.count(Verdict::CutShort),
        })
    }

    /// The smallest violating topology reported so far, finished or not: what an interrupted
    /// search has found.
    pub fn smallest_violation(&self) -> Option<Topology> {
        self.first_violation.map(|i| self.candidates[i].clone())
    }

    fn count(&self, verdict: Verdict) -> usize {
        self.verdicts.iter().filter(|&&v| v == verdict).count()
    }

    /// The next candidate to hand out, if any may be handed out now.
    fn next_index(&mut self) -> Option<usize> {
        let ramping = self.mode == FastFind::Gallop && self.first_violation.is_none();
        let last_probe = self
            .next_probe
            .checked_sub(1)
            .and_then(|i| self.probes.get(i).copied());
        if ramping && last_probe.is_none_or(|p| self.verdicts[p] != Verdict::Pending) {
            if let Some(&probe) = self.probes.get(self.next_probe) {
                self.next_probe += 1;
                return Some(probe);
            }
        }
        let bound = match self.first_violation {
            Some(first) => first,
            None if ramping => last_probe.unwrap_or(0),
            None => self.candidates.len(),
        };
        while self.next_in_order < bound {
            let index = self.next_in_order;
            self.next_in_order += 1;
            if self.verdicts[index] == Verdict::Unissued {
                return Some(index);
            }
        }
        None
    }
}

/// Whether every topology of `reference` (Kivi's level-0 order) before `answer` — every one,
/// when there is no answer — `passed`: whether `answer` is the one Kivi's exhaustive search
/// gives. False when `answer` is not in `reference`.
pub fn passed_before(
    reference: &[Topology],
    answer: Option<&Topology>,
    passed: impl Fn(&Topology) -> bool,
) -> bool {
    let bound = match answer {
        Some(topology) => reference.iter().position(|t| t == topology),
        None => Some(reference.len()),
    };
    bound.is_some_and(|bound| reference[..bound].iter().all(passed))
}

/// Every topology a search of `template` in the mode of `options.fast_find` may hand out, in
/// its order: Kivi's level-0 order for levels 0 and 3, the level's own enumeration for 1 and 2.
pub fn mode_candidates(template: &Template, options: &EnumerationOptions) -> Vec<Topology> {
    match options.fast_find {
        FastFind::Exhaustive | FastFind::Gallop => enumerate(
            template,
            &EnumerationOptions {
                fast_find: FastFind::Exhaustive,
                ..*options
            },
        ),
        FastFind::StepTwo | FastFind::ProportionalRamp => enumerate(template, options),
    }
}

/// Gallop probe indices (0-based): 0, 1, 3, 7, …, and the last index.
fn gallop_probes(len: usize) -> Vec<usize> {
    let mut probes = Vec::new();
    let mut position = 1usize;
    while position <= len {
        probes.push(position - 1);
        position = position.saturating_mul(2);
    }
    if len > 0 && probes.last() != Some(&(len - 1)) {
        probes.push(len - 1);
    }
    probes
}
