"""VolumeBinding (upstream ``pkg/scheduler/framework/plugins/volumebinding``): the plugin,
its volume binder and assume cache."""

from kubesched.plugins.volumebinding.plugin import NAME, VolumeBinding, VolumeBindingArgs, new

__all__ = ["NAME", "VolumeBinding", "VolumeBindingArgs", "new"]
