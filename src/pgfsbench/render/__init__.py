"""The text formatting the report (``report/``) and the output formats (``formats/``)
share: values in human units (``values.py``), the verdict lines on a terminal
(``verdict_text.py``), what each filesystem offers in words (``capability_text.py``), a
resumption in words (``resumes.py``). Report and formats import this layer, never each
other."""
