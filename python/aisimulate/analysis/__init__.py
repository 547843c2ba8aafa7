"""Analyses built on replays: capacity planning (:mod:`aisimulate.analysis.search`,
``aisimulate.search``). They compile configs (:mod:`aisimulate.config`) and run the core
(:mod:`aisimulate.binding.native`, :mod:`aisimulate.binding.calls`); nothing below imports them."""
