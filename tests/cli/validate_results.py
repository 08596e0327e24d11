#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What capplan writes with --format json, against schema/result.schema.json, with a real JSON
Schema validator (Debian's python3-jsonschema, Draft 2020-12).

    validate_results.py REPO CAPPLAN

For every shipped example and every valid CLI test scenario: a training or fine-tuning scenario's
`estimate` (against $defs/estimate), its `search` for the examples and the search scenarios
($defs/search), a serving scenario's `serve`, alone and comparing layouts ($defs/serve), and every
scenario's `tco` ($defs/tco; --years 3 --utilisation 0.6 where the file has no tco section). Each
document must also carry schema_version and capplan_version. Every shipped example must answer
each of its commands with exit code 0. Exit 0 when all hold, 1 otherwise, 77 (skipped) when the
jsonschema module is missing.
"""
import json
import pathlib
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (scripts/install_deps.sh installs it): skipped")
    sys.exit(77)


def scenarios(repo):
    for pattern in ["examples/**/*.json", "tests/cli/scenarios/*.json"]:
        for path in sorted(repo.glob(pattern)):
            if path.name.startswith("bad_"):
                continue
            try:
                doc = json.loads(path.read_text())
            except json.JSONDecodeError:
                continue
            if isinstance(doc, dict) and "schema" not in doc and "format" not in doc:
                yield path, doc


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    capplan = str(pathlib.Path(sys.argv[2]).resolve())
    root = json.loads((repo / "schema" / "result.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(root)
    validators = {}
    for name in ["estimate", "search", "serve", "tco"]:
        schema = {"$defs": root["$defs"],
                  "allOf": [{"$ref": f"#/$defs/{name}"}, {"required": ["schema_version", "capplan_version"]}]}
        validators[name] = jsonschema.Draft202012Validator(schema)
    failures = []
    checked = {name: 0 for name in validators}

    def check(kind, path, args, must_succeed):
        rel = path.relative_to(repo)
        run = subprocess.run([capplan] + args, cwd=repo, capture_output=True, text=True)
        what = f"{rel}: capplan {' '.join(args[:1] + args[2:])}"
        if run.returncode not in (0, 3) or (must_succeed and run.returncode != 0):
            if must_succeed:
                failures.append(f"{what}: exit {run.returncode}: {run.stderr.strip()[:400]}")
            return
        try:
            doc = json.loads(run.stdout)
        except json.JSONDecodeError as e:
            failures.append(f"{what}: not JSON ({e})")
            return
        checked[kind] += 1
        for e in sorted(validators[kind].iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in e.absolute_path)
            failures.append(f"{what}: #/{where}: {e.message[:300]}")

    for path, doc in scenarios(repo):
        example = path.relative_to(repo).parts[0] == "examples"
        file = str(path)
        workload = doc.get("workload")
        serve = isinstance(workload, dict) and workload.get("kind") == "serve"
        if serve:
            check("serve", path, ["serve", file, "--format", "json"], example)
            check("serve", path, ["serve", file, "--format", "json", "--compare", "true"], example)
        else:
            check("estimate", path, ["estimate", file, "--format", "json"], example)
            if example or "search" in path.name:
                check("search", path, ["search", file, "--format", "json", "--threads", "1"], example)
        tco_terms = [] if "tco" in doc else ["--years", "3", "--utilisation", "0.6"]
        check("tco", path, ["tco", file, "--format", "json"] + tco_terms, example)
    for f in failures:
        print(f)
    print(", ".join(f"{n} {kind}" for kind, n in checked.items()) + " documents validated")
    for kind, n in checked.items():
        if n == 0:
            failures.append(f"no {kind} document was checked")
            print(failures[-1])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
