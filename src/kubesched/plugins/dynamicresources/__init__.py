"""The DynamicResources plugin (Dynamic Resource Allocation with structured parameters):
:mod:`.plugin` (the extension points), :mod:`.allocator` (the search for devices on one
node), :mod:`.dra_manager` (allocations in flight, assumed claims), :mod:`.args`."""
