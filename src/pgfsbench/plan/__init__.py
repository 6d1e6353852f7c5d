"""The plan: what to compare and how, checked and estimated before anything runs.

The vocabulary (every stage reads it): ``model.py`` (the plan file model, validated
strictly), ``design.py`` (``[repetitions]`` and ``[verdicts]``), ``compose.py``
(``extends`` and ``matrix``), ``load.py`` (a built-in name or a TOML file),
``builtin.py`` (the built-in plans' files), ``schema.py`` (the plan file's JSON Schema),
``strings.py``, ``stripe.py`` and ``fsoptions.py`` (rules on its values).

Above the schedule, whose rounds they count: ``check.py`` (``pgfsbench plan check``:
what a plan will do, without doing any of it), ``check_text.py`` (that in words) and
``estimate.py`` (disk space and time). The read side imports the vocabulary only.
"""
