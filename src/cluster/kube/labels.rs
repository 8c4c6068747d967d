//! Labels and label selectors, matched as `k8s.io/apimachinery/pkg/labels` matches them.
//!
//! A [`LabelSelector`] is the API's `metav1.LabelSelector` (matchLabels and matchExpressions);
//! a [`Selector`] is what `metav1.LabelSelectorAsSelector` turns it into, with the difference
//! between "no selector" (selects nothing) and "an empty selector" (selects everything) that
//! the scheduler's plugins depend on.

use std::collections::BTreeMap;

/// An object's labels.
pub type Labels = BTreeMap<String, String>;

/// A requirement's operator (`selection.Operator`). `Gt` and `Lt` occur only in node selector
/// requirements; matchLabels entries are `In` with one value (`selection.Equals` matches alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// The label exists and its value is one of the values.
    In,
    /// The label is absent, or its value is none of the values.
    NotIn,
    /// The label exists.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label exists and, read as an integer, is greater than the value.
    Gt,
    /// The label exists and, read as an integer, is less than the value.
    Lt,
}

impl Operator {
    /// The operator named `name` as the API writes it, when there is one.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "In" => Self::In,
            "NotIn" => Self::NotIn,
            "Exists" => Self::Exists,
            "DoesNotExist" => Self::DoesNotExist,
            "Gt" => Self::Gt,
            "Lt" => Self::Lt,
            _ => return None,
        })
    }
}

/// One requirement on a label (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// How the label is compared.
    pub operator: Operator,
    /// The values compared with.
    pub values: Vec<String>,
}

impl Requirement {
    /// A requirement, checked as `labels.NewRequirement` checks it: `In` and `NotIn` need
    /// values, `Exists` and `DoesNotExist` take none, `Gt` and `Lt` take exactly one integer.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Self, String> {
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(format!("operator {operator:?} needs at least one value"))
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(format!("operator {operator:?} takes no values"))
            }
            Operator::Gt | Operator::Lt
                if values.len() != 1 || values[0].parse::<i64>().is_err() =>
            {
                return Err(format!(
                    "operator {operator:?} needs exactly one integer value, not {values:?}"
                ))
            }
            _ => {}
        }
        if key.is_empty() {
            return Err("a requirement needs a key".to_string());
        }
        Ok(Self {
            key: key.to_string(),
            operator,
            values,
        })
    }

    /// Whether `labels` satisfy the requirement (`(*Requirement).Matches`).
    pub fn matches(&self, labels: &Labels) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt | Operator::Lt => {
                let (Some(label), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                match self.operator {
                    Operator::Gt => label > bound,
                    _ => label < bound,
                }
            }
        }
    }
}

/// A `metav1.LabelSelector`: every matchLabels entry and every expression must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    /// `matchLabels`.
    pub match_labels: Labels,
    /// `matchExpressions` (operators In, NotIn, Exists, DoesNotExist).
    pub match_expressions: Vec<Requirement>,
}

/// A selector ready to match (`labels.Selector`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Selects nothing: what an absent `metav1.LabelSelector` becomes (`labels.Nothing`).
    Nothing,
    /// Selects the objects meeting every requirement; with none it selects everything
    /// (`labels.Everything`).
    All(Vec<Requirement>),
}

impl Selector {
    /// `metav1.LabelSelectorAsSelector`: absent selects nothing, empty selects everything,
    /// otherwise matchLabels as equalities then matchExpressions.
    pub fn from_label_selector(selector: Option<&LabelSelector>) -> Self {
        let Some(selector) = selector else {
            return Self::Nothing;
        };
        let mut requirements: Vec<Requirement> = selector
            .match_labels
            .iter()
            .map(|(key, value)| equality(key, value))
            .collect();
        requirements.extend(selector.match_expressions.iter().cloned());
        Self::All(requirements)
    }

    /// `labels.SelectorFromSet` (and `Set.AsSelector`): each label as an equality; an empty set
    /// selects everything.
    pub fn from_set(labels: &Labels) -> Self {
        Self::All(labels.iter().map(|(k, v)| equality(k, v)).collect())
    }

    /// Whether the selector selects an object with `labels`.
    pub fn matches(&self, labels: &Labels) -> bool {
        match self {
            Self::Nothing => false,
            Self::All(requirements) => requirements.iter().all(|r| r.matches(labels)),
        }
    }

    /// `Selector.Empty()`: true for a selector without requirements (which selects
    /// everything), false for [`Selector::Nothing`].
    pub fn is_empty(&self) -> bool {
        matches!(self, Self::All(requirements) if requirements.is_empty())
    }

    /// `Selector.Requirements()`: the requirements, or `None` for [`Selector::Nothing`].
    pub fn requirements(&self) -> Option<&[Requirement]> {
        match self {
            Self::Nothing => None,
            Self::All(requirements) => Some(requirements),
        }
    }

    /// `Selector.Add`: the selector with `more` requirements (adding to
    /// [`Selector::Nothing`] leaves it selecting nothing).
    pub fn with(self, more: &[Requirement]) -> Self {
        match self {
            Self::Nothing => Self::Nothing,
            Self::All(mut requirements) => {
                requirements.extend(more.iter().cloned());
                Self::All(requirements)
            }
        }
    }
}

/// `key = value` as a requirement.
fn equality(key: &str, value: &str) -> Requirement {
    Requirement {
        key: key.to_string(),
        operator: Operator::In,
        values: vec![value.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn requirement(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement::new(
            key,
            operator,
            values.iter().map(|v| v.to_string()).collect(),
        )
        .unwrap()
    }

    #[test]
    fn each_operator_matches_as_kubernetes_does() {
        let node = labels(&[("zone", "a"), ("generation", "5"), ("bad", "x")]);
        assert!(requirement("zone", Operator::In, &["a", "b"]).matches(&node));
        assert!(!requirement("zone", Operator::In, &["b"]).matches(&node));
        assert!(!requirement("missing", Operator::In, &["a"]).matches(&node));
        assert!(requirement("missing", Operator::NotIn, &["a"]).matches(&node));
        assert!(!requirement("zone", Operator::NotIn, &["a"]).matches(&node));
        assert!(requirement("zone", Operator::Exists, &[]).matches(&node));
        assert!(requirement("missing", Operator::DoesNotExist, &[]).matches(&node));
        assert!(requirement("generation", Operator::Gt, &["4"]).matches(&node));
        assert!(!requirement("generation", Operator::Gt, &["5"]).matches(&node));
        assert!(requirement("generation", Operator::Lt, &["+6"]).matches(&node));
        assert!(!requirement("bad", Operator::Lt, &["6"]).matches(&node));
        assert!(!requirement("missing", Operator::Lt, &["6"]).matches(&node));
    }

    #[test]
    fn malformed_requirements_are_refused() {
        assert!(Requirement::new("k", Operator::In, vec![]).is_err());
        assert!(Requirement::new("k", Operator::Exists, vec!["v".into()]).is_err());
        assert!(Requirement::new("k", Operator::Gt, vec!["1.5".into()]).is_err());
        assert!(Requirement::new("k", Operator::Lt, vec!["1".into(), "2".into()]).is_err());
    }

    #[test]
    fn absent_selects_nothing_and_empty_selects_everything() {
        let pod = labels(&[("app", "web")]);
        assert!(!Selector::from_label_selector(None).matches(&pod));
        assert!(!Selector::from_label_selector(None).is_empty());
        let empty = Selector::from_label_selector(Some(&LabelSelector::default()));
        assert!(empty.matches(&pod) && empty.is_empty());
        let web = Selector::from_set(&labels(&[("app", "web")]));
        assert!(web.matches(&pod) && !web.is_empty());
        assert!(!Selector::Nothing
            .with(&[requirement("app", Operator::Exists, &[])])
            .matches(&pod));
    }
}
