//! The API server's rules for object names and labels, applied to the objects kivi models: an
//! object Kubernetes would refuse (`kubectl apply` fails) is an input error, not a cluster to
//! verify.
//!
//! Kubernetes' rules (k8s.io/apimachinery/pkg/util/validation/validation.go):
//! - names of Deployments, Pods, Nodes and HorizontalPodAutoscalers are DNS-1123 subdomains
//!   (`IsDNS1123Subdomain`, which `NameIsDNSSubdomain` in apimachinery/pkg/api/validation
//!   applies): at most 253 characters, lower-case letters, digits, `-` and `.`, starting and
//!   ending with a letter or digit;
//! - label keys are qualified names (`IsQualifiedName`): an optional DNS-1123 subdomain prefix
//!   and `/`, then at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a
//!   letter or digit;
//! - label values (`IsValidLabelValue`) are empty or at most 63 such characters;
//! - namespaces are DNS-1123 labels (`IsDNS1123Label`, which `ValidateNamespaceName` in
//!   pkg/apis/core/validation applies): at most 63 lower-case letters, digits and `-`,
//!   starting and ending with a letter or digit.

use crate::input::diagnostics::InputError;
use crate::input::yaml_documents::Document;
use serde_json::Value;

/// The most characters of a DNS-1123 subdomain.
const MAX_SUBDOMAIN: usize = 253;

/// The most characters of a label value, or of a label key's name part.
const MAX_LABEL: usize = 63;

/// Why `text` breaks one of the API server's character rules, if it does: empty (unless
/// `may_be_empty`), longer than `max`, a character `allowed` refuses (`allowed_words` says
/// which are allowed), or a first or last character that is not a letter or digit.
fn rule_problem(
    text: &str,
    max: usize,
    may_be_empty: bool,
    allowed: impl Fn(char) -> bool,
    allowed_words: &str,
) -> Option<String> {
    if text.is_empty() {
        return (!may_be_empty).then(|| "is empty".into());
    }
    if text.len() > max {
        return Some(format!("is longer than {max} characters"));
    }
    if let Some(c) = text.chars().find(|&c| !allowed(c)) {
        return Some(format!("has `{c}`; only {allowed_words} are allowed"));
    }
    let alphanumeric = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alphanumeric(text.chars().next()) || !alphanumeric(text.chars().last()) {
        return Some("must start and end with a letter or digit".into());
    }
    None
}

/// Why `name` is not a DNS-1123 subdomain, if it is not.
fn subdomain_problem(name: &str) -> Option<String> {
    rule_problem(
        name,
        MAX_SUBDOMAIN,
        false,
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.',
        "lower-case letters a-z, digits, `-` and `.`",
    )
}

/// Why `name` is not a namespace (a DNS-1123 label), if it is not.
pub fn namespace_problem(name: &str) -> Option<String> {
    rule_problem(
        name,
        MAX_LABEL,
        false,
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
        "lower-case letters a-z, digits and `-`",
    )
}

/// Why `text` is not a label value (or a label key's name part, which may not be empty).
fn label_problem(text: &str, may_be_empty: bool) -> Option<String> {
    rule_problem(
        text,
        MAX_LABEL,
        may_be_empty,
        |c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'),
        "letters A-Z and a-z, digits, `-`, `_` and `.`",
    )
}

/// Why `key` is not a label key, if it is not.
fn label_key_problem(key: &str) -> Option<String> {
    match key.split_once('/') {
        Some((prefix, name)) => subdomain_problem(prefix)
            .map(|problem| format!("has the prefix `{prefix}`, which {problem}"))
            .or_else(|| label_problem(name, false)),
        None => label_problem(key, false),
    }
}

/// The label maps of an object, by path: its own labels, its pod template's, and the
/// selector that must match them.
const LABEL_MAPS: [&str; 3] = [
    "metadata.labels",
    "spec.selector.matchLabels",
    "spec.template.metadata.labels",
];

/// Refuses `value` (the object `object` of `document`) when the API server would: its name is
/// not a DNS-1123 subdomain, its namespace not a DNS-1123 label, or one of its labels has a
/// key or value Kubernetes refuses.
pub fn check(document: &Document, object: &str, value: &Value) -> Result<(), InputError> {
    if let Some(name) = value.pointer("/metadata/name").and_then(Value::as_str) {
        if let Some(problem) = subdomain_problem(name) {
            return Err(document.error_at_path(
                "metadata.name",
                format!(
                    "{object}: metadata.name `{name}` {problem}: Kubernetes refuses the object \
                     (names are DNS-1123 subdomains); rename it"
                ),
            ));
        }
    }
    check_namespace(document, object, value)?;
    for path in LABEL_MAPS {
        let pointer = format!("/{}", path.replace('.', "/"));
        let Some(labels) = value.pointer(&pointer).and_then(Value::as_object) else {
            continue;
        };
        for (key, label) in labels {
            let text = match label {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            let problem = label_key_problem(key)
                .map(|problem| format!("the key `{key}` {problem}"))
                .or_else(|| {
                    label_problem(&text, true)
                        .map(|problem| format!("the value `{text}` of `{key}` {problem}"))
                });
            if let Some(problem) = problem {
                return Err(document.error_at_path(
                    path,
                    format!("{object}: {path}: {problem}: Kubernetes refuses the label"),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses `value` (the object `object` of `document`) when its namespace is not a DNS-1123
/// label; an empty one is none (the object goes to the context's namespace).
pub fn check_namespace(document: &Document, object: &str, value: &Value) -> Result<(), InputError> {
    let namespace = value.pointer("/metadata/namespace").and_then(Value::as_str);
    let Some(namespace) = namespace.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    match namespace_problem(namespace) {
        None => Ok(()),
        Some(problem) => Err(document.error_at_path(
            "metadata.namespace",
            format!(
                "{object}: metadata.namespace `{namespace}` {problem}: Kubernetes refuses the \
                 object (namespaces are DNS-1123 labels); write the namespace's name"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_dns_subdomains() {
        for good in ["web", "web-1", "a.b-c", "0"] {
            assert_eq!(subdomain_problem(good), None, "{good}");
        }
        for (bad, says) in [
            ("wéb-ünï", "has `é`"),
            ("Web", "has `W`"),
            ("web-", "start and end"),
            ("", "empty"),
        ] {
            let problem = subdomain_problem(bad).unwrap();
            assert!(problem.contains(says), "{bad}: {problem}");
        }
        assert!(subdomain_problem(&"a".repeat(254)).is_some());
    }

    #[test]
    fn namespaces_follow_dns_labels() {
        for good in ["default", "team-a", "0"] {
            assert_eq!(namespace_problem(good), None, "{good}");
        }
        for (bad, says) in [
            ("team.a", "has `.`"),
            ("Team", "has `T`"),
            ("-a", "start and end"),
            ("", "empty"),
        ] {
            let problem = namespace_problem(bad).unwrap();
            assert!(problem.contains(says), "{bad}: {problem}");
        }
        assert!(namespace_problem(&"a".repeat(64)).is_some());
    }

    #[test]
    fn labels_follow_qualified_names_and_values() {
        assert_eq!(label_key_problem("kubernetes.io/hostname"), None);
        assert_eq!(label_key_problem("app"), None);
        assert!(label_key_problem("Example.com/app").is_some());
        assert!(label_key_problem("a/").is_some());
        assert_eq!(label_problem("", true), None);
        assert_eq!(label_problem("Web_1.x", true), None);
        assert!(label_problem("wéb", true).unwrap().contains("`é`"));
        assert!(label_problem(&"a".repeat(64), true).is_some());
    }
}
