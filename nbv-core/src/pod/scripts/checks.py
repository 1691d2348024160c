"""The output checks of spec.validationConfig, carried out around papermill.

nbv's core resolves the job's validationConfig into a check policy and passes it as
JSON in NBV_CHECKS:

  {"level": "development", "strict": false,
   "checks": {"stderr": "off", "warnings": "warn", "silent": "fail", "types": "warn",
              "assertions": "warn", "exitCodes": "off", "expected": "fail"},
   "expect": [{"cell": 3, "type": "pandas.DataFrame", "shape": [-1, 2], "notEmpty": true}]}

The notebook runs under papermill with an engine of its own ("nbv-checks"): after each
code cell it sends the kernel a second, silent request (silent=True,
store_history=False) whose user expression asks a probe about the cell's value. The
probe is a module (_nbv_probe in sys.modules, never a name in the user namespace) that
also records the Python warnings shown and the exit codes of shell commands (!cmd).
A silent request has no outputs, does not count as an execution and does not touch
In, Out or _, so the executed notebook is the one papermill alone would write.

What an observation means against an expectation (`evaluate`) and how the findings
are capped for the termination message (`encode_checks`) are defined by nbv's core
(nbv_core::checks::evaluate and CheckReport::capped): change both together.

This file comes before run_notebook.py in the container's script; `clean`, `dumps`
and `size` are defined there.
"""

MAX_CHECKS_BYTES = 1024
MAX_FINDING_MESSAGE = 200
CHECKS_ENGINE = "nbv-checks"

# The check each rule belongs to; a rule of no check (a mistake in the spec) fails.
RULE_CHECK = {
    "stderr": "stderr",
    "warning": "warnings",
    "none": "silent",
    "nan": "silent",
    "type": "types",
    "shape": "expected",
    "minValue": "expected",
    "maxValue": "expected",
    "notEmpty": "expected",
    "assertions": "assertions",
    "exitCode": "exitCodes",
    "cell": None,
}

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


class ProbeError(Exception):
    """The probe could not run: the checks the job asks for cannot be carried out."""


def load_checks():
    """The check policy of NBV_CHECKS, or None when the job asks for no check."""
    text = os.environ.get("NBV_CHECKS")
    if not text:
        return None
    return json.loads(text)


def severity(policy, rule):
    check = RULE_CHECK.get(rule)
    return policy["checks"].get(check, "fail") if check else "fail"


def finding(policy, cell, rule, message):
    """The finding, or None when the rule's check is off."""
    outcome = severity(policy, rule)
    if outcome == "off":
        return None
    entry = {} if cell is None else {"c": cell}
    entry.update({"r": rule, "s": outcome, "m": message})
    return entry


def type_matches(types, wanted):
    for name in types:
        if name == wanted:
            return True
        if (
            "." in wanted
            and name.split(".")[0] == wanted.split(".")[0]
            and name.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]
        ):
            return True
    return False


def shape_matches(wanted, seen):
    return len(wanted) == len(seen) and all(w == -1 or w == s for w, s in zip(wanted, seen))


def nan_message(cell, observation):
    if observation.get("real"):
        return "cell %d: the value is NaN" % cell
    types = observation.get("types") or []
    return "cell %d: the %s holds NaN" % (cell, types[0] if types else "value")


def evaluate(cell, expectation, observation, policy):
    """The findings about the value of `cell` (see nbv_core::checks::evaluate)."""
    findings = []

    def find(rule, message):
        entry = finding(policy, cell, rule, message)
        if entry is not None:
            findings.append(entry)

    if expectation is None:
        if observation.get("nan"):
            find("nan", nan_message(cell, observation))
        return findings
    if observation.get("none") and policy["checks"].get("silent") != "off":
        find("none", "cell %d has no value (None) where one is expected" % cell)
        return findings
    if observation.get("nan"):
        find("nan", nan_message(cell, observation))
    types = observation.get("types") or []
    shown = "None" if observation.get("none") else (types[0] if types else "value")
    wanted = expectation.get("type")
    if wanted is not None and not type_matches(types, wanted):
        find("type", "cell %d: expected a %s, got a %s" % (cell, wanted, shown))
    shape = expectation.get("shape")
    if shape is not None:
        wanted_shape = ",".join(str(d) for d in shape)
        seen = observation.get("shape")
        if seen is None:
            find("shape", "cell %d: expected shape %s, got a %s without a shape" % (cell, wanted_shape, shown))
        elif not shape_matches(shape, seen):
            got = ",".join(str(d) for d in seen)
            find("shape", "cell %d: expected shape %s, got %s" % (cell, wanted_shape, got))
    for rule, key, relation in (("minValue", "min", ">="), ("maxValue", "max", "<=")):
        text = expectation.get(key)
        if text is None:
            continue
        bound = float(text)
        if not observation.get("real"):
            find(rule, "cell %d: %s %s needs a number, got a %s" % (cell, rule, text, shown))
            continue
        number = observation.get("num")
        within = number is not None and (number >= bound if relation == ">=" else number <= bound)
        if not within:
            find(rule, "cell %d: %s is not %s %s %s" % (cell, observation.get("repr", ""), relation, rule, text))
    if expectation.get("notEmpty") and observation.get("empty"):
        find("notEmpty", "cell %d: the %s is empty" % (cell, shown))
    return findings


def encode_checks(findings, more=0):
    """The `chk` document: failures first, then warnings, as many as fit in
    MAX_CHECKS_BYTES, and how many more there were (see CheckReport::capped)."""
    cleaned = []
    for f in findings:
        entry = {} if f.get("c") is None else {"c": f["c"]}
        entry.update({"r": f["r"], "s": f["s"], "m": clean(f.get("m", ""), MAX_FINDING_MESSAGE)})
        cleaned.append(entry)
    ordered = [f for f in cleaned if f["s"] == "fail"] + [f for f in cleaned if f["s"] != "fail"]

    def document(kept):
        doc = {"f": kept}
        left = len(ordered) - len(kept) + more
        if left:
            doc["more"] = left
        return doc

    kept = []
    for entry in ordered:
        if size(document(kept + [entry])) > MAX_CHECKS_BYTES:
            break
        kept.append(entry)
    return document(kept)


def indexed_code_cells(notebook):
    """Index (as in the source notebook) and cell of every code cell."""
    cells = [c for c in notebook.get("cells") or [] if PAPERMILL_ERROR_TAG not in ((c.get("metadata") or {}).get("tags") or [])]
    return [(i, c) for i, c in enumerate(cells) if c.get("cell_type") == "code"]


def missing_cells(notebook, policy):
    """Findings for expectations that name no code cell of the notebook."""
    code = {i for i, _ in indexed_code_cells(notebook)}
    found = []
    for position, expectation in enumerate(policy.get("expect") or []):
        if expectation["cell"] not in code:
            found.append(finding(
                policy, expectation["cell"], "cell",
                "spec.validationConfig.expectedOutputs[%d].cell: cell %d is not a code cell of "
                "the notebook (cells count from 0, markdown cells included)" % (position, expectation["cell"]),
            ))
    return found


def source_text(cell):
    source = cell.get("source") or ""
    return "".join(source) if isinstance(source, list) else source


def has_assert(source):
    """Whether the cell's code holds an assert statement (IPython magics and shell
    lines left out)."""
    import ast

    if source.lstrip().startswith("%%"):
        return False
    lines = [("pass" if line.lstrip().startswith(("%", "!")) else line) for line in source.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def stderr_line(cell):
    for output in cell.get("outputs") or []:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            text = output.get("text") or ""
            text = "".join(text) if isinstance(text, list) else text
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            return lines[0] if lines else text.strip()
    return None


def cell_findings(executed, policy, probes):
    """The findings of a run, cell by cell: stderr (from the executed notebook's
    outputs), warnings and shell exit codes (from the probe), the cell's value against
    its expectations; then the assertions of the notebook."""
    expectations = {}
    for expectation in policy.get("expect") or []:
        expectations.setdefault(expectation["cell"], []).append(expectation)
    found = []
    asserted = False
    for index, cell in indexed_code_cells(executed):
        ran = cell.get("execution_count") is not None
        if not ran:
            continue
        asserted = asserted or has_assert(source_text(cell))
        line = stderr_line(cell)
        if line is not None:
            found.append(finding(policy, index, "stderr", "cell %d wrote to stderr: %s" % (index, clean(line, 120))))
        probe = probes.get(index) or {}
        for category, message in probe.get("w") or []:
            found.append(finding(policy, index, "warning", "cell %d raised %s: %s" % (index, category, clean(message, 120))))
        for command, code in probe.get("x") or []:
            found.append(finding(policy, index, "exitCode", "cell %d: shell command %s exited with code %s" % (index, clean(command, 80), code)))
        observation = probe.get("v")
        if observation is None:
            continue
        cell_expectations = expectations.get(index) or [None]
        for position, expectation in enumerate(cell_expectations):
            for entry in evaluate(index, expectation, observation, policy):
                # A NaN is one finding per cell, however many expectations it has.
                if entry["r"] == "nan" and position > 0:
                    continue
                found.append(entry)
    if not asserted:
        found.append(finding(policy, None, "assertions", "no code cell that ran holds an assert statement; "
                             "assert what the notebook must produce"))
    return [f for f in found if f is not None]


def checks_engine(policy, probes):
    """Registers the papermill engine that runs the probe after each code cell, filling
    `probes` with what it saw per cell index; returns the engine's name."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args
    from nbclient.util import run_sync

    wanted = {e["cell"] for e in policy.get("expect") or []}

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
