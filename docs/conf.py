# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of the sklearn_dpfair documentation.

Build (from the repository root; warnings are errors, and a failing or
too-slow gallery example fails the build)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

``-D plot_gallery=0`` skips running the examples (a fast check of the text).
"""

import sys
from datetime import date
from pathlib import Path

import sklearn_dpfair

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "sphinxext"))

from dpfair_docs import write_api_reference

# The API reference is generated from the package's ``__all__``s, so that a
# new public estimator or function appears without editing the docs.
write_api_reference(sklearn_dpfair, HERE / "api.rst")

# -- Project -----------------------------------------------------------------
project = "sklearn_dpfair"
author = "The sklearn_dpfair developers"
copyright = f"{date.today().year}, {author}"
version = release = sklearn_dpfair.__version__

# -- General -----------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "sphinxext", "auto_examples/*.ipynb"]
root_doc = "index"
default_role = "literal"

# No intersphinx: the build must work offline (CI machines without network).
# References to scikit-learn or fairlearn objects render as plain names.

autosummary_generate = True
autodoc_typehints = "none"
autodoc_default_options = {"member-order": "bysource"}
# numpydoc renders the Parameters/Attributes sections; the class template
# (autodoc ``:members:``) documents the methods, so numpydoc must not list
# the class members a second time.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# -- Gallery -----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Every example is executed; an example that raises fails the build.
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"/_",
    "only_warn_on_example_error": False,
    "abort_on_example_error": False,
    "doc_module": ("sklearn_dpfair",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"sklearn_dpfair": None},
    # Reset matplotlib between examples, and time each one: an example over
    # its one-minute budget is a warning, hence an error under -W.
    "reset_modules": ("matplotlib", "dpfair_docs.example_timer"),
    "reset_modules_order": "both",
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "min_reported_time": 1,
}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_dpfair {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
