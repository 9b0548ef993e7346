"""kubesched: Kubernetes pod scheduling in Python."""
