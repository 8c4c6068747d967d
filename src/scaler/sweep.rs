//! A scaling sweep from start to answer.
//!
//! [`run`] does everything a sweep needs: it enumerates Kivi's order, opens the journal and
//! takes from it the topologies earlier runs found passing, drives the plan — Kivi's
//! [`Search`] for the first violating topology, or [`Exhaustive`] with `--all-violations` —
//! through the job scheduler, appends each decision to the journal, and assembles a
//! [`SweepResult`]: one row per decided topology, the violating ones with their
//! counterexamples, and how far the answer can be trusted (guaranteed minimal, topologies a
//! bound cut short, topologies an interrupt left undecided).

use super::deadline::SweepDeadline;
use super::enumeration::{enumerate, why_no_topology, EnumerationOptions, FastFind};
use super::instantiate::instantiate;
use super::jobs::{run_plan, Exhaustive, JobContext, JobReport};
use super::journal::{Decision, Journal, JournalEntry, JournalHeader, RunOptions, JOURNAL_VERSION};
use super::search::{mode_candidates, JobVerdict, Search};
use super::shard::Shard;
use super::template::Template;
use super::topology::Topology;
use super::typed_instance::typed_instance;
use crate::cluster::Semantics;
use crate::engine::cndfs::LassoOptions;
use crate::engine::no_return::mark_points_of_no_return;
use crate::engine::shortest::shorten_violations;
use crate::engine::{check, panic_message, CancelToken, CheckOptions, Outcome, TraceMode, Verdict};
use crate::input::uniform::load_records;
use crate::input::{load_uniform, Names};
use crate::model::liveness::{FoundLoop, LoopKind, LoopVerdict};
use crate::model::{ClusterModel, ModelOptions};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// How to sweep.
#[derive(Clone, Debug)]
pub struct SweepSettings {
    /// Which topologies, in which order, and how fast to ramp up.
    pub enumeration: EnumerationOptions,
    /// How each topology is checked; `threads` is the size of the sweep's whole pool.
    pub check: CheckOptions,
    /// Check every topology and keep every violation, each check reporting every intent.
    pub all_violations: bool,
    /// The journal to resume from and to append each decision to.
    pub journal: Option<PathBuf>,
    /// Each topology's tie-break semantics and reduction.
    pub model: ModelOptions,
    /// Search each topology for a lasso of this kind (an eviction loop, `--loop`, or a run that
    /// does not stay converged, `--intent esr`) instead of intent violations.
    pub liveness: Option<LoopKind>,
    /// Decide only this shard's share of the topologies (`--shard`).
    pub shard: Option<Shard>,
    /// How the journal's header names the input.
    pub input: SweepInput,
}

/// How a sweep's journal names its input, so that `kivi merge` can print the report a single
/// run prints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepInput {
    /// The input as the user named it (a path, or `case c3`).
    pub name: String,
    /// The input as a URI reference, for SARIF locations.
    pub uri: String,
    /// What the user calls the template's deployments, when a front-end named them.
    pub names: Option<Names>,
}

/// One decided topology.
#[derive(Clone, Debug)]
pub struct TopologyRow {
    /// The topology.
    pub topology: Topology,
    /// Its 1-based position in Kivi's order.
    pub position: usize,
    /// Pod slots the instantiated cluster holds (the most pods it can run, HPA included).
    pub pods: u64,
    /// How its check ended.
    pub verdict: JobVerdict,
    /// States stored.
    pub states: u64,
    /// Transitions computed.
    pub transitions: u64,
    /// Check time in seconds.
    pub elapsed_s: f64,
    /// Threads the check ran on.
    pub threads: usize,
    /// Whether the verdict was taken from the journal instead of checked again.
    pub from_journal: bool,
    /// Why the check was cut short, when it was.
    pub incomplete: Option<String>,
}

/// A violating topology with the check that found its violation.
pub struct ViolatingTopology {
    /// The topology.
    pub row: TopologyRow,
    /// Its cluster model, to print the counterexample.
    pub model: ClusterModel,
    /// What the check found, replayed.
    pub finding: Finding,
}

/// What a violating topology's check found.
pub enum Finding {
    /// Intent violations: the check's outcome with its counterexamples.
    Intents(Box<Outcome<ClusterModel>>),
    /// A lasso: an eviction loop (`--loop`) or a run that does not stay converged
    /// (`--intent esr`).
    Loop(Box<FoundLoop>),
}

/// A topology just decided, for progress displays.
#[derive(Clone, Copy, Debug)]
pub struct Decided<'a> {
    /// The topology.
    pub topology: &'a Topology,
    /// States its check stored.
    pub states: u64,
    /// Topologies the sweep may decide in all (the level-0 order up to the confident size).
    pub candidates: usize,
}

/// What the journal holds after the sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalSummary {
    /// The journal file.
    pub path: PathBuf,
    /// Topologies it records for this input.
    pub recorded: usize,
}

/// Everything a sweep found.
pub struct SweepResult {
    /// Whose scheduling rules each topology was checked under.
    pub semantics: Semantics,
    /// The fast-find mode used.
    pub fast_find: FastFind,
    /// Topologies the mode may hand out, up to the confident size (the shard's share of them).
    pub candidates: usize,
    /// The shard of the sweep this run decided, if it decided one (`--shard`).
    pub shard: Option<Shard>,
    /// Decided topologies, in Kivi's order.
    pub rows: Vec<TopologyRow>,
    /// Violating topologies, smallest first (one unless `--all-violations`).
    pub violations: Vec<ViolatingTopology>,
    /// Whether the mode visits every level-0 topology before its answer (false for fast-find
    /// levels that skip topologies).
    pub guaranteed_minimal: bool,
    /// Whether each violating topology's check went on to report every violated intent;
    /// otherwise it stopped at the first one it met.
    pub every_intent: bool,
    /// Topologies before the first violation whose check a bound cut short: each may hide a
    /// smaller violation.
    pub cut_short: usize,
    /// Why the first of those was cut short.
    pub cut_short_because: Option<String>,
    /// Topologies before the first violation that an interrupt left undecided.
    pub undecided: usize,
    /// For a merge of shards' journals: the shards missing or left partial, and what to do.
    pub missing_shards: Option<String>,
    /// Why the sweep found no violation and proves nothing, if so.
    pub incomplete: Option<String>,
    /// Whether Ctrl-C stopped the sweep.
    pub interrupted: bool,
    /// The journal, when one was kept.
    pub journal: Option<JournalSummary>,
    /// What the user should know that is not an answer (a repaired journal).
    pub warnings: Vec<String>,
    /// Wall-clock time of the sweep.
    pub elapsed_s: f64,
    /// Worker threads.
    pub threads: usize,
    /// What the sweep looked for: a lasso of this kind (`--loop`, `--intent esr`), or the
    /// intents' violations when `None`.
    pub liveness: Option<LoopKind>,
}

impl SweepResult {
    /// The sweep's answer: a violation (real, even when not proven minimal), none, or
    /// incomplete when no violation was found but not every topology was decided in full.
    pub fn verdict(&self) -> Verdict {
        if !self.violations.is_empty() {
            Verdict::Violation
        } else if self.incomplete.is_some() {
            Verdict::Incomplete
        } else {
            Verdict::NoViolation
        }
    }

    /// Whether the first violation is proven to be Kivi's minimal one.
    pub fn proven_minimal(&self) -> bool {
        self.guaranteed_minimal && self.cut_short == 0 && self.undecided == 0
    }

    /// Topologies decided up to and including the first violating one (Kivi's "topologies
    /// tried"), or all decided ones when none violates.
    pub fn decided_up_to_minimal(&self) -> usize {
        match self.violations.first() {
            Some(first) => self
                .rows
                .iter()
                .filter(|row| row.position <= first.row.position)
                .count(),
            None => self.rows.len(),
        }
    }
}

/// Why a sweep gave no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SweepError {
    /// The template, a topology's document or the journal is wrong.
    Input(String),
    /// kivi failed on a topology (a panic, or a counterexample that does not replay).
    Internal(String),
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(message) | Self::Internal(message) => write!(f, "{message}"),
        }
    }
}

/// The model of one topology of `template`, with `options`: its typed instance, checked and
/// converted as a loaded document is; or, where a part of the template does not read as
/// records, its instantiated JSON document loaded, which names the problem by its place. A
/// topology without a node a pod template is pinned to is an error.
pub fn topology_model(
    template: &Template,
    topology: &Topology,
    options: ModelOptions,
) -> Result<ClusterModel, String> {
    if let Some(pin) = template.pinned.missing_in(topology) {
        return Err(format!(
            "topology {topology}: {}, but the topology has {} of them; give it {} or more",
            pin.describe(&template.origins),
            topology.nodes().get(pin.node_type()).copied().unwrap_or(0),
            pin.node()
        ));
    }
    match typed_instance(template, topology) {
        Some(document) => load_records(&document),
        None => load_uniform(&instantiate(template, topology)),
    }
    .map(|model| model.with_options(options))
    .map_err(|error| format!("topology {topology}: {}", template.origins.locate(error)))
}

/// Sweeps `template` on `pool` as `settings` say. `on_decided` sees each topology as it is
/// decided (for a progress bar). Ctrl-C (`interrupt`) stops handing
/// out topologies, cancels the running ones, and returns what was decided before it.
pub fn run(
    template: &Template,
    settings: &SweepSettings,
    pool: &rayon::ThreadPool,
    interrupt: &CancelToken,
    mut on_decided: impl FnMut(Decided<'_>),
) -> Result<SweepResult, SweepError> {
    let order: Arc<[Topology]> = level0_order(template, settings).into();
    // Every topology this run may decide, in order.
    let candidates = {
        let all = sweep_candidates(template, settings, &order);
        if all.is_empty() {
            return Err(SweepError::Input(format!(
                "nothing to verify: {}",
                why_no_topology(template, &settings.enumeration)
            )));
        }
        match settings.shard {
            Some(shard) => shard.share(&all, template),
            None => all,
        }
    };
    let mut journal = match &settings.journal {
        Some(path) => {
            Some(Journal::open(path, &header(template, settings)).map_err(SweepError::Input)?)
        }
        None => None,
    };
    let passed = Arc::new(journal.as_ref().map(Journal::passed).unwrap_or_default());
    // Topologies grow in Kivi's order, so the largest check decided so far is a good first
    // guess of the next one's size (unless the user gave one).
    let largest = Arc::new(AtomicU64::new(settings.check.expected_states));
    let deadline = SweepDeadline::starting_now(settings.check.timeout);
    let job = {
        let template = Arc::new(template.clone());
        let options = settings.check.clone();
        let model_options = settings.model;
        let liveness = settings.liveness;
        let (passed, largest) = (passed.clone(), largest.clone());
        move |topology: &Topology, context: JobContext| {
            // Only the reported topologies' traces are shortened, once the sweep is done;
            // a lasso is shortened as it is found.
            let trace = match liveness {
                Some(_) => options.trace,
                None => TraceMode::First,
            };
            let given = deadline.left();
            let options = CheckOptions {
                expected_states: largest.load(Ordering::Relaxed),
                trace,
                timeout: given,
                ..options.clone()
            };
            // A panic here would abort the pool's thread; it becomes an internal error.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let (verdict, mut check) = check_topology(
                    &template,
                    &options,
                    (model_options, liveness),
                    &passed,
                    topology,
                    context,
                );
                deadline.name_in(&mut check.incomplete);
                (verdict, check)
            }))
            .unwrap_or_else(|payload| {
                failed(SweepError::Internal(format!(
                    "topology {topology}: {}",
                    panic_message(&*payload)
                )))
            })
        }
    };
    let started = Instant::now();
    let mut journal_error = None;
    let candidate_count = candidates.len();
    let on_report = |report: &JobReport<TopologyCheck>| {
        largest.fetch_max(report.output.states, Ordering::Relaxed);
        on_decided(Decided {
            topology: &report.topology,
            states: report.output.states,
            candidates: candidate_count,
        });
        if let (Some(journal), false) = (&mut journal, report.output.from_journal) {
            let decision = Decision {
                verdict: report.verdict,
                states: report.output.states,
                transitions: report.output.transitions,
                elapsed_s: report.elapsed.as_secs_f64(),
                threads: report.threads,
                incomplete: report.output.incomplete.clone(),
            };
            if let Err(error) = journal.record(&report.topology, decision) {
                journal_error.get_or_insert(error);
            }
        }
    };
    let threads = settings.check.threads;
    let (reports, guaranteed_minimal, first, candidates) = if settings.all_violations {
        let mut plan = Exhaustive::new(candidates.clone());
        let reports = run_plan(pool, threads, &mut plan, job, on_report, interrupt);
        (reports, true, None, candidates)
    } else {
        let mut search = Search::among(order.clone(), &settings.enumeration, threads, candidates);
        let reports = run_plan(pool, threads, &mut search, job, on_report, interrupt);
        let (guaranteed, first) = match search.outcome() {
            Some(outcome) => (outcome.guaranteed_minimal, outcome.violation),
            None => (false, search.smallest_violation()),
        };
        (reports, guaranteed, first, search.into_candidates())
    };
    if let Some(error) = journal_error {
        return Err(SweepError::Input(error));
    }
    if let Some(error) = reports
        .iter()
        .find_map(|report| report.output.error.clone())
    {
        return Err(error);
    }
    let positions = level0_positions(&order, reports.iter().map(|report| &report.topology));
    let mut result = assemble(reports, &positions, template, settings, first);
    let shortening = CheckOptions {
        timeout: deadline.left(),
        ..settings.check.clone()
    };
    pool.install(|| shorten_reported(&mut result, &shortening))?;
    result.candidates = candidates.len();
    result.guaranteed_minimal = guaranteed_minimal;
    result.interrupted = interrupt.is_cancelled();
    result.undecided = if result.interrupted {
        undecided_before_answer(
            &result,
            &candidates,
            &level0_positions(&order, order.iter()),
        )
    } else {
        0
    };
    if result.interrupted && result.violations.is_empty() {
        result.incomplete = Some(format!(
            "interrupted (Ctrl-C) with {} of {} topologies decided",
            result.rows.len(),
            candidates.len()
        ));
    }
    result.warnings.extend(
        journal
            .as_ref()
            .and_then(Journal::repair)
            .map(str::to_string),
    );
    result.journal = journal.map(|journal| JournalSummary {
        path: journal.path().to_path_buf(),
        recorded: journal.len(),
    });
    result.elapsed_s = started.elapsed().as_secs_f64();
    Ok(result)
}

/// Kivi's level-0 order of `template`'s topologies up to the confident size of `settings`.
pub(super) fn level0_order(template: &Template, settings: &SweepSettings) -> Vec<Topology> {
    let level0 = EnumerationOptions {
        fast_find: FastFind::Exhaustive,
        ..settings.enumeration
    };
    enumerate(template, &level0)
}

/// Every topology a whole sweep of `settings` may decide, in order (`order` is the level-0
/// order): the fast-find mode's candidates, or every level-0 topology with `--all-violations`.
/// A shard takes its share of these.
pub(super) fn sweep_candidates(
    template: &Template,
    settings: &SweepSettings,
    order: &[Topology],
) -> Vec<Topology> {
    match settings.enumeration.fast_find {
        _ if settings.all_violations => order.to_vec(),
        // These modes hand out the level-0 order itself (`mode_candidates`).
        FastFind::Exhaustive | FastFind::Gallop => order.to_vec(),
        FastFind::StepTwo | FastFind::ProportionalRamp => {
            mode_candidates(template, &settings.enumeration)
        }
    }
}

/// The 1-based places in the level-0 `order` of the topologies `wanted` names (a sweep's
/// reported ones: a few of what may be millions).
pub(super) fn level0_positions<'a, 'b>(
    order: &'a [Topology],
    wanted: impl Iterator<Item = &'b Topology>,
) -> HashMap<&'a Topology, usize> {
    let wanted: std::collections::HashSet<&Topology> = wanted.collect();
    order
        .iter()
        .enumerate()
        .filter(|(_, topology)| wanted.contains(topology))
        .map(|(index, topology)| (topology, index + 1))
        .collect()
}

/// How many topologies of `candidates` before the first violation of `result` (all of them
/// when it has none) `result` does not decide.
fn undecided_before_answer(
    result: &SweepResult,
    candidates: &[Topology],
    positions: &HashMap<&Topology, usize>,
) -> usize {
    let bound = result
        .violations
        .first()
        .map_or(usize::MAX, |v| v.row.position);
    let decided: std::collections::HashSet<&Topology> =
        result.rows.iter().map(|row| &row.topology).collect();
    candidates
        .iter()
        .filter(|t| positions[t] < bound && !decided.contains(t))
        .count()
}

/// The rows and violations of the decided topologies, in Kivi's order; `first` is the
/// answer of Kivi's search (every violation counts with `--all-violations`).
pub(super) fn assemble(
    reports: Vec<JobReport<TopologyCheck>>,
    positions: &HashMap<&Topology, usize>,
    template: &Template,
    settings: &SweepSettings,
    first: Option<Topology>,
) -> SweepResult {
    let mut rows = Vec::new();
    let mut violations = Vec::new();
    for report in reports {
        let row = TopologyRow {
            position: positions[&report.topology],
            pods: template.pod_count(&report.topology),
            topology: report.topology,
            verdict: report.verdict,
            states: report.output.states,
            transitions: report.output.transitions,
            elapsed_s: report.output.elapsed_s,
            threads: report.threads,
            from_journal: report.output.from_journal,
            incomplete: report.output.incomplete,
        };
        let counts = settings.all_violations || first.as_ref() == Some(&row.topology);
        if let (true, Some((model, finding))) = (counts, report.output.violation) {
            violations.push(ViolatingTopology {
                row: row.clone(),
                model,
                finding,
            });
        }
        rows.push(row);
    }
    rows.sort_by_key(|row| row.position);
    violations.sort_by_key(|violation| violation.row.position);
    let answer = violations.first().map(|v| v.row.position);
    let cut_short: Vec<&TopologyRow> = rows
        .iter()
        .filter(|row| {
            row.verdict == JobVerdict::Incomplete && answer.is_none_or(|p| row.position < p)
        })
        .collect();
    let incomplete = match (answer, cut_short.first()) {
        (None, Some(row)) => Some(format!(
            "the check of {} was cut short ({}){}",
            row.topology,
            row.incomplete.as_deref().unwrap_or("a bound was reached"),
            match cut_short.len() {
                1 => String::new(),
                more => format!(", and {} more", more - 1),
            }
        )),
        _ => None,
    };
    let cut_short_because = cut_short.first().and_then(|row| row.incomplete.clone());
    let cut_short = if answer.is_some() { cut_short.len() } else { 0 };
    SweepResult {
        semantics: settings.model.semantics,
        fast_find: settings.enumeration.fast_find,
        candidates: 0,
        shard: settings.shard,
        rows,
        violations,
        guaranteed_minimal: true,
        every_intent: settings.all_violations,
        cut_short,
        cut_short_because,
        undecided: 0,
        missing_shards: None,
        incomplete,
        interrupted: false,
        journal: None,
        warnings: Vec::new(),
        elapsed_s: 0.0,
        threads: settings.check.threads,
        liveness: settings.liveness,
    }
}

/// The size bounds `(min, max)` of each node type, then each deployment type.
pub(super) fn sizes(template: &Template) -> Vec<(u64, u64)> {
    let nodes = template.node_types.iter().map(|t| (t.min_size, t.max_size));
    let deployments = template
        .deployment_types
        .iter()
        .map(|t| (t.min_size, t.max_size));
    nodes.chain(deployments).collect()
}

/// The journal's fingerprint of a sweep: the template with its sizes (after `--scale`), the
/// confident size and the check options that change verdicts. Journals of other sweeps are
/// ignored on resume.
fn fingerprint(template: &Template, settings: &SweepSettings) -> String {
    let key = format!(
        "{}|sizes={:?}|nodes={}|ratio={}|depth={:?}|visited={:?}|model={:?}|loop={}",
        serde_json::Value::Object(template.document.clone()),
        sizes(template),
        settings.enumeration.confident_nodes,
        settings.enumeration.pods_per_node,
        settings.check.depth_limit,
        settings.check.visited,
        settings.model,
        match settings.liveness {
            None => "false",
            Some(LoopKind::Eviction) => "true",
            Some(LoopKind::UnstableReconciliation) => "esr",
            Some(LoopKind::DrainNeverCompletes) => "drain",
        },
    );
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
}

/// The header a run of `settings` over `template` writes to its journal.
fn header(template: &Template, settings: &SweepSettings) -> JournalHeader {
    let document = serde_json::Value::Object(template.document.clone());
    let check = &settings.check;
    JournalHeader {
        version: JOURNAL_VERSION,
        sweep: fingerprint(template, settings),
        input: settings.input.name.clone(),
        uri: settings.input.uri.clone(),
        input_hash: format!(
            "{:016x}",
            xxhash_rust::xxh3::xxh3_64(document.to_string().as_bytes())
        ),
        shard: settings.shard,
        threads: check.threads,
        options: RunOptions {
            confident_nodes: settings.enumeration.confident_nodes,
            confident_ratio: settings.enumeration.pods_per_node,
            fast_find: settings.enumeration.fast_find.level(),
            all_violations: settings.all_violations,
            liveness: settings.liveness,
            model: settings.model,
            depth: check.depth_limit,
            visited: check.visited,
            strategy: check.strategy,
            seed: check.seed,
            memory: check.memory.limit(),
            timeout_s: check.timeout.map(|t| t.as_secs_f64()),
        },
        template: document,
        sizes: sizes(template),
        names: settings.input.names.clone(),
    }
}

/// What one topology's check produced.
pub(super) struct TopologyCheck {
    pub(super) states: u64,
    pub(super) transitions: u64,
    pub(super) elapsed_s: f64,
    pub(super) from_journal: bool,
    pub(super) violation: Option<(ClusterModel, Finding)>,
    pub(super) error: Option<SweepError>,
    /// Why the check was cut short, when it was.
    pub(super) incomplete: Option<String>,
}

/// A topology whose check gave no answer: an error, which ends the sweep.
fn failed(error: SweepError) -> (JobVerdict, TopologyCheck) {
    (
        JobVerdict::Incomplete,
        TopologyCheck {
            states: 0,
            transitions: 0,
            elapsed_s: 0.0,
            from_journal: false,
            violation: None,
            error: Some(error),
            incomplete: None,
        },
    )
}

/// Shortens the counterexamples of the violating topologies `result` reports
/// ([`shorten_violations`]) and marks their points of no return
/// ([`mark_points_of_no_return`]), each with `options`' bounds; the topologies' checks kept
/// their traces as found.
fn shorten_reported(result: &mut SweepResult, options: &CheckOptions) -> Result<(), SweepError> {
    for violation in &mut result.violations {
        if let Finding::Intents(outcome) = &mut violation.finding {
            let started = Instant::now();
            shorten_violations(&violation.model, options, started, outcome)
                .map_err(|error| SweepError::Internal(error.to_string()))?;
            mark_points_of_no_return(&violation.model, options, started, outcome);
        }
    }
    Ok(())
}

/// Checks one topology of the sweep (for intent violations, or with `liveness` for a lasso of
/// that kind), or takes its verdict from the journal.
pub(super) fn check_topology(
    template: &Template,
    base: &CheckOptions,
    (model_options, liveness): (ModelOptions, Option<LoopKind>),
    passed: &HashMap<Topology, JournalEntry>,
    topology: &Topology,
    context: JobContext,
) -> (JobVerdict, TopologyCheck) {
    if let Some(entry) = passed.get(topology) {
        return (
            JobVerdict::NoViolation,
            TopologyCheck {
                states: entry.states,
                transitions: entry.transitions,
                elapsed_s: entry.elapsed_s,
                from_journal: true,
                violation: None,
                error: None,
                incomplete: None,
            },
        );
    }
    let model = match topology_model(template, topology, model_options) {
        Ok(model) => model,
        Err(error) => return failed(SweepError::Input(error)),
    };
    let options = CheckOptions {
        threads: context.threads,
        cancel: Some(context.cancel),
        ..base.clone()
    };
    if let Some(kind) = liveness {
        return loop_topology(kind, model, &options, topology);
    }
    let outcome = match check(&model, &options) {
        Ok(outcome) => outcome,
        Err(error) => {
            return failed(SweepError::Internal(format!(
                "topology {topology}: {error}"
            )))
        }
    };
    let stats = &outcome.stats;
    let mut result = TopologyCheck {
        states: stats.states_stored,
        transitions: stats.transitions,
        elapsed_s: stats.elapsed_s,
        from_journal: false,
        violation: None,
        error: None,
        incomplete: outcome.incomplete.as_ref().map(ToString::to_string),
    };
    let verdict = match outcome.verdict() {
        Verdict::NoViolation => JobVerdict::NoViolation,
        Verdict::Incomplete => JobVerdict::Incomplete,
        Verdict::Violation => {
            result.violation = Some((model, Finding::Intents(Box::new(outcome))));
            JobVerdict::Violation
        }
    };
    (verdict, result)
}

/// Searches one topology's cluster for a lasso of `kind`.
fn loop_topology(
    kind: LoopKind,
    model: ClusterModel,
    options: &CheckOptions,
    topology: &Topology,
) -> (JobVerdict, TopologyCheck) {
    let search = match kind.search(&model, &LassoOptions::of_check(options)) {
        Ok(search) => search,
        Err(error) => {
            return failed(SweepError::Internal(format!(
                "topology {topology}: {error}"
            )))
        }
    };
    let mut result = TopologyCheck {
        states: search.stats.states,
        transitions: search.stats.transitions,
        elapsed_s: search.elapsed.as_secs_f64(),
        from_journal: false,
        violation: None,
        error: None,
        incomplete: None,
    };
    let verdict = match search.verdict {
        LoopVerdict::None => JobVerdict::NoViolation,
        LoopVerdict::Incomplete(why) => {
            result.incomplete = Some(why.to_string());
            JobVerdict::Incomplete
        }
        LoopVerdict::Found(found) => {
            result.violation = Some((model, Finding::Loop(found)));
            JobVerdict::Violation
        }
    };
    (verdict, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c3_template(non_violation: bool) -> Template {
        let text = if non_violation {
            include_str!("../../cases/c3/template-non-violation.json")
        } else {
            include_str!("../../cases/c3/template.json")
        };
        Template::from_json(&serde_json::from_str(text).expect("JSON")).expect("template")
    }

    fn settings(threads: usize, journal: Option<PathBuf>) -> SweepSettings {
        SweepSettings {
            enumeration: EnumerationOptions::default(),
            check: CheckOptions::with_threads(threads),
            all_violations: false,
            journal,
            model: ModelOptions::default(),
            liveness: None,
            shard: None,
            input: SweepInput::default(),
        }
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool")
    }

    fn sweep(template: &Template, settings: &SweepSettings) -> SweepResult {
        let pool = pool(settings.check.threads);
        run(template, settings, &pool, &CancelToken::new(), |_| {}).expect("a sweep")
    }

    #[test]
    fn c3_gives_kivis_minimal_topology_on_any_thread_count() {
        for threads in [1, 2, 4] {
            let result = sweep(&c3_template(false), &settings(threads, None));
            let first = result.violations.first().expect("a violation");
            assert_eq!(
                first.row.topology.to_string(),
                "{node type 0: 1, node type 1: 2, deployment type 0: 3}"
            );
            assert_eq!(first.row.position, 58);
            assert_eq!(result.decided_up_to_minimal(), 58, "{threads} threads");
            assert!(result.proven_minimal());
            assert_eq!(result.verdict(), Verdict::Violation);
        }
    }

    #[test]
    fn a_journal_replays_the_passing_topologies() {
        let path = std::env::temp_dir().join(format!("kivi-sweep-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let template = c3_template(true);
        let first = sweep(&template, &settings(2, Some(path.clone())));
        assert_eq!(first.rows.len(), 264);
        assert_eq!(first.verdict(), Verdict::NoViolation);
        assert_eq!(first.journal.as_ref().map(|j| j.recorded), Some(264));
        let again = sweep(&template, &settings(2, Some(path.clone())));
        assert!(again.rows.iter().all(|row| row.from_journal));
        assert_eq!(again.verdict(), Verdict::NoViolation);
        let states = |result: &SweepResult| result.rows.iter().map(|r| r.states).sum::<u64>();
        assert_eq!(states(&first), states(&again));
        std::fs::remove_file(&path).expect("the journal exists");
    }

    #[test]
    fn an_interrupt_before_the_start_decides_nothing_and_proves_nothing() {
        let interrupt = CancelToken::new();
        interrupt.cancel();
        let result = run(
            &c3_template(true),
            &settings(2, None),
            &pool(2),
            &interrupt,
            |_| {},
        )
        .expect("a sweep");
        assert!(result.interrupted);
        assert!(result.rows.is_empty());
        assert_eq!(result.verdict(), Verdict::Incomplete);
        assert_eq!(
            result.incomplete.as_deref(),
            Some("interrupted (Ctrl-C) with 0 of 264 topologies decided")
        );
    }

    #[test]
    fn checks_cut_short_before_the_answer_leave_it_unproven() {
        let mut tiny = settings(2, None);
        tiny.check.depth_limit = Some(8);
        let result = sweep(&c3_template(false), &tiny);
        assert_eq!(
            result.verdict(),
            Verdict::Violation,
            "the violation is real"
        );
        assert_eq!(result.cut_short, 69);
        assert_eq!(
            result.cut_short_because.as_deref(),
            Some("depth limit 8 reached")
        );
        assert!(!result.proven_minimal());
        let without = sweep(&c3_template(true), &tiny);
        assert_eq!(
            without.verdict(),
            Verdict::Incomplete,
            "no violation proves nothing"
        );
    }
}
