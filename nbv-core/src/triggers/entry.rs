//! Validation of one list entry: every field is checked even after a first
//! problem, so the user sees all of an entry's problems at once.

use super::NamespaceDefaults;
use super::action::Action;
use super::api_version::ApiVersion;
use super::error::{Field, FieldProblem, TriggerError, TriggerWarning};
use super::names::{Kind, Namespace, ObjectName};
use super::target::{APPLICATION_KIND, ARGOCD_GROUP};
use super::target::{TargetRef, Trigger};
use super::text::closest;
use super::yaml::Node;

/// What checking one entry produced: the trigger when the entry is valid,
/// plus its errors and warnings in reporting order.
pub(crate) struct Checked {
    pub(crate) trigger: Option<Trigger>,
    pub(crate) errors: Vec<TriggerError>,
    pub(crate) warnings: Vec<TriggerWarning>,
}

/// The values of the known fields of an entry, looked up by [`Field`].
#[derive(Default)]
struct Fields<'a>([Option<&'a Node>; Field::ALL.len()]);

impl<'a> Fields<'a> {
    fn slot(field: Field) -> usize {
        match field {
            Field::ApiVersion => 0,
            Field::Kind => 1,
            Field::Name => 2,
            Field::Namespace => 3,
            Field::Action => 4,
        }
    }

    fn get(&self, field: Field) -> Option<&'a Node> {
        self.0[Self::slot(field)]
    }

    fn set(&mut self, field: Field, value: &'a Node) {
        // The parser rejects duplicate keys, so each slot is set at most once.
        self.0[Self::slot(field)].get_or_insert(value);
    }
}

/// The field an unknown key most plausibly misspells.
fn misspelled_field(key: &str) -> Option<Field> {
    closest(key, &Field::ALL.map(Field::as_str)).and_then(Field::from_key)
}

/// Checks entry `index` of the list; `defaults` gives the namespace of an entry without
/// one.
pub(crate) fn check(index: usize, node: &Node, defaults: &NamespaceDefaults<'_>) -> Checked {
    let Node::Mapping(pairs) = node else {
        return Checked {
            trigger: None,
            errors: vec![TriggerError::NotAMapping {
                index,
                found: node.kind(),
            }],
            warnings: Vec::new(),
        };
    };

    let mut fields = Fields::default();
    let mut unknown: Vec<&str> = Vec::new();
    let mut bad_keys = Vec::new();
    for (key, value) in pairs {
        match key {
            Node::String(key) => match Field::from_key(key) {
                Some(field) => fields.set(field, value),
                None => unknown.push(key),
            },
            other => bad_keys.push(other.kind()),
        }
    }

    // A required field's value as a string; a missing field mentions an
    // unknown key that looks like it (`Name`, `apiversion`).
    let text = |field: Field| -> Result<&str, FieldProblem> {
        match fields.get(field) {
            Some(Node::String(s)) => Ok(s),
            Some(other) => Err(FieldProblem::NotAString {
                found: other.kind(),
            }),
            None => Err(FieldProblem::Missing {
                similar: unknown
                    .iter()
                    .find(|key| misspelled_field(key) == Some(field))
                    .map(|key| (*key).to_owned()),
            }),
        }
    };

    let api_version = text(Field::ApiVersion)
        .and_then(|s| s.parse::<ApiVersion>().map_err(FieldProblem::ApiVersion));
    let kind = text(Field::Kind).and_then(|s| s.parse::<Kind>().map_err(FieldProblem::Kind));
    let name = text(Field::Name).and_then(|s| s.parse::<ObjectName>().map_err(FieldProblem::Name));
    // As in the Argo CD API, an Application named without a namespace is in Argo CD's
    // control-plane namespace; anything else is in the job's.
    let is_application = matches!((&api_version, &kind),
        (Ok(api_version), Ok(kind)) if api_version.group() == ARGOCD_GROUP && kind.as_str() == APPLICATION_KIND);
    let default_namespace = if is_application {
        defaults.argocd_namespace
    } else {
        defaults.job_namespace
    };
    let namespace = match fields.get(Field::Namespace) {
        None => default_namespace
            .parse::<Namespace>()
            .map_err(FieldProblem::NoDefaultNamespace),
        Some(_) => {
            text(Field::Namespace).and_then(|s| s.parse::<Namespace>().map_err(FieldProblem::Name))
        }
    };
    let action =
        text(Field::Action).and_then(|s| s.parse::<Action>().map_err(FieldProblem::Action));

    let target_label = match (&kind, &name) {
        (Ok(kind), Ok(name)) => Some(format!("{kind}/{name}")),
        _ => None,
    };

    let mut errors: Vec<TriggerError> = bad_keys
        .into_iter()
        .map(|key| TriggerError::NonStringKey {
            index,
            target: target_label.clone(),
            key,
        })
        .collect();
    let mut field_error = |field: Field, problem: FieldProblem| {
        errors.push(TriggerError::Field {
            index,
            target: target_label.clone(),
            field,
            problem,
        });
    };

    let trigger = match (api_version, kind, name, namespace, action) {
        (Ok(api_version), Ok(kind), Ok(name), Ok(namespace), Ok(action)) => {
            let target = TargetRef::new(api_version, kind, name, namespace);
            match Trigger::new(target, action) {
                Ok(trigger) => Some(trigger),
                Err(not_supported) => {
                    field_error(Field::Action, FieldProblem::NotSupported(not_supported));
                    None
                }
            }
        }
        (api_version, kind, name, namespace, action) => {
            let results = [
                (Field::ApiVersion, api_version.err()),
                (Field::Kind, kind.err()),
                (Field::Name, name.err()),
                (Field::Namespace, namespace.err()),
                (Field::Action, action.err()),
            ];
            for (field, problem) in results {
                if let Some(problem) = problem {
                    field_error(field, problem);
                }
            }
            None
        }
    };

    let warnings = unknown
        .into_iter()
        .map(|key| TriggerWarning::UnknownField {
            index,
            target: target_label.clone(),
            field: key.to_owned(),
            suggestion: misspelled_field(key),
        })
        .collect();

    Checked {
        trigger,
        errors,
        warnings,
    }
}
