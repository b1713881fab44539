//! What the JSON schema of the API types says beyond their shape: the grammars and rules the
//! API server checks, shared by the attributes on the types, and the one rewrite the schema
//! needs to be a CRD's.

use schemars::Schema;

/// Kubernetes' quantity grammar (the one controller-gen writes for `resource.Quantity`),
/// narrowed by sign: a mantissa (`12`, `1.5`, `.5`), then a binary, decimal or exponent
/// suffix. A pattern, not a CEL rule: a regular expression in CEL is priced by the string's
/// possible length, and the API server refuses the schema's total.
macro_rules! quantity_pattern {
    ($mantissa:literal) => {
        concat!($mantissa, r"(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$")
    };
}

/// A quantity of zero or more.
const NON_NEGATIVE_QUANTITY: &str = quantity_pattern!(r"^[+]?(([0-9]+([.][0-9]*)?)|([.][0-9]+))");
/// A positive quantity: some digit of the mantissa is not 0.
const POSITIVE_QUANTITY: &str =
    quantity_pattern!(r"^[+]?(([0-9]*[1-9][0-9]*([.][0-9]*)?)|([0-9]*[.][0-9]*[1-9][0-9]*))");

/// `IsValidPathSegmentName` as CEL: names that end up in an API path.
const PATH_SEGMENT_RULE: &str =
    "self != '.' && self != '..' && !self.contains('/') && !self.contains('%')";
/// What [`PATH_SEGMENT_RULE`] says when it fails.
const PATH_SEGMENT_MESSAGE: &str = "may not be '.' or '..' and may not contain '/' or '%'";

/// A name that ends up in an API path (`#[schemars(transform = path_segment)]`): at most 253
/// characters, which also keeps the rule's CEL cost within the API server's budget, and a
/// valid path segment.
pub fn path_segment(schema: &mut Schema) {
    schema.insert("maxLength".to_owned(), 253.into());
    let rule = serde_json::json!({"rule": PATH_SEGMENT_RULE, "message": PATH_SEGMENT_MESSAGE});
    match schema.get_mut("x-kubernetes-validations") {
        Some(serde_json::Value::Array(rules)) => rules.push(rule),
        _ => {
            schema.insert("x-kubernetes-validations".to_owned(), vec![rule].into());
        }
    }
}

/// A quantity greater than zero (`#[schemars(transform = positive_quantity)]`): its grammar
/// and sign as a pattern for the string form, and a minimum for the integer form.
pub fn positive_quantity(schema: &mut Schema) {
    quantity(schema, POSITIVE_QUANTITY, true);
}

/// A quantity of zero or more (`#[schemars(transform = non_negative_quantity)]`).
pub fn non_negative_quantity(schema: &mut Schema) {
    quantity(schema, NON_NEGATIVE_QUANTITY, false);
}

fn quantity(schema: &mut Schema, pattern: &str, exclusive_minimum: bool) {
    schema.insert("pattern".to_owned(), pattern.into());
    schema.insert("minimum".to_owned(), 0.into());
    schema.insert("exclusiveMinimum".to_owned(), exclusive_minimum.into());
}

/// Removes every `default` from a schema. The types' serde defaults (an empty name, zero
/// replicas) let validation report all missing fields with their paths at once; they are not
/// values for the API server to fill in and store, and a CRD's defaults must pass its own
/// validation, which these would not.
pub fn drop_defaults(schema: &mut Schema) {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.remove("default");
                map.values_mut().for_each(walk);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    if let Some(map) = schema.as_object_mut() {
        map.remove("default");
        map.values_mut().for_each(walk);
    }
}
