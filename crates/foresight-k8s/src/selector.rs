//! Label selectors in their string form, as a scale subresource reports them in
//! `status.selector` (`app=web,tier in (a,b),!canary`), parsed and matched against labels the
//! way Kubernetes' `labels.Parse` and `Selector.Matches` do.

use std::collections::BTreeMap;

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// `key=value` / `key==value`.
    Equals(String, String),
    /// `key!=value` (also true when the label is absent).
    NotEquals(String, String),
    /// `key in (a,b)`.
    In(String, Vec<String>),
    /// `key notin (a,b)` (also true when the label is absent).
    NotIn(String, Vec<String>),
    /// `key`.
    Exists(String),
    /// `!key`.
    DoesNotExist(String),
    /// `key>n` / `key<n`: the label parses as an integer greater (less) than `n`.
    Compare(String, std::cmp::Ordering, i64),
}

/// A parsed selector: all requirements must hold. The empty selector selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector(pub Vec<Requirement>);

/// A selector string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid label selector {selector:?}: {problem}")]
pub struct SelectorError {
    /// The selector as given.
    pub selector: String,
    /// What is wrong with it.
    pub problem: String,
}

impl Selector {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let err = |problem: String| SelectorError {
            selector: text.to_owned(),
            problem,
        };
        let mut reqs = Vec::new();
        for term in split_terms(text).map_err(err)? {
            let term = term.trim();
            if term.is_empty() {
                return Err(err("empty requirement".to_owned()));
            }
            reqs.push(parse_term(term).map_err(err)?);
        }
        Ok(Selector(reqs))
    }

    /// A `key=value` every selected object must carry, if the selector has one: caches index
    /// by it, so that selecting one workload's pods looks at that workload's pods only.
    pub fn required_label(&self) -> Option<(&str, &str)> {
        self.0.iter().find_map(|r| match r {
            Requirement::Equals(k, v) => Some((k.as_str(), v.as_str())),
            Requirement::In(k, vs) if vs.len() == 1 => Some((k.as_str(), vs[0].as_str())),
            _ => None,
        })
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
            Requirement::Compare(k, ord, n) => labels
                .get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v.cmp(n) == *ord),
        })
    }
}

/// Splits at commas outside parentheses.
fn split_terms(text: &str) -> Result<Vec<&str>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut terms = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced ')'".to_owned());
                }
            }
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced '('".to_owned());
    }
    terms.push(&text[start..]);
    Ok(terms)
}

fn parse_term(term: &str) -> Result<Requirement, String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(key_of(key)?));
    }
    if let Some((k, v)) = term.split_once("!=") {
        return Ok(Requirement::NotEquals(key_of(k)?, value_of(v)?));
    }
    if let Some((k, v)) = term.split_once("==") {
        return Ok(Requirement::Equals(key_of(k)?, value_of(v)?));
    }
    if let Some((k, v)) = term.split_once('=') {
        return Ok(Requirement::Equals(key_of(k)?, value_of(v)?));
    }
    for (op, ord) in [
        ('>', std::cmp::Ordering::Greater),
        ('<', std::cmp::Ordering::Less),
    ] {
        if let Some((k, v)) = term.split_once(op) {
            let n = v
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("{:?} is not an integer", v.trim()))?;
            return Ok(Requirement::Compare(key_of(k)?, ord, n));
        }
    }
    if let Some(open) = term.find('(') {
        let head = term[..open].trim();
        let list = term[open..]
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .ok_or_else(|| format!("{term:?}: expected a closing ')'"))?;
        let values = list
            .split(',')
            .map(value_of)
            .collect::<Result<Vec<_>, _>>()?;
        let mut words = head.split_whitespace();
        let (Some(key), Some(op), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!(
                "{term:?}: expected `key in (...)` or `key notin (...)`"
            ));
        };
        return match op {
            "in" => Ok(Requirement::In(key_of(key)?, values)),
            "notin" => Ok(Requirement::NotIn(key_of(key)?, values)),
            other => Err(format!("{other:?} is not an operator")),
        };
    }
    Ok(Requirement::Exists(key_of(term)?))
}

/// A label key as Kubernetes validates it (`IsQualifiedName`): an optional DNS-subdomain
/// prefix and `/`, then a name of at most 63 characters that starts and ends with a letter or
/// digit, with `-`, `_` and `.` between.
fn key_of(s: &str) -> Result<String, String> {
    let k = s.trim();
    let bad = || format!("{k:?} is not a label key");
    let (prefix, name) = match k.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, k),
    };
    if let Some(prefix) = prefix {
        let subdomain = !prefix.is_empty()
            && prefix.len() <= 253
            && prefix.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !part.starts_with('-')
                    && !part.ends_with('-')
            });
        if !subdomain {
            return Err(bad());
        }
    }
    if name.is_empty() || !is_label_value(name) {
        return Err(bad());
    }
    Ok(k.to_owned())
}

/// A label value as Kubernetes validates it (`IsValidLabelValue`): empty, or at most 63
/// characters that start and end with a letter or digit, with `-`, `_` and `.` between.
fn value_of(s: &str) -> Result<String, String> {
    let v = s.trim();
    if is_label_value(v) {
        Ok(v.to_owned())
    } else {
        Err(format!("{v:?} is not a label value"))
    }
}

fn is_label_value(v: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| c.is_ascii_alphanumeric());
    v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && edge(v.chars().next())
        && edge(v.chars().last())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn parses_every_operator() {
        let s = Selector::parse("app=web,tier in (a, b),env!=prod,!canary,track,x notin (y),n>3")
            .unwrap();
        assert_eq!(s.0.len(), 7);
        let l = labels(&[("app", "web"), ("tier", "b"), ("track", "1"), ("n", "4")]);
        assert!(s.matches(&l));
        let mut l2 = l.clone();
        l2.insert("canary".into(), "true".into());
        assert!(!s.matches(&l2));
        let mut l3 = l.clone();
        l3.insert("env".into(), "prod".into());
        assert!(!s.matches(&l3));
    }

    #[test]
    fn finds_a_required_label() {
        let s = Selector::parse("tier in (web),app=shop").unwrap();
        assert_eq!(s.required_label(), Some(("tier", "web")));
        assert_eq!(Selector::parse("a!=b,c").unwrap().required_label(), None);
    }

    #[test]
    fn double_equals_and_empty_values() {
        let s = Selector::parse("app==web,empty=").unwrap();
        assert!(s.matches(&labels(&[("app", "web"), ("empty", "")])));
        assert!(!s.matches(&labels(&[("app", "web")])));
    }

    #[test]
    fn keys_and_values_follow_the_kubernetes_rules() {
        let long = "a".repeat(63);
        for good in [
            "app.kubernetes.io/name=web",
            "a_b.c-d=e_f.g-h",
            "x in (),y in (a,)",
            long.as_str(),
        ] {
            assert!(Selector::parse(good).is_ok(), "{good}");
        }
        let too_long = format!("{long}a");
        assert!(Selector::parse(&too_long).is_err());
        assert!(Selector::parse(&format!("a={too_long}")).is_err());
    }

    #[test]
    fn the_empty_selector_matches_everything() {
        assert!(Selector::parse("").unwrap().matches(&labels(&[("a", "b")])));
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in [
            "a in (b",
            "a)",
            "a in b)",
            ",",
            "a b c",
            "a=b c",
            "=x",
            "a in (x y)",
            "n>z",
            "name in (",
            "-app=web",
            "app-=web",
            "app=-web",
            "app=web-",
            "Example.com/app=web",
            "/app=web",
            "example.com/=web",
            "a/b/c=d",
        ] {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
    }
}
