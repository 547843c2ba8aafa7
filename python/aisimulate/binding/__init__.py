"""The binding: the layer every other one stands on (docs/design.md, "The Python package").

The native core's loading and its calls (:mod:`.native`; :mod:`.calls` runs them on a
worker thread so that a replay shows progress and stops on Ctrl-C; :mod:`.fresh` runs one
in a fresh interpreter), the interrupt-safe imports of what loads on first use
(:mod:`.lazy`), the strict JSON reader (:mod:`.strict_json`) and the named points where a
test interrupts (:mod:`.testpoint`). It imports nothing of the package but
:mod:`aisimulate.errors`. Two modules of the layer stay beside the package's
``__init__``, because ``import aisimulate`` loads them and a subpackage would add its
import to every process: :mod:`aisimulate.errors` and :mod:`aisimulate._startup`.
"""
