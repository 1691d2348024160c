//! Checking a scenario's expectations against the end of the simulation.

use std::collections::BTreeMap;

use nbv_testkit::scenario::Expectations;

use super::report::{FinalJob, GateOutcome};

fn annotation_failures(
    what: &str,
    expected: &BTreeMap<String, Option<String>>,
    actual: &BTreeMap<String, String>,
) -> Vec<String> {
    expected
        .iter()
        .filter(|(key, want)| actual.get(*key) != want.as_ref())
        .map(|(key, want)| {
            let found = actual
                .get(key)
                .map_or("no such annotation".to_owned(), |v| format!("{v:?}"));
            match want {
                Some(want) => format!("{what}: expected {key} = {want:?}, found {found}"),
                None => format!("{what}: expected no {key}, found {found}"),
            }
        })
        .collect()
}

/// What the end of the simulation shows that the scenario did not expect.
pub(super) fn unmet(
    expect: &Expectations,
    jobs: &BTreeMap<String, FinalJob>,
    applications: &BTreeMap<String, BTreeMap<String, String>>,
    gates: &[GateOutcome],
    triggers_fired: usize,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (key, expected) in &expect.jobs {
        let name = key.to_string();
        let Some(job) = jobs.get(&name) else {
            failures.push(format!("job {name}: expected it to exist at the end"));
            continue;
        };
        if let Some(phase) = expected.phase
            && job.phase.as_deref() != Some(phase.as_str())
        {
            failures.push(format!(
                "job {name}: expected phase {phase}, found {}",
                job.phase.as_deref().unwrap_or("none")
            ));
        }
        failures.extend(annotation_failures(
            &format!("job {name}"),
            &expected.annotations,
            &job.annotations,
        ));
    }
    for (key, expected) in &expect.applications {
        let name = key.to_string();
        match applications.get(&name) {
            None => failures.push(format!(
                "Application {name}: expected it to exist at the end"
            )),
            Some(actual) => failures.extend(annotation_failures(
                &format!("Application {name}"),
                expected,
                actual,
            )),
        }
    }
    for gate in &expect.gates {
        let found = gates
            .iter()
            .find(|g| g.namespace == gate.namespace && g.wave == gate.wave);
        match found {
            Some(g) if g.status == gate.status.as_str() => {}
            Some(g) => failures.push(format!(
                "nbv wait --namespace {} --wave {}: expected {}, found {} ({})",
                gate.namespace,
                gate.wave,
                gate.status.as_str(),
                g.status,
                g.message.lines().last().unwrap_or_default()
            )),
            None => failures.push(format!(
                "nbv wait --namespace {} --wave {}: was not run",
                gate.namespace, gate.wave
            )),
        }
    }
    if let Some(expected) = expect.triggers_fired
        && expected != triggers_fired
    {
        failures.push(format!(
            "expected {expected} trigger(s) carried out, found {triggers_fired}"
        ));
    }
    failures
}
