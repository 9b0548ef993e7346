"""CEL device selectors (objects.dra.cel): the DRA environment, the Kubernetes functions,
upstream's compile and runtime errors, cel.bind, and the per-device result cache."""

from __future__ import annotations

import threading

import pytest

from kubesched.objects.dra.cel import (
    CelCompileError,
    CelRuntimeError,
    claim_selector_error,
    compile_error,
    compile_selector,
    device_matches,
    reset_stats,
    stats,
)
from kubesched.objects.dra.slices import ResourceSlice
from kubesched.testing.dra import make_slice

DRIVER = "gpu.example.com"


def gpu(index=0, model="LATEST-GPU-MODEL", memory="80Gi", version="1.2.3"):
    raw = (
        make_slice(f"s-{index}", DRIVER)
        .node("n")
        .device(
            f"gpu-{index}",
            capacity={"memory": memory, "other.example.com/cores": "16"},
            index=index,
            model=model,
            healthy=True,
            attrs={
                "gpu.example.com/driverVersion": ("version", version),
                "numa.example.com/node": 1,
            },
        )
        .obj()
    )
    return ResourceSlice.from_dict(raw).devices[0]


MATCHES = [
    ("device.driver == 'gpu.example.com'", True),
    ("device.driver == 'nic.example.com'", False),
    ("device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'", True),
    ("device.attributes['gpu.example.com']['index'] == 0", True),
    ("device.attributes['gpu.example.com'].healthy", True),
    ("device.attributes['numa.example.com'].node == 1", True),
    ("device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0", True),
    ("device.capacity['gpu.example.com'].memory.isLessThan(quantity('80Gi'))", False),
    ("device.capacity['gpu.example.com'].memory == quantity('81920Mi')", True),
    ("device.capacity['other.example.com'].cores.asInteger() == 16", True),
    ("quantity('1.5').isInteger() || quantity('2').sign() == 1", True),
    ("quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi')", True),
    ("quantity('1k').sub(1) == quantity('999')", True),
    ("device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('1.2.0'))", True),
    ("device.attributes['gpu.example.com'].driverVersion.compareTo(semver('1.2.3+b1')) == 0", True),
    ("device.attributes['gpu.example.com'].driverVersion.minor() == 2", True),
    ("semver('v2.1', true).major() == 2 && isSemver('1.0.0') && !isSemver('1.0')", True),
    ("'model' in device.attributes['gpu.example.com']", True),
    ("has(device.attributes['gpu.example.com'].uuid)", False),
    ("device.attributes['gpu.example.com'].model.lowerAscii().startsWith('latest')", True),
    ("device.attributes['gpu.example.com'].model.split('-').size() == 3", True),
    ("[0, 1].exists(i, i == device.attributes['gpu.example.com'].index)", True),
    (
        "cel.bind(gpu, device.attributes['gpu.example.com'], "
        "gpu.model == 'LATEST-GPU-MODEL' && gpu.index == 0)",
        True,
    ),
    # Heterogeneous equality, and numbers compared across int and double (Kubernetes'
    # CrossTypeNumericComparisons).
    ("device.attributes['gpu.example.com'].index == 0.0", True),
    ("device.attributes['gpu.example.com'].model == 1", False),
    ("device.attributes['gpu.example.com'].index < 0.5", True),
    # A missing attribute is an error that && and || absorb, as in CEL.
    ("false && device.attributes['gpu.example.com'].missing == 'x'", False),
    ("device.attributes['gpu.example.com'].missing == 'x' || true", True),
]


@pytest.mark.parametrize(("expression", "expected"), MATCHES, ids=[m[0][:60] for m in MATCHES])
def test_selector_matches(expression, expected):
    assert compile_error(expression) is None
    assert compile_selector(expression).matches(gpu()) is expected


RUNTIME_ERRORS = [
    pytest.param(
        "device.attributes['gpu.example.com'].uuid == 'x'",
        "no such key: uuid",
        id="missing-attribute",
    ),
    pytest.param(
        "device.attributes['unknown.example.com'].model == 'x'",
        "no such key: model",
        id="a-domain-without-attributes-is-an-empty-map",
    ),
    pytest.param(
        "device.attributes['gpu.example.com'].model > 1",
        "no such overload",
        id="ordering-a-string-and-an-int",
    ),
    pytest.param(
        "quantity('1Qi') == quantity('1')",
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        id="bad-quantity-text",
    ),
    pytest.param(
        "quantity('1.5').asInteger() == 1",
        "cannot convert value to integer",
        id="fractional-quantity-as-integer",
    ),
    pytest.param(
        "quantity('1') < quantity('2')",
        "no such overload",
        id="quantities-have-no-less-than-operator",
    ),
    pytest.param(
        "device.attributes['gpu.example.com'].model",
        "CEL result of type string could not be converted to bool: type conversion error "
        "from 'string' to 'bool'",
        id="a-non-bool-result",
    ),
]


@pytest.mark.parametrize(("expression", "message"), RUNTIME_ERRORS)
def test_runtime_errors_carry_cel_gos_text(expression, message):
    with pytest.raises(CelRuntimeError) as err:
        compile_selector(expression).matches(gpu())
    assert str(err.value) == message
    assert claim_selector_error("ns/c", 0, err.value) == (
        f"claim ns/c: selector #0: CEL runtime error: {message}"
    )


COMPILE_ERRORS = [
    pytest.param(
        "foo == 1",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' "
        "(in container '')\n | foo == 1\n | ^",
        id="unknown-variable",
    ),
    pytest.param(
        "device.driver.reverse2()",
        "compilation failed: ERROR: <input>:1:23: undeclared reference to 'reverse2' "
        "(in container '')\n | device.driver.reverse2()\n | ......................^",
        id="unknown-function-at-its-parenthesis",
    ),
    pytest.param(
        "device.driver == ",
        "compilation failed: ERROR: <input>:1:18: Syntax error: mismatched input '<EOF>'\n"
        " | device.driver == \n | .................^",
        id="syntax-error",
    ),
    pytest.param(
        "device.attributes['a.example.com'].ip.isIP()",
        "compilation failed: ERROR: <input>:1:43: the function 'isIP' is accepted by "
        "Kubernetes 1.34 but not supported by kubesched's CEL environment for device "
        "selectors\n | device.attributes['a.example.com'].ip.isIP()\n"
        " | ..........................................^",
        id="a-1.34-function-this-environment-lacks-is-refused-by-name",
    ),
    pytest.param(
        "sets.contains([1], [1])",
        None,
        id="a-1.34-namespace-this-environment-lacks",
    ),
    pytest.param(
        "1 + 2",
        "must evaluate to bool or the unknown type, not int",
        id="an-int-result-is-not-a-selector",
    ),
    pytest.param("'gpu'", "must evaluate to bool or the unknown type, not string", id="a-string"),
    pytest.param(
        "has(device.attributes['gpu.example.com'])",
        "compilation failed: ERROR: <input>:1:4: invalid argument to has() macro\n"
        " | has(device.attributes['gpu.example.com'])\n | ...^",
        id="has-needs-a-field-selection",
    ),
]


@pytest.mark.parametrize(("expression", "detail"), COMPILE_ERRORS)
def test_compile_errors(expression, detail):
    found = compile_error(expression)
    assert found is not None
    if detail is not None:
        assert found == detail
    with pytest.raises(CelCompileError):
        compile_selector(expression)


def test_results_are_cached_per_expression_and_device():
    reset_stats()
    expression = "device.attributes['gpu.example.com'].index >= 1"
    devices = [gpu(i) for i in range(4)]
    for _ in range(3):
        assert [compile_selector(expression).matches(d) for d in devices] == [
            False,
            True,
            True,
            True,
        ]
    counted = stats()
    assert counted.evaluations == 4
    assert counted.cache_hits == 8
    assert counted.hit_rate == pytest.approx(8 / 12)
    assert compile_selector(expression) is compile_selector(expression)
    # A device republished (a new object) is evaluated again.
    assert compile_selector(expression).matches(gpu(1)) is True
    assert stats().evaluations == 5


def test_runtime_errors_are_cached_too():
    reset_stats()
    selector = compile_selector("device.attributes['gpu.example.com'].serial == 'x'")
    device = gpu()
    for _ in range(2):
        with pytest.raises(CelRuntimeError, match="no such key: serial"):
            selector.matches(device)
    assert (stats().evaluations, stats().cache_hits) == (1, 1)


def test_device_matches_all_selectors():
    device = gpu()
    assert device_matches(["device.driver == 'gpu.example.com'"], device)
    assert not device_matches(
        ["device.driver == 'gpu.example.com'", "device.attributes['gpu.example.com'].index == 7"],
        device,
    )


def test_selectors_evaluate_from_many_threads():
    # cel-python's own runner shares one namespace between evaluations; ours does not.
    selectors = [
        compile_selector(f"device.attributes['gpu.example.com'].index == {i}") for i in range(8)
    ]
    devices = [gpu(i) for i in range(8)]
    failures = []

    def work(offset):
        for round_ in range(50):
            i = (offset + round_) % 8
            for j, device in enumerate(devices):
                if selectors[i].evaluate(device) is not (i == j):
                    failures.append((i, j))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
