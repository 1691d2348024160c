//! Under the name `kubectl-nbv`, usage and errors say `kubectl nbv`; everything else is
//! `nbv`'s.

use std::path::Path;

use nbv_operator::cli::{bin_name, try_parse_from};

use crate::{NBV, plugin_dir, run, stderr, stdout};

#[test]
fn help_names_the_plugin_and_its_subcommands_usage_too() {
    let (dir, plugin) = plugin_dir("help");
    let help = run(&plugin, &["--help"], dir.path());
    assert!(help.status.success(), "{}", stderr(&help));
    let text = stdout(&help);
    assert!(
        text.contains("Usage: kubectl nbv <COMMAND>"),
        "kubectl-nbv --help:\n{text}"
    );
    assert!(!text.contains("kubectl-nbv"), "kubectl-nbv --help:\n{text}");

    let wait = run(&plugin, &["wait", "--help"], dir.path());
    assert!(
        stdout(&wait).contains("Usage: kubectl nbv wait [OPTIONS] --wave <WAVE>"),
        "kubectl-nbv wait --help:\n{}",
        stdout(&wait)
    );

    // Under its own name, nothing changes.
    let own = run(Path::new(NBV), &["--help"], dir.path());
    assert!(
        stdout(&own).contains("Usage: nbv <COMMAND>"),
        "{}",
        stdout(&own)
    );
}

#[test]
fn errors_name_the_plugin_and_keep_the_exit_code() {
    let (dir, plugin) = plugin_dir("errors");
    // A missing --wave: clap's error with the usage line.
    let as_plugin = run(&plugin, &["wait"], dir.path());
    let as_nbv = run(Path::new(NBV), &["wait"], dir.path());
    assert_eq!(as_plugin.status.code(), Some(2));
    assert_eq!(as_plugin.status.code(), as_nbv.status.code());
    let message = stderr(&as_plugin);
    assert!(
        message.contains("Usage: kubectl nbv wait --wave <WAVE>"),
        "{message}"
    );
    assert_eq!(message.replace("kubectl nbv", "nbv"), stderr(&as_nbv));
}

#[test]
fn subcommands_print_what_nbv_prints() {
    let (dir, plugin) = plugin_dir("same");
    for args in [
        &["crd"][..],
        &["health", "test", "config/argocd/tests"],
        &["--version"],
    ] {
        let as_plugin = run(&plugin, args, dir.path());
        let as_nbv = run(Path::new(NBV), args, dir.path());
        assert!(as_nbv.status.success(), "nbv {args:?}: {}", stderr(&as_nbv));
        assert!(!stdout(&as_nbv).is_empty(), "nbv {args:?} printed nothing");
        assert_eq!(as_plugin.status.code(), as_nbv.status.code(), "{args:?}");
        assert_eq!(stdout(&as_plugin), stdout(&as_nbv), "{args:?}");
        assert_eq!(stderr(&as_plugin), stderr(&as_nbv), "{args:?}");
    }
}

#[test]
fn only_the_plugin_file_name_makes_the_plugin_name() {
    for (argv0, expected) in [
        ("kubectl-nbv", "kubectl nbv"),
        ("/home/me/.krew/bin/kubectl-nbv", "kubectl nbv"),
        ("kubectl-nbv.exe", "kubectl nbv"),
        ("/nbv", "nbv"),
        ("/usr/local/bin/nbv", "nbv"),
        ("kubectl-nbv-foo", "nbv"),
        ("/opt/kubectl-nbv/nbv", "nbv"),
        ("", "nbv"),
    ] {
        assert_eq!(
            bin_name(Some(std::ffi::OsStr::new(argv0))),
            expected,
            "{argv0}"
        );
    }

    let help = try_parse_from(["/usr/bin/kubectl-nbv", "wait", "--help"])
        .expect_err("--help is clap's error")
        .to_string();
    assert!(help.contains("Usage: kubectl nbv wait"), "{help}");
}
