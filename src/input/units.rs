//! The model's integer resource units, derived per resource from the whole input.
//!
//! Kivi's model holds resources in 16-bit fields. kivi picks, for CPU and for memory, the
//! greatest common divisor of every request, capacity and average-value target in the input,
//! so that the arithmetic stays exact and the numbers stay small. Only when even that unit
//! leaves a value above the field's range is a coarser unit taken; then requests round up and
//! capacities round down, and a warning says so.

use super::quantity::Quantity;

/// Largest value of a resource field in the model.
pub const MAX_FIELD: u128 = i16::MAX as u128;

/// The unit chosen for one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceUnit {
    /// One model unit.
    pub unit: Quantity,
    /// Whether values had to be rounded to fit the model's fields.
    pub rounded: bool,
}

impl ResourceUnit {
    /// The unit for `values` (zeros are skipped); `fallback` when all are zero.
    pub fn choose(values: impl IntoIterator<Item = Quantity>, fallback: Quantity) -> Self {
        let mut divisor = 0u128;
        let mut largest = 0u128;
        for value in values.into_iter().filter(|v| !v.is_zero()) {
            divisor = gcd(divisor, value.nanos());
            largest = largest.max(value.nanos());
        }
        if divisor == 0 {
            return Self {
                unit: fallback,
                rounded: false,
            };
        }
        let steps = largest / divisor;
        if steps <= MAX_FIELD {
            return Self {
                unit: Quantity::from_nanos(divisor),
                rounded: false,
            };
        }
        let factor = steps.div_ceil(MAX_FIELD);
        Self {
            unit: Quantity::from_nanos(divisor * factor),
            rounded: true,
        }
    }

    /// A request in units, rounded up.
    pub fn request(&self, value: Quantity) -> i64 {
        self.clamp(value.nanos().div_ceil(self.unit.nanos()))
    }

    /// A capacity in units, rounded down.
    pub fn capacity(&self, value: Quantity) -> i64 {
        self.clamp(value.nanos() / self.unit.nanos())
    }

    /// A measured usage in units, rounded to the nearest unit (at least 1 when not zero).
    pub fn usage(&self, value: Quantity) -> i64 {
        if value.is_zero() {
            return 0;
        }
        let unit = self.unit.nanos();
        self.clamp(((value.nanos() + unit / 2) / unit).max(1))
    }

    fn clamp(&self, units: u128) -> i64 {
        units.min(MAX_FIELD) as i64
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).unwrap()
    }

    #[test]
    fn the_unit_is_the_greatest_common_divisor() {
        let unit = ResourceUnit::choose([q("24"), q("100m"), q("0")], q("1"));
        assert_eq!(unit.unit, q("100m"));
        assert!(!unit.rounded);
        assert_eq!(unit.capacity(q("24")), 240);
        assert_eq!(unit.request(q("100m")), 1);
        let memory = ResourceUnit::choose([q("63Gi"), q("512Mi")], q("1Gi"));
        assert_eq!(memory.unit, q("512Mi"));
        assert_eq!(memory.capacity(q("63Gi")), 126);
    }

    #[test]
    fn values_too_far_apart_take_a_coarser_unit() {
        let unit = ResourceUnit::choose([q("64Gi"), q("1")], q("1Gi"));
        assert!(unit.rounded);
        assert!(unit.capacity(q("64Gi")) <= MAX_FIELD as i64);
        assert_eq!(unit.request(q("1")), 1);
    }

    #[test]
    fn nothing_given_falls_back() {
        let unit = ResourceUnit::choose([], q("1Gi"));
        assert_eq!(unit.unit, q("1Gi"));
    }
}
