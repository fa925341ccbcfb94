"""Declared experiments, one module each.

Every module here that defines ``EXPERIMENT`` (or a list ``EXPERIMENTS``) is found by
:func:`lorak_bench.list_experiments`; modules whose name starts with ``_`` are skipped.

- :mod:`.nystrom_error` — Zhang, Tsang & Kwok (2008), Fig. 1 and Fig. 2.
"""
