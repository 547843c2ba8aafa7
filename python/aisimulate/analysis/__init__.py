"""Analyses built on replays: capacity planning (:mod:`aisimulate.analysis.search`,
``aisimulate.search``). They compile configs (:mod:`aisimulate.config`) and run the core
(:mod:`aisimulate._native`, :mod:`aisimulate._run`); nothing below imports them."""
