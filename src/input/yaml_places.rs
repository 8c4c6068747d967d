//! Where a value lies in the text of a YAML (or JSON) document, found from its path.
//!
//! The parsed value keeps no positions, and a value's text after parsing may not be the text
//! the user wrote (`1e30` is read back as `1e+30`, `0.50` as `0.5`), so an error cannot be
//! placed by searching for the value. It is placed by its path instead: each key of the path is
//! looked for after the previous one, and an index `[i]` moves to the i-th item of the sequence
//! that follows, in block style (`- ` items) or flow style (`[a, b]`). The path may start at
//! any key of the full path (`containers[1].resources.requests.cpu`), as long as its first key
//! is not met earlier in the document. Where a key is not found, the place of the last one
//! found is given: an error about a value never points below it.

/// One step of a path: a mapping key, then the item of a sequence under it, if any.
struct Step<'a> {
    key: &'a str,
    index: Option<usize>,
}

/// Splits `path` (`spec.containers[0].resources`) into steps; keys are split at dots.
fn steps(path: &str) -> Vec<Step<'_>> {
    path.split('.')
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('[') {
            Some((key, rest)) => Step {
                key,
                index: rest.trim_end_matches(']').parse().ok(),
            },
            None => Step {
                key: part,
                index: None,
            },
        })
        .collect()
}

/// The byte offset in `text` of the value at `path` (of its key when the value does not start
/// on the key's line), or of the deepest part of the path found.
pub fn offset_of_path(text: &str, path: &str) -> Option<usize> {
    let mut found = None;
    let mut from = 0;
    let steps = steps(path);
    for step in &steps {
        if !step.key.is_empty() {
            let Some((at, value)) = key_after(text, step.key, from) else {
                return found;
            };
            found = Some(at);
            from = value;
        }
        if let Some(index) = step.index {
            let Some(at) = item_after(text, from, index) else {
                return found;
            };
            found = Some(at);
            from = at + 1;
        }
    }
    let value = from + text[from..].len() - text[from..].trim_start_matches([' ', '\t']).len();
    let inline = text[value..]
        .chars()
        .next()
        .is_some_and(|c| !matches!(c, '\n' | '\r' | '#'));
    let ends_at_key = steps.last().is_some_and(|step| step.index.is_none());
    if inline && ends_at_key {
        Some(value)
    } else {
        found
    }
}

/// The offset of the first use of `key` as a mapping key at or after `from` (`key:`, or the
/// key quoted, preceded by the start of a line, a space, `{`, `,` or `-`), and the offset just
/// after its colon.
fn key_after(text: &str, key: &str, from: usize) -> Option<(usize, usize)> {
    let mut start = from;
    while let Some(relative) = text.get(start..)?.find(key) {
        let at = start + relative;
        start = at + key.len();
        let before = text[..at].chars().next_back();
        let (opening, rest) = match before {
            Some(quote @ ('"' | '\'')) => (Some(quote), &text[start..]),
            _ => (None, &text[start..]),
        };
        let rest = match opening {
            Some(quote) => match rest.strip_prefix(quote) {
                Some(rest) => rest,
                None => continue,
            },
            None => rest,
        };
        let key_start = at - opening.map_or(0, char::len_utf8);
        let separated = text[..key_start]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '{' | ',' | '-'));
        let after_blanks = rest.trim_start_matches([' ', '\t']);
        if separated && after_blanks.starts_with(':') {
            return Some((key_start, text.len() - after_blanks.len() + 1));
        }
    }
    None
}

/// The offset of item `index` (from 0) of the sequence that starts after `from`.
fn item_after(text: &str, from: usize, index: usize) -> Option<usize> {
    let rest = text.get(from..)?;
    let value = rest.find(|c: char| !matches!(c, ' ' | '\t'))?;
    if rest[value..].starts_with('[') {
        return flow_item(text, from + value, index);
    }
    block_item(text, from, index)
}

/// Item `index` of the flow sequence whose `[` is at `open`.
fn flow_item(text: &str, open: usize, index: usize) -> Option<usize> {
    let mut depth = 0;
    let mut item = 0;
    let mut item_start = open + 1;
    for (offset, c) in text[open..].char_indices() {
        let at = open + offset;
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                item += 1;
                item_start = at + 1;
            }
            _ => {}
        }
        if item == index && depth >= 1 && at >= item_start && !c.is_whitespace() && c != ',' {
            return Some(at);
        }
    }
    None
}

/// Item `index` of the block sequence (`- ` lines) that starts on a line after `from`.
fn block_item(text: &str, from: usize, index: usize) -> Option<usize> {
    let mut offset = text[from..].find('\n').map(|at| from + at + 1)?;
    let mut indent = None;
    let mut item = 0;
    for line in text[offset..].split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let here = line.len() - trimmed.len();
        let blank = trimmed.trim().is_empty() || trimmed.starts_with('#');
        if !blank {
            let dash = trimmed.starts_with('-');
            match indent {
                None if dash => indent = Some(here),
                None => return None,
                Some(level) if here < level || (here == level && !dash) => return None,
                Some(_) => {}
            }
            if dash && Some(here) == indent {
                if item == index {
                    return Some(offset + here);
                }
                item += 1;
            }
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_a_value_on_its_key_line() {
        let text = "spec:\n  replicas: 3\n  cpu:   1e30 # big\n  template:\n    x: 1\n";
        let at = offset_of_path(text, "spec.cpu").unwrap();
        assert_eq!(&text[at..at + 4], "1e30");
        let at = offset_of_path(text, "spec.template").unwrap();
        assert_eq!(&text[at..at + 9], "template:");
    }

    fn line_of(text: &str, path: &str) -> Option<usize> {
        offset_of_path(text, path).map(|at| text[..at].matches('\n').count() + 1)
    }

    #[test]
    fn follows_keys_and_block_items() {
        let text = "spec:\n  cpu: 1\n  containers:\n  - name: a\n    resources:\n      requests: \
                    {cpu: 1e30}\n  - name: b\n    resources:\n      requests:\n        cpu: 2\n";
        assert_eq!(
            line_of(text, "spec.containers[0].resources.requests.cpu"),
            Some(6)
        );
        assert_eq!(
            line_of(text, "containers[1].resources.requests.cpu"),
            Some(10)
        );
        assert_eq!(line_of(text, "spec.containers[1]"), Some(7));
        assert_eq!(
            line_of(text, "spec.containers[1].resources.limits.cpu"),
            Some(8),
            "the deepest key found"
        );
        assert_eq!(line_of(text, "nothing"), None);
    }

    #[test]
    fn follows_json_and_flow_sequences() {
        let text = r#"{"kivi": {"dTypes": [{"name": "a", "num": 1}, {"name": "b", "num": -3}]}}"#;
        let at = offset_of_path(text, "kivi.dTypes[1].num").unwrap();
        assert_eq!(&text[at..at + 2], "-3");
        let text = "kivi:\n  dTypes:\n  - {name: a, num: 1}\n  - {name: b, num: -3}\n";
        assert_eq!(line_of(text, "kivi.dTypes[1].num"), Some(4));
    }

    #[test]
    fn keys_are_whole_keys() {
        let text = "mycpu: 1\ncpus: 2\nx: cpu\ncpu: 3\n";
        assert_eq!(line_of(text, "cpu"), Some(4));
    }
}
