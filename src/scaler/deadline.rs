//! A sweep's time limit: `--timeout` bounds the whole sweep, not each topology's check.

use crate::engine::Incompleteness;
use std::time::{Duration, Instant};

/// The sweep's time limit (`--timeout`): one deadline for the whole sweep, which each
/// topology's check is given what is left of when it starts, so that a sweep of many
/// topologies ends in about the time asked for, not that times the topologies.
#[derive(Clone, Copy)]
pub(super) struct SweepDeadline {
    /// `--timeout` and the instant it runs out.
    limit: Option<(Duration, Instant)>,
}

impl SweepDeadline {
    pub(super) fn starting_now(timeout: Option<Duration>) -> Self {
        Self {
            limit: timeout.map(|timeout| (timeout, Instant::now() + timeout)),
        }
    }

    /// The time left (zero once it has passed: a check then stops at its first look at the
    /// clock, unless it finishes first).
    pub(super) fn left(&self) -> Option<Duration> {
        self.limit
            .map(|(_, deadline)| deadline.saturating_duration_since(Instant::now()))
    }

    /// Rewrites the reason of a check cut short by its share of the time (a safety check's
    /// "time limit of S s reached", a loop search's "the time limit was reached") so that it
    /// names the sweep's whole `--timeout`, which is what ran out.
    pub(super) fn name_in(&self, why: &mut Option<String>) {
        let (Some((whole, deadline)), Some(text)) = (self.limit, why.as_mut()) else {
            return;
        };
        if Instant::now() >= deadline && text.contains("time limit") {
            *text = format!(
                "{} (--timeout, shared by the sweep's topologies)",
                Incompleteness::Timeout {
                    seconds: whole.as_secs_f64()
                }
            );
        }
    }
}
