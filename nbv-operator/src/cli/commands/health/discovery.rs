//! Finding the suites under a directory, as Argo CD's `TestLuaHealthScript` walks
//! `resource_customizations/`: every directory, at any depth, that holds `health.lua`
//! (or, here, `health_test.yaml`: a suite whose script is missing is reported rather
//! than skipped).
//!
//! Directories are visited in name order, so the report is the same on every machine.
//! Symbolic links to directories are not followed (a link to a parent would loop), and
//! the search stops [`MAX_DEPTH`] levels down.

use std::path::{Path, PathBuf};

use super::SuiteError;
use super::suite::{SCRIPT_FILE, TESTS_FILE};

/// The deepest level searched below a directory given on the command line. Argo CD's
/// own tree is three levels deep (`resource_customizations/<group>/<Kind>`).
pub(crate) const MAX_DEPTH: usize = 32;

/// The suite directories under `root`, in a stable order, and the directories that
/// could not be searched.
pub(crate) fn find_suites(root: &Path) -> (Vec<PathBuf>, Vec<SuiteError>) {
    let mut suites = Vec::new();
    let mut problems = Vec::new();
    visit(root, 0, &mut suites, &mut problems);
    if suites.is_empty() && problems.is_empty() {
        problems.push(SuiteError::NoSuites {
            dir: root.to_owned(),
        });
    }
    (suites, problems)
}

fn visit(dir: &Path, depth: usize, suites: &mut Vec<PathBuf>, problems: &mut Vec<SuiteError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => {
            problems.push(SuiteError::UnreadableDir {
                dir: dir.to_owned(),
                source,
            });
            return;
        }
    };
    let mut subdirs = Vec::new();
    let mut is_suite = false;
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(source) => {
                problems.push(SuiteError::UnreadableDir {
                    dir: dir.to_owned(),
                    source,
                });
                continue;
            }
        };
        let name = entry.file_name();
        // `file_type` does not follow symbolic links: a linked directory is not entered.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            subdirs.push(entry.path());
        } else if name == SCRIPT_FILE || name == TESTS_FILE {
            is_suite = true;
        }
    }
    if is_suite {
        suites.push(dir.to_owned());
    }
    subdirs.sort();
    for subdir in subdirs {
        if depth >= MAX_DEPTH {
            problems.push(SuiteError::TooDeep {
                dir: subdir,
                max: MAX_DEPTH,
            });
            // One report per directory is enough: its siblings are as deep.
            return;
        }
        visit(&subdir, depth + 1, suites, problems);
    }
}
