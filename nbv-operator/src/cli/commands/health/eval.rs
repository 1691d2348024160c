//! `nbv health eval`: what Argo CD would record as the health of each object of a
//! stream.
//!
//! Every object gets one line of JSON on standard output, in the order of the stream:
//!
//! - `{"status":"Healthy","message":"..."}`: the health the check returns (a status
//!   that is not one of Argo CD's six codes already reads `Unknown`, `Lua returned an
//!   invalid health status`, as in Argo CD);
//! - `{"status":"","message":""}`: Argo CD's *empty* health (the script returned `nil`,
//!   an empty table, or a non-string status or message): the value Argo CD holds then,
//!   shown as no health in its UI;
//! - `{"error":"...","script":"...","document":N,"object":"Kind ns/name"}`: the check
//!   failed on that object (a Lua error, a stopped script, a result Argo CD cannot
//!   read), or the document is not valid YAML/JSON (no `script` then; the stream ends
//!   there). Argo CD shows such an object as `Unknown` with the error as message.
//!
//! Whatever the errors, every object is evaluated; the exit code is 1 when any line is
//! an error. What the script `print`s goes to standard error, prefixed with its
//! document.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use nbv_core::health::{HealthScript, HealthStatus, NumberFormat, Semantics, Variant, assess_with};
use nbv_lua::{EvalOptions, LuaHealthRunner, Sandbox};
use serde::Serialize;
use serde_json::Value;

use super::customizations::{ArgoCdCm, Customizations, object_key};
use super::suite::SCRIPT_FILE;
use super::{EvalCli, health_json, input, stream};

/// Where the objects come from.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use nbv_operator::cli::commands::health::eval::ObjectSource;
///
/// assert_eq!(ObjectSource::from_arg(PathBuf::from("-")), ObjectSource::Stdin);
/// assert_eq!(
///     ObjectSource::from_arg(PathBuf::from("jobs.yaml")),
///     ObjectSource::File(PathBuf::from("jobs.yaml"))
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectSource {
    /// Standard input (`--object -`).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl ObjectSource {
    /// The source named by a command-line argument: `-` is standard input.
    pub fn from_arg(path: PathBuf) -> Self {
        if path.as_os_str() == "-" {
            ObjectSource::Stdin
        } else {
            ObjectSource::File(path)
        }
    }
}

/// The Lua script to run.
///
/// # Examples
///
/// ```
/// use nbv_core::health::Variant;
/// use nbv_operator::cli::commands::health::eval::ScriptSource;
///
/// assert_ne!(ScriptSource::Shipped(Variant::Basic), ScriptSource::File("health.lua".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptSource {
    /// One of nbv's NotebookValidationJob checks.
    Shipped(Variant),
    /// A script file, reported under its path.
    File(PathBuf),
}

/// How the health is computed. The native mapping exists for nbv's own checks only, so
/// a native evaluation of a script file cannot be expressed.
///
/// # Examples
///
/// ```
/// use nbv_core::health::Variant;
/// use nbv_operator::cli::commands::health::eval::{Check, ScriptSource};
///
/// let lua = Check::Lua(ScriptSource::Shipped(Variant::Basic));
/// assert_ne!(lua, Check::Native(Variant::Basic));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Run a Lua script in the embedded VM.
    Lua(ScriptSource),
    /// Compute nbv's check with nbv-core's native mapping
    /// ([`nbv_core::health::assess_with`]), printing numbers as Argo CD's
    /// gopher-lua does, with the standard libraries open or not as the sandbox says.
    Native(Variant),
    /// Run on each object the check Argo CD would pick for its group and kind: from an
    /// `argocd-cm` ConfigMap (exact key, then wildcard keys; with the libraries its
    /// `useOpenLibs` key asks for), then from a tree laid out like Argo CD's
    /// `resource_customizations/` (exact directory, then wildcard ones; libraries open,
    /// as for Argo CD's built-in checks).
    Resolved {
        /// The `argocd-cm` ConfigMap.
        argocd_cm: Option<PathBuf>,
        /// The tree of checks.
        customizations: Option<PathBuf>,
        /// The sandbox for every check, when given on the command line; otherwise
        /// each check's own.
        forced: Option<Sandbox>,
    },
}

/// What `nbv health eval` does.
///
/// # Examples
///
/// ```
/// use nbv_core::health::Variant;
/// use nbv_lua::{EvalOptions, Sandbox};
/// use nbv_operator::cli::commands::health::eval::{Check, EvalArgs, ObjectSource, ScriptSource};
///
/// let args = EvalArgs {
///     objects: ObjectSource::Stdin,
///     check: Check::Lua(ScriptSource::Shipped(Variant::Advanced)),
///     options: EvalOptions::default(),
/// };
/// assert_eq!(args.options.sandbox, Sandbox::Production);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalArgs {
    /// The objects.
    pub objects: ObjectSource,
    /// The check.
    pub check: Check,
    /// The sandbox and limits of the Lua VM (for [`Check::Native`], only whether the
    /// standard libraries are open).
    pub options: EvalOptions,
}

/// A combination of `nbv health eval` flags that means nothing.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::eval::{EvalArgs, EvalUsageError};
/// use nbv_operator::cli::commands::health::{EvalCli, SandboxFlags};
///
/// let cli = EvalCli {
///     object: "jobs.yaml".into(),
///     script: Some("health.lua".into()),
///     advanced: false,
///     guide: false,
///     argocd_cm: None,
///     customizations: None,
///     native: true,
///     sandbox: SandboxFlags::default(),
///     allow_host_access: false,
/// };
/// let error = EvalArgs::try_from(cli).unwrap_err();
/// assert_eq!(error, EvalUsageError::NativeWithScript);
/// assert!(error.to_string().contains("drop --native"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EvalUsageError {
    /// `--native` with `--script`.
    #[error(
        "--native computes nbv's own NotebookValidationJob check and cannot run a script: \
         drop --native to run --script in the Lua VM"
    )]
    NativeWithScript,
    /// `--advanced` with `--script`.
    #[error(
        "--advanced selects nbv's advanced NotebookValidationJob check and --script another \
         script: give only one of them"
    )]
    AdvancedWithScript,
    /// `--guide` with `--script` or `--advanced`.
    #[error(
        "--guide selects the integration guide's NotebookValidationJob check: give it \
         without --script and --advanced"
    )]
    GuideWithAnother,
    /// `--allow-host-access` for a script that runs in the production sandbox, which
    /// has no `io` and no `os` to open.
    #[error(
        "--allow-host-access opens `io` and `os` of the test harness, and the script runs \
         in the production sandbox, which has neither: add --test-harness, or drop \
         --allow-host-access"
    )]
    HostAccessInProduction,
}

impl TryFrom<EvalCli> for EvalArgs {
    type Error = EvalUsageError;

    fn try_from(cli: EvalCli) -> Result<Self, Self::Error> {
        if cli.guide && (cli.advanced || cli.script.is_some()) {
            return Err(EvalUsageError::GuideWithAnother);
        }
        let variant = if cli.advanced {
            Variant::Advanced
        } else if cli.guide {
            Variant::Guide
        } else {
            Variant::Basic
        };
        if cli.argocd_cm.is_some() || cli.customizations.is_some() {
            let explicit = cli.sandbox.production_sandbox || cli.sandbox.test_harness;
            return Ok(EvalArgs {
                objects: ObjectSource::from_arg(cli.object),
                check: Check::Resolved {
                    argocd_cm: cli.argocd_cm,
                    customizations: cli.customizations,
                    forced: explicit.then(|| cli.sandbox.or(Sandbox::Production)),
                },
                // For the checks that run in the test harness.
                options: EvalOptions {
                    host_access: cli.allow_host_access,
                    ..EvalOptions::default()
                },
            });
        }
        let check = match (cli.script, cli.native) {
            (Some(_), true) => return Err(EvalUsageError::NativeWithScript),
            (Some(_), false) if cli.advanced => return Err(EvalUsageError::AdvancedWithScript),
            (Some(path), false) => Check::Lua(ScriptSource::File(path)),
            (None, true) => Check::Native(variant),
            (None, false) => Check::Lua(ScriptSource::Shipped(variant)),
        };
        // What Argo CD does at runtime, unless told otherwise.
        let sandbox = cli.sandbox.or(Sandbox::Production);
        if cli.allow_host_access && sandbox == Sandbox::Production {
            return Err(EvalUsageError::HostAccessInProduction);
        }
        Ok(EvalArgs {
            objects: ObjectSource::from_arg(cli.object),
            check,
            options: EvalOptions {
                sandbox,
                host_access: cli.allow_host_access,
                ..EvalOptions::default()
            },
        })
    }
}

/// Evaluates the check on every object and prints one JSON line per object to `out`
/// (see the [module](self) documentation); `stdin` is read for
/// [`ObjectSource::Stdin`].
///
/// Exit codes: 0 every object was evaluated; 1 at least one line is an error; 2 the
/// objects or the script cannot be read (nothing is printed to `out` then), or `out`
/// cannot be written.
///
/// # Examples
///
/// ```
/// use nbv_core::health::Variant;
/// use nbv_lua::EvalOptions;
/// use nbv_operator::cli::commands::health::eval::{Check, EvalArgs, ObjectSource, ScriptSource, run};
///
/// let args = EvalArgs {
///     objects: ObjectSource::Stdin,
///     check: Check::Lua(ScriptSource::Shipped(Variant::Basic)),
///     options: EvalOptions::default(),
/// };
/// let stream = "status: {phase: Failed, message: '', retryCount: 0}\n---\nstatus: {phase: Failed, retryCount: true}\n";
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// assert_eq!(run(&args, &mut stream.as_bytes(), &mut out, &mut err), 1);
/// let out = String::from_utf8(out)?;
/// let lines: Vec<&str> = out.lines().collect();
/// assert_eq!(lines[0], r#"{"status":"Degraded","message":" (retry 0/3)"}"#);
/// assert!(lines[1].starts_with(r#"{"error":"document 2: Lua script \"basic\" failed"#));
/// # Ok::<(), std::string::FromUtf8Error>(())
/// ```
pub fn run(
    args: &EvalArgs,
    stdin: &mut impl Read,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    let evaluator = match &args.check {
        Check::Lua(ScriptSource::Shipped(variant)) => Evaluator::Lua {
            runner: LuaHealthRunner::new(args.options.clone()),
            name: variant.name().to_owned(),
            source: variant.source().to_owned(),
        },
        Check::Lua(ScriptSource::File(path)) => match input::read_file(path) {
            Ok(source) => Evaluator::Lua {
                runner: LuaHealthRunner::new(args.options.clone()),
                name: path.display().to_string(),
                source,
            },
            Err(error) => {
                let _ = writeln!(err, "error: cannot load the health script: {error}");
                return 2;
            }
        },
        Check::Resolved {
            argocd_cm,
            customizations,
            forced,
        } => {
            let cm = match argocd_cm {
                None => None,
                Some(path) => match input::read_file(path)
                    .map_err(|e| e.to_string())
                    .and_then(|text| ArgoCdCm::parse(&text))
                {
                    Ok(cm) => Some(cm),
                    Err(error) => {
                        let _ = writeln!(
                            err,
                            "error: cannot use {} as argocd-cm: {error}",
                            path.display()
                        );
                        return 2;
                    }
                },
            };
            let runner = |sandbox| {
                LuaHealthRunner::new(EvalOptions {
                    sandbox,
                    ..args.options.clone()
                })
            };
            Evaluator::Resolved {
                production: runner(Sandbox::Production),
                harness: runner(Sandbox::TestHarness),
                forced: *forced,
                cm,
                tree: customizations
                    .as_ref()
                    .map(|dir| (dir.clone(), Customizations::scan(dir))),
                scripts: RefCell::new(BTreeMap::new()),
            }
        }
        Check::Native(variant) => Evaluator::Native {
            variant: *variant,
            semantics: Semantics {
                numbers: NumberFormat::GopherLua,
                open_libs: args.options.sandbox.semantics().open_libs,
            },
        },
    };
    let text = match &args.objects {
        ObjectSource::Stdin => input::read_text(stdin, "standard input"),
        ObjectSource::File(path) => input::read_file(path),
    };
    let text = match text {
        Ok(text) => text,
        Err(error) => {
            let _ = writeln!(err, "error: cannot read the objects: {error}");
            return 2;
        }
    };

    let stream = stream::parse(&text);
    let mut failed = false;
    for document in &stream.documents {
        let line = match evaluator.evaluate(&document.object) {
            Ok(evaluated) => {
                write_printed(err, document.index, &evaluated.printed);
                health_json(evaluated.health.as_ref())
            }
            Err(Failed { script, message }) => {
                failed = true;
                error_line(ErrorLine::new(
                    document.index,
                    stream::identity(&document.object),
                    script.as_deref(),
                    &message,
                ))
            }
        };
        if writeln!(out, "{line}").is_err() {
            return 2;
        }
    }
    if let Some(unparsable) = &stream.unparsable {
        failed = true;
        let line = error_line(ErrorLine {
            error: unparsable.message.clone(),
            script: None,
            document: unparsable.index,
            object: None,
        });
        if writeln!(out, "{line}").is_err() {
            return 2;
        }
    }
    u8::from(failed)
}

/// What one evaluation produced.
struct Evaluated {
    health: Option<HealthStatus>,
    printed: String,
}

enum Evaluator {
    Lua {
        runner: LuaHealthRunner,
        /// The script's name in messages: the variant's, or the file's path.
        name: String,
        source: String,
    },
    Native {
        variant: Variant,
        semantics: Semantics,
    },
    Resolved {
        production: LuaHealthRunner,
        harness: LuaHealthRunner,
        forced: Option<Sandbox>,
        cm: Option<ArgoCdCm>,
        tree: Option<(PathBuf, Customizations)>,
        /// The tree's scripts read so far, by path.
        scripts: RefCell<BTreeMap<PathBuf, String>>,
    },
}

/// Why an object got no health: the script (when one ran) and the message.
struct Failed {
    script: Option<String>,
    message: String,
}

fn run_lua(
    runner: &LuaHealthRunner,
    name: &str,
    source: &str,
    object: &Value,
) -> Result<Evaluated, Failed> {
    match runner.run(&HealthScript::new(name, source), object) {
        Ok(evaluation) => {
            let mut printed = evaluation.printed;
            if evaluation.printed_truncated {
                printed.push_str("[print output truncated]\n");
            }
            Ok(Evaluated {
                health: evaluation.health,
                printed,
            })
        }
        Err(error) => Err(Failed {
            script: Some(name.to_owned()),
            message: error.to_string(),
        }),
    }
}

/// The check Argo CD runs on `object`: its name, its source and whether it runs with
/// the libraries open. `argocd-cm` first, then the tree, as Argo CD looks them up.
fn resolve(
    cm: Option<&ArgoCdCm>,
    tree: Option<&(PathBuf, Customizations)>,
    scripts: &RefCell<BTreeMap<PathBuf, String>>,
    object: &Value,
) -> Result<(String, String, bool), Failed> {
    if let Some(check) = cm.and_then(|cm| cm.check(object)) {
        let name = format!("argocd-cm resource.customizations.health {}", check.key);
        return Ok((name, check.script.clone(), check.open_libs));
    }
    if let Some(dir) = tree.and_then(|(_, tree)| tree.script_dir(object)) {
        let path = dir.join(SCRIPT_FILE);
        let name = path.display().to_string();
        if let Some(source) = scripts.borrow().get(&path) {
            return Ok((name, source.clone(), true));
        }
        let source = input::read_file(&path).map_err(|error| Failed {
            script: Some(name.clone()),
            message: error.to_string(),
        })?;
        scripts.borrow_mut().insert(path, source.clone());
        // Argo CD runs its built-in checks with the libraries open.
        return Ok((name, source, true));
    }
    let key = object_key(object).unwrap_or_else(|| "(no kind)".to_owned());
    let mut searched = Vec::new();
    if cm.is_some() {
        searched.push("in argocd-cm".to_owned());
    }
    if let Some((dir, _)) = tree {
        searched.push(format!("under {}", dir.display()));
    }
    Err(Failed {
        script: None,
        message: format!(
            "no health check for {key} {}: Argo CD would record no health for it",
            searched.join(" or ")
        ),
    })
}

impl Evaluator {
    /// The health, or why there is none (naming the script).
    fn evaluate(&self, object: &Value) -> Result<Evaluated, Failed> {
        match self {
            Evaluator::Lua {
                runner,
                name,
                source,
            } => run_lua(runner, name, source, object),
            Evaluator::Native { variant, semantics } => {
                match assess_with(object, *variant, *semantics) {
                    Ok(health) => Ok(Evaluated {
                        health,
                        printed: String::new(),
                    }),
                    Err(error) => Err(Failed {
                        script: Some(variant.name().to_owned()),
                        message: format!(
                            "health script {:?} (native mapping) failed ({} error): {error}",
                            variant.name(),
                            error.kind()
                        ),
                    }),
                }
            }
            Evaluator::Resolved {
                production,
                harness,
                forced,
                cm,
                tree,
                scripts,
            } => {
                let (name, source, open_libs) =
                    resolve(cm.as_ref(), tree.as_ref(), scripts, object)?;
                let open = forced.map_or(open_libs, |s| s == Sandbox::TestHarness);
                run_lua(
                    if open { harness } else { production },
                    &name,
                    &source,
                    object,
                )
            }
        }
    }
}

/// The JSON line of an object whose check failed. Field order is fixed: `error` first.
#[derive(Serialize)]
struct ErrorLine<'a> {
    /// What went wrong, naming the document, the object and the script.
    error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    script: Option<&'a str>,
    document: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<String>,
}

impl<'a> ErrorLine<'a> {
    fn new(document: usize, object: Option<String>, script: Option<&'a str>, error: &str) -> Self {
        let error = match &object {
            Some(object) => format!("document {document} ({object}): {error}"),
            None => format!("document {document}: {error}"),
        };
        ErrorLine {
            error,
            script,
            document,
            object,
        }
    }
}

fn error_line(line: ErrorLine<'_>) -> String {
    // Strings and integers only: serializing cannot fail.
    serde_json::to_string(&line).unwrap_or_default()
}

/// Copies what the script printed to `err`, each line prefixed with its document.
fn write_printed(err: &mut impl Write, document: usize, printed: &str) {
    for line in printed.lines() {
        let _ = writeln!(err, "document {document}: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::commands::health::SandboxFlags;

    fn cli() -> EvalCli {
        EvalCli {
            object: PathBuf::from("-"),
            script: None,
            advanced: false,
            guide: false,
            argocd_cm: None,
            customizations: None,
            native: false,
            sandbox: SandboxFlags::default(),
            allow_host_access: false,
        }
    }

    #[test]
    fn host_access_is_for_the_test_harness() {
        let open = EvalCli {
            allow_host_access: true,
            ..cli()
        };
        assert_eq!(
            EvalArgs::try_from(open.clone()),
            Err(EvalUsageError::HostAccessInProduction)
        );
        let harness = EvalArgs::try_from(EvalCli {
            sandbox: SandboxFlags {
                test_harness: true,
                ..SandboxFlags::default()
            },
            ..open.clone()
        })
        .unwrap();
        assert_eq!(harness.options.sandbox, Sandbox::TestHarness);
        assert!(harness.options.host_access);
        // With the checks Argo CD picks, it applies to those that open the libraries.
        let resolved = EvalArgs::try_from(EvalCli {
            customizations: Some(PathBuf::from("examples/health")),
            ..open
        })
        .unwrap();
        assert!(resolved.options.host_access);
        assert!(!EvalArgs::try_from(cli()).unwrap().options.host_access);
    }

    #[test]
    fn flags_map_to_one_check() {
        let args = EvalArgs::try_from(cli()).unwrap();
        assert_eq!(
            args.check,
            Check::Lua(ScriptSource::Shipped(Variant::Basic))
        );
        assert_eq!(args.objects, ObjectSource::Stdin);
        assert_eq!(args.options.sandbox, Sandbox::Production);

        let native = EvalArgs::try_from(EvalCli {
            advanced: true,
            native: true,
            sandbox: SandboxFlags {
                test_harness: true,
                ..SandboxFlags::default()
            },
            ..cli()
        })
        .unwrap();
        assert_eq!(native.check, Check::Native(Variant::Advanced));
        assert_eq!(native.options.sandbox, Sandbox::TestHarness);

        let script = PathBuf::from("h.lua");
        let with_script = EvalCli {
            script: Some(script.clone()),
            ..cli()
        };
        assert_eq!(
            EvalArgs::try_from(with_script.clone()).unwrap().check,
            Check::Lua(ScriptSource::File(script))
        );
        assert_eq!(
            EvalArgs::try_from(EvalCli {
                advanced: true,
                ..with_script
            }),
            Err(EvalUsageError::AdvancedWithScript)
        );
        let guide = EvalCli {
            guide: true,
            ..cli()
        };
        assert_eq!(
            EvalArgs::try_from(guide.clone()).unwrap().check,
            Check::Lua(ScriptSource::Shipped(Variant::Guide))
        );
        assert_eq!(
            EvalArgs::try_from(EvalCli {
                advanced: true,
                ..guide
            }),
            Err(EvalUsageError::GuideWithAnother)
        );
    }

    #[test]
    fn an_error_line_names_the_document_the_object_and_the_script() {
        let line = error_line(ErrorLine::new(
            3,
            Some("NotebookValidationJob ml/train".to_owned()),
            Some("basic"),
            "boom",
        ));
        assert_eq!(
            line,
            r#"{"error":"document 3 (NotebookValidationJob ml/train): boom","script":"basic","document":3,"object":"NotebookValidationJob ml/train"}"#
        );
    }
}
