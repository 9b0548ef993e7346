"""controllers: the rest of a small cluster, as clients of an API server through ``kube``."""
