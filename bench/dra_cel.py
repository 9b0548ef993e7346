"""What CEL device selectors cost: per evaluation, and with the per-device cache.

A cluster shaped like scheduler_perf's DRA cases: ``--nodes`` nodes, each with a slice of
``--devices`` GPUs of driver ``gpu.example.com`` (index, model, driver version, memory).
Every pod's claim has the DeviceClass's selector and one of its own (a model and memory,
the DRA example driver's CEL demo), and the allocator looks at every device of every node
for every pod (the worst case: no node is ruled out first). Prints the cost of one
evaluation (cache misses only), of a cached lookup, and the hit rate.

    .venv/bin/python bench/dra_cel.py [--nodes 500] [--devices 8] [--pods 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from kubesched.objects.dra.cel import compile_selector, reset_stats, stats
from kubesched.objects.dra.slices import Device, ResourceSlice
from kubesched.testing.dra import make_slice

DRIVER = "gpu.example.com"
CLASS_SELECTOR = "device.driver == 'gpu.example.com'"
CLAIM_SELECTORS = (
    "device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'",
    "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0",
)


def devices(nodes: int, per_node: int) -> list[Device]:
    """The devices of one slice per node."""
    found: list[Device] = []
    for n in range(nodes):
        builder = make_slice(f"node-{n}-gpus", DRIVER).node(f"node-{n}").pool(f"node-{n}")
        for i in range(per_node):
            builder.device(
                f"gpu-{i}",
                capacity={"memory": "80Gi" if i % 2 else "40Gi"},
                index=i,
                model="LATEST-GPU-MODEL" if i % 4 else "OLD-GPU-MODEL",
                driverVersion=("version", "1.0.0"),
            )
        found.extend(ResourceSlice.from_dict(builder.obj()).devices)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    all_devices = devices(args.nodes, args.devices)
    compile_selector("device.driver == 'warm.example.com'")  # builds cel-python's parser
    started = time.perf_counter()
    selectors = [compile_selector(e) for e in (CLASS_SELECTOR, *CLAIM_SELECTORS)]
    compile_ms = (time.perf_counter() - started) * 1000 / len(selectors)

    reset_stats()
    started = time.perf_counter()
    matching = 0
    for _ in range(args.pods):
        for device in all_devices:
            if all(s.matches(device) for s in selectors):
                matching += 1
    elapsed = time.perf_counter() - started
    counted = stats()
    lookups = counted.evaluations + counted.cache_hits
    hit_seconds = max(elapsed - counted.eval_seconds, 0.0)
    result = {
        "nodes": args.nodes,
        "devices": len(all_devices),
        "pods": args.pods,
        "selectors": len(selectors),
        "compile_ms_per_expression": round(compile_ms, 2),
        "evaluations": counted.evaluations,
        "cache_hits": counted.cache_hits,
        "hit_rate": round(counted.hit_rate, 4),
        "us_per_evaluation": round(counted.seconds_per_evaluation * 1e6, 1),
        "us_per_cached_lookup": round(hit_seconds / max(counted.cache_hits, 1) * 1e6, 2),
        "seconds_total": round(elapsed, 3),
        "seconds_if_uncached": round(counted.seconds_per_evaluation * lookups, 2),
        "matching_device_checks": matching,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:28} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
