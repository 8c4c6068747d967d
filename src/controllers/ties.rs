//! Ties between equally ranked victims of a controller step (the deployment controller's
//! scale-down, the descheduler's evictions): Kivi's rule, the lowest pod id, or whatever a
//! [`PickVictim`] picks, which the model asks for every choice under `--tie-break any`.

/// Picks the pod a step deletes or evicts among the equally ranked ones.
pub trait PickVictim {
    /// The index in `candidates` (pod ids, ascending, at least two) of the pod to delete, or
    /// `None` to end the step right there: nothing more is written.
    fn pick(&mut self, candidates: &[usize]) -> Option<usize>;
}

/// How a step breaks ties between equally ranked victims.
pub struct Ties<'a> {
    /// `None`: Kivi's rule, the lowest pod id.
    picker: Option<&'a mut dyn PickVictim>,
    /// Whether the picker ended the step.
    stopped: bool,
}

impl<'a> Ties<'a> {
    /// Kivi's rule: the lowest pod id.
    pub fn lowest() -> Self {
        Self {
            picker: None,
            stopped: false,
        }
    }

    /// Whatever `picker` picks.
    pub fn picked_by(picker: &'a mut dyn PickVictim) -> Self {
        Self {
            picker: Some(picker),
            stopped: false,
        }
    }

    /// Whether the picker ended the step.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The index in `candidates` (pod ids, ascending, at least two) of the pod to delete: the
    /// first by Kivi's rule, else the picker's; `None` once the picker has ended the step.
    pub(crate) fn pick(&mut self, candidates: &[usize]) -> Option<usize> {
        let Some(picker) = self.picker.as_deref_mut() else {
            return Some(0);
        };
        match picker.pick(candidates) {
            Some(index) => Some(index.min(candidates.len() - 1)),
            None => {
                self.stopped = true;
                None
            }
        }
    }

    /// Whether a picker breaks the ties (`false`: Kivi's rule).
    pub fn explores(&self) -> bool {
        self.picker.is_some()
    }

    /// `size` of `candidates` (pod ids, ascending, or any ids in the step's order): the first
    /// `size` under Kivi's rule, else the combination the picker makes, one candidate at a
    /// time in order, each pick among those that leave enough after it (so that each set is
    /// picked one way only); `None` once the picker has ended the step.
    pub fn combination(&mut self, candidates: &[usize], size: usize) -> Option<Vec<usize>> {
        let size = size.min(candidates.len());
        let mut chosen = Vec::with_capacity(size);
        let mut from = 0;
        for left in (1..=size).rev() {
            let open = &candidates[from..=candidates.len() - left];
            let index = match open.len() {
                1 => 0,
                _ => self.pick(open)?,
            };
            chosen.push(open[index]);
            from += index + 1;
        }
        Some(chosen)
    }
}
