"""Runs one notebook with papermill and reports the outcome in the termination log.

nbv runs this script as `python3 -c <script>` in the validation pod's notebook
container. Every setting comes from the environment, never from a command line, so no
value of the job is ever parsed by a shell:

  NBV_REPOSITORY  where the repository was cloned
  NBV_NOTEBOOK    path of the notebook inside the repository
  NBV_OUTPUT      where the executed notebook is written
  NBV_RESULT      where the result is written (the container's termination log)
  NBV_GOLDEN      the golden notebook to compare the executed notebook with, if any
                  (compare_notebooks.py, which comes before this part, compares)
  NBV_CHECKS      the check policy of spec.validationConfig, as JSON (see checks.py
                  before this file); unset when the job asks for no check
  NBV_MODELS      the prediction check of spec.modelValidation, as JSON (see
                  models.py before this file); unset when the job asks for none

The result is one compact JSON document of at most 4096 bytes, the most a kubelet
keeps of a termination message. nbv-core reads it (`nbv_core::pod::RunReport`), and
`RunReport::encode` is `encode` below in Rust: change both together.

Only the standard library is needed to report; papermill is needed to run.
"""

import json
import logging
import math
import os
import sys
import traceback

MAX_BYTES = 4096
MAX_ENAME = 128
MAX_EVALUE = 1024
MAX_CELL_ERROR = 160

# papermill marks the cells it inserts into a failed notebook with this tag.
PAPERMILL_ERROR_TAG = "papermill-error-cell-tag"


def clean(text, limit):
    """text with control characters but newline and tab made spaces, cut to `limit`
    UTF-8 bytes and ending in "..." when cut."""
    text = "".join(" " if ord(c) < 32 and c not in "\n\t" else c for c in str(text))
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    return data[: limit - 3].decode("utf-8", "ignore") + "..."


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def size(value):
    return len(dumps(value).encode("utf-8"))


def clean_cell(cell):
    entry = {"i": cell["i"], "s": cell["s"]}
    t = cell.get("t")
    if isinstance(t, (int, float)) and math.isfinite(t) and t >= 0:
        entry["t"] = float(t)
    if cell.get("e") is not None:
        entry["e"] = clean(cell["e"], MAX_CELL_ERROR)
    return entry


def clean_error(error):
    entry = {"kind": error["kind"]}
    if error.get("cell") is not None:
        entry["cell"] = error["cell"]
    entry["ename"] = clean(error.get("ename", ""), MAX_ENAME)
    entry["evalue"] = clean(error.get("evalue", ""), MAX_EVALUE)
    return entry


def encode(cells, error, cmp=None, findings=None, predictions=None):
    """The result document: everything when it fits in MAX_BYTES; otherwise the first
    cells that fit, the failing cell, and how many cells were dropped. `cmp`, the
    comparison with the golden notebook, is capped to its own budget first, and so are
    the check findings, under "chk" when the job asks for checks (encode_checks), and
    the models' answers, under "mdl" when the job asks for a prediction check
    (cap_predictions)."""
    cells = [clean_cell(c) for c in cells]
    error = clean_error(error) if error is not None else None
    doc = {"cells": cells}
    if error is not None:
        doc["error"] = error
    if cmp is not None:
        doc["cmp"] = cap_comparison(cmp)
    if findings is not None:
        doc["chk"] = encode_checks(findings)
    if predictions is not None:
        doc["mdl"] = cap_predictions(predictions)
    text = dumps(doc)
    if len(text.encode("utf-8")) <= MAX_BYTES:
        return text
    failing_cell = error.get("cell") if error is not None else None
    failing = next(
        (p for p, c in enumerate(cells) if failing_cell is not None and c["i"] == failing_cell),
        None,
    )
    base = dict(doc, cells=[], dropped=len(cells))
    budget = MAX_BYTES - size(base)
    used = size(cells[failing]) + 1 if failing is not None else 0
    fits, kept = True, []
    for position, cell in enumerate(cells):
        if position == failing:
            kept.append(cell)
            continue
        fits = fits and used + size(cell) + 1 <= budget
        if fits:
            used += size(cell) + 1
            kept.append(cell)
    doc = dict(doc, cells=kept, dropped=len(cells) - len(kept))
    return dumps(doc)


def duration(metadata):
    """Seconds a cell ran, from papermill's or nbclient's metadata."""
    seconds = (metadata.get("papermill") or {}).get("duration")
    if not isinstance(seconds, (int, float)):
        from datetime import datetime

        execution = metadata.get("execution") or {}
        try:
            start = datetime.fromisoformat(execution["iopub.execute_input"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(execution["shell.execute_reply"].replace("Z", "+00:00"))
            seconds = (end - start).total_seconds()
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return round(float(seconds), 2)


def is_error(output):
    # papermill does not count a clean `sys.exit()` as a failure; neither does nbv.
    return output.get("output_type") == "error" and not (
        output.get("ename") == "SystemExit" and str(output.get("evalue", "")) in ("", "0")
    )


def read_cells(notebook):
    """The code cells of an executed notebook, indexed as in the source notebook."""
    cells, index = [], 0
    for cell in notebook.get("cells") or []:
        metadata = cell.get("metadata") or {}
        if PAPERMILL_ERROR_TAG in (metadata.get("tags") or []):
            continue
        position, index = index, index + 1
        if cell.get("cell_type") != "code":
            continue
        errors = [o for o in cell.get("outputs") or [] if is_error(o)]
        papermill = metadata.get("papermill") or {}
        # papermill marks every cell "completed" when the run stops early (no kernel):
        # a cell ran when it has an execution count or papermill saw it start.
        if errors or papermill.get("status") == "failed":
            outcome = "err"
        elif cell.get("execution_count") is not None or papermill.get("start_time"):
            outcome = "ok"
        else:
            outcome = "skip"
        entry = {"i": position, "s": outcome}
        seconds = duration(metadata)
        if seconds is not None and outcome != "skip":
            entry["t"] = seconds
        if errors:
            entry["e"] = "%s: %s" % (errors[0].get("ename", ""), errors[0].get("evalue", ""))
        cells.append(entry)
    return cells


def failure(kind, ename, evalue, cell=None):
    error = {"kind": kind, "ename": ename, "evalue": str(evalue)}
    if cell is not None:
        error["cell"] = cell
    return error


def execute(source, output, checks=None, probes=None):
    """Runs the notebook; returns the error that ended the run, or None. With a check
    policy, the probing engine of checks.py fills `probes`."""
    try:
        import papermill
        from papermill.exceptions import PapermillExecutionError
    except ImportError as e:
        return failure("setup", type(e).__name__, e)
    try:
        engine = {} if checks is None else {"engine_name": checks_engine(checks, probes)}
        papermill.execute_notebook(
            source,
            output,
            cwd=os.path.dirname(source),
            log_output=True,
            progress_bar=False,
            **engine,
        )
    except PapermillExecutionError as e:
        return failure("cell", e.ename, e.evalue, cell=e.cell_index)
    except Exception as e:  # classified by name: these modules may not be importable
        name = type(e).__name__
        traceback.print_exc()
        if name == "DeadKernelError":
            return failure("kernel", name, e)
        if name in ("NoSuchKernel", "ValueError") and "kernel" in str(e).lower():
            return failure("setup", name, e)
        if name in ("NotJSONError", "JSONDecodeError", "ValidationError", "UnicodeDecodeError"):
            return failure("invalid", name, e)
        return failure("internal", name, e)
    return None


def main():
    repository = os.path.realpath(os.environ.get("NBV_REPOSITORY", "/workspace/repo"))
    notebook = os.environ.get("NBV_NOTEBOOK", "")
    output = os.environ.get("NBV_OUTPUT", "/workspace/out.ipynb")
    result = os.environ.get("NBV_RESULT", "/dev/termination-log")
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

    source = os.path.realpath(os.path.join(repository, notebook))
    cells, cmp, checks, findings, probes, predictions = [], None, None, [], {}, None
    try:
        checks = load_checks()
        if not notebook or os.path.commonpath([repository, source]) != repository:
            error = failure("missing", "FileNotFoundError", "%s is not inside the repository" % notebook)
        elif not os.path.isfile(source):
            error = failure("missing", "FileNotFoundError", "No such file: %s" % notebook)
        else:
            error = None
            if checks is not None:
                with open(source, encoding="utf-8") as f:
                    findings = missing_cells(json.load(f), checks)
            if not findings:
                error = execute(source, output, checks, probes)
        if os.path.isfile(output):
            with open(output, encoding="utf-8") as f:
                executed = json.load(f)
            cells = read_cells(executed)
            if checks is not None and not findings:
                findings = cell_findings(executed, checks, probes)
        # A notebook that did not run through (or did not run: a check refused it
        # first) has nothing to compare.
        if error is None and os.environ.get("NBV_GOLDEN") and os.path.isfile(output):
            cmp, error = run_comparison(output)
        failed = next((f for f in findings if f["s"] == "fail"), None)
        if error is None and failed is not None:
            error = failure("check", failed["r"], failed["m"], cell=failed.get("c"))
        # The models are asked only about a notebook that passed everything else.
        if error is None and os.path.isfile(output):
            predictions, error = check_models()
    except Exception as e:
        traceback.print_exc()
        error = failure("internal", type(e).__name__, e)

    text = encode(cells, error, cmp, None if checks is None else findings, predictions)
    print("nbv result: " + text, flush=True)
    try:
        with open(result, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print("nbv: cannot write the result to %s: %s" % (result, e), file=sys.stderr)
    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())
