"""The scheduler cache (upstream ``pkg/scheduler/backend/cache``): NodeInfo per node,
assumed pods, and the snapshot each scheduling cycle reads."""

from kubesched.scheduler.backend.cache.cache import Cache, CacheError
from kubesched.scheduler.backend.cache.snapshot import build_snapshot, set_image_states

__all__ = ["Cache", "CacheError", "build_snapshot", "set_image_states"]
