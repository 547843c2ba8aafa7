"""The machinery behind :func:`aisimulate.sweep`: points (:mod:`.points`), running one
point into a row (:mod:`.point`), and the executors (:mod:`.local`, :mod:`.ray_backend`)."""
