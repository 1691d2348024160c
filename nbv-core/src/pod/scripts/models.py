"""The prediction check of spec.modelValidation: each model the gate opened for is
asked for a prediction on testData, and its answer is compared with expectedOutput.

NBV_MODELS, computed by nbv-core (`nbv_core::models::model_env`), holds everything:

  {"tolerance": 0.01, "testData": <the request body>, "expectedOutput": <JSON>,
   "models": [{"model": "ns/name", "name": "name", "url": "http://...", "protocol": "v1"}]}

This part is the Python twin of nbv-core's `models::prediction` (predict_path,
response_outputs, expected_outputs, compare_outputs, and the mismatch's message) and
of `models::capped_predictions`: change both together. Texts quote JSON as serde_json
writes it (json_text), so that the messages are the core's, byte for byte.

Only the standard library is used.
"""

import http.client
import json
import math
import os
import urllib.error
import urllib.request
from decimal import Decimal

MAX_MDL_BYTES = 512
MAX_MODEL = 128
MAX_DETAIL = 200
MAX_ACTUAL = 96
PREDICTION_TIMEOUT = 30
# The most of an answer read: a prediction is small, a runaway body is not kept.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


def predict_path(protocol, model):
    if protocol == "v2":
        return "/v2/models/%s/infer" % model
    return "/v1/models/%s:predict" % model


def response_outputs(protocol, body):
    """(True, outputs) of a response body of `protocol`: V1's predictions, V2's
    outputs reduced to their data (one output: its data alone); (False, None) when the
    body is not a response of the protocol."""
    if not isinstance(body, dict):
        return False, None
    if protocol != "v2":
        if "predictions" in body:
            return True, body["predictions"]
        return False, None
    outputs = body.get("outputs")
    if not isinstance(outputs, list):
        return False, None
    data = []
    for output in outputs:
        if not isinstance(output, dict) or "data" not in output:
            return False, None
        data.append(output["data"])
    return True, data[0] if len(data) == 1 else data


def expected_outputs(protocol, expected):
    found, outputs = response_outputs(protocol, expected)
    return outputs if found else expected


def json_kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def as_float(value):
    """What serde_json holds of a JSON number: integers beyond 64 bits are floats."""
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return None
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def digits_of(number):
    """(sign, digits, exponent) of the shortest decimal that reads back as `number`:
    number == sign * int(digits) * 10**exponent, digits without trailing zeros."""
    sign, digits, exponent = Decimal(repr(number)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(text)
    return ("-" if sign else ""), (text or "0"), (exponent if text else 0)


def float_json(number):
    """A float as serde_json writes it: the shortest digits that read back, plain from
    1e-5 to below 1e16 (1.0, 0.5, 0.00001), otherwise with an exponent (1e-7, 1e+16,
    1.5e+300). Python's repr has the same digits but other thresholds (1e-05)."""
    if not math.isfinite(number):
        return "null"
    sign, digits, k = digits_of(number)
    if digits == "0":
        return sign + "0.0"
    length = len(digits)
    kk = length + k
    if 0 <= k and kk <= 16:
        return sign + digits + "0" * k + ".0"
    if 0 < kk <= 16:
        return sign + digits[:kk] + "." + digits[kk:]
    if -5 < kk <= 0:
        return sign + "0." + "0" * -kk + digits
    mantissa = digits if length == 1 else digits[0] + "." + digits[1:]
    return "%s%se%+d" % (sign, mantissa, kk - 1)


def float_display(number):
    """A float as Rust's `{}` writes it: plain decimal, no exponent (0.01, 1, 1e-7 as
    0.0000001)."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "-inf" if number < 0 else "inf"
    sign, digits, k = digits_of(number)
    if k >= 0:
        return sign + digits + "0" * k
    if len(digits) > -k:
        return sign + digits[:k] + "." + digits[k:]
    return sign + "0." + "0" * (-k - len(digits)) + digits


def json_text(value):
    """`value` as serde_json's compact output writes it: keys sorted, floats as above."""
    kind = json_kind(value)
    if kind == "number":
        number = as_float(value)
        return str(value) if number is None else float_json(number)
    if kind == "array":
        return "[" + ",".join(json_text(v) for v in value) + "]"
    if kind == "object":
        items = sorted(value.items())
        return "{" + ",".join(json_text(k) + ":" + json_text(v) for k, v in items) + "}"
    return json.dumps(value, ensure_ascii=False)


def member(key):
    """A JSONPath member step: .name for a plain identifier, ["a key"] otherwise."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
    plain = key[:1] != "" and key[0] in letters and all(c in letters or c in "0123456789" for c in key)
    return "." + key if plain else "[" + json_text(key) + "]"


def compare_outputs(expected, actual, tolerance, path="$"):
    """None when `actual` matches `expected` within `tolerance`; otherwise the first
    mismatch: {"path", "expected", "actual", "kind", "tolerance"}."""

    def mismatch(kind):
        return {
            "path": path,
            "expected": json_text(expected),
            "actual": json_text(actual),
            "kind": kind,
            "tolerance": tolerance,
        }

    e_kind, a_kind = json_kind(expected), json_kind(actual)
    if e_kind == "number" and a_kind == "number":
        # Compared as floats, as the core does; NaN never matches.
        if abs(float_of(actual) - float_of(expected)) <= tolerance:
            return None
        return mismatch("number")
    if e_kind == "array" and a_kind == "array":
        if len(expected) != len(actual):
            return mismatch("length")
        for i, (e, a) in enumerate(zip(expected, actual)):
            found = compare_outputs(e, a, tolerance, "%s[%d]" % (path, i))
            if found is not None:
                return found
        return None
    if e_kind == "object" and a_kind == "object":
        if len(expected) != len(actual) or any(k not in actual for k in expected):
            return mismatch("keys")
        for key in sorted(expected):
            found = compare_outputs(expected[key], actual[key], tolerance, path + member(key))
            if found is not None:
                return found
        return None
    if e_kind == a_kind and expected == actual:
        return None
    return mismatch("value")


def float_of(number):
    as_big = as_float(number)
    return float(number) if as_big is None else as_big


def mismatch_message(m):
    detail = {
        "number": " (tolerance %s)" % float_display(m["tolerance"]),
        "length": " (arrays of different lengths)",
        "keys": " (objects with different keys)",
    }.get(m["kind"], "")
    return "at %s: expected %s, the model answered %s%s" % (m["path"], m["expected"], m["actual"], detail)


def ask_model(url, body):
    """POSTs `body` to `url`; returns the answer as JSON, or raises ModelUnanswered."""
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=PREDICTION_TIMEOUT) as response:
            data = response.read(MAX_ANSWER_BYTES)
    except urllib.error.HTTPError as e:
        try:
            text = e.read(512).decode("utf-8", "replace").strip()
        except Exception:
            text = ""
        raise ModelUnanswered("HTTP %d from %s%s" % (e.code, url, ": " + text if text else ""))
    except urllib.error.URLError as e:
        raise ModelUnanswered("cannot reach %s: %s" % (url, e.reason))
    except (OSError, ValueError, http.client.HTTPException) as e:
        raise ModelUnanswered("cannot reach %s: %s" % (url, e))
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as e:
        raise ModelUnanswered("the answer from %s is not JSON: %s" % (url, e))


class ModelUnanswered(Exception):
    pass


def check_model(model, settings):
    """Asks one model; returns its report entry and, when it failed, the reason
    (PredictionMismatch or PredictionFailed)."""
    protocol = model.get("protocol", "v1")
    url = model["url"].rstrip("/") + predict_path(protocol, model["name"])
    entry = {"m": model["model"]}
    body = json.dumps(settings.get("testData"), ensure_ascii=False).encode("utf-8")
    try:
        answer = ask_model(url, body)
    except ModelUnanswered as e:
        return dict(entry, ok=False, d=str(e)), "PredictionFailed"
    found, actual = response_outputs(protocol, answer)
    if not found:
        what = '"outputs" with "data"' if protocol == "v2" else '"predictions"'
        detail = "the answer from %s is not a %s response (no %s): %s" % (
            url, protocol.upper(), what, json_text(answer))
        return dict(entry, ok=False, d=detail), "PredictionFailed"
    expected = expected_outputs(protocol, settings.get("expectedOutput"))
    found = compare_outputs(expected, actual, settings.get("tolerance", 0.01))
    if found is None:
        return dict(entry, ok=True), None
    return dict(entry, ok=False, d=mismatch_message(found), a=json_text(actual)), "PredictionMismatch"


def check_models():
    """The prediction check of every model in NBV_MODELS: (entries, error), error the
    first failure; (None, None) when the job asks for no prediction check."""
    text = os.environ.get("NBV_MODELS")
    if not text:
        return None, None
    settings = json.loads(text)
    entries, error = [], None
    for model in settings.get("models") or []:
        entry, reason = check_model(model, settings)
        entries.append(entry)
        if reason is not None and error is None:
            detail = clean(entry.get("d", ""), MAX_DETAIL)
            error = failure("model", reason, "model %s: %s" % (entry["m"], detail))
    return entries, error


def cap_predictions(entries):
    """The entries within MAX_MDL_BYTES: texts cut, failures before passes, then the
    first that fit (see capped_predictions in nbv-core)."""
    cut = []
    for e in entries:
        entry = {"m": clean(e["m"], MAX_MODEL), "ok": bool(e["ok"])}
        if e.get("d") is not None:
            entry["d"] = clean(e["d"], MAX_DETAIL)
        if e.get("a") is not None:
            entry["a"] = clean(e["a"], MAX_ACTUAL)
        cut.append(entry)
    ordered = [e for e in cut if not e["ok"]] + [e for e in cut if e["ok"]]
    kept = []
    for entry in ordered:
        if size(kept + [entry]) > MAX_MDL_BYTES:
            break
        kept.append(entry)
    return kept
