"""Compares the executed notebook with the golden notebook.

nbv runs this part, with run_notebook.py after it, as `python3 -c <script>` in the
validation pod's notebook container, when the job sets spec.goldenNotebook:

  NBV_GOLDEN      path of the golden notebook file
  NBV_COMPARISON  the comparison settings, JSON computed by nbv-core

`compare` is `nbv_core::compare::compare` in Python, and `report_comparison` is
`ComparisonReport::reported`: change both together (a test runs both on generated
notebooks and demands identical reports). Custom patterns arrive already rewritten
into the subset Python's `re` and Rust's regex read alike. Standard library only.
The report's text rules (`clean`, `dumps`, `size`) and `PAPERMILL_ERROR_TAG` are the
runner's, defined once in run_notebook.py for the whole program.
"""

import re

MAX_CMP_BYTES = 1536
MAX_SNIPPET = 512
MAX_REPORTED_SNIPPET = 96
MAX_REPORTED_DETAIL = 160

MARKER = "<timestamp>"
ADDRESS_MARKER = "0x<address>"
BUILT_IN_TIMESTAMPS = [
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+\-][0-9]{2}:?[0-9]{2})?",
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?",
]
ADDRESS = re.compile(r"(^|[^0-9A-Za-z_])0x[0-9a-fA-F]{6,16}")
NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][\-+]?[0-9]+)?")
WHITESPACE = re.compile("[ \t\n\r\x0b\x0c]+")
BINARY_SPACE = re.compile("[ \t\n\r\x0c]")
TIMESTAMPS = [re.compile(p) for p in BUILT_IN_TIMESTAMPS]


def text_of(value):
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return "".join(value)
    return cmp_dumps_sorted(value)


def cmp_dumps_sorted(value):
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def is_ignored(kind, settings):
    for entry in settings["ignoreOutputTypes"]:
        if entry == kind:
            return True
        if entry.endswith("/*") and "/" in kind and kind.split("/", 1)[0] == entry[:-2]:
            return True
    return False


def is_binary(mime):
    return (mime.startswith("image/") and mime != "image/svg+xml") or mime == "application/pdf"


def output_items(outputs, settings):
    items = []
    for output in outputs:
        if not isinstance(output, dict):
            output = {}
        output_type = output.get("output_type")
        if not isinstance(output_type, str):
            output_type = "unknown"
        if is_ignored(output_type, settings):
            continue
        if output_type == "stream":
            name = output.get("name")
            label = "stream:%s" % (name if isinstance(name, str) else "stdout")
            text = text_of(output["text"]) if "text" in output else ""
            if items and items[-1]["label"] == label:
                items[-1]["text"] += text
            else:
                items.append({"label": label, "text": text, "binary": False})
        elif output_type == "error":
            part = lambda key: text_of(output[key]) if key in output else ""
            items.append({"label": "error", "text": "%s: %s" % (part("ename"), part("evalue")), "binary": False})
        else:
            data = output.get("data")
            if not isinstance(data, dict):
                continue
            for mime in sorted(data):
                if is_ignored(mime, settings):
                    continue
                items.append(
                    {"label": "%s:%s" % (output_type, mime), "text": text_of(data[mime]), "binary": is_binary(mime)}
                )
    return items


def code_cells(notebook, settings):
    cells, index = [], 0
    raw = notebook.get("cells") if isinstance(notebook, dict) else None
    for cell in raw if isinstance(raw, list) else []:
        if not isinstance(cell, dict):
            cell = {}
        metadata = cell.get("metadata")
        tags = metadata.get("tags") if isinstance(metadata, dict) else None
        if isinstance(tags, list) and PAPERMILL_ERROR_TAG in tags:
            continue
        position, index = index, index + 1
        if cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs")
        cells.append(
            {
                "index": position,
                "count": cell.get("execution_count"),
                "items": output_items(outputs if isinstance(outputs, list) else [], settings),
            }
        )
    return cells


def mask_timestamps(text, settings):
    for pattern in TIMESTAMPS + [re.compile(p) for p in settings["timestampPatterns"]]:
        text = pattern.sub(lambda m: MARKER, text)
    return text


def normalize(text, settings):
    text = " ".join(t for t in WHITESPACE.split(text) if t)
    text = ADDRESS.sub(lambda m: m.group(1) + ADDRESS_MARKER, text)
    if settings["ignoreTimestamps"]:
        text = mask_timestamps(text, settings)
    return text


def numbers_match(actual, expected, tolerance):
    if actual == expected:
        return True

    def split(text):
        texts, found, last = [], [], 0
        for m in NUMBER.finditer(text):
            texts.append(text[last : m.start()])
            found.append(m.group(0))
            last = m.end()
        texts.append(text[last:])
        return texts, found

    actual_texts, actual_numbers = split(actual)
    expected_texts, expected_numbers = split(expected)
    if actual_texts != expected_texts or len(actual_numbers) != len(expected_numbers):
        return False
    for a, b in zip(actual_numbers, expected_numbers):
        if a == b:
            continue
        x, y = float(a), float(b)
        if not abs(x - y) <= tolerance * max(abs(x), abs(y)):
            return False
    return True


def items_match(actual, golden, settings):
    if settings["strategy"] == "exact":
        return actual["text"] == golden["text"]
    if actual["binary"]:
        return BINARY_SPACE.sub("", actual["text"]) == BINARY_SPACE.sub("", golden["text"])
    return numbers_match(normalize(actual["text"], settings), normalize(golden["text"], settings), settings["tolerance"])


def count_text(value):
    if value is None:
        return "null"
    return dumps(value)


def snippet(item):
    return clean(item["text"], MAX_SNIPPET)


def cell_difference(actual, golden, settings):
    for k in range(max(len(actual["items"]), len(golden["items"]))):
        a = actual["items"][k] if k < len(actual["items"]) else None
        e = golden["items"][k] if k < len(golden["items"]) else None
        if a is not None and e is not None:
            if a["label"] != e["label"]:
                kind, detail = "output_type", "output %d is %s, expected %s" % (k, a["label"], e["label"])
            elif not items_match(a, e, settings):
                kind, detail = "output_content", "output %d (%s) differs" % (k, e["label"])
            else:
                continue
        elif e is not None:
            kind, detail = "missing_output", "output %d (%s) is missing" % (k, e["label"])
        else:
            kind, detail = "extra_output", "output %d (%s) is not in the golden notebook" % (k, a["label"])
        error = (a is not None and a["label"] == "error") or (e is not None and e["label"] == "error")
        return {
            "cell": actual["index"],
            "kind": kind,
            "severity": "critical" if error else "major",
            "expected": snippet(e) if e is not None else None,
            "actual": snippet(a) if a is not None else None,
            "detail": detail,
        }
    if not settings["ignoreExecutionCount"] and not same_count(actual["count"], golden["count"]):
        return {
            "cell": actual["index"],
            "kind": "execution_count",
            "severity": "minor",
            "expected": count_text(golden["count"]),
            "actual": count_text(actual["count"]),
            "detail": "the execution count differs",
        }
    return None


def same_count(a, b):
    # JSON equality: 1 and 1.0 are different numbers to serde_json, and True is no 1.
    return type(a) is type(b) and a == b


def compare(executed, golden, settings):
    """The comparison report of `executed` against `golden` (nbformat JSON)."""
    run = code_cells(executed, settings)
    expected = code_cells(golden, settings)
    total = max(len(run), len(expected))
    differences = []
    for position in range(total):
        a = run[position] if position < len(run) else None
        e = expected[position] if position < len(expected) else None
        if a is not None and e is not None:
            d = cell_difference(a, e, settings)
        elif e is not None:
            d = {
                "cell": e["index"],
                "kind": "missing_cell",
                "severity": "critical",
                "expected": snippet(e["items"][0]) if e["items"] else None,
                "actual": None,
                "detail": "the run has no code cell %d (counting code cells from 0)" % position,
            }
        else:
            d = {
                "cell": a["index"],
                "kind": "extra_cell",
                "severity": "critical",
                "expected": None,
                "actual": snippet(a["items"][0]) if a["items"] else None,
                "detail": "the golden notebook has no code cell %d (counting code cells from 0)" % position,
            }
        if d is not None:
            differences.append(d)
    return {
        "strategy": settings["strategy"],
        "total_cells": total,
        "matched_cells": total - len(differences),
        "differences": differences,
    }


def cap_comparison(cmp):
    """`cmp` within MAX_CMP_BYTES: texts cut, then the first differences that fit and
    how many more there are (`ReportedComparison::capped`)."""
    diffs = [cut_diff(d) for d in cmp.get("diffs", [])]
    full = {
        "result": clean(cmp["result"], 16),
        "strategy": clean(cmp["strategy"], 16),
        "total": cmp["total"],
        "matched": cmp["matched"],
        "mismatched": cmp["mismatched"],
        "diffs": diffs,
    }
    more = cmp.get("more", 0)
    if more:
        full["more"] = more
    if size(full) <= MAX_CMP_BYTES:
        return full
    base = dict(full, diffs=[], more=more + len(diffs))
    budget = MAX_CMP_BYTES - size(base)
    used, kept = 0, []
    for d in diffs:
        cost = size(d) + 1
        if used + cost > budget:
            break
        used += cost
        kept.append(d)
    capped = dict(full, diffs=kept)
    total_more = more + len(diffs) - len(kept)
    capped.pop("more", None)
    if total_more:
        capped["more"] = total_more
    return capped


def cut_diff(d):
    entry = {"cell": d["cell"], "type": clean(d["type"], 32), "severity": clean(d["severity"], 16)}
    if d.get("expected") is not None:
        entry["expected"] = clean(d["expected"], MAX_REPORTED_SNIPPET)
    if d.get("actual") is not None:
        entry["actual"] = clean(d["actual"], MAX_REPORTED_SNIPPET)
    entry["diff"] = clean(d["diff"], MAX_REPORTED_DETAIL)
    return entry


def report_comparison(report):
    """The `cmp` key of the termination message (`ComparisonReport::reported`)."""
    diffs = [
        {k: v for k, v in
         (("cell", d["cell"]), ("type", d["kind"]), ("severity", d["severity"]),
          ("expected", d["expected"]), ("actual", d["actual"]), ("diff", d["detail"]))
         if v is not None}
        for d in report["differences"]
    ]
    return cap_comparison(
        {
            "result": "failed" if report["differences"] else "matched",
            "strategy": report["strategy"],
            "total": report["total_cells"],
            "matched": report["matched_cells"],
            "mismatched": len(report["differences"]),
            "diffs": diffs,
        }
    )


def golden_failure(kind, ename, evalue):
    return {"kind": kind, "ename": ename, "evalue": str(evalue)}


def run_comparison(output):
    """Compares the executed notebook at `output` with NBV_GOLDEN under NBV_COMPARISON.
    Returns (cmp, error): cmp the `cmp` key (None when nothing was compared), error the
    run error to report (None when the notebooks match)."""
    import json
    import os

    golden_path = os.environ.get("NBV_GOLDEN", "")
    settings = json.loads(os.environ.get("NBV_COMPARISON", "{}"))
    if not os.path.isfile(golden_path):
        return None, golden_failure("golden", "FileNotFoundError", "No such golden notebook: %s" % golden_path)
    try:
        with open(golden_path, encoding="utf-8") as f:
            golden = json.load(f)
        if not isinstance(golden, dict) or not isinstance(golden.get("cells"), list):
            raise ValueError("it has no list of cells")
    except (OSError, ValueError, UnicodeDecodeError) as e:
        return None, golden_failure("golden", type(e).__name__, "%s: %s" % (golden_path, e))
    with open(output, encoding="utf-8") as f:
        executed = json.load(f)
    cmp = report_comparison(compare(executed, golden, settings))
    if cmp["result"] == "matched":
        return cmp, None
    first = cmp["diffs"][0] if cmp["diffs"] else None
    where = "cell %d: %s" % (first["cell"], first["diff"]) if first else "cells differ"
    return cmp, golden_failure("comparison", "GoldenMismatch", "%d of %d code cells differ from the golden notebook; %s"
                               % (cmp["mismatched"], cmp["total"], where))
