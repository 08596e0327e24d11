#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks the Kubernetes manifests in scripts/cluster/: each file is well-formed YAML; the plain Job
# asks for GPUs (nvidia.com/gpu), runs `capplan calibrate --backend cuda` and writes into a mounted
# PersistentVolumeClaim of the same file; the MPIJob uses only kubeflow.org/v2beta1 field names,
# its worker GPUs equal slotsPerWorker, its launcher's WORKERS/SLOTS/MPIJOB_NAME agree with the
# spec, and its output volume is ReadWriteMany. The shell in every container parses (`bash -n`).
#
#   python3 tests/cluster/check_manifests.py scripts/cluster/calibrate-job.yaml scripts/cluster/calibrate-mpijob.yaml
#
# Exits 77 (ctest: skipped) when Python has no yaml module (Debian: python3-yaml), or 1 with
# CAPPLAN_CLUSTER_TESTS_REQUIRED=1 (CI sets it).
import os
import subprocess
import sys

try:
    import yaml
except ImportError:
    why = "python3 has no yaml module (install python3-yaml: scripts/install_deps.sh)"
    if os.environ.get("CAPPLAN_CLUSTER_TESTS_REQUIRED") == "1":
        print(f"FAIL: {why} (CAPPLAN_CLUSTER_TESTS_REQUIRED=1: this test must run here)")
        sys.exit(1)
    print("SKIPPED: " + why)
    sys.exit(77)

# kubeflow.org/v2beta1 (mpi-operator pkg/apis/kubeflow/v2beta1/types.go)
MPIJOB_SPEC = {"slotsPerWorker", "runLauncherAsWorker", "runPolicy", "mpiReplicaSpecs", "sshAuthMountPath",
               "launcherCreationPolicy", "mpiImplementation"}
RUN_POLICY = {"cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit",
              "schedulingPolicy", "suspend", "managedBy"}
REPLICA_SPEC = {"replicas", "template", "restartPolicy"}

problems = []


def check(cond, where, message):
    if not cond:
        problems.append(f"{where}: {message}")
    return cond


def containers(pod_template):
    return pod_template.get("spec", {}).get("containers", [])


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def shell_parses(where, container):
    cmd = container.get("command", []) + container.get("args", [])
    if len(cmd) >= 3 and cmd[0].endswith("bash") and cmd[1] == "-c":
        r = subprocess.run(["bash", "-n", "-c", cmd[2]], capture_output=True, text=True)
        check(r.returncode == 0, where, f"its shell does not parse: {r.stderr.strip()}")


def claims_mounted(where, pod_spec, claims):
    """The claim names among the pod's volumes that some container mounts."""
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    mounted = set()
    for c in pod_spec.get("containers", []):
        for m in c.get("volumeMounts", []):
            check(m["name"] in volumes, where, f"mounts volume '{m['name']}', which the pod does not declare")
            pvc = volumes.get(m["name"], {}).get("persistentVolumeClaim")
            if pvc:
                check(pvc["claimName"] in claims, where, f"claim '{pvc['claimName']}' is not in this file")
                mounted.add(pvc["claimName"])
    return mounted


def check_job(path, docs):
    claims = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "PersistentVolumeClaim"}
    jobs = [d for d in docs if d.get("kind") == "Job"]
    if not check(len(jobs) == 1 and jobs[0].get("apiVersion") == "batch/v1", path, "expected one batch/v1 Job"):
        return
    job = jobs[0]
    pod = job["spec"]["template"]
    where = f"{path}: Job {job['metadata']['name']}"
    check(pod["spec"].get("restartPolicy") in ("Never", "OnFailure"), where, "restartPolicy must be Never or OnFailure")
    (c,) = containers(pod)
    check(int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) >= 1, where,
          "no nvidia.com/gpu limit")
    text = " ".join(c.get("command", []) + c.get("args", []))
    check("calibrate" in text and "--backend cuda" in text, where, "does not run capplan calibrate --backend cuda")
    check(claims_mounted(where, pod["spec"], claims), where, "mounts no PersistentVolumeClaim for the profile")
    shell_parses(where, c)


def check_mpijob(path, docs):
    claims = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "PersistentVolumeClaim"}
    jobs = [d for d in docs if d.get("kind") == "MPIJob"]
    if not check(len(jobs) == 1 and jobs[0].get("apiVersion") == "kubeflow.org/v2beta1", path,
                 "expected one kubeflow.org/v2beta1 MPIJob"):
        return
    job = jobs[0]
    spec = job["spec"]
    where = f"{path}: MPIJob {job['metadata']['name']}"
    check(set(spec) <= MPIJOB_SPEC, where, f"unknown spec fields {sorted(set(spec) - MPIJOB_SPEC)}")
    check(set(spec.get("runPolicy", {})) <= RUN_POLICY, where,
          f"unknown runPolicy fields {sorted(set(spec.get('runPolicy', {})) - RUN_POLICY)}")
    replicas = spec.get("mpiReplicaSpecs", {})
    if not check(set(replicas) == {"Launcher", "Worker"}, where, "mpiReplicaSpecs must be Launcher and Worker"):
        return
    for role, r in replicas.items():
        check(set(r) <= REPLICA_SPEC, f"{where}/{role}", f"unknown fields {sorted(set(r) - REPLICA_SPEC)}")
    slots = spec.get("slotsPerWorker", 1)
    worker_pod = replicas["Worker"]["template"]
    (worker,) = containers(worker_pod)
    check(int(worker.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) == slots, f"{where}/Worker",
          f"nvidia.com/gpu must equal slotsPerWorker ({slots})")
    launcher_pod = replicas["Launcher"]["template"]
    (launcher,) = containers(launcher_pod)
    env = env_of(launcher)
    check(env.get("WORKERS") == str(replicas["Worker"]["replicas"]), f"{where}/Launcher",
          f"WORKERS={env.get('WORKERS')} but Worker replicas is {replicas['Worker']['replicas']}")
    check(env.get("SLOTS") == str(slots), f"{where}/Launcher", f"SLOTS={env.get('SLOTS')} but slotsPerWorker is {slots}")
    check(env.get("MPIJOB_NAME") == job["metadata"]["name"], f"{where}/Launcher", "MPIJOB_NAME is not metadata.name")
    text = " ".join(launcher.get("command", []) + launcher.get("args", []))
    check("mpirun" in text and "calibrate" in text and "--backend cuda" in text, f"{where}/Launcher",
          "does not run mpirun ... capplan calibrate --backend cuda")
    for role, pod in (("Launcher", launcher_pod), ("Worker", worker_pod)):
        mounted = claims_mounted(f"{where}/{role}", pod["spec"], claims)
        check(mounted, f"{where}/{role}", "mounts no PersistentVolumeClaim for the profile")
        for name in mounted:
            check("ReadWriteMany" in claims[name]["spec"].get("accessModes", []), f"{where}/{role}",
                  f"claim '{name}' must be ReadWriteMany (rank 0 and the launcher share it)")
    shell_parses(f"{where}/Launcher", launcher)
    shell_parses(f"{where}/Worker", worker)


for path in sys.argv[1:]:
    try:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        problems.append(f"{path}: {e}")
        continue
    for d in docs:
        check(isinstance(d, dict) and {"apiVersion", "kind", "metadata"} <= set(d), path,
              "every document needs apiVersion, kind and metadata")
    kinds = {d.get("kind") for d in docs if isinstance(d, dict)}
    try:
        if "MPIJob" in kinds:
            check_mpijob(path, docs)
        else:
            check_job(path, docs)
    except (KeyError, TypeError, ValueError) as e:
        problems.append(f"{path}: missing or malformed field: {e!r}")

for p in problems:
    print("FAIL: " + p)
if problems:
    sys.exit(1)
print(f"{len(sys.argv) - 1} manifest file(s) well-formed")
