"""Cut the LeaderWorkerSet CRD's ``openAPIV3Schema`` down to the small fixture the k8s export tests validate with.

The CRD (kubernetes-sigs/lws ``config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml``) is 1.3 MB, almost
all of it two inlined copies of the core/v1 PodSpec (the leader and worker templates) and the PersistentVolumeClaim
spec. The tests validate the pod templates with kubernetes-validate as core/v1 PodTemplateSpecs (the upstream
OpenAPI), so this script keeps every LeaderWorkerSet field as the CRD defines it and replaces those inlined specs
with an open object, drops the descriptions and the status, and records where the schema came from:

    git -C lws show v0.10.0:config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml > crd.yaml
    python scripts/trim_lws_schema.py crd.yaml "kubernetes-sigs/lws@v0.10.0 (2161f38f...)" \\
        > tests/fixtures/lws/leaderworkerset_v1_schema.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

import yaml

# (path of property names from spec, why it is open in the fixture)
_OPEN = {
    ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"): "core/v1 PodSpec: validated by kubernetes-validate",
    ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"): "core/v1 PodSpec: validated by kubernetes-validate",
    ("spec", "leaderWorkerTemplate", "volumeClaimTemplates"): "core/v1 PersistentVolumeClaims (not written)",
}


def _strip(node: Any, path: tuple[str, ...]) -> Any:
    """``node`` without descriptions, with the paths in :data:`_OPEN` replaced by open objects."""
    if path in _OPEN:
        kind = "array" if path[-1] == "volumeClaimTemplates" else "object"
        return {"type": kind, "x-kubernetes-preserve-unknown-fields": True, "$comment": _OPEN[path]}
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key == "properties":
            out[key] = {name: _strip(sub, (*path, name)) for name, sub in value.items() if path or name != "status"}
        elif isinstance(value, dict):
            out[key] = _strip(value, path)
        else:
            out[key] = value
    return out


def trim(crd: dict[str, Any], source: str) -> dict[str, Any]:
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = _strip(version["schema"]["openAPIV3Schema"], ())
    return {"$comment": f"openAPIV3Schema of {crd['metadata']['name']} v1 from {source}: descriptions and status "
                        "dropped, the inlined core/v1 specs left open (scripts/trim_lws_schema.py)", **schema}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        crd = yaml.safe_load(f)
    json.dump(trim(crd, sys.argv[2]), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
