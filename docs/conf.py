"""Sphinx configuration of the lorak documentation.

Build (from the repository root)::

    python -m sphinx -W -b html docs docs/_build/html

The gallery runs every script of ``examples/`` in its quick mode (``--quick``, and
``--plot`` to a temporary file where the script draws a figure); the environment
variable ``LORAK_DOCS_GALLERY=False`` skips running them. The doctests (the guide's
examples and every API page's Examples section)::

    LORAK_DOCS_GALLERY=False python -m sphinx -W -b doctest docs docs/_build/doctest
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import lorak_docs  # noqa: E402

import lorak  # noqa: E402

# The examples, plots and doctests are small: one BLAS thread is faster and steadier
# than several on a shared machine.
try:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
except ImportError:  # pragma: no cover
    pass

lorak_docs.write_api_pages()  # docs/api/*.rst from __all__, before Sphinx looks for sources

# -- project -------------------------------------------------------------------------
project = "lorak"
author = "lorak developers"
copyright = "lorak developers"
release = lorak.__version__
version = ".".join(release.split(".")[:2])

# -- extensions ----------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
    "matplotlib.sphinxext.plot_directive",
    "lorak_docs",
]
# MathJax from the build itself when the package is installed (pages then render their
# equations offline, e.g. from `python -m http.server`); otherwise Sphinx's CDN default.
if importlib.util.find_spec("sphinx-mathjax-offline") is not None:
    extensions.append("sphinx-mathjax-offline")

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
    "sg_execution_times.rst",
    "api_examples/*",
    "guide/_*.rst",
]
root_doc = "index"
smartquotes_action = "qe"  # keep "--option" as typed (no en dashes)
nitpicky = True
# Type phrases of numpydoc parameter lines and names of other libraries are not
# cross-referenced (no intersphinx: the build needs no network).
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|sklearn|dask|matplotlib|pathlib|os|typing|collections)\..*"),
    (r"py:.*", r"(ndarray|array-like|array_like|callable|optional|default.*)"),
]

# -- autodoc / autosummary / numpydoc -------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
autosummary_context = {"api_examples": lorak_docs.api_example_names(HERE)}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()
numpydoc_attributes_as_param_list = True

# -- doctest -------------------------------------------------------------------------
doctest_global_setup = """
import numpy as np
np.set_printoptions(precision=4, suppress=True)
"""

# -- gallery -------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/[a-z][a-z_]*\.py$",
    "ignore_pattern": r"(^|/)_",
    "reset_argv": "lorak_docs.gallery_argv",
    "download_all_examples": False,
    "remove_config_comments": True,
    # the quickstart first, then the rest by file name
    "within_subsection_order": "lorak_docs.QuickstartFirst",
    "show_memory": False,
    "min_reported_time": 1e9,
    "matplotlib_animations": False,
    "image_scrapers": ("lorak_docs",),  # the --plot file, else open figures
    "capture_repr": (),
    "abort_on_example_error": True,
    "plot_gallery": os.environ.get("LORAK_DOCS_GALLERY", "True"),
    "doc_module": ("lorak",),
    "backreferences_dir": "api/generated/backreferences",
    "inspect_global_variables": False,
}

# -- matplotlib plot directive (the guide's figures) ----------------------------------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 90)]
plot_rcparams = {"figure.figsize": (6.4, 3.6), "figure.autolayout": True}
plot_pre_code = "import numpy as np\nimport matplotlib.pyplot as plt\n"

# -- HTML ----------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"lorak {version}"
html_static_path = ["_static"]
html_css_files = ["lorak.css"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "cli": []}
