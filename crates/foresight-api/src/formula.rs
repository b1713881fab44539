//! The expressions of formula metrics (`type: Formula`, KEDA's `scalingModifiers.formula`),
//! read with expr-lang, the language KEDA evaluates them in, so that a formula written for
//! KEDA means the same here. Reading happens once, at validation and compilation; the core
//! evaluates the compiled program each sync (`foresight_core::formula`).
//!
//! A formula that cannot be read is described by its column and what was found there, in
//! words about the formula, not the parser's grammar rules.

use std::fmt;
use std::sync::Arc;

/// The longest formula accepted, in bytes: a formula over a handful of metrics is a line,
/// and a bound keeps the parser's work (and recursion) small on any input.
pub const MAX_FORMULA_LENGTH: usize = 1024;

/// The deepest nesting of brackets accepted. The parser recurses once per level; this bound
/// keeps it far from the stack's end whatever is written.
pub const MAX_NESTING: usize = 32;

/// The functions a formula may call: expr-lang's numeric builtins, the ones a formula over
/// metric values uses. expr-lang's others build strings and arrays (`repeat`, ranges,
/// `map`), which a formula has no use for and which could take memory without bound.
pub const FUNCTIONS: [&str; 11] = [
    "abs", "ceil", "floor", "round", "max", "min", "int", "float", "mean", "median", "sum",
];

/// A formula, read: compile once, evaluate each sync.
#[derive(Clone)]
pub struct Formula {
    text: String,
    program: Arc<expr::Program>,
}

impl Formula {
    /// The formula as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The compiled program, for the core's evaluation.
    pub fn program(&self) -> &expr::Program {
        &self.program
    }
}

impl fmt::Debug for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Formula").field(&self.text).finish()
    }
}

/// Two formulas are the same when they are written the same.
impl PartialEq for Formula {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Formula {}

/// Why a formula cannot be read, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormulaError {
    /// The column (1-based, in characters) where reading stopped; `None` when the problem
    /// is the whole formula (empty, too long).
    pub column: Option<usize>,
    /// What is wrong, in the formula's terms.
    pub message: String,
}

impl fmt::Display for FormulaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "column {c}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Reads `text`. Never panics; a formula that cannot be read gives its column and why.
pub fn parse(text: &str) -> Result<Formula, FormulaError> {
    check_shape(text)?;
    check_vocabulary(text)?;
    match expr::compile(text) {
        Ok(program) => Ok(Formula {
            text: text.to_owned(),
            program: Arc::new(program),
        }),
        Err(expr::Error::PestError(e)) => {
            let at = match e.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((start, _)) => start,
            };
            Err(unreadable_at(text, at))
        }
        // Past the grammar, expr-lang checks its number literals: say which.
        Err(_) => Err(FormulaError {
            column: None,
            message: "a number in it is out of range (integers must fit in 64 bits)".to_owned(),
        }),
    }
}

/// The checks made before the parser sees the text: not empty, not too long, not nested
/// too deep, and every bracket closed by its own kind.
fn check_shape(text: &str) -> Result<(), FormulaError> {
    if text.trim().is_empty() {
        return Err(FormulaError {
            column: None,
            message: "the formula is empty".to_owned(),
        });
    }
    if text.len() > MAX_FORMULA_LENGTH {
        return Err(FormulaError {
            column: None,
            message: format!(
                "the formula is {} bytes long; at most {MAX_FORMULA_LENGTH} are accepted",
                text.len()
            ),
        });
    }
    let mut open: Vec<char> = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (column, c) in text.chars().enumerate().map(|(i, c)| (i + 1, c)) {
        if let Some(q) = quote {
            // Brackets inside a string literal are text.
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, c) if c == q => quote = None,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '(' | '[' | '{' => {
                open.push(c);
                if open.len() > MAX_NESTING {
                    return Err(FormulaError {
                        column: Some(column),
                        message: format!("brackets are nested more than {MAX_NESTING} deep"),
                    });
                }
            }
            ')' | ']' | '}' => {
                let expected = match open.pop() {
                    Some('(') => ')',
                    Some('[') => ']',
                    Some(_) => '}',
                    None => {
                        return Err(FormulaError {
                            column: Some(column),
                            message: format!("{c:?} closes a bracket that was never opened"),
                        })
                    }
                };
                if c != expected {
                    return Err(FormulaError {
                        column: Some(column),
                        message: format!("{c:?} where {expected:?} was expected"),
                    });
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return Err(FormulaError {
            column: Some(text.chars().count() + 1),
            message: format!("the formula ends with {} bracket(s) still open", open.len()),
        });
    }
    Ok(())
}

/// A name in a formula, outside string literals.
struct Word {
    /// 1-based column of its first character.
    column: usize,
    name: String,
    /// Followed by `(`: a function call.
    call: bool,
    /// Preceded by `.`: a field of a value, not a name of its own.
    field: bool,
}

/// The names of `text` outside string literals, and the column of the first range (`..`).
fn scan(text: &str) -> (Vec<Word>, Option<usize>) {
    let chars: Vec<char> = text.chars().collect();
    let mut words = Vec::new();
    let mut range = None;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '"' | '\'' | '`' => {
                // Skip the literal, escapes included.
                i += 1;
                while let Some(&d) = chars.get(i) {
                    i += if d == '\\' { 2 } else { 1 };
                    if d == c {
                        break;
                    }
                }
            }
            '.' if chars.get(i + 1) == Some(&'.') => {
                range = range.or(Some(i + 1));
                i += 2;
            }
            c if c.is_alphabetic() || c == '_' || c == '$' || c == '#' => {
                let start = i;
                i += 1;
                while chars
                    .get(i)
                    .is_some_and(|d| d.is_alphanumeric() || *d == '_')
                {
                    i += 1;
                }
                let mut next = i;
                while chars.get(next).is_some_and(|d| d.is_whitespace()) {
                    next += 1;
                }
                words.push(Word {
                    column: start + 1,
                    name: chars.get(start..i).unwrap_or_default().iter().collect(),
                    call: chars.get(next) == Some(&'('),
                    field: start > 0 && chars.get(start - 1) == Some(&'.'),
                });
            }
            // A number, with its exponent (`1e3`), is not a name.
            c if c.is_ascii_digit() => {
                while chars
                    .get(i)
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_')
                {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    (words, range)
}

/// Outside string literals: no range (`..`), and no call of a function other than
/// [`FUNCTIONS`].
fn check_vocabulary(text: &str) -> Result<(), FormulaError> {
    let (words, range) = scan(text);
    if let Some(w) = words
        .iter()
        .find(|w| w.call && !w.field && !FUNCTIONS.contains(&w.name.as_str()))
    {
        return Err(FormulaError {
            column: Some(w.column),
            message: format!(
                "{}() is not a function a formula may call; it may call {}",
                w.name,
                FUNCTIONS.join(", ")
            ),
        });
    }
    match range {
        Some(column) => Err(FormulaError {
            column: Some(column),
            message:
                "ranges (\"..\") are not accepted: a formula computes a number from its inputs"
                    .to_owned(),
        }),
        None => Ok(()),
    }
}

/// expr-lang's words that are not names of values.
const KEYWORDS: [&str; 14] = [
    "true",
    "false",
    "nil",
    "not",
    "and",
    "or",
    "in",
    "matches",
    "contains",
    "startsWith",
    "endsWith",
    "let",
    "if",
    "else",
];

/// What the parser stopped at, byte offset `at`, told as the column and the text there.
fn unreadable_at(text: &str, at: usize) -> FormulaError {
    let at = at.min(text.len());
    let column = text
        .char_indices()
        .take_while(|(i, _)| *i < at)
        .count()
        .saturating_add(1);
    let rest = text.get(at..).unwrap_or_default().trim_start();
    let before = text.get(..at).unwrap_or_default().trim_end();
    let after_operator = before
        .chars()
        .last()
        .filter(|c| "+-*/%<>=&|?:!,(".contains(*c));
    let found = |rest: &str| -> String {
        rest.chars()
            .take_while(|c| !c.is_whitespace())
            .take(12)
            .collect()
    };
    let message = match (after_operator, rest.chars().next()) {
        (Some(op), None) => format!(
            "the formula ends after \"{op}\", where an operand (a number, an input's name, a function call or \"(\") was expected"
        ),
        (Some(op), Some(_)) => format!(
            "cannot read {:?} here: an operand (a number, an input's name, a function call or \"(\") must follow \"{op}\"",
            found(rest)
        ),
        (None, _) => match rest.chars().next() {
        None => "the formula ends where an operand (a number, an input's name, a function call or \"(\") or an operator was expected".to_owned(),
        Some(_) => format!(
            "cannot read {:?} here: expected an operand (a number, an input's name, a function call or \"(\") or an operator (+ - * / % ** == != < <= > >= && || ?: ??)",
            found(rest)
        ),
        },
    };
    FormulaError {
        column: Some(column),
        message,
    }
}

/// The first name `formula` reads that is not one of `inputs` (nor a function it calls, a
/// field, or one of expr-lang's keywords): the check KEDA makes when it compiles the formula
/// against its triggers' names, made on the text so that a name in a branch not taken counts.
pub fn unknown_name(formula: &Formula, inputs: &[&str]) -> Option<String> {
    let (words, _) = scan(formula.text());
    words
        .into_iter()
        .find(|w| {
            !w.call
                && !w.field
                && !KEYWORDS.contains(&w.name.as_str())
                && !inputs.contains(&w.name.as_str())
        })
        .map(|w| w.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_keda_users_write() {
        for f in [
            "(trig_one + trig_two) / 2",
            "trig_one > 2 ? trig_one : trig_two * 0.5",
            "max(a, b) + min(a, b) - abs(a - b)",
            "ceil(a / 3) + floor(b) + round(a) + int(b) + float(a)",
            "a ?? 0",
            "a ** 2 % 7",
            "!(a == b) && a != 0 || b >= 1",
        ] {
            assert!(parse(f).is_ok(), "{f}: {:?}", parse(f).err());
        }
    }

    #[test]
    fn an_unreadable_formula_names_the_column_and_what_is_there() {
        let e = parse("(a + ) / 2").unwrap_err();
        assert_eq!(e.column, Some(6), "{e}");
        assert_eq!(
            e.to_string(),
            "column 6: cannot read \")\" here: an operand (a number, an input's name, a function call or \"(\") must follow \"+\""
        );
        let e = parse("a +").unwrap_err();
        assert_eq!(e.column, Some(4), "{e}");
        assert!(e.message.contains("ends after \"+\""), "{e}");
        let e = parse("a b").unwrap_err();
        assert_eq!(e.column, Some(3), "{e}");
        assert!(
            e.message
                .contains("cannot read \"b\" here: expected an operand"),
            "{e}"
        );
        let e = parse("(a + b").unwrap_err();
        assert_eq!(e.column, Some(7), "{e}");
        assert!(e.message.contains("still open"), "{e}");
        let e = parse("a + b)").unwrap_err();
        assert_eq!(e.column, Some(6), "{e}");
        let e = parse("(a]").unwrap_err();
        assert_eq!(e.column, Some(3), "{e}");
        assert_eq!(parse("  ").unwrap_err().column, None);
        let deep = format!("{}a{}", "(".repeat(40), ")".repeat(40));
        assert_eq!(parse(&deep).unwrap_err().column, Some(33));
        assert!(parse(&"a+".repeat(600)).is_err());
        let e = parse("len(0..100000000000)").unwrap_err();
        assert_eq!(e.column, Some(1), "{e}");
        assert!(e.message.contains("len() is not a function"), "{e}");
        let e = parse("max(0..3)").unwrap_err();
        assert_eq!(e.column, Some(6), "{e}");
        let e = parse("a + repeat (\"x\", 9)").unwrap_err();
        assert_eq!(e.column, Some(5), "{e}");
        // Inside a string, a function's name is text.
        assert!(parse("a ?? \"repeat(x) 0..1\" == \"\" ? 1 : 2").is_ok());
    }

    #[test]
    fn names_a_name_that_is_not_an_input() {
        let f = parse("(trig_one + trig_three) / 2").unwrap();
        assert_eq!(
            unknown_name(&f, &["trig_one", "trig_two"]).as_deref(),
            Some("trig_three")
        );
        assert_eq!(unknown_name(&f, &["trig_one", "trig_three"]), None);
        // A name in the branch not taken counts too.
        let f = parse("a > 0 ? a : cron_trig ?? nil").unwrap();
        assert_eq!(unknown_name(&f, &["a"]).as_deref(), Some("cron_trig"));
        let f = parse("max(a, 1e3) + \"b\" == \"c\" ? 1 : 0").unwrap();
        assert_eq!(unknown_name(&f, &["a"]), None);
    }
}
