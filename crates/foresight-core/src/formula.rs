//! Formula metrics (`type: Formula`, KEDA's `scalingModifiers`): each input's reading, then
//! the formula over them, giving one value that the decision scales on as it does an External
//! metric's. The simulator, `explain --snapshot` and the controller all come here.
//!
//! A formula whose input could not be read, or that cannot be evaluated, fails like a metric
//! whose API failed: the decision reports it (status, events, explanation) and the other
//! metrics decide, as Kubernetes does for a failed metric. A result that is not a finite
//! number is such a failure too, never a replica count.

use foresight_api::formula::{Formula, FormulaError};
use foresight_api::hpa::MetricIdentifier;
use jiff::Timestamp;

use crate::metrics::{MetricData, ValueSample};

/// Where one input of a formula is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSource {
    /// An External metric; its values are summed.
    External {
        /// The metric.
        metric: MetricIdentifier,
    },
    /// A PromQL instant query.
    Prometheus {
        /// The query.
        query: String,
    },
}

/// One input of a formula: the name the formula reads it by, and its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormulaInput {
    /// The name in the formula.
    pub name: String,
    /// Where it is read.
    pub source: InputSource,
}

/// A formula, compiled once: the program (or why it could not be read) and its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledFormula {
    /// The program; `Err` when the formula cannot be read (only on the unchecked path:
    /// validation rejects such a spec).
    pub program: Result<Formula, FormulaError>,
    /// The inputs, in spec order; `MetricData::Inputs` holds their readings in this order.
    pub inputs: Vec<FormulaInput>,
}

impl CompiledFormula {
    /// Each input's value and the formula over them, as one sample (in thousandths), stamped
    /// with the oldest input's time; or why there is none, in words for the status.
    pub fn evaluate(&self, data: &MetricData) -> Result<ValueSample, String> {
        let program = self
            .program
            .as_ref()
            .map_err(|e| format!("the formula cannot be read: {e}"))?;
        let readings: &[MetricData] = match data {
            MetricData::Inputs(r) => r,
            MetricData::Failed(e) => return Err(e.clone()),
            _ => &[],
        };
        let mut ctx = expr::Context::default();
        let mut oldest: Option<Timestamp> = None;
        for (i, input) in self.inputs.iter().enumerate() {
            let (value, at) = input_value(&input.name, readings.get(i))?;
            ctx.insert(input.name.clone(), expr::Value::Float(value));
            oldest = Some(oldest.map_or(at, |o| o.min(at)));
        }
        let value = run(program, &ctx)?;
        Ok(ValueSample {
            value: to_milli(value)?,
            timestamp: oldest.unwrap_or(crate::time::GO_ZERO_TIME),
        })
    }
}

/// One input's value (in the metric's unit) and time, or why it has none.
fn input_value(name: &str, reading: Option<&MetricData>) -> Result<(f64, Timestamp), String> {
    let total = |values: &[ValueSample]| {
        let sum = values
            .iter()
            .fold(0i64, |acc, v| acc.saturating_add(v.value));
        let at = values.iter().map(|v| v.timestamp).min();
        (sum as f64 / 1000.0, at.unwrap_or(crate::time::GO_ZERO_TIME))
    };
    match reading {
        Some(MetricData::Values(v)) if !v.is_empty() => Ok(total(v)),
        Some(MetricData::Object(v)) => Ok(total(std::slice::from_ref(v))),
        Some(MetricData::Values(_)) => Err(format!("input {name}: no value returned")),
        Some(MetricData::Failed(e)) => Err(format!("input {name}: {e}")),
        _ => Err(format!("input {name}: not read")),
    }
}

/// Runs the program: a number, or why not.
fn run(program: &Formula, ctx: &expr::Context) -> Result<f64, String> {
    match expr::run(program.program(), ctx) {
        Ok(expr::Value::Float(f)) => Ok(f),
        Ok(expr::Value::Integer(i)) => Ok(i as f64),
        Ok(expr::Value::Bool(b)) => Err(format!(
            "the formula gives {b}, not a number (wrap a comparison in `cond ? a : b`)"
        )),
        Ok(expr::Value::Nil) => Err("the formula gives nil, not a number".to_owned()),
        Ok(other) => Err(format!("the formula gives {other}, not a number")),
        Err(e) => Err(format!("the formula cannot be evaluated: {e}")),
    }
}

/// The formula's value in thousandths; not finite or past what a quantity holds is an error.
fn to_milli(value: f64) -> Result<i64, String> {
    if !value.is_finite() {
        return Err(format!(
            "the formula gives {value}, not a finite number (a division by zero?)"
        ));
    }
    let milli = (value * 1000.0).round();
    // i64::MAX as f64 rounds up to 2^63, so the bound is exclusive.
    if milli >= i64::MAX as f64 || milli <= i64::MIN as f64 {
        return Err(format!("the formula gives {value}, out of range"));
    }
    Ok(milli as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    fn compiled(formula: &str, names: &[&str]) -> CompiledFormula {
        CompiledFormula {
            program: foresight_api::formula::parse(formula),
            inputs: names
                .iter()
                .map(|n| FormulaInput {
                    name: (*n).to_owned(),
                    source: InputSource::Prometheus {
                        query: "up".to_owned(),
                    },
                })
                .collect(),
        }
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn values(milli: &[i64]) -> MetricData {
        MetricData::Inputs(
            milli
                .iter()
                .enumerate()
                .map(|(i, &value)| {
                    MetricData::Values(vec![ValueSample {
                        value,
                        timestamp: at(i as i64),
                    }])
                })
                .collect(),
        )
    }

    fn eval(formula: &str, inputs: &[(&str, i64)]) -> Result<i64, String> {
        let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
        let milli: Vec<i64> = inputs.iter().map(|(_, v)| *v).collect();
        compiled(formula, &names)
            .evaluate(&values(&milli))
            .map(|s| s.value)
    }

    #[test]
    fn arithmetic_and_precedence() {
        let ab = [("a", 3000), ("b", 5000)];
        assert_eq!(eval("(a + b) / 2", &ab), Ok(4000));
        assert_eq!(eval("a + b * 2", &ab), Ok(13000));
        assert_eq!(eval("a - b", &ab), Ok(-2000));
        assert_eq!(eval("a ** 2", &ab), Ok(9000));
        assert_eq!(eval("int(b) % int(a)", &ab), Ok(2000));
        assert_eq!(eval("-a + 0.5", &ab), Ok(-2500));
        // `/` divides as decimals, integers too, as in KEDA.
        assert_eq!(eval("int(b) / 2", &ab), Ok(2500));
        // Inputs keep their fractions: 250m is 0.25.
        assert_eq!(eval("a * 4", &[("a", 250)]), Ok(1000));
    }

    #[test]
    fn comparisons_ternary_and_nil_coalescing() {
        let ab = [("a", 3000), ("b", 5000)];
        assert_eq!(eval("a > b ? a : b", &ab), Ok(5000));
        assert_eq!(eval("a <= 3 && b != 4 ? 1 : 0", &ab), Ok(1000));
        assert_eq!(eval("a == 3 || b < 0 ? 7 : 0", &ab), Ok(7000));
        assert_eq!(eval("!(a >= b) ? 2 : 9", &ab), Ok(2000));
        assert_eq!(eval("a ?? b", &ab), Ok(3000));
        assert_eq!(eval("nil ?? b", &ab), Ok(5000));
    }

    #[test]
    fn functions_keda_users_call() {
        let ab = [("a", 2400), ("b", -1600)];
        assert_eq!(eval("abs(b)", &ab), Ok(1600));
        assert_eq!(eval("ceil(a)", &ab), Ok(3000));
        assert_eq!(eval("floor(a)", &ab), Ok(2000));
        assert_eq!(eval("round(a)", &ab), Ok(2000));
        assert_eq!(eval("max(a, b)", &ab), Ok(2400));
        assert_eq!(eval("min(a, b)", &ab), Ok(-1600));
        assert_eq!(eval("int(a)", &ab), Ok(2000));
        assert_eq!(eval("float(2) / 4", &ab), Ok(500));
    }

    #[test]
    fn a_result_that_is_not_a_finite_number_is_an_error() {
        let zero = [("a", 3000), ("b", 0)];
        let e = eval("a / b", &zero).unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
        assert!(eval("int(a) % int(b)", &zero).is_err());
        assert!(eval("b / b", &zero).is_err(), "NaN");
        let e = eval("a > 1", &zero).unwrap_err();
        assert!(e.contains("gives true, not a number"), "{e}");
        assert!(eval("\"text\"", &zero).is_err());
        assert!(eval("nil", &zero).is_err());
        assert!(eval("a * 1e300", &zero)
            .unwrap_err()
            .contains("out of range"));
    }

    #[test]
    fn an_input_that_failed_or_is_missing_fails_the_formula_and_names_it() {
        let f = compiled("(one + two) / 2", &["one", "two"]);
        let failed = MetricData::Inputs(vec![
            MetricData::Values(vec![ValueSample {
                value: 1000,
                timestamp: at(0),
            }]),
            MetricData::Failed("connection refused".to_owned()),
        ]);
        assert_eq!(
            f.evaluate(&failed),
            Err("input two: connection refused".to_owned())
        );
        let empty = MetricData::Inputs(vec![
            MetricData::Values(Vec::new()),
            MetricData::Values(Vec::new()),
        ]);
        assert_eq!(
            f.evaluate(&empty),
            Err("input one: no value returned".to_owned())
        );
        let short = MetricData::Inputs(vec![MetricData::Values(vec![ValueSample {
            value: 1000,
            timestamp: at(0),
        }])]);
        assert_eq!(f.evaluate(&short), Err("input two: not read".to_owned()));
        assert_eq!(
            f.evaluate(&MetricData::None),
            Err("input one: not read".to_owned())
        );
    }

    #[test]
    fn the_sample_is_as_old_as_its_oldest_input() {
        let f = compiled("a + b", &["a", "b"]);
        let sample = f.evaluate(&values(&[1000, 2000])).unwrap();
        assert_eq!(sample.value, 3000);
        assert_eq!(sample.timestamp, at(0));
    }

    #[test]
    fn an_unreadable_formula_fails_with_its_column() {
        let f = compiled("(a + ) / 2", &["a"]);
        let e = f.evaluate(&values(&[1000])).unwrap_err();
        assert!(e.starts_with("the formula cannot be read: column 6"), "{e}");
    }

    /// Formula-like text: the tokens KEDA users write, in any order and nesting.
    fn formula_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let token = prop_oneof![
            Just("a"),
            Just("b"),
            Just("nil"),
            Just("0"),
            Just("1e308"),
            Just("-"),
            Just("9223372036854775807"),
            Just("2.5"),
            Just("+"),
            Just("*"),
            Just("/"),
            Just("%"),
            Just("**"),
            Just("("),
            Just(")"),
            Just("?"),
            Just(":"),
            Just("??"),
            Just("=="),
            Just("<"),
            Just("&&"),
            Just("!"),
            Just("max("),
            Just("abs("),
            Just("ceil("),
            Just("int("),
            Just(","),
            Just("\""),
            Just("["),
            Just("]"),
            Just(" "),
            Just("."),
            Just("|"),
            Just("#"),
            Just("len("),
        ];
        proptest::collection::vec(token, 0..40).prop_map(|t| t.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Reading and evaluating any text ends in a number or an error, never a panic.
        #[test]
        fn any_text_reads_and_evaluates_without_panicking(
            text in proptest::prop_oneof![".{0,200}", formula_text()],
            a in proptest::prelude::any::<i64>(),
            b in proptest::prelude::any::<i64>(),
        ) {
            let f = compiled(&text, &["a", "b"]);
            let _ = f.evaluate(&values(&[a, b]));
        }
    }
}
