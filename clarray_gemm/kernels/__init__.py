"""The kernel catalogues (one per operation family), selection, the program cache and the
tuning store that dispatch reads. ``registry.py`` lists the catalogues and their variants."""

from .registry import register as _register

_register()
