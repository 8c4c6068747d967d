//! The HPA's stabilisation windows as a state keeps them: one 64-bit word per window
//! (`DeploymentState::hpa_window`, `hpa_up_window`).
//!
//! Kubernetes keeps every recommendation of the window's last `stabilizationWindowSeconds`
//! (`HorizontalController.recommendations`, `pkg/controller/podautoscaler/horizontal.go`) and
//! takes their largest (`stabilizeRecommendation`, scale-down) or smallest (the scale-up window
//! of `stabilizeRecommendationWithBehaviors`). As recommendations leave oldest first, that
//! extreme is always one of the *steps*: the largest (or smallest) recommendation of a suffix
//! of the evaluations. The steps form a staircase, falling from the oldest to the newest for
//! [`Window`], rising for [`UpWindow`]; the newest recommendation is always the last step.
//!
//! Recommendations are kept within the HPA's `[minReplicas, maxReplicas]` ([`Bounds`]). That
//! decides the same: the HPA normalises only when the current count is within those bounds,
//! brings its result within them afterwards (`convertDesiredReplicasWithRules`,
//! `convertDesiredReplicasWithBehaviorRate`), and the window's extreme enters only through
//! `max`/`min` with the current count and the new recommendation, so a kept value beyond a
//! bound moves the result to that bound either way.
//!
//! Two layouts, chosen by the bounds:
//! - **Exact**, where `maxReplicas − minReplicas < 64`: bit `r − minReplicas` stands for a step
//!   of `r` replicas; any staircase fits.
//! - **Listed**, for wider HPAs: up to [`LISTED_STEPS`] steps of 15 bits each, ascending, each
//!   `r − minReplicas + 1` (0: no step), and [`SATURATED`]. A staircase of more steps keeps its
//!   newest ones and sets [`SATURATED`]: the runs in which the dropped step would still hold
//!   the HPA back are not explored, and the check says so ([`saturated`]).

use crate::cluster::HpaSpec;

/// How many steps a window of a wide HPA keeps.
pub const LISTED_STEPS: usize = 4;

/// Bits per listed step: replica ranges up to `2^15 − 2` wide.
const STEP_BITS: u32 = 15;

/// Set in a listed window that dropped a step it still needed.
pub const SATURATED: u64 = 1 << 63;

/// The widest replica range a listed window holds.
pub const WIDEST: i32 = (1 << STEP_BITS) - 2;

/// An HPA's replica bounds, which place and encode its windows' recommendations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub min: i32,
    pub max: i32,
}

impl Bounds {
    pub fn of(hpa: &HpaSpec) -> Self {
        Self::new(hpa.min_replicas, hpa.max_replicas)
    }

    /// The bounds `minReplicas` and `maxReplicas` (taken as `minReplicas` when below it).
    pub fn new(min: i32, max: i32) -> Self {
        Self {
            min,
            max: max.max(min),
        }
    }

    fn exact(self) -> bool {
        self.max - self.min < 64
    }

    fn offset(self, replicas: i32) -> u32 {
        (replicas.clamp(self.min, self.max) - self.min).min(WIDEST) as u32
    }
}

/// A window's steps in ascending order, decoded from either layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Steps {
    /// Offsets from `minReplicas`, ascending; `len` of them are used.
    at: [u32; 64],
    len: usize,
    saturated: bool,
}

impl Steps {
    fn decode(bounds: Bounds, word: u64) -> Self {
        let mut steps = Self {
            at: [0; 64],
            len: 0,
            saturated: false,
        };
        if bounds.exact() {
            let mut bits = word;
            while bits != 0 {
                steps.push(bits.trailing_zeros());
                bits &= bits - 1;
            }
        } else {
            steps.saturated = word & SATURATED != 0;
            for i in 0..LISTED_STEPS {
                let slot = ((word >> (i as u32 * STEP_BITS)) & ((1 << STEP_BITS) - 1)) as u32;
                if slot != 0 {
                    steps.push(slot - 1);
                }
            }
        }
        steps
    }

    /// The word for these steps. A listed window of more than [`LISTED_STEPS`] steps keeps
    /// the newest: the lowest ones when `newest_low`, else the highest.
    fn encode(mut self, bounds: Bounds, newest_low: bool) -> u64 {
        if bounds.exact() {
            return self.used().iter().fold(0, |word, &at| word | 1 << at);
        }
        if self.len > LISTED_STEPS {
            let extra = self.len - LISTED_STEPS;
            if !newest_low {
                self.at.copy_within(extra..self.len, 0);
            }
            self.len = LISTED_STEPS;
            self.saturated = true;
        }
        let word = self.used().iter().enumerate().fold(0, |word, (i, &at)| {
            word | u64::from(at + 1) << (i as u32 * STEP_BITS)
        });
        if self.saturated {
            word | SATURATED
        } else {
            word
        }
    }

    fn used(&self) -> &[u32] {
        &self.at[..self.len]
    }

    fn push(&mut self, at: u32) {
        self.at[self.len] = at;
        self.len += 1;
    }

    /// Keeps only the steps `keep` accepts.
    fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            if keep(self.at[i]) {
                self.at[kept] = self.at[i];
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// Adds `at` in its ascending place (beyond every step kept by the caller).
    fn insert(&mut self, at: u32) {
        let place = self.used().partition_point(|&s| s < at);
        self.at.copy_within(place..self.len, place + 1);
        self.at[place] = at;
        self.len += 1;
    }

    /// Window word `word`'s steps, or `current` alone for an empty window
    /// (`recordInitialRecommendation`).
    fn seeded(bounds: Bounds, word: u64, current: i32) -> Self {
        let mut steps = Self::decode(bounds, word);
        if word == 0 {
            steps.push(bounds.offset(current));
        }
        steps
    }

    /// Records `recommendation` in the window word `word`: every step it supersedes (at or
    /// below it when the newest is the lowest step, at or above it otherwise) becomes it.
    fn record(
        bounds: Bounds,
        word: u64,
        current: i32,
        recommendation: i32,
        newest_low: bool,
    ) -> u64 {
        let mut steps = Self::seeded(bounds, word, current);
        let at = bounds.offset(recommendation);
        steps.retain(|s| if newest_low { s > at } else { s < at });
        steps.insert(at);
        steps.encode(bounds, newest_low)
    }

    /// The window word `word` without its oldest step (the highest when the newest is the
    /// lowest, else the lowest); the newest never leaves.
    fn without_oldest(bounds: Bounds, word: u64, newest_low: bool) -> u64 {
        let mut steps = Self::decode(bounds, word);
        if steps.len < 2 {
            return word;
        }
        if !newest_low {
            steps.at.copy_within(1..steps.len, 0);
        }
        steps.len -= 1;
        steps.encode(bounds, newest_low)
    }
}

/// A scale-down stabilisation window: the largest recommendation of every suffix of the
/// evaluations, a staircase falling from the oldest to the newest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window(pub u64);

impl Window {
    /// Records `recommendation` (`stabilizeRecommendation`): every kept step at or below it
    /// becomes it. An empty window first records `current` (`recordInitialRecommendation`).
    /// Returns the window's largest recommendation, the stabilised one, at least
    /// `recommendation` itself.
    pub fn record(&mut self, bounds: Bounds, current: i32, recommendation: i32) -> i32 {
        self.0 = Steps::record(bounds, self.0, current, recommendation, true);
        self.largest(bounds).max(recommendation)
    }

    /// The largest recommendation in the window (`minReplicas` when it is empty).
    pub fn largest(self, bounds: Bounds) -> i32 {
        let steps = Steps::decode(bounds, self.0);
        bounds.min + steps.used().last().map_or(0, |&at| at as i32)
    }

    /// Whether an older recommendation still holds a scale-down back: leaving it changes what
    /// the HPA decides next.
    pub fn can_expire(self, bounds: Bounds) -> bool {
        several_steps(bounds, self.0)
    }

    /// The oldest (largest) recommendation leaves the window.
    pub fn expire(&mut self, bounds: Bounds) {
        self.0 = Steps::without_oldest(bounds, self.0, true);
    }
}

/// A scale-up stabilisation window: the smallest recommendation of every suffix of the
/// evaluations, a staircase rising from the oldest to the newest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpWindow(pub u64);

impl UpWindow {
    /// Records `recommendation`: every kept step at or above it becomes it. An empty window
    /// first records `current`.
    pub fn record(&mut self, bounds: Bounds, current: i32, recommendation: i32) {
        self.0 = Steps::record(bounds, self.0, current, recommendation, false);
    }

    /// The smallest recommendation in the window (`minReplicas` when it is empty).
    pub fn smallest(self, bounds: Bounds) -> i32 {
        let steps = Steps::decode(bounds, self.0);
        bounds.min + steps.used().first().map_or(0, |&at| at as i32)
    }

    /// Whether an older recommendation still holds a scale-up back.
    pub fn can_expire(self, bounds: Bounds) -> bool {
        several_steps(bounds, self.0)
    }

    /// The oldest (smallest) recommendation leaves the window.
    pub fn expire(&mut self, bounds: Bounds) {
        self.0 = Steps::without_oldest(bounds, self.0, false);
    }
}

/// Whether a window word holds two steps or more (asked of every state, so without decoding).
fn several_steps(bounds: Bounds, word: u64) -> bool {
    if bounds.exact() {
        word.count_ones() >= 2
    } else {
        (word >> STEP_BITS) & ((1 << STEP_BITS) - 1) != 0
    }
}

/// Whether a window word of an HPA with `bounds` dropped a step it still needed.
pub fn saturated(bounds: Bounds, word: u64) -> bool {
    !bounds.exact() && word & SATURATED != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const NARROW: Bounds = Bounds { min: 1, max: 10 };
    const WIDE: Bounds = Bounds {
        min: 1000,
        max: 1200,
    };

    #[test]
    fn the_window_keeps_the_largest_recommendation_of_every_suffix() {
        for b in [NARROW, WIDE] {
            let at = |r: i32| b.min + r;
            let mut w = Window::default();
            assert_eq!(
                w.record(b, at(5), at(3)),
                at(5),
                "seeded with the current count"
            );
            assert_eq!(w.record(b, at(5), at(4)), at(5));
            assert_eq!(w.record(b, at(5), at(2)), at(5));
            w.expire(b);
            assert_eq!(w.largest(b), at(4), "5 left first; 4 came after it");
            w.expire(b);
            assert_eq!(w.largest(b), at(2));
            assert!(!w.can_expire(b), "the latest never leaves");
            assert_eq!(w.record(b, at(2), at(6)), at(6));
            assert!(
                !w.can_expire(b),
                "a larger recommendation replaces every smaller one"
            );
            assert!(!saturated(b, w.0));
        }
    }

    #[test]
    fn the_up_window_keeps_the_smallest_recommendation_of_every_suffix() {
        for b in [NARROW, WIDE] {
            let at = |r: i32| b.min + r;
            let mut w = UpWindow::default();
            w.record(b, at(5), at(8));
            w.record(b, at(5), at(7));
            w.record(b, at(5), at(9));
            assert_eq!(w.smallest(b), at(5));
            w.expire(b);
            assert_eq!(w.smallest(b), at(7));
            w.expire(b);
            assert_eq!(w.smallest(b), at(9));
            assert!(!w.can_expire(b));
            w.record(b, at(9), at(3));
            assert_eq!(
                w.smallest(b),
                at(3),
                "a smaller one replaces every larger one"
            );
            assert!(!w.can_expire(b));
        }
    }

    /// Values beyond the bounds are kept at them; an HPA of more than 63 replicas (the old
    /// single-bit layout's limit) keeps exact counts.
    #[test]
    fn recommendations_are_kept_within_the_bounds() {
        let mut w = Window::default();
        assert_eq!(w.record(NARROW, 4, 40), 40, "the new recommendation itself");
        assert_eq!(w.largest(NARROW), 10);
        let mut w = Window::default();
        w.record(NARROW, 4, -3);
        w.expire(NARROW);
        assert_eq!(w.largest(NARROW), 1);
        let mut w = Window::default();
        assert_eq!(w.record(WIDE, 1100, 1150), 1150);
        assert_eq!(w.record(WIDE, 1150, 1064), 1150);
        w.expire(WIDE);
        assert_eq!(w.largest(WIDE), 1064);
    }

    /// A wide HPA's window keeps four steps; a fifth keeps the newest four and marks the
    /// window saturated, for the check to report.
    #[test]
    fn a_listed_window_of_more_steps_keeps_the_newest_and_says_so() {
        let mut w = Window::default();
        for r in [1190, 1150, 1100, 1050] {
            w.record(WIDE, 1200, r);
        }
        assert!(
            saturated(WIDE, w.0),
            "1200, 1190, 1150, 1100, 1050: five steps"
        );
        assert_eq!(w.largest(WIDE), 1190, "the oldest, 1200, was dropped");
        let mut up = UpWindow::default();
        for r in [1010, 1050, 1100, 1150] {
            up.record(WIDE, 1000, r);
        }
        assert!(saturated(WIDE, up.0));
        assert_eq!(up.smallest(WIDE), 1010, "the oldest, 1000, was dropped");
        let mut exact = Window::default();
        for r in [9, 8, 7, 6, 5, 4] {
            exact.record(NARROW, 10, r);
        }
        assert!(
            !saturated(NARROW, exact.0),
            "an exact window holds any staircase"
        );
        assert_eq!(exact.largest(NARROW), 10);
    }
}
