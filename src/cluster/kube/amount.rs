//! Resource amounts as the scheduler converts them: exact until the moment they become
//! integers, then rounded up, as `resource.Quantity`'s `MilliValue` and `Value` round
//! (`k8s.io/apimachinery/pkg/api/resource/quantity.go`).

use std::collections::BTreeMap;

/// Nano-units in one unit.
const NANOS_PER_UNIT: u128 = 1_000_000_000;
/// Nano-units in one milli-unit.
const NANOS_PER_MILLI: u128 = 1_000_000;

/// A non-negative resource quantity, exact to the nano-unit (10⁻⁹ of a core, a byte, a pod).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount {
    /// The amount in nano-units.
    pub nanos: u128,
}

impl Amount {
    /// The amount of `nanos` nano-units.
    pub const fn from_nanos(nanos: u128) -> Self {
        Self { nanos }
    }

    /// `milli` thousandths of a unit (`100m` CPU is `from_milli(100)`).
    pub const fn from_milli(milli: u64) -> Self {
        Self {
            nanos: milli as u128 * NANOS_PER_MILLI,
        }
    }

    /// `units` whole units (bytes, pods).
    pub const fn from_units(units: u64) -> Self {
        Self {
            nanos: units as u128 * NANOS_PER_UNIT,
        }
    }

    /// The value in thousandths, rounded up (`Quantity.MilliValue`), saturating at `i64::MAX`.
    pub fn milli_value(self) -> i64 {
        saturate(self.nanos.div_ceil(NANOS_PER_MILLI))
    }

    /// The value in whole units, rounded up (`Quantity.Value`), saturating at `i64::MAX`.
    pub fn value(self) -> i64 {
        saturate(self.nanos.div_ceil(NANOS_PER_UNIT))
    }

    /// The sum, saturating (no request comes near 2¹²⁸ nano-units).
    pub fn saturating_add(self, other: Self) -> Self {
        Self {
            nanos: self.nanos.saturating_add(other.nanos),
        }
    }
}

fn saturate(value: u128) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Quantities by resource name (`cpu`, `memory`, `ephemeral-storage`, `pods`, extended
/// resources): a `v1.ResourceList`. A name present with zero differs from an absent name where
/// the scheduler asks whether a container sets a request at all.
pub type ResourceList = BTreeMap<String, Amount>;

/// Adds `addition` into `sum`, name by name (`addResourceList` in
/// `k8s.io/component-helpers/resource/helpers.go`).
pub fn add_into(sum: &mut ResourceList, addition: &ResourceList) {
    for (name, amount) in addition {
        let entry = sum.entry(name.clone()).or_default();
        *entry = entry.saturating_add(*amount);
    }
}

/// Raises `list` to at least `other`, name by name (`maxResourceList` in the same file).
pub fn max_into(list: &mut ResourceList, other: &ResourceList) {
    for (name, amount) in other {
        let entry = list.entry(name.clone()).or_default();
        if *amount > *entry {
            *entry = *amount;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_up_as_quantities_do() {
        assert_eq!(Amount::from_nanos(1).milli_value(), 1);
        assert_eq!(Amount::from_nanos(1).value(), 1);
        assert_eq!(Amount::from_milli(1500).value(), 2);
        assert_eq!(Amount::from_milli(1500).milli_value(), 1500);
        assert_eq!(Amount::from_units(3).milli_value(), 3000);
        assert_eq!(Amount::default().value(), 0);
        assert_eq!(Amount::from_nanos(u128::MAX).value(), i64::MAX);
    }

    #[test]
    fn lists_add_and_take_maxima_by_name() {
        let list = |entries: &[(&str, u64)]| -> ResourceList {
            entries
                .iter()
                .map(|(n, m)| (n.to_string(), Amount::from_milli(*m)))
                .collect()
        };
        let mut sum = list(&[("cpu", 100)]);
        add_into(&mut sum, &list(&[("cpu", 50), ("memory", 7)]));
        assert_eq!(sum, list(&[("cpu", 150), ("memory", 7)]));
        max_into(&mut sum, &list(&[("cpu", 120), ("memory", 9), ("pods", 0)]));
        assert_eq!(sum, list(&[("cpu", 150), ("memory", 9), ("pods", 0)]));
    }
}
