"""The floor of the library: the machinery every package shares, importing nothing of
lorak's subpackages (kernels, landmarks, decompose, learn, estimators, models, …).

- ``rows``: where an input's rows live, resolved once (``Rows``, ``resolve_rows``), and
  ``take_rows``;
- ``array_api``: the array API backends (namespaces, devices, moving arrays);
- ``chunked``: passes over row chunks, dask and memmap inputs (``ChunkedRowsMixin``);
- ``validation``: input validation whose errors name the argument;
- ``targets``: the semi-supervised target types (``SemiSupervisedTargets`` and the
  parsers of y);
- ``config``: the library's configuration (``lorak.config_context``, ``set_config``,
  ``get_config``);
- ``linalg``: where a spectrum is cut (``spectral_keep``);
- ``estimator``: the estimator base classes and checks (``TransformerBase``,
  ``new_rows``, ``validate_new_rows``, ``store_record``).

The layers: :ref:`guide-internals`.
"""
