//! Node taints and pod tolerations, and whether a toleration tolerates a taint, as Kubernetes
//! decides it: key, value, effect and the toleration's operator all count.
//!
//! Kivi writes both as strings, `key=value:Effect` (kubectl's taint syntax; `key:Effect` for an
//! empty value), and its `taint_match` (`model_generator.py`) compares the part before the colon
//! as one string and the effect. Read as a toleration with operator `Equal`, a key and an effect,
//! such a string matches exactly the taints Kubernetes' rules match, so Kivi's strings keep
//! Kivi's answers here. What Kivi's strings cannot say — operator `Exists`, an empty key (every
//! taint), an empty effect (every effect) — is a [`Toleration`] with those fields, read from the
//! object form of a toleration (see [`crate::input::uniform`]).

use std::fmt;

/// What a taint does to pods that do not tolerate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaintEffect {
    /// The scheduler places no new pod on the node.
    NoSchedule,
    /// The scheduler prefers other nodes (a score, never a filter).
    PreferNoSchedule,
    /// The scheduler places no new pod on the node and the taint manager evicts running ones.
    NoExecute,
}

impl TaintEffect {
    /// The effects by their Kubernetes names.
    pub const ALL: [TaintEffect; 3] = [Self::NoSchedule, Self::PreferNoSchedule, Self::NoExecute];

    /// The Kubernetes name (`NoSchedule`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::NoSchedule => "NoSchedule",
            Self::PreferNoSchedule => "PreferNoSchedule",
            Self::NoExecute => "NoExecute",
        }
    }

    /// The effect named `name`, or an explanation of why there is none.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                format!(
                    "effect `{name}` is not one Kubernetes knows (NoSchedule, PreferNoSchedule or \
                 NoExecute)"
                )
            })
    }
}

/// A node taint (`spec.taints[]` of a Node).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taint {
    /// The key; never empty.
    pub key: String,
    /// The value; empty when the taint has none.
    pub value: String,
    /// The effect.
    pub effect: TaintEffect,
}

impl Taint {
    /// A taint from its fields as a Node gives them, checked as the API server checks them
    /// (`ValidateTaint` in `pkg/apis/core/validation`: a key, a known effect).
    pub fn new(key: &str, value: &str, effect: &str) -> Result<Self, String> {
        if key.is_empty() {
            return Err("a taint needs a key".to_string());
        }
        check_name_part("key", key)?;
        check_name_part("value", value)?;
        Ok(Self {
            key: key.to_string(),
            value: value.to_string(),
            effect: TaintEffect::parse(effect)?,
        })
    }

    /// A taint written as kubectl and Kivi write it: `key=value:Effect`, or `key:Effect` for
    /// an empty value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (key, value, effect) = split_kivi_form(text)?;
        Self::new(key, value, effect)
    }

    /// kube-scheduler's name for the taint in its filter reason: `{key: value}`.
    pub fn in_braces(&self) -> String {
        format!("{{{}: {}}}", self.key, self.value)
    }
}

impl fmt::Display for Taint {
    /// kubectl's and Kivi's `key=value:Effect` (`key:Effect` when the value is empty).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&kivi_form(&self.key, &self.value, self.effect))
    }
}

/// How a toleration compares its value with a taint's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TolerationOperator {
    /// The values must be equal (the default when no operator is given).
    Equal,
    /// Any value, including none.
    Exists,
}

impl TolerationOperator {
    /// The Kubernetes name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Equal => "Equal",
            Self::Exists => "Exists",
        }
    }
}

/// A pod toleration (`spec.tolerations[]` of a PodSpec).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toleration {
    /// The key; empty tolerates every key (then the operator is `Exists`).
    pub key: String,
    /// How values compare.
    pub operator: TolerationOperator,
    /// The value `Equal` compares with; empty under `Exists`.
    pub value: String,
    /// The effect tolerated; `None` tolerates every effect.
    pub effect: Option<TaintEffect>,
    /// `tolerationSeconds`: how long a pod stays on a node after a NoExecute taint it
    /// tolerates appears; `None` for ever. Only with effect NoExecute.
    pub seconds: Option<i64>,
}

impl Toleration {
    /// A toleration from its fields as a PodSpec gives them (absent or empty strings alike),
    /// checked as the API server checks them (`ValidateTolerations` in
    /// `pkg/apis/core/validation`): an empty key needs operator `Exists`, `Exists` takes no
    /// value, the operator is `Equal` (the default) or `Exists`, the effect is empty or known.
    ///
    /// Kubernetes 1.35 adds the alpha operators `Lt` and `Gt` behind a feature gate; they are
    /// refused here, not modelled.
    pub fn new(key: &str, operator: &str, value: &str, effect: &str) -> Result<Self, String> {
        let operator = match operator {
            "" | "Equal" => TolerationOperator::Equal,
            "Exists" => TolerationOperator::Exists,
            other => {
                return Err(format!(
                    "operator `{other}` is not modelled; Kubernetes' operators are Equal and Exists"
                ))
            }
        };
        if key.is_empty() && operator != TolerationOperator::Exists {
            return Err(
                "a toleration without a key must have operator Exists (it then tolerates \
                 every taint)"
                    .to_string(),
            );
        }
        if operator == TolerationOperator::Exists && !value.is_empty() {
            return Err(format!(
                "operator Exists takes no value, but the value is `{value}`"
            ));
        }
        check_name_part("key", key)?;
        check_name_part("value", value)?;
        let effect = match effect {
            "" => None,
            name => Some(TaintEffect::parse(name)?),
        };
        Ok(Self {
            key: key.to_string(),
            operator,
            value: value.to_string(),
            effect,
            seconds: None,
        })
    }

    /// The toleration with `tolerationSeconds` `seconds`, refused as the API server refuses
    /// it (`ValidateTolerations`) unless the effect is NoExecute.
    pub fn with_seconds(self, seconds: Option<i64>) -> Result<Self, String> {
        if seconds.is_some() && self.effect != Some(TaintEffect::NoExecute) {
            return Err(
                "tolerationSeconds is set but the effect is not NoExecute; the API \
                        server takes it only with effect NoExecute"
                    .to_string(),
            );
        }
        Ok(Self { seconds, ..self })
    }

    /// A toleration in Kivi's string form, `key=value:Effect` (`key:Effect` for an empty
    /// value): operator `Equal`, that key, value and effect.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (key, value, effect) = split_kivi_form(text)?;
        if key.is_empty() {
            return Err(format!(
                "toleration `{text}` has no key; write a toleration of every taint as \
                 {{\"operator\": \"Exists\"}}"
            ));
        }
        Self::new(key, "Equal", value, effect)
    }

    /// Kivi's string form of the toleration, when it has one: operator `Equal`, a key and an
    /// effect. Others are written as objects.
    pub fn kivi_form(&self) -> Option<String> {
        match (self.operator, self.effect) {
            (TolerationOperator::Equal, Some(effect)) => {
                Some(kivi_form(&self.key, &self.value, effect))
            }
            _ => None,
        }
    }

    /// Whether the toleration tolerates `taint`, as `(*Toleration).ToleratesTaint` in
    /// `staging/src/k8s.io/api/core/v1/toleration.go`: the effects match unless the
    /// toleration's is empty, the keys match unless the toleration's is empty, and `Equal`
    /// needs the values equal where `Exists` takes any.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        self.effect.is_none_or(|e| e == taint.effect)
            && (self.key.is_empty() || self.key == taint.key)
            && match self.operator {
                TolerationOperator::Equal => self.value == taint.value,
                TolerationOperator::Exists => true,
            }
    }
}

/// Whether some toleration of `tolerations` tolerates `taint`
/// (`TolerationsTolerateTaint` in `pkg/apis/core/v1/helper/helpers.go`).
pub fn tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

/// How long a pod stays on a node that has a NoExecute taint, as the taint eviction controller
/// decides it (`processPodOnNode` with `GetMatchingTolerations` and `getMinTolerationTime` in
/// `pkg/controller/tainteviction/taint_eviction.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoExecuteStay {
    /// Deleted at once: no toleration matches the taint, or the shortest `tolerationSeconds`
    /// of those that match is 0 or less.
    Deleted,
    /// Deleted once the shortest `tolerationSeconds` of the matching tolerations has passed.
    Seconds(u64),
    /// Stays for ever: the tolerations that match give no `tolerationSeconds`.
    Forever,
}

/// How long a pod with `tolerations` stays on a node tainted `taint` (NoExecute).
pub fn no_execute_stay(tolerations: &[Toleration], taint: &Taint) -> NoExecuteStay {
    if !tolerated(tolerations, taint) {
        return NoExecuteStay::Deleted;
    }
    let matching = tolerations.iter().filter(|t| t.tolerates(taint));
    match matching.filter_map(|t| t.seconds).min() {
        None => NoExecuteStay::Forever,
        Some(seconds) if seconds <= 0 => NoExecuteStay::Deleted,
        Some(seconds) => NoExecuteStay::Seconds(seconds as u64),
    }
}

/// The first taint of `taints` with an effect in `effects` that no toleration tolerates
/// (`FindMatchingUntoleratedTaint` in `pkg/apis/core/v1/helper/helpers.go`).
pub fn first_untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    effects: &[TaintEffect],
) -> Option<&'a Taint> {
    taints
        .iter()
        .find(|taint| effects.contains(&taint.effect) && !tolerated(tolerations, taint))
}

/// How many taints of `taints` with effect PreferNoSchedule no toleration tolerates:
/// kube-scheduler's TaintToleration score of a node before normalisation
/// (`countIntolerableTaintsPreferNoSchedule` in
/// `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`).
pub fn intolerable_prefer_no_schedule(taints: &[Taint], tolerations: &[Toleration]) -> usize {
    taints
        .iter()
        .filter(|t| t.effect == TaintEffect::PreferNoSchedule && !tolerated(tolerations, t))
        .count()
}

/// `key`, `value` and `Effect` of `key=value:Effect` (`key:Effect`: an empty value).
fn split_kivi_form(text: &str) -> Result<(&str, &str, &str), String> {
    let Some((key_value, effect)) = text.split_once(':') else {
        return Err(format!("`{text}` has no `:Effect`"));
    };
    let (key, value) = key_value.split_once('=').unwrap_or((key_value, ""));
    Ok((key, value, effect.trim()))
}

/// Refuses a key or value holding `:` or `=` (which would not read back from the string form)
/// or whitespace; Kubernetes allows none of them there.
fn check_name_part(what: &str, text: &str) -> Result<(), String> {
    match text
        .chars()
        .find(|&c| c == ':' || c == '=' || c.is_whitespace())
    {
        Some(c) => Err(format!(
            "the {what} `{text}` holds `{c}`, which a {what} cannot hold"
        )),
        None => Ok(()),
    }
}

/// `key=value:Effect`, or `key:Effect` when `value` is empty.
fn kivi_form(key: &str, value: &str, effect: TaintEffect) -> String {
    if value.is_empty() {
        format!("{key}:{}", effect.name())
    } else {
        format!("{key}={value}:{}", effect.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(text: &str) -> Taint {
        Taint::parse(text).unwrap()
    }

    /// `getMinTolerationTime` over the tolerations `GetMatchingTolerations` keeps: none
    /// matching deletes at once, the shortest seconds count, none with seconds is for ever,
    /// 0 or less is at once.
    #[test]
    fn a_no_execute_stay_is_the_shortest_seconds_of_the_matching_tolerations() {
        let taint = Taint {
            key: "node.kubernetes.io/not-ready".to_string(),
            value: String::new(),
            effect: TaintEffect::NoExecute,
        };
        let timed = |key: &str, effect: &str, seconds: Option<i64>| {
            toleration(key, "Exists", "", effect)
                .with_seconds(seconds)
                .unwrap()
        };
        let stay = |tolerations: &[Toleration]| no_execute_stay(tolerations, &taint);
        assert_eq!(stay(&[]), NoExecuteStay::Deleted);
        assert_eq!(
            stay(&[timed("other", "NoExecute", Some(5))]),
            NoExecuteStay::Deleted
        );
        let forever = timed("node.kubernetes.io/not-ready", "NoExecute", None);
        assert_eq!(stay(std::slice::from_ref(&forever)), NoExecuteStay::Forever);
        let sixty = timed("", "NoExecute", Some(60));
        let every_effect = timed("node.kubernetes.io/not-ready", "", None);
        assert_eq!(
            stay(&[forever.clone(), sixty.clone(), every_effect]),
            NoExecuteStay::Seconds(60)
        );
        let ten = timed("node.kubernetes.io/not-ready", "NoExecute", Some(10));
        assert_eq!(stay(&[sixty.clone(), ten]), NoExecuteStay::Seconds(10));
        let zero = timed("", "NoExecute", Some(0));
        assert_eq!(stay(&[forever, sixty, zero]), NoExecuteStay::Deleted);
        assert_eq!(
            stay(&[timed("", "NoExecute", Some(-3))]),
            NoExecuteStay::Deleted
        );
        assert!(toleration("k", "Exists", "", "NoSchedule")
            .with_seconds(Some(1))
            .unwrap_err()
            .contains("not NoExecute"));
    }

    fn toleration(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
        Toleration::new(key, operator, value, effect).unwrap()
    }

    #[test]
    fn taints_read_and_write_kubectls_form() {
        let t = taint("dedicated=gpu:NoExecute");
        assert_eq!(
            (t.key.as_str(), t.value.as_str(), t.effect),
            ("dedicated", "gpu", TaintEffect::NoExecute)
        );
        assert_eq!(t.to_string(), "dedicated=gpu:NoExecute");
        assert_eq!(t.in_braces(), "{dedicated: gpu}");
        let bare = taint("spot: NoSchedule");
        assert_eq!(
            (bare.value.as_str(), bare.effect),
            ("", TaintEffect::NoSchedule)
        );
        assert_eq!(bare.to_string(), "spot:NoSchedule");
        assert_eq!(bare.in_braces(), "{spot: }");
        assert_eq!(Taint::parse("spot").unwrap_err(), "`spot` has no `:Effect`");
        assert!(Taint::parse("spot:NoRun").unwrap_err().contains("`NoRun`"));
        assert_eq!(
            Taint::parse("=gpu:NoSchedule").unwrap_err(),
            "a taint needs a key"
        );
        assert!(Taint::parse("a=b=c:NoSchedule")
            .unwrap_err()
            .contains("holds `=`"));
    }

    #[test]
    fn equal_needs_the_same_key_value_and_effect() {
        let gpu = taint("dedicated=gpu:NoSchedule");
        assert!(toleration("dedicated", "Equal", "gpu", "NoSchedule").tolerates(&gpu));
        assert!(
            toleration("dedicated", "", "gpu", "NoSchedule").tolerates(&gpu),
            "an empty operator is Equal"
        );
        assert!(
            !toleration("dedicated", "Equal", "batch", "NoSchedule").tolerates(&gpu),
            "value mismatch"
        );
        assert!(
            !toleration("dedicated", "Equal", "", "NoSchedule").tolerates(&gpu),
            "an empty value is a value: it matches only taints without one"
        );
        assert!(toleration("spot", "Equal", "", "NoSchedule").tolerates(&taint("spot:NoSchedule")));
        assert!(!toleration("other", "Equal", "gpu", "NoSchedule").tolerates(&gpu));
        assert!(!toleration("dedicated", "Equal", "gpu", "NoExecute").tolerates(&gpu));
    }

    #[test]
    fn exists_takes_any_value_of_its_key() {
        let exists = toleration("dedicated", "Exists", "", "NoSchedule");
        assert!(exists.tolerates(&taint("dedicated=gpu:NoSchedule")));
        assert!(exists.tolerates(&taint("dedicated:NoSchedule")));
        assert!(!exists.tolerates(&taint("other=gpu:NoSchedule")));
        assert!(!exists.tolerates(&taint("dedicated=gpu:PreferNoSchedule")));
    }

    #[test]
    fn empty_key_and_empty_effect_match_every_key_and_effect() {
        let everything = toleration("", "Exists", "", "");
        for text in ["a=b:NoSchedule", "c:PreferNoSchedule", "d=e:NoExecute"] {
            assert!(everything.tolerates(&taint(text)), "{text}");
        }
        let every_no_execute = toleration("", "Exists", "", "NoExecute");
        assert!(every_no_execute.tolerates(&taint("d=e:NoExecute")));
        assert!(!every_no_execute.tolerates(&taint("a=b:NoSchedule")));
        let every_effect = toleration("dedicated", "Equal", "gpu", "");
        for effect in TaintEffect::ALL {
            let t = Taint::new("dedicated", "gpu", effect.name()).unwrap();
            assert!(every_effect.tolerates(&t), "{effect:?}");
        }
        assert!(!every_effect.tolerates(&taint("dedicated=cpu:NoExecute")));
    }

    #[test]
    fn tolerations_the_api_server_refuses_are_refused() {
        let refused = |key, operator, value, effect| {
            Toleration::new(key, operator, value, effect).unwrap_err()
        };
        assert!(refused("", "Equal", "", "NoSchedule").contains("must have operator Exists"));
        assert!(refused("", "", "", "").contains("must have operator Exists"));
        assert!(refused("k", "Exists", "v", "").contains("takes no value"));
        assert!(refused("k", "Lt", "5", "").contains("operator `Lt` is not modelled"));
        assert!(refused("k", "Equal", "v", "Sometimes").contains("`Sometimes`"));
        assert!(Toleration::parse(":NoSchedule")
            .unwrap_err()
            .contains("{\"operator\": \"Exists\"}"));
    }

    #[test]
    fn kivis_strings_are_equal_tolerations_and_other_forms_have_none() {
        let parsed = Toleration::parse("key1=value1:NoExecute").unwrap();
        assert_eq!(parsed, toleration("key1", "Equal", "value1", "NoExecute"));
        assert_eq!(parsed.kivi_form().as_deref(), Some("key1=value1:NoExecute"));
        assert_eq!(
            Toleration::parse("key1:NoExecute")
                .unwrap()
                .kivi_form()
                .as_deref(),
            Some("key1:NoExecute")
        );
        assert_eq!(
            toleration("key1", "Exists", "", "NoExecute").kivi_form(),
            None
        );
        assert_eq!(toleration("key1", "Equal", "v", "").kivi_form(), None);
    }

    #[test]
    fn the_filter_names_the_first_untolerated_no_schedule_or_no_execute_taint() {
        let taints = [
            taint("soft:PreferNoSchedule"),
            taint("tolerated=yes:NoSchedule"),
            taint("dedicated=gpu:NoExecute"),
            taint("spot:NoSchedule"),
        ];
        let tolerations = [toleration("tolerated", "Equal", "yes", "NoSchedule")];
        let blocking = [TaintEffect::NoSchedule, TaintEffect::NoExecute];
        assert_eq!(
            first_untolerated(&taints, &tolerations, &blocking),
            Some(&taints[2])
        );
        assert_eq!(
            first_untolerated(&taints, &tolerations, &[TaintEffect::NoSchedule]),
            Some(&taints[3])
        );
        let all = [toleration("", "Exists", "", "")];
        assert_eq!(first_untolerated(&taints, &all, &blocking), None);
    }

    #[test]
    fn the_score_counts_each_untolerated_prefer_no_schedule_taint() {
        let taints = [
            taint("a:PreferNoSchedule"),
            taint("b=1:PreferNoSchedule"),
            taint("c:NoSchedule"),
        ];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &[]), 2);
        let b = [toleration("b", "Exists", "", "")];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &b), 1);
        let wrong_effect = [toleration("b", "Exists", "", "NoSchedule")];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &wrong_effect), 2);
        let wrong_value = [toleration("b", "Equal", "2", "PreferNoSchedule")];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &wrong_value), 2);
    }
}
