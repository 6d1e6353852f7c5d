"""The text formatting the report (``report/``) and the output formats (``export/``) share:
values in human units (``values.py``), compare's rows and their texts (``compare.py``),
what compare shows (``comparison.py``), the verdict lines on a terminal
(``verdict_text.py``), a resumption in words (``resumes.py``). Report
and export import this layer, never each other."""
