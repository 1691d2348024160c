#!/usr/bin/env python3
"""nbv's Helm chart (charts/nbv): generated from config/, rendered and linted by a real
Helm (helm-python-sdk, Helm v4 as a library), and compared with what kustomize builds
from config/. Run it through scripts/helm, which installs the packages it needs.

    generate          rewrite the chart's generated files from config/
    lint [ARGS]       helm lint --strict (ARGS: --set, --set-string, -f, --namespace)
    template [ARGS]   helm template (--namespace, --name, --set, --set-string, -f,
                      --include-crds)
    check             the chart is what `generate` writes, and every configuration
                      below lints and renders the objects config/ says it should

The kustomize build here implements the fields config/ uses (resources, images,
configurations with image field specs) and fails on any other, so that a new field in a
kustomization cannot be silently ignored by the comparison.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "nbv"
CHART_NAME = "nbv"
# The namespace config/ installs into; the chart uses the release's namespace.
CONFIG_NAMESPACE = "nbv-system"
# Argo CD's namespace in config/rbac and config/argocd, and OpenShift GitOps'.
ARGOCD_NAMESPACE = "argocd"
OPENSHIFT_GITOPS_NAMESPACE = "openshift-gitops"
# Annotations the chart adds and config/ does not have: Helm's own.
HELM_ANNOTATIONS = {"helm.sh/resource-policy"}


def fail(message: str) -> None:
    print(f"helm-chart: {message}", file=sys.stderr)
    sys.exit(1)


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def load_yaml_docs(text: str, where: str) -> list[dict]:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        fail(f"{where}: not YAML: {err}")
    for d in docs:
        if not isinstance(d, dict):
            fail(f"{where}: a document is not a mapping")
    return docs


# --- the kustomize subset ------------------------------------------------------------

KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "images", "configurations", "patches"}
PATCH_TARGET_FIELDS = {"group", "kind", "name"}
PATCH_OPS = {"add", "replace", "remove"}
IMAGE_FIELDS = {"name", "newName", "newTag", "digest"}
CONFIGURATION_FIELDS = {"images"}


def split_image(ref: str) -> tuple[str, str | None, str | None]:
    """name, tag, digest of an image reference."""
    digest = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag = None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1 :]
    return ref, tag, digest


def apply_image(ref: str, image: dict) -> str | None:
    """The reference kustomize's image transformer makes of `ref`, or None if the
    entry does not name it."""
    name, tag, digest = split_image(ref)
    if name != image["name"]:
        return None
    name = image.get("newName", name)
    if "digest" in image:
        return f"{name}@{image['digest']}"
    if "newTag" in image:
        return f"{name}:{image['newTag']}"
    out = name
    if tag is not None:
        out += f":{tag}"
    if digest is not None:
        out += f"@{digest}"
    return out


def walk_path(node, parts: list[str], change) -> None:
    """Apply `change` to the string at a kustomize field path; lists on the way are
    entered element by element, as kustomize does."""
    if isinstance(node, list):
        for item in node:
            walk_path(item, parts, change)
        return
    if not isinstance(node, dict) or not parts:
        return
    key, rest = parts[0], parts[1:]
    if key not in node:
        return
    if not rest:
        if isinstance(node[key], str):
            new = change(node[key])
            if new is not None:
                node[key] = new
        elif isinstance(node[key], list):
            for i, item in enumerate(node[key]):
                if isinstance(item, str):
                    new = change(item)
                    if new is not None:
                        node[key][i] = new
        return
    walk_path(node[key], rest, change)


def default_image_paths(node, change) -> None:
    """kustomize's built-in image field specs: every containers[].image and
    initContainers[].image of a workload."""
    if isinstance(node, list):
        for item in node:
            default_image_paths(item, change)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                for c in value:
                    if isinstance(c, dict) and isinstance(c.get("image"), str):
                        new = change(c["image"])
                        if new is not None:
                            c["image"] = new
            default_image_paths(value, change)


def transform_images(objects: list[dict], images: list[dict], specs: list[dict]) -> None:
    for image in images:
        change = lambda ref, image=image: apply_image(ref, image)  # noqa: E731
        for obj in objects:
            default_image_paths(obj.get("spec"), change)
            for spec in specs:
                if spec.get("kind") in (None, obj.get("kind")):
                    walk_path(obj, spec["path"].split("/"), change)


def kustomize_build(directory: Path, overlay_images: list[dict] | None = None) -> list[dict]:
    """The objects `kustomize build directory` prints, for the fields config/ uses."""
    objects, _ = _build(directory)
    if overlay_images:
        _, specs = _build(directory)
        transform_images(objects, overlay_images, specs)
    return objects


def _build(directory: Path) -> tuple[list[dict], list[dict]]:
    path = directory / "kustomization.yaml"
    if not path.is_file():
        fail(f"{rel(directory)}: no kustomization.yaml")
    k = yaml.safe_load(path.read_text())
    unknown = set(k) - KUSTOMIZATION_FIELDS
    if unknown:
        fail(
            f"{rel(path)}: kustomize field(s) {sorted(unknown)} are not implemented by "
            "scripts/helm-chart.py: implement them there, or the chart check would ignore them"
        )
    if k.get("kind") != "Kustomization":
        fail(f"{rel(path)}: kind is not Kustomization")
    objects: list[dict] = []
    specs: list[dict] = []
    for entry in k.get("resources", []):
        target = (directory / entry).resolve()
        if target.is_dir():
            child_objects, child_specs = _build(target)
            objects += child_objects
            specs += child_specs
        elif target.is_file():
            objects += load_yaml_docs(target.read_text(), rel(target))
        else:
            fail(f"{rel(path)}: resource {entry} does not exist (remote resources are not implemented)")
    for entry in k.get("configurations", []):
        cpath = directory / entry
        conf = yaml.safe_load(cpath.read_text())
        unknown = set(conf) - CONFIGURATION_FIELDS
        if unknown:
            fail(f"{rel(cpath)}: transformer configuration(s) {sorted(unknown)} are not implemented")
        for spec in conf.get("images", []):
            if set(spec) - {"kind", "path"}:
                fail(f"{rel(cpath)}: image field spec {spec} has fields beyond kind and path")
            specs.append(spec)
    images = k.get("images", [])
    for image in images:
        if set(image) - IMAGE_FIELDS or "name" not in image:
            fail(f"{rel(path)}: images entry {image} has fields that are not implemented")
    transform_images(objects, images, specs)
    for entry in k.get("patches", []):
        apply_patch(objects, entry, rel(path))
    return objects, specs


def apply_patch(objects: list[dict], entry: dict, where: str) -> None:
    """A `patches` entry of the one shape config/ uses: an inline JSON 6902 patch
    (add, replace, remove) on the objects its target names by group, kind and name."""
    target = entry.get("target", {})
    if set(entry) != {"target", "patch"} or set(target) - PATCH_TARGET_FIELDS or "kind" not in target:
        fail(f"{where}: a patches entry other than an inline patch on a group/kind/name target: {entry}")
    ops = yaml.safe_load(entry["patch"])
    if not isinstance(ops, list):
        fail(f"{where}: only JSON 6902 patches (a list of operations) are implemented")
    hits = 0
    for obj in objects:
        group = obj.get("apiVersion", "").rpartition("/")[0]
        if (target["kind"] != obj.get("kind") or target.get("name", obj["metadata"]["name"]) != obj["metadata"]["name"]
                or target.get("group", group) != group):
            continue
        hits += 1
        for op in ops:
            if op.get("op") not in PATCH_OPS:
                fail(f"{where}: patch operation {op} is not implemented")
            parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
            parent = obj
            for part in parts[:-1]:
                parent = parent[int(part)] if isinstance(parent, list) else parent[part]
            last = parts[-1]
            if isinstance(parent, list):
                last = len(parent) if last == "-" else int(last)
            if op["op"] == "remove":
                del parent[last]
            elif isinstance(parent, list) and op["op"] == "add":
                parent.insert(last, copy.deepcopy(op["value"]))
            else:
                if op["op"] == "replace" and (last not in parent if isinstance(parent, dict) else last >= len(parent)):
                    fail(f"{where}: replace of {op['path']}, which does not exist")
                parent[last] = copy.deepcopy(op["value"])
    if hits == 0:
        fail(f"{where}: the patch's target {target} matches no object")


def kustomize_resource_files(directory: Path) -> list[Path]:
    """The files a kustomization's resources name, recursively, in order."""
    k = yaml.safe_load((directory / "kustomization.yaml").read_text())
    files: list[Path] = []
    for entry in k.get("resources", []):
        target = (directory / entry).resolve()
        files += kustomize_resource_files(target) if target.is_dir() else [target]
    return files


def manager_image() -> dict:
    """The images entry of config/manager: the operator's image."""
    k = yaml.safe_load((ROOT / "config/manager/kustomization.yaml").read_text())
    images = k.get("images", [])
    if len(images) != 1:
        fail("config/manager/kustomization.yaml: expected exactly one images entry")
    return images[0]


# --- generation ----------------------------------------------------------------------

# Which values switch each config/ file sits behind (files of config/default not listed
# here are always rendered), and where its objects live.
CONDITIONS = {
    "config/manager/namespace.yaml": ".Values.createNamespace",
    "config/rbac/leader_election_role.yaml": ".Values.leaderElection",
    "config/rbac/leader_election_role_binding.yaml": ".Values.leaderElection",
    "config/rbac/argocd_role.yaml": ".Values.argocd.rbac",
    "config/manager/pdb.yaml": ".Values.podDisruptionBudget.enabled",
    "config/manager/networkpolicy.yaml": ".Values.networkPolicy.enabled",
}
# Optional parts: their config/ directory or files, and their switch.
OPTIONAL = [
    ("config/monitoring", "monitoring", ".Values.monitoring.enabled"),
    ("config/argocd", "argocd", "and .Values.argocd.healthCheck (not .Values.openshift.enabled)"),
    (
        "config/openshift-gitops/argocd-health-check.yaml",
        "openshift",
        "and .Values.argocd.healthCheck .Values.openshift.enabled",
    ),
    (
        "config/openshift/console-dashboard.yaml",
        "openshift",
        "and .Values.monitoring.enabled .Values.openshift.enabled",
    ),
    (
        "config/monitoring-openshift/service-ca-configmap.yaml",
        "monitoring",
        "and .Values.monitoring.enabled .Values.metrics.openshiftServiceCA",
    ),
]
# Objects Helm must never delete on uninstall: they belong to Argo CD, the chart only
# adds nbv's entry to them.
KEEP = {"config/argocd/health-check-configmap.yaml", "config/openshift-gitops/argocd-health-check.yaml"}
# The ArgoCD resource of OpenShift GitOps: its name is a value.
ARGOCD_INSTANCE_FILE = "config/openshift-gitops/argocd-health-check.yaml"

NOT_IN_NAME = r"(?<![\w.-]){}(?![\w.-])"


def escape_braces(line: str, where: str) -> str:
    """Go template delimiters in config/ (Prometheus and Grafana templates) as literal
    text."""
    if "{{" not in line:
        return line
    if "`" in line:
        fail(f"{where}: a line with both {{{{ and a backquote cannot be escaped: {line!r}")
    out = re.sub(r"\{\{(.*?)\}\}", lambda m: "{{`{{" + m.group(1) + "}}`}}", line)
    if out.replace("{{`{{", "").replace("}}`}}", "").count("{{"):
        fail(f"{where}: unbalanced {{{{ in {line!r}")
    return out


def is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def sub_count(pattern: str, repl, lines: list[str], where: str, expect: str) -> list[str]:
    """Replace on non-comment lines; `expect` is "1" (exactly once) or "+" (at least
    once): generation fails when config/ no longer has the line the chart relies on."""
    out, n = [], 0
    for line in lines:
        if is_comment(line):
            out.append(line)
            continue
        new, k = re.subn(pattern, repl, line)
        n += k
        out.append(new)
    if (expect == "1" and n != 1) or (expect == "+" and n < 1):
        fail(f"{where}: expected {'one' if expect == '1' else 'a'} match of {pattern!r}, found {n}")
    return out


def insert_after(pattern: str, block: list[str], lines: list[str], where: str,
                 indents: list[int] | None = None) -> list[str]:
    """`block` after the one line matching `pattern`, each line indented as that line,
    or by `indents` (spaces, line by line) when given."""
    hits = [i for i, line in enumerate(lines) if not is_comment(line) and re.fullmatch(pattern, line)]
    if len(hits) != 1:
        fail(f"{where}: expected one line matching {pattern!r}, found {len(hits)}")
    i = hits[0]
    indent = re.match(r"\s*", lines[i]).group(0)
    if indents is None:
        indents = [len(indent)] * len(block)
    return lines[: i + 1] + [" " * n + b if b else b for b, n in zip(block, indents)] + lines[i + 1 :]


def template_for(source: str, condition: str | None) -> str:
    where = source
    text = (ROOT / source).read_text()
    lines = [escape_braces(line, where) for line in text.splitlines()]

    # The release's namespace for config/'s nbv-system (metadata, subjects, selectors).
    if any(not is_comment(line) and re.search(NOT_IN_NAME.format("nbv-system"), line) for line in lines):
        lines = sub_count(NOT_IN_NAME.format("nbv-system"), "{{ .Release.Namespace }}", lines, where, "+")
    # Argo CD's namespace, a value.
    for ns in (ARGOCD_NAMESPACE, OPENSHIFT_GITOPS_NAMESPACE):
        pattern = rf"^(\s*namespace: ){ns}$"
        if any(re.match(pattern, line) for line in lines):
            lines = sub_count(pattern, r'\1{{ include "nbv.argocdNamespace" . }}', lines, where, "+")
    if source == ARGOCD_INSTANCE_FILE:
        lines = sub_count(
            rf"^(  name: ){OPENSHIFT_GITOPS_NAMESPACE}$", r"\1{{ .Values.openshift.argocdInstance }}", lines, where, "1"
        )
    if source in KEEP:
        lines = insert_after(
            r"metadata:",
            ["  annotations:", "    # Argo CD's object: nbv's entry is added, and uninstalling leaves it.",
             "    helm.sh/resource-policy: keep"],
            lines,
            where,
        )
    # The operator's image: containers and the environment values naming it, as
    # config/manager/kustomizeconfig.yaml makes kustomize rewrite them.
    name = re.escape(manager_image()["name"])
    image_line = rf"^(\s*(?:- )?(?:image|value): ){name}(?::[\w][\w.-]*)?(?:@sha256:[0-9a-f]+)?$"
    if any(re.match(image_line, line) for line in lines):
        lines = sub_count(image_line, r'\1{{ include "nbv.image" . }}', lines, where, "+")
    if source == "config/manager/deployment.yaml":
        lines = sub_count(r"^(  replicas: )\d+$", r"\1{{ .Values.replicaCount }}", lines, where, "1")
        lines = insert_after(
            r"\s*serviceAccountName: nbv-operator",
            ["{{- with .Values.imagePullSecrets }}", "imagePullSecrets:", "  {{- toYaml . | nindent 8 }}", "{{- end }}"],
            lines,
            where,
        )
        lines = insert_after(
            r"\s*env:",
            [
                "  {{- if not .Values.leaderElection }}",
                "  - name: NBV_NO_LEADER_ELECTION",
                '    value: "true"',
                "  {{- end }}",
                '  {{- if ne (include "nbv.argocdNamespace" .) "argocd" }}',
                "  - name: NBV_ARGOCD_NAMESPACE",
                '    value: {{ include "nbv.argocdNamespace" . }}',
                "  {{- end }}",
                '  {{- if include "nbv.metricsCertSecret" . }}',
                "  - name: NBV_METRICS_CERT_DIR",
                "    value: /etc/nbv/metrics-tls",
                "  {{- end }}",
            ],
            lines,
            where,
        )
        # The metrics certificate's Secret, after the container's last field (its
        # seccomp profile): the container's volumeMounts, then the Pod's volumes.
        lines = insert_after(
            r"\s{14}type: RuntimeDefault",
            [
                '{{- with include "nbv.metricsCertSecret" . }}',
                "volumeMounts:",
                "  - name: metrics-tls",
                "    mountPath: /etc/nbv/metrics-tls",
                "    readOnly: true",
                "volumes:",
                "  - name: metrics-tls",
                "    secret:",
                "      secretName: {{ . }}",
                "{{- end }}",
            ],
            lines,
            where,
            indents=[0, 10, 10, 10, 10, 6, 6, 6, 6, 0],
        )
        lines = ['{{- include "nbv.validate" . }}'] + lines
    if source == "config/manager/service.yaml":
        lines = insert_after(
            r"metadata:",
            [
                "  {{- if .Values.metrics.openshiftServiceCA }}",
                "  annotations:",
                "    # OpenShift's service CA writes the Service's certificate into this Secret.",
                '    service.beta.openshift.io/serving-cert-secret-name: {{ include "nbv.metricsCertSecret" . }}',
                "  {{- end }}",
            ],
            lines,
            where,
        )

    if source == "config/monitoring/servicemonitor.yaml":
        # With the service CA's certificate, config/monitoring-openshift's tlsConfig.
        lines = insert_after(
            r"\s*tlsConfig:",
            [
                "  {{- if .Values.metrics.openshiftServiceCA }}",
                "  ca:",
                "    configMap:",
                "      name: nbv-service-ca",
                "      key: service-ca.crt",
                "  serverName: nbv-operator-metrics.{{ .Release.Namespace }}.svc",
                "  {{- else }}",
            ],
            lines,
            where,
        )
        lines = insert_after(r"\s*insecureSkipVerify: true", ["{{- end }}"], lines, where)

    head = f"{{{{- /* Generated from {source} by scripts/helm generate; do not edit. */}}}}"
    body = "\n".join(lines)
    if condition:
        return f"{head}\n{{{{- if {condition} }}}}\n{body}\n{{{{- end }}}}\n"
    return f"{head}\n{body}\n"


def generated_files() -> dict[str, str]:
    """Chart path -> content of every file `generate` writes."""
    files: dict[str, str] = {}
    crd_sources = kustomize_resource_files(ROOT / "config/crd")
    for src in kustomize_resource_files(ROOT / "config/default"):
        source = rel(src)
        if src in crd_sources:
            files[f"crds/{src.name}"] = (
                f"# Generated from {source} by scripts/helm generate; do not edit.\n" + src.read_text()
            )
            continue
        files[f"templates/{src.name}"] = template_for(source, CONDITIONS.get(source))
    for source, part, condition in OPTIONAL:
        path = ROOT / source
        sources = kustomize_resource_files(path) if path.is_dir() else [path]
        for src in sources:
            files[f"templates/{part}/{src.name}"] = template_for(rel(src), condition)
    return files


GENERATED_MARK = "by scripts/helm generate; do not edit."


def generate() -> None:
    files = generated_files()
    for path in sorted(CHART.rglob("*")):
        if path.is_file() and GENERATED_MARK in path.read_text() and rel_chart(path) not in files:
            print(f"removing {rel(path)}")
            path.unlink()
    for name, content in files.items():
        target = CHART / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text() != content:
            print(f"writing {rel(target)}")
            target.write_text(content)


def rel_chart(path: Path) -> str:
    return str(path.relative_to(CHART))


def check_generated() -> list[str]:
    problems = []
    files = generated_files()
    for name, content in files.items():
        target = CHART / name
        if not target.exists():
            problems.append(f"{rel(target)} is missing")
        elif target.read_text() != content:
            diff = difflib.unified_diff(
                target.read_text().splitlines(), content.splitlines(), f"{rel(target)} (checked in)",
                f"{rel(target)} (generated)", lineterm="", n=1,
            )
            problems.append("\n".join(list(diff)[:60]))
    for path in sorted(CHART.rglob("*")):
        if path.is_file() and GENERATED_MARK in path.read_text() and rel_chart(path) not in files:
            problems.append(f"{rel(path)} is generated from a file config/ no longer installs")
    return problems


# --- Helm ----------------------------------------------------------------------------

def helm():
    try:
        import helm_python
    except ImportError:
        fail("helm_python is not importable: run scripts/helm install")
    return helm_python


INSTALL_ORDER = [
    "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
    "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
    "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
    "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet",
    "Pod", "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job",
    "CronJob", "IngressClass", "Ingress", "APIService", "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
]


def render(values: dict | None = None, namespace: str = CONFIG_NAMESPACE, name: str = CHART_NAME,
           include_crds: bool = True) -> list[tuple[str, str]]:
    """(source, YAML document) of `helm template NAME charts/nbv --namespace NAMESPACE`,
    CRDs first, then the templates in Helm's install order."""
    h = helm()
    docs: list[tuple[str, str]] = []
    with h.Chart.load(str(CHART)) as chart:
        if include_crds:
            for crd in chart.crds:
                docs.append((f"{CHART_NAME}/{crd['filename']}", crd["data"]))
        manifests = chart.render(values or {}, name=name, namespace=namespace, is_install=True)
    rendered = []
    for path in sorted(manifests):
        if os.path.basename(path).startswith("_") or path.endswith("NOTES.txt"):
            continue
        for doc in re.split(r"(?m)^---\s*$", manifests[path]):
            parsed = [d for d in yaml.safe_load_all(doc) if d is not None] if doc.strip() else []
            if parsed:
                rendered.append((path, doc.strip("\n") + "\n", parsed[0].get("kind", "")))
    order = {kind: i for i, kind in enumerate(INSTALL_ORDER)}
    rendered.sort(key=lambda r: order.get(r[2], len(order)))
    return docs + [(p, d) for p, d, _ in rendered]


def render_objects(values: dict | None = None, namespace: str = CONFIG_NAMESPACE) -> list[dict]:
    objects = []
    for source, doc in render(values, namespace):
        objects += load_yaml_docs(doc, source)
    return objects


def lint(values: dict | None = None, namespace: str = CONFIG_NAMESPACE, quiet: bool = False) -> list[str]:
    """helm lint --strict; the findings, one line each, and whether it failed."""
    report = helm().lint(str(CHART), values or {}, strict=True, namespace=namespace)
    names = {0: "UNKNOWN", 1: "INFO", 2: "WARNING", 3: "ERROR"}
    lines = [f"[{names.get(m.get('severity'), m.get('severity'))}] {m.get('path')}: {m.get('error')}"
             for m in report.get("messages", [])]
    lines += [f"[ERROR] {e}" for e in report.get("errors", []) or []]
    failed = any(m.get("severity", 0) >= 2 for m in report.get("messages", [])) or bool(report.get("errors"))
    if not quiet:
        for line in lines:
            print(f"  {line}")
    return lines if failed else []


# --- comparison ----------------------------------------------------------------------

def key(obj: dict) -> tuple[str, str, str, str]:
    meta = obj.get("metadata", {})
    return (obj.get("apiVersion", ""), obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def show_key(k) -> str:
    api, kind, ns, name = k
    return f"{api} {kind} {ns + '/' if ns else ''}{name}"


def normalize(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    annotations = obj.get("metadata", {}).get("annotations")
    if isinstance(annotations, dict):
        for a in HELM_ANNOTATIONS:
            annotations.pop(a, None)
        if not annotations:
            del obj["metadata"]["annotations"]
    return obj


def index(objects: list[dict], side: str) -> dict:
    out = {}
    for obj in objects:
        k = key(obj)
        if k in out:
            fail(f"{side}: {show_key(k)} appears twice")
        out[k] = normalize(obj)
    return out


def compare(chart: list[dict], expected: list[dict], chart_side: str, expected_side: str) -> list[str]:
    """What differs between two sets of objects, compared as data."""
    a, b = index(chart, chart_side), index(expected, expected_side)
    problems = []
    for k in sorted(set(a) - set(b)):
        problems.append(f"only in {chart_side}: {show_key(k)}")
    for k in sorted(set(b) - set(a)):
        problems.append(f"only in {expected_side}: {show_key(k)}")
    for k in sorted(set(a) & set(b)):
        if a[k] != b[k]:
            left = yaml.safe_dump(b[k], sort_keys=True, width=1000).splitlines()
            right = yaml.safe_dump(a[k], sort_keys=True, width=1000).splitlines()
            diff = difflib.unified_diff(left, right, expected_side, chart_side, lineterm="", n=2)
            problems.append(f"{show_key(k)} differs:\n" + "\n".join(diff))
    return problems


def without(objects: list[dict], others: list[dict]) -> list[dict]:
    keys = {key(o) for o in others}
    return [copy.deepcopy(o) for o in objects if key(o) not in keys]


def find(objects: list[dict], kind: str, name: str) -> dict:
    hits = [o for o in objects if o.get("kind") == kind and o["metadata"].get("name") == name]
    if len(hits) != 1:
        fail(f"expected one {kind} {name} in config/, found {len(hits)}")
    return hits[0]


def operator_container(objects: list[dict]) -> dict:
    deployment = find(objects, "Deployment", "nbv-operator")
    return deployment["spec"]["template"]["spec"]["containers"][0]


# --- check ---------------------------------------------------------------------------

class Check:
    def __init__(self) -> None:
        self.failures = 0

    def report(self, title: str, problems: list[str]) -> None:
        if problems:
            self.failures += 1
            print(f"FAIL {title}")
            for p in problems:
                print("  " + p.replace("\n", "\n  "))
        else:
            print(f"ok   {title}")

    def configuration(self, title: str, values: dict, expected: list[dict], expected_side: str,
                      namespace: str = CONFIG_NAMESPACE) -> None:
        problems = [f"helm lint --strict: {line}" for line in lint(values, namespace, quiet=True)]
        try:
            chart = render_objects(values, namespace)
        except Exception as err:  # a template that fails to render
            self.report(title, problems + [f"helm template failed: {err}"])
            return
        problems += compare(chart, expected, "the chart", expected_side)
        self.report(title, problems)


def cargo_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'(?ms)^\[workspace\.package\].*?^version = "([^"]+)"', text)
    if not m:
        fail("Cargo.toml: no [workspace.package] version")
    return m.group(1)


def check() -> None:
    c = Check()
    stale = check_generated()
    c.report("charts/nbv is what `scripts/helm generate` writes from config/", stale)

    meta = yaml.safe_load((CHART / "Chart.yaml").read_text())
    version = cargo_version()
    image = manager_image()
    problems = []
    for field, want in (("version", version), ("appVersion", version)):
        if str(meta.get(field)) != want:
            problems.append(f"Chart.yaml {field} is {meta.get(field)}, the workspace's version is {want}")
    if image.get("newTag") != version:
        problems.append(f"config/manager's image tag is {image.get('newTag')}, the workspace's version is {version}")
    c.report(f"Chart.yaml version and appVersion, config/manager's image tag: {version}", problems)

    print("helm lint --strict charts/nbv (default values):")
    c.report("helm lint --strict, default values", lint())

    default = kustomize_build(ROOT / "config/default")
    c.configuration(
        f"default values, --namespace {CONFIG_NAMESPACE} --include-crds = kustomize build config/default",
        {}, default, "config/default",
    )

    # Another namespace: every object config/ puts in nbv-system moves with it.
    other = "nbv-elsewhere"
    moved = copy.deepcopy(default)
    for obj in moved:
        text = yaml.safe_dump(obj)
        obj.clear()
        obj.update(yaml.safe_load(re.sub(NOT_IN_NAME.format(CONFIG_NAMESPACE), other, text)))
    c.configuration(f"--namespace {other}: config/default with {CONFIG_NAMESPACE} read as {other}",
                    {}, moved, f"config/default in {other}", namespace=other)

    c.configuration("createNamespace=false: config/default without its Namespace",
                    {"createNamespace": False}, [copy.deepcopy(o) for o in default if o["kind"] != "Namespace"],
                    "config/default without the Namespace")

    monitoring = kustomize_build(ROOT / "config/monitoring")
    c.configuration("monitoring.enabled: config/default + kustomize build config/monitoring",
                    {"monitoring": {"enabled": True}}, default + monitoring, "config/default + config/monitoring")

    # The PodDisruptionBudget (policy/v1: not on Kubernetes 1.20) and the NetworkPolicy.
    for value, kind in (("podDisruptionBudget", "PodDisruptionBudget"), ("networkPolicy", "NetworkPolicy")):
        c.configuration(f"{value}.enabled=false: config/default without its {kind}",
                        {value: {"enabled": False}}, [copy.deepcopy(o) for o in default if o["kind"] != kind],
                        f"config/default without the {kind}")

    argocd = kustomize_build(ROOT / "config/argocd")
    c.configuration("argocd.healthCheck: config/default + kustomize build config/argocd",
                    {"argocd": {"healthCheck": True}}, default + argocd, "config/default + config/argocd")

    argocd_role = load_yaml_docs((ROOT / "config/rbac/argocd_role.yaml").read_text(), "argocd_role.yaml")
    no_argocd_rbac = without(default, argocd_role)
    c.configuration("argocd.rbac=false: config/default without config/rbac/argocd_role.yaml",
                    {"argocd": {"rbac": False}}, no_argocd_rbac, "config/default without argocd_role.yaml")

    custom = copy.deepcopy(default)
    for obj in custom:
        if obj["metadata"].get("namespace") == ARGOCD_NAMESPACE:
            obj["metadata"]["namespace"] = "gitops"
    operator_container(custom)["env"].insert(0, {"name": "NBV_ARGOCD_NAMESPACE", "value": "gitops"})
    c.configuration("argocd.namespace=gitops: the Argo CD Role there, and NBV_ARGOCD_NAMESPACE",
                    {"argocd": {"namespace": "gitops", "healthCheck": True}},
                    custom + [dict(o, metadata=dict(o["metadata"], namespace="gitops")) for o in argocd],
                    "config/default + config/argocd in gitops")

    # OpenShift: Argo CD's namespace is OpenShift GitOps', the health check goes into its
    # ArgoCD resource, the dashboard into the console.
    gitops = kustomize_build(ROOT / "config/openshift-gitops")
    openshift = without(default, argocd_role)
    for obj in gitops:
        if obj["kind"] == "RoleBinding":
            # The chart binds the ServiceAccount where it installs it, and only there.
            obj["subjects"] = [{"kind": "ServiceAccount", "name": "nbv-operator", "namespace": CONFIG_NAMESPACE}]
    operator_container(openshift)["env"].insert(
        0, {"name": "NBV_ARGOCD_NAMESPACE", "value": OPENSHIFT_GITOPS_NAMESPACE})
    dashboard = load_yaml_docs((ROOT / "config/openshift/console-dashboard.yaml").read_text(), "console-dashboard")
    c.configuration(
        "openshift.enabled + argocd.healthCheck + monitoring.enabled: config/openshift-gitops (bound to the "
        "release's ServiceAccount), config/monitoring, config/openshift/console-dashboard.yaml",
        {"openshift": {"enabled": True}, "argocd": {"healthCheck": True}, "monitoring": {"enabled": True}},
        openshift + gitops + monitoring + dashboard, "config/default on OpenShift")

    # Image mirrors: the chart's image values do what an overlay's `images` does.
    name = image["name"]
    for title, values, overlay in (
        ("image.repository + image.tag", {"repository": "registry.example.com/mirror/nbv", "tag": "0.2.0-rc1"},
         {"name": name, "newName": "registry.example.com/mirror/nbv", "newTag": "0.2.0-rc1"}),
        ("image.digest", {"digest": "sha256:" + "ab" * 32}, {"name": name, "digest": "sha256:" + "ab" * 32}),
    ):
        expected = kustomize_build(ROOT / "config/default", overlay_images=[overlay])
        c.configuration(f"{title} = an overlay's images: {overlay}", {"image": values}, expected,
                        "config/default + images overlay")
    secrets = copy.deepcopy(default)
    find(secrets, "Deployment", "nbv-operator")["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": "pull"}]
    c.configuration("imagePullSecrets: on the operator's Pods", {"imagePullSecrets": [{"name": "pull"}]},
                    secrets, "config/default + imagePullSecrets")

    # The metrics certificate: a Secret mounted for --metrics-cert-dir; on OpenShift one
    # the service CA makes for the Service.
    for title, values, secret in (
        ("metrics.certSecret=nbv-tls: the Secret mounted, NBV_METRICS_CERT_DIR",
         {"metrics": {"certSecret": "nbv-tls"}}, "nbv-tls"),
        ("metrics.openshiftServiceCA: the service CA's Secret nbv-metrics-tls, the Service annotated",
         {"metrics": {"openshiftServiceCA": True}}, "nbv-metrics-tls"),
    ):
        tls = copy.deepcopy(default)
        pod = find(tls, "Deployment", "nbv-operator")["spec"]["template"]["spec"]
        container = operator_container(tls)
        container["env"].insert(0, {"name": "NBV_METRICS_CERT_DIR", "value": "/etc/nbv/metrics-tls"})
        container["volumeMounts"] = [{"name": "metrics-tls", "mountPath": "/etc/nbv/metrics-tls", "readOnly": True}]
        pod["volumes"] = [{"name": "metrics-tls", "secret": {"secretName": secret}}]
        if values["metrics"].get("openshiftServiceCA"):
            find(tls, "Service", "nbv-operator-metrics")["metadata"]["annotations"] = {
                "service.beta.openshift.io/serving-cert-secret-name": secret}
        c.configuration(title, values, tls, "config/default + the metrics certificate")
        if values["metrics"].get("openshiftServiceCA"):
            # Scraped: the ServiceMonitor verifies the certificate with the service CA.
            verifying = kustomize_build(ROOT / "config/monitoring-openshift")
            c.configuration(
                "metrics.openshiftServiceCA + monitoring.enabled: kustomize build config/monitoring-openshift",
                dict(values, monitoring={"enabled": True}), tls + verifying,
                "config/default + the service CA's certificate + config/monitoring-openshift")

    # HA: one replica without the Lease; more than one requires leader election.
    single = [copy.deepcopy(o) for o in default if o["metadata"].get("name") != "nbv-operator-leader-election"]
    find(single, "Deployment", "nbv-operator")["spec"]["replicas"] = 1
    operator_container(single)["env"].insert(0, {"name": "NBV_NO_LEADER_ELECTION", "value": "true"})
    c.configuration("replicaCount=1, leaderElection=false: one replica, --no-leader-election, no Lease Role",
                    {"replicaCount": 1, "leaderElection": False}, single, "config/default with one replica")
    three = copy.deepcopy(default)
    find(three, "Deployment", "nbv-operator")["spec"]["replicas"] = 3
    c.configuration("replicaCount=3: three replicas with leader election", {"replicaCount": 3}, three,
                    "config/default with three replicas")
    try:
        render_objects({"replicaCount": 2, "leaderElection": False})
        c.report("replicaCount=2 with leaderElection=false is refused", ["it rendered"])
    except Exception as err:
        c.report(f"replicaCount=2 with leaderElection=false is refused ({str(err).strip().splitlines()[-1]})", [])

    if c.failures:
        hint = " (after changing config/, run scripts/helm generate)" if stale else ""
        fail(f"{c.failures} check(s) failed{hint}")
    print("all chart checks passed")


# --- command line --------------------------------------------------------------------

def deep_merge(base: dict, extra: dict) -> dict:
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = v
    return base


def parse_args(args: list[str]) -> dict:
    h = helm()
    opts = {"values": {}, "namespace": CONFIG_NAMESPACE, "name": CHART_NAME, "include_crds": False}
    it = iter(args)
    for arg in it:
        value = None
        if "=" in arg and arg.startswith("--"):
            arg, value = arg.split("=", 1)
        def need():
            v = value if value is not None else next(it, None)
            if v is None:
                fail(f"{arg} needs a value")
            return v
        if arg in ("-n", "--namespace"):
            opts["namespace"] = need()
        elif arg == "--name":
            opts["name"] = need()
        elif arg == "--set":
            deep_merge(opts["values"], h.parse_set_string(need()))
        elif arg == "--set-string":
            deep_merge(opts["values"], h.parse_set_string_values(need()))
        elif arg in ("-f", "--values"):
            deep_merge(opts["values"], h.values_from_yaml(Path(need()).read_text()))
        elif arg == "--include-crds":
            opts["include_crds"] = True
        else:
            fail(f"unknown argument {arg}")
    return opts


def main() -> None:
    if len(sys.argv) < 2:
        fail("usage: helm-chart.py generate|lint|template|check [ARGS]")
    command, args = sys.argv[1], sys.argv[2:]
    if command == "generate":
        generate()
    elif command == "check":
        check()
    elif command == "lint":
        opts = parse_args(args)
        print(f"helm lint --strict {rel(CHART)}")
        if lint(opts["values"], opts["namespace"]):
            fail("helm lint --strict failed")
        print("1 chart(s) linted, 0 chart(s) failed")
    elif command == "template":
        opts = parse_args(args)
        for source, doc in render(opts["values"], opts["namespace"], opts["name"], opts["include_crds"]):
            sys.stdout.write(f"---\n# Source: {source}\n{doc}")
    else:
        fail(f"unknown command {command}")


if __name__ == "__main__":
    main()
