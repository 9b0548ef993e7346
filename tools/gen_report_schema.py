"""Write the lab report's JSON Schema: src/kubesched/sim/report.schema.json and its
published copy docs/report.schema.json (tests check that the two are the same).

Run from the repository root: ``python tools/gen_report_schema.py``.
"""

import json
from pathlib import Path


def obj(props, required=None, extra=False):
    return {
        "type": "object",
        "properties": props,
        "required": list(required if required is not None else props),
        "additionalProperties": extra,
    }


s = {"type": "string"}
ns = {"type": ["string", "null"]}
i = {"type": "integer"}
ni = {"type": ["integer", "null"]}
num = {"type": "number"}
b = {"type": "boolean"}


def arr(x):
    return {"type": "array", "items": x}


def mapof(x):
    return {"type": "object", "additionalProperties": x}


def ref(n):
    return {"$ref": f"#/$defs/{n}"}


defs = {
    "metadata": obj(
        {
            "command": {"enum": ["simulate", "explain", "compare", "capacity"]},
            "generatedAt": {"type": ["string", "null"], "format": "date-time"},
            "seed": ni,
            "inputs": {"type": "object"},
        }
    ),
    "amount": obj({"requested": i, "allocatable": i}),
    "nodeUsage": arr(
        obj(
            {
                "name": s,
                "zone": s,
                "resources": {
                    "type": "object",
                    "properties": {
                        "cpu": ref("amount"),
                        "memory": ref("amount"),
                        "pods": ref("amount"),
                    },
                    "required": ["cpu", "memory", "pods"],
                    "additionalProperties": ref("amount"),
                },
            }
        )
    ),
    "stats": obj({"mean": num, "max": num, "stddev": num}),
    "kpis": obj(
        {
            "placed": i,
            "pending": i,
            "nodesUsed": i,
            "cpu": ref("stats"),
            "memory": ref("stats"),
            "zoneSkew": i,
        }
    ),
    "placement": obj({"pod": s, "owner": ns, "node": ns, "message": ns, "preempted": arr(s)}),
    "summary": obj(
        {
            "pods": i,
            "scheduled": i,
            "unschedulable": i,
            "preempted": i,
            "nodes": arr(
                obj(
                    {
                        "name": s,
                        "pods": i,
                        "cpu": ref("amount"),
                        "memory": ref("amount"),
                        "allowedPods": i,
                    }
                )
            ),
        }
    ),
    "spread": arr(
        obj(
            {
                "workload": s,
                "namespace": s,
                "labels": mapof(s),
                "perZone": mapof(i),
                "perNode": mapof(i),
                "zoneSkew": i,
                "nodeSkew": i,
                "pods": i,
            }
        )
    ),
    "pending": obj(
        {
            "reasons": arr(obj({"reason": s, "count": i, "pods": arr(s)})),
            "pods": arr(obj({"pod": s, "message": ns, "verdicts": ni})),
            "verdictSets": arr(mapof(arr(s))),
            "truncated": b,
        }
    ),
    "explanation": obj(
        {
            "pod": s,
            "owner": ns,
            "node": ns,
            "message": ns,
            "profile": s,
            "podGroup": obj({"key": s, "minMember": i, "placed": i, "note": s}),
            "weights": mapof(i),
            "nodes": arr(
                obj(
                    {
                        "name": s,
                        "feasible": b,
                        "rejectedBy": ns,
                        "reason": ns,
                        "scores": mapof(i),
                        "score": ni,
                    }
                )
            ),
        }
    ),
    "gangs": arr(
        obj(
            {
                "podGroup": s,
                "minMember": ni,
                "members": i,
                "placed": i,
                "pending": i,
                "phase": ns,
            }
        )
    ),
    "quotas": arr(
        obj(
            {
                "elasticQuota": s,
                "namespace": s,
                "used": mapof(i),
                "min": {"type": ["object", "null"], "additionalProperties": i},
                "max": {"type": ["object", "null"], "additionalProperties": i},
            }
        )
    ),
}
# Only a pod of a gang has one.
defs["explanation"]["required"].remove("podGroup")
common = {"apiVersion": {"const": "lab.kubesched.io/v1alpha1"}, "metadata": ref("metadata")}
sim = obj(
    {
        **common,
        "kind": {"const": "SimulationReport"},
        "placements": arr(ref("placement")),
        "summary": ref("summary"),
        "profiles": arr(s),
        "kpis": ref("kpis"),
        "nodeUsage": ref("nodeUsage"),
        "spread": ref("spread"),
        "pending": ref("pending"),
        "explained": arr(ref("explanation")),
        "gangs": ref("gangs"),
        "quotas": ref("quotas"),
    }
)
exp = obj(
    {
        **common,
        "kind": {"const": "ExplainReport"},
        **defs["explanation"]["properties"],
        "nodeUsage": ref("nodeUsage"),
        "spread": ref("spread"),
    }
)
exp["required"].remove("podGroup")
run_fields = {
    k: v for k, v in sim["properties"].items() if k not in ("apiVersion", "kind", "metadata")
}
run = obj({"label": {"enum": ["A", "B"]}, "config": ns, **run_fields})
profile = obj(
    {
        "percentageOfNodesToScore": ni,
        "plugins": mapof(arr(s)),
        "weights": mapof(i),
        "pluginConfig": {"type": "object"},
    }
)
num_or_int = {"type": "number"}
comparison = obj(
    {
        **common,
        "kind": {"const": "ComparisonReport"},
        "configs": {
            **arr(obj({"label": {"enum": ["A", "B"]}, "path": ns, "profiles": mapof(profile)})),
            "minItems": 2,
            "maxItems": 2,
        },
        "kpis": arr(obj({"name": s, "a": num_or_int, "b": num_or_int, "delta": num_or_int})),
        "placementDeltas": arr(obj({"pod": s, "nodeA": ns, "nodeB": ns, "tieOnly": b})),
        "nodeDeltas": arr(
            obj(
                {
                    "node": s,
                    "zone": s,
                    "a": ref("nodeFigures"),
                    "b": ref("nodeFigures"),
                    "delta": ref("nodeFigures"),
                }
            )
        ),
        "profileDiff": arr(obj({"path": s, "a": {}, "b": {}})),
        "runs": {**arr(run), "minItems": 2, "maxItems": 2},
    }
)
shape = obj(
    {
        "name": s,
        "pod": s,
        "requests": mapof(i),
        "count": i,
        "sentence": s,
        "stopReason": s,
        "perNode": arr(obj({"node": s, "count": i, "limit": s})),
    }
)
mix = obj(
    {
        "order": arr(s),
        "count": i,
        "perShape": mapof(i),
        "stopReason": s,
        "perNode": arr(obj({"node": s, "counts": mapof(i), "limit": s})),
    }
)
capacity = obj(
    {
        **common,
        "kind": {"const": "CapacityReport"},
        "max": ni,
        "shapes": arr(shape),
        "mix": {"oneOf": [mix, {"type": "null"}]},
        "nodeUsage": ref("nodeUsage"),
    }
)
kinds = {
    "SimulationReport": sim,
    "ExplainReport": exp,
    "ComparisonReport": comparison,
    "CapacityReport": capacity,
}
defs["nodeFigures"] = obj({"pods": i, "cpu": i, "memory": i})
doc = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://kubesched.io/schemas/lab.kubesched.io/v1alpha1/report.schema.json",
    "title": "kubesched lab report",
    "description": (
        "The document kubesched simulate, explain, compare and capacity print with"
        " --output json; kind says which."
    ),
    "oneOf": [ref(kind) for kind in kinds],
    "$defs": {**defs, **kinds},
}
text = json.dumps(doc, indent=2) + "\n"
for target in ("src/kubesched/sim/report.schema.json", "docs/report.schema.json"):
    Path(target).write_text(text, encoding="utf-8")
