//! The topology job scheduler: checks the topologies a [`Plan`] hands out as independent jobs
//! on one shared pool of threads.
//!
//! - Jobs start in the plan's order. While the plan has more topologies ready than workers are
//!   free, each job gets one worker; at the tail of a sweep, when fewer are ready than workers
//!   are free, the free workers are shared among them so the last, largest topologies are
//!   explored in parallel. A job's threads are reserved for it, so the pool is never
//!   oversubscribed.
//! - The plan decides what matters: after each verdict, running jobs whose verdict can no
//!   longer change the answer are cancelled. With [`Search`] this gives Kivi's answer — the
//!   first violating topology in its order — whatever finishes first, identical for every
//!   thread count.
//! - [`Exhaustive`] (`--all-violations`) checks every topology and keeps every violation.

pub use super::search::JobVerdict;
use super::search::Search;
use super::topology::Topology;
use crate::engine::CancelToken;
use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Which topologies to check and when the answer is known.
pub trait Plan {
    /// Topologies that may be checked now (empty while waiting for verdicts, or when done).
    fn next_batch(&mut self) -> Vec<Topology>;
    /// Records a verdict for a topology handed out by [`Plan::next_batch`].
    fn report(&mut self, topology: &Topology, verdict: JobVerdict);
    /// Whether the verdict on `topology` can still change the answer.
    fn still_needed(&self, topology: &Topology) -> bool;
    /// Takes back a handed-out topology whose check was dropped because it stopped mattering.
    fn withdraw(&mut self, topology: &Topology);
}

impl Plan for Search {
    fn next_batch(&mut self) -> Vec<Topology> {
        Search::next_batch(self)
    }

    fn report(&mut self, topology: &Topology, verdict: JobVerdict) {
        Search::report(self, topology, verdict)
            .expect("the scheduler reports each handed-out topology once");
    }

    fn still_needed(&self, topology: &Topology) -> bool {
        Search::still_needed(self, topology)
    }

    fn withdraw(&mut self, topology: &Topology) {
        Search::withdraw(self, topology);
    }
}

/// Every topology of a list, in order, whatever the verdicts (`--all-violations`).
#[derive(Debug)]
pub struct Exhaustive {
    remaining: VecDeque<Topology>,
}

impl Exhaustive {
    /// A plan that hands out `topologies` in order.
    pub fn new(topologies: Vec<Topology>) -> Self {
        Self {
            remaining: topologies.into(),
        }
    }
}

impl Plan for Exhaustive {
    fn next_batch(&mut self) -> Vec<Topology> {
        self.remaining.drain(..).collect()
    }

    fn report(&mut self, _topology: &Topology, _verdict: JobVerdict) {}

    fn still_needed(&self, _topology: &Topology) -> bool {
        true
    }

    fn withdraw(&mut self, _topology: &Topology) {}
}

/// What a job receives: its share of the pool and the token that tells it to stop.
#[derive(Clone, Debug)]
pub struct JobContext {
    /// Threads reserved for this job; pass them to the engine.
    pub threads: usize,
    /// Cancelled when the job's result can no longer matter.
    pub cancel: CancelToken,
}

/// A finished job.
#[derive(Debug)]
pub struct JobReport<R> {
    /// The topology checked.
    pub topology: Topology,
    /// How the check ended.
    pub verdict: JobVerdict,
    /// Threads it ran on.
    pub threads: usize,
    /// Wall-clock time it took.
    pub elapsed: Duration,
    /// What the job function returned.
    pub output: R,
}

/// A job in flight.
struct Running {
    topology: Topology,
    threads: usize,
    cancel: CancelToken,
}

/// Checks the topologies `plan` hands out with `job`, on `pool` with `threads` workers, until
/// the plan has nothing left or `interrupt` is cancelled. `on_report` sees every verdict that
/// counts, as it arrives; the returned reports hold the same, in arrival order. Jobs cancelled
/// because they stopped mattering, or by the interrupt, are dropped: an interrupted sweep
/// reports only what was decided before it.
pub fn run_plan<R, J, F>(
    pool: &rayon::ThreadPool,
    threads: usize,
    plan: &mut impl Plan,
    job: J,
    mut on_report: F,
    interrupt: &CancelToken,
) -> Vec<JobReport<R>>
where
    R: Send + 'static,
    J: Fn(&Topology, JobContext) -> (JobVerdict, R) + Sync + Send + Clone + 'static,
    F: FnMut(&JobReport<R>),
{
    let (done_tx, done_rx) = mpsc::channel::<JobReport<R>>();
    let mut free = threads.max(1);
    let mut ready: VecDeque<Topology> = VecDeque::new();
    let mut running: Vec<Running> = Vec::new();
    let mut reports = Vec::new();
    loop {
        ready.extend(plan.next_batch());
        let (needed, dropped): (VecDeque<_>, VecDeque<_>) = ready
            .drain(..)
            .partition(|topology| plan.still_needed(topology));
        for topology in &dropped {
            plan.withdraw(topology);
        }
        ready = needed;
        while free > 0 && !ready.is_empty() && !interrupt.is_cancelled() {
            let share = if ready.len() >= free {
                1
            } else {
                free / ready.len()
            };
            let topology = ready.pop_front().expect("ready is not empty");
            let cancel = CancelToken::new();
            let context = JobContext {
                threads: share,
                cancel: cancel.clone(),
            };
            let (job, done_tx, checked) = (job.clone(), done_tx.clone(), topology.clone());
            pool.spawn(move || {
                let started = Instant::now();
                let (verdict, output) = job(&checked, context);
                let _ = done_tx.send(JobReport {
                    topology: checked,
                    verdict,
                    threads: share,
                    elapsed: started.elapsed(),
                    output,
                });
            });
            running.push(Running {
                topology,
                threads: share,
                cancel,
            });
            free -= share;
        }
        if running.is_empty() {
            break;
        }
        let report = match done_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(report) => report,
            Err(mpsc::RecvTimeoutError::Timeout) if interrupt.is_cancelled() => {
                for job in &running {
                    job.cancel.cancel();
                }
                for _ in 0..running.len() {
                    done_rx.recv().expect("a running job always reports back");
                }
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                unreachable!("the scheduler holds a sender")
            }
        };
        let slot = running
            .iter()
            .position(|job| job.topology == report.topology)
            .expect("reports come from running jobs");
        let finished = running.swap_remove(slot);
        free += finished.threads;
        if !plan.still_needed(&report.topology) {
            plan.withdraw(&report.topology);
            continue;
        }
        plan.report(&report.topology, report.verdict);
        for other in &running {
            if !plan.still_needed(&other.topology) {
                other.cancel.cancel();
            }
        }
        on_report(&report);
        reports.push(report);
    }
    reports
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaler::{enumerate, EnumerationOptions, FastFind, Template};

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool")
    }

    fn c3_template() -> Template {
        let text = include_str!("../../cases/c3/template.json");
        Template::from_json(&serde_json::from_str(text).expect("JSON")).expect("template")
    }

    /// A fake check: the topologies at these 1-based positions of the level-0 order violate.
    /// The first of them is slow, so later violations finish first on several threads.
    fn fake_job(
        order: Vec<Topology>,
        violating: &'static [usize],
    ) -> impl Fn(&Topology, JobContext) -> (JobVerdict, usize) + Clone + Send + Sync {
        move |topology, context| {
            let position = order.iter().position(|t| t == topology).expect("known") + 1;
            let pause = if position == violating[0] { 40 } else { 1 };
            for _ in 0..pause {
                if context.cancel.is_cancelled() {
                    return (JobVerdict::Incomplete, position);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            let verdict = if violating.contains(&position) {
                JobVerdict::Violation
            } else {
                JobVerdict::NoViolation
            };
            (verdict, position)
        }
    }

    #[test]
    fn the_first_violation_in_order_wins_whatever_finishes_first() {
        let template = c3_template();
        let options = EnumerationOptions::default();
        let order = enumerate(&template, &options);
        for threads in [1, 2, 4, 8] {
            let mut search = Search::new(&template, &options, threads);
            let reports = run_plan(
                &pool(threads),
                threads,
                &mut search,
                fake_job(order.clone(), &[58, 60, 100]),
                |_| {},
                &CancelToken::new(),
            );
            let outcome = search.outcome().expect("finished");
            assert_eq!(outcome.position, Some(58), "{threads} threads");
            let decided: std::collections::HashSet<usize> =
                reports.iter().map(|report| report.output).collect();
            assert!((1..=58).all(|position| decided.contains(&position)));
        }
    }

    #[test]
    fn gallop_finds_the_same_minimum() {
        let template = c3_template();
        let exhaustive = EnumerationOptions::default();
        let order = enumerate(&template, &exhaustive);
        let options = EnumerationOptions {
            fast_find: FastFind::Gallop,
            ..EnumerationOptions::default()
        };
        let mut search = Search::new(&template, &options, 4);
        run_plan(
            &pool(4),
            4,
            &mut search,
            fake_job(order.clone(), &[58, 60, 100]),
            |_| {},
            &CancelToken::new(),
        );
        let outcome = search.outcome().expect("finished");
        assert_eq!(outcome.violation.as_ref(), Some(&order[57]));
        assert!(outcome.guaranteed_minimal);
    }

    #[test]
    fn exhaustive_checks_everything_and_keeps_every_violation() {
        let template = c3_template();
        let order = enumerate(&template, &EnumerationOptions::default());
        let mut plan = Exhaustive::new(order.clone());
        let reports = run_plan(
            &pool(4),
            4,
            &mut plan,
            fake_job(order.clone(), &[58, 60, 100]),
            |_| {},
            &CancelToken::new(),
        );
        assert_eq!(reports.len(), order.len());
        let mut violating: Vec<usize> = reports
            .iter()
            .filter(|report| report.verdict == JobVerdict::Violation)
            .map(|report| report.output)
            .collect();
        violating.sort();
        assert_eq!(violating, vec![58, 60, 100]);
    }

    #[test]
    fn idle_workers_go_to_the_last_jobs() {
        let template = c3_template();
        let order: Vec<Topology> = enumerate(&template, &EnumerationOptions::default())
            .into_iter()
            .take(3)
            .collect();
        let mut plan = Exhaustive::new(order);
        let reports = run_plan(
            &pool(8),
            8,
            &mut plan,
            |_, context| (JobVerdict::NoViolation, context.threads),
            |_| {},
            &CancelToken::new(),
        );
        // 8 workers over 3 ready jobs: 8/3, then the remaining 6 over 2, then 3 for the last.
        let mut shares: Vec<usize> = reports.iter().map(|report| report.output).collect();
        shares.sort();
        assert_eq!(shares, vec![2, 3, 3]);
    }
}
