//! The paper's benchmark cases C1–C8, embedded in the binary so `kivi check --case cN` works
//! wherever it runs. The files live in `cases/cN/` (Kivi's uniform JSON, as Kivi generates it
//! at its default scale 3, plus the expected outcomes).

/// One built-in case: its four documents in Kivi's uniform JSON.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// `c1` … `c8`.
    pub name: &'static str,
    /// The single topology at scale 3 (`-o`).
    pub original: &'static str,
    /// The single topology of the non-violation variant (`-o -cn`).
    pub original_non_violation: &'static str,
    /// The scaling template.
    pub template: &'static str,
    /// The scaling template of the non-violation variant.
    pub template_non_violation: &'static str,
}

macro_rules! case {
    ($name:literal) => {
        Case {
            name: $name,
            original: include_str!(concat!("../cases/", $name, "/original.json")),
            original_non_violation: include_str!(concat!(
                "../cases/",
                $name,
                "/original-non-violation.json"
            )),
            template: include_str!(concat!("../cases/", $name, "/template.json")),
            template_non_violation: include_str!(concat!(
                "../cases/",
                $name,
                "/template-non-violation.json"
            )),
        }
    };
}

/// Every built-in case, in order.
pub const CASES: [Case; 8] = [
    case!("c1"),
    case!("c2"),
    case!("c3"),
    case!("c4"),
    case!("c5"),
    case!("c6"),
    case!("c7"),
    case!("c8"),
];

/// The case called `name` (case-insensitive: `c3`, `C3`).
pub fn find(name: &str) -> Option<&'static Case> {
    CASES
        .iter()
        .find(|case| case.name.eq_ignore_ascii_case(name))
}

impl Case {
    /// The document for the chosen form and variant.
    pub fn document(&self, original: bool, non_violation: bool) -> &'static str {
        match (original, non_violation) {
            (true, false) => self.original,
            (true, true) => self.original_non_violation,
            (false, false) => self.template,
            (false, true) => self.template_non_violation,
        }
    }
}
