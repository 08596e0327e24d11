#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every scenario file in the repository against schema/scenario.schema.json, with a real JSON
Schema validator (Debian's python3-jsonschema, Draft 2020-12), and against the reader.

    validate_scenarios.py REPO CAPPLAN

A scenario is a JSON object without a top-level "schema" or "format" key (price sheets, run files
and profiles have one; the scenario schema allows neither) in examples/, in any scenarios/ folder
under tests/, in tests/calibrate/ or in the fuzz corpus of scenarios. Files named bad_* are
deliberately invalid: the reader (capplan estimate) must reject each with exit code 2, and the
schema must reject it too unless it is listed in READER_ONLY with the reason a JSON Schema cannot
say it. Every other scenario must validate. Exit 0 when all hold, 1 otherwise, 77 (skipped) when
the jsonschema module is missing.
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

# Invalid scenarios whose fault needs the catalogs, the model's shape or arithmetic between fields.
READER_ONLY = {
    "bad_batch_not_divisible.json": "the batch against the data-parallel size",
    "bad_duplicate_key.json": "a key given twice (JSON parsers keep one)",
    "bad_ep_dense.json": "expert parallelism on a model the catalog says is dense",
    "bad_layout_product.json": "tp x pp x dp against the cluster's GPUs",
    "bad_mla_without_dims.json": "MLA dimensions that a preset may or may not carry",
    "bad_moe_top_k.json": "top_k against the number of experts",
    "bad_pp_gt_layers.json": "pipeline stages against the model's layers",
    "bad_sliding_window_above_seq.json": "the window against the sequence length",
    "bad_tp3.json": "TP against the heads and the GPUs per node",
    "bad_unknown_gpu.json": "a GPU id the catalog does not have",
    "bad_unknown_instance.json": "an instance id the catalog does not have",
    "bad_unknown_preset.json": "a model preset the catalog does not have",
    "bad_currency_code.json": "an ISO 4217 code (the list is the reader's)",
    "bad_hf_trainer_tp2.json": "what the framework recipe's stack runs (frameworks.json)",
    "bad_qlora_tp2.json": "what the fine-tuning method allows the stack",
    "bad_fsdp_offload_optimizer.json": "the host offload the framework recipe's stack runs (frameworks.json)",
    "bad_torchtune_zero1.json": "the ZeRO stages the framework recipe's stack runs (frameworks.json)",
}


def scenario_files(repo):
    globs = ["examples/**/*.json", "tests/**/scenarios/*.json", "tests/calibrate/*.json",
             "fuzz/corpus/scenario/*.json"]
    seen = set()
    for pattern in globs:
        for path in sorted(repo.glob(pattern)):
            if path not in seen:
                seen.add(path)
                yield path


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    capplan = str(pathlib.Path(sys.argv[2]).resolve())
    schema = json.loads((repo / "schema" / "scenario.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []
    good = bad = 0
    for path in scenario_files(repo):
        rel = path.relative_to(repo)
        text = path.read_text()
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and ("schema" in doc or "format" in doc):
            continue  # a price sheet, a run file or a profile
        errors = [] if doc is None else sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if path.name.startswith("bad_"):
            bad += 1
            run = subprocess.run([capplan, "estimate", str(path), "--format", "json"], cwd=path.parent,
                                 capture_output=True, text=True)
            if run.returncode != 2:
                failures.append(f"{rel}: the reader accepts it (exit {run.returncode}); it must exit 2")
            if doc is not None and not errors and path.name not in READER_ONLY:
                failures.append(f"{rel}: the schema accepts it; the reader refuses: {run.stderr.strip()}")
            if errors and path.name in READER_ONLY:
                failures.append(f"{rel}: the schema now rejects it; take it out of READER_ONLY")
            continue
        good += 1
        for e in errors:
            where = "/".join(str(p) for p in e.absolute_path)
            failures.append(f"{rel}: #/{where}: {e.message}")
    for f in failures:
        print(f)
    print(f"{good} valid scenarios, {bad} invalid ones checked")
    if good < 35:
        failures.append("fewer scenarios than expected: the search patterns found too few")
        print(failures[-1])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
