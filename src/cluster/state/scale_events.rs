//! An HPA's recent scale events, as its scaling policies read them: a packed record of a
//! deployment (see `crate::controllers::kube_hpa_behavior`).

use crate::cluster::hpa_behavior::MAX_POLICY_PERIODS;
use bytemuck::NoUninit;

/// The most scale events kept within the longest policy period.
pub const MAX_SCALE_EVENTS: usize = 6;

/// The scale events of an HPA with `behavior` that are still within some policy's period
/// (`scaleUpEvents` and `scaleDownEvents` of `HorizontalController`,
/// `pkg/controller/podautoscaler/horizontal.go`), oldest first, as signed replica changes
/// (added positive, deleted negative), and for each distinct policy period (shortest first,
/// [`crate::cluster::HpaBehavior::periods`]) how many of the newest events are still within
/// it. An event leaves the shorter periods before the longer ones and the events of a period
/// leave it oldest first; once it leaves the longest it is forgotten. All zero without
/// `behavior` and under `--semantics kivi`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct ScaleEvents {
    changes: [i16; MAX_SCALE_EVENTS],
    len: u8,
    inside: [u8; MAX_POLICY_PERIODS],
}

impl ScaleEvents {
    /// How many events are kept.
    pub fn len(self) -> usize {
        self.len as usize
    }

    /// Whether no event is kept.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The replicas added less the replicas deleted by the events within period `period`
    /// (`getReplicasChangePerPeriod` of the scale-up events less that of the scale-down
    /// events).
    pub fn net_within(self, period: usize) -> i32 {
        let (changes, len, inside) = (self.changes, self.len as usize, self.inside);
        changes[len - inside[period] as usize..len]
            .iter()
            .map(|&c| c as i32)
            .sum()
    }

    /// How many events are within period `period`.
    pub fn within(self, period: usize) -> usize {
        let inside = self.inside;
        inside[period] as usize
    }

    /// Records a scale event of `change` replicas, within each of the `periods` periods
    /// (`storeScaleEvent`). With [`MAX_SCALE_EVENTS`] kept already, the oldest is forgotten
    /// first and false is returned: the model then leaves out the runs in which it stays.
    pub fn record(&mut self, change: i32, periods: usize) -> bool {
        let kept = self.len() < MAX_SCALE_EVENTS;
        if !kept {
            self.forget_oldest();
        }
        let (mut changes, mut inside) = (self.changes, self.inside);
        changes[self.len()] = change.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
        for count in &mut inside[..periods] {
            *count += 1;
        }
        self.changes = changes;
        self.inside = inside;
        self.len += 1;
        kept
    }

    /// Whether the oldest event within period `period` may leave it now: there is one, and it
    /// has left every shorter period.
    pub fn can_leave(self, period: usize) -> bool {
        let inside = self.inside;
        inside[period] > 0 && (period == 0 || inside[period - 1] < inside[period])
    }

    /// The oldest event within period `period` leaves it; leaving the longest of the
    /// `periods` periods forgets it.
    pub fn leave(&mut self, period: usize, periods: usize) {
        if !self.can_leave(period) {
            return;
        }
        if period + 1 == periods {
            self.forget_oldest();
        } else {
            let mut inside = self.inside;
            inside[period] -= 1;
            self.inside = inside;
        }
    }

    fn forget_oldest(&mut self) {
        let (mut changes, mut inside) = (self.changes, self.inside);
        let len = self.len();
        changes.copy_within(1..len, 0);
        changes[len - 1] = 0;
        for count in &mut inside {
            *count = (*count).min(len as u8 - 1);
        }
        self.changes = changes;
        self.inside = inside;
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_leave_shorter_periods_first_and_oldest_first() {
        let mut events = ScaleEvents::default();
        assert!(events.record(4, 2));
        assert!(events.record(-1, 2));
        assert_eq!((events.net_within(0), events.net_within(1)), (3, 3));
        assert!(
            !events.can_leave(1),
            "the oldest is still in the shorter period"
        );
        events.leave(0, 2);
        assert_eq!((events.net_within(0), events.net_within(1)), (-1, 3));
        assert!(events.can_leave(1));
        events.leave(1, 2);
        assert_eq!(events.len(), 1, "leaving the longest period forgets it");
        assert_eq!((events.net_within(0), events.net_within(1)), (-1, -1));
        events.leave(0, 2);
        events.leave(1, 2);
        assert!(events.is_empty());
        assert_eq!(events, ScaleEvents::default());
    }

    #[test]
    fn a_full_record_forgets_its_oldest_event() {
        let mut events = ScaleEvents::default();
        for change in 1..=MAX_SCALE_EVENTS as i32 {
            assert!(events.record(change, 1));
        }
        assert!(!events.record(10, 1));
        assert_eq!(events.len(), MAX_SCALE_EVENTS);
        assert_eq!(events.net_within(0), (2..=6).sum::<i32>() + 10);
    }
}
