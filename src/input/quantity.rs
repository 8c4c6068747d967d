//! Kubernetes resource quantities (`100m`, `0.5`, `512Mi`, `1G`, `1e3`), parsed exactly.
//!
//! A [`Quantity`] holds its value as a whole number of nano-units (10⁻⁹), which represents
//! every quantity a manifest can sensibly hold without rounding: the smallest Kubernetes suffix
//! is `n`, and 2⁶⁰ (`1Ei`) times 10⁹ still fits in 128 bits.

use std::fmt;

/// Nano-units in one unit.
const NANOS: u128 = 1_000_000_000;

/// A non-negative Kubernetes quantity, exact to the nano-unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Quantity {
    nanos: u128,
}

/// Why a quantity string could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    /// The text that was given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a Kubernetes quantity: {} (expected a number with an optional suffix \
             such as 100m, 0.5, 2, 512Mi, 1Gi, 1G or 1e3)",
            self.text, self.reason
        )
    }
}

impl std::error::Error for QuantityError {}

impl Quantity {
    /// The quantity of `nanos` nano-units.
    pub fn from_nanos(nanos: u128) -> Self {
        Self { nanos }
    }

    /// The quantity of `units` whole units (cores, bytes).
    pub fn from_units(units: u64) -> Self {
        Self {
            nanos: u128::from(units) * NANOS,
        }
    }

    /// The value in nano-units.
    pub fn nanos(self) -> u128 {
        self.nanos
    }

    /// Whether the quantity is zero.
    pub fn is_zero(self) -> bool {
        self.nanos == 0
    }

    /// The sum of two quantities, or `None` when it overflows.
    pub fn checked_add(self, other: Self) -> Option<Self> {
        self.nanos.checked_add(other.nanos).map(Self::from_nanos)
    }

    /// The quantity times `factor`, or `None` when it overflows.
    pub fn checked_mul(self, factor: u128) -> Option<Self> {
        self.nanos.checked_mul(factor).map(Self::from_nanos)
    }

    /// Parses Kubernetes quantity syntax: a decimal number, then either a binary suffix
    /// (`Ki` … `Ei`), a decimal suffix (`n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`) or a
    /// decimal exponent (`e3`, `E-2`). Values below one nano-unit round up, as Kubernetes
    /// rounds requests up.
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let error = |reason| QuantityError {
            text: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        let body = trimmed.strip_prefix('+').unwrap_or(trimmed);
        if body.starts_with('-') {
            return Err(error("resource quantities cannot be negative"));
        }
        let number_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, suffix) = body.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() {
            return Err(error("it has no digits"));
        }
        if fraction.contains('.') {
            return Err(error("it has more than one decimal point"));
        }
        let (multiplier, exponent) = suffix_scale(suffix).ok_or_else(|| error("unknown suffix"))?;
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return Err(error("it has too many digits"));
        }
        let mantissa: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| error("bad digits"))?
        };
        let scale = exponent + 9 - fraction.len() as i32;
        let too_large = || error("it is too large");
        let scaled = mantissa.checked_mul(multiplier).ok_or_else(too_large)?;
        let nanos = if scale >= 0 {
            10u128
                .checked_pow(scale as u32)
                .and_then(|power| scaled.checked_mul(power))
                .ok_or_else(too_large)?
        } else {
            match 10u128.checked_pow(scale.unsigned_abs()) {
                Some(power) => scaled.div_ceil(power),
                None => u128::from(scaled != 0),
            }
        };
        Ok(Self { nanos })
    }
}

/// The binary multiplier and decimal exponent a suffix stands for.
fn suffix_scale(suffix: &str) -> Option<(u128, i32)> {
    let binary = |power: u32| Some((1u128 << power, 0));
    let decimal = |exponent: i32| Some((1, exponent));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E'])?;
            let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            rest.parse::<i32>().ok().map(|exponent| (1, exponent))
        }
    }
}

impl fmt::Display for Quantity {
    /// Writes the quantity in the shortest exact Kubernetes form: a binary suffix when the
    /// value is a whole multiple of 1Ki or more, otherwise a decimal suffix (`m`, `u`, `n`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos == 0 {
            return write!(f, "0");
        }
        if self.nanos.is_multiple_of(NANOS) {
            let units = self.nanos / NANOS;
            for (suffix, power) in [
                ("Ei", 60),
                ("Pi", 50),
                ("Ti", 40),
                ("Gi", 30),
                ("Mi", 20),
                ("Ki", 10),
            ] {
                if units.is_multiple_of(1u128 << power) {
                    return write!(f, "{}{suffix}", units >> power);
                }
            }
            return write!(f, "{units}");
        }
        for (suffix, divisor) in [("m", 1_000_000u128), ("u", 1_000), ("n", 1)] {
            if self.nanos.is_multiple_of(divisor) {
                return write!(f, "{}{suffix}", self.nanos / divisor);
            }
        }
        write!(f, "{}n", self.nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nanos(text: &str) -> u128 {
        Quantity::parse(text).unwrap().nanos()
    }

    #[test]
    fn parses_every_suffix_exactly() {
        assert_eq!(nanos("100m"), 100_000_000);
        assert_eq!(nanos("0.5"), 500_000_000);
        assert_eq!(nanos("2"), 2 * NANOS);
        assert_eq!(nanos("512Mi"), 512 * (1 << 20) * NANOS);
        assert_eq!(nanos("1Gi"), (1 << 30) * NANOS);
        assert_eq!(nanos("1G"), 1_000_000_000 * NANOS);
        assert_eq!(nanos("1e3"), 1000 * NANOS);
        assert_eq!(nanos("1.5k"), 1500 * NANOS);
        assert_eq!(nanos("250u"), 250_000);
        assert_eq!(nanos("7n"), 7);
        assert_eq!(nanos(".5"), 500_000_000);
        assert_eq!(nanos("1Ei"), (1u128 << 60) * NANOS);
        assert_eq!(nanos("+3"), 3 * NANOS);
        assert_eq!(nanos("1E-10"), 1);
    }

    #[test]
    fn rejects_malformed_quantities() {
        for bad in [
            "", "m", "-1", "1.2.3", "12x", "1Qi", "1e", "1e9999", "abc", "1 Gi",
        ] {
            assert!(Quantity::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn displays_the_shortest_exact_form() {
        let shown = |text: &str| Quantity::parse(text).unwrap().to_string();
        assert_eq!(shown("100m"), "100m");
        assert_eq!(shown("1024Mi"), "1Gi");
        assert_eq!(shown("3"), "3");
        assert_eq!(shown("63Gi"), "63Gi");
        assert_eq!(shown("1500"), "1500");
    }
}
