//! Label selectors in their string form, as a scale subresource reports them in
//! `status.selector` (`app=web,tier in (a,b),!canary`): parsed with the grammar, the keywords
//! and the error texts of Kubernetes' `labels.Parse`, and matched as `Selector.Matches` does.
//! Every shell calls this one parser, so a malformed scale selector is `InvalidSelector`
//! everywhere, as Kubernetes reports it.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::validation::names::{label_value_problems, qualified_name_problems};

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
    Compare(String, Ordering, i64),
}

/// A parsed selector: all requirements must hold. The empty selector selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector(pub Vec<Requirement>);

/// A selector string that does not parse; displays as Kubernetes' error does.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    /// The selector as given.
    pub selector: String,
    /// Kubernetes' error text.
    pub message: String,
}

/// The lexer's tokens (Kubernetes' `Token`s, less the error token no input produces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    Greater,
    Identifier,
    In,
    Less,
    NotEquals,
    NotIn,
    OpenPar,
}

/// The operator of a requirement being parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Equals,
    NotEquals,
    Greater,
    Less,
    Exists,
    DoesNotExist,
}

const OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn symbol(s: &[u8]) -> Option<Tok> {
    Some(match s {
        b")" => Tok::ClosedPar,
        b"," => Tok::Comma,
        b"!" => Tok::Not,
        b"==" => Tok::DoubleEquals,
        b"=" => Tok::Equals,
        b">" => Tok::Greater,
        b"<" => Tok::Less,
        b"!=" => Tok::NotEquals,
        b"(" => Tok::OpenPar,
        _ => return None,
    })
}

/// Splits `text` into tokens: runs of symbols by longest match (`!=`, `==`), everything else
/// up to a symbol or blank as an identifier or keyword (`in`, `notin`).
fn lex(text: &str) -> Vec<(Tok, &str)> {
    // Kubernetes' lexer reads a NUL byte as the end of the input.
    let text = text.split('\0').next().unwrap_or_default();
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        if i == b.len() {
            out.push((Tok::End, ""));
            return out;
        }
        let start = i;
        if is_symbol(b[i]) {
            // Every single symbol is a token; a longer run is one while it stays one.
            let mut end = start + 1;
            let mut tok = symbol(&b[start..end]).unwrap_or(Tok::Comma);
            while end < b.len() && is_symbol(b[end]) {
                match symbol(&b[start..=end]) {
                    Some(t) => {
                        tok = t;
                        end += 1;
                    }
                    None => break,
                }
            }
            i = end;
            out.push((tok, &text[start..end]));
        } else {
            while i < b.len() && !is_symbol(b[i]) && !is_space(b[i]) {
                i += 1;
            }
            // Symbols and blanks are ASCII, so `i` is on a character boundary.
            let word = &text[start..i];
            let tok = match word {
                "in" => Tok::In,
                "notin" => Tok::NotIn,
                _ => Tok::Identifier,
            };
            out.push((tok, word));
        }
    }
}

/// Kubernetes' recursive-descent parser over the tokens. Where a value is expected the
/// keywords are identifiers (`env in (in)`).
struct Parser<'a> {
    items: Vec<(Tok, &'a str)>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self, values: bool) -> (Tok, &'a str) {
        let (t, s) = self.items[self.at.min(self.items.len() - 1)];
        (Self::in_context(t, values), s)
    }

    fn next(&mut self, values: bool) -> (Tok, &'a str) {
        let item = self.peek(values);
        self.at += 1;
        item
    }

    fn in_context(t: Tok, values: bool) -> Tok {
        match t {
            Tok::In | Tok::NotIn if values => Tok::Identifier,
            t => t,
        }
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut out = Vec::new();
        loop {
            let (tok, lit) = self.peek(true);
            match tok {
                Tok::Identifier | Tok::Not => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    out.push(r);
                    let (t, l) = self.next(true);
                    match t {
                        Tok::End => return Ok(out),
                        Tok::Comma => {
                            let (t2, l2) = self.peek(true);
                            if t2 != Tok::Identifier && t2 != Tok::Not {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(out),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, inferred) = self.key_and_inferred_operator()?;
        if let Some(op) = inferred {
            return build(key, op, Vec::new());
        }
        let (tok, lit) = self.next(false);
        let op = match tok {
            Tok::In => Op::In,
            Tok::Equals | Tok::DoubleEquals => Op::Equals,
            Tok::Greater => Op::Greater,
            Tok::Less => Op::Less,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {OPERATORS}")),
        };
        let values = match op {
            Op::In | Op::NotIn => self.set()?,
            _ => self.exact_value()?,
        };
        build(key, op, values)
    }

    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let (mut tok, mut lit) = self.next(true);
        let negated = tok == Tok::Not;
        if negated {
            (tok, lit) = self.next(true);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let problems = qualified_name_problems(lit);
        if !problems.is_empty() {
            return Err(invalid("<nil>", lit, &problems.join("; ")));
        }
        let (next, _) = self.peek(true);
        let op = if negated {
            Some(Op::DoesNotExist)
        } else if matches!(next, Tok::End | Tok::Comma) {
            Some(Op::Exists)
        } else {
            None
        };
        Ok((lit.to_owned(), op))
    }

    /// `(a,b,c)`: empty members are the empty value; the result is sorted and unique.
    fn set(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.next(true);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.peek(true);
        let mut values = match tok {
            Tok::Identifier | Tok::Comma => {
                let values = self.identifiers()?;
                if self.next(true).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                values
            }
            Tok::ClosedPar => {
                self.next(true);
                vec![String::new()]
            }
            _ => return Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        };
        values.sort();
        values.dedup();
        Ok(values)
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (tok, lit) = self.next(true);
            match tok {
                Tok::Identifier => {
                    values.push(lit.to_owned());
                    let (t2, l2) = self.peek(true);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    match self.peek(true).0 {
                        Tok::ClosedPar => {
                            values.push(String::new());
                            return Ok(values);
                        }
                        Tok::Comma => {
                            self.next(true);
                            values.push(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        if matches!(self.peek(true).0, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        match self.next(true) {
            (Tok::Identifier, lit) => Ok(vec![lit.to_owned()]),
            (_, lit) => Err(format!("found '{lit}', expected: identifier")),
        }
    }
}

/// A field error as Kubernetes prints one: `path: Invalid value: "value": detail`.
fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value:?}: {detail}")
}

/// `NewRequirement`: the checks on values, with Kubernetes' aggregated error text.
fn build(key: String, op: Op, values: Vec<String>) -> Result<Requirement, String> {
    let mut errs = Vec::new();
    let mut number = None;
    if matches!(op, Op::Greater | Op::Less) {
        // The parser gives exactly one value here.
        match values.first().map(|v| v.parse::<i64>()) {
            Some(Ok(n)) => number = Some(n),
            _ => errs.push(invalid(
                "values[0]",
                values.first().map_or("", String::as_str),
                "for 'Gt', 'Lt' operators, the value must be an integer",
            )),
        }
    }
    for (i, v) in values.iter().enumerate() {
        let problems = label_value_problems(v);
        if !problems.is_empty() {
            errs.push(invalid(
                &format!("values[{i}][{key}]"),
                v,
                &problems.join("; "),
            ));
        }
    }
    match errs.len() {
        0 => {}
        1 => return Err(errs.remove(0)),
        _ => return Err(format!("[{}]", errs.join(", "))),
    }
    let one = || values.first().cloned().unwrap_or_default();
    Ok(match op {
        Op::In => Requirement::In(key, values),
        Op::NotIn => Requirement::NotIn(key, values),
        Op::Equals => Requirement::Equals(key, one()),
        Op::NotEquals => Requirement::NotEquals(key, one()),
        Op::Greater => Requirement::Compare(key, Ordering::Greater, number.unwrap_or_default()),
        Op::Less => Requirement::Compare(key, Ordering::Less, number.unwrap_or_default()),
        Op::Exists => Requirement::Exists(key),
        Op::DoesNotExist => Requirement::DoesNotExist(key),
    })
}

impl Selector {
    /// Parses `text` as Kubernetes' `labels.Parse` does.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let mut parser = Parser {
            items: lex(text),
            at: 0,
        };
        parser
            .parse()
            .map(Selector)
            .map_err(|message| SelectorError {
                selector: text.to_owned(),
                message,
            })
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
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    /// Whether the labels `get` looks up (a label's value by its key, `None` when the label
    /// is absent) satisfy every requirement: for label sets not kept in a `BTreeMap`.
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        let among = |vs: &[String], v: &str| vs.iter().any(|x| x == v);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|v| among(vs, v)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| !among(vs, v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
            Requirement::Compare(k, ord, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v.cmp(n) == *ord),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn error(text: &str) -> String {
        Selector::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_operator() {
        let s =
            Selector::parse("app=web, tier in (a,b), env notin (x), !canary, ver>2, hot").unwrap();
        assert_eq!(s.0.len(), 6);
        let l = labels(&[("app", "web"), ("tier", "b"), ("ver", "3"), ("hot", "")]);
        assert!(s.matches(&l));
        assert!(!s.matches(&labels(&[
            ("app", "web"),
            ("tier", "c"),
            ("ver", "3"),
            ("hot", "")
        ])));
        let s = Selector::parse("a==b,c!=d,e<5").unwrap();
        assert!(s.matches(&labels(&[("a", "b"), ("e", "4")])));
        assert!(!s.matches(&labels(&[("a", "b"), ("c", "d"), ("e", "4")])));
    }

    #[test]
    fn matching_through_a_lookup_is_matching_a_map() {
        let selectors = [
            "app=web, tier in (a,b), env notin (x), !canary, ver>2, hot",
            "a==b,c!=d,e<5",
            "tier in (b)",
            "",
        ];
        let sets = [
            labels(&[("app", "web"), ("tier", "b"), ("ver", "3"), ("hot", "")]),
            labels(&[("app", "web"), ("tier", "c"), ("ver", "3"), ("hot", "")]),
            labels(&[("a", "b"), ("e", "4")]),
            labels(&[("a", "b"), ("c", "d"), ("e", "4"), ("canary", "")]),
            labels(&[]),
        ];
        for text in selectors {
            let s = Selector::parse(text).unwrap();
            for l in &sets {
                // A lookup over pairs answers as the map does.
                let pairs: Vec<(&str, &str)> =
                    l.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let by_pairs =
                    s.matches_with(|k| pairs.iter().find(|(pk, _)| *pk == k).map(|(_, v)| *v));
                assert_eq!(by_pairs, s.matches(l), "{text} on {l:?}");
            }
        }
    }

    #[test]
    fn keywords_are_values_where_a_value_is_expected() {
        let s = Selector::parse("env in (in,notin)").unwrap();
        assert!(s.matches(&labels(&[("env", "notin")])));
        assert_eq!(
            Selector::parse("x in (a,,b)").unwrap().0[0],
            Requirement::In("x".into(), vec!["".into(), "a".into(), "b".into()])
        );
        // Kubernetes' list parser consumes a doubled comma and then wants an identifier.
        assert!(Selector::parse("x in (,a,,)").is_err());
        assert_eq!(
            Selector::parse("x in ()").unwrap().0[0],
            Requirement::In("x".into(), vec!["".into()])
        );
        assert_eq!(
            Selector::parse("x=").unwrap().0[0],
            Requirement::Equals("x".into(), "".into())
        );
    }

    #[test]
    fn errors_are_worded_as_kubernetes_words_them() {
        assert_eq!(
            error("name in ("),
            "unable to parse requirement: found '', expected: ',', ')' or identifier"
        );
        assert_eq!(error("a=b,"), "found '', expected: identifier after ','");
        assert_eq!(
            error("a=b c"),
            "found 'c', expected: ',' or 'end of string'"
        );
        assert_eq!(
            error(",a"),
            "found ',', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            error("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            error("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            error("a in (b c)"),
            "unable to parse requirement: found 'c', expected: ',' or ')'"
        );
        assert_eq!(
            error("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert!(error("a/b/c=d").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of"
        ));
        assert!(error("a=-b").starts_with(
            "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string"
        ));
    }

    #[test]
    fn finds_a_required_label() {
        let s = Selector::parse("tier in (web),app=shop").unwrap();
        assert_eq!(s.required_label(), Some(("tier", "web")));
        assert_eq!(Selector::parse("!a").unwrap().required_label(), None);
    }

    #[test]
    fn the_empty_selector_matches_everything() {
        let s = Selector::parse("  ").unwrap();
        assert!(s.0.is_empty());
        assert!(s.matches(&labels(&[("x", "y")])));
    }

    #[test]
    fn multibyte_text_never_panics() {
        for text in ["é=ü", "a=é", "(é", "é in (ü", "!é", "a>é", "=é"] {
            let _ = Selector::parse(text);
        }
        assert_eq!(
            Selector::parse("a\u{0}=b").unwrap().0,
            [Requirement::Exists("a".into())],
            "a NUL ends the input, as in Kubernetes' lexer"
        );
    }
}
