//! The writes a controller step may make before its process crashes (`--perturb restart`).
//!
//! A write is one API call that changes an object: the deployment controller creating or
//! deleting a pod, the descheduler evicting one. A normal step makes as many as its reconciles
//! need ([`WriteBudget::unlimited`]); a step whose process crashes stops right after its k-th
//! ([`WriteBudget::crash_after`]). Controllers count each write with [`WriteBudget::write`] and
//! stop the step as soon as [`WriteBudget::crashed`] says so, leaving the cluster as the
//! writes made so far left it.

/// How many more writes a controller step may make, and how many it has made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteBudget {
    left: Option<u32>,
    made: u32,
}

impl WriteBudget {
    /// A step that runs to its end.
    pub fn unlimited() -> Self {
        Self {
            left: None,
            made: 0,
        }
    }

    /// A step whose process crashes right after its `writes`-th write.
    pub fn crash_after(writes: u32) -> Self {
        Self {
            left: Some(writes),
            made: 0,
        }
    }

    /// Counts a write the controller has just made.
    pub fn write(&mut self) {
        self.made += 1;
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(1);
        }
    }

    /// Whether the process has crashed: it has made its last write and does nothing more.
    pub fn crashed(&self) -> bool {
        self.left == Some(0)
    }

    /// The writes made so far.
    pub fn made(&self) -> u32 {
        self.made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crashing_step_stops_after_its_last_write_and_an_unlimited_one_never() {
        let mut budget = WriteBudget::crash_after(2);
        assert!(!budget.crashed());
        budget.write();
        assert!(!budget.crashed());
        budget.write();
        assert!(budget.crashed());
        assert_eq!(budget.made(), 2);
        let mut free = WriteBudget::unlimited();
        for _ in 0..1000 {
            free.write();
        }
        assert!(!free.crashed());
        assert_eq!(free.made(), 1000);
    }
}
