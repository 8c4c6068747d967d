//! The model's integer resource units, derived per resource from the whole input.
//!
//! Kivi's model holds resources in 16-bit fields. kivi picks, for CPU and for memory, the
//! greatest common divisor of every request, capacity, measured usage and average-value target
//! in the input, so that the arithmetic stays exact (the HPA's ratios of usage to requests are
//! the cluster's) and the numbers stay small. Only when even that unit leaves a value above the
//! field's range is a coarser unit taken; then requests round up, capacities round down, usages
//! round to the nearest unit, and a warning names each value that changed.

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

    /// Whether `value` is a whole number of units not beyond the model's fields.
    pub fn represents(&self, value: Quantity) -> bool {
        let unit = self.unit.nanos();
        value.nanos().is_multiple_of(unit) && value.nanos() / unit <= MAX_FIELD
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// With the measured usages among the values the unit is chosen from, the HPA's
        /// recommendation in model units is the one it makes from the raw quantities: requests
        /// of 100m–4 CPU, usages to the millicore, targets 1–200 %, 1–10 replicas, nodes of
        /// 2–32 cores.
        #[test]
        fn the_hpa_recommends_in_model_units_what_it_recommends_from_the_raw_quantities(
            request in 100u64..=4000,
            usages in proptest::collection::vec(0u64..=8000, 1..=10),
            target in 1i64..=200,
            cores in 2u64..=32,
        ) {
            let m = |millis: u64| Quantity::from_nanos(u128::from(millis) * 1_000_000);
            let values = [m(cores * 1000), m(request)]
                .into_iter()
                .chain(usages.iter().map(|&u| m(u)));
            let unit = ResourceUnit::choose(values, q("1"));
            proptest::prop_assume!(!unit.rounded);
            let replicas = usages.len() as i32;
            let requested = i64::from(replicas) * unit.request(m(request));
            let used: i64 = usages.iter().map(|&u| unit.usage(m(u))).sum();
            let raw_used: i64 = usages.iter().map(|&u| u as i64).sum();
            let raw_requested = i64::from(replicas) * request as i64;
            proptest::prop_assert_eq!(
                crate::controllers::hpa::utilization_proposal(replicas, used, requested, target),
                crate::controllers::hpa::utilization_proposal(
                    replicas,
                    raw_used,
                    raw_requested,
                    target
                )
            );
        }
    }

    #[test]
    fn a_usage_finer_than_the_requests_sets_the_unit() {
        let unit = ResourceUnit::choose([q("8"), q("100m"), q("40m")], q("1"));
        assert_eq!(unit.unit, q("20m"));
        assert_eq!((unit.request(q("100m")), unit.usage(q("40m"))), (5, 2));
        assert!(unit.represents(q("40m")));
        assert!(!unit.represents(q("30m")));
    }

    #[test]
    fn nothing_given_falls_back() {
        let unit = ResourceUnit::choose([], q("1Gi"));
        assert_eq!(unit.unit, q("1Gi"));
    }
}
