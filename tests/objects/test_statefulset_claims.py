"""A StatefulSet's claims (``objects.statefulset.claims``, ``getPersistentVolumeClaims``):
the one builder the StatefulSet controller creates them with and the policy lab expands
them with."""

from __future__ import annotations

from kubesched.objects.statefulset import claims


def test_claims_are_named_labelled_and_owned_as_the_retention_policy_says():
    sts = {
        "metadata": {"name": "web", "namespace": "shop", "uid": "u-1"},
        "spec": {
            "selector": {"matchLabels": {"app": "nginx"}},
            "volumeClaimTemplates": [
                {"metadata": {"name": "www", "labels": {"tier": "data"}}, "spec": {}},
                {"metadata": {"name": "logs"}, "spec": {}, "status": {"phase": "Bound"}},
            ],
        },
    }
    made = claims(sts, 3)
    assert [c["metadata"]["name"] for c in made] == ["www-web-3", "logs-web-3"]
    assert made[0]["metadata"]["labels"] == {"tier": "data", "app": "nginx"}
    assert all(c["metadata"]["namespace"] == "shop" for c in made)
    assert all("ownerReferences" not in c["metadata"] for c in made)  # Retain
    assert "status" not in made[1]
    sts["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": "Delete"}
    set_ref = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "web",
        "uid": "u-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    refs = [c["metadata"]["ownerReferences"] for c in claims(sts, 0)]
    assert refs == [[set_ref], [set_ref]]
