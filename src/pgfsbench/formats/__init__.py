"""Every output a ``--format`` chooses, in one place.

- ``registry.py``: what an output format is (``OutputFormat``), the five kinds of output
  (export, comparison, advice, list, history) and the one table every ``--format`` reads
  (entry points of the ``pgfsbench.formats`` group);
- ``markdown.py``, ``json.py``, ``csv.py``, ``text.py``: a stored campaign (export) and a
  comparison, each format one module;
- ``declarations.py``: the formats of ``advise``, ``list`` and ``history``, declared light;
  ``advice.py``, ``listing.py``, ``history.py`` write them;
- ``export_document.py``, ``comparison_document.py``, ``list_history_documents.py``: the
  JSON documents as typed dictionaries; ``json_schema.py`` makes their JSON Schemas
  (``pgfsbench schema``);
- ``target_provenance.py``: a target's recorded provenance as data; ``csv_text.py``: what
  every CSV shares.

The HTML report and the terminal are ``report/``; the two never import each other and
share ``render/`` and ``compare/``.
"""
