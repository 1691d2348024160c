"""Runs one notebook with papermill, inside the validation Pod's notebook container.

`nbv pod run` starts this file with the image's `python3`: it is the part of a run that
must be Python (papermill, and the probes the checks of spec.validationConfig run in
the kernel). Everything else -- where the notebook is, what the outcome means, the
golden comparison, the checks' verdicts, the prediction check, the report -- is nbv's.

    python3 runner.py SOURCE OUTPUT OUTCOME [CELLS]

runs SOURCE into OUTPUT and writes OUTCOME, one JSON document that
`nbv_core::pod::RunnerOutcome` reads:

    {"error": null | {"kind", "ename", "evalue", "cell"?},
     "probes": {"<cell index>": {"w": [...], "x": [...], "v": {...}?}},
     "asserts": [<index of each code cell whose code holds an assert statement>]}

With CELLS (a JSON list of the cell indexes whose value the checks expect) the checks'
probing engine runs; without it, papermill's own. Only the standard library is needed
to report; papermill is needed to run.
"""

import ast
import json
import logging
import os
import sys
import traceback

CHECKS_ENGINE = "nbv-checks"
# papermill marks the cells it inserts into a failed notebook with this tag.
PAPERMILL_ERROR_TAG = "papermill-error-cell-tag"


class ProbeError(Exception):
    """The probe could not run: the checks the job asks for cannot be carried out."""


# The probe, run once in the kernel as the module _nbv_probe. Standard library only;
# numpy and pandas are looked at only when the value comes from them.
PROBE_SOURCE = r'''
import json, math, numbers, reprlib, sys, warnings

_warnings = []
_exits = []


def _install():
    from IPython import get_ipython

    shell = get_ipython()
    show = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        _warnings.append([getattr(category, "__name__", str(category)), str(message)])
        return show(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
    system = shell.system

    def run_system(cmd):
        result = system(cmd)
        code = shell.user_ns.get("_exit_code")
        if code:
            _exits.append([str(cmd), code if isinstance(code, int) else str(code)])
        return result

    shell.system = run_system


class _Raw:
    """Shown as the JSON text itself, so the reply carries it unchanged."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _names(value):
    names = []
    for cls in type(value).__mro__[:12]:
        module = getattr(cls, "__module__", "") or ""
        name = getattr(cls, "__qualname__", cls.__name__)
        names.append(name if module == "builtins" else module + "." + name)
    return names


def _shape(value):
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(d, int) and d >= 0 for d in shape):
        return [int(d) for d in shape]
    if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)):
        return [len(value)]
    return None


def _real(value):
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return False
    return isinstance(value, numbers.Real)


def _nan(value):
    try:
        if _real(value):
            return math.isnan(float(value))
        package = type(value).__module__.split(".")[0]
        if package == "pandas" and hasattr(value, "select_dtypes"):
            numeric = value.select_dtypes(include="number")
            return bool(numeric.isna().to_numpy().any())
        if package in ("pandas", "numpy") and getattr(value, "dtype", None) is not None:
            if value.dtype.kind in "fc":
                return bool(value.isna().any()) if package == "pandas" else bool(
                    sys.modules["numpy"].isnan(value).any())
            return False
        if isinstance(value, (list, tuple)):
            return any(isinstance(x, float) and x != x for x in value[:100000])
    except Exception:
        return False
    return False


def _empty(value):
    if value is None:
        return True
    empty = getattr(value, "empty", None)
    if isinstance(empty, bool):
        return empty
    try:
        return len(value) == 0
    except Exception:
        return False


def _repr(value, shape):
    if shape is not None and hasattr(value, "shape"):
        return "%s %s" % (type(value).__name__, tuple(shape))
    try:
        text = reprlib.repr(value)
    except Exception:
        text = "<%s>" % type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _observe(value):
    shape = _shape(value)
    seen = {
        "types": _names(value),
        "repr": _repr(value, shape),
        "none": value is None,
        "nan": _nan(value),
        "empty": _empty(value),
        "real": _real(value),
    }
    if shape is not None:
        seen["shape"] = shape
    if seen["real"]:
        try:
            number = float(value)
            if math.isfinite(number):
                seen["num"] = number
        except (OverflowError, TypeError, ValueError):
            pass
    return seen


def observe(count, wanted):
    """What the cell that ran as In[count] left: its value (Out[count]; None when it
    has none and `wanted`), and the warnings and failed shell commands since the last
    call."""
    from IPython import get_ipython

    shell = get_ipython()
    outputs = shell.history_manager.output_hist
    seen = {"w": list(_warnings), "x": list(_exits)}
    del _warnings[:]
    del _exits[:]
    if count is not None and count in outputs:
        seen["v"] = _observe(outputs[count])
    elif wanted:
        seen["v"] = _observe(None)
    return _Raw(json.dumps(seen, ensure_ascii=True))


_install()
'''

# Run silently once, before the first cell: leaves the module in sys.modules and no
# name in the user namespace.
PROBE_SETUP = (
    "exec(compile(%r, '<nbv-probe>', 'exec'), __import__('sys').modules.setdefault("
    "'_nbv_probe', __import__('types').ModuleType('_nbv_probe')).__dict__)" % PROBE_SOURCE
)


def failure(kind, ename, evalue, cell=None):
    error = {"kind": kind, "ename": ename, "evalue": str(evalue)}
    if cell is not None:
        error["cell"] = cell
    return error


def execute(source, output, wanted=None, probes=None):
    """Runs the notebook; returns the error that ended the run, or None. With `wanted`,
    the probing engine fills `probes`."""
    try:
        import papermill
        from papermill.exceptions import PapermillExecutionError
    except ImportError as e:
        return failure("setup", type(e).__name__, e)
    try:
        engine = {} if wanted is None else {"engine_name": checks_engine(wanted, probes)}
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


def source_text(cell):
    source = cell.get("source") or ""
    return "".join(source) if isinstance(source, list) else source


def has_assert(source):
    """Whether the cell's code holds an assert statement (IPython magics and shell
    lines left out)."""
    if source.lstrip().startswith("%%"):
        return False
    lines = [("pass" if line.lstrip().startswith(("%", "!")) else line) for line in source.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def asserting_cells(notebook):
    """Indexes (as in the source notebook) of the code cells holding an assert."""
    cells = [c for c in notebook.get("cells") or [] if PAPERMILL_ERROR_TAG not in ((c.get("metadata") or {}).get("tags") or [])]
    return [i for i, c in enumerate(cells) if c.get("cell_type") == "code" and has_assert(source_text(c))]


def checks_engine(wanted, probes):
    """Registers the papermill engine that runs the probe after each code cell, filling
    `probes` with what it saw per cell index (`wanted`: the cells whose value the checks
    expect); returns the engine's name."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args
    from nbclient.util import run_sync

    class ProbingClient(PapermillNotebookClient):
        probe_ready = False

        async def silent(self, code, expressions=None):
            msg_id = self.kc.execute(
                code, silent=True, store_history=False, user_expressions=expressions or {},
                allow_stdin=False, stop_on_error=False,
            )
            reply = await self.async_wait_for_reply(msg_id)
            content = (reply or {}).get("content") or {}
            if content.get("status") != "ok":
                raise ProbeError("the probe failed in the kernel: %s: %s" % (content.get("ename"), content.get("evalue")))
            return content

        async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
            runs = cell.cell_type == "code" and cell.source.strip() and \
                self.skip_cells_with_tag not in cell.metadata.get("tags", [])
            if runs and not self.probe_ready:
                await self.silent(PROBE_SETUP)
                self.probe_ready = True
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            if runs:
                expression = "__import__('_nbv_probe').observe(%r, %r)" % (
                    cell.get("execution_count"), cell_index in wanted)
                content = await self.silent("", {"o": expression})
                result = content.get("user_expressions", {}).get("o") or {}
                if result.get("status") != "ok":
                    raise ProbeError("the probe failed in the kernel: %s: %s" % (result.get("ename"), result.get("evalue")))
                probes[cell_index] = json.loads(result["data"]["text/plain"])
            return cell

        # nbclient binds the synchronous form to its own coroutine: rebind it.
        execute_cell = run_sync(async_execute_cell)

    class ProbingEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                     stderr_file=None, start_timeout=60, execution_timeout=None, **kwargs):
            # As NBClientEngine, with the probing client.
            kwargs = remove_args(["input_path"], **kwargs)
            safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
            final_kwargs = merge_kwargs(
                safe_kwargs,
                timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
                startup_timeout=start_timeout,
                kernel_name=kernel_name,
                log=logger,
                log_output=log_output,
                stdout_file=stdout_file,
                stderr_file=stderr_file,
            )
            return ProbingClient(nb_man, **final_kwargs).execute()

    papermill_engines.register(CHECKS_ENGINE, ProbingEngine)
    return CHECKS_ENGINE


def main(argv):
    source, output, outcome = argv[1], argv[2], argv[3]
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    wanted = set(json.loads(argv[4])) if len(argv) > 4 else None
    probes, asserts = {}, []
    try:
        with open(source, encoding="utf-8") as f:
            asserts = asserting_cells(json.load(f))
    except Exception:
        pass  # papermill reports what is wrong with the notebook
    try:
        error = execute(source, output, wanted, probes)
    except Exception as e:
        traceback.print_exc()
        error = failure("internal", type(e).__name__, e)
    with open(outcome, "w", encoding="utf-8") as f:
        json.dump({"error": error, "probes": {str(k): v for k, v in probes.items()}, "asserts": asserts}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
