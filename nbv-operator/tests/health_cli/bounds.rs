//! Hostile YAML through the commands that read it: an alias bomb, one large anchor
//! repeated many times, and deep nesting are refused before anything is expanded, with
//! the bound named, and the rest of the input is still read.

use super::*;

/// Nine levels of nine aliases: 9^9 scalars once expanded.
fn billion_laughs() -> String {
    let mut bomb = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..=9 {
        let aliases = vec![format!("*l{}", level - 1); 9].join(", ");
        bomb += &format!("l{level}: &l{level} [{aliases}]\n");
    }
    bomb
}

/// An object whose `data` repeats one 1 MiB anchor 10,000 times: 10 GiB expanded.
fn large_anchor() -> String {
    format!(
        "kind: ConfigMap\nmetadata: {{name: big}}\nanchor: &big {}\ndata:\n{}",
        "x".repeat(1 << 20),
        "  - *big\n".repeat(10_000)
    )
}

fn deep() -> String {
    format!("status: {}{}\n", "[".repeat(10_000), "]".repeat(10_000))
}

#[test]
fn eval_refuses_hostile_documents_and_evaluates_the_ones_before() {
    for (hostile, bound) in [
        (billion_laughs(), "document contains excessive aliasing"),
        (large_anchor(), "document contains excessive aliasing"),
        (deep(), "nested more than 128 levels deep"),
    ] {
        let stream = format!("status: {{phase: Succeeded}}\n---\n{hostile}");
        let (code, out, _) = nbv(&["health", "eval", "--object", "-"], &stream);
        assert_eq!(code, 1);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines[0].starts_with(r#"{"status":"Healthy""#), "{out}");
        let error: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["document"], 2);
        let message = error["error"].as_str().unwrap();
        assert!(
            message.starts_with("document 2 is not valid YAML: "),
            "{message}"
        );
        assert!(message.contains(bound), "{message}");
    }
}

#[test]
fn eval_refuses_a_hostile_argocd_cm() {
    let tmp = TempDir::new("hostile-argocd-cm");
    let cm = tmp.write("argocd-cm.yaml", &billion_laughs());
    let object = tmp.write("job.yaml", "kind: Job\n");
    let (code, out, err) = nbv(
        &[
            "health",
            "eval",
            "--object",
            object.to_str().unwrap(),
            "--argocd-cm",
            cm.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("document contains excessive aliasing"),
        "{err}"
    );
}

#[test]
fn test_refuses_hostile_inputs_and_test_lists_and_runs_the_rest() {
    let tmp = TempDir::new("hostile-suite");
    tmp.write(
        "suite/health.lua",
        "return {status = obj.want or 'Healthy'}\n",
    );
    tmp.write(
        "suite/health_test.yaml",
        "tests:\n\
         - inputPath: ok.yaml\n  healthStatus: {status: Healthy}\n\
         - inputPath: laughs.yaml\n  healthStatus: {status: Healthy}\n\
         - inputPath: large.yaml\n  healthStatus: {status: Healthy}\n\
         - inputPath: deep.yaml\n  healthStatus: {status: Healthy}\n",
    );
    tmp.write("suite/ok.yaml", "want: Healthy\n");
    tmp.write("suite/laughs.yaml", &billion_laughs());
    tmp.write("suite/large.yaml", &large_anchor());
    tmp.write("suite/deep.yaml", &deep());
    // A test list that is itself a bomb.
    tmp.write("bomb/health.lua", "return nil\n");
    tmp.write(
        "bomb/health_test.yaml",
        &format!("{}tests: []\n", billion_laughs()),
    );

    let dir = tmp.0.to_str().unwrap();
    let (code, out, _) = nbv(&["health", "test", dir], "");
    assert_eq!(code, 1);
    assert_eq!(out.lines().last(), Some("1 passed, 4 failed"), "{out}");
    assert_eq!(
        out.matches("document contains excessive aliasing").count(),
        3,
        "{out}"
    );
    assert_eq!(
        out.matches("nested more than 128 levels deep").count(),
        1,
        "{out}"
    );
}
