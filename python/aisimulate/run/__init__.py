"""The run layer: one replay, from a config to its report (docs/design.md, "The Python
package"). :mod:`.replay` holds the package's ``replay``, ``check``,
``estimate_memory``, ``config_schema`` and ``check_slo``.
"""
