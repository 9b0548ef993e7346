"""scheduler_perf-shaped gang workloads in ``kubesched bench``, small: gangs of 3 and of
1,000-member shape are placed whole, counted as gangs, and a gang too big for the nodes
holds none of them."""

from __future__ import annotations

from kubesched.cli import main
from kubesched.config.defaults import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import run_bench
from kubesched.sim.gangworkloads import pod_groups


def test_gangs_of_three_are_placed_whole_and_counted() -> None:
    result = run_bench("gang", 4, 0, 12, default_config(), in_tree_registry())
    assert (result.scheduled, result.gangs) == (12, 4)
    assert result.gangs_per_second > 0


def test_a_gang_too_big_for_the_nodes_holds_nothing() -> None:
    # One node of 4 CPUs holds 40 pods of 100m (and 110 pods): a 1000-member gang does
    # not fit, nor does the last, partial gang of 50: none of their members is placed.
    result = run_bench("gang-large", 1, 0, 1050, default_config(), in_tree_registry())
    assert result.scheduled == 0
    groups = pod_groups("gang-large", {"pod": 1050})
    assert [g.min_member for g in groups] == [1000, 50]


def test_the_bench_prints_gangs_per_second(capsys) -> None:
    code = main(["bench", "--workload", "gang", "--nodes", "3", "--pods", "6"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "gangs/s (2 gangs)" in out
