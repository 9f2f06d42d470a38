#!/usr/bin/env bash
# Validates everything under deploy/ that can be checked without a Docker engine or a cluster.
# Needs: python3 + PyYAML, promtool (Debian package `prometheus`), kubectl (for its built-in
# kustomize), go (builds tools/manifestcheck from the Go module proxy on first use).
# Exits non-zero on the first failing check.
set -euo pipefail
DEPLOY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$DEPLOY")"
cd "$DEPLOY"
step() { printf '\n== %s\n' "$*"; }
need() { command -v "$1" >/dev/null || { echo "missing tool: $1 ($2)" >&2; exit 2; }; }
need python3 "apt-get install python3-yaml"
need promtool "apt-get install prometheus (then stop/disable its service)"
need kubectl "kubectl with built-in kustomize"
need go "Go toolchain"
python3 -c 'import yaml' 2>/dev/null || { echo "missing PyYAML (pip install PyYAML / apt-get install python3-yaml)" >&2; exit 2; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

step "YAML syntax of every deploy/ YAML file; dashboard JSON; runbook anchors"
python3 - "$DEPLOY" "$ROOT/docs/operations.md" <<'PY'
import json, pathlib, re, sys, yaml
deploy, runbook = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
files = sorted(p for p in deploy.rglob("*") if p.suffix in (".yml", ".yaml") and "tools" not in p.parts)
for p in files:
    docs = [d for d in yaml.safe_load_all(p.read_text()) if d is not None]
    assert docs, f"{p}: empty"
    print(f"ok   {p.relative_to(deploy)} ({len(docs)} document(s))")
dash = json.loads((deploy / "grafana/dripline-dashboard.json").read_text())
assert 36 <= dash["schemaVersion"] <= 41, dash["schemaVersion"]
assert any(v["type"] == "datasource" and v["query"] == "prometheus" for v in dash["templating"]["list"])
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)), "duplicate panel ids"
exprs = " ".join(t["expr"] for p in dash["panels"] for t in p.get("targets", []))
for m in ["dripline_runs", "dripline_batches_inflight", "dripline_batches_finished_total",
          "dripline_batch_duration_seconds_bucket", "dripline_targets", "dripline_blocked_backlog",
          "dripline_blocked_oldest_age_seconds", "dripline_failing_blocked_backlog",
          "dripline_stuck_targets", "dripline_planning_failures_total",
          "dripline_metrics_snapshot_age_seconds"]:
    assert m in exprs, f"dashboard lacks {m}"
print(f"ok   grafana/dripline-dashboard.json ({len(ids)} panels, schemaVersion {dash['schemaVersion']})")
# Every runbook_url anchor must be a heading of docs/operations.md (GitHub's slug rules).
def slug(h):
    return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
anchors = {slug(l.lstrip("#")) for l in runbook.read_text().splitlines() if l.startswith("#")}
rules = yaml.safe_load((deploy / "prometheus/dripline-alerts.yml").read_text())
for g in rules["groups"]:
    for r in g["rules"]:
        a = r["annotations"]
        assert r["labels"]["severity"] in ("page", "ticket"), r["alert"]
        assert a.get("summary") and a.get("description"), r["alert"]
        anchor = a["runbook_url"].split("#", 1)[1]
        assert anchor in anchors, f'{r["alert"]}: no heading #{anchor} in docs/operations.md'
        print(f"ok   {r['alert']}: severity {r['labels']['severity']}, runbook #{anchor}")
PY

step "promtool: rules, rule unit tests, Prometheus config"
promtool check rules prometheus/dripline-alerts.yml
promtool test rules prometheus/dripline-alerts.test.yml
promtool check config prometheus/prometheus.yml

step "manifestcheck (strict Kubernetes API types, compose-go)"
(cd tools/manifestcheck && go build -o "$TMP/manifestcheck" .)

step "kustomize render + strict decode: overlays local, production, production + temporal-cloud + postgres-tls, production + worker-versioning"
cp -r kubernetes "$TMP/k"
mkdir -p "$TMP/k/overlays/cloud-check"
cat >"$TMP/k/overlays/cloud-check/kustomization.yaml" <<'K'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../production]
components: [../../components/temporal-cloud, ../../components/postgres-tls]
K
mkdir -p "$TMP/k/overlays/versioned-check"
cat >"$TMP/k/overlays/versioned-check/kustomization.yaml" <<'K'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../production]
components: [../../components/worker-versioning]
K
for overlay in local production cloud-check versioned-check; do
  echo "-- overlay $overlay"
  kubectl kustomize "$TMP/k/overlays/$overlay" >"$TMP/$overlay.yaml"
  "$TMP/manifestcheck" -k8s <"$TMP/$overlay.yaml"
done
# Facts the runbook relies on.
python3 - "$TMP/production.yaml" <<'PY'
import sys, yaml
docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
cm = docs[("ConfigMap", "dripline-config")]["data"]
def seconds(v):
    return int(v[:-1]) * {"s": 1, "m": 60, "h": 3600}[v[-1]]
for name, port, enabled in (("dripline-app", 8080, "false"), ("dripline-worker", 8081, "true")):
    spec = docs[("Deployment", name)]["spec"]["template"]["spec"]
    c = spec["containers"][0]
    env = {e["name"]: e for e in c["env"]}
    assert env["DRIPLINE_WORKER_ENABLED"]["value"] == enabled, name
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert c[probe]["httpGet"]["port"] == "http", (name, probe)
    assert c["ports"][0]["containerPort"] == port, name
    assert env["DRIPLINE_DB_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "dripline-secrets"
    # API tokens reach the app only, from the Secret; the worker serves no API.
    for token in ("DRIPLINE_OPERATOR_TOKEN", "DRIPLINE_VIEWER_TOKEN"):
        if name == "dripline-app":
            assert env[token]["valueFrom"]["secretKeyRef"]["name"] == "dripline-secrets", token
        else:
            assert token not in env, (name, token)
    assert c["resources"]["limits"]["memory"] == "1Gi" and "MaxRAMPercentage=50.0" in env["JAVA_TOOL_OPTIONS"]["value"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    print(f"ok   {name}: port {port}, DRIPLINE_WORKER_ENABLED={enabled}, probes, secret refs, 1Gi/50% heap, non-root")
worker = docs[("Deployment", "dripline-worker")]["spec"]
grace = seconds(cm["DRIPLINE_WORKER_SHUTDOWN_GRACE"])
tgps = worker["template"]["spec"]["terminationGracePeriodSeconds"]
assert tgps >= grace + 30, (tgps, grace)
assert "replicas" not in worker, "the HPA owns the worker's replicas in production"
assert docs[("Deployment", "dripline-app")]["spec"]["replicas"] == 2
assert cm["DRIPLINE_PROFILE"] == "production", "production must refuse development API tokens"
print("ok   DRIPLINE_PROFILE=production; API tokens from the Secret, app only")
# Migrations run once per deploy, in the migrate Job, with the processes' image; no pod migrates.
job = docs[("Job", "dripline-migrate")]["spec"]["template"]["spec"]
mc = job["containers"][0]
assert mc["args"] == ["migrate"] and job["restartPolicy"] == "Never", mc
images = {docs[("Deployment", n)]["spec"]["template"]["spec"]["containers"][0]["image"] for n in ("dripline-app", "dripline-worker")}
assert images == {mc["image"]}, (images, mc["image"])
assert {e["name"]: e for e in mc["env"]}["DRIPLINE_DB_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "dripline-secrets"
assert cm["DRIPLINE_MIGRATE_ON_START"] == "false", "the app and the workers must not migrate at start"
print(f"ok   Job dripline-migrate runs `migrate` with {mc['image']}; DRIPLINE_MIGRATE_ON_START=false")
print(f"ok   worker terminationGracePeriodSeconds {tgps} >= shutdown grace {grace}s + 30s; app 2 replicas; worker replicas owned by the HPA")
PY

# TLS (spec §12 D2): certificates and keys from Secrets, mounted where the variables point.
python3 - "$TMP/cloud-check.yaml" <<'PY'
import sys, yaml
docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
cm = docs[("ConfigMap", "dripline-config")]["data"]
assert "sslmode=verify-full" in cm["DRIPLINE_DB_URL"] and "sslrootcert=/etc/dripline/postgres-tls/" in cm["DRIPLINE_DB_URL"], cm["DRIPLINE_DB_URL"]
for key in ("TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH"):
    assert cm[key].startswith("/etc/dripline/temporal-tls/"), key
for name in ("dripline-app", "dripline-worker"):
    spec = docs[("Deployment", name)]["spec"]["template"]["spec"]
    c = spec["containers"][0]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert volumes["temporal-tls"]["secret"]["secretName"] == "dripline-temporal-tls", name
    assert volumes["postgres-tls"]["secret"]["secretName"] == "dripline-postgres-tls", name
    assert mounts["temporal-tls"] == "/etc/dripline/temporal-tls", name
    assert mounts["postgres-tls"] == "/etc/dripline/postgres-tls", name
    env = {e["name"]: e for e in c["env"]}
    assert env["TEMPORAL_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "dripline-temporal-api-key", name
    print(f"ok   {name}: Temporal TLS files and PostgreSQL CA mounted from Secrets, TEMPORAL_API_KEY from a Secret")
for key, value in cm.items():
    assert "KEY" not in key or key.endswith("_PATH"), f"a secret in the ConfigMap: {key}"
print("ok   DRIPLINE_DB_URL sslmode=verify-full; no secret in the ConfigMap")
PY

# Worker Versioning (D3): the version's workers are a Deployment of their own, named for it.
python3 - "$TMP/versioned-check.yaml" <<'PY'
import sys, yaml
docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
assert ("Deployment", "dripline-worker") not in docs, "the unversioned worker Deployment is left"
worker = docs[("Deployment", "dripline-worker-0-1-0")]["spec"]
assert worker["selector"]["matchLabels"]["dripline.dev/build-id"] == "0-1-0"
assert worker["template"]["metadata"]["labels"]["dripline.dev/build-id"] == "0-1-0"
env = {e["name"]: e.get("value") for e in worker["template"]["spec"]["containers"][0]["env"]}
assert env["DRIPLINE_DEPLOYMENT_NAME"] == "dripline" and env["DRIPLINE_BUILD_ID"] == "0.1.0", env
hpa = docs[("HorizontalPodAutoscaler", "dripline-worker-0-1-0")]["spec"]
assert hpa["scaleTargetRef"]["name"] == "dripline-worker-0-1-0", hpa
print("ok   worker-versioning: Deployment and HPA dripline-worker-0-1-0, DRIPLINE_DEPLOYMENT_NAME/BUILD_ID set")
PY

step "compose: compose-go load/validate (docker compose config's library)"
"$TMP/manifestcheck" -compose compose/docker-compose.yml

step "entrypoint: POSIX sh syntax"
sh -n docker/entrypoint.sh && echo "ok   docker/entrypoint.sh"
if command -v shellcheck >/dev/null; then shellcheck docker/entrypoint.sh validate.sh && echo "ok   shellcheck"; fi

printf '\nAll deploy/ validations passed.\n'
