#!/usr/bin/env python3
"""Renders a Helm chart with Helm's own engine (PyPI's helm-python-sdk bundles Helm's Go SDK),
as `helm template --include-crds` would, and lints it.

    scripts/helm-render.py CHART [VALUES_JSON] [--namespace NS] [--release NAME] [--lint]

Prints the CRDs, then the rendered templates, as one YAML stream on stdout. With --lint, prints
the lint report as JSON instead and exits 1 when it has errors (warnings count as errors).
"""
import argparse
import json
import sys

import helm_python


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("chart")
    p.add_argument("values", nargs="?", default="{}", help="values as JSON")
    p.add_argument("--namespace", default="foresight-system")
    p.add_argument("--release", default="foresight")
    p.add_argument("--lint", action="store_true")
    args = p.parse_args()
    values = json.loads(args.values)
    if args.lint:
        report = helm_python.lint(args.chart, values, strict=True, namespace=args.namespace)
        print(json.dumps(report, indent=2))
        failed = report.get("errors") or any(
            m.get("severity", 0) >= 2 for m in report.get("messages", [])
        )
        return 1 if failed else 0
    chart = helm_python.Chart.load(args.chart)
    docs = []
    for crd in chart.crds:
        data = crd["data"]
        docs.append((data if isinstance(data, str) else bytes(data).decode()).strip())
    rendered = chart.render(values, name=args.release, namespace=args.namespace, is_install=True)
    for path in sorted(rendered):
        # NOTES.txt and partials are not manifests.
        if path.endswith(".yaml") or path.endswith(".yml"):
            body = rendered[path].strip()
            if body:
                docs.append(f"# Source: {path}\n{body}")
    sys.stdout.write("\n---\n".join(docs) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
